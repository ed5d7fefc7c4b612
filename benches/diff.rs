//! How fast is the cumulative diff, and the `verify` gate built on it, against git itself?
//!
//! `cargo bench --bench diff [-- --files-per-dir N --runs K --warmup W --keep DIR]`
//!
//! Builds the reference repository described in `support` (100,000 tracked files by default),
//! checks that git and git-baton agree on it, then times each measurement as the median of `K`
//! warm runs (after `W` warm-ups), interleaved round by round so that drift of the machine hits
//! every measurement alike, and prints absolute times, ratios against git with their goals, and
//! the peak RSS of the `verify` child. It never fails on time. See docs/performance.md.

#![forbid(unsafe_code)]

mod support;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use git_baton::git::{DiffEngine, Repo, Scope};
use support::{Fixture, Result};

/// Set in the re-executed benchmark, whose environment is hermetic.
const CHILD_ENV: &str = "BATON_BENCH_HERMETIC";

struct Args {
    files_per_dir: usize,
    runs: usize,
    warmup: usize,
    keep: Option<PathBuf>,
    /// Only the many-targets case (`--only many-targets`).
    many_targets_only: bool,
}

const USAGE: &str = "usage: cargo bench --bench diff [-- --files-per-dir N (default 100, at least 10)] \
                     [--runs K (default 15)] [--warmup W (default 2)] [--keep DIR] \
                     [--only many-targets]";

