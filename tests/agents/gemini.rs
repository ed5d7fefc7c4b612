//! The real Gemini CLI through the real `git baton`, with the actor exactly as `git baton init
//! --agent gemini` writes it, against the mock's `streamGenerateContent` (`GOOGLE_GEMINI_BASE_URL`,
//! `GEMINI_API_KEY` and the settings of [`cli::AgentEnv::with_home`]): an edit and a reason
//! recorded with `git baton unchanged` reach `review` with Gemini's usage and model, a 429 exits
//! 173 and ends the attempt `rate_limited` (with the usage of the turns before it), and the Stop
//! hook's form of `check` is refused. What
//! Gemini printed is captured into testdata/agents/gemini/ with `GIT_BATON_AGENT_CAPTURE=1`.

use serde_json::{Value, json};

use super::e2e::{CACHED_TURN, cached_turn, new_text, u64_of};
use super::harness::{AgentRepo, TARGETS, attempt};
use super::mock::{MockServer, Script, Turn};
use super::{cli, events};

/// A `run_shell_command` turn of [`CACHED_TURN`]: Gemini's prompt count holds the cached tokens
/// (the mock sends `promptTokenCount` = input + cache reads).
fn shell(command: &str) -> Turn {
    cached_turn(Turn::tool("run_shell_command", json!({"command": command})))
}

/// A repository with `.baton.yml` as `init --agent gemini` wrote it, committed unchanged.
fn gemini_repo(script: Script) -> AgentRepo {
    let ar = AgentRepo::new(script);
    ar.init_agent("gemini");
    ar
}

/// Every request the mock saw was Gemini's model request for [`cli::GEMINI_MODEL`].
fn assert_offline(mock: &MockServer) {
    let path = format!(
        "/v1beta/models/{}:streamGenerateContent?alt=sse",
        cli::GEMINI_MODEL
    );
    for r in mock.requests() {
        assert!(
            r.method == "POST" && r.path == path,
            "Gemini CLI sent a request the mock was not scripted for: {} {}",
            r.method,
            r.path
        );
    }
}

#[test]
fn gemini_preset_edits_records_a_reason_and_the_run_reaches_review_with_usage() {
    let Some(_) = cli::agent("gemini") else {
        return;
    };
    let reason = "docs/a.md now states the rule for both documents";
    let ar = gemini_repo(Script(vec![
        cached_turn(Turn::tool(
            "write_file",
            json!({"file_path": "docs/a.md", "content": new_text("docs/a.md")}),
        )),
        shell(&format!("git baton unchanged docs/b.md '{reason}'")),
        cached_turn(Turn::text("docs/a.md states the new rule.")),
    ]));
    let (id, stdout) = ar.run_rule("gemini", "e2e-edit-unchanged.jsonl", 0);
    let state = ar.status(&id);
    assert_eq!(state["status"], "review", "{state:#}");
    assert_eq!(
        std::fs::read_to_string(ar.worktree(&state).join("docs/a.md")).unwrap(),
        new_text("docs/a.md")
    );
    assert_offline(&ar.mock);
    assert_eq!(ar.mock.overruns(), 0, "{stdout}");
    let sent = ar.mock.scripted();
    assert_eq!(sent.len(), 3, "{stdout}");
    assert_eq!(sent[0].header("x-goog-api-key"), Some(cli::API_KEY));
    assert!(
        sent[0].body.contains("Replace the old rule"),
        "the prompt on stdin"
    );
    let b = super::e2e::coverage_row(&state, TARGETS[1]);
    assert_eq!(b["status"], "unchanged", "{b:#}");

    // Input without the cached tokens, as for Claude Code.
    let a = attempt(&state, 1);
    super::e2e::assert_output_usage(a, 3, &CACHED_TURN);
    assert!(a["usage"]["cost_usd"].is_null(), "{a:#}");
    assert_eq!(a["usage"]["model"], cli::GEMINI_MODEL, "{a:#}");
    let ev = events(&stdout);
    assert_eq!(ev[0]["type"], "init", "{stdout}");
    assert_eq!(a["agent"]["session_id"], ev[0]["session_id"], "{a:#}");
    assert_eq!(a["agent"]["format"], "gemini-stream-json", "{a:#}");
}

