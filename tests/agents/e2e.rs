//! The real Claude Code and Codex through the real `git baton`, with the actors exactly as
//! `git baton init` writes them: an edit reaches `review` with the agent's usage and cost
//! recorded, and a 429 or a subscription limit ends the attempt `rate_limited`.

use serde_json::{Value, json};

use super::cli;
use super::harness::{AgentRepo, TARGETS, assert_prompt, attempt};
use super::mock::{Script, Turn, Usage};

/// Tokens per model turn, large enough that costs show in `status`'s cents.
pub const TURN: Usage = Usage {
    input: 20_000,
    output: 2_000,
    cache_read: 0,
};

/// A turn reporting [`TURN`].
pub fn turn(t: Turn) -> Turn {
    t.with_usage(TURN)
}

/// [`TURN`] and 5,000 more prompt tokens read from the provider's cache: for the CLIs whose
/// usage counts cache reads apart (Gemini CLI, opencode).
pub const CACHED_TURN: Usage = Usage {
    cache_read: 5_000,
    ..TURN
};

/// A turn reporting [`CACHED_TURN`].
pub fn cached_turn(t: Turn) -> Turn {
    t.with_usage(CACHED_TURN)
}

/// The state of run `id`, which must be in `review` with every target's [`new_text`] in its
/// worktree.
#[track_caller]
pub fn assert_review_with_targets_edited(ar: &AgentRepo, id: &str) -> Value {
    let state = ar.status(id);
    assert_eq!(state["status"], "review", "{state:#}");
    let worktree = ar.worktree(&state);
    for target in TARGETS {
        assert_eq!(
            std::fs::read_to_string(worktree.join(target)).unwrap(),
            new_text(target),
            "{target}"
        );
    }
    state
}

/// The new text of a target.
pub fn new_text(target: &str) -> String {
    let name = target
        .trim_start_matches("docs/")
        .trim_end_matches(".md")
        .to_uppercase();
    format!("# {name}\n\nGrades are A to F.\n")
}

/// Claude Code edits an existing file: `Read` first (its `Write` refuses a file it has not
/// read), then `Write`; paths relative to its working directory, the run's worktree.
pub fn claude_edits(target: &str) -> [Turn; 2] {
    [
        turn(Turn::tool("Read", json!({"file_path": target}))),
        turn(Turn::tool(
            "Write",
            json!({"file_path": target, "content": new_text(target)}),
        )),
    ]
}

/// Codex edits a file with a shell command in its sandbox.
pub fn codex_edits(target: &str) -> Turn {
    let text = new_text(target).replace('\n', "\\n");
    turn(Turn::codex_exec(&format!("printf '{text}' > {target}")))
}

/// `git baton init`'s presets, committed, with only the gated stage gaining `fallback: [codex]`.
pub fn fall_back_to_codex(ar: &AgentRepo) {
    let yml = ar.init();
    let stage = "{ stage: executor, actor: claude, gate: coverage }";
    ar.repo.write(
        ".baton.yml",
        &yml.replace(
            stage,
            "{ stage: executor, actor: claude, gate: coverage, fallback: [codex] }",
        ),
    );
    ar.repo.commit_all("fall back to codex");
}

/// A 429 that Claude Code does not retry (its SDK retries a 429 for minutes otherwise).
pub fn rate_limited() -> Turn {
    Turn::rate_limited(&[("retry-after", "60"), ("x-should-retry", "false")])
}

pub fn u64_of(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// That `attempt` succeeded with its usage from the agent's output: `turns` times `turn`, input
/// without the cached tokens (the one meaning of docs/agents.md), the cache reads apart.
pub fn assert_output_usage(attempt: &Value, turns: u64, turn: &Usage) {
    let a = attempt;
    assert_eq!(a["outcome"], "succeeded", "{a:#}");
    assert_eq!(a["usage_source"], "output", "{a:#}");
    assert_eq!(
        u64_of(&a["usage"]["input_tokens"]),
        turns * turn.input,
        "{a:#}"
    );
    assert_eq!(
        u64_of(&a["usage"]["output_tokens"]),
        turns * turn.output,
        "{a:#}"
    );
    assert_eq!(
        u64_of(&a["agent"]["cache_read_input_tokens"]),
        turns * turn.cache_read,
        "{a:#}"
    );
}

/// The coverage row of `target` in a `status --json` document.
pub fn coverage_row<'v>(state: &'v Value, target: &str) -> &'v Value {
    state["coverage"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["target"] == target)
        .unwrap_or_else(|| panic!("no coverage row for {target}: {state:#}"))
}