fn parse_args() -> Result<Args> {
    let mut args = Args {
        files_per_dir: 100,
        runs: 15,
        warmup: 2,
        keep: None,
        many_targets_only: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name.to_string(), Some(value.to_string())),
            None => (arg.clone(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| it.next())
                .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
        };
        let number = |text: String| {
            text.parse::<usize>()
                .map_err(|_| format!("{name}: `{text}` is not a number\n{USAGE}"))
        };
        match name.as_str() {
            // cargo bench passes --bench to every harness = false target.
            "--bench" => {}
            "--files-per-dir" => args.files_per_dir = number(value()?)?,
            "--runs" => args.runs = number(value()?)?,
            "--warmup" => args.warmup = number(value()?)?,
            "--keep" => args.keep = Some(PathBuf::from(value()?)),
            "--only" => match value()?.as_str() {
                "many-targets" => args.many_targets_only = true,
                other => return Err(format!("--only: unknown case `{other}`\n{USAGE}")),
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    if args.files_per_dir < 10 {
        return Err(format!("--files-per-dir must be at least 10\n{USAGE}"));
    }
    if args.runs == 0 {
        return Err(format!("--runs must be at least 1\n{USAGE}"));
    }
    Ok(args)
}

fn main() {
    if std::env::var_os(CHILD_ENV).is_none() {
        std::process::exit(reexec_hermetic());
    }
    if let Err(message) = parse_args().and_then(|args| run(&args)) {
        eprintln!("error: {message}");
        std::process::exit(2);
    }
}

/// Setting environment variables in a running process needs unsafe code, so the benchmark runs
/// itself again with the hermetic environment; git, git-baton and gix in-process all see it.
fn reexec_hermetic() -> i32 {
    let home = match tempfile::Builder::new()
        .prefix("baton-bench-home")
        .tempdir()
    {
        Ok(home) => home,
        Err(err) => {
            eprintln!("error: cannot create a temporary HOME: {err}");
            return 2;
        }
    };
    let exe = std::env::current_exe().expect("the benchmark knows its own path");
    let status = support::hermetic_command(&exe, home.path())
        .args(std::env::args_os().skip(1))
        .env(CHILD_ENV, "1")
        .status();
    match status {
        Ok(status) => status.code().unwrap_or(2),
        Err(err) => {
            eprintln!("error: cannot re-run {}: {err}", exe.display());
            2
        }
    }
}

/// The release binary cargo built next to this benchmark.
fn baton_binary() -> Result<PathBuf> {
    let path = PathBuf::from(env!("CARGO_BIN_EXE_git-baton"));
    if path.exists() {
        return Ok(path);
    }
    // Next to target/release/deps/diff-… as a fallback, should the benchmark be copied around.
    let exe = std::env::current_exe().map_err(|err| err.to_string())?;
    if let Some(release) = exe.parent().and_then(Path::parent) {
        let sibling = release.join("git-baton");
        if sibling.exists() {
            return Ok(sibling);
        }
    }
    Err(format!(
        "the git-baton binary is missing ({}); build it with `cargo build --release`",
        path.display()
    ))
}

/// The ten file targets of the scoped plan: three committed on `feature`, two staged, two
/// unstaged (all `file007.txt`) and three files nobody touched, across ten directories.
fn scoped_targets(files_per_dir: usize) -> (Vec<String>, Vec<String>) {
    let committed = [(0, 0, 0), (2, 5, 3), (4, 9, 9)];
    let staged = [(5, 1, 2), (7, 0, 0)];
    let unstaged = [(8, 3, 3), (9, 9, 9)];
    let file007 = |(a, b, c): (usize, usize, usize)| support::modified_path(a * 100 + b * 10 + c);
    let untouched = [
        format!("d1/e1/f1/{}", support::file_name(files_per_dir / 2)),
        format!("d6/e2/f8/{}", support::file_name(files_per_dir - 1)),
        format!("d3/e7/f4/{}", support::file_name(0)),
    ];
    let mut targets: Vec<String> = committed.into_iter().map(file007).collect();
    // Targets that need a reason in one mode or the other: untouched files always, staged and
    // unstaged ones when the gate looks at the `feature` commit rather than the worktree.
    let mut with_reason: Vec<String> = staged.into_iter().chain(unstaged).map(file007).collect();
    targets.extend(with_reason.iter().cloned());
    targets.extend(untouched.iter().cloned());
    with_reason.extend(untouched);
    (targets, with_reason)
}

/// Writes the plans and the evidence file under `target/`, which `.gitignore` ignores, so they
/// change neither diff.
fn write_plans(root: &Path, files_per_dir: usize) -> Result<()> {
    let (targets, with_reason) = scoped_targets(files_per_dir);
    let dir = root.join("target/plans");
    std::fs::create_dir_all(&dir).map_err(|err| err.to_string())?;
    let list: String = targets.iter().map(|t| format!("  - {t}\n")).collect();
    let scoped = format!(
        "---\nid: bench-scoped\ntitle: Ten file targets\ntargets:\n{list}---\n# Benchmark\n"
    );
    let all = "---\nid: bench-all\ntitle: Every text file\ntargets:\n  - \"**/*.txt\"\n---\n# Benchmark\n";
    let entries: Vec<String> = with_reason
        .iter()
        .map(|t| {
            format!(
                "  {{\"target\": \"{t}\", \"status\": \"unchanged\", \
                 \"reason\": \"the benchmark fixture leaves this file alone on purpose\"}}"
            )
        })
        .collect();
    let evidence = format!("{{\"target_coverage\": [\n{}\n]}}\n", entries.join(",\n"));
    let io = |err: std::io::Error| err.to_string();
    std::fs::write(dir.join("p.md"), scoped).map_err(io)?;
    std::fs::write(dir.join("all.md"), all).map_err(io)?;
    std::fs::write(root.join("target/evidence.json"), evidence).map_err(io)?;
    Ok(())
}

const PLAN: &str = "target/plans/p.md";
const PLAN_ALL: &str = "target/plans/all.md";
const EVIDENCE: &str = "target/evidence.json";

fn lines(out: &str) -> Vec<String> {
    out.lines().map(str::to_string).collect()
}

/// `git diff --no-renames --name-only base` ∪ `git ls-files --others --exclude-standard`.
fn git_cumulative(root: &Path) -> Result<Vec<String>> {
    let mut paths = lines(&support::git(
        root,
        ["diff", "--no-renames", "--name-only", "base"],
    )?);
    paths.extend(lines(&support::git(
        root,
        ["ls-files", "--others", "--exclude-standard"],
    )?));
    paths.sort();
    paths.dedup();
    Ok(paths)
}

fn baton_cumulative(root: &Path, scope: &Scope) -> Result<Vec<String>> {
    let repo = Repo::discover(root).map_err(|e| e.to_string())?;
    let base = repo.resolve_commit("base").map_err(|e| e.to_string())?;
    repo.worktree_changes(base, scope)
        .map_err(|e| e.to_string())
}

fn baton_tree(root: &Path) -> Result<Vec<String>> {
    let repo = Repo::discover(root).map_err(|e| e.to_string())?;
    let base = repo.resolve_commit("base").map_err(|e| e.to_string())?;
    let head = repo.resolve_commit("feature").map_err(|e| e.to_string())?;
    repo.tree_changes(base, head, &Scope::All)
        .map_err(|e| e.to_string())
}

fn verify_options(plan: &str, head: Option<&str>) -> git_baton::verify::Options {
    git_baton::verify::Options {
        plans: vec![PathBuf::from(plan)],
        base: Some("base".into()),
        head: head.map(str::to_string),
        evidence: vec![PathBuf::from(EVIDENCE)],
        require_targets: false,
        allow_plan_changes: false,
        require_plans: false,
    }
}

fn verify_in_process(root: &Path, plan: &str, head: Option<&str>) -> Result<bool> {
    git_baton::verify::verify(root, &verify_options(plan, head))
        .map(|v| v.passed)
        .map_err(|e| e.to_string())
}

fn verify_args<'a>(plan: &'a str, head: Option<&'a str>) -> Vec<&'a str> {
    let mut args = vec!["verify", plan, "--base", "base"];
    // The evidence names the scoped plan's targets; for the full-scope plan it would only add problems.
    if plan == PLAN {
        args.extend(["--evidence", EVIDENCE]);
    }
    if let Some(head) = head {
        args.extend(["--head", head]);
    }
    args
}

/// Runs a command with its output discarded; only a crash or exit status ≥ 2 is an error (the
/// gate's verdict, 0 or 1, is not what is measured).
fn run_quiet(program: &Path, args: &[&str], dir: &Path) -> Result<i32> {
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|err| format!("cannot run {}: {err}", program.display()))?;
    match status.code() {
        Some(code @ (0 | 1)) => Ok(code),
        _ => Err(format!(
            "{} {} ended with {status}",
            program.display(),
            args.join(" ")
        )),
    }
}

/// Runs git with stdout captured (as a caller reading the list would), and returns its length.
fn git_timed(root: &Path, args: &[&str]) -> Result<usize> {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|err| format!("cannot run git: {err}"))?;
    if !out.status.success() {
        return Err(format!("git {} ended with {}", args.join(" "), out.status));
    }
    Ok(out.stdout.len())
}

