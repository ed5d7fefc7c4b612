//! Actors whose output git-baton reads (`output:`) and stages that fall back to other actors
//! when rate limited (`fallback:`). The fake agent prints outputs captured from the real Claude
//! Code and Codex CLIs (testdata/agents/<agent>/) and exits as they did; where a test needs an
//! output no mock server made them print, it changes one field of a capture and says which.

use super::*;

const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/agents");

fn capture(rel: &str) -> String {
    format!("{CAPTURES}/{rel}")
}

/// A capture with `from` replaced by `to`, written to `dir`: the one field a test changes.
fn variant(dir: &tempfile::TempDir, rel: &str, from: &str, to: &str) -> String {
    let original = text(Path::new(&capture(rel)));
    assert!(original.contains(from), "{rel} has no `{from}`");
    let path = outside(dir, &rel.replace('/', "-"));
    std::fs::write(&path, original.replace(from, to)).unwrap();
    path.to_str().unwrap().to_owned()
}

/// An actor printing the output at `path` in `format`, after `work` verbs, exiting `code`.
fn printing(name: &str, format: &str, work: Actor, path: &str, code: &str) -> Actor {
    Actor {
        name: name.into(),
        ..work
    }
    .verbs(&["cat", path])
    .exit(code)
    .set(&format!("output: {format}"))
}

fn attempt<'a>(state: &'a Value, stage_name: &str, n: usize) -> &'a Value {
    &attempts(state, stage_name)[n - 1]
}

/// Claude Code's usage, cost, model and session land on the attempt with their source; the
/// run's totals and `status` show them, and say the totals are a lower bound when the other
/// stage reported nothing.
#[test]
fn claude_usage_and_cost_are_recorded_and_shown() {
    let claude = printing(
        "claude",
        "claude-json",
        Actor::agent("x").edit_all(),
        &capture("claude/success.json"),
        "0",
    );
    let repo = repo_running(&[claude], "");
    let (id, _) = repo.run_plan("plans/fix.md", 0);
    let state = status(&repo, &id);
    let a = attempt(&state, "executor", 1);
    assert_eq!(a["outcome"], "succeeded");
    assert_eq!(a["usage_source"], "output");
    assert_eq!(
        a["usage"],
        serde_json::json!({"input_tokens": 1200, "output_tokens": 42, "cost_usd": 0.00794,
            "model": "claude-opus-5-5"})
    );
    assert_eq!(
        a["agent"],
        serde_json::json!({"format": "claude-json",
            "session_id": "774ff390-4899-478b-8069-fb5ffbe5d317",
            "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 300})
    );
    let usage = &state["usage"];
    assert_eq!(
        (&usage["input_tokens"], &usage["output_tokens"]),
        (&Value::from(1200), &Value::from(42))
    );
    assert_eq!(usage["cache_read_input_tokens"], 4000);
    assert_eq!(usage["cost_usd"], 0.00794);
    assert_eq!(
        usage["attempts_without_usage"], 1,
        "the writer reports none"
    );
    assert_eq!(usage["attempts_without_cost"], 0);
    assert_eq!(usage["lower_bound"], true);

    let shown = repo.baton(["status", &id]);
    assert!(
        shown.stdout.contains(
            "total as the actors reported it: 1200 input (+ 4000 cache-read, 300 cache-write) + 42 output tokens, $0.01 \
             (at least: 1 attempt(s) reported no usage)"
        ),
        "{shown}"
    );
    // The state file holds what `status --json` shows.
    let saved: Value =
        serde_json::from_str(&text(&run_dir(&repo, &id).join("state.json"))).unwrap();
    assert_eq!(saved["schema_version"], 3);
    assert_eq!(
        saved["stages"][0]["attempts"][0]["agent"]["session_id"],
        "774ff390-4899-478b-8069-fb5ffbe5d317"
    );
}

/// Claude Code's `api_error_status: 429` (it exits 1) is a rate limit with no rule configured,
/// keeping the usage so far; a usage-limit text gives the reset, recorded as words and instant.
#[test]
fn a_429_in_json_is_rate_limited_with_the_reset() {
    let dir = scratch();
    // The captured 429, its `result` the older Claude Code usage-limit form with an epoch.
    let limit = variant(
        &dir,
        "claude/rate-limit-429.json",
        "API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit",
        "Claude AI usage limit reached|1796036400",
    );
    let repo = repo_running(
        &[
            printing(
                "claude",
                "claude-json",
                Actor::agent("x").edit("docs/a.md", "a"),
                &capture("claude/rate-limit-429.json"),
                "1",
            ),
            printing("limited", "claude-json", Actor::agent("x"), &limit, "1"),
        ],
        "",
    );
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "rate_limited");
    assert_eq!(state["error"]["kind"], "rate_limited");
    assert_eq!(
        state["error"]["message"],
        "rate limited (claude-json: API Error: Request rejected (429) · Number of request tokens \
         has exceeded your per-minute rate limit)"
    );
    let a = attempt(&state, "executor", 1);
    assert_eq!(a["exit_code"], 1);
    assert_eq!(a["usage"]["input_tokens"], 0);
    assert_eq!(a["usage"]["cost_usd"], 0.0);
    assert_eq!(
        a["agent"]["session_id"],
        "77bab9f3-4f01-490c-8de0-93315c461479"
    );
    assert_eq!(a["agent"].get("rate_limit_reset"), None);

    let run = repo.baton(["resume", &id, "--actor", "executor=limited"]);
    assert_eq!(run.code, 1, "{run}");
    let state = status(&repo, &id);
    let a = attempt(&state, "executor", 2);
    assert_eq!(a["outcome"], "rate_limited");
    assert_eq!(
        a["agent"]["rate_limit_reset"],
        serde_json::json!({"text": "1796036400", "at": "2026-11-30T11:00:00Z"})
    );
    assert!(
        repo.baton(["status", &id])
            .stdout
            .contains("#2 rate limit resets 1796036400, at 2026-11-30T11:00:00Z"),
    );
}

/// Output that is not the configured format is recorded as such, and the exit code decides.
#[test]
fn an_unparsable_output_is_recorded_as_such() {
    let repo = repo_running(
        &[Actor::agent("claude")
            .say("Error: unknown option '--output-format'")
            .exit("1")
            .set("output: claude-json")],
        "",
    );
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    let a = attempt(&state, "executor", 1);
    assert_eq!(a["outcome"], "failed");
    assert_eq!(a["usage"], Value::Null);
    assert_eq!(a.get("usage_source"), None);
    let unparsed = a["agent"]["unparsed"].as_str().unwrap();
    assert!(
        unparsed.starts_with("the output is not one JSON object: "),
        "{unparsed}"
    );
    let shown = repo.baton(["status", &id]).stdout;
    assert!(
        shown.contains("#1 output not read as claude-json: the output is not one JSON object"),
        "{shown}"
    );
}

/// Codex has printed `turn.failed` and exited 0: the structured failure wins over the exit
/// code; its usage and session are kept.
#[test]
fn turn_failed_with_exit_0_is_failed() {
    let dir = scratch();
    // The captured 429 run, its message one that names no rate limit.
    let failed = variant(
        &dir,
        "codex/rate-limit-429.jsonl",
        "exceeded retry limit, last status: 429 Too Many Requests",
        "stream disconnected before completion",
    );
    let repo = repo_running(
        &[printing(
            "codex",
            "codex-jsonl",
            Actor::agent("x").edit_all(),
            &failed,
            "0",
        )],
        "",
    );
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "failed");
    let a = attempt(&state, "executor", 1);
    assert_eq!(
        (&a["outcome"], &a["exit_code"]),
        (&"failed".into(), &0.into())
    );
    assert_eq!(
        a["error"],
        "the actor exited with code 0; its output (codex-jsonl) reports a failure: stream \
         disconnected before completion"
    );
    assert_eq!(
        a["agent"]["session_id"],
        "01a22e0a-0ced-7953-a637-7d3c9591dff6"
    );
}