pub fn f64_of(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not an amount: {v}"))
}

/// `a` and `b` equal to the cent's hundredth: recorded amounts go through JSON as decimals.
pub fn same_amount(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn claude_preset_edits_both_targets_and_the_run_reaches_review_with_usage_and_cost() {
    let Some(_) = cli::agent("claude") else {
        return;
    };
    let mut script: Vec<Turn> = TARGETS.iter().flat_map(|t| claude_edits(t)).collect();
    script.push(turn(Turn::text("Both documents state the new rule.")));
    let ar = AgentRepo::new(Script(script));
    ar.init();
    let run = ar.baton(&["run", "plans/rule.md"]);
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    let state = assert_review_with_targets_edited(&ar, &id);
    assert_eq!(ar.mock.overruns(), 0);

    // The prompt reached the model, teaching the agent-side commands.
    let sent = ar.mock.scripted();
    assert_eq!(sent.len(), 5);
    assert_prompt(&sent[0], "git baton unchanged");

    // What Claude Code printed is what the attempt records: five turns' tokens, its own cost,
    // its session.
    let a = attempt(&state, 1);
    assert_eq!(a["outcome"], "succeeded", "{a:#}");
    assert_eq!(a["usage_source"], "output", "{a:#}");
    assert_eq!(u64_of(&a["usage"]["input_tokens"]), 5 * TURN.input, "{a:#}");
    assert_eq!(u64_of(&a["usage"]["output_tokens"]), 5 * TURN.output);
    let cost = ar.claude_cost(&id, 1);
    assert!(same_amount(f64_of(&a["usage"]["cost_usd"]), cost), "{a:#}");
    assert_eq!(a["agent"]["format"], "claude-json", "{a:#}");
    assert_eq!(
        a["agent"]["session_id"].as_str(),
        sent[0].header("x-claude-code-session-id"),
        "{a:#}"
    );
    // Every target was covered when Claude Code stopped: its Stop hook let it stop at once.
    assert_eq!(a["hook_blocks"].as_u64().unwrap_or(0), 0, "{a:#}");

    // The run's totals, and `status` shows them.
    assert_eq!(u64_of(&state["usage"]["input_tokens"]), 5 * TURN.input);
    assert_eq!(u64_of(&state["usage"]["output_tokens"]), 5 * TURN.output);
    assert!(same_amount(f64_of(&state["usage"]["cost_usd"]), cost));
    assert_eq!(state["usage"]["attempts_without_usage"], 0);
    let text = ar.baton(&["status", &id]);
    let total = format!(
        "total as the actors reported it: {} input + {} output tokens, ${cost:.2}",
        5 * TURN.input,
        5 * TURN.output
    );
    assert!(text.stdout.contains(&total), "no {total:?} in\n{text}");
}

#[test]
fn codex_preset_edits_the_targets_through_exec_command_and_the_run_reaches_review() {
    let Some(_) = cli::agent("codex") else { return };
    let mut script: Vec<Turn> = TARGETS.iter().map(|t| codex_edits(t)).collect();
    script.push(turn(Turn::text("Both documents state the new rule.")));
    let ar = AgentRepo::new(Script(script));
    ar.init();
    let run = ar.baton(&["run", "plans/rule.md", "--actor", "executor=codex"]);
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    let state = assert_review_with_targets_edited(&ar, &id);
    let sent = ar.mock.scripted();
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[0].path, "/v1/responses");
    assert!(sent[0].body.contains("Replace the old rule"));
    // The commands ran: Codex sent their results back.
    assert!(
        sent[1].body.contains("function_call_output"),
        "{}",
        sent[1].body
    );

    let a = attempt(&state, 1);
    assert_eq!(a["actor"], "codex");
    assert_eq!(a["outcome"], "succeeded", "{a:#}");
    assert_eq!(a["usage_source"], "output", "{a:#}");
    assert_eq!(u64_of(&a["usage"]["input_tokens"]), 3 * TURN.input, "{a:#}");
    assert_eq!(u64_of(&a["usage"]["output_tokens"]), 3 * TURN.output);
    // Codex reports no cost, and none is made up.
    assert!(a["usage"]["cost_usd"].is_null(), "{a:#}");
    assert_eq!(a["agent"]["format"], "codex-jsonl", "{a:#}");
    assert_eq!(
        a["agent"]["session_id"].as_str(),
        sent[0].header("session-id"),
        "{a:#}"
    );
}

