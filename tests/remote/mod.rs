//! Runs that travel between machines: the scenarios of issue 10 against the contract of
//! `git baton push`, `fetch`, remote resume, the lease and `clean --remote`.
//!
//! Every test builds one bare repository ([`Origin`]) from the same committed files — three
//! documents `docs/{a,b,c}.md`, the plan `plans/fix.md` that targets them, and a `.baton.yml`
//! whose actors are `testdata/agents/fake-agent.sh` with verbs — and clones it for each machine.
//! Machines run git-baton on the real clock (a lease is real time), so run ids and timestamps
//! differ from one run of the suite to the next: tests read them and compare fields, not whole
//! outputs. Every wait is bounded.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::remote::{Origin, Transport};
use crate::support::{
    Run, TestRepo, assert_executor_attempts, attempt_field, attempts, plan_text, text, worktree_of,
};

mod big_state;
mod catch_up;
mod cycle;
mod forged;
mod handoff;
mod ignored;
mod lease;
mod race;
mod retention;
mod signals;
mod sync;
mod unrecorded;
mod worker;

use crate::support::{AGENT, LIVENESS, wait_for_line};

const TARGETS: [&str; 3] = ["docs/a.md", "docs/b.md", "docs/c.md"];

/// What the agent on machine A leaves when the rate limit stops it: committed work
/// (`docs/a.md`), staged work (`docs/b.md`), unstaged work (`docs/c.md`) and an untracked file
/// (`notes.md`).
const A_COMMITTED: &str = "rule: grade A (committed on machine A)";
const A_STAGED: &str = "rule: grade B, draft (staged on machine A)";
const A_UNSTAGED: &str = "rule: grade C (unstaged on machine A)";
const A_UNTRACKED: &str = "b needs its final wording (untracked note from machine A)";
/// What the resuming agent adds on the other machine.
const B_WORK: &str = "rule: grade B (finished on machine B)";

/// One actor: the fake agent with `verbs`, then `extra` settings (indented lines).
fn actor(name: &str, verbs: &[&str], extra: &str) -> String {
    let argv: Vec<String> = std::iter::once(AGENT)
        .chain(verbs.iter().copied())
        .map(|a| serde_json::to_string(a).unwrap())
        .collect();
    format!("  {name}:\n    command: [{}]\n{extra}", argv.join(", "))
}

/// `.baton.yml`: the actors of every scenario, the pipeline (executor `partial` behind the
/// coverage gate, reporter `writer`), then `tail` (`lease: 4s` …). `scratch` is a directory
/// outside every clone for the pid files of the slow actors.
fn baton_yml(scratch: &Path, tail: &str) -> String {
    let pid = |name: &str| scratch.join(name).display().to_string();
    let actors = [
        actor(
            "partial",
            &[
                "edit",
                "docs/a.md",
                A_COMMITTED,
                "commit",
                "machine A: docs/a.md",
                "edit",
                "docs/b.md",
                A_STAGED,
                "stage",
                "docs/b.md",
                "edit",
                "docs/c.md",
                A_UNSTAGED,
                "edit",
                "notes.md",
                A_UNTRACKED,
                "warn",
                "You have hit your usage limit.",
                "exit",
                "75",
            ],
            "    rate_limit: { exit_codes: [75] }\n",
        ),
        // Changes only docs/b.md: the gate passes only if A's work on the others is in place.
        actor("finisher", &["edit", "docs/b.md", B_WORK], ""),
        actor(
            "worker",
            &[
                "edit",
                "docs/a.md",
                "rule: A",
                "edit",
                "docs/b.md",
                "rule: B",
                "edit",
                "docs/c.md",
                "rule: C",
            ],
            "",
        ),
        actor(
            "slow",
            &[
                "pid",
                &pid("slow.pid"),
                "sleep",
                "2.5",
                "edit",
                "docs/b.md",
                B_WORK,
            ],
            "",
        ),
        // Like `slow`, but it finishes when the test says so (`go`), at most 30 s later.
        actor(
            "waiting",
            &[
                "pid",
                &pid("waiting.pid"),
                "wait-for",
                &pid("go"),
                "edit",
                "docs/b.md",
                B_WORK,
            ],
            "",
        ),
        actor("sleeper", &["pid", &pid("sleeper.pid"), "sleep", "60"], ""),
        actor(
            "failing",
            &["edit", "docs/b.md", "half done", "exit", "1"],
            "",
        ),
        actor("writer", &["say", "report written"], ""),
    ];
    format!(
        "actors:\n{}pipeline:\n  - {{ stage: executor, actor: partial, gate: coverage }}\n  - {{ stage: reporter, actor: writer }}\n{tail}",
        actors.concat()
    )
}

/// The shared repository and a scratch directory outside every clone.
struct World {
    origin: Origin,
    scratch: tempfile::TempDir,
}