/// A rate-limited stage falls back at once, actor after actor, as resumed attempts with the
/// resume prompt and the gate; the chain ends in review, and each attempt records where it fell
/// back from.
#[test]
fn a_fallback_chain_ends_in_review() {
    let claude = printing(
        "claude",
        "claude-json",
        Actor::agent("x").edit("docs/a.md", "a"),
        &capture("claude/rate-limit-429.json"),
        "1",
    );
    let codex = printing(
        "codex",
        "codex-jsonl",
        Actor::agent("x"),
        &capture("codex/usage-limit.jsonl"),
        "1",
    );
    let finisher = printing(
        "finisher",
        "codex-jsonl",
        Actor::agent("x")
            .edit("docs/b.md", "b")
            .edit("docs/c.md", "c"),
        &capture("codex/success.jsonl"),
        "0",
    );
    let repo = repo_running(&[claude, codex, finisher], "");
    // The pipeline of `repo_running`, the executor given its fallbacks.
    let yml = text(&repo.path(".baton.yml")).replace(
        "actor: claude, gate: coverage }",
        "actor: claude, gate: coverage, fallback: [codex, finisher] }",
    );
    repo.write(".baton.yml", &yml);
    repo.commit_all("fallbacks");
    let (id, run) = repo.run_plan("plans/fix.md", 0);
    assert!(
        run.stderr.contains(
            "note: attempt 1 of stage executor was rate limited; falling back to actor `codex`"
        ),
        "{run}"
    );
    let state = status(&repo, &id);
    assert_eq!(state["status"], "review");
    assert_executor_attempts(
        &state,
        &[
            ("claude", "rate_limited"),
            ("codex", "rate_limited"),
            ("finisher", "succeeded"),
        ],
    );
    assert_eq!(
        attempt_field(&state, "executor", "resumed"),
        [false, true, true]
    );
    assert_eq!(attempt(&state, "executor", 1).get("fallback_from"), None);
    let from = &attempt(&state, "executor", 2)["fallback_from"];
    assert_eq!(
        (&from["attempt"], &from["actor"]),
        (&1.into(), &"claude".into())
    );
    assert!(
        from["reason"]
            .as_str()
            .unwrap()
            .starts_with("rate limited (claude-json: API Error")
    );
    let from = &attempt(&state, "executor", 3)["fallback_from"];
    assert_eq!(
        (&from["attempt"], &from["actor"]),
        (&2.into(), &"codex".into())
    );
    // A wall-clock time without a zone: read in the local one, which the words then name.
    let reset = &attempt(&state, "executor", 2)["agent"]["rate_limit_reset"];
    assert!(
        reset["text"]
            .as_str()
            .unwrap()
            .starts_with("at 10:00 AM (in the local time zone, "),
        "{reset}"
    );
    assert!(reset["at"].is_string(), "{reset}");
    assert_eq!(
        stage(&state, "executor")["fallback"],
        serde_json::json!(["codex", "finisher"])
    );
    // Resumed like `resume --actor`: the resume prompt, the gate.
    let prompt = text(&run_dir(&repo, &id).join("attempts/executor-3/prompt.md"));
    assert!(prompt.contains("This is a resumed attempt"), "{prompt}");
    assert_eq!(attempt(&state, "executor", 3)["coverage"]["passed"], true);
    // Codex's 2100 input tokens less the 1024 cached: input as Claude Code counts it.
    assert_eq!(state["usage"]["input_tokens"], 1076);
    assert_eq!(
        state["usage"]["attempts_without_cost"], 1,
        "codex reports no cost"
    );
}