/// A run whose Claude Code attempt edits `docs/a.md` and then gets a 429, exit 1: the
/// repository and the run's id.
pub fn claude_edits_then_429() -> (AgentRepo, String) {
    let mut script = claude_edits("docs/a.md").to_vec();
    script.push(rate_limited());
    let ar = AgentRepo::new(Script(script));
    ar.init();
    let run = ar.baton(&["run", "plans/rule.md"]);
    assert_eq!(run.code, 1, "{run}");
    let id = run.run_id();
    (ar, id)
}

#[test]
fn a_429_ends_the_claude_attempt_rate_limited_with_the_usage_so_far() {
    let Some(_) = cli::agent("claude") else {
        return;
    };
    let (ar, id) = claude_edits_then_429();
    let (state, a) = ar.rate_limited(&id, 1);
    // Recognised from Claude Code's JSON (`api_error_status: 429`), not from a text pattern:
    // the error names the output format that said so.
    let error = a["error"].as_str().unwrap();
    assert!(
        error.starts_with("rate limited (claude-json: API Error: Request rejected (429)"),
        "{error}"
    );
    // The two turns before the 429, as Claude Code counted and priced them.
    assert_eq!(u64_of(&a["usage"]["input_tokens"]), 2 * TURN.input, "{a:#}");
    assert_eq!(u64_of(&a["usage"]["output_tokens"]), 2 * TURN.output);
    assert!(same_amount(
        f64_of(&a["usage"]["cost_usd"]),
        ar.claude_cost(&id, 1)
    ));
    assert_eq!(
        std::fs::read_to_string(ar.worktree(&state).join("docs/a.md")).unwrap(),
        new_text("docs/a.md")
    );
}

#[test]
fn a_subscription_limit_is_recognised_by_claude_codes_structured_signal_with_its_reset() {
    let Some(_) = cli::agent("claude") else {
        return;
    };
    // A subscriber out of quota. Claude Code 2.1.332 words it "You've hit your 5-hour limit ·
    // resets Dec 4, 5pm (Europe/Berlin)" (older builds: "You've hit your limit"); whatever the words,
    // the 429 in its JSON (`api_error_status`) is the signal.
    // Past the hour by 37 min 13 s: the words name the minute, the stream-json event the second.
    let (reset, worded) = super::subscription_reset_past_the_hour(37 * 60 + 13);
    let ar = AgentRepo::new(Script(vec![Turn::rate_limited(&[
        ("anthropic-ratelimit-unified-status", "rejected"),
        ("anthropic-ratelimit-unified-reset", &reset),
        (
            "anthropic-ratelimit-unified-representative-claim",
            "five_hour",
        ),
        ("x-should-retry", "false"),
    ])]))
    .subscriber("Europe/Berlin");
    ar.init();
    let run = ar.baton(&["run", "plans/rule.md"]);
    assert_eq!(run.code, 1, "{run}");
    let id = run.run_id();
    let out = ar.claude_result(&id, 1);
    assert_eq!(
        out["result"],
        format!("You've hit your 5-hour limit \u{b7} resets {worded}")
    );
    let state = ar.status(&id);
    let a = attempt(&state, 1);
    assert_eq!(a["outcome"], "rate_limited", "{a:#}");
    let error = a["error"].as_str().unwrap();
    assert!(
        error.starts_with("rate limited (claude-json: You've hit your 5-hour limit"),
        "{error}"
    );
    assert_eq!(
        a["agent"]["rate_limit_reset"]["text"],
        worded.as_str(),
        "{a:#}"
    );
    // The instant the API gave, to the second: the `resetsAt` of the preset's stream-json.
    let at = jiff::Timestamp::from_second(reset.parse().unwrap()).unwrap();
    assert_eq!(
        a["agent"]["rate_limit_reset"]["at"],
        at.to_string(),
        "{a:#}"
    );
}

