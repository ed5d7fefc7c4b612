//! The incident as a schedule, with the real Claude Code and Codex against the mock model
//! server: Claude Code is rate limited with a reset seconds ahead; `git baton cycle` holds
//! every run on Claude Code until the reset — or hands the stage to Codex at once where
//! `fallback:` names it — and resumes them after it; a lazy resume is blocked by the gate, a
//! diligent one reaches review. The cycles run on the real clock: the reset is a real instant.

use std::time::{Duration, Instant};

use super::cli;
use super::e2e::{claude_edits, codex_edits, fall_back_to_codex, turn};
use super::harness::{AgentRepo, attempts};
use super::mock::{Script, Turn};
use crate::support::Run;

/// A subscriber's 429 whose limit resets `secs` seconds from now: its instant.
fn limit_in(secs: i64) -> (Turn, jiff::Timestamp) {
    let at = jiff::Timestamp::now().as_second() + secs;
    let turn = Turn::rate_limited(&[
        ("anthropic-ratelimit-unified-status", "rejected"),
        ("anthropic-ratelimit-unified-reset", &at.to_string()),
        (
            "anthropic-ratelimit-unified-representative-claim",
            "five_hour",
        ),
        ("x-should-retry", "false"),
    ]);
    (turn, jiff::Timestamp::from_second(at).unwrap())
}

/// `git baton ARGS` with the agents' environment on the real clock.
fn live(ar: &AgentRepo, args: &[&str]) -> Run {
    let mut cmd = ar.repo.baton_command(&ar.repo.root, &[], args);
    for (key, value) in ar.env.vars() {
        if key != "HOME" {
            cmd.env(key, value);
        }
    }
    cmd.env("PATH", ar.path_var())
        .env_remove("GIT_BATON_TIMESTAMP")
        .env_remove("GIT_BATON_RANDOMNESS_SEED")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    ar.repo
        .baton_wait(cmd.spawn().unwrap(), Duration::from_secs(300))
}

fn queue(ar: &AgentRepo) -> String {
    let run = ar.baton(&["run", "--queue", "plans/rule.md"]);
    assert_eq!(run.code, 0, "{run}");
    run.run_id()
}

fn until_past(at: jiff::Timestamp) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while jiff::Timestamp::now() <= at && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Without a fallback: the second run is not started into the limit; after the reset both are
/// resumed by Claude Code and reach review.
#[test]
fn a_claude_limit_holds_every_claude_run_until_its_reset() {
    let Some(_) = cli::agent("claude") else {
        return;
    };
    // Far enough ahead that the first pass decides before it even on a loaded machine, where
    // Claude Code alone takes seconds to start; the test waits for it.
    let (limit, reset) = limit_in(15);
    let mut script = claude_edits("docs/a.md").to_vec();
    script.push(limit);
    let ar = AgentRepo::new(Script(script)).subscriber("Europe/Berlin");
    ar.init();
    let (a, b) = (queue(&ar), queue(&ar));

    let first = live(&ar, &["cycle", "--once"]);
    assert_eq!(first.code, 0, "{first}");
    let state = ar.status(&a);
    assert_eq!(state["status"], "rate_limited", "{first}");
    let recorded = &attempts(&state, "executor")[0]["agent"]["rate_limit_reset"]["at"];
    assert_eq!(recorded, &serde_json::Value::from(reset.to_string()));
    assert_eq!(
        ar.status(&b)["status"],
        "queued",
        "held, not started: {first}"
    );
    assert!(
        first.stderr.contains(&format!(
            "cycle: {b}: waits until {reset}: queued, but claude is on hold until {reset} (rate limited in run {a}"
        )),
        "{first}"
    );

    // The limit lifts at its reset: A finishes docs/b.md, B does both.
    until_past(reset);
    ar.mock.lift_error();
    let mut rest = claude_edits("docs/b.md").to_vec();
    rest.push(turn(Turn::text("docs/b.md states the new rule too.")));
    rest.extend(claude_edits("docs/a.md"));
    rest.extend(claude_edits("docs/b.md"));
    rest.push(turn(Turn::text("Both documents state the new rule.")));
    ar.mock.extend(rest);
    let after = live(&ar, &["cycle", "--once", "--json"]);
    assert_eq!(after.code, 0, "{after}");
    for id in [&a, &b] {
        let state = ar.status(id);
        assert_eq!(state["status"], "review", "{after}\n{state:#}");
        let last = attempts(&state, "executor").last().unwrap();
        assert_eq!(last["actor"], "claude");
    }
    assert_eq!(ar.mock.overruns(), 0);
}

/// With `fallback: [codex]`: Codex takes the limited run's stage at once and, lazy, changes
/// nothing however often its Stop hook says so — the gate blocks it; the held run is started with Codex right away, not after the
/// reset, and Codex does the work — review.
#[test]
fn a_claude_limit_hands_every_claude_run_to_the_fallback_at_once() {
    let (Some(_), Some(_)) = (cli::agent("claude"), cli::agent("codex")) else {
        return;
    };
    let (limit, _reset) = limit_in(3600);
    let mut script = claude_edits("docs/a.md").to_vec();
    script.push(limit);
    // Lazy: "done", and "done" again each of the 3 times its Stop hook names the targets.
    script.extend((0..4).map(|_| turn(Turn::text("done"))));
    script.push(codex_edits("docs/a.md"));
    script.push(codex_edits("docs/b.md"));
    script.push(turn(Turn::text("Both documents state the new rule.")));
    let ar = AgentRepo::new(Script(script)).subscriber("Europe/Berlin");
    fall_back_to_codex(&ar);
    let (a, b) = (queue(&ar), queue(&ar));

    let run = live(&ar, &["cycle", "--once"]);
    assert_eq!(run.code, 0, "{run}");
    let lazy = ar.status(&a);
    assert_eq!(lazy["status"], "blocked", "{run}\n{lazy:#}");
    let tried: Vec<_> = attempts(&lazy, "executor")
        .iter()
        .map(|t| (t["actor"].clone(), t["outcome"].clone()))
        .collect();
    assert_eq!(
        tried,
        [
            ("claude".into(), "rate_limited".into()),
            ("codex".into(), "blocked".into())
        ]
    );
    assert_eq!(attempts(&lazy, "executor")[1]["hook_blocks"], 3, "{lazy:#}");
    let diligent = ar.status(&b);
    assert_eq!(diligent["status"], "review", "{run}\n{diligent:#}");
    let only = attempts(&diligent, "executor");
    assert_eq!(only.len(), 1, "never started into the limit: {diligent:#}");
    assert_eq!(only[0]["actor"], "codex");
    assert!(
        run.stderr
            .contains(&format!("cycle: {b}: resuming with codex")),
        "{run}"
    );
    // The blocked run waits for a person; the next cycle leaves it alone.
    let again = live(&ar, &["cycle", "--once", "--json"]);
    assert_eq!(again.json()["resumed"], serde_json::json!([]), "{again}");
    assert_eq!(ar.mock.overruns(), 0);
}
