//! Crash consistency: `kill -9` of git-baton at random moments of `run`, `resume`, `finish`,
//! `clean` and `cycle` (seeded, `CRASH_TRIALS` per command), and at every failure-injection point of run
//! creation, `finish` and `clean` (`GIT_BATON_FAIL_AT=<point>` fails there, `<point>:kill` dies
//! there of SIGKILL).
//!
//! After every kill: each published `state.json` is a whole RunState of the current schema;
//! `list --json`, `status --json` and `doctor --json` agree about every run (and `doctor` names
//! every leftover on disk); the command is re-run to completion (`resume` brings an unfinished
//! run to `review`, `finish` and `clean` finish their work); no edit the actor made is lost; and
//! no process of any attempt is left running. The counts (trials by command and kill point,
//! outcomes) are printed. `CRASH_SEED` replays a loop. See docs/testing.md.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Rng, Run, TestRepo};

/// The failure-injection points, with the command that passes them, in the order it does: run
/// creation's, `finish`'s (before its commit, after it, before the RunState is saved) and
/// `clean`'s (after its one rename, after the worktree, after the refs).
const POINTS: [(&str, &str); 11] = [
    ("run", "snapshot"),
    ("run", "branch"),
    ("run", "worktree"),
    ("run", "state"),
    ("run", "publish"),
    ("finish", "finish:commit"),
    ("finish", "finish:committed"),
    ("finish", "finish:save"),
    ("clean", "clean:renamed"),
    ("clean", "clean:worktree"),
    ("clean", "clean:refs"),
];
const COMMANDS: [&str; 5] = ["run", "resume", "finish", "clean", "cycle"];
use crate::support::LIVENESS;

/// Random kills per command unless `CRASH_TRIALS` says otherwise.
const DEFAULT_TRIALS: usize = 2;

fn trials() -> usize {
    crate::support::env_number("CRASH_TRIALS", DEFAULT_TRIALS)
}

const PLAN: &str = "---\ntitle: Fix the grading documents\ntargets: [docs/a.md, docs/b.md, docs/c.md]\n---\nState the new rule in each.\n";

/// The executor's actor: edits each target, and records each edit in the journal (outside the
/// repository) only once it is made, so that every journal line is an edit that must survive.
const AGENT: &str = r#"for f in docs/a.md docs/b.md docs/c.md; do
    line="$BATON_RUN_ID $BATON_STAGE $BATON_ATTEMPT $f"
    printf '%s\n' "$line" >> "$f"
    printf '%s\n' "$line" >> "$JOURNAL"
    sleep 0.05
done
printf '{"usage": {"input_tokens": 1}}\n' > "$BATON_EVIDENCE_FILE"
"#;

