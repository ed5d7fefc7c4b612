//! The real Claude Code on its own against the mock: what it sends, what it prints for a
//! success with usage and cost, a file written through `Write`, and an HTTP 429. Its printed
//! JSON is captured into testdata/agents/claude/ with `GIT_BATON_AGENT_CAPTURE=1` (the fixtures
//! of the output parser).

use std::time::Duration;

use serde_json::Value;

use super::cli::{self, AgentEnv};
use super::mock::{MockServer, Script, Turn};
use super::{capture, e2e, of_type, scratch};

const TIMEOUT: Duration = Duration::from_secs(120);

/// `claude -p PROMPT --output-format json --permission-mode acceptEdits` in `dir`.
fn claude_json(
    env: &AgentEnv,
    claude: &std::path::Path,
    dir: &std::path::Path,
    prompt: &str,
) -> (i32, Value, String) {
    let out = env.run(
        claude,
        &[
            "-p",
            prompt,
            "--output-format",
            "json",
            "--permission-mode",
            "acceptEdits",
        ],
        dir,
        TIMEOUT,
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!("claude's stdout is not one JSON object ({e}):\n{stdout}\n--- stderr\n{stderr}")
    });
    (out.status.code().unwrap_or(-1), json, stdout)
}

#[test]
fn claude_answers_text_and_reports_usage_and_cost() {
    let Some(claude) = cli::agent("claude") else {
        return;
    };
    let mock = MockServer::start(Script(vec![Turn::text("hello from the mock")]));
    let (_tmp, base) = scratch();
    let env = AgentEnv::new(&base, &mock);
    let (code, json, stdout) = claude_json(&env, &claude, &base.join("work"), "say hello");
    capture("claude", "e2e-text.json", &stdout);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(json["is_error"], false, "{stdout}");
    assert_eq!(json["result"], "hello from the mock");
    assert_eq!(json["usage"]["input_tokens"], 100);
    assert_eq!(json["usage"]["output_tokens"], 20);
    assert!(json["total_cost_usd"].as_f64().unwrap() > 0.0, "{stdout}");
    assert!(!json["session_id"].as_str().unwrap().is_empty());
    let sent = mock.scripted();
    assert_eq!(sent.len(), 1);
    assert!(sent[0].body.contains("say hello"));
    assert_eq!(sent[0].json()["stream"], true);
}

#[test]
fn claude_creates_a_file_through_write() {
    let Some(claude) = cli::agent("claude") else {
        return;
    };
    let (_tmp, base) = scratch();
    let work = base.join("work");
    let mock = MockServer::start(Script(vec![
        Turn::claude_write(&work.join("notes.txt"), "written by the mock\n"),
        Turn::text("done"),
    ]));
    let env = AgentEnv::new(&base, &mock);
    let (code, json, stdout) = claude_json(&env, &claude, &work, "write notes.txt");
    capture("claude", "e2e-write.json", &stdout);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(
        std::fs::read_to_string(work.join("notes.txt")).unwrap(),
        "written by the mock\n"
    );
    assert_eq!(json["num_turns"], 2, "{stdout}");
    assert_eq!(json["usage"]["input_tokens"], 200, "{stdout}");
    let sent = mock.scripted();
    assert_eq!(sent.len(), 2);
    assert!(sent[1].body.contains("tool_result"), "{}", sent[1].body);
    assert_eq!(mock.overruns(), 0);
}

#[test]
fn claude_exits_1_on_a_429_with_the_status_in_its_json() {
    let Some(claude) = cli::agent("claude") else {
        return;
    };
    let mock = MockServer::start(Script(vec![e2e::rate_limited()]));
    let (_tmp, base) = scratch();
    let env = AgentEnv::new(&base, &mock);
    let (code, json, stdout) = claude_json(&env, &claude, &base.join("work"), "say hello");
    capture("claude", "e2e-429.json", &stdout);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(json["is_error"], true);
    assert_eq!(json["api_error_status"], 429, "{stdout}");
    assert_eq!(json["api_error_type"], "rate_limit_error");
    assert!(
        json["result"]
            .as_str()
            .unwrap()
            .starts_with("API Error: Request rejected (429)"),
        "{stdout}"
    );
    // Told not to retry, it gave up after the one request.
    assert_eq!(mock.requests().len(), 1);
}

