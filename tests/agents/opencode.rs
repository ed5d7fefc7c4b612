//! The real opencode through the real `git baton`, with the actor exactly as `git baton init
//! --agent opencode` writes it, against the mock's Anthropic messages (opencode's
//! `@ai-sdk/anthropic` provider, [`cli::AgentEnv::vars`]): an edit and a reason recorded with
//! `git baton unchanged` reach `review` with opencode's usage and cost, a 429 — OpenAI's quota
//! wording included — ends the attempt `rate_limited`, and a shell command the preset does not
//! allow never runs, so the work stays unfinished and the gate blocks. What opencode printed is
//! captured into testdata/agents/opencode/ with `GIT_BATON_AGENT_CAPTURE=1`.
//!
//! Every test also proves opencode stayed offline: the mock saw nothing but the model's requests
//! and the npm registry's, which it refuses ([`assert_offline`]).

use serde_json::{Value, json};

use super::e2e::{CACHED_TURN, cached_turn, f64_of, new_text, same_amount};
use super::harness::{AgentRepo, TARGETS, assert_prompt, attempt};
use super::mock::{MockServer, Script, Turn};
use super::{cli, events};

/// opencode's `write` tool, a turn of [`CACHED_TURN`] (whose cache reads show that opencode's
/// `input` leaves them out): a path relative to its working directory, the run's worktree.
pub(super) fn write(target: &str) -> Turn {
    cached_turn(Turn::tool(
        "write",
        json!({"filePath": target, "content": new_text(target)}),
    ))
}

/// opencode's `bash` tool running `command`.
fn bash(command: &str) -> Turn {
    cached_turn(Turn::tool(
        "bash",
        json!({"command": command, "description": "Run a command"}),
    ))
}

/// A repository with `.baton.yml` as `init --agent opencode` wrote it, committed unchanged.
pub(super) fn opencode_repo(script: Script) -> AgentRepo {
    let ar = AgentRepo::new(script);
    let yml = ar.init_agent("opencode");
    assert!(yml.contains("output: opencode-jsonl"), "{yml}");
    ar
}

/// The mock saw only the model's messages and opencode's one look at the npm registry (which the
/// test environment points at the mock, and the mock refuses); anything else fails by name.
pub(super) fn assert_offline(mock: &MockServer) {
    for r in mock.requests() {
        let model = r.method == "POST" && r.path.starts_with("/v1/messages");
        let npm = r.method == "GET" && r.path.starts_with(&format!("{}/", cli::NPM_REGISTRY));
        assert!(
            model || npm,
            "opencode sent a request the mock was not scripted for: {} {}",
            r.method,
            r.path
        );
    }
}

#[test]
fn opencode_preset_edits_records_a_reason_and_the_run_reaches_review_with_usage_and_cost() {
    let Some(_) = cli::agent("opencode") else {
        return;
    };
    let reason = "docs/a.md now states the rule for both documents";
    let ar = opencode_repo(Script(vec![
        write("docs/a.md"),
        bash(&format!("git baton unchanged docs/b.md '{reason}'")),
        cached_turn(Turn::text("docs/a.md states the new rule.")),
    ]));
    let (id, stdout) = ar.run_rule("opencode", "e2e-edit-unchanged.jsonl", 0);
    let state = ar.status(&id);
    assert_eq!(state["status"], "review", "{state:#}");
    let worktree = ar.worktree(&state);
    assert_eq!(
        std::fs::read_to_string(worktree.join("docs/a.md")).unwrap(),
        new_text("docs/a.md")
    );
    assert_eq!(
        std::fs::read_to_string(worktree.join("docs/b.md")).unwrap(),
        "# B\n\nThe old rule.\n"
    );
    assert_offline(&ar.mock);
    assert_eq!(ar.mock.overruns(), 0, "{stdout}");

    // The prompt went on stdin, whole, with opencode's tools beside it.
    let sent = ar.mock.scripted();
    assert_eq!(sent.len(), 3, "{stdout}");
    // The prompt teaches it the agent-side commands.
    assert_prompt(&sent[0], "git baton unchanged");
    // The reason went through the allowed command and reached the gate.
    let ev = events(&stdout);
    let tools: Vec<&Value> = ev.iter().filter(|e| e["type"] == "tool_use").collect();
    assert_eq!(tools.len(), 2, "{stdout}");
    assert!(
        tools
            .iter()
            .all(|t| t["part"]["state"]["status"] == "completed"),
        "{stdout}"
    );
    let b = super::e2e::coverage_row(&state, TARGETS[1]);
    assert_eq!(b["status"], "unchanged", "{b:#}");

    // Three steps of CACHED_TURN; input without the cache reads, as for Claude Code.
    let a = attempt(&state, 1);
    super::e2e::assert_output_usage(a, 3, &CACHED_TURN);
    // The cost is opencode's own figure (from the model's price in its configuration).
    let printed: f64 = ev
        .iter()
        .filter(|e| e["type"] == "step_finish")
        .map(|e| f64_of(&e["part"]["cost"]))
        .sum();
    assert!(printed > 0.0, "{stdout}");
    assert!(
        same_amount(f64_of(&a["usage"]["cost_usd"]), printed),
        "{a:#}"
    );
    assert_eq!(a["agent"]["format"], "opencode-jsonl", "{a:#}");
    assert_eq!(a["agent"]["session_id"], ev[0]["sessionID"], "{a:#}");
    assert!(a["agent"]["unparsed"].is_null(), "{a:#}");
}

