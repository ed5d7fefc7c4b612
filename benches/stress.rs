//! Thousands of runs in one repository: are runs created concurrently all distinct and whole, and
//! how do `list` and `status` scale, measured against git listing the same number of refs?
//!
//! `cargo bench --bench stress [-- --runs N (default 2000) --workers W (default 8) --repeat K
//! (default 11)]`
//!
//! Creates `N` runs with the real binary, `W` `git baton run` processes at a time (each run: a
//! branch, a linked worktree, an agent that edits the plan's target, the coverage gate, `review`),
//! then checks that every run id is distinct and every `state.json` is a valid RunState in
//! `review`. At a quarter of the runs and at all of them it times `list`, `list --json`, `status
//! <id>` and `status --json <id>` against `git for-each-ref` over the runs' `baton/*` branches, as
//! the median of `K` interleaved rounds, and prints the times and the ratios. It fails only when a
//! run is lost, duplicated or broken; it never fails on time. See docs/testing.md.
//!
//! `cargo bench --bench stress -- --queue N [--list-queue M]` measures the queue instead
//! (docs/cycle.md): `N` runs queued with `run --queue` and driven by a shell loop of `git baton
//! resume`, `N` more by `git baton cycle --once --jobs 1` and `N` more by `--jobs 4` — runs per
//! second, the peak RSS, and cycle's own overhead per run against the loop — then `list` with
//! `M` runs in the queue.

#![forbid(unsafe_code)]

#[path = "support/rss.rs"]
mod rss;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use git_baton::hermetic::Hermetic;

type Result<T> = std::result::Result<T, String>;

struct Args {
    runs: usize,
    workers: usize,
    repeat: usize,
    /// Measure the queue with this many runs per driver, instead of the runs' listing.
    queue: Option<usize>,
    list_queue: usize,
}

const USAGE: &str = "usage: cargo bench --bench stress [-- --runs N (default 2000)] \
                     [--workers W (default 8)] [--repeat K (default 11)] \
                     [--queue N [--list-queue M (default 1000)]]";

fn parse_args() -> Result<Args> {
    let mut args = Args {
        runs: 2000,
        workers: 8,
        repeat: 11,
        queue: None,
        list_queue: 1000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name.to_string(), Some(value.to_string())),
            None => (arg.clone(), None),
        };
        let mut number = || -> Result<usize> {
            let text = inline
                .clone()
                .or_else(|| it.next())
                .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))?;
            match text.parse::<usize>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(format!(
                    "{name}: `{text}` is not a positive number\n{USAGE}"
                )),
            }
        };
        match name.as_str() {
            // cargo bench passes --bench to every harness = false target.
            "--bench" => {}
            "--runs" => args.runs = number()?,
            "--workers" => args.workers = number()?,
            "--repeat" => args.repeat = number()?,
            "--queue" => args.queue = Some(number()?),
            "--list-queue" => args.list_queue = number()?,
            _ => return Err(format!("unknown argument `{arg}`\n{USAGE}")),
        }
    }
    Ok(args)
}

fn main() {
    let result = parse_args().and_then(|args| match args.queue {
        Some(per_driver) => queue(&args, per_driver),
        None => run(&args),
    });
    if let Err(message) = result {
        eprintln!("error: {message}");
        std::process::exit(2);
    }
}

/// The repository and the environment every child process gets.
struct Bench {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    env: Hermetic,
    baton: PathBuf,
}