#[test]
fn claude_reports_a_subscription_limit_with_its_reset_time() {
    let Some(claude) = cli::agent("claude") else {
        return;
    };
    // What the API answers a subscriber who is out of quota: a 429 whose unified rate-limit
    // headers say "rejected", with the reset as a unix time.
    let (reset, worded) = super::subscription_reset();
    let mock = MockServer::start(Script(vec![Turn::rate_limited(&[
        ("anthropic-ratelimit-unified-status", "rejected"),
        ("anthropic-ratelimit-unified-reset", &reset),
        (
            "anthropic-ratelimit-unified-representative-claim",
            "five_hour",
        ),
        ("x-should-retry", "false"),
    ])]));
    let (_tmp, base) = scratch();
    let env = AgentEnv::new(&base, &mock).subscription("Europe/Berlin");
    let (code, json, stdout) = claude_json(&env, &claude, &base.join("work"), "say hello");
    capture("claude", "e2e-usage-limit.json", &stdout);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(json["is_error"], true);
    assert_eq!(json["api_error_status"], 429, "{stdout}");
    assert_eq!(json["api_error"], "usage_limit_reached", "{stdout}");
    assert_eq!(
        json["result"],
        format!("You've hit your 5-hour limit \u{b7} resets {worded}")
    );
    // Sent with the subscription's bearer token, not an API key.
    let sent = &mock.requests()[0];
    assert_eq!(
        sent.header("authorization"),
        Some("Bearer sk-ant-oat01-mock")
    );
    assert_eq!(sent.header("x-api-key"), None);
}