/// A repository with the three documents, the plan and a two-stage pipeline, and a scratch
/// directory outside it for the journal.
struct Fixture {
    repo: TestRepo,
    _scratch: tempfile::TempDir,
    journal: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let scratch = tempfile::Builder::new()
            .prefix("baton-crash")
            .tempdir()
            .unwrap();
        let journal = scratch.path().join("journal");
        let agent = scratch.path().join("agent.sh");
        std::fs::write(&agent, AGENT).unwrap();
        let repo = TestRepo::new();
        for doc in ["a", "b", "c"] {
            repo.write(
                &format!("docs/{doc}.md"),
                &format!("# {doc}\n\nThe old rule.\n"),
            );
        }
        repo.write("plans/fix.md", PLAN);
        let quoted = |p: &Path| serde_json::to_string(p.to_str().unwrap()).unwrap();
        repo.write(
            ".baton.yml",
            &format!(
                "actors:\n  agent:\n    command: [sh, {}]\n    env: {{ JOURNAL: {} }}\n  \
                 writer:\n    command: [sh, -c, 'echo report written']\n\
                 pipeline:\n  - {{ stage: executor, actor: agent, gate: coverage }}\n  \
                 - {{ stage: reporter, actor: writer }}\n",
                quoted(&agent),
                quoted(&journal)
            ),
        );
        repo.commit_all("base");
        Fixture {
            repo,
            _scratch: scratch,
            journal,
        }
    }

    fn baton(&self, args: &[&str]) -> Run {
        self.repo.baton(args)
    }

    fn spawn(&self, args: &[&str], env: &[(&str, &str)]) -> Child {
        let env: Vec<(&str, &std::ffi::OsStr)> = env
            .iter()
            .map(|(k, v)| (*k, std::ffi::OsStr::new(v)))
            .collect();
        self.repo.baton_spawn(&self.repo.root, args, &env)
    }

    fn wait(&self, child: Child) -> Run {
        self.repo.baton_wait(child, LIVENESS)
    }

    fn runs_dir(&self) -> PathBuf {
        self.repo.path(".git/baton/runs")
    }

    fn status(&self, id: &str) -> Value {
        let run = self.baton(&["status", "--json", id]);
        assert_eq!(run.code, 0, "status {id}: {run}");
        run.json()
    }

    /// A run in `review`: `run` to completion.
    fn reviewed_run(&self) -> String {
        let run = self.baton(&["run", "plans/fix.md"]);
        assert_eq!(run.code, 0, "{run}");
        let id = run.run_id();
        assert_eq!(self.status(&id)["status"], "review");
        id
    }

    /// A stale run: its driver killed while the actor edits.
    fn stale_run(&self) -> String {
        let mut child = self.spawn(&["run", "plans/fix.md"], &[]);
        let deadline = Instant::now() + LIVENESS;
        while !std::fs::read_to_string(&self.journal).is_ok_and(|j| !j.is_empty()) {
            assert!(Instant::now() < deadline, "the actor never started");
            std::thread::sleep(Duration::from_millis(5));
        }
        kill_9(&mut child);
        let run = self.wait(child);
        assert_eq!(run.code, -1, "{run}");
        let ids = published(self);
        assert_eq!(ids.len(), 1, "{ids:?}");
        ids[0].clone()
    }
}

/// SIGKILL, sent directly (no `kill` process to start first, which would blur the moment).
fn kill_9(child: &mut Child) {
    let _ = child.kill();
}