impl Bench {
    fn new() -> Result<Bench> {
        let tmp = tempfile::Builder::new()
            .prefix("baton-stress")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
        let base = tmp.path().canonicalize().map_err(|e| e.to_string())?;
        let (repo, home) = (base.join("repo"), base.join("home"));
        for dir in [&repo, &home.join(".config")] {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let env = Hermetic::new(&home)
            .global_config("/dev/null")
            .unpinned_dates()
            .keep("TMPDIR");
        let bench = Bench {
            _tmp: tmp,
            repo,
            env,
            baton: PathBuf::from(env!("CARGO_BIN_EXE_git-baton")),
        };
        bench.git(&["init", "-q", "-b", "main"])?;
        for (path, text) in [
            ("docs/a.md", "# A\n"),
            (
                "plans/p.md",
                "---\ntitle: Stress\ntargets: [docs/a.md]\n---\nAppend a line to docs/a.md.\n",
            ),
            (
                ".baton.yml",
                "actors:\n  agent:\n    command: [sh, -c, 'echo \"$BATON_RUN_ID\" >> docs/a.md']\n\
                 pipeline:\n  - { stage: executor, actor: agent, gate: coverage }\n",
            ),
        ] {
            let path = bench.repo.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).map_err(|e| e.to_string())?;
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        bench.git(&["add", "-A"])?;
        bench.git(&["commit", "-q", "-m", "base"])?;
        Ok(bench)
    }

    fn command(&self, program: &Path, args: &[&str]) -> Command {
        let mut cmd = self.env.command(program);
        cmd.args(args)
            .current_dir(&self.repo)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Runs a program to completion; stdout, or an error with stderr.
    fn output(&self, program: &Path, args: &[&str]) -> Result<(String, String)> {
        let out = self
            .command(program, args)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        if !out.status.success() {
            return Err(format!(
                "{} {} failed ({}): {}",
                program.display(),
                args.join(" "),
                out.status,
                text(&out.stderr).trim()
            ));
        }
        Ok((text(&out.stdout), text(&out.stderr)))
    }

    fn git(&self, args: &[&str]) -> Result<String> {
        Ok(self.output(Path::new("git"), args)?.0)
    }

    /// `git baton run` of the plan, `count` times in a row; the ids it printed.
    fn create(&self, count: usize) -> Result<Vec<String>> {
        self.create_with(count, &["run", "plans/p.md"])
    }

    /// `git baton ARGS` (a `run` of some kind), `count` times in a row; the ids it printed.
    fn create_with(&self, count: usize, args: &[&str]) -> Result<Vec<String>> {
        let mut ids = Vec::with_capacity(count);
        for _ in 0..count {
            let (_, stderr) = self.output(&self.baton, args)?;
            let id = stderr
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("run "))
                .ok_or_else(|| format!("no `run <id>` line in:\n{stderr}"))?;
            ids.push(id.to_string());
        }
        Ok(ids)
    }

    /// Wall time of one run of a command whose output is read and dropped.
    fn time(&self, program: &Path, args: &[&str]) -> Result<Duration> {
        let start = Instant::now();
        self.output(program, args)?;
        Ok(start.elapsed())
    }
}

/// Creates `count` runs with `workers` processes at a time; every id printed.
fn create_concurrently(bench: &Arc<Bench>, count: usize, workers: usize) -> Result<Vec<String>> {
    let ids = Arc::new(Mutex::new(Vec::with_capacity(count)));
    let errors = Arc::new(Mutex::new(Vec::new()));
    let threads: Vec<_> = (0..workers)
        .map(|w| {
            let share = count / workers + usize::from(w < count % workers);
            let (bench, ids, errors) = (bench.clone(), ids.clone(), errors.clone());
            std::thread::spawn(move || match bench.create(share) {
                Ok(mine) => ids.lock().unwrap().extend(mine),
                Err(err) => errors.lock().unwrap().push(err),
            })
        })
        .collect();
    for thread in threads {
        thread
            .join()
            .map_err(|_| "a worker thread panicked".to_string())?;
    }
    if let Some(err) = errors.lock().unwrap().first() {
        return Err(err.clone());
    }
    let ids = ids.lock().unwrap().clone();
    Ok(ids)
}

/// Every id distinct, one run directory per id and no other, each `state.json` a RunState in
/// `review` under its own id.
fn check_runs(bench: &Bench, ids: &[String]) -> Result<()> {
    let distinct: BTreeSet<&String> = ids.iter().collect();
    if distinct.len() != ids.len() {
        return Err(format!(
            "{} run ids printed, {} distinct",
            ids.len(),
            distinct.len()
        ));
    }
    let runs_dir = bench.repo.join(".git/baton/runs");
    let mut on_disk = BTreeSet::new();
    for entry in std::fs::read_dir(&runs_dir).map_err(|e| format!("{}: {e}", runs_dir.display()))? {
        let name = entry
            .map_err(|e| e.to_string())?
            .file_name()
            .into_string()
            .map_err(|n| format!("a run directory named {n:?}"))?;
        let path = runs_dir.join(&name).join("state.json");
        let raw = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let state =
            git_baton::state::store::parse(&raw).map_err(|e| format!("{}: {e}", path.display()))?;
        let status = serde_json::to_value(state.status()).map_err(|e| e.to_string())?;
        if state.run_id != name || status != "review" {
            return Err(format!(
                "{}: run {} is {status}, expected run {name} in review",
                path.display(),
                state.run_id
            ));
        }
        on_disk.insert(name);
    }
    let printed: BTreeSet<String> = ids.iter().cloned().collect();
    if on_disk != printed {
        return Err(format!(
            "{} runs printed, {} run directories, {} in common",
            printed.len(),
            on_disk.len(),
            on_disk.intersection(&printed).count()
        ));
    }
    Ok(())
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Times each command as the median of `repeat` rounds, all commands once per round, so that
/// drift of the machine hits each alike; prints them with their ratio to the first (the baseline).
fn measure(bench: &Bench, runs: usize, id: &str, repeat: usize) -> Result<()> {
    let git = Path::new("git");
    let baton = bench.baton.as_path();
    let commands: [(&str, &Path, Vec<&str>); 6] = [
        (
            "git for-each-ref refs/heads/baton/",
            git,
            vec!["for-each-ref", "refs/heads/baton/"],
        ),
        (
            "git worktree list --porcelain",
            git,
            vec!["worktree", "list", "--porcelain"],
        ),
        ("git baton list", baton, vec!["list"]),
        ("git baton list --json", baton, vec!["list", "--json"]),
        ("git baton status <id>", baton, vec!["status", id]),
        (
            "git baton status --json <id>",
            baton,
            vec!["status", "--json", id],
        ),
    ];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); commands.len()];
    // One warm-up round for the file system caches.
    for round in 0..=repeat {
        for (i, (_, program, args)) in commands.iter().enumerate() {
            let took = bench.time(program, args)?;
            if round > 0 {
                times[i].push(took);
            }
        }
    }
    let medians: Vec<Duration> = times.into_iter().map(median).collect();
    for ((name, _, _), took) in commands.iter().zip(&medians) {
        println!(
            "{runs:>6}  {name:<34} {:>9.2} ms  {:>7.2}x",
            took.as_secs_f64() * 1e3,
            took.as_secs_f64() / medians[0].as_secs_f64()
        );
    }
    Ok(())
}