#[test]
fn a_429_exits_173_and_ends_the_gemini_attempt_rate_limited() {
    let Some(_) = cli::agent("gemini") else {
        return;
    };
    let ar = gemini_repo(Script(vec![exhausted()]));
    let run = ar.baton(&["run", "plans/rule.md"]);
    let id = run.run_id();
    let stderr = ar.attempt_log(&id, "stderr");
    assert_eq!(run.code, 1, "{run}\n--- gemini's stderr\n{stderr}");
    assert_offline(&ar.mock);
    // 429 modulo 256.
    let (_, a) = ar.rate_limited(&id, 173);
    let error = a["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "rate limited (gemini-stream-json: [API Error: Resource has been exhausted"
        ),
        "{error}"
    );
    // `general.maxAttempts: 1`: one request, no retry.
    assert_eq!(ar.mock.scripted().len(), 1, "{stderr}");
    assert!(stderr.trim_end().ends_with('}'), "{stderr}");
}

#[test]
fn the_stop_hooks_form_of_check_is_not_approved_for_gemini() {
    let Some(_) = cli::agent("gemini") else {
        return;
    };
    let ar = gemini_repo(Script(vec![
        shell("git baton check --hook claude-stop"),
        cached_turn(Turn::text("Done.")),
    ]));
    let (id, stdout) = ar.run_rule("gemini", "e2e-check-refused.jsonl", 1);
    assert_offline(&ar.mock);
    let (_, a) = ar.ended_as(&id, "blocked");
    assert!(
        a["hook_blocks"].is_null(),
        "the hook's form never ran: {a:#}"
    );
    let hook = ar.repo.path(&format!(
        ".git/baton/runs/{id}/attempts/executor-1/stop-hook.json"
    ));
    assert!(!hook.exists(), "{}", hook.display());
    let ev = events(&stdout);
    let result: Vec<&Value> = ev.iter().filter(|e| e["type"] == "tool_result").collect();
    assert_eq!(result.len(), 1, "{stdout}");
    assert_eq!(result[0]["status"], "error", "{stdout}");
}

#[test]
fn a_429_after_a_turn_keeps_that_turns_usage() {
    let Some(_) = cli::agent("gemini") else {
        return;
    };
    let ar = gemini_repo(Script(vec![
        cached_turn(Turn::tool(
            "write_file",
            json!({"file_path": "docs/a.md", "content": new_text("docs/a.md")}),
        )),
        exhausted(),
    ]));
    let (id, _) = ar.run_rule("gemini", "e2e-write-then-429.jsonl", 1);
    assert_offline(&ar.mock);
    let (state, a) = ar.ended_as(&id, "rate_limited");
    assert_eq!(
        (&a["outcome"], &a["exit_code"]),
        (&"rate_limited".into(), &173.into()),
        "{a:#}"
    );
    // The first turn's tokens, which `--output-format json` would have lost.
    assert_eq!(
        u64_of(&a["usage"]["input_tokens"]),
        CACHED_TURN.input,
        "{a:#}"
    );
    assert_eq!(
        u64_of(&a["usage"]["output_tokens"]),
        CACHED_TURN.output,
        "{a:#}"
    );
    assert_eq!(
        std::fs::read_to_string(ar.worktree(&state).join("docs/a.md")).unwrap(),
        new_text("docs/a.md")
    );
}

/// Gemini's 429: `RESOURCE_EXHAUSTED`.
fn exhausted() -> Turn {
    Turn::Error {
        status: 429,
        headers: vec![],
        body: json!({"error": {"code": 429,
            "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED"}}),
    }
}

#[test]
fn a_429s_retry_delay_is_recorded_as_the_wait_from_the_attempts_end() {
    let Some(_) = cli::agent("gemini") else {
        return;
    };
    // A per-minute quota, as the Gemini API words it, with its `RetryInfo`.
    let ar = gemini_repo(Script(vec![Turn::Error {
        status: 429,
        headers: vec![],
        body: json!({"error": {"code": 429,
            "message": "Quota exceeded for metric: generate_content_free_tier_requests.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
                    {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                     "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "90.5s"}]}}),
    }]));
    let run = ar.baton(&["run", "plans/rule.md"]);
    let id = run.run_id();
    let stdout = ar.captured_stdout(&id, "gemini", "e2e-429-retry-info.jsonl");
    assert_eq!(run.code, 1, "{run}");
    let result = events(&stdout).pop().unwrap();
    assert!(
        result["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Suggested retry after 90.5s."),
        "{stdout}"
    );
    let state = ar.status(&id);
    let a = attempt(&state, 1);
    assert_eq!(a["outcome"], "rate_limited", "{a:#}");
    let reset = &a["agent"]["rate_limit_reset"];
    assert_eq!(reset["text"], "retry after 90.5s", "{a:#}");
    // 91 s (90.5 rounded up) after the attempt ended.
    let ended: jiff::Timestamp = a["ended_at"].as_str().unwrap().parse().unwrap();
    let at: jiff::Timestamp = reset["at"].as_str().unwrap().parse().unwrap();
    assert_eq!(at.duration_since(ended).as_secs(), 91, "{a:#}");
}
