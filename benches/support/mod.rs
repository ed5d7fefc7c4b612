//! The reference repository of the `diff` benchmark, the git helpers that build it, and a way to
//! read a child process's peak RSS without unsafe code.
//!
//! Shape (with the default 100 files per directory):
//!
//! - 100,000 tracked files `d0..d9/e0..e9/f0..f9/file000..file099.txt`, each holding
//!   `"{dir} {i}\nsome content line\n"`, and `.gitignore` (`*.log`, `target/`); committed on
//!   `main` and tagged `base`;
//! - branch `feature`: `"modified {k}\n"` appended to the 1,000 files `d*/e*/f*/file007.txt`;
//!   the first 500 (`d0..d4`) committed, the next 250 (`d5/*`, `d6/*`, `d7/e0..e4/*`) staged, the
//!   last 250 left unstaged;
//! - 100 untracked files `d{a}/new/untracked{i}.txt` and 1,000 ignored files `target/ign{i}.o`;
//! - `git gc -q`, then `git status --porcelain` so the index's stat data is fresh.
//!
//! The cumulative diff of the worktree against `base` is therefore 1,000 + 100 = 1,100 paths.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use git_baton::hermetic::{Hermetic, Person};

mod rss;
pub use rss::{PeakRss, peak_rss_of};

/// Written into the git directory once the repository is complete, so `--keep` can tell a finished
/// reference repository (of the right size) from a half-built one.
const MARKER: &str = "baton-bench-shape";

/// Number of modified files (`file007.txt` in each of the 1,000 leaf directories).
pub const MODIFIED: usize = 1000;
pub const COMMITTED: usize = 500;
pub const STAGED: usize = 250;
pub const UNTRACKED: usize = 100;
pub const IGNORED: usize = 1000;

/// The environment the benchmark runs in: no system or global git configuration, a fixed
/// identity, and nothing else from the caller but PATH and TMPDIR. Applied by re-executing the
/// benchmark, since changing the environment of the running process needs unsafe code.
pub fn hermetic_command(program: &Path, home: &Path) -> Command {
    Hermetic::new(home)
        .identity(
            Person::new("Bench Author", "author@example.com"),
            Person::new("Bench Committer", "committer@example.com"),
        )
        .global_config("/dev/null")
        .keep("TMPDIR")
        .keep("RUST_BACKTRACE")
        .command(program)
}

pub type Result<T> = std::result::Result<T, String>;

/// Runs git in `dir` and returns its stdout; an error carries git's stderr.
pub fn git<I, S>(dir: &Path, args: I) -> Result<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    git_stdin(dir, args, None)
}

