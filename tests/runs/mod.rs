//! End-to-end tests of runs: `git baton run`, `resume`, `status`, `list`, `log`, `stop` and
//! `pause`, through the real binary and real processes. `testdata/agents/fake-agent.sh` plays
//! every actor; its verbs compose each scenario (edit a document, write evidence, sleep, exit
//! with a rate-limit code …).
//!
//! Every repository has three committed documents, `docs/{a,b,c}.md`, a plan `plans/fix.md`
//! that targets all three, and a `.baton.yml` built per test. Agents run in the run's own
//! worktree, so `edit docs/a.md x` edits the worktree's copy.
//!
//! The harness injects git-baton's clock and id seed, so run ids, timestamps and durations are
//! the same on every run of the suite and snapshots show them as they are; only the base commit,
//! whose id depends on where the suite is checked out (the configuration names the fake agent by
//! its path), is shown by name, via [`shown`]. Tests that race a second process or send signals
//! wait for a pid file the agent writes, and every wait has a generous deadline, so that a hang
//! fails the test instead of hanging the suite.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use insta::assert_snapshot;
use serde_json::Value;

use crate::support::{
    Run, TestRepo, assert_executor_attempts, attempt_field, attempts, stage, text, worktree_of,
};

mod actors;
mod agent_side;
mod agents;
mod bounds;
mod checks;
mod concurrency;
mod contain;
mod crash;
mod create;
mod cycle;
mod debris;
mod derived;
mod drive;
mod finish_clean;
mod gate;
mod guard;
mod hold;
mod mcp;
mod notify;
mod packaging;
mod planted;
mod queue;
mod record;
mod resume;
mod schemas;
mod stop_pause;
mod terminal;
mod tty;
mod unrecorded;
mod worktree_root;

use crate::support::{AGENT, LIVENESS, wait_for_line};

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

/// One actor of `.baton.yml` under construction: a command (the fake agent and its verbs, or a
/// shell script) and settings besides `command`, such as `rate_limit` or `timeout`.
#[derive(Clone)]
struct Actor {
    name: String,
    argv: Vec<String>,
    extra: String,
}

impl Actor {
    fn command(name: &str, argv: &[&str]) -> Actor {
        Actor {
            name: name.to_owned(),
            argv: argv.iter().map(|a| (*a).to_owned()).collect(),
            extra: String::new(),
        }
    }

    /// The fake agent, with no verb yet (it exits 0).
    fn agent(name: &str) -> Actor {
        Actor::command(name, &[AGENT])
    }

    /// An actor running a shell script (for what the fake agent has no verb for).
    fn shell(name: &str, script: &str) -> Actor {
        Actor::command(name, &["sh", "-c", script])
    }

    /// Fake-agent verbs with their arguments, performed after the ones before.
    fn verbs(mut self, verbs: &[&str]) -> Actor {
        self.argv.extend(verbs.iter().map(|v| (*v).to_owned()));
        self
    }

    fn say(self, text: &str) -> Actor {
        self.verbs(&["say", text])
    }

    fn warn(self, text: &str) -> Actor {
        self.verbs(&["warn", text])
    }

    fn edit(self, path: &str, text: &str) -> Actor {
        self.verbs(&["edit", path, text])
    }

    /// Edits the three documents of the plan, appending `a`, `b` and `c`.
    fn edit_all(self) -> Actor {
        self.edit("docs/a.md", "a")
            .edit("docs/b.md", "b")
            .edit("docs/c.md", "c")
    }

    fn evidence(self, json: &str) -> Actor {
        self.verbs(&["evidence", json])
    }

    /// Writes the agent's pid to `path`, for tests that wait for it or signal it.
    fn pid(self, path: &Path) -> Actor {
        self.verbs(&["pid", path.to_str().unwrap()])
    }

    fn sleep(self, seconds: &str) -> Actor {
        self.verbs(&["sleep", seconds])
    }

    fn exit(self, code: &str) -> Actor {
        self.verbs(&["exit", code])
    }

    /// One setting besides `command`, e.g. `timeout: 1`.
    fn set(mut self, line: &str) -> Actor {
        self.extra.push_str(&format!("    {line}\n"));
        self
    }

    /// The actor's entry: `argv` as a flow sequence of JSON strings (valid YAML), then `extra`.
    fn yaml(&self) -> String {
        let argv: Vec<String> = self
            .argv
            .iter()
            .map(|a| serde_json::to_string(a).unwrap())
            .collect();
        let (name, extra) = (&self.name, &self.extra);
        format!("  {name}:\n    command: [{}]\n{extra}", argv.join(", "))
    }
}

/// The agent that does the whole plan: edits all three documents and reports usage.
fn worker() -> Actor {
    Actor::agent("worker")
        .say("working on the grading documents")
        .edit("docs/a.md", "rule: grade A")
        .edit("docs/b.md", "rule: grade B")
        .edit("docs/c.md", "rule: grade C")
        .evidence(USAGE)
}

fn writer() -> Actor {
    Actor::agent("writer").say("report written")
}

/// `.baton.yml` with `actors` and `tail` (the pipeline, `coverage:` …).
fn config(actors: &[Actor], tail: &str) -> String {
    let actors: String = actors.iter().map(Actor::yaml).collect();
    format!("actors:\n{actors}{tail}")
}

/// A repository with the three documents, `plans/fix.md` and `.baton.yml` committed on `main`.
fn repo_with(baton_yml: &str) -> TestRepo {
    TestRepo::with()
        .old_rule_docs()
        .file("plans/fix.md", PLAN)
        .config(baton_yml)
        .commit()
}

/// A repository whose pipeline runs the first of `actors` as the executor and `writer` as the
/// reporter (the standard one, unless `actors` has its own), then `tail` (`coverage:` …).
fn repo_running(actors: &[Actor], tail: &str) -> TestRepo {
    let mut all = actors.to_vec();
    if !actors.iter().any(|a| a.name == "writer") {
        all.push(writer());
    }
    repo_with(&config(&all, &pipeline_with(&actors[0].name, tail)))
}

/// The standard pipeline with `worker` as executor and `writer` as reporter, plus `actors`.
fn standard_repo(actors: &[Actor]) -> TestRepo {
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

/// `<target> <status>` for each target of a coverage report: a run's state, what `check --json`
/// prints, a plan of `verify --json`.
fn coverage_rows(state: &Value) -> Vec<String> {
    let targets = state["coverage"]["targets"].as_array().unwrap();
    targets
        .iter()
        .map(|t| {
            format!(
                "{} {}",
                t["target"].as_str().unwrap(),
                t["status"].as_str().unwrap()
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

/// `text` with the base commit, in full or shortened, shown as `<BASE>`.
fn with_base(text: &str, base: &str) -> String {
    text.replace(base, "<BASE>").replace(&base[..12], "<BASE>")
}

/// A run's exit code and output for a snapshot, with the base commit as `<BASE>`.
fn shown(run: &Run, base: &str) -> String {
    with_base(run.to_string().trim_end(), base)
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