/// The floor of any worktree diff: read the index (SHA-1 checked, as the engine does) and lstat
/// every entry's path, the entries split in halves over two threads (`threads == 2`) or on this
/// thread alone (`threads == 1`).
fn index_and_lstat(root: &Path, threads: usize) -> Result<usize> {
    let index = load_index(root, false)?;
    let entries = index.entries();
    let lstat_all = |part: &[gix::index::Entry]| {
        use std::os::unix::ffi::OsStrExt;
        let mut path = root.as_os_str().as_bytes().to_vec();
        path.push(b'/');
        let base = path.len();
        let mut found = 0usize;
        for entry in part {
            path.truncate(base);
            path.extend_from_slice(entry.path(&index));
            if std::fs::symlink_metadata(std::ffi::OsStr::from_bytes(&path)).is_ok() {
                found += 1;
            }
        }
        found
    };
    if threads < 2 {
        return Ok(lstat_all(entries));
    }
    let (left, right) = entries.split_at(entries.len() / 2);
    let found = std::thread::scope(|s| {
        let other = s.spawn(|| lstat_all(left));
        let here = lstat_all(right);
        other.join().expect("lstat thread") + here
    });
    Ok(found)
}

/// How much two threads of pure computation get done compared with one, on this machine right
/// now: 2.0 on two idle cores, less when the cores are shared (SMT siblings, a busy host).
fn effective_parallelism() -> f64 {
    fn spin() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..30_000_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x = black_box(x);
        }
    }
    let mut ratios: Vec<f64> = (0..3)
        .map(|_| {
            let start = Instant::now();
            spin();
            let one = start.elapsed();
            let start = Instant::now();
            std::thread::scope(|s| {
                s.spawn(spin);
                spin();
            });
            let two = start.elapsed();
            2.0 * one.as_secs_f64() / two.as_secs_f64()
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[1]
}

/// Decodes `.git/index` with gix; `skip_hash: false` is what `Repository::index_or_empty` does
/// when `index.skipHash` is unset (the trailing SHA-1 of the whole file is verified).
fn load_index(root: &Path, skip_hash: bool) -> Result<gix::index::File> {
    gix::index::File::at(
        root.join(".git/index"),
        gix::hash::Kind::Sha1,
        skip_hash,
        Default::default(),
    )
    .map_err(|err| format!("cannot read the index: {err}"))
}

/// What the engine's checking thread does: plain SHA-1 of the index file, read in 64 KiB chunks.
fn index_check(root: &Path) -> Result<usize> {
    use sha1::Digest;
    use std::io::Read;
    let mut file = std::fs::File::open(root.join(".git/index")).map_err(|e| e.to_string())?;
    let mut hasher = sha1::Sha1::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0;
    loop {
        let n = file.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        total += n;
    }
    black_box(hasher.finalize());
    Ok(total)
}

/// The cumulative diff by the engine the product falls back to where the walk does not apply
/// (gix's index→worktree status and directory walk), forced.
fn status_engine(root: &Path) -> Result<usize> {
    let repo = Repo::discover(root).map_err(|e| e.to_string())?;
    let base = repo.resolve_commit("base").map_err(|e| e.to_string())?;
    repo.worktree_changes_with(base, &Scope::All, DiffEngine::Status)
        .map(|paths| paths.len())
        .map_err(|e| e.to_string())
}

struct Measure<'a> {
    key: &'static str,
    what: String,
    samples: Vec<Duration>,
    run: Box<dyn FnMut() -> Result<()> + 'a>,
}