pub fn git_stdin<I, S>(dir: &Path, args: I, input: Option<&str>) -> Result<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<S> = args.into_iter().collect();
    let shown: Vec<String> = args
        .iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect();
    let mut child = Command::new("git")
        .args(&args)
        .current_dir(dir)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| format!("cannot run git: {err}"))?;
    if let Some(input) = input {
        // Dropped at the end of the block, which closes git's stdin.
        let mut stdin = child.stdin.take().expect("piped");
        stdin
            .write_all(input.as_bytes())
            .map_err(|err| format!("cannot write to git {}: {err}", shown.join(" ")))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|err| format!("git {}: {err}", shown.join(" ")))?;
    if !out.status.success() {
        return Err(format!(
            "git {} failed ({}): {}",
            shown.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    String::from_utf8(out.stdout)
        .map_err(|_| format!("git {}: output is not UTF-8", shown.join(" ")))
}

/// `d{a}/e{b}/f{c}` for leaf directory number `k` (0..1000), in the order the fixture uses.
pub fn leaf_dir(k: usize) -> String {
    format!("d{}/e{}/f{}", k / 100, (k / 10) % 10, k % 10)
}

pub fn file_name(i: usize) -> String {
    format!("file{i:03}.txt")
}

/// The file of leaf directory `k` that the `feature` branch modifies.
pub fn modified_path(k: usize) -> String {
    format!("{}/{}", leaf_dir(k), file_name(7))
}

/// The reference repository, built in a temporary directory or kept in a given one.
pub struct Fixture {
    pub root: PathBuf,
    pub files_per_dir: usize,
    /// `true` when an existing repository was reused.
    pub reused: bool,
    pub build_time: Option<Duration>,
    _tmp: Option<tempfile::TempDir>,
}

impl Fixture {
    /// Builds the repository in a new temporary directory, or in `keep` (which must be empty or
    /// missing), or reuses `keep` when it already holds a complete one of the same size.
    pub fn open_or_build(keep: Option<&Path>, files_per_dir: usize) -> Result<Fixture> {
        let shape = format!("files_per_dir={files_per_dir}\n");
        let (root, tmp) = match keep {
            Some(dir) => {
                if let Ok(found) = std::fs::read_to_string(dir.join(".git").join(MARKER)) {
                    if found != shape {
                        return Err(format!(
                            "{} holds a reference repository of another size ({}); \
                             pass the same --files-per-dir or another --keep directory",
                            dir.display(),
                            found.trim()
                        ));
                    }
                    let root = dir
                        .canonicalize()
                        .map_err(|err| format!("{}: {err}", dir.display()))?;
                    // Another machine or a touched worktree: make the stat data fresh again.
                    git(&root, ["status", "--porcelain"])?;
                    return Ok(Fixture {
                        root,
                        files_per_dir,
                        reused: true,
                        build_time: None,
                        _tmp: None,
                    });
                }
                let empty = match std::fs::read_dir(dir) {
                    Ok(mut entries) => entries.next().is_none(),
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => true,
                    Err(err) => return Err(format!("{}: {err}", dir.display())),
                };
                if !empty {
                    return Err(format!(
                        "{} is neither empty nor a complete reference repository; refusing to touch it",
                        dir.display()
                    ));
                }
                std::fs::create_dir_all(dir).map_err(|err| format!("{}: {err}", dir.display()))?;
                let root = dir
                    .canonicalize()
                    .map_err(|err| format!("{}: {err}", dir.display()))?;
                (root, None)
            }
            None => {
                let tmp = tempfile::Builder::new()
                    .prefix("baton-bench")
                    .tempdir()
                    .map_err(|err| format!("cannot create a temporary directory: {err}"))?;
                let root = tmp
                    .path()
                    .canonicalize()
                    .map_err(|err| err.to_string())?
                    .join("repo");
                std::fs::create_dir(&root).map_err(|err| err.to_string())?;
                (root, Some(tmp))
            }
        };
        let started = std::time::Instant::now();
        build(&root, files_per_dir)?;
        std::fs::write(root.join(".git").join(MARKER), shape).map_err(|err| err.to_string())?;
        Ok(Fixture {
            root,
            files_per_dir,
            reused: false,
            build_time: Some(started.elapsed()),
            _tmp: tmp,
        })
    }

    pub fn tracked_files(&self) -> usize {
        1000 * self.files_per_dir + 1
    }
}

fn write(root: &Path, rel: &str, content: &str) -> Result<()> {
    std::fs::write(root.join(rel), content).map_err(|err| format!("cannot write {rel}: {err}"))
}

fn append(root: &Path, rel: &str, content: &str) -> Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(root.join(rel))
        .map_err(|err| format!("cannot open {rel}: {err}"))?;
    file.write_all(content.as_bytes())
        .map_err(|err| format!("cannot append to {rel}: {err}"))
}

fn mkdir(root: &Path, rel: &str) -> Result<()> {
    std::fs::create_dir_all(root.join(rel)).map_err(|err| format!("cannot create {rel}: {err}"))
}

fn build(root: &Path, files_per_dir: usize) -> Result<()> {
    git(root, ["init", "-q", "-b", "main"])?;
    // No automatic gc in the background, racing the explicit one below or the timings.
    git(root, ["config", "gc.auto", "0"])?;
    git(root, ["config", "maintenance.auto", "false"])?;
    for k in 0..1000 {
        let dir = leaf_dir(k);
        mkdir(root, &dir)?;
        for i in 0..files_per_dir {
            write(
                root,
                &format!("{dir}/{}", file_name(i)),
                &format!("{dir} {i}\nsome content line\n"),
            )?;
        }
    }
    write(root, ".gitignore", "*.log\ntarget/\n")?;
    git(root, ["add", "-A"])?;
    git(root, ["commit", "-q", "-m", "base"])?;
    git(root, ["tag", "base"])?;

    git(root, ["checkout", "-q", "-b", "feature"])?;
    for k in 0..MODIFIED {
        append(root, &modified_path(k), &format!("modified {k}\n"))?;
    }
    let list =
        |range: std::ops::Range<usize>| range.map(|k| modified_path(k) + "\n").collect::<String>();
    git_stdin(
        root,
        ["add", "--pathspec-from-file=-"],
        Some(&list(0..COMMITTED)),
    )?;
    git(root, ["commit", "-q", "-m", "feature: first 500"])?;
    git_stdin(
        root,
        ["add", "--pathspec-from-file=-"],
        Some(&list(COMMITTED..COMMITTED + STAGED)),
    )?;

    for a in 0..10 {
        mkdir(root, &format!("d{a}/new"))?;
        for i in 0..10 {
            write(
                root,
                &format!("d{a}/new/untracked{i}.txt"),
                &format!("untracked {a} {i}\n"),
            )?;
        }
    }
    mkdir(root, "target")?;
    for i in 0..IGNORED {
        write(root, &format!("target/ign{i}.o"), "ignored\n")?;
    }
    git(root, ["gc", "-q"])?;
    // Files written in the same second as the index are "racily clean" and would be re-hashed
    // on every run; after a pause, `git status` refreshes them and rewrites the index.
    std::thread::sleep(Duration::from_millis(1100));
    git(root, ["status", "--porcelain"])?;
    Ok(())
}

/// Runs `program` with `args` in `dir` to completion (stdout and stderr discarded) and measures
/// its peak RSS; see [`peak_rss_of`].
pub fn peak_rss(program: &Path, args: &[&str], dir: &Path) -> Result<PeakRss> {
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(dir);
    peak_rss_of(&cmd)
}
