//! The real Codex CLI on its own against the mock: `codex exec --json` for a text answer with
//! usage, an `exec_command` call that edits a file in its sandbox, and an HTTP 429. Its JSON
//! lines are captured into testdata/agents/codex/ with `GIT_BATON_AGENT_CAPTURE=1`.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::cli::{self, AgentEnv};
use super::harness::{AgentRepo, attempt};
use super::mock::{MockServer, Script, Turn, Usage};
use super::{capture, of_type, scratch};

const TIMEOUT: Duration = Duration::from_secs(120);

/// `codex exec --json --skip-git-repo-check -s workspace-write PROMPT </dev/null` in `dir`:
/// exit code, the JSON lines, stdout.
fn codex_exec(env: &AgentEnv, codex: &Path, dir: &Path, prompt: &str) -> (i32, Vec<Value>, String) {
    let out = env.run(
        codex,
        &[
            "exec",
            "--json",
            "--skip-git-repo-check",
            "-s",
            "workspace-write",
            prompt,
        ],
        dir,
        TIMEOUT,
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let lines = stdout
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| {
                panic!("codex printed a line that is not JSON ({e}): {l}\n--- stderr\n{stderr}")
            })
        })
        .collect();
    (out.status.code().unwrap_or(-1), lines, stdout)
}

#[test]
fn codex_answers_text_and_reports_usage() {
    let Some(codex) = cli::agent("codex") else {
        return;
    };
    let mock = MockServer::start(Script(vec![Turn::text("hello from the mock").with_usage(
        Usage {
            input: 300,
            output: 40,
            cache_read: 100,
        },
    )]));
    let (_tmp, base) = scratch();
    let env = AgentEnv::new(&base, &mock);
    let (code, lines, stdout) = codex_exec(&env, &codex, &base.join("work"), "say hello");
    capture("codex", "e2e-text.jsonl", &stdout);
    assert_eq!(code, 0, "{stdout}");
    let done = of_type(&lines, "turn.completed");
    assert_eq!(done.len(), 1, "{stdout}");
    assert_eq!(done[0]["usage"]["input_tokens"], 300, "{stdout}");
    assert_eq!(done[0]["usage"]["cached_input_tokens"], 100);
    assert_eq!(done[0]["usage"]["output_tokens"], 40);
    assert!(of_type(&lines, "thread.started")[0]["thread_id"].is_string());
    let messages: Vec<_> = of_type(&lines, "item.completed")
        .into_iter()
        .filter(|l| l["item"]["type"] == "agent_message")
        .collect();
    assert_eq!(
        messages[0]["item"]["text"], "hello from the mock",
        "{stdout}"
    );
    let sent = mock.scripted();
    assert_eq!(sent.len(), 1);
    assert!(sent[0].body.contains("say hello"));
    assert_eq!(sent[0].path, "/v1/responses");
    assert_eq!(sent[0].header("authorization"), Some("Bearer mock-key"));
}

#[test]
fn codex_edits_a_file_through_exec_command() {
    let Some(codex) = cli::agent("codex") else {
        return;
    };
    let (_tmp, base) = scratch();
    let work = base.join("work");
    std::fs::write(work.join("notes.txt"), "before\n").unwrap();
    let mock = MockServer::start(Script(vec![
        Turn::codex_exec("printf 'after\\n' > notes.txt"),
        Turn::text("done"),
    ]));
    let env = AgentEnv::new(&base, &mock);
    let (code, lines, stdout) = codex_exec(&env, &codex, &work, "edit notes.txt");
    capture("codex", "e2e-exec-command.jsonl", &stdout);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(
        std::fs::read_to_string(work.join("notes.txt")).unwrap(),
        "after\n",
        "{stdout}"
    );
    let usage = &of_type(&lines, "turn.completed")[0]["usage"];
    assert_eq!(usage["input_tokens"], 200, "{stdout}");
    let sent = mock.scripted();
    assert_eq!(sent.len(), 2);
    assert!(
        sent[1].body.contains("function_call_output"),
        "{}",
        sent[1].body
    );
    assert_eq!(mock.overruns(), 0);
}

#[test]
fn codex_exits_1_on_a_429_with_turn_failed() {
    let Some(codex) = cli::agent("codex") else {
        return;
    };
    let mock = MockServer::start(Script(vec![Turn::rate_limited(&[("retry-after", "1")])]));
    let (_tmp, base) = scratch();
    let env = AgentEnv::new(&base, &mock);
    let (code, lines, stdout) = codex_exec(&env, &codex, &base.join("work"), "say hello");
    capture("codex", "e2e-429.jsonl", &stdout);
    assert_eq!(code, 1, "{stdout}");
    let failed = of_type(&lines, "turn.failed");
    assert_eq!(failed.len(), 1, "{stdout}");
    assert_eq!(
        failed[0]["error"]["message"],
        "exceeded retry limit, last status: 429 Too Many Requests"
    );
    // One try and the one retry the provider allows.
    assert_eq!(mock.scripted().len(), 2);
}