fn run(args: &Args) -> Result<()> {
    let bench = Arc::new(Bench::new()?);
    println!(
        "stress: {} runs of one repository, {} `git baton run` processes at a time; medians of {} rounds",
        args.runs, args.workers, args.repeat
    );
    println!(
        "{:>6}  {:<34} {:>12}  {:>8}",
        "runs", "command", "median", "ratio"
    );
    let first = (args.runs / 4).max(1);
    let mut ids: Vec<String> = Vec::new();
    let mut phases = Vec::new();
    for target in [first, args.runs] {
        let (before, start) = (ids.len(), Instant::now());
        ids.extend(create_concurrently(&bench, target - before, args.workers)?);
        phases.push((before, ids.len(), start.elapsed()));
        check_runs(&bench, &ids)?;
        let middle = &ids[ids.len() / 2];
        measure(&bench, ids.len(), middle, args.repeat)?;
    }
    for (from, to, took) in phases {
        println!(
            "created runs {from}..{to} in {:.1} s ({:.1} runs/s)",
            took.as_secs_f64(),
            (to - from) as f64 / took.as_secs_f64()
        );
    }
    println!(
        "{} runs, created by {} concurrent processes: every id distinct, every RunState valid and \
         in review",
        ids.len(),
        args.workers
    );
    Ok(())
}

/// `count` runs created with `run --queue`, one after another; their ids.
fn create_queued(bench: &Bench, count: usize) -> Result<Vec<String>> {
    bench.create_with(count, &["run", "--queue", "plans/p.md"])
}

