//! End-to-end tests of runs: `git baton run`, `resume`, `status`, `list`, `log`, `stop` and
//! `pause`, through the real binary and real processes. `testdata/agents/fake-agent.sh` plays
//! every actor; its verbs compose each scenario (edit a document, write evidence, sleep, exit
//! with a rate-limit code …).
//!
//! Every repository has three committed documents, `docs/{a,b,c}.md`, a plan `plans/fix.md`
//! that targets all three, and a `.baton.yml` built per test. Agents run in the run's own
//! worktree, so `edit docs/a.md x` edits the worktree's copy.
//!
//! Run ids, commit ids, timestamps and durations differ from one run to the next: snapshots show
//! them by name via [`normalize`], or the tests assert on `status --json` fields instead. Tests
//! that race a second process or send signals wait for a pid file the agent writes, and every
//! wait has a generous deadline, so that a hang fails the test instead of hanging the suite.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use insta::assert_snapshot;
use serde_json::Value;

use crate::support::{Run, TestRepo};

const AGENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/agents/fake-agent.sh");
/// Long enough for any sane machine, short enough that a hang fails fast.
const LIVENESS: Duration = Duration::from_secs(30);

const PLAN: &str = "\
---
title: Fix the grading documents
targets:
  - docs/a.md
  - docs/b.md
  - docs/c.md
---
# Fix the three grading documents

State the new grading rule in each of them.
";

const PIPELINE: &str = "\
pipeline:
  - { stage: executor, actor: worker, gate: coverage }
  - { stage: reporter, actor: writer }
";

/// Evidence with usage only: every target changed, so no entry is needed.
const USAGE: &str = r#"{"usage": {"input_tokens": 1200, "output_tokens": 340, "cost_usd": 0.25, "model": "fake-1"}}"#;

// ---------------------------------------------------------------------------------------------
// Fixtures

/// One actor of `.baton.yml`: `argv` as a flow sequence of JSON strings (valid YAML), plus
/// `extra` lines (already indented by four spaces) such as `rate_limit` or `timeout`.
fn actor_with(name: &str, argv: &[&str], extra: &str) -> String {
    let argv: Vec<String> = argv
        .iter()
        .map(|a| serde_json::to_string(a).unwrap())
        .collect();
    format!("  {name}:\n    command: [{}]\n{extra}", argv.join(", "))
}

/// An actor that is the fake agent performing `verbs`.
fn agent(name: &str, verbs: &[&str]) -> String {
    agent_with(name, verbs, "")
}

fn agent_with(name: &str, verbs: &[&str], extra: &str) -> String {
    let mut argv = vec![AGENT];
    argv.extend(verbs);
    actor_with(name, &argv, extra)
}

/// An actor running a shell script (for what the fake agent has no verb for).
fn shell(name: &str, script: &str) -> String {
    actor_with(name, &["sh", "-c", script], "")
}

/// The agent that does the whole plan: edits all three documents and reports usage.
fn worker() -> String {
    agent(
        "worker",
        &[
            "say",
            "working on the grading documents",
            "edit",
            "docs/a.md",
            "rule: grade A",
            "edit",
            "docs/b.md",
            "rule: grade B",
            "edit",
            "docs/c.md",
            "rule: grade C",
            "evidence",
            USAGE,
        ],
    )
}

fn writer() -> String {
    agent("writer", &["say", "report written"])
}

/// `.baton.yml` with `actors` and `tail` (the pipeline, `coverage:` …).
fn config(actors: &[String], tail: &str) -> String {
    format!("actors:\n{}{tail}", actors.concat())
}

/// A repository with the three documents, `plans/fix.md` and `.baton.yml` committed on `main`.
fn repo_with(baton_yml: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("docs/a.md", "# A\n\nThe old rule.\n");
    repo.write("docs/b.md", "# B\n\nThe old rule.\n");
    repo.write("docs/c.md", "# C\n\nThe old rule.\n");
    repo.write("plans/fix.md", PLAN);
    repo.write(".baton.yml", baton_yml);
    repo.commit_all("base");
    repo
}

/// The standard pipeline with `worker` as executor and `writer` as reporter, plus `actors`.
fn standard_repo(actors: &[String]) -> TestRepo {
    let mut all = vec![worker(), writer()];
    all.extend(actors.iter().cloned());
    repo_with(&config(&all, PIPELINE))
}

/// A pipeline whose executor is `executor` (an actor name), reporter `writer`, plus `tail`.
fn pipeline_with(executor: &str, tail: &str) -> String {
    format!(
        "pipeline:\n  - {{ stage: executor, actor: {executor}, gate: coverage }}\n  - {{ stage: reporter, actor: writer }}\n{tail}"
    )
}

/// A directory outside the repository for what agents write besides their work (pid files,
/// environment dumps), so that writing it does not change the worktree. It must exist before the
/// repository, whose configuration names paths in it.
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("baton-scratch")
        .tempdir()
        .unwrap()
}

fn outside(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

/// The run's worktree as `status --json` names it (the harness shows the temporary directory
/// as `$TMP`).
fn worktree_of(repo: &TestRepo, state: &Value) -> PathBuf {
    let shown = state["worktree"].as_str().unwrap();
    let rel = shown
        .strip_prefix("$TMP/")
        .unwrap_or_else(|| panic!("the worktree is not in the test's directory: {shown}"));
    repo.tmp().join(rel)
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

// ---------------------------------------------------------------------------------------------
// Looking at runs

/// The run id from the first line of stderr, which must be `run <id>`.
fn run_id(run: &Run) -> String {
    let first = run.stderr.lines().next().unwrap_or_default();
    let id = first
        .strip_prefix("run ")
        .unwrap_or_else(|| panic!("the first stderr line is not `run <id>`:\n{run}"));
    assert!(
        id.len() == 10 && id.chars().all(|c| c.is_ascii_alphanumeric()),
        "not a run id: {id:?}"
    );
    id.to_string()
}

fn runs_dir(repo: &TestRepo) -> PathBuf {
    repo.path(".git/baton/runs")
}

fn run_dir(repo: &TestRepo, id: &str) -> PathBuf {
    runs_dir(repo).join(id)
}

/// Every entry of the runs directory, hidden ones included.
fn run_entries(repo: &TestRepo) -> Vec<String> {
    let mut names: Vec<String> = match std::fs::read_dir(runs_dir(repo)) {
        Ok(entries) => entries
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

/// `status --json <id>`, which must succeed.
fn status(repo: &TestRepo, id: &str) -> Value {
    let run = repo.baton(["status", "--json", id]);
    assert_eq!(run.code, 0, "{run}");
    run.json()
}

fn stage<'a>(state: &'a Value, name: &str) -> &'a Value {
    state["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no stage {name} in {state:#}"))
}

fn attempts<'a>(state: &'a Value, name: &str) -> &'a Vec<Value> {
    stage(state, name)["attempts"].as_array().unwrap()
}

/// A field of every attempt of a stage, for one-line assertions.
fn attempt_field(state: &Value, name: &str, field: &str) -> Vec<Value> {
    attempts(state, name)
        .iter()
        .map(|a| a[field].clone())
        .collect()
}