#[test]
fn claude_continues_its_session_when_a_stop_hook_blocks() {
    let Some(claude) = cli::agent("claude") else {
        return;
    };
    let (_tmp, base) = scratch();
    let work = base.join("work");
    // The hook blocks once: the first time it runs (`stop_hook_active` false) it names the
    // missing file; when Claude Code stops again after the block it lets it stop.
    let hook = base.join("stop-hook.sh");
    let seen = base.join("hook-input.jsonl");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\ninput=$(cat)\nprintf '%s\\n' \"$input\" >> '{seen}'\n\
             case \"$input\" in *'\"stop_hook_active\":true'*) exit 0;; esac\n\
             printf '%s\\n' '{{\"decision\":\"block\",\"reason\":\"b.txt is still missing\"}}'\n",
            seen = seen.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let settings = serde_json::json!({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": hook.display().to_string()}]}]}});
    let mock = MockServer::start(Script(vec![
        Turn::tool(
            "Write",
            serde_json::json!({"file_path": "a.txt", "content": "a\n"}),
        ),
        Turn::text("done"),
        Turn::tool(
            "Write",
            serde_json::json!({"file_path": "b.txt", "content": "b\n"}),
        ),
        Turn::text("done, really"),
    ]));
    let env = AgentEnv::new(&base, &mock);
    let out = env.run(
        &claude,
        &[
            "-p",
            "write a.txt and b.txt",
            "--output-format",
            "json",
            "--permission-mode",
            "acceptEdits",
            "--settings",
            &settings.to_string(),
        ],
        &work,
        TIMEOUT,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let json: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(json["result"], "done, really", "{stdout}");
    assert_eq!(std::fs::read_to_string(work.join("b.txt")).unwrap(), "b\n");
    // The reason reached the model as the next instruction, in the same session.
    let sent = mock.scripted();
    assert_eq!(sent.len(), 4, "{stdout}");
    assert!(!sent[1].body.contains("b.txt is still missing"));
    // As "Stop hook feedback:" and the reason on the next line (JSON-escaped in the body).
    assert!(
        sent[2]
            .body
            .contains(r"Stop hook feedback:\nb.txt is still missing"),
        "{}",
        sent[2].body
    );
    let sessions: Vec<_> = sent
        .iter()
        .map(|r| r.header("x-claude-code-session-id").unwrap().to_string())
        .collect();
    assert!(sessions.iter().all(|s| *s == sessions[0]), "{sessions:?}");
    assert_eq!(sessions[0], json["session_id"].as_str().unwrap());
    // The hook ran twice, the second time told that it had blocked once already.
    let inputs: Vec<Value> = std::fs::read_to_string(&seen)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(inputs.len(), 2);
    assert_eq!(inputs[0]["hook_event_name"], "Stop");
    assert_eq!(inputs[0]["stop_hook_active"], false);
    assert_eq!(inputs[1]["stop_hook_active"], true);
    assert_eq!(inputs[0]["session_id"], json["session_id"]);
}

/// `claude -p PROMPT --output-format stream-json --verbose --permission-mode acceptEdits` in
/// `dir`: exit code, the JSON lines, stdout.
fn claude_stream(
    env: &AgentEnv,
    claude: &std::path::Path,
    dir: &std::path::Path,
    prompt: &str,
) -> (i32, Vec<Value>, String) {
    let out = env.run(
        claude,
        &[
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "acceptEdits",
        ],
        dir,
        TIMEOUT,
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let lines = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| {
                panic!("claude printed a line that is not JSON ({e}): {l}\n--- stderr\n{stderr}")
            })
        })
        .collect();
    (out.status.code().unwrap_or(-1), lines, stdout)
}

/// stream-json's lines without this machine's paths: the scratch directory (also in the dashed
/// form of Claude Code's project directory) and the messaging socket.
fn scrub(stdout: &str, base: &std::path::Path) -> String {
    let shown = base.display().to_string();
    let mut text = stdout
        .replace(&shown, "$TMP")
        .replace(&shown.replace('/', "-"), "-$TMP");
    // The line is kept byte for byte otherwise: the preset's patterns match its raw form.
    let key = "\"messaging_socket_path\":\"";
    if let Some(at) = text.find(key).map(|at| at + key.len())
        && let Some(len) = text[at..].find('"')
    {
        text.replace_range(at..at + len, "$TMP/cc-socks/0.sock");
    }
    text
}

/// The unified rate-limit headers of a response for a subscriber: the five-hour window in
/// `status`, resetting at `reset` (unix seconds).
fn unified(status: &'static str, reset: &str) -> Vec<(&'static str, String)> {
    vec![
        ("anthropic-ratelimit-unified-status", status.into()),
        ("anthropic-ratelimit-unified-reset", reset.into()),
        (
            "anthropic-ratelimit-unified-representative-claim",
            "five_hour".into(),
        ),
        ("anthropic-ratelimit-unified-5h-status", status.into()),
        ("anthropic-ratelimit-unified-5h-reset", reset.into()),
        ("anthropic-ratelimit-unified-5h-utilization", "0.9".into()),
    ]
}

fn pairs<'a>(headers: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    headers.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[test]
fn claude_stream_json_ends_with_the_json_result_and_reports_the_limit_headers() {
    let Some(claude) = cli::agent("claude") else {
        return;
    };
    let (reset, _) = super::subscription_reset();
    let mock = MockServer::start(Script(vec![Turn::text("hello from the mock")]));
    mock.success_headers(&pairs(&unified("allowed_warning", &reset)));
    let (_tmp, base) = scratch();
    let env = AgentEnv::new(&base, &mock).subscription("Europe/Berlin");
    let (code, lines, stdout) = claude_stream(&env, &claude, &base.join("work"), "say hello");
    capture("claude", "e2e-stream-text.jsonl", &scrub(&stdout, &base));
    assert_eq!(code, 0, "{stdout}");
    // The last line is the object `json` prints: the verdict, usage, cost, session.
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result", "{stdout}");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["result"], "hello from the mock");
    assert_eq!(result["usage"]["input_tokens"], 100);
    assert_eq!(result["usage"]["output_tokens"], 20);
    assert!(result["total_cost_usd"].as_f64().unwrap() > 0.0, "{stdout}");
    assert_eq!(result["session_id"], lines[0]["session_id"]);
    // The headers of the success, as an event: not a refusal.
    let events = of_type(&lines, "rate_limit_event");
    assert_eq!(events.len(), 1, "{stdout}");
    let info = &events[0]["rate_limit_info"];
    assert_eq!(info["status"], "allowed_warning");
    assert_eq!(info["rateLimitType"], "five_hour");
    assert_eq!(info["resetsAt"].as_i64(), reset.parse::<i64>().ok());
}

#[test]
fn claude_stream_json_reports_an_api_keys_429_without_a_limit_event() {
    let Some(claude) = cli::agent("claude") else {
        return;
    };
    let mock = MockServer::start(Script(vec![e2e::rate_limited()]));
    let (_tmp, base) = scratch();
    let env = AgentEnv::new(&base, &mock);
    let (code, lines, stdout) = claude_stream(&env, &claude, &base.join("work"), "say hello");
    capture("claude", "e2e-stream-429.jsonl", &scrub(&stdout, &base));
    assert_eq!(code, 1, "{stdout}");
    let result = lines.last().unwrap();
    assert_eq!(result["api_error_status"], 429, "{stdout}");
    assert!(
        result["result"]
            .as_str()
            .unwrap()
            .starts_with("API Error: Request rejected (429)"),
        "{stdout}"
    );
    // The synthetic message of the error says it too; no unified headers, no event.
    let message = &of_type(&lines, "assistant")[0];
    assert_eq!(message["error"], "rate_limit", "{stdout}");
    assert_eq!(message["api_error_status"], 429);
    assert!(of_type(&lines, "rate_limit_event").is_empty(), "{stdout}");
}

#[test]
fn claude_stream_json_gives_a_subscription_limits_reset_as_unix_seconds() {
    let Some(claude) = cli::agent("claude") else {
        return;
    };
    // A reset with seconds that the words leave out ("resets 5:37pm"): 37 min 13 s past the
    // hour, three days on.
    let (reset, _) = super::subscription_reset();
    let reset = (reset.parse::<i64>().unwrap() + 37 * 60 + 13).to_string();
    let mut headers = unified("rejected", &reset);
    headers.push(("x-should-retry", "false".into()));
    let mock = MockServer::start(Script(vec![Turn::rate_limited(&pairs(&headers))]));
    let (_tmp, base) = scratch();
    let env = AgentEnv::new(&base, &mock).subscription("Europe/Berlin");
    let (code, lines, stdout) = claude_stream(&env, &claude, &base.join("work"), "say hello");
    capture(
        "claude",
        "e2e-stream-usage-limit.jsonl",
        &scrub(&stdout, &base),
    );
    assert_eq!(code, 1, "{stdout}");
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result", "{stdout}");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["api_error_status"], 429);
    assert_eq!(result["api_error"], "usage_limit_reached");
    let words = result["result"].as_str().unwrap();
    assert!(
        words.starts_with("You've hit your 5-hour limit \u{b7} resets ")
            && words.ends_with(":37pm (Europe/Berlin)"),
        "{words}"
    );
    let refusal = &of_type(&lines, "rate_limit_event")[0]["rate_limit_info"];
    assert_eq!(refusal["status"], "rejected", "{stdout}");
    assert_eq!(refusal["rateLimitType"], "five_hour");
    assert_eq!(refusal["resetsAt"].as_i64(), reset.parse::<i64>().ok());
    let message = &of_type(&lines, "assistant")[0];
    assert_eq!(
        message["api_error_params"]["rate_limit_info"]["resetsAt"],
        refusal["resetsAt"]
    );
    assert_eq!(mock.requests().len(), 1);
}