/// Every run of `ids` in review, or the first that is not.
fn all_in_review(bench: &Bench, ids: &[String]) -> Result<()> {
    for id in ids {
        let path = bench
            .repo
            .join(".git/baton/runs")
            .join(id)
            .join("state.json");
        let raw = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let state =
            git_baton::state::store::parse(&raw).map_err(|e| format!("{}: {e}", path.display()))?;
        if state.status() != git_baton::state::RunStatus::Review {
            return Err(format!("run {id} is {}, not in review", state.status()));
        }
    }
    Ok(())
}

/// One way of driving a batch of queued runs, measured.
struct Drove {
    name: &'static str,
    took: Duration,
    peak_kib: u64,
    runs: usize,
}

fn queue(args: &Args, per_driver: usize) -> Result<()> {
    let bench = Bench::new()?;
    println!(
        "queue: {per_driver} queued runs per driver (a trivial actor, the coverage gate); \
         `list` with {} queued runs",
        args.list_queue
    );
    let mut drove = Vec::new();
    let mut method = "";

    // A shell loop of `git baton resume`, as a script would drive the queue without cycle.
    let batch = create_queued(&bench, per_driver)?;
    let list = batch.join(" ");
    let script =
        format!("for id in {list}; do \"$0\" resume \"$id\" >/dev/null 2>&1 || exit 1; done");
    let mut cmd = bench.env.command(Path::new("sh"));
    cmd.args(["-c", &script, bench.baton.to_str().unwrap_or("git-baton")])
        .current_dir(&bench.repo);
    let start = Instant::now();
    let peak = rss::peak_rss_of(&cmd)?;
    drove.push(Drove {
        name: "shell loop of `git baton resume`",
        took: start.elapsed(),
        peak_kib: peak.kib,
        runs: per_driver,
    });
    all_in_review(&bench, &batch)?;

    for (name, jobs) in [
        ("git baton cycle --once --jobs 1", "1"),
        ("git baton cycle --once --jobs 4", "4"),
    ] {
        let batch = create_queued(&bench, per_driver)?;
        let mut cmd = bench.env.command(&bench.baton);
        cmd.args(["cycle", "--once", "--jobs", jobs])
            .current_dir(&bench.repo);
        let start = Instant::now();
        let peak = rss::peak_rss_of(&cmd)?;
        method = peak.method;
        drove.push(Drove {
            name,
            took: start.elapsed(),
            peak_kib: peak.kib,
            runs: per_driver,
        });
        all_in_review(&bench, &batch)?;
    }
    println!(
        "{:<36} {:>9} {:>10} {:>12}",
        "driver", "runs/s", "total", "peak RSS"
    );
    for d in &drove {
        println!(
            "{:<36} {:>9.2} {:>8.1} s {:>9} KiB",
            d.name,
            d.runs as f64 / d.took.as_secs_f64(),
            d.took.as_secs_f64(),
            d.peak_kib
        );
    }
    println!("peak RSS: {method}, the largest process of the driver's tree");
    let per_run = |d: &Drove| d.took.as_secs_f64() / d.runs as f64;
    println!(
        "cycle's own overhead per run (--jobs 1 against the loop): {:+.1} ms; --jobs 4 is {:.2}x the loop's rate",
        (per_run(&drove[1]) - per_run(&drove[0])) * 1e3,
        per_run(&drove[0]) / per_run(&drove[2])
    );

    // `list` with the queue full: the runs driven above plus enough queued ones.
    let done = 3 * per_driver;
    let queued = create_queued(&bench, args.list_queue)?;
    let git = Path::new("git");
    let mut list = Vec::new();
    let mut refs = Vec::new();
    for round in 0..=args.repeat {
        let took = bench.time(&bench.baton, &["list"])?;
        let took_git = bench.time(git, &["for-each-ref", "refs/heads/baton/"])?;
        if round > 0 {
            list.push(took);
            refs.push(took_git);
        }
    }
    let (list, refs) = (median(list), median(refs));
    println!(
        "git baton list, {} queued + {done} in review: {:.1} ms median of {} ({:.2}x git for-each-ref's {:.1} ms)",
        queued.len(),
        list.as_secs_f64() * 1e3,
        args.repeat,
        list.as_secs_f64() / refs.as_secs_f64(),
        refs.as_secs_f64() * 1e3
    );
    Ok(())
}