impl Measure<'_> {
    fn median(&self) -> Duration {
        let mut s = self.samples.clone();
        s.sort();
        let n = s.len();
        if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2
        }
    }
    fn min(&self) -> Duration {
        self.samples.iter().copied().min().unwrap_or_default()
    }
    fn max(&self) -> Duration {
        self.samples.iter().copied().max().unwrap_or_default()
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

fn run(args: &Args) -> Result<()> {
    let binary = baton_binary()?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let git_version = support::git(Path::new("."), ["--version"])?
        .trim()
        .to_string();
    // Measured before and after the timings: a drop means something else ran on the machine.
    let parallelism_before = effective_parallelism();

    eprintln!(
        "preparing the reference repository ({} tracked files)…",
        1000 * args.files_per_dir + 1
    );
    let fixture = Fixture::open_or_build(args.keep.as_deref(), args.files_per_dir)?;
    let root = fixture.root.as_path();
    write_plans(root, args.files_per_dir)?;
    if args.many_targets_only {
        return many_targets(args, &binary, root, fixture.tracked_files());
    }

    // Before timing anything: git and git-baton agree on the repository's shape.
    let expected_worktree = support::MODIFIED + support::UNTRACKED;
    let from_git = git_cumulative(root)?;
    let from_baton = baton_cumulative(root, &Scope::All)?;
    if from_git.len() != expected_worktree || from_baton != from_git {
        return Err(format!(
            "the cumulative diff is off: git lists {} paths, git-baton {} (expected {expected_worktree}, equal)",
            from_git.len(),
            from_baton.len()
        ));
    }
    let git_tree = lines(&support::git(
        root,
        ["diff", "--name-only", "base", "feature"],
    )?);
    let baton_tree_paths = baton_tree(root)?;
    if git_tree.len() != support::COMMITTED || baton_tree_paths != git_tree {
        return Err(format!(
            "the tree diff is off: git lists {} paths, git-baton {} (expected {}, equal)",
            git_tree.len(),
            baton_tree_paths.len(),
            support::COMMITTED
        ));
    }
    let tracked = support::git(root, ["ls-files"])?.lines().count();
    if tracked != fixture.tracked_files() {
        return Err(format!(
            "{tracked} tracked files, expected {}",
            fixture.tracked_files()
        ));
    }
    let floor_found = index_and_lstat(root, 2)?;
    if floor_found != tracked {
        return Err(format!(
            "the floor lstat found {floor_found} of {tracked} index entries"
        ));
    }
    let (targets, _) = scoped_targets(args.files_per_dir);
    let scoped_worktree = Scope::prefixes(&targets);
    let scoped = baton_cumulative(root, &scoped_worktree)?;
    let verdicts = [
        (
            "verify (worktree, 10 targets)",
            run_quiet(&binary, &verify_args(PLAN, None), root)?,
        ),
        (
            "verify (--head feature, 10 targets)",
            run_quiet(&binary, &verify_args(PLAN, Some("feature")), root)?,
        ),
        (
            "verify (worktree, full scope)",
            run_quiet(&binary, &verify_args(PLAN_ALL, None), root)?,
        ),
    ];
    let in_process_verdict = verify_in_process(root, PLAN, None)?;

    let mut measures: Vec<Measure> = vec![
        Measure {
            key: "git_pair",
            what: "git diff --no-renames --name-only base + git ls-files --others --exclude-standard (2 processes)".into(),
            samples: vec![],
            run: Box::new(|| {
                black_box(git_timed(root, &["diff", "--no-renames", "--name-only", "base"])?);
                black_box(git_timed(root, &["ls-files", "--others", "--exclude-standard"])?);
                Ok(())
            }),
        },
        Measure {
            key: "git_diff",
            what: "breakdown: git diff --no-renames --name-only base alone".into(),
            samples: vec![],
            run: Box::new(|| {
                black_box(git_timed(root, &["diff", "--no-renames", "--name-only", "base"])?);
                Ok(())
            }),
        },
        Measure {
            key: "git_others",
            what: "breakdown: git ls-files --others --exclude-standard alone".into(),
            samples: vec![],
            run: Box::new(|| {
                black_box(git_timed(root, &["ls-files", "--others", "--exclude-standard"])?);
                Ok(())
            }),
        },
        Measure {
            key: "A",
            what: "Repo::discover + resolve_commit(base) + worktree_changes(base, All), in-process".into(),
            samples: vec![],
            run: Box::new(|| {
                let n = baton_cumulative(root, &Scope::All)?.len();
                if n != expected_worktree {
                    return Err(format!("worktree_changes listed {n} paths"));
                }
                Ok(())
            }),
        },
        Measure {
            key: "floor",
            what: "floor: gix index decode (SHA-1 checked) + lstat of every entry on 2 threads".into(),
            samples: vec![],
            run: Box::new(|| {
                black_box(index_and_lstat(root, 2)?);
                Ok(())
            }),
        },
        Measure {
            key: "floor_1t",
            what: "breakdown: the floor on 1 thread".into(),
            samples: vec![],
            run: Box::new(|| {
                black_box(index_and_lstat(root, 1)?);
                Ok(())
            }),
        },
        Measure {
            key: "C_cli",
            what: format!("git-baton verify {PLAN} --base base --evidence … (10 targets, child process)"),
            samples: vec![],
            run: Box::new(|| run_quiet(&binary, &verify_args(PLAN, None), root).map(drop)),
        },
        Measure {
            key: "C_inproc",
            what: "git_baton::verify::verify (10 targets, worktree), in-process".into(),
            samples: vec![],
            run: Box::new(|| verify_in_process(root, PLAN, None).map(drop)),
        },
        Measure {
            key: "git_tree",
            what: "git diff --name-only base feature (1 process)".into(),
            samples: vec![],
            run: Box::new(|| {
                black_box(git_timed(root, &["diff", "--name-only", "base", "feature"])?);
                Ok(())
            }),
        },
        Measure {
            key: "D_cli",
            what: format!("git-baton verify {PLAN} --base base --head feature --evidence … (child process)"),
            samples: vec![],
            run: Box::new(|| run_quiet(&binary, &verify_args(PLAN, Some("feature")), root).map(drop)),
        },
        Measure {
            key: "D_inproc",
            what: "Repo::discover + resolve base, feature + tree_changes(base, feature, All), in-process".into(),
            samples: vec![],
            run: Box::new(|| {
                let n = baton_tree(root)?.len();
                if n != support::COMMITTED {
                    return Err(format!("tree_changes listed {n} paths"));
                }
                Ok(())
            }),
        },
        Measure {
            key: "D_full_cli",
            what: format!("git-baton verify {PLAN_ALL} --base base --head feature (full scope, child process)"),
            samples: vec![],
            run: Box::new(|| run_quiet(&binary, &verify_args(PLAN_ALL, Some("feature")), root).map(drop)),
        },
        Measure {
            key: "full_cli",
            what: format!("git-baton verify {PLAN_ALL} --base base (full scope, child process)"),
            samples: vec![],
            run: Box::new(|| run_quiet(&binary, &verify_args(PLAN_ALL, None), root).map(drop)),
        },
        Measure {
            key: "startup",
            what: "git-baton --version (process start-up, child process)".into(),
            samples: vec![],
            run: Box::new(|| run_quiet(&binary, &["--version"], root).map(drop)),
        },
        Measure {
            key: "discover",
            what: "breakdown: Repo::discover + resolve_commit(base)".into(),
            samples: vec![],
            run: Box::new(|| {
                let repo = Repo::discover(root).map_err(|e| e.to_string())?;
                black_box(repo.resolve_commit("base").map_err(|e| e.to_string())?);
                Ok(())
            }),
        },
        Measure {
            key: "index",
            what: "breakdown: gix index decode, SHA-1 checked (as index_or_empty)".into(),
            samples: vec![],
            run: Box::new(|| {
                black_box(load_index(root, false)?.entries().len());
                Ok(())
            }),
        },
        Measure {
            key: "index_nohash",
            what: "breakdown: gix index decode, SHA-1 skipped".into(),
            samples: vec![],
            run: Box::new(|| {
                black_box(load_index(root, true)?.entries().len());
                Ok(())
            }),
        },
        Measure {
            key: "index_check",
            what: "breakdown: plain SHA-1 of the index file (the engine's checking thread)".into(),
            samples: vec![],
            run: Box::new(|| {
                black_box(index_check(root)?);
                Ok(())
            }),
        },
        Measure {
            key: "status",
            what: "breakdown: the same as A with DiffEngine::Status (the fallback engine), in-process".into(),
            samples: vec![],
            run: Box::new(|| {
                let n = status_engine(root)?;
                if n != expected_worktree {
                    return Err(format!("the status engine listed {n} paths"));
                }
                Ok(())
            }),
        },
        Measure {
            key: "scoped",
            what: "breakdown: discover + resolve + worktree_changes(base, 10 file prefixes)".into(),
            samples: vec![],
            run: Box::new(|| {
                black_box(baton_cumulative(root, &scoped_worktree)?);
                Ok(())
            }),
        },
    ];

    eprintln!(
        "timing {} measurements: {} warm-up + {} runs each, interleaved…",
        measures.len(),
        args.warmup,
        args.runs
    );
    for round in 0..args.warmup + args.runs {
        for m in &mut measures {
            let start = Instant::now();
            (m.run)()?;
            let elapsed = start.elapsed();
            if round >= args.warmup {
                m.samples.push(elapsed);
            }
        }
    }

    let parallelism_after = effective_parallelism();

    let rss = |plan: &str| support::peak_rss(&binary, &verify_args(plan, None), root);
    let rss_scoped = rss(PLAN)?;
    let rss_all = rss(PLAN_ALL)?;
    let git = Path::new("git");
    let git_path = which(git).unwrap_or_else(|| git.to_path_buf());
    let rss_git_diff = support::peak_rss(
        &git_path,
        &["diff", "--no-renames", "--name-only", "base"],
        root,
    )?;
    let rss_git_others = support::peak_rss(
        &git_path,
        &["ls-files", "--others", "--exclude-standard"],
        root,
    )?;

    // Report.
    let median = |key: &str| {
        measures
            .iter()
            .find(|m| m.key == key)
            .map(Measure::median)
            .expect("known key")
    };
    println!();
    println!("git-baton diff benchmark");
    println!(
        "repository: {} tracked files ({} per leaf directory), {} {}",
        fixture.tracked_files(),
        args.files_per_dir,
        if fixture.reused {
            "reused from"
        } else {
            "built in"
        },
        root.display()
    );
    if let Some(t) = fixture.build_time {
        println!("build time: {:.1} s", t.as_secs_f64());
    }
    println!(
        "diffs: worktree vs base {} paths (scoped to the 10 targets: {}), base..feature {} paths",
        from_git.len(),
        scoped.len(),
        git_tree.len()
    );
    println!(
        "gate verdicts (exit codes, not measured): {}; in-process worktree gate passed: {in_process_verdict}",
        verdicts
            .iter()
            .map(|(what, code)| format!("{what} → {code}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "machine: {cpus} CPUs (two threads of computation do {parallelism_before:.2}× the work of one \
         before the timings, {parallelism_after:.2}× after), {git_version}"
    );
    println!(
        "times: ms; median, min and max of {} runs after {} warm-ups, interleaved",
        args.runs, args.warmup
    );
    println!();
    println!(
        "{:<12} {:>9} {:>9} {:>9}  what",
        "key", "median", "min", "max"
    );
    for m in &measures {
        println!(
            "{:<12} {:>9} {:>9} {:>9}  {}",
            m.key,
            ms(m.median()),
            ms(m.min()),
            ms(m.max()),
            m.what
        );
    }

    let noisy: Vec<&str> = measures
        .iter()
        .filter(|m| m.max().as_secs_f64() > 1.5 * m.median().as_secs_f64())
        .map(|m| m.key)
        .collect();
    if !noisy.is_empty() {
        println!(
            "note: max > 1.5 × median for {}: something else ran on the machine; compare the ratios of mins",
            noisy.join(", ")
        );
    }

    let min = |key: &str| {
        measures
            .iter()
            .find(|m| m.key == key)
            .map(Measure::min)
            .expect("known key")
    };
    // (what, numerator, denominator, goal); the verdict is on the ratio of medians.
    let rows: [(&str, &str, &str, Option<f64>); 8] = [
        (
            "A   worktree_changes(All) in-process / git pair",
            "A",
            "git_pair",
            Some(0.6),
        ),
        (
            "A'  verify CLI, full scope (worktree) / git pair",
            "full_cli",
            "git_pair",
            Some(0.6),
        ),
        (
            "B   worktree_changes(All) in-process / floor",
            "A",
            "floor",
            Some(1.5),
        ),
        (
            "C   verify CLI, 10 targets / git pair",
            "C_cli",
            "git_pair",
            Some(0.05),
        ),
        (
            "C'  verify in-process, 10 targets / git pair",
            "C_inproc",
            "git_pair",
            None,
        ),
        (
            "D   verify CLI --head feature / git diff base feature",
            "D_cli",
            "git_tree",
            Some(1.0),
        ),
        (
            "D'  tree_changes(All) in-process / git diff base feature",
            "D_inproc",
            "git_tree",
            Some(1.0),
        ),
        (
            "D'' verify CLI --head feature, full scope / git diff",
            "D_full_cli",
            "git_tree",
            Some(1.0),
        ),
    ];
    println!();
    println!(
        "{:<58} {:>7} {:>7} {:>7}  result",
        "ratio", "medians", "mins", "goal"
    );
    for (what, num, den, goal) in rows {
        let of_medians = median(num).as_secs_f64() / median(den).as_secs_f64();
        let of_mins = min(num).as_secs_f64() / min(den).as_secs_f64();
        match goal {
            Some(goal) => {
                let verdict = if of_medians <= goal { "MET" } else { "NOT MET" };
                println!(
                    "{what:<58} {of_medians:>7.3} {of_mins:>7.3} {:>7}  {verdict}",
                    format!("≤ {goal}")
                );
            }
            None => println!("{what:<58} {of_medians:>7.3} {of_mins:>7.3} {:>7}  -", "-"),
        }
    }

    println!();
    println!(
        "{:<58} {:>7} {:>7}  result",
        "peak RSS of a child process (MB = 10^6 bytes)", "MB", "goal"
    );
    let mb = |kib: u64| kib as f64 * 1024.0 / 1e6;
    for (what, rss, goal) in [
        ("E   git-baton verify, 10 targets", &rss_scoped, Some(150.0)),
        (
            "E   git-baton verify, full scope (**/*.txt)",
            &rss_all,
            Some(150.0),
        ),
        (
            "    git diff --no-renames --name-only base (comparison)",
            &rss_git_diff,
            None,
        ),
        (
            "    git ls-files --others --exclude-standard (comparison)",
            &rss_git_others,
            None,
        ),
    ] {
        let value = mb(rss.kib);
        match goal {
            Some(goal) => {
                let verdict = if value <= goal { "MET" } else { "NOT MET" };
                println!(
                    "{what:<58} {value:>7.1} {:>7}  {verdict}",
                    format!("≤ {goal}")
                );
            }
            None => println!("{what:<58} {value:>7.1} {:>7}  -", "-"),
        }
    }
    println!("RSS method: {}", rss_scoped.method);
    Ok(())
}

/// The absolute path of a program on PATH (GNU time wants one it can exec; so does the fallback).
const PLAN_MANY: &str = "target/plans/many.md";

/// The many-targets case: a plan whose targets are every tracked text file (100,000 by
/// default), gated in both modes by the CLI. Matching must cost no more than a sort and a merge
/// of the targets with the changed paths, so the time per target is what it reports.
fn many_targets(args: &Args, binary: &Path, root: &Path, tracked: usize) -> Result<()> {
    let files = support::git(root, ["ls-files", "--", "*.txt"])?;
    let targets: Vec<&str> = files.lines().collect();
    let list: String = targets.iter().map(|t| format!("  - {t}\n")).collect();
    let plan = format!(
        "---\nid: bench-many\ntitle: Every tracked file\ntargets:\n{list}---\n# Benchmark\n"
    );
    std::fs::write(root.join(PLAN_MANY), plan).map_err(|err| err.to_string())?;
    let worktree = ["verify", PLAN_MANY, "--base", "base"];
    let range = ["verify", PLAN_MANY, "--base", "base", "--head", "feature"];
    // The verdict is not what is measured, but it must be one: 1 (uncovered targets), never 2.
    for cmd in [&worktree[..], &range[..]] {
        let code = run_quiet(binary, cmd, root)?;
        if code != 1 {
            return Err(format!(
                "`git-baton {}` exited {code}, expected 1",
                cmd.join(" ")
            ));
        }
    }
    // The git pair of the worktree case (what `git diff base` and `git ls-files --others` cost on
    // the same repository), timed in the same rounds: on a shared machine the ratio is steadier
    // than the absolute times. The CPU time (user + system) of each child is taken too, since a
    // busy machine stretches wall time by waiting, not by work.
    let git_pair = |root: &Path| -> Result<()> {
        git_timed(root, &["diff", "--no-renames", "--name-only", "base"])?;
        git_timed(root, &["ls-files", "--others", "--exclude-standard"])?;
        Ok(())
    };
    let tick = clock_ticks();
    let mut wall: [Vec<Duration>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut cpu: [Vec<Duration>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for round in 0..args.warmup + args.runs {
        for i in 0..3 {
            let cpu_before = children_cpu(tick)?;
            let start = Instant::now();
            match i {
                0 => run_quiet(binary, &worktree, root).map(drop)?,
                1 => run_quiet(binary, &range, root).map(drop)?,
                _ => git_pair(root)?,
            }
            let elapsed = start.elapsed();
            let used = children_cpu(tick)?.saturating_sub(cpu_before);
            if round >= args.warmup {
                wall[i].push(elapsed);
                cpu[i].push(used);
            }
        }
    }
    let median = |samples: &[Duration]| {
        let mut kept = samples.to_vec();
        kept.sort();
        kept[kept.len() / 2]
    };
    println!();
    println!(
        "many targets: {} targets ({tracked} tracked files), {} runs after {} warm-up; \
         CPU = user + system of the children",
        targets.len(),
        args.runs,
        args.warmup
    );
    let git_wall = median(&wall[2]);
    for (i, name) in [
        "worktree (verify --base base)",
        "range (verify --base base --head feature)",
        "git diff base + git ls-files --others",
    ]
    .into_iter()
    .enumerate()
    {
        let mut kept = wall[i].clone();
        kept.sort();
        let mid = median(&wall[i]);
        let per_target = |d: Duration| d.as_secs_f64() * 1e6 / targets.len() as f64;
        let tail = if i < 2 {
            format!(
                "  {:.2} µs/target (CPU {:.2})  {:.2}× git",
                per_target(mid),
                per_target(median(&cpu[i])),
                mid.as_secs_f64() / git_wall.as_secs_f64()
            )
        } else {
            String::new()
        };
        println!(
            "  {name:<45} median {:>9}  min {:>9}  max {:>9}  CPU {:>9}{tail}",
            ms(mid),
            ms(kept[0]),
            ms(kept[kept.len() - 1]),
            ms(median(&cpu[i])),
        );
    }
    Ok(())
}

/// The CPU time (user + system) of this process's waited-for children so far, from
/// `/proc/self/stat` (`cutime` and `cstime`, in `tick`s per second).
/// Measured children are reaped before each reading; their own children (git) count too.
fn children_cpu(tick: u64) -> Result<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat")
        .map_err(|err| format!("cannot read /proc/self/stat: {err}"))?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    // `cutime` and `cstime` are fields 16 and 17 of the whole line, 14 and 15 after the name.
    let ticks: u64 = fields
        .get(13..15)
        .ok_or("/proc/self/stat is shorter than expected")?
        .iter()
        .map(|f| f.parse::<u64>().unwrap_or(0))
        .sum();
    Ok(Duration::from_micros(ticks * 1_000_000 / tick))
}

/// Clock ticks per second, as `/proc` counts CPU time (100 on Linux unless configured otherwise).
fn clock_ticks() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100)
}

fn which(program: &Path) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|candidate| candidate.is_file())
    })
}