/// Names under the runs directory: published runs and hidden entries.
fn entries(fx: &Fixture) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fx.runs_dir())
        .map(|e| {
            e.map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn published(fx: &Fixture) -> Vec<String> {
    entries(fx)
        .into_iter()
        .filter(|n| !n.starts_with('.'))
        .collect()
}

/// What the loop counts.
#[derive(Default)]
struct Tally(BTreeMap<String, usize>);

impl Tally {
    fn add(&mut self, what: impl Into<String>) {
        *self.0.entry(what.into()).or_default() += 1;
    }
}

/// The invariants that must hold whenever no git-baton runs, whatever was killed when; returns
/// the kinds of leftovers `doctor` reported (debris of killed creations).
fn check_consistent(fx: &Fixture, context: &str) -> Vec<String> {
    let runs_dir = fx.runs_dir();
    let mut states: BTreeMap<String, git_baton::state::RunState> = BTreeMap::new();
    let mut hidden = Vec::new();
    let mut tmp_files = Vec::new();
    for name in entries(fx) {
        if name.starts_with('.') {
            hidden.push(name);
            continue;
        }
        let path = runs_dir.join(&name).join("state.json");
        let raw = std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{context}: {} has no readable state.json ({e}): list, status and doctor cannot \
                 see this run directory",
                runs_dir.join(&name).display()
            )
        });
        // Written in the current schema, and a RunState its own checks accept.
        let version = serde_json::from_slice::<Value>(&raw)
            .ok()
            .and_then(|v| v["schema_version"].as_u64());
        let state = git_baton::state::store::parse(&raw)
            .ok()
            .filter(|_| version == Some(u64::from(git_baton::state::SCHEMA_VERSION)))
            .unwrap_or_else(|| {
                panic!(
                    "{context}: {} is not a RunState of schema {} ({:?}):\n{}",
                    path.display(),
                    git_baton::state::SCHEMA_VERSION,
                    git_baton::state::store::parse(&raw).err(),
                    String::from_utf8_lossy(&raw)
                )
            });
        assert_eq!(state.run_id, name, "{context}");
        for file in std::fs::read_dir(runs_dir.join(&name)).unwrap() {
            let file = file.unwrap().file_name().into_string().unwrap();
            if git_baton::files::is_temporary_name(&file) {
                tmp_files.push(file);
            }
        }
        states.insert(name, state);
    }

    let list = fx.baton(&["list", "--json"]);
    assert_eq!(list.code, 0, "{context}: {list}");
    let listed: BTreeMap<String, Value> = list
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["run_id"].as_str().unwrap().to_string(), v.clone()))
        .collect();
    assert_eq!(
        listed.keys().collect::<Vec<_>>(),
        states.keys().collect::<Vec<_>>(),
        "{context}: list --json and the run directories disagree"
    );
    let mut stale = BTreeSet::new();
    for (id, state) in &states {
        let status = fx.status(id);
        let on_disk = serde_json::to_value(state.status()).unwrap();
        assert_eq!(
            status["status"], on_disk,
            "{context}: status {id} vs state.json"
        );
        assert_eq!(
            listed[id]["status"], on_disk,
            "{context}: list vs state.json"
        );
        assert_eq!(
            listed[id]["stale"], status["stale"],
            "{context}: list vs status"
        );
        if status["stale"] == true {
            stale.insert(id.clone());
        }
    }

    let doctor = fx.baton(&["doctor", "--json"]);
    assert!(doctor.code == 0 || doctor.code == 1, "{context}: {doctor}");
    let findings: Vec<Value> = doctor.json()["findings"].as_array().unwrap().clone();
    let found = |kind: &str, needle: &str| {
        findings.iter().any(|f| {
            f["kind"] == kind
                && (f["run"] == needle || f["message"].as_str().unwrap_or("").contains(needle))
        })
    };
    let doctor_stale: BTreeSet<String> = findings
        .iter()
        .filter(|f| f["kind"] == "stale_run")
        .map(|f| f["run"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        doctor_stale, stale,
        "{context}: doctor and status disagree on stale runs"
    );
    let mut leftovers = Vec::new();
    for name in &hidden {
        let (kind, what) = if name.starts_with(".clean-") {
            ("orphaned_removal", "half-removed run directory")
        } else {
            ("orphaned_creation", "staging directory")
        };
        assert!(
            found(kind, name),
            "{context}: doctor does not report {name} under {}:\n{doctor}",
            runs_dir.display()
        );
        leftovers.push(what.to_string());
    }
    for file in &tmp_files {
        assert!(
            found("temporary_file", file),
            "{context}: doctor does not report {file}:\n{doctor}"
        );
        leftovers.push("temporary file".to_string());
    }
    let cleaned = std::fs::read_to_string(fx.repo.path(".git/baton/cleaned")).unwrap_or_default();
    let known = |id: &str| states.contains_key(id) || cleaned.lines().any(|l| l == id);
    // A registration under .git/worktrees that a kill left half-written (git itself dies on it,
    // even in `git branch`): doctor names it, and the next run discards it.
    let registrations = fx.repo.path(".git/worktrees");
    for entry in std::fs::read_dir(&registrations).into_iter().flatten() {
        let dir = entry.unwrap().path();
        let written = |file: &str| std::fs::read(dir.join(file)).is_ok_and(|b| !b.is_empty());
        if !(written("gitdir") && written("commondir") && written("HEAD")) {
            let shown = fx.repo.mask(&dir.display().to_string());
            assert!(
                found("broken_registration", &shown),
                "{context}: doctor misses {shown}:\n{doctor}"
            );
            leftovers.push("half-written worktree registration".to_string());
        }
    }
    // `for-each-ref`, unlike `git branch`, reads no worktree registration.
    for branch in fx
        .repo
        .git([
            "for-each-ref",
            "--format=%(refname:short)",
            "refs/heads/baton/",
        ])
        .lines()
    {
        let id = branch.trim_start_matches("baton/");
        if !known(id) {
            assert!(
                found("orphaned_branch", branch),
                "{context}: doctor misses {branch}:\n{doctor}"
            );
            leftovers.push("branch".to_string());
        }
    }
    let root = fx.repo.path(".baton/worktrees");
    for entry in std::fs::read_dir(&root).into_iter().flatten() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !known(&name) {
            let path = fx.repo.mask(&root.join(&name).display().to_string());
            assert!(
                found("orphaned_worktree", &path),
                "{context}: doctor misses {path}:\n{doctor}"
            );
            leftovers.push("worktree".to_string());
        }
    }
    leftovers
}