impl World {
    /// The origin served over `transport`, with `tail` appended to `.baton.yml`; `None` (after
    /// printing `skipped: …`) where the transport is not available on this machine.
    fn new(transport: Transport, tail: &str) -> Option<World> {
        let scratch = tempfile::Builder::new()
            .prefix("baton-scratch")
            .tempdir()
            .unwrap();
        let fixture = TestRepo::with()
            .old_rule_docs()
            .plan("plans/fix.md", "Fix the grading documents", &TARGETS)
            .config(&baton_yml(scratch.path(), tail));
        match Origin::new(fixture, transport) {
            Ok(origin) => Some(World { origin, scratch }),
            Err(why) => {
                eprintln!("skipped: {why}");
                None
            }
        }
    }

    fn scratch(&self, name: &str) -> PathBuf {
        self.scratch.path().join(name)
    }

    /// A run started on a new machine that stops rate limited after leaving committed, staged,
    /// unstaged and untracked work, then pushed: the machine and the run id.
    fn rate_limited_and_pushed(&self) -> (TestRepo, String) {
        let a = self.origin.machine();
        let run = a.live(["run", "plans/fix.md"]);
        assert_eq!(run.code, 1, "{run}");
        let id = run.run_id();
        assert_eq!(status(&a, &id)["status"], "rate_limited");
        let push = a.live(["push", &id]);
        assert_eq!(push.code, 0, "{push}");
        (a, id)
    }

    /// A second machine that fetched run `id` and resumed it to review with `finisher`.
    fn resumed_elsewhere(&self, id: &str) -> TestRepo {
        let b = self.origin.machine();
        assert_eq!(b.live(["fetch"]).code, 0);
        let resumed = b.live(["resume", id, "--actor", "executor=finisher"]);
        assert_eq!(resumed.code, 0, "{resumed}");
        b
    }

    /// The RunState the origin's record of run `id` holds (`state.json` in the tree of
    /// `refs/baton/runs/<id>/record`).
    fn state_on_origin(&self, id: &str) -> Value {
        let text = self.origin.git([
            "cat-file",
            "-p",
            &format!("refs/baton/runs/{id}/record:state.json"),
        ]);
        serde_json::from_str(&text).unwrap()
    }
}

/// The commit `rev` names in `machine`, if any.
fn local_rev(machine: &TestRepo, rev: &str) -> Option<String> {
    let out = machine.git_output(&machine.root, ["rev-parse", "--verify", "-q", rev]);
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The refs of `machine`'s own runs (records, snapshots, branches) with their commits: what a
/// refused command must leave alone.
fn run_refs(machine: &TestRepo) -> String {
    machine.git([
        "for-each-ref",
        "--format=%(refname) %(objectname)",
        "refs/baton/runs/",
        "refs/heads/baton/",
    ])
}

/// `status --json <id>`, which must succeed.
fn status(machine: &TestRepo, id: &str) -> Value {
    let run = machine.live(["status", "--json", id]);
    assert_eq!(run.code, 0, "{run}");
    run.json()
}

/// `list --json`, which must succeed: the runs by id.
fn listed(machine: &TestRepo) -> Vec<Value> {
    let run = machine.live(["list", "--json"]);
    assert_eq!(run.code, 0, "{run}");
    run.json().as_array().unwrap().clone()
}

/// Sends SIGKILL to `target` (a pid, or `-PGID` for a process group).
fn kill9(target: &str) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", target])
        .stderr(std::process::Stdio::null())
        .status();
}

/// Waits (boundedly) until process `pid` is gone, and says whether it went. A zombie is gone: it
/// only waits for whoever adopted it to reap it.
fn gone_within(pid: &str, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // `pid (comm) state …`; comm may contain spaces and parentheses.
        let state = stat.rsplit_once(") ").map(|(_, rest)| &rest[..1]);
        if matches!(state, None | Some("Z" | "X")) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait(machine: &TestRepo, child: Child) -> Run {
    machine.baton_wait(child, LIVENESS)
}

/// `run` was refused with exit 3 because another driver's lease on run `id` holds.
fn assert_leased(run: &Run, id: &str) {
    assert_eq!(run.code, 3, "{run}");
    assert!(
        run.stderr
            .contains(&format!("error: run {id} is leased by ")),
        "{run}"
    );
}

/// `machine` resumes run `id` with `finisher` as soon as no other machine's lease keeps it out
/// (exit 3), trying every quarter second until `deadline`; the last try's result.
fn resume_once_free(machine: &TestRepo, id: &str, deadline: Instant) -> Run {
    loop {
        let attempt = machine.live(["resume", id, "--actor", "executor=finisher"]);
        if attempt.code != 3 || Instant::now() >= deadline {
            return attempt;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}