/// A 429 to every try of opencode's, answered at once (`retry-after-ms: 1`; opencode waits what
/// `retry-after` says, 120 s for `retry-after: 120`), with `body` as the error.
fn rate_limited_run(body: Value, name: &str) -> Option<(AgentRepo, String, Value)> {
    cli::agent("opencode")?;
    let ar = opencode_repo(Script(vec![Turn::Error {
        status: 429,
        headers: vec![("retry-after-ms".into(), "1".into())],
        body,
    }]));
    let (id, stdout) = ar.run_rule("opencode", name, 1);
    assert_offline(&ar.mock);
    let (_, a) = ar.rate_limited(&id, 1);
    assert_eq!(
        a["agent"]["rate_limit_reset"]["text"], "retry-after-ms: 1",
        "{a:#}"
    );
    // 1 ms rounded up to a second after the attempt ended.
    let ended: jiff::Timestamp = a["ended_at"].as_str().unwrap().parse().unwrap();
    let at: jiff::Timestamp = a["agent"]["rate_limit_reset"]["at"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(at.duration_since(ended).as_secs(), 1, "{a:#}");
    assert!(a["usage"].is_null(), "no answer, no usage: {a:#}");
    // One error event, after opencode's own retries.
    let ev = events(&stdout);
    assert_eq!(ev.len(), 1, "{stdout}");
    assert_eq!(ev[0]["error"]["data"]["statusCode"], 429, "{stdout}");
    assert!(ar.mock.scripted().len() > 1, "opencode retried");
    Some((ar, id, a))
}

#[test]
fn a_429_ends_the_opencode_attempt_rate_limited_with_its_retry_after() {
    let Turn::Error { body, .. } = Turn::rate_limited(&[]) else {
        unreachable!("a rate limit is an error turn")
    };
    let Some((_, _, a)) = rate_limited_run(body, "e2e-429.jsonl") else {
        return;
    };
    let error = a["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "rate limited (opencode-jsonl: This request would exceed your account's rate limit."
        ),
        "{error}"
    );
}

#[test]
fn a_quota_429_worded_as_openais_is_rate_limited_too() {
    let body = json!({"error": {
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "type": "insufficient_quota",
        "code": "insufficient_quota"
    }});
    let Some((_, _, a)) = rate_limited_run(body, "e2e-quota-429.jsonl") else {
        return;
    };
    let error = a["error"].as_str().unwrap();
    assert!(
        error.starts_with("rate limited (opencode-jsonl: "),
        "{error}"
    );
    assert!(error.contains("You exceeded your current quota"), "{error}");
}

#[test]
fn shell_commands_the_preset_denies_never_run_and_the_gate_blocks() {
    let Some(_) = cli::agent("opencode") else {
        return;
    };
    let text = new_text("docs/a.md").replace('\n', "\\n");
    let ar = opencode_repo(Script(vec![
        bash(&format!("printf '{text}' > docs/a.md")),
        // The Stop hook's form of `check` is not one of the agent-side commands.
        bash("git baton check --hook claude-stop"),
        cached_turn(Turn::text("Done.")),
    ]));
    let (id, stdout) = ar.run_rule("opencode", "e2e-denied.jsonl", 1);
    assert_offline(&ar.mock);
    let (state, a) = ar.ended_as(&id, "blocked");
    assert_eq!(a["outcome"], "blocked", "{a:#}");
    assert_eq!(a["exit_code"], 0, "{a:#}");
    assert_eq!(
        std::fs::read_to_string(ar.worktree(&state).join("docs/a.md")).unwrap(),
        "# A\n\nThe old rule.\n"
    );
    // Both refused by a rule, and the model told so; the hook's block count untouched.
    let ev = events(&stdout);
    let tools: Vec<&Value> = ev.iter().filter(|e| e["type"] == "tool_use").collect();
    assert_eq!(tools.len(), 2, "{stdout}");
    for tool in &tools {
        assert_eq!(tool["part"]["state"]["status"], "error", "{stdout}");
        let why = tool["part"]["state"]["error"].as_str().unwrap();
        assert!(
            why.starts_with("The user has specified a rule which prevents you"),
            "{why}"
        );
    }
    assert!(a["hook_blocks"].is_null(), "{a:#}");
    assert_eq!(ar.mock.scripted().len(), 3, "{stdout}");
}

#[test]
fn a_write_outside_the_worktree_asks_is_rejected_and_ends_the_run_for_the_gate_to_block() {
    let Some(_) = cli::agent("opencode") else {
        return;
    };
    // The main checkout's copy of the target, not the run's worktree: opencode's
    // `external_directory` permission asks, and `opencode run` rejects what would ask.
    let outside = std::env::temp_dir().join(format!(
        "git-baton-opencode-outside-{}.md",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&outside);
    let ar = opencode_repo(Script(vec![
        cached_turn(Turn::tool(
            "write",
            json!({"filePath": outside.display().to_string(), "content": new_text("docs/a.md")}),
        )),
        cached_turn(Turn::text("Done.")),
    ]));
    let run = ar.baton(&["run", "plans/rule.md"]);
    let id = run.run_id();
    let stdout = ar.stdout(&id, 1);
    let written = outside.exists();
    let _ = std::fs::remove_file(&outside);
    assert!(!written, "opencode wrote outside its worktree:\n{stdout}");
    assert_eq!(run.code, 1, "{run}\n--- opencode's stdout\n{stdout}");
    assert_offline(&ar.mock);
    // The run ended at the rejection: the script's answer was never asked for.
    assert_eq!(ar.mock.played(), 1, "{stdout}");
    let ev = events(&stdout);
    let tool = ev.iter().find(|e| e["type"] == "tool_use").unwrap();
    assert_eq!(
        tool["part"]["state"]["error"],
        "The user rejected permission to use this specific tool call.",
        "{stdout}"
    );
    let (_, a) = ar.ended_as(&id, "blocked");
    assert_eq!(
        (&a["outcome"], &a["exit_code"]),
        (&"blocked".into(), &0.into()),
        "{a:#}"
    );
}