/// When every actor of the list was rate limited too, the run stops rate limited, each actor
/// tried once; without `fallback` a rate limit stops the run after one attempt, as before.
#[test]
fn a_fallback_chain_runs_out_of_actors() {
    let claude = printing(
        "claude",
        "claude-json",
        Actor::agent("x"),
        &capture("claude/rate-limit-429.json"),
        "1",
    );
    let codex = printing(
        "codex",
        "codex-jsonl",
        Actor::agent("x"),
        &capture("codex/rate-limit-429.jsonl"),
        "1",
    );
    let repo = repo_with(&config(
        &[claude, codex, writer()],
        "pipeline:\n  - { stage: executor, actor: claude, gate: coverage, fallback: [codex, claude] }\n  - { stage: reporter, actor: writer }\n",
    ));
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "rate_limited");
    assert_eq!(
        attempt_field(&state, "executor", "actor"),
        ["claude", "codex"]
    );
    assert_eq!(
        state["error"]["message"],
        "rate limited (codex-jsonl: exceeded retry limit, last status: 429 Too Many Requests)"
    );

    // A resume starts a new chain: the configured actor, then the fallbacks again.
    let run = repo.baton(["resume", &id]);
    assert_eq!(run.code, 1, "{run}");
    let state = status(&repo, &id);
    assert_eq!(
        attempt_field(&state, "executor", "actor"),
        ["claude", "codex", "claude", "codex"]
    );
    assert_eq!(attempt(&state, "executor", 3).get("fallback_from"), None);

    let plain = repo_running(
        &[printing(
            "claude",
            "claude-json",
            Actor::agent("x"),
            &capture("claude/rate-limit-429.json"),
            "1",
        )],
        "",
    );
    let run = plain.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 1, "{run}");
    let state = status(&plain, &run.run_id());
    assert_eq!(attempt_field(&state, "executor", "actor"), ["claude"]);
}

/// An output `log_limit` cut is read in its head and tail: the Codex turn in the tail still
/// counts, and the attempt and the totals say that what the middle held is missing.
#[test]
fn a_cut_output_still_gives_its_tail_and_says_so() {
    let codex = Actor::agent("codex")
        .edit_all()
        .verbs(&["flood", "5000", "say", ""])
        .verbs(&["cat", &capture("codex/success.jsonl")])
        .set("output: codex-jsonl");
    let repo = repo_running(&[codex], "log_limit: 2KiB\n");
    let (id, _) = repo.run_plan("plans/fix.md", 0);
    let log = text(&run_dir(&repo, &id).join("attempts/executor-1/stdout.log"));
    assert!(log.contains("(log_limit)]"), "the log was not cut: {log}");
    let state = status(&repo, &id);
    let a = attempt(&state, "executor", 1);
    assert_eq!(a["agent"]["cut"], true);
    assert_eq!(a["usage"]["output_tokens"], 57);
    assert_eq!(state["usage"]["attempts_cut"], 1);
    assert_eq!(state["usage"]["lower_bound"], true);
    let shown = repo.baton(["status", &id]).stdout;
    assert!(
        shown.contains("1 attempt(s) had output cut by log_limit"),
        "{shown}"
    );
    // Codex reports no cost: its stage shows none rather than $0.00.
    let row = shown
        .lines()
        .find(|l| l.trim_start().starts_with("executor"))
        .unwrap();
    assert!(row.ends_with(" -") && row.contains(" 1133 "), "{row}");
}