#[test]
fn codex_reports_a_usage_limit_with_its_reset_time() {
    let Some(codex) = cli::agent("codex") else {
        return;
    };
    // The backend's answer to a ChatGPT plan out of quota, resetting at 16:00 UTC three days
    // from today: Codex words a reset on another day with its date, one today with the time
    // alone, so the day must never be today, whenever the suite runs.
    let day = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date()
        .checked_add(jiff::Span::new().days(3))
        .unwrap();
    let resets_at = day
        .at(16, 0, 0, 0)
        .to_zoned(jiff::tz::TimeZone::UTC)
        .unwrap()
        .timestamp()
        .as_second();
    let mock = MockServer::start(Script(vec![Turn::Error {
        status: 429,
        headers: vec![],
        body: json!({"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached",
                               "plan_type": "plus", "resets_at": resets_at, "resets_in_seconds": 60000}}),
    }]));
    let (_tmp, base) = scratch();
    let env = AgentEnv::new(&base, &mock);
    let (code, lines, stdout) = codex_exec(&env, &codex, &base.join("work"), "say hello");
    capture("codex", "e2e-usage-limit.jsonl", &stdout);
    assert_eq!(code, 1, "{stdout}");
    let failed = of_type(&lines, "turn.failed");
    assert_eq!(failed.len(), 1, "{stdout}");
    // A typographic apostrophe, and the reset in the local time zone (UTC here).
    let message = failed[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("You\u{2019}ve hit your usage limit."),
        "{message}"
    );
    let suffix = match (day.day() % 10, day.day() % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    let expected = format!(
        "try again at {} {}{suffix}, {} 4:00 PM.",
        day.strftime("%b"),
        day.day(),
        day.year()
    );
    assert!(
        message.ends_with(&expected),
        "{message}\nexpected it to end with: {expected}"
    );
    // Not retried: a usage limit does not lift in seconds.
    assert_eq!(mock.scripted().len(), 1);
}

/// A 429 `usage_limit_reached` body, with these of its reset fields.
fn usage_limit(fields: Value) -> Turn {
    let mut error = json!({"type": "usage_limit_reached",
                           "message": "The usage limit has been reached", "plan_type": "plus"});
    error
        .as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    Turn::Error {
        status: 429,
        headers: vec![],
        body: json!({ "error": error }),
    }
}

#[test]
fn codex_exec_json_carries_a_usage_limits_reset_only_as_words() {
    let Some(codex) = cli::agent("codex") else {
        return;
    };
    // `resets_in_seconds` alone, or no reset at all: "try again later", and no field of the
    // body reaches the JSON lines.
    for (name, fields) in [
        (
            "e2e-usage-limit-in-seconds.jsonl",
            json!({"resets_in_seconds": 6000}),
        ),
        ("", json!({})),
    ] {
        let mock = MockServer::start(Script(vec![usage_limit(fields)]));
        let (_tmp, base) = scratch();
        let env = AgentEnv::new(&base, &mock);
        let (code, lines, stdout) = codex_exec(&env, &codex, &base.join("work"), "say hello");
        if !name.is_empty() {
            capture("codex", name, &stdout);
        }
        assert_eq!(code, 1, "{stdout}");
        let failed = of_type(&lines, "turn.failed");
        let message = failed[0]["error"]["message"].as_str().unwrap();
        assert!(message.ends_with("or try again later."), "{message}");
        assert_eq!(failed[0]["error"].as_object().unwrap().len(), 1, "{stdout}");
        assert!(!stdout.contains("resets_"), "{stdout}");
    }
}

#[test]
fn a_codex_usage_limit_is_recorded_at_the_minute_codex_words() {
    let Some(_) = cli::agent("codex") else {
        return;
    };
    // Two hours on, 50 s past a minute: Codex words the minute, in the local zone (`TZ=UTC`
    // for Codex and git-baton alike), with the date when it is not today.
    let now = jiff::Timestamp::now().as_second();
    let resets_at = (now + 7200) / 60 * 60 + 50;
    let ar = AgentRepo::new(Script(vec![usage_limit(json!({"resets_at": resets_at}))]));
    ar.init_agent("codex");
    let run = ar.baton(&["run", "plans/rule.md"]);
    assert_eq!(run.code, 1, "{run}");
    let id = run.run_id();
    let state = ar.status(&id);
    let a = attempt(&state, 1);
    assert_eq!(a["outcome"], "rate_limited", "{a:#}");
    let reset = &a["agent"]["rate_limit_reset"];
    let text = reset["text"].as_str().unwrap();
    assert!(
        text.starts_with("at ") && text.ends_with(" (in the local time zone, UTC)"),
        "{reset}"
    );
    // The words name a minute, whose end is the instant; without a date, the next one after
    // the attempt ended (by git-baton's clock, which the test harness sets), with a date, that
    // one.
    let minute = jiff::Timestamp::from_second(resets_at - 50).unwrap();
    // "at 5:40 AM …" or, on another day, "at Dec 3rd, 2026 1:40 AM …".
    let dated = !text["at ".len()..].starts_with(|c: char| c.is_ascii_digit());
    let end_of = |t: jiff::Timestamp| t + jiff::SignedDuration::from_secs(60);
    let expected = if dated {
        end_of(minute)
    } else {
        let ended: jiff::Timestamp = a["ended_at"].as_str().unwrap().parse().unwrap();
        let time = minute.to_zoned(jiff::tz::TimeZone::UTC).time();
        let today = ended.to_zoned(jiff::tz::TimeZone::UTC).date();
        (0..2)
            .map(|k| {
                let day = today.checked_add(jiff::Span::new().days(k)).unwrap();
                let at = day.to_datetime(time).to_zoned(jiff::tz::TimeZone::UTC);
                end_of(at.unwrap().timestamp())
            })
            .find(|t| *t > ended)
            .unwrap()
    };
    assert_eq!(reset["at"], expected.to_string(), "{reset}");
}