/// `(target, status)` of each target of the run's coverage report.
fn coverage_rows(state: &Value) -> Vec<(String, String)> {
    state["coverage"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["target"].as_str().unwrap().to_string(),
                t["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn branches(repo: &TestRepo) -> String {
    repo.git(["branch", "--list", "baton/*"])
}

/// The paths of the registered worktrees.
fn worktrees(repo: &TestRepo) -> Vec<String> {
    repo.git(["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(String::from)
        .collect()
}

fn base(repo: &TestRepo) -> String {
    repo.git(["rev-parse", "HEAD"]).trim().to_string()
}

/// Replaces what differs between runs: the run id, the base commit, RFC 3339 timestamps (and
/// the minute-precision form of `list`) and durations. A duration and the spaces before it
/// become `<DUR>` right-aligned in the same width, so that table columns stay aligned.
fn normalize(text: &str, id: &str, base: &str) -> String {
    let mut text = text.to_string();
    if !id.is_empty() {
        text = text.replace(id, "<ID>");
    }
    if !base.is_empty() {
        text = text.replace(base, "<BASE>").replace(&base[..12], "<BASE>");
    }
    let text = replace_timestamps(&text);
    text.split('\n')
        .map(replace_durations)
        .collect::<Vec<_>>()
        .join("\n")
}

fn replace_durations(line: &str) -> String {
    let mut line = line.to_string();
    // Tokens with their byte ranges, replaced from the end so earlier ranges stay valid.
    let mut tokens = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                tokens.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    for (s, e) in tokens.into_iter().rev() {
        let token = &line[s..e];
        let core = token.trim_end_matches([')', ',']);
        if !is_duration(core) {
            continue;
        }
        let end = s + core.len();
        let from = line[..s].trim_end_matches(' ').len();
        let width = end - from;
        if width >= 6 {
            line.replace_range(from..end, &format!("{:>width$}", "<DUR>"));
        } else {
            line.replace_range(s..end, "<DUR>");
        }
    }
    line
}

/// `45ms`, `2.3s`.
fn is_duration(token: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(n) = token.strip_suffix("ms") {
        return digits(n);
    }
    match token.strip_suffix('s').and_then(|n| n.split_once('.')) {
        Some((a, b)) => digits(a) && digits(b),
        None => false,
    }
}

/// `2026-01-01T00:00:00.123Z` and `2026-01-01 00:00` become `<TIME>`.
fn replace_timestamps(text: &str) -> String {
    let b = text.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let date = (0..4).all(|k| digit(i + k))
            && at(i + 4, b'-')
            && digit(i + 5)
            && digit(i + 6)
            && at(i + 7, b'-')
            && digit(i + 8)
            && digit(i + 9)
            && (at(i + 10, b'T') || at(i + 10, b' '))
            && digit(i + 11)
            && digit(i + 12)
            && at(i + 13, b':')
            && digit(i + 14)
            && digit(i + 15);
        if date {
            let mut j = i + 16;
            if at(j, b':') && digit(j + 1) && digit(j + 2) {
                j += 3;
                if at(j, b'.') {
                    j += 1;
                    while digit(j) {
                        j += 1;
                    }
                }
                if at(j, b'Z') {
                    j += 1;
                }
            }
            out.push_str("<TIME>");
            i = j;
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn shown(run: &Run, id: &str, base: &str) -> String {
    normalize(run.to_string().trim_end(), id, base)
}

// ---------------------------------------------------------------------------------------------
// Processes

/// Waits until `path` holds a complete line (the agent writes its pid with a trailing newline)
/// and returns it trimmed.
fn wait_for_line(path: &Path) -> String {
    let deadline = Instant::now() + LIVENESS;
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text.trim().to_string();
        }
        assert!(
            Instant::now() < deadline,
            "{} did not appear within {LIVENESS:?}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Sends `signal` (`INT`, `TERM`, `KILL`, `0`) to `target` (a pid, or `-PGID` for a group).
fn kill(signal: &str, target: &str) -> bool {
    Command::new("kill")
        .arg(format!("-{signal}"))
        .arg("--")
        .arg(target)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success()
}

/// Whether any process of the group led by `pgid` is still alive. Zombies do not count: an
/// orphan killed with its group waits for init (which in a container may be slow) to reap it.
fn group_alive(pgid: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().any(|entry| {
        let path = entry.unwrap().path().join("stat");
        let Ok(stat) = std::fs::read_to_string(path) else {
            return false;
        };
        // `pid (comm) state ppid pgrp …`; comm may contain spaces and parentheses.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            return false;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        matches!(fields.as_slice(), [state, _ppid, pgrp, ..] if *pgrp == pgid && *state != "Z" && *state != "X")
    })
}

/// Waits (boundedly) until the group led by `pgid` is gone, and says whether it went.
fn group_gone_within(pgid: &str, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while group_alive(pgid) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// The one published run of the repository, once there is one.
fn wait_for_run(repo: &TestRepo) -> String {
    let deadline = Instant::now() + LIVENESS;
    loop {
        let ids: Vec<String> = run_entries(repo)
            .into_iter()
            .filter(|n| !n.starts_with('.') && run_dir(repo, n).join("state.json").is_file())
            .collect();
        if let [id] = ids.as_slice() {
            return id.clone();
        }
        assert!(ids.len() < 2, "more than one run: {ids:?}");
        assert!(Instant::now() < deadline, "no run appeared");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn spawn(repo: &TestRepo, args: &[&str]) -> Child {
    repo.baton_spawn(&repo.root, args, &[])
}

fn wait(repo: &TestRepo, child: Child) -> Run {
    repo.baton_wait(child, LIVENESS)
}

// ---------------------------------------------------------------------------------------------
// 1. A full run

/// The happy path: the executor does all the work, the gate passes, the reporter runs, the run
/// waits for review. Every field scripts rely on is there, and the main worktree is untouched.
#[test]
fn full_run_reaches_review() {
    let repo = standard_repo(&[]);
    let base = base(&repo);
    let run = repo.baton(["run", "plans/fix.md"]);
    let id = run_id(&run);
    assert_eq!(run.code, 0, "{run}");
    assert_snapshot!(shown(&run, &id, &base), @r#"
        exit: 0
        --- stdout
        working on the grading documents
        report written
        --- stderr
        run <ID>
        worktree $TMP/repo/.baton/worktrees/<ID>

        run <ID>: review
          plan      plans/fix.md (fix) — Fix the grading documents
          base      <BASE> (HEAD)
          branch    baton/<ID>
          worktree  $TMP/repo/.baton/worktrees/<ID>

          STAGE      STATUS       ACTOR      ATTEMPTS   DURATION       TOKENS      COST
          executor   succeeded    worker            1      <DUR>         1540     $0.25
          reporter   succeeded    writer            1      <DUR>            -         -
          total: 1200 input + 340 output tokens, $0.25 (at least: 1 attempt(s) reported no usage)

          coverage: passed
            changed    docs/a.md  docs/a.md
            changed    docs/b.md  docs/b.md
            changed    docs/c.md  docs/c.md

          next: git baton review <ID>, then `git baton finish <ID>` and merge branch baton/<ID>
        "#);

    let state = status(&repo, &id);
    let worktree = repo.path(&format!(".baton/worktrees/{id}"));
    assert_eq!(state["run_id"], id.as_str());
    assert_eq!(state["status"], "review");
    assert_eq!(state["stale"], false);
    assert_eq!(state["plan"]["id"], "fix");
    assert_eq!(state["plan"]["path"], "plans/fix.md");
    assert_eq!(
        state["plan"]["targets"],
        serde_json::json!(["docs/a.md", "docs/b.md", "docs/c.md"])
    );
    assert_eq!(state["base"], base.as_str());
    assert_eq!(state["branch"], format!("baton/{id}").as_str());
    assert_eq!(
        state["worktree"],
        format!("$TMP/repo/.baton/worktrees/{id}").as_str()
    );
    assert_eq!(worktree_of(&repo, &state), worktree);
    assert_eq!(state["current_stage"], Value::Null);
    let names: Vec<&str> = state["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["executor", "reporter"]);
    for (name, actor) in [("executor", "worker"), ("reporter", "writer")] {
        let s = stage(&state, name);
        assert_eq!(s["status"], "succeeded", "{name}");
        assert_eq!(s["actor"], actor, "{name}");
        let [a] = attempts(&state, name).as_slice() else {
            panic!("one attempt expected: {s:#}")
        };
        assert_eq!(a["n"], 1);
        assert_eq!(a["actor"], actor);
        assert_eq!(a["outcome"], "succeeded");
        assert_eq!(a["resumed"], false);
        assert_eq!(a["exit_code"], 0);
        assert!(a["duration_ms"].is_u64(), "{a:#}");
        let started: jiff::Timestamp = a["started_at"].as_str().unwrap().parse().unwrap();
        let ended: jiff::Timestamp = a["ended_at"].as_str().unwrap().parse().unwrap();
        assert!(started <= ended, "{a:#}");
    }
    assert_eq!(
        attempts(&state, "executor")[0]["usage"]["input_tokens"],
        1200
    );
    assert_eq!(state["coverage"]["verified"], true);
    assert_eq!(state["coverage"]["passed"], true);
    assert_eq!(
        coverage_rows(&state),
        [
            ("docs/a.md".to_string(), "changed".to_string()),
            ("docs/b.md".to_string(), "changed".to_string()),
            ("docs/c.md".to_string(), "changed".to_string()),
        ]
    );
    assert_eq!(state["coverage"]["targets"][0]["paths"][0], "docs/a.md");
    assert_eq!(state["usage"]["input_tokens"], 1200);
    assert_eq!(state["usage"]["output_tokens"], 340);
    assert_eq!(state["usage"]["cost_usd"], 0.25);
    assert_eq!(state["usage"]["attempts_without_usage"], 1);
    assert_eq!(state["error"], Value::Null);

    // The work is in the run's worktree, on its branch; the main worktree is untouched.
    assert!(text(&worktree.join("docs/a.md")).contains("rule: grade A"));
    assert!(!text(&repo.path("docs/a.md")).contains("rule: grade A"));
    assert_eq!(repo.git(["status", "--porcelain"]), "");
    assert_eq!(
        repo.git_in(&worktree, ["rev-parse", "--abbrev-ref", "HEAD"])
            .trim(),
        format!("baton/{id}")
    );

    let dir = run_dir(&repo, &id);
    let result: Value = serde_json::from_str(&text(&dir.join("result.json"))).unwrap();
    assert_eq!(result["run_id"], id.as_str());
    assert_eq!(result["status"], "review");
    assert_eq!(result["coverage"]["passed"], true);
    assert!(text(&dir.join("result.md")).contains("| `docs/a.md` | changed |"));
    assert_eq!(text(&dir.join("plan.md")), PLAN, "the plan snapshot");

    let list = repo.baton(["list"]);
    assert_snapshot!(shown(&list, &id, &base), @r"
    exit: 0
    --- stdout
    RUN         STATUS  STAGE  PLAN          CREATED
    <ID>  review  -      plans/fix.md  <TIME>
    ");
    let listed = repo.baton(["list", "--json"]).json();
    assert_eq!(listed[0]["run_id"], id.as_str());

    let log = repo.baton(["log", &id, "--stage", "executor"]);
    assert_snapshot!(shown(&log, &id, &base), @r"
    exit: 0
    --- stdout
    == run <ID>, stage executor, attempt 1 (succeeded, actor worker, started <TIME>)
    -- stdout
    working on the grading documents
    -- stderr
    (empty)
    ");
    // A unique prefix names the run too.
    let log = repo.baton(["log", &id[..8]]);
    assert_eq!(log.code, 0, "{log}");
    assert!(log.stdout.contains("report written"), "{log}");
}

// ---------------------------------------------------------------------------------------------
// 2–4. Stopping at boundaries, and stopping now

/// `--stop-after executor` pauses the run once the executor succeeded; `resume` runs the
/// reporter (a first attempt of that stage, not a resumed one) and the run reaches review.
#[test]
fn stop_after_pauses_then_resume_reaches_review() {
    let repo = standard_repo(&[]);
    let run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let id = run_id(&run);
    assert_eq!(run.code, 0, "{run}");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "paused");
    assert_eq!(state["current_stage"], "reporter");
    assert_eq!(stage(&state, "executor")["status"], "succeeded");
    assert_eq!(stage(&state, "reporter")["status"], "pending");
    assert!(attempts(&state, "reporter").is_empty());
    assert_eq!(state["policy"]["stop_after"], "executor");

    let resumed = repo.baton(["resume", &id]);
    assert_eq!(resumed.code, 0, "{resumed}");
    assert_eq!(run_id(&resumed), id);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "review");
    assert_eq!(state["current_stage"], Value::Null);
    assert_eq!(
        attempts(&state, "executor").len(),
        1,
        "the executor is not re-run"
    );
    assert_eq!(attempt_field(&state, "reporter", "resumed"), [false]);
    assert_eq!(attempt_field(&state, "reporter", "outcome"), ["succeeded"]);
}

/// `pause` from another process while the executor works: the stage finishes, then the run
/// stops as paused (exit 0) before the reporter.
#[test]
fn pause_from_another_process_stops_at_the_stage_boundary() {
    let scratch_dir = scratch();
    let pid_file = outside(&scratch_dir, "agent.pid");
    let slow = agent(
        "slow",
        &[
            "pid",
            pid_file.to_str().unwrap(),
            "sleep",
            "1",
            "edit",
            "docs/a.md",
            "a",
            "edit",
            "docs/b.md",
            "b",
            "edit",
            "docs/c.md",
            "c",
        ],
    );
    let repo = repo_with(&config(&[slow, writer()], &pipeline_with("slow", "")));
    let child = spawn(&repo, &["run", "plans/fix.md"]);
    wait_for_line(&pid_file);
    let id = wait_for_run(&repo);
    let pause = repo.baton(["pause", &id]);
    assert_eq!(pause.code, 0, "{pause}");
    assert_eq!(
        pause.stdout.replace(&id, "<ID>"),
        "run <ID> will pause after its current stage\n"
    );

    let run = wait(&repo, child);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run_id(&run), id);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "paused");
    assert_eq!(state["current_stage"], "reporter");
    assert_eq!(attempt_field(&state, "executor", "outcome"), ["succeeded"]);
    assert!(attempts(&state, "reporter").is_empty(), "{state:#}");
    assert!(
        !run_dir(&repo, &id).join("pause.request").exists(),
        "the request is consumed"
    );
}

/// `stop` from another process while the agent sleeps: the agent is stopped, the attempt is
/// recorded as interrupted (manual), its logs and the worktree's changes stay. git-baton itself
/// got no signal, so it exits 1 (the run ended in a state other than review), not 130.
#[test]
fn stop_from_another_process_interrupts_the_attempt() {
    let scratch_dir = scratch();
    let pid_file = outside(&scratch_dir, "agent.pid");
    let slow = agent(
        "slow",
        &[
            "edit",
            "docs/a.md",
            "half done",
            "say",
            "before the stop",
            "pid",
            pid_file.to_str().unwrap(),
            "sleep",
            "2",
            "say",
            "after the sleep",
        ],
    );
    let repo = repo_with(&config(&[slow, writer()], &pipeline_with("slow", "")));
    let child = spawn(&repo, &["run", "plans/fix.md"]);
    let agent_pid = wait_for_line(&pid_file);
    let id = wait_for_run(&repo);
    let stop = repo.baton(["stop", &id]);
    assert_eq!(stop.code, 0, "{stop}");
    assert_eq!(
        stop.stdout.replace(&id, "<ID>"),
        "stopped run <ID>: interrupted\n"
    );
    let run = wait(&repo, child);
    assert_eq!(run.code, 1, "{run}");
    assert!(group_gone_within(&agent_pid, Duration::from_secs(5)));

    let state = status(&repo, &id);
    assert_eq!(state["status"], "interrupted");
    assert_eq!(state["stale"], false);
    assert_eq!(state["current_stage"], "executor");
    assert_eq!(
        attempt_field(&state, "executor", "outcome"),
        ["interrupted"]
    );
    assert_eq!(attempt_field(&state, "executor", "cause"), ["manual"]);
    assert_eq!(state["error"]["kind"], "interrupted");
    assert_eq!(state["error"]["stage"], "executor");
    let dir = run_dir(&repo, &id).join("attempts/executor-1");
    assert_eq!(text(&dir.join("stdout.log")), "before the stop\n");
    assert!(dir.join("prompt.md").is_file());
    assert!(text(&worktree_of(&repo, &state).join("docs/a.md")).contains("half done"));
    assert!(!run_dir(&repo, &id).join("stop.request").exists());

    // Nothing drives it any more: a second stop says so.
    let again = repo.baton(["stop", &id]);
    assert_eq!(
        shown(&again, &id, ""),
        "exit: 2\n--- stderr\nerror: run <ID> is not being driven by any process (status: interrupted)\nhint: see `git baton status <ID>`"
    );
}

// ---------------------------------------------------------------------------------------------
// 5–7. Signals and crashes

/// SIGINT (and SIGTERM) to git-baton mid-stage: exit 130, the attempt is interrupted (manual),
/// its output and the worktree's edits are kept, and the agent's whole process group is gone.
#[test]
fn a_signal_to_git_baton_interrupts_the_attempt_and_exits_130() {
    for signal in ["INT", "TERM"] {
        let scratch_dir = scratch();
        let pid_file = outside(&scratch_dir, "agent.pid");
        let slow = agent(
            "slow",
            &[
                "edit",
                "docs/a.md",
                "edited before the interrupt",
                "say",
                "partial work",
                "pid",
                pid_file.to_str().unwrap(),
                "sleep",
                "2",
            ],
        );
        let repo = repo_with(&config(&[slow, writer()], &pipeline_with("slow", "")));
        let child = spawn(&repo, &["run", "plans/fix.md"]);
        let baton_pid = child.id().to_string();
        let agent_pid = wait_for_line(&pid_file);
        let id = wait_for_run(&repo);
        assert!(kill(signal, &baton_pid));
        let run = wait(&repo, child);
        assert_eq!(run.code, 130, "SIG{signal}: {run}");
        assert_eq!(run_id(&run), id);
        assert!(
            group_gone_within(&agent_pid, Duration::from_secs(2)),
            "SIG{signal}: the agent's process group outlived git-baton"
        );

        let state = status(&repo, &id);
        assert_eq!(state["status"], "interrupted", "SIG{signal}");
        assert_eq!(state["stale"], false);
        assert_eq!(
            attempt_field(&state, "executor", "outcome"),
            ["interrupted"]
        );
        assert_eq!(attempt_field(&state, "executor", "cause"), ["manual"]);
        assert!(attempts(&state, "reporter").is_empty());
        let dir = run_dir(&repo, &id).join("attempts/executor-1");
        assert_eq!(text(&dir.join("stdout.log")), "partial work\n");
        let worktree = worktree_of(&repo, &state);
        assert!(text(&worktree.join("docs/a.md")).contains("edited before the interrupt"));
    }
}

/// `kill -9` of git-baton mid-stage: the RunState on disk is intact and says `running`, status
/// shows it stale (no process holds the lock), and `resume` records the old attempt as
/// interrupted by a crash, then runs a resumed attempt that goes through the gate.
#[test]
fn kill_9_leaves_a_stale_run_that_resume_recovers() {
    let scratch_dir = scratch();
    let pid_file = outside(&scratch_dir, "agent.pid");
    let slow = agent(
        "slow",
        &[
            "edit",
            "docs/a.md",
            "edited before the crash",
            "pid",
            pid_file.to_str().unwrap(),
            "sleep",
            "20",
        ],
    );
    let lazy = agent("lazy", &["say", "nothing left to do"]);
    let finisher = agent(
        "finisher",
        &["edit", "docs/b.md", "b", "edit", "docs/c.md", "c"],
    );
    let repo = repo_with(&config(
        &[slow, lazy, finisher, writer()],
        &pipeline_with("slow", ""),
    ));
    let base = base(&repo);
    let child = spawn(&repo, &["run", "plans/fix.md"]);
    let agent_pid = wait_for_line(&pid_file);
    let id = wait_for_run(&repo);
    assert!(kill("KILL", &child.id().to_string()));
    let run = wait(&repo, child);
    assert_eq!(run.code, -1, "killed by a signal: {run}");
    // The orphaned agent outlives its driver; resume must stop it before anything else runs.
    assert!(group_alive(&agent_pid), "the agent outlived git-baton");

    let raw = text(&run_dir(&repo, &id).join("state.json"));
    let parsed: git_baton::state::RunState =
        serde_json::from_str(&raw).expect("state.json is a whole RunState");
    assert_eq!(parsed.status, git_baton::state::RunStatus::Running);

    let state = status(&repo, &id);
    assert_eq!(state["status"], "running");
    assert_eq!(state["stale"], true);
    assert_eq!(state["lock"], Value::Null);
    assert_eq!(attempt_field(&state, "executor", "outcome"), [Value::Null]);
    let human = repo.baton(["status", &id]);
    assert_snapshot!(shown(&human, &id, &base), @r"
    exit: 0
    --- stdout
    run <ID>: running (stale: no process is driving it; it crashed or was killed)
      plan      plans/fix.md (fix) — Fix the grading documents
      base      <BASE> (HEAD)
      branch    baton/<ID>
      worktree  $TMP/repo/.baton/worktrees/<ID>
      current   executor

      STAGE      STATUS       ACTOR      ATTEMPTS   DURATION       TOKENS      COST
      executor   running      slow              1          -            -         -
      reporter   pending      writer            0          -            -         -

      next: git baton resume <ID>   (records the crash, then re-runs the stage)
    ");
    let list = repo.baton(["list"]);
    assert!(list.stdout.contains("running (stale)"), "{list}");

    // The resumed attempt is gated: a lazy actor that changes nothing is blocked.
    let resumed = repo.baton(["resume", &id, "--actor", "executor=lazy"]);
    assert_eq!(resumed.code, 1, "{resumed}");
    assert!(
        resumed
            .stderr
            .contains("process(es) the crashed attempt left running"),
        "{resumed}"
    );
    assert!(group_gone_within(&agent_pid, Duration::from_secs(5)));
    assert!(
        resumed
            .stderr
            .contains("note: the previous process driving this run died"),
        "{resumed}"
    );
    let state = status(&repo, &id);
    assert_eq!(state["status"], "blocked");
    assert_eq!(
        attempt_field(&state, "executor", "outcome"),
        ["interrupted", "blocked"]
    );
    assert_eq!(
        attempt_field(&state, "executor", "cause"),
        [Value::from("crash"), Value::Null]
    );
    assert_eq!(attempt_field(&state, "executor", "resumed"), [false, true]);
    assert_eq!(attempt_field(&state, "executor", "actor"), ["slow", "lazy"]);
    assert_eq!(attempts(&state, "executor")[1]["coverage"]["passed"], false);
    let worktree = worktree_of(&repo, &state);
    assert!(text(&worktree.join("docs/a.md")).contains("edited before the crash"));

    // And one that finishes the work passes, and the run continues to review.
    let resumed = repo.baton(["resume", &id, "--actor", "executor=finisher"]);
    assert_eq!(resumed.code, 0, "{resumed}");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "review");
    assert_eq!(
        attempt_field(&state, "executor", "outcome"),
        ["interrupted", "blocked", "succeeded"]
    );
    assert_eq!(state["coverage"]["passed"], true);
}

/// A cheap random number without a dependency.
fn random_below(n: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos(),
    );
    h.finish() % n
}

/// `kill -9` of git-baton at random moments of a short run (creation, either stage, the end),
/// over and over: whatever was killed when, every `state.json` on disk parses as a whole
/// RunState, `list` and `status` work, and every published run can be resumed to review.
/// Leftovers of runs killed during creation (hidden staging directories, their branches and
/// worktrees) and `.tmp-*` files are counted and printed, not failed on.
#[test]
fn kill_9_at_random_moments_never_leaves_a_half_written_state() {
    let quick = agent(
        "quick",
        &[
            "edit",
            "docs/a.md",
            "a",
            "edit",
            "docs/b.md",
            "b",
            "edit",
            "docs/c.md",
            "c",
        ],
    );
    let repo = repo_with(&config(&[quick, writer()], &pipeline_with("quick", "")));
    let mut statuses: Vec<String> = Vec::new();
    for _ in 0..30 {
        let child = spawn(&repo, &["run", "plans/fix.md"]);
        std::thread::sleep(Duration::from_millis(random_below(400)));
        kill("KILL", &child.id().to_string());
        let run = wait(&repo, child);
        assert!(run.code == -1 || run.code == 0, "{run}");
        for name in run_entries(&repo)
            .into_iter()
            .filter(|n| !n.starts_with('.'))
        {
            let path = run_dir(&repo, &name).join("state.json");
            let raw = std::fs::read(&path).unwrap_or_else(|e| {
                panic!("{}: {e} (a published run without a state)", path.display())
            });
            let state: git_baton::state::RunState =
                serde_json::from_slice(&raw).unwrap_or_else(|e| {
                    panic!(
                        "{} is not a RunState ({e}):\n{}",
                        path.display(),
                        String::from_utf8_lossy(&raw)
                    )
                });
            assert_eq!(state.run_id, name);
        }
        let list = repo.baton(["list"]);
        assert_eq!(list.code, 0, "{list}");
        assert!(!list.stderr.contains("warning"), "{list}");
    }
    let mut hidden = Vec::new();
    let mut tmp_files = Vec::new();
    for name in run_entries(&repo) {
        if name.starts_with('.') {
            hidden.push(name);
            continue;
        }
        let state = status(&repo, &name);
        statuses.push(format!(
            "{}{}",
            state["status"].as_str().unwrap(),
            if state["stale"] == true {
                " (stale)"
            } else {
                ""
            }
        ));
        for entry in std::fs::read_dir(run_dir(&repo, &name)).unwrap() {
            let entry = entry.unwrap().file_name().into_string().unwrap();
            if entry.starts_with(".tmp-") {
                tmp_files.push(format!("{name}/{entry}"));
            }
        }
    }
    statuses.sort();
    for name in run_entries(&repo)
        .into_iter()
        .filter(|n| !n.starts_with('.'))
    {
        let state = status(&repo, &name);
        if state["status"] == "review" {
            continue;
        }
        let resumed = repo.baton(["resume", &name]);
        assert_eq!(resumed.code, 0, "{}: {resumed}", state["status"]);
        assert_eq!(status(&repo, &name)["status"], "review");
    }
    eprintln!(
        "kill -9 loop: published runs: {statuses:?}; hidden entries left under runs/: {hidden:?}; \
         .tmp-* files left: {tmp_files:?}; baton branches: {}",
        branches(&repo).lines().count()
    );
}

// ---------------------------------------------------------------------------------------------
// 8–9. Concurrency

/// While a process drives a run, `resume` from another process is refused with exit 3 and
/// names the holder; `status` shows who drives it.
#[test]
fn a_second_process_cannot_drive_a_busy_run() {
    let scratch_dir = scratch();
    let pid_file = outside(&scratch_dir, "agent.pid");
    let slow = agent(
        "slow",
        &[
            "pid",
            pid_file.to_str().unwrap(),
            "sleep",
            "1.5",
            "edit",
            "docs/a.md",
            "a",
            "edit",
            "docs/b.md",
            "b",
            "edit",
            "docs/c.md",
            "c",
        ],
    );
    let repo = repo_with(&config(&[slow, writer()], &pipeline_with("slow", "")));
    let child = spawn(&repo, &["run", "plans/fix.md"]);
    let pid = child.id();
    wait_for_line(&pid_file);
    let id = wait_for_run(&repo);

    let busy = repo.baton(["resume", &id]);
    assert_eq!(busy.code, 3, "{busy}");
    let busy = normalize(&busy.to_string(), &id, "").replace(&format!("pid {pid} "), "pid <PID> ");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let busy = if host.is_empty() {
        busy
    } else {
        busy.replace(&format!(" on {host})"), " on <HOST>)")
    };
    assert_snapshot!(busy, @r#"
        exit: 3
        --- stderr
        run <ID>
        error: run <ID> is busy: `git baton run` (pid <PID> on <HOST>) has driven it since <TIME>
        hint: wait for it to finish, or stop it with `git baton stop <ID>`
        "#);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "running");
    assert_eq!(state["stale"], false);
    assert_eq!(state["lock"]["pid"], pid);
    assert_eq!(state["lock"]["command"], "git baton run");

    let run = wait(&repo, child);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(status(&repo, &id)["status"], "review");
}

/// Two `run --key K` at once make one run: both print its id. The same key with another plan
/// is a conflict (exit 2); with the same plan, later, it returns the run.
#[test]
fn the_same_key_from_two_processes_makes_one_run() {
    let slowish = agent(
        "slowish",
        &[
            "sleep",
            "1",
            "edit",
            "docs/a.md",
            "a",
            "edit",
            "docs/b.md",
            "b",
            "edit",
            "docs/c.md",
            "c",
        ],
    );
    let repo = repo_with(&config(&[slowish, writer()], &pipeline_with("slowish", "")));
    let first = spawn(&repo, &["run", "plans/fix.md", "--key", "ticket-42"]);
    let second = spawn(&repo, &["run", "plans/fix.md", "--key", "ticket-42"]);
    let (first, second) = (wait(&repo, first), wait(&repo, second));
    let ids = [run_id(&first), run_id(&second)];
    assert_eq!(ids[0], ids[1], "{first}\n{second}");
    let id = ids[0].clone();
    assert_eq!(
        run_entries(&repo),
        std::slice::from_ref(&id),
        "exactly one run directory"
    );
    assert_eq!(branches(&repo).lines().count(), 1);
    assert_eq!(worktrees(&repo).len(), 2, "main and the run's");

    // One created and drove it; the other found it by its key while it was being driven.
    let (creator, finder) = if first.stderr.contains("note: key") {
        (second, first)
    } else {
        (first, second)
    };
    assert_eq!(creator.code, 0, "{creator}");
    assert!(!creator.stderr.contains("note: key"), "{creator}");
    let finder_text = shown(&finder, &id, "");
    assert!(
        finder_text.starts_with(
            "exit: 3\n--- stderr\nrun <ID>\nnote: key `ticket-42` names this existing run ("
        ),
        "a run that a live process drives is busy (exit 3), whatever its status:\n{finder_text}"
    );

    // Later, the same key and plan return the run, now in review.
    let again = repo.baton(["run", "plans/fix.md", "--key", "ticket-42"]);
    assert_eq!(
        shown(&again, &id, ""),
        "exit: 0\n--- stderr\nrun <ID>\nnote: key `ticket-42` names this existing run (review); not creating another"
    );

    // The same key with a different plan is a conflict.
    repo.write(
        "plans/other.md",
        "---\ntargets: [docs/a.md]\n---\nSomething else.\n",
    );
    let conflict = repo.baton(["run", "plans/other.md", "--key", "ticket-42"]);
    assert_snapshot!(shown(&conflict, &id, ""), @r"
    exit: 2
    --- stderr
    error: key `ticket-42` already names run <ID> of plan plans/fix.md, with a different plan
    hint: use another --key for another plan, or the same plan to get that run back
    ");
    assert_eq!(run_entries(&repo), [id]);
}

// ---------------------------------------------------------------------------------------------
// 10. Rate limits and timeouts

#[test]
fn rate_limits_by_exit_code_and_by_output_and_timeouts() {
    let rules = "    rate_limit: { exit_codes: [75], patterns: [\"usage limit\"] }\n";
    let by_code = agent_with("by_code", &["edit", "docs/a.md", "a", "exit", "75"], rules);
    let by_text = agent_with(
        "by_text",
        &[
            "warn",
            "Error: Usage Limit reached, try again at 5pm",
            "exit",
            "1",
        ],
        rules,
    );
    let failing = agent_with("failing", &["warn", "segfault", "exit", "3"], rules);
    let sleepy = agent_with("sleepy", &["sleep", "30"], "    timeout: 1\n");
    let repo = repo_with(&config(
        &[by_code, by_text, failing, sleepy, writer()],
        &pipeline_with("by_code", ""),
    ));
    let cases = [
        (
            "by_code",
            "rate_limited",
            "rate_limited",
            "rate limited (exit code 75)",
        ),
        (
            "by_text",
            "rate_limited",
            "rate_limited",
            "rate limited (usage limit)",
        ),
        (
            "failing",
            "failed",
            "failed",
            "the actor exited with code 3",
        ),
        (
            "sleepy",
            "interrupted",
            "interrupted",
            "stopped: the actor's timeout elapsed",
        ),
    ];
    for (actor, status_word, kind, message) in cases {
        let started = Instant::now();
        let run = repo.baton([
            "run",
            "plans/fix.md",
            "--actor",
            &format!("executor={actor}"),
        ]);
        let id = run_id(&run);
        assert_eq!(run.code, 1, "{actor}: {run}");
        let state = status(&repo, &id);
        assert_eq!(state["status"], status_word, "{actor}");
        assert_eq!(state["current_stage"], "executor", "{actor}");
        assert_eq!(state["error"]["kind"], kind, "{actor}");
        assert_eq!(state["error"]["stage"], "executor", "{actor}");
        let got = state["error"]["message"].as_str().unwrap();
        assert!(got.starts_with(message), "{actor}: {got}");
        assert_eq!(attempt_field(&state, "executor", "actor"), [actor]);
        assert!(attempts(&state, "reporter").is_empty());
        if actor == "sleepy" {
            assert_eq!(attempt_field(&state, "executor", "cause"), ["timeout"]);
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the timeout did not stop the actor: {:?}",
                started.elapsed()
            );
        } else {
            assert_eq!(attempt_field(&state, "executor", "cause"), [Value::Null]);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 11–12. Creation is a transaction; bad input creates nothing

/// Nothing of a run exists: no branch, no worktree, no run directory (not even a hidden one),
/// and `list` shows no run.
fn assert_nothing_created(repo: &TestRepo, context: &str) {
    assert_eq!(branches(repo), "", "{context}: a baton branch is left");
    assert_eq!(
        worktrees(repo),
        [repo.root.display().to_string()],
        "{context}: a worktree is left registered"
    );
    let left: Vec<String> = match std::fs::read_dir(repo.path(".baton/worktrees")) {
        Ok(entries) => entries
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect(),
        Err(_) => Vec::new(),
    };
    assert!(
        left.is_empty(),
        "{context}: worktree directories left: {left:?}"
    );
    assert!(
        run_entries(repo).is_empty(),
        "{context}: run directories left: {:?}",
        run_entries(repo)
    );
    assert_eq!(repo.git(["status", "--porcelain"]), "", "{context}");
}

#[test]
fn a_failure_at_any_creation_step_rolls_everything_back() {
    let repo = standard_repo(&[]);
    let mut shown_all = String::new();
    for step in ["snapshot", "branch", "worktree", "state", "publish"] {
        let run = repo.baton_env(
            &repo.root,
            ["run", "plans/fix.md"],
            &[("GIT_BATON_FAIL_AT", OsStr::new(step))],
        );
        assert_eq!(run.code, 2, "{step}: {run}");
        shown_all.push_str(&format!("== {step}\n{run}"));
        assert_nothing_created(&repo, step);
        let list = repo.baton(["list"]);
        assert_eq!(
            list.stdout, "no runs yet; start one with `git baton run <PLAN>`\n",
            "{step}"
        );
    }
    assert_snapshot!(shown_all, @r"
    == snapshot
    exit: 2
    --- stderr
    error: injected failure at step `snapshot` (GIT_BATON_FAIL_AT)
    == branch
    exit: 2
    --- stderr
    error: injected failure at step `branch` (GIT_BATON_FAIL_AT)
    == worktree
    exit: 2
    --- stderr
    error: injected failure at step `worktree` (GIT_BATON_FAIL_AT)
    == state
    exit: 2
    --- stderr
    error: injected failure at step `state` (GIT_BATON_FAIL_AT)
    == publish
    exit: 2
    --- stderr
    error: injected failure at step `publish` (GIT_BATON_FAIL_AT)
    ");
    // And the transaction still works afterwards.
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
}

/// Bad configuration, bad plans and bad flags: one located `error:` line (plus hints), exit 2,
/// and nothing created.
#[test]
fn bad_config_plans_and_flags_create_nothing() {
    let worker_writer = format!("actors:\n{}{}", worker(), writer());
    let cases: Vec<(&str, String, String, Vec<&str>)> = vec![
        (
            "unknown actor in the pipeline",
            format!(
                "{worker_writer}pipeline:\n  - {{ stage: executor, actor: wrker, gate: coverage }}\n"
            ),
            PLAN.into(),
            vec![],
        ),
        (
            "unknown key",
            format!("{worker_writer}{PIPELINE}pipline: []\n"),
            PLAN.into(),
            vec![],
        ),
        ("no pipeline", worker_writer.clone(), PLAN.into(), vec![]),
        (
            "plan with an unknown key",
            format!("{worker_writer}{PIPELINE}"),
            "---\ntitle: x\ntarget:\n  - docs/a.md\n---\nDo it.\n".into(),
            vec![],
        ),
        (
            "plan with a target outside the repository",
            format!("{worker_writer}{PIPELINE}"),
            "---\ntargets:\n  - docs/a.md\n  - ../elsewhere.md\n---\nDo it.\n".into(),
            vec![],
        ),
        (
            "--actor naming an unknown stage",
            format!("{worker_writer}{PIPELINE}"),
            PLAN.into(),
            vec!["--actor", "review=worker"],
        ),
        (
            "--actor naming an unknown actor",
            format!("{worker_writer}{PIPELINE}"),
            PLAN.into(),
            vec!["--actor", "executor=ghost"],
        ),
        (
            "--actor without =",
            format!("{worker_writer}{PIPELINE}"),
            PLAN.into(),
            vec!["--actor", "executor"],
        ),
        (
            "--stop-after naming an unknown stage",
            format!("{worker_writer}{PIPELINE}"),
            PLAN.into(),
            vec!["--stop-after", "review"],
        ),
        (
            "an unknown base",
            format!("{worker_writer}{PIPELINE}"),
            PLAN.into(),
            vec!["--base", "no-such-rev"],
        ),
    ];
    let mut all = String::new();
    for (name, yml, plan, flags) in cases {
        let repo = TestRepo::new();
        repo.write("docs/a.md", "a\n");
        repo.write("plans/fix.md", &plan);
        repo.write(".baton.yml", &yml);
        repo.commit_all("base");
        let mut args = vec!["run", "plans/fix.md"];
        args.extend(flags);
        let run = repo.baton(&args);
        assert_eq!(run.code, 2, "{name}: {run}");
        assert!(run.stderr.starts_with("error: "), "{name}: {run}");
        assert!(!run.stderr.contains("panicked"), "{name}: {run}");
        all.push_str(&format!("== {name}\n{}\n", run.stderr.trim_end()));
        assert_nothing_created(&repo, name);
    }
    // The AGENT path is in the configuration; it shows in no message.
    assert!(!all.contains(AGENT), "{all}");
    assert_snapshot!(all, @r#"
        == unknown actor in the pipeline
        error: .baton.yml:7:31: unknown actor `wrker` for stage `executor`
        hint: did you mean `worker`?
        == unknown key
        error: .baton.yml:9:1: unknown field `pipline`, expected one of plans_dir, actors, pipeline, coverage, worktree_root, prompts, require_targets, log_limit
        hint: did you mean `pipeline`?
        == no pipeline
        error: no pipeline is configured: .baton.yml has no `pipeline`
        hint: for example:
        hint:
        hint: actors:
        hint:   agent: { command: [my-agent, "{prompt_file}"] }
        hint: pipeline:
        hint:   - { stage: executor, actor: agent, gate: coverage }
        == plan with an unknown key
        error: plans/fix.md:3:1: unknown key `target` in plan frontmatter
        hint: did you mean `targets`?
        == plan with a target outside the repository
        error: plans/fix.md:4:5: target `../elsewhere.md` contains a `..` component
        hint: targets name paths inside the repository, relative to its root
        == --actor naming an unknown stage
        error: --actor names stage `review`, which this run does not have
        hint: the run's stages: executor, reporter
        == --actor naming an unknown actor
        error: --actor names actor `ghost`, which is not configured
        hint: configured actors: worker, writer
        == --actor without =
        error: invalid value 'executor' for '--actor <STAGE=NAME>': expected STAGE=NAME, got `executor`

        For more information, try '--help'.
        == --stop-after naming an unknown stage
        error: --stop-after names stage `review`, which this run does not have
        hint: the run's stages: executor, reporter
        == an unknown base
        error: unknown revision `no-such-rev`
        hint: name a branch, tag or commit that exists here; in CI, fetch it first
        "#);
}

/// A plan whose `stages` names a stage the configured pipeline lacks is bad input in the plan
/// file: like every other plan error (design §3, §8) it must name the plan file, line and
/// column of the offending entry, not just the stage.
#[test]
fn a_plan_stage_missing_from_the_pipeline_is_a_located_error() {
    let repo = repo_with(&config(&[worker(), writer()], PIPELINE));
    repo.write(
        "plans/staged.md",
        "---\ntargets: [docs/a.md]\nstages: [executor, review]\n---\nDo it.\n",
    );
    repo.commit_all("a plan with stages");
    let run = repo.baton(["run", "plans/staged.md"]);
    assert_eq!(run.code, 2, "{run}");
    assert_nothing_created(&repo, "plan stages");
    let first = run.stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("error: plans/staged.md:3:"),
        "the error does not name the plan file and line of `review`:\n{run}"
    );
    assert!(first.contains("`review`"), "{run}");
}

// ---------------------------------------------------------------------------------------------
// 13. The incident

/// Design §1: three documents to fix; the first agent edits one and hits a rate limit; the
/// resumed agent changes nothing and exits 0. git-baton blocks it and names the two documents
/// nobody touched; a diligent agent fixes one and gives a reason for the other, and only then
/// does the run reach review — with the reason in the result.
#[test]
fn the_incident_rate_limit_then_a_lazy_resume_is_blocked() {
    let partial = agent_with(
        "partial",
        &[
            "edit",
            "docs/a.md",
            "rule: grade A",
            "warn",
            "You have hit your usage limit.",
            "exit",
            "75",
        ],
        "    rate_limit: { exit_codes: [75] }\n",
    );
    let lazy = agent(
        "lazy",
        &["say", "The documents already state the rule. Done."],
    );
    let reason = "already states the new grading rule in section 3";
    let evidence = format!(
        r#"{{"target_coverage": [{{"target": "docs/c.md", "status": "unchanged", "reason": "{reason}"}}]}}"#
    );
    let diligent = agent(
        "diligent",
        &["edit", "docs/b.md", "rule: grade B", "evidence", &evidence],
    );
    let out = scratch();
    let reporter_prompt = outside(&out, "reporter-prompt.md");
    let reporter = shell(
        "writer",
        &format!("cat \"$BATON_PROMPT_FILE\" > {}", reporter_prompt.display()),
    );
    let repo = repo_with(&config(
        &[partial, lazy, diligent, reporter],
        &pipeline_with("partial", ""),
    ));
    let base = base(&repo);

    let run = repo.baton(["run", "plans/fix.md"]);
    let id = run_id(&run);
    assert_eq!(run.code, 1, "{run}");
    assert_eq!(status(&repo, &id)["status"], "rate_limited");

    let lazy_run = repo.baton(["resume", &id, "--actor", "executor=lazy"]);
    assert_eq!(lazy_run.code, 1, "{lazy_run}");
    assert_snapshot!(shown(&lazy_run, &id, &base), @r#"
        exit: 1
        --- stdout
        The documents already state the rule. Done.
        --- stderr
        run <ID>

        run <ID>: blocked
          plan      plans/fix.md (fix) — Fix the grading documents
          base      <BASE> (HEAD)
          branch    baton/<ID>
          worktree  $TMP/repo/.baton/worktrees/<ID>
          current   executor

          STAGE      STATUS       ACTOR      ATTEMPTS   DURATION       TOKENS      COST
          executor   blocked      lazy              2      <DUR>            -         -
            #1 partial rate_limited
            #2 lazy blocked, resumed
          reporter   pending      writer            0          -            -         -

          last error: blocked in stage executor
            coverage gate: 2 of 3 targets uncovered: docs/b.md, docs/c.md

          coverage: failed
            changed    docs/a.md  docs/a.md
            uncovered  docs/b.md  no change and no reason
            uncovered  docs/c.md  no change and no reason

          next: git baton resume <ID>   (the stage re-runs; it must change or give a reason for every uncovered target)
        "#);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "blocked");
    assert_eq!(state["error"]["kind"], "blocked");
    assert_eq!(
        state["error"]["message"],
        "coverage gate: 2 of 3 targets uncovered: docs/b.md, docs/c.md"
    );
    assert_eq!(state["coverage"]["passed"], false);
    assert_eq!(
        coverage_rows(&state),
        [
            ("docs/a.md".to_string(), "changed".to_string()),
            ("docs/b.md".to_string(), "uncovered".to_string()),
            ("docs/c.md".to_string(), "uncovered".to_string()),
        ]
    );
    assert!(attempts(&state, "reporter").is_empty(), "never reported");

    let done = repo.baton(["resume", &id, "--actor", "executor=diligent"]);
    assert_eq!(done.code, 0, "{done}");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "review");
    assert_eq!(
        attempt_field(&state, "executor", "actor"),
        ["partial", "lazy", "diligent"]
    );
    assert_eq!(
        attempt_field(&state, "executor", "outcome"),
        ["rate_limited", "blocked", "succeeded"]
    );
    assert_eq!(
        attempt_field(&state, "executor", "resumed"),
        [false, true, true]
    );
    assert_eq!(
        coverage_rows(&state),
        [
            ("docs/a.md".to_string(), "changed".to_string()),
            ("docs/b.md".to_string(), "changed".to_string()),
            ("docs/c.md".to_string(), "unchanged".to_string()),
        ]
    );
    let result: Value =
        serde_json::from_str(&text(&run_dir(&repo, &id).join("result.json"))).unwrap();
    assert_eq!(result["coverage"]["targets"][2]["reason"], reason);
    assert!(text(&run_dir(&repo, &id).join("result.md")).contains(reason));
    // The reviewer's actor sees the reason too.
    let reporter_prompt = text(&reporter_prompt);
    assert!(reporter_prompt.contains(reason), "{reporter_prompt}");

    let human = repo.baton(["status", &id]);
    assert_snapshot!(shown(&human, &id, &base), @r#"
        exit: 0
        --- stdout
        run <ID>: review
          plan      plans/fix.md (fix) — Fix the grading documents
          base      <BASE> (HEAD)
          branch    baton/<ID>
          worktree  $TMP/repo/.baton/worktrees/<ID>

          STAGE      STATUS       ACTOR      ATTEMPTS   DURATION       TOKENS      COST
          executor   succeeded    diligent          3      <DUR>            -         -
            #1 partial rate_limited
            #2 lazy blocked, resumed
            #3 diligent succeeded, resumed
          reporter   succeeded    writer            1      <DUR>            -         -

          coverage: passed
            changed    docs/a.md  docs/a.md
            changed    docs/b.md  docs/b.md
            unchanged  docs/c.md  because: already states the new grading rule in section 3

          next: git baton review <ID>, then `git baton finish <ID>` and merge branch baton/<ID>
        "#);
}

// ---------------------------------------------------------------------------------------------
// 14. The gate's rules, end to end

/// Runs the plan with executor `actor` and returns the final state.
fn run_with(repo: &TestRepo, actor: &str) -> (Run, Value) {
    let run = repo.baton([
        "run",
        "plans/fix.md",
        "--actor",
        &format!("executor={actor}"),
    ]);
    let id = run_id(&run);
    let state = status(repo, &id);
    (run, state)
}

#[test]
fn the_gate_blocks_bad_evidence_and_passes_complete_work() {
    let ab = ["edit", "docs/a.md", "a", "edit", "docs/b.md", "b"];
    let with_evidence = |name: &str, evidence: &str| {
        let mut verbs = ab.to_vec();
        verbs.extend(["evidence", evidence]);
        agent(name, &verbs)
    };
    let good = "the grading rule in this document is already the new one";
    let actors = vec![
        with_evidence(
            "claims",
            r#"{"target_coverage": [{"target": "docs/c.md", "status": "changed", "paths": ["docs/c.md"]}]}"#,
        ),
        with_evidence(
            "placeholder",
            r#"{"target_coverage": [{"target": "docs/c.md", "status": "unchanged", "reason": "n/a"}]}"#,
        ),
        with_evidence(
            "duplicate",
            &format!(
                r#"{{"target_coverage": [{{"target": "docs/c.md", "status": "unchanged", "reason": "{good}"}}, {{"target": "docs/c.md", "status": "unchanged", "reason": "{good}"}}]}}"#
            ),
        ),
        agent(
            "unknown",
            &[
                "edit",
                "docs/a.md",
                "a",
                "edit",
                "docs/b.md",
                "b",
                "edit",
                "docs/c.md",
                "c",
                "evidence",
                &format!(
                    r#"{{"target_coverage": [{{"target": "docs/d.md", "status": "unchanged", "reason": "{good}"}}]}}"#
                ),
            ],
        ),
        with_evidence("broken", "{not json"),
        with_evidence(
            "reasoned",
            &format!(
                r#"{{"target_coverage": [{{"target": "docs/c.md", "status": "unchanged", "reason": "{good}"}}]}}"#
            ),
        ),
        shell(
            "deleter",
            "echo a >> docs/a.md && echo b >> docs/b.md && rm docs/c.md",
        ),
        shell(
            "committer",
            "echo a >> docs/a.md && echo b >> docs/b.md && echo c >> docs/c.md && git add -A && git commit -qm work",
        ),
        shell(
            "renamer",
            "echo a >> docs/a.md && echo b >> docs/b.md && git mv docs/c.md docs/c-renamed.md",
        ),
    ];
    let repo = standard_repo(&actors);
    let mut blocked = String::new();
    for actor in ["claims", "placeholder", "duplicate", "unknown", "broken"] {
        let (run, state) = run_with(&repo, actor);
        assert_eq!(run.code, 1, "{actor}: {run}");
        assert_eq!(state["status"], "blocked", "{actor}");
        assert_eq!(attempt_field(&state, "executor", "outcome"), ["blocked"]);
        assert!(attempts(&state, "reporter").is_empty(), "{actor}");
        blocked.push_str(&format!(
            "{actor}: {}\n",
            state["error"]["message"].as_str().unwrap()
        ));
    }
    assert_snapshot!(blocked, @r#"
        claims: coverage gate: 1 of 3 targets uncovered: docs/c.md; attempts/executor-1/evidence.json: entry 0: claims "docs/c.md" changed for target "docs/c.md", but the diff does not change it
        placeholder: coverage gate: 1 of 3 targets uncovered: docs/c.md; attempts/executor-1/evidence.json: entry 0: reason "n/a" for target "docs/c.md" is a placeholder: give a specific reason why it needed no change
        duplicate: attempts/executor-1/evidence.json: entry 1: second entry for target "docs/c.md" (the first is attempts/executor-1/evidence.json: entry 0); give one entry per target
        unknown: attempts/executor-1/evidence.json: entry 0: target "docs/d.md" is not declared by the plan; did you mean "docs/a.md"?
        broken: invalid evidence: attempts/executor-1/evidence.json:1:2: key must be a string
        "#);

    for actor in ["worker", "reasoned", "deleter", "committer", "renamer"] {
        let (run, state) = run_with(&repo, actor);
        assert_eq!(run.code, 0, "{actor}: {run}");
        assert_eq!(state["status"], "review", "{actor}");
        assert_eq!(state["coverage"]["passed"], true, "{actor}");
        let c = &state["coverage"]["targets"][2];
        match actor {
            "reasoned" => {
                assert_eq!(c["status"], "unchanged");
                assert_eq!(c["reason"], good);
            }
            _ => {
                assert_eq!(c["status"], "changed", "{actor}: {c:#}");
                assert_eq!(c["paths"], serde_json::json!(["docs/c.md"]), "{actor}");
            }
        }
    }
}

/// `coverage: resume`: a fresh attempt is not gated (a first attempt that changes nothing
/// succeeds), but its report is recorded so the uncovered targets stay visible; every resumed
/// attempt is gated.
#[test]
fn coverage_resume_gates_only_resumed_attempts() {
    let lazy = agent("lazy", &["say", "nothing to do"]);
    let failing = agent("failing", &["exit", "1"]);
    let repo = repo_with(&config(
        &[lazy, failing, writer()],
        &pipeline_with("lazy", "coverage: resume\n"),
    ));
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    let state = status(&repo, &run_id(&run));
    assert_eq!(state["status"], "review");
    assert_eq!(state["policy"]["coverage"], "resume");
    let report = &attempts(&state, "executor")[0]["coverage"];
    assert_eq!(report["passed"], false, "recorded, not enforced: {report}");
    assert_eq!(state["coverage"]["targets"][0]["status"], "uncovered");
    let shown = repo.baton(["status", state["run_id"].as_str().unwrap()]);
    assert!(shown.stdout.contains("coverage: failed"), "{shown}");

    let run = repo.baton(["run", "plans/fix.md", "--actor", "executor=failing"]);
    assert_eq!(run.code, 1, "{run}");
    let id = run_id(&run);
    assert_eq!(status(&repo, &id)["status"], "failed");
    let resumed = repo.baton(["resume", &id, "--actor", "executor=lazy"]);
    assert_eq!(resumed.code, 1, "{resumed}");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "blocked");
    assert_eq!(
        state["error"]["message"],
        "coverage gate: 3 of 3 targets uncovered: docs/a.md, docs/b.md, docs/c.md"
    );
}

// ---------------------------------------------------------------------------------------------
// 15. Resume refuses what it cannot do

#[test]
fn resume_refusals() {
    let failing = agent("failing", &["edit", "docs/a.md", "a", "exit", "1"]);
    let lazy = agent("lazy", &["say", "nothing"]);
    let repo = standard_repo(&[failing, lazy]);
    let base = base(&repo);

    // A run in review has nothing to resume.
    let done = repo.baton(["run", "plans/fix.md"]);
    let done_id = run_id(&done);
    let again = repo.baton(["resume", &done_id]);
    assert_snapshot!(shown(&again, &done_id, &base), @r#"
        exit: 2
        --- stderr
        run <ID>
        error: run <ID> is in review: there is nothing to resume
        hint: see `git baton status <ID>`
        "#);

    // An unknown run.
    let unknown = repo.baton(["resume", "zzzz"]);
    assert_snapshot!(shown(&unknown, "", &base), @r#"
        exit: 2
        --- stderr
        error: unknown run `zzzz`
        hint: see the runs with `git baton list`
        "#);

    // --actor for a stage other than the one being resumed.
    let paused = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let paused_id = run_id(&paused);
    let wrong = repo.baton(["resume", &paused_id, "--actor", "executor=lazy"]);
    assert_snapshot!(shown(&wrong, &paused_id, &base), @r#"
        exit: 2
        --- stderr
        run <ID>
        error: --actor names stage `executor`, but the stage to resume is `reporter`
        hint: the RunState's pipeline is authoritative; only the actor of the stage being resumed may change
        "#);
    let ghost = repo.baton(["resume", &paused_id, "--actor", "reporter=ghost"]);
    assert_snapshot!(shown(&ghost, &paused_id, &base), @r#"
        exit: 2
        --- stderr
        run <ID>
        error: --actor names actor `ghost`, which is not configured
        hint: configured actors: failing, lazy, worker, writer
        "#);
    assert_eq!(status(&repo, &paused_id)["status"], "paused", "untouched");

    // The worktree deleted by hand.
    let failed = repo.baton(["run", "plans/fix.md", "--actor", "executor=failing"]);
    let failed_id = run_id(&failed);
    assert_eq!(failed.code, 1, "{failed}");
    let worktree = repo.path(&format!(".baton/worktrees/{failed_id}"));
    std::fs::remove_dir_all(&worktree).unwrap();
    let gone = repo.baton(["resume", &failed_id]);
    assert_snapshot!(shown(&gone, &failed_id, &base), @r#"
        exit: 2
        --- stderr
        run <ID>
        error: stale worktree mapping: run <ID>: its worktree $TMP/repo/.baton/worktrees/<ID> does not exist
        hint: `git baton resume <ID> --recreate-worktree` rebuilds it from branch baton/<ID> and the last attempt's snapshot
        "#);
    let state = status(&repo, &failed_id);
    assert_eq!(state["status"], "failed", "untouched");
    assert_eq!(attempts(&state, "executor").len(), 1, "no attempt started");

    // The worktree switched to another branch.
    let switched_run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let switched_id = run_id(&switched_run);
    let worktree = repo.path(&format!(".baton/worktrees/{switched_id}"));
    repo.git_in(&worktree, ["switch", "-q", "-c", "elsewhere"]);
    let switched = repo.baton(["resume", &switched_id]);
    assert_snapshot!(shown(&switched, &switched_id, &base), @r#"
        exit: 2
        --- stderr
        run <ID>
        error: stale worktree mapping: run <ID>: its worktree $TMP/repo/.baton/worktrees/<ID> is on branch elsewhere instead of baton/<ID>
        hint: put it back on the run's branch with `git -C $TMP/repo/.baton/worktrees/<ID> switch baton/<ID>`
        "#);
    assert_eq!(status(&repo, &switched_id)["status"], "paused");
}

/// Runs the command that the stale-mapping error's hint proposes (the first `git …` in
/// backticks: `git baton …` or plain git) in the main worktree, as a user would paste it.
fn follow_the_hint(repo: &TestRepo, refused: &Run) -> Run {
    let hint = refused
        .stderr
        .lines()
        .find(|l| l.starts_with("hint: "))
        .unwrap_or_else(|| panic!("no hint:\n{refused}"));
    let command = hint
        .split('`')
        .find(|part| part.starts_with("git "))
        .unwrap_or_else(|| panic!("the hint proposes no git command:\n{refused}"))
        .replace("$TMP", &repo.tmp().display().to_string());
    let args: Vec<&str> = command.split_whitespace().skip(1).collect();
    if args.first() == Some(&"baton") {
        return repo.baton(&args[1..]);
    }
    let out = repo.git_output(&repo.root, &args);
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A stale mapping is diagnosed, and the hint's next step repairs it: after it, the run
/// resumes to review with the work of its first stage intact.
fn hint_repairs(repo: &TestRepo, id: &str) {
    let refused = repo.baton(["resume", id]);
    assert_eq!(refused.code, 2, "{refused}");
    assert!(
        refused.stderr.contains("error: stale worktree mapping"),
        "{refused}"
    );
    let followed = follow_the_hint(repo, &refused);
    assert!(
        followed.code == 0,
        "the hinted command fails:\n{followed}\nafter:\n{refused}"
    );
    if status(repo, id)["status"] != "review" {
        let resumed = repo.baton(["resume", id]);
        assert_eq!(resumed.code, 0, "{resumed}");
    }
    let state = status(repo, id);
    assert_eq!(state["status"], "review");
    let worktree = worktree_of(repo, &state);
    assert!(text(&worktree.join("docs/a.md")).contains("rule: grade A"));
}

/// A worktree deleted by hand: the hint says how to bring it back.
#[test]
fn the_hint_for_a_deleted_worktree_repairs_it() {
    let repo = standard_repo(&[]);
    let run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let id = run_id(&run);
    std::fs::remove_dir_all(repo.path(&format!(".baton/worktrees/{id}"))).unwrap();
    hint_repairs(&repo, &id);
}

/// A worktree switched to another branch: the hint says how to put it back.
#[test]
fn the_hint_for_a_switched_worktree_repairs_it() {
    let repo = standard_repo(&[]);
    let run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let id = run_id(&run);
    let worktree = repo.path(&format!(".baton/worktrees/{id}"));
    repo.git_in(&worktree, ["switch", "-q", "-c", "elsewhere"]);
    hint_repairs(&repo, &id);
}

/// A `pause` asks the process driving the run to stop at its next stage boundary. When the
/// stage fails instead, that process ends and the request is moot: a later `resume` (a new
/// command, by a person) must run the stage, not pause at once on the leftover request.
#[test]
fn a_pause_request_does_not_outlive_the_driver_it_was_sent_to() {
    let out = scratch();
    let pid_file = outside(&out, "agent.pid");
    let flaky = agent(
        "flaky",
        &[
            "pid",
            pid_file.to_str().unwrap(),
            "sleep",
            "0.5",
            "exit",
            "1",
        ],
    );
    let repo = repo_with(&config(
        &[flaky, worker(), writer()],
        &pipeline_with("flaky", ""),
    ));
    let child = spawn(&repo, &["run", "plans/fix.md"]);
    wait_for_line(&pid_file);
    let id = wait_for_run(&repo);
    let pause = repo.baton(["pause", &id]);
    assert_eq!(pause.code, 0, "{pause}");
    let run = wait(&repo, child);
    assert_eq!(run.code, 1, "{run}");
    assert_eq!(status(&repo, &id)["status"], "failed");

    let resumed = repo.baton(["resume", &id, "--actor", "executor=worker"]);
    let state = status(&repo, &id);
    assert_eq!(
        attempt_field(&state, "executor", "actor"),
        ["flaky", "worker"],
        "resume did not run the stage (status {}):\n{resumed}",
        state["status"]
    );
    assert_eq!(resumed.code, 0, "{resumed}");
    assert_eq!(state["status"], "review");
}

// ---------------------------------------------------------------------------------------------
// 16. What an actor gets

#[test]
fn actors_get_the_baton_environment_and_a_resume_prompt() {
    let scratch_dir = scratch();
    let dump = outside(&scratch_dir, "env-{stage}-{attempt}.txt");
    let cwd = outside(&scratch_dir, "cwd.txt");
    let first = agent(
        "first",
        &[
            "env",
            dump.to_str().unwrap(),
            "edit",
            "docs/a.md",
            "a",
            "exit",
            "1",
        ],
    );
    let second = actor_with(
        "second",
        &[
            "sh",
            "-c",
            &format!(
                "pwd > {cwd} && exec {AGENT} env {dump} edit docs/b.md b edit docs/c.md c",
                cwd = cwd.display(),
                dump = dump.display(),
            ),
        ],
        "",
    );
    let repo = repo_with(&config(
        &[first, second, writer()],
        &pipeline_with("first", ""),
    ));
    let base = base(&repo);
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 1, "{run}");
    let id = run_id(&run);
    let resumed = repo.baton(["resume", &id, "--actor", "executor=second"]);
    assert_eq!(resumed.code, 0, "{resumed}");

    let out = scratch_dir.path();
    let show = |name: &str| {
        normalize(
            &text(&out.join(name)).replace(&repo.tmp().display().to_string(), "$TMP"),
            &id,
            &base,
        )
    };
    assert_snapshot!(show("env-executor-1.txt"), @r#"
                    BATON_ATTEMPT=1
                    BATON_BASE=<BASE>
                    BATON_EVIDENCE_FILE=$TMP/repo/.git/baton/runs/<ID>/attempts/executor-1/evidence.json
                    BATON_PLAN_FILE=$TMP/repo/.git/baton/runs/<ID>/plan.md
                    BATON_PROMPT_FILE=$TMP/repo/.git/baton/runs/<ID>/attempts/executor-1/prompt.md
                    BATON_RESUMED=0
                    BATON_RUN_ID=<ID>
                    BATON_STAGE=executor
                    BATON_WORKTREE=$TMP/repo/.baton/worktrees/<ID>
                    "#);
    assert_snapshot!(show("env-executor-2.txt"), @r#"
        BATON_ATTEMPT=2
        BATON_BASE=<BASE>
        BATON_EVIDENCE_FILE=$TMP/repo/.git/baton/runs/<ID>/attempts/executor-2/evidence.json
        BATON_PLAN_FILE=$TMP/repo/.git/baton/runs/<ID>/plan.md
        BATON_PROMPT_FILE=$TMP/repo/.git/baton/runs/<ID>/attempts/executor-2/prompt.md
        BATON_RESUMED=1
        BATON_RUN_ID=<ID>
        BATON_STAGE=executor
        BATON_WORKTREE=$TMP/repo/.baton/worktrees/<ID>
        "#);
    let state = status(&repo, &id);
    assert_eq!(
        Path::new(text(&cwd).trim()),
        worktree_of(&repo, &state),
        "the actor runs in the worktree"
    );

    let dir = run_dir(&repo, &id);
    let first_prompt = text(&dir.join("attempts/executor-1/prompt.md"));
    assert!(first_prompt.contains("State the new grading rule in each of them."));
    for target in ["docs/a.md", "docs/b.md", "docs/c.md"] {
        assert!(
            first_prompt.contains(&format!("- `{target}`")),
            "{first_prompt}"
        );
    }
    assert!(!first_prompt.contains("resumed"), "{first_prompt}");
    let resumed_prompt = text(&dir.join("attempts/executor-2/prompt.md"));
    assert_snapshot!(normalize(&resumed_prompt, &id, &base), @r#"
        # Fix the grading documents — stage `executor`

        ## This is a resumed attempt — the work may be partly done

        The previous attempt (#1, actor `first`, started <TIME>) ended early: failed. Its changes are still in this worktree. Do not assume the work is finished because some files were already edited: partial changes are not completion.

        Paths already changed against the base commit:

        - `docs/a.md`

        Targets with no change yet:

        - `docs/b.md`
        - `docs/c.md`

        Re-check every target against the plan. Finish what is missing. For each target you leave unchanged, record the specific reason in the evidence file (below).

        ## The plan

        # Fix the three grading documents

        State the new grading rule in each of them.

        ## Targets

        The work must change each of these paths, or say why it needs no change:

        - `docs/a.md`
        - `docs/b.md`
        - `docs/c.md`

        ## Recording targets that need no change

        Write JSON to the file named by the environment variable `BATON_EVIDENCE_FILE`. For each target you leave unchanged, give a specific reason (at least a few words that a reviewer can check; "n/a", "done" or "no change" are rejected). Targets you changed need no entry: the diff shows them. You may also report usage.

        ```json
        {
          "target_coverage": [
            {"target": "docs/b.md", "status": "unchanged", "reason": "already states the new rule in section 3"}
          ],
          "usage": {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, "model": "…", "provider": "…"}
        }
        ```
        "#);
}

// ---------------------------------------------------------------------------------------------
// 17. Any worktree of the repository sees the runs

#[test]
fn commands_work_from_the_run_worktree_and_subdirectories() {
    let repo = standard_repo(&[]);
    std::fs::create_dir_all(repo.path("docs/sub")).unwrap();
    // A plan named relative to a subdirectory is recorded repo-relative.
    let run = repo.baton_in(
        &repo.path("docs/sub"),
        ["run", "../../plans/fix.md", "--stop-after", "executor"],
    );
    assert_eq!(run.code, 0, "{run}");
    let id = run_id(&run);
    let state = status(&repo, &id);
    assert_eq!(state["plan"]["path"], "plans/fix.md");
    let worktree = worktree_of(&repo, &state);

    for dir in [worktree.clone(), worktree.join("docs"), repo.path("docs")] {
        let status = repo.baton_in(&dir, ["status", "--json"]);
        assert_eq!(status.code, 0, "{}: {status}", dir.display());
        assert_eq!(status.json()["run_id"], id.as_str());
        let list = repo.baton_in(&dir, ["list"]);
        assert_eq!(list.code, 0, "{list}");
        assert!(list.stdout.contains(&id), "{}: {list}", dir.display());
        let log = repo.baton_in(&dir, ["log", &id]);
        assert!(
            log.stdout.contains("working on the grading documents"),
            "{log}"
        );
    }

    // Resumed from inside its own worktree, the run finishes there.
    let resumed = repo.baton_in(&worktree.join("docs"), ["resume", &id]);
    assert_eq!(resumed.code, 0, "{resumed}");
    assert_eq!(status(&repo, &id)["status"], "review");
    assert_eq!(repo.git(["status", "--porcelain"]), "");
}

// ---------------------------------------------------------------------------------------------
// After review: finish, verify in CI, clean, doctor, re-creating a lost worktree

/// `finish` commits the rest of the work with a `Baton-Unchanged` trailer per unchanged target;
/// `verify --head` on the branch then accepts those reasons, as CI would.
#[test]
fn finish_writes_trailers_that_verify_head_accepts() {
    let reason = r#"{"target_coverage": [{"target": "docs/c.md", "status": "unchanged", "reason": "already states the new grading rule in section 3"}]}"#;
    let partial = agent(
        "partial",
        &[
            "edit",
            "docs/a.md",
            "rule: grade A",
            "edit",
            "docs/b.md",
            "rule: grade B",
            "evidence",
            reason,
        ],
    );
    let repo = repo_with(&config(&[partial, writer()], &pipeline_with("partial", "")));
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    let id = run_id(&run);
    let worktree = repo.path(&format!(".baton/worktrees/{id}"));

    let review = repo.baton(["review", &id]);
    assert_eq!(review.code, 0, "{review}");
    assert!(
        review
            .stdout
            .contains("needed no change, because: already states the new grading rule"),
        "{review}"
    );
    assert!(review.stdout.contains("docs/a.md"), "{review}");

    let finish = repo.baton(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    assert!(
        finish.stdout.contains("1 unchanged reason(s) as trailers"),
        "{finish}"
    );
    assert!(!worktree.exists(), "a clean worktree is removed:\n{finish}");
    assert_eq!(status(&repo, &id)["status"], "finished");
    let message = repo.git(["log", "-1", "--format=%B", &format!("baton/{id}")]);
    assert!(message.contains(&format!("Baton-Run: {id}")), "{message}");
    assert!(
        message.contains(
            "Baton-Unchanged: docs/c.md: already states the new grading rule in section 3"
        ),
        "{message}"
    );
    assert_eq!(
        repo.git(["status", "--porcelain"]),
        "",
        "the main worktree is untouched"
    );

    let gate = repo.baton([
        "verify",
        "plans/fix.md",
        "--base",
        "main",
        "--head",
        &format!("baton/{id}"),
        "--json",
    ]);
    assert_eq!(gate.code, 0, "{gate}");
    let rows = &gate.json()["plans"][0]["coverage"]["targets"];
    assert_eq!(rows[2]["status"], "unchanged", "{gate}");
    assert_eq!(rows[2]["reason_source"]["kind"], "trailer", "{gate}");

    // A finished run can be cleaned; its branch stays.
    let clean = repo.baton(["clean", &id]);
    assert_eq!(clean.code, 0, "{clean}");
    assert!(!run_dir(&repo, &id).exists());
    assert!(branches(&repo).contains(&format!("baton/{id}")));
    assert_eq!(
        repo.git(["for-each-ref", &format!("refs/baton/runs/{id}/")]),
        ""
    );
    let doctor = repo.baton(["doctor"]);
    assert_eq!(
        doctor.code, 0,
        "the kept branch of a cleaned run is not a problem: {doctor}"
    );
}

/// `clean` refuses an unfinished run unless forced, since its worktree may hold the only copy.
#[test]
fn clean_refuses_an_unfinished_run_without_force() {
    let repo = standard_repo(&[]);
    let run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let id = run_id(&run);
    let refused = repo.baton(["clean", &id]);
    assert_eq!(refused.code, 2, "{refused}");
    assert!(refused.stderr.contains("not finished"), "{refused}");
    assert!(run_dir(&repo, &id).exists());
    let forced = repo.baton(["clean", "--force", &id]);
    assert_eq!(forced.code, 0, "{forced}");
    assert!(!repo.path(&format!(".baton/worktrees/{id}")).exists());
    assert_eq!(
        repo.baton(["list"]).stdout.trim(),
        "no runs yet; start one with `git baton run <PLAN>`"
    );
}

/// A lost worktree: resume refuses with a stale-mapping diagnostic, doctor names the fix, and
/// `--recreate-worktree` brings back the uncommitted work of the last attempt from its snapshot.
#[test]
fn recreate_worktree_restores_uncommitted_work_from_the_snapshot() {
    let half = agent(
        "half",
        &["edit", "docs/a.md", "rule: grade A", "exit", "75"],
    );
    let half = half.replace(
        "    command",
        "    rate_limit: { exit_codes: [75] }\n    command",
    );
    let repo = repo_with(&config(
        &[half, worker(), writer()],
        &pipeline_with("half", ""),
    ));
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 1, "{run}");
    let id = run_id(&run);
    let worktree = repo.path(&format!(".baton/worktrees/{id}"));
    assert!(text(&worktree.join("docs/a.md")).contains("rule: grade A"));
    std::fs::remove_dir_all(&worktree).unwrap();

    let refused = repo.baton(["resume", &id]);
    assert_eq!(refused.code, 2, "{refused}");
    assert!(
        refused.stderr.contains("stale worktree mapping"),
        "{refused}"
    );
    let doctor = repo.baton(["doctor"]);
    assert_eq!(doctor.code, 1, "{doctor}");
    assert!(
        doctor
            .stdout
            .contains(&format!("git baton resume {id} --recreate-worktree")),
        "{doctor}"
    );

    let diff_before = repo.baton(["diff", &id, "--name-only"]);
    assert!(diff_before.stdout.contains("docs/a.md"), "{diff_before}");
    let resumed = repo.baton([
        "resume",
        &id,
        "--recreate-worktree",
        "--actor",
        "executor=worker",
    ]);
    assert_eq!(resumed.code, 0, "{resumed}");
    // The first attempt's edit came back from the snapshot, and the worker appended to it.
    let a = text(&worktree.join("docs/a.md"));
    assert_eq!(a.matches("rule: grade A").count(), 2, "{a}");
    assert_eq!(status(&repo, &id)["status"], "review");
}

/// `prompts.fresh`/`prompts.resume` replace the built-in layout; their placeholders are filled
/// from the same sections, and an unknown placeholder is a located error before anything runs.
#[test]
fn prompt_templates_from_the_configuration() {
    let out = scratch();
    let copy = outside(&out, "prompt.md");
    let copier = shell(
        "copier",
        &format!("cp \"$BATON_PROMPT_FILE\" '{}'", copy.display()),
    );
    let repo = TestRepo::new();
    repo.write("docs/a.md", "# A\n");
    repo.write("docs/b.md", "# B\n");
    repo.write("docs/c.md", "# C\n");
    repo.write("plans/fix.md", PLAN);
    repo.write(
        "prompts/fresh.md",
        "CUSTOM for {{stage}} of {{run_id}}\n{{targets}}{{evidence}}",
    );
    repo.write(
        ".baton.yml",
        &config(
            &[copier, writer()],
            &format!(
                "{}prompts:\n  fresh: prompts/fresh.md\n",
                pipeline_with("copier", "")
            ),
        ),
    );
    repo.commit_all("base");
    let run = repo.baton(["run", "plans/fix.md"]);
    let id = run_id(&run);
    let prompt = text(&copy);
    assert!(
        prompt.starts_with(&format!("CUSTOM for executor of {id}\n")),
        "{prompt}"
    );
    assert!(prompt.contains("- `docs/c.md`"), "{prompt}");
    assert!(prompt.contains("BATON_EVIDENCE_FILE"), "{prompt}");
    assert!(
        !prompt.contains("## The plan"),
        "the built-in layout is replaced:\n{prompt}"
    );

    repo.write("prompts/fresh.md", "line one\n  {{plna}}\n");
    let bad = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(bad.code, 2, "{bad}");
    assert!(
        bad.stderr.starts_with(
            "error: prompts/fresh.md:2:3: unknown placeholder `{{plna}}` in prompt template"
        ),
        "{bad}"
    );
}