/// Re-runs what was interrupted until every run is where its command would have left it, and
/// checks that nothing was lost and nothing is left running.
fn recover(fx: &Fixture, command: &str, context: &str, tally: &mut Tally) {
    for id in published(fx) {
        let status = fx.status(&id);
        match status["status"].as_str().unwrap() {
            "review" | "finished" => {}
            other => {
                let resumed = fx.baton(&["resume", &id]);
                assert_eq!(
                    resumed.code, 0,
                    "{context}: resume of a {other} run: {resumed}"
                );
                assert_eq!(fx.status(&id)["status"], "review", "{context}");
                tally.add(format!("{other} run resumed to review"));
            }
        }
        if command == "finish" && fx.status(&id)["status"] == "review" {
            let finished = fx.baton(&["finish", &id]);
            assert_eq!(finished.code, 0, "{context}: finish again: {finished}");
            tally.add("finish run again to completion");
        }
        if command == "clean" {
            assert_eq!(fx.status(&id)["status"], "finished", "{context}");
            let cleaned = fx.baton(&["clean", &id]);
            assert_eq!(cleaned.code, 0, "{context}: clean again: {cleaned}");
            tally.add("clean run again to completion");
        }
    }
    if command == "clean" {
        // What a clean killed after its one rename leaves: doctor reports it (checked above) with
        // `git baton clean <id>` as the fix, applied here.
        for name in entries(fx).iter().filter(|n| n.starts_with(".clean-")) {
            let id = name.trim_start_matches(".clean-");
            let finished = fx.baton(&["clean", id]);
            assert_eq!(finished.code, 0, "{context}: {finished}");
            tally.add("half-removed run finished by `git baton clean <id>`, as doctor says");
        }
        assert_eq!(
            entries(fx),
            Vec::<String>::new(),
            "{context}: clean left entries"
        );
    }
    check_consistent(fx, &format!("{context}, after recovery"));
    no_edit_lost(fx, context);
    nothing_running(fx, context);
}

/// Every journaled edit is in the run's worktree or, once finished or cleaned, on its branch.
fn no_edit_lost(fx: &Fixture, context: &str) {
    let journal = std::fs::read_to_string(&fx.journal).unwrap_or_default();
    for line in journal.lines() {
        let (Some(id), Some(file)) = (line.split(' ').next(), line.rsplit(' ').next()) else {
            panic!("{context}: a malformed journal line: {line}");
        };
        let content =
            if published(fx).iter().any(|p| p == id) && fx.status(id)["status"] != "finished" {
                let state = fx.status(id);
                let worktree = fx.repo.unmask(state["worktree"].as_str().unwrap());
                std::fs::read_to_string(Path::new(&worktree).join(file)).unwrap_or_default()
            } else {
                fx.repo.git(["show", &format!("baton/{id}:{file}")])
            };
        assert!(
            content.lines().any(|l| l == line),
            "{context}: the edit `{line}` was lost; {file} holds:\n{content}"
        );
    }
}