#[test]
fn a_rate_limited_claude_falls_back_to_codex_within_the_same_run() {
    let (Some(_), Some(_)) = (cli::agent("claude"), cli::agent("codex")) else {
        return;
    };
    // Claude Code changes docs/a.md and is rate limited (its provider stays limited); Codex,
    // another provider, takes over at once and changes docs/b.md.
    let mut script = claude_edits("docs/a.md").to_vec();
    script.push(rate_limited());
    script.push(codex_edits("docs/b.md"));
    script.push(turn(Turn::text("docs/b.md states the new rule.")));
    let ar = AgentRepo::new(Script(script));
    fall_back_to_codex(&ar);
    let run = ar.baton(&["run", "plans/rule.md"]);
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    let state = assert_review_with_targets_edited(&ar, &id);
    let (first, second) = (attempt(&state, 1), attempt(&state, 2));
    assert_eq!(first["actor"], "claude");
    assert_eq!(first["outcome"], "rate_limited", "{first:#}");
    assert_eq!(second["actor"], "codex");
    assert_eq!(second["outcome"], "succeeded", "{second:#}");
    assert_eq!(second["resumed"], true, "{second:#}");
    assert_eq!(second["fallback_from"]["attempt"], 1, "{second:#}");
    assert_eq!(second["fallback_from"]["actor"], "claude", "{second:#}");
    // Codex got the resume prompt: docs/a.md already changed, docs/b.md not yet.
    let codex_request = ar
        .mock
        .scripted()
        .into_iter()
        .find(|r| r.path == "/v1/responses")
        .unwrap();
    assert!(
        codex_request.body.contains("resumed attempt"),
        "{}",
        codex_request.body
    );
    // Both attempts' usage in the totals; the cost is Claude Code's alone.
    assert_eq!(u64_of(&state["usage"]["input_tokens"]), 4 * TURN.input);
    assert!(same_amount(
        f64_of(&state["usage"]["cost_usd"]),
        ar.claude_cost(&id, 1)
    ));
    assert_eq!(ar.mock.overruns(), 0);
}

#[test]
fn a_429_ends_the_codex_attempt_rate_limited_from_its_turn_failed() {
    let Some(_) = cli::agent("codex") else { return };
    // No retry-after: Codex waits as long as it says before its one retry.
    let ar = AgentRepo::new(Script(vec![
        codex_edits("docs/a.md"),
        Turn::rate_limited(&[]),
    ]));
    ar.init();
    let run = ar.baton(&["run", "plans/rule.md", "--actor", "executor=codex"]);
    assert_eq!(run.code, 1, "{run}");
    let id = run.run_id();
    let (state, a) = ar.rate_limited(&id, 1);
    let error = a["error"].as_str().unwrap();
    assert_eq!(
        error,
        "rate limited (codex-jsonl: exceeded retry limit, last status: 429 Too Many Requests)"
    );
    assert_eq!(
        a["agent"]["session_id"].as_str(),
        ar.mock.scripted()[0].header("session-id"),
        "{a:#}"
    );
    // Codex prints no usage for a turn that failed, so none is recorded (the run's totals say
    // that they miss an attempt) — the edit before the 429 is in the worktree all the same.
    assert!(a["usage"].is_null(), "{a:#}");
    assert_eq!(state["usage"]["attempts_without_usage"], 1, "{state:#}");
    assert_eq!(
        std::fs::read_to_string(ar.worktree(&state).join("docs/a.md")).unwrap(),
        new_text("docs/a.md")
    );
}