/// No process of any attempt of this repository is alive: each carries `BATON_WORKTREE` with a
/// path below the repository in its environment, whatever it did to its session or group.
fn nothing_running(fx: &Fixture, context: &str) {
    let marker = format!("BATON_WORKTREE={}", fx.repo.root.display());
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let alive = attempt_processes(&marker);
        if alive.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{context}: processes of an attempt are still running: {alive:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn attempt_processes(marker: &str) -> Vec<String> {
    let mut alive = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().into_string().unwrap_or_default();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if !environ
            .split(|b| *b == 0)
            .any(|var| var.starts_with(marker.as_bytes()))
        {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.trim_start().chars().next());
        if !matches!(state, Some(Some('Z' | 'X')) | None) {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            alive.push(format!(
                "{name}: {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    alive
}

/// How long each command takes undisturbed here, to spread the kills over its whole duration.
fn durations() -> BTreeMap<&'static str, Duration> {
    // The median of three lifecycles: the first, with cold caches, is the slowest by far.
    let mut samples: BTreeMap<&'static str, Vec<Duration>> = BTreeMap::new();
    for _ in 0..3 {
        let fx = Fixture::new();
        let mut timed = |name: &'static str, args: &[&str]| {
            let start = Instant::now();
            let run = fx.baton(args);
            assert_eq!(run.code, 0, "{args:?}: {run}");
            samples.entry(name).or_default().push(start.elapsed());
            run
        };
        let id = timed("run", &["run", "plans/fix.md"]).run_id();
        timed("finish", &["finish", &id]);
        timed("clean", &["clean", &id]);
    }
    let mut durations: BTreeMap<&'static str, Duration> = samples
        .into_iter()
        .map(|(name, mut times)| {
            times.sort();
            (name, times[1])
        })
        .collect();
    durations.insert("resume", durations["run"]);
    // Two queued runs, driven two at a time.
    durations.insert("cycle", durations["run"] * 2);
    durations
}

/// The arguments of `command` in a trial, with the run it needs made in `fx`.
fn trial_args(fx: &Fixture, command: &str) -> Vec<String> {
    match command {
        "run" => vec!["run".into(), "plans/fix.md".into()],
        "resume" => vec!["resume".into(), fx.stale_run()],
        "finish" => vec!["finish".into(), fx.reviewed_run()],
        "clean" => {
            let id = fx.reviewed_run();
            let finished = fx.baton(&["finish", &id]);
            assert_eq!(finished.code, 0, "{finished}");
            vec!["clean".into(), id]
        }
        "cycle" => {
            for _ in 0..2 {
                let queued = fx.baton(&["run", "--queue", "plans/fix.md"]);
                assert_eq!(queued.code, 0, "{queued}");
            }
            ["cycle", "--once", "--jobs", "2"]
                .map(String::from)
                .to_vec()
        }
        _ => unreachable!(),
    }
}

/// Until no run's lock is held (at most [`LIVENESS`]).
fn until_no_run_is_driven(fx: &Fixture, context: &str) {
    let deadline = Instant::now() + LIVENESS;
    loop {
        let driven: Vec<String> = published(fx)
            .into_iter()
            .filter(|id| !fx.status(id)["lock"].is_null())
            .collect();
        if driven.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{context}: runs {driven:?} are still driven"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One random kill of `command`, then the checks and the recovery.
fn random_trial(command: &str, window: Duration, rng: &mut Rng, tally: &mut Tally) {
    let fx = Fixture::new();
    let args = trial_args(&fx, command);
    let delay = Duration::from_micros(rng.below(window.as_micros() as u64));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = fx.spawn(&args, &[]);
    std::thread::sleep(delay);
    kill_9(&mut child);
    let run = fx.wait(child);
    let context = format!("{command} killed after {delay:?}");
    if command == "cycle" {
        // The resumes a cycle started are commands of their own, in process groups of their
        // own: they drive their runs to the end without it.
        until_no_run_is_driven(&fx, &context);
    }
    let outcome = match run.code {
        -1 if command == "run" && published(&fx).is_empty() => "killed during creation",
        -1 => "killed",
        0 => "done before the kill",
        _ => panic!("{context}: {run}"),
    };
    tally.add(format!("{command:<6} at a random moment: {outcome}"));
    for leftover in check_consistent(&fx, &context) {
        tally.add(format!(
            "{command:<6} at a random moment: left a {leftover} (doctor reports it)"
        ));
    }
    recover(&fx, command, &context, tally);
}

/// `command` failing, or killed, at one of its injection points: what it leaves is consistent
/// and reported, a failure of `run` rolls back completely, `finish` leaves the run in `review`
/// until the RunState says otherwise, and `clean` leaves a removal `git baton clean <id>`
/// finishes; then the recovery completes the command.
fn point_trial(command: &str, point: &str, kill: bool, tally: &mut Tally) {
    let fx = Fixture::new();
    let args = trial_args(&fx, command);
    let value = if kill {
        format!("{point}:kill")
    } else {
        point.to_string()
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = fx.spawn(&args, &[("GIT_BATON_FAIL_AT", &value)]);
    let run = fx.wait(child);
    let context = format!("{command} with GIT_BATON_FAIL_AT={value}");
    if kill {
        assert_eq!(run.code, -1, "{context}: {run}");
    } else {
        assert_eq!(run.code, 2, "{context}: {run}");
        assert!(run.stderr.contains("injected failure"), "{context}: {run}");
    }
    match command {
        "run" => assert!(published(&fx).is_empty(), "{context}: a run was published"),
        // Every point of `finish` is before its RunState is saved.
        "finish" => assert_eq!(fx.status(args[1])["status"], "review", "{context}"),
        // Every point of `clean` is after its one rename.
        _ => {
            assert!(
                published(&fx).is_empty(),
                "{context}: the run is still listed"
            );
            assert_eq!(entries(&fx), [format!(".clean-{}", args[1])], "{context}");
        }
    }
    let leftovers = check_consistent(&fx, &context);
    let shown = format!("{command:<6} {point:<16}");
    if command == "finish" {
        assert!(leftovers.is_empty(), "{context}: left {leftovers:?}");
    }
    if kill {
        tally.add(if leftovers.is_empty() {
            format!("kill -9 at {shown}: left nothing")
        } else {
            format!(
                "kill -9 at {shown}: left {} (doctor reports it)",
                leftovers.join(", ")
            )
        });
    } else if command == "run" {
        assert!(
            leftovers.is_empty(),
            "{context}: the rollback left {leftovers:?}"
        );
        assert_eq!(
            fx.repo
                .git(["worktree", "list", "--porcelain"])
                .matches("worktree ")
                .count(),
            1
        );
        tally.add(format!("failure at {shown}: rolled back completely"));
    } else {
        tally.add(format!("failure at {shown}: exit 2, nothing lost"));
    }
    recover(&fx, command, &context, tally);
}

/// The check for stray processes sees what it looks for: a process carrying the marker.
fn detector_works() {
    let marker = "BATON_WORKTREE=/nonexistent/crash-consistency-self-test";
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .env("BATON_WORKTREE", &marker["BATON_WORKTREE=".len()..])
        .spawn()
        .unwrap();
    // Until the child has exec'd, /proc shows the environment it was forked with.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut seen = attempt_processes(marker);
    while seen.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        seen = attempt_processes(marker);
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(seen.len(), 1, "the process detector is blind: {seen:?}");
}

#[test]
fn kill_9_anywhere_leaves_a_consistent_recoverable_repository() {
    detector_works();
    let (mut rng, seed) = Rng::seeded("crash loop");
    let durations = durations();
    let mut tally = Tally::default();
    let trials = trials();
    for command in COMMANDS {
        for _ in 0..trials {
            random_trial(command, durations[command], &mut rng, &mut tally);
        }
    }
    for (command, point) in POINTS {
        point_trial(command, point, false, &mut tally);
        point_trial(command, point, true, &mut tally);
    }
    let mut report = format!(
        "crash loop (CRASH_SEED={seed}): {} trials: {trials} random kills of each of {}, and a \
         failure and a kill -9 at each injection point ({}); undisturbed durations {:?}\n",
        trials * COMMANDS.len() + 2 * POINTS.len(),
        COMMANDS.join(", "),
        POINTS.map(|(_, point)| point).join(", "),
        durations
    );
    for (what, count) in &tally.0 {
        report.push_str(&format!("  {count:>4}  {what}\n"));
    }
    eprint!("{report}");
}
