//! Gemini CLI `--output-format stream-json`: one JSON event per line — `init` (`session_id`,
//! `model`), `message`, `tool_use`, `tool_result`, and a last `result` with `status`, `error` and
//! `stats`.
//!
//! Unlike `--output-format json`, whose error object (on stderr) carries no `stats`, the `result`
//! event keeps the tokens of the turns before an error (measured with gemini 0.61.0: a
//! `write_file` turn, then a 429; `result.stats` held the first turn's tokens). Read: the session
//! and model of `init`; `result.stats` (`input`, which leaves the cached tokens out, `cached`,
//! `output_tokens`), else `input_tokens` less `cached`; the verdict from `result.status`: an
//! `error` whose message names a 429, a quota, `RESOURCE_EXHAUSTED` or a rate limit is a rate
//! limit (gemini 0.61.0 gives it no code, only "[API Error: Resource has been exhausted (e.g.
//! check quota).]"), another a failure. With stdout empty (an error before the session starts)
//! the error object on stderr is read as for `gemini-json`.

use serde_json::Value;

use super::{Reading, Stdout, Tokens, Verdict, count, gemini, reset, text};

const LIMIT_WORDS: [&str; 4] = ["429", "resource_exhausted", "quota", "rate limit"];

pub(super) fn parse(stdout: Stdout, stderr: Stdout) -> Reading {
    if matches!(stdout, Stdout::Whole(text) if text.trim().is_empty()) {
        return gemini::parse(stdout, stderr);
    }
    let (found, log) = super::jsonl_events(stdout);
    let mut session_id = None;
    let mut model = None;
    let mut result = None;
    for event in found {
        match event.get("type").and_then(Value::as_str) {
            Some("init") => {
                session_id = text(event.get("session_id")).map(str::to_string);
                model = text(event.get("model")).map(str::to_string);
            }
            Some("result") => result = Some(event),
            _ => {}
        }
    }
    let Some(result) = result else {
        return Reading {
            session_id,
            model,
            ..log.ending(None, "result")
        };
    };
    let tokens = result.get("stats").and_then(Value::as_object).map(|s| {
        let cached = count(s.get("cached"));
        let input = count(s.get("input")).or_else(|| {
            count(s.get("input_tokens")).map(|i| i.saturating_sub(cached.unwrap_or(0)))
        });
        Tokens {
            input,
            output: count(s.get("output_tokens")),
            cache_read: cached,
            cache_creation: None,
            reasoning: None,
        }
    });
    let verdict = match result.get("status").and_then(Value::as_str) {
        Some("success") => Verdict::Succeeded,
        _ => {
            let message = result
                .get("error")
                .and_then(|e| text(e.get("message")))
                .unwrap_or("Gemini CLI reported an error")
                .to_string();
            let lower = message.to_lowercase();
            if LIMIT_WORDS.iter().any(|w| lower.contains(w)) {
                Verdict::RateLimited {
                    reset: reset::from_message(&message),
                    message,
                }
            } else {
                Verdict::Failed { message }
            }
        }
    };
    Reading {
        tokens,
        model,
        session_id,
        ..log.ending(Some(verdict), "result")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::output::{limit_reset, rate_limit, success};

    // Captured from gemini 0.61.0 through the `gemini` preset (tests/agents/gemini.rs) against a
    // mock model server on 127.0.0.1; each turn 25,000 prompt tokens (5,000 cached) and 2,000
    // output tokens.
    /// A `write_file`, a `run_shell_command` of `git baton unchanged`, then text.
    const EDIT: &str = include_str!("../../../testdata/agents/gemini/e2e-edit-unchanged.jsonl");
    /// A `write_file`, then HTTP 429 `RESOURCE_EXHAUSTED` (one attempt); exit 173.
    const LIMITED: &str = include_str!("../../../testdata/agents/gemini/e2e-write-then-429.jsonl");
    const NONE: Stdout = Stdout::Whole("");

    #[test]
    fn a_success_gives_usage_without_the_cached_tokens_model_and_session() {
        let r = success(
            parse(Stdout::Whole(EDIT), NONE),
            "input 60000, output 6000, cache_read 15000, cache_creation -, reasoning -",
        );
        assert_eq!(r.model.as_deref(), Some("gemini-2.5-pro"));
        assert!(r.session_id.is_some());
    }

    #[test]
    fn a_429_keeps_the_tokens_of_the_turns_before_it() {
        let r = parse(Stdout::Whole(LIMITED), NONE);
        let (message, _) = rate_limit(&r);
        assert!(message.contains("Resource has been exhausted"), "{message}");
        assert_eq!(r.tokens.unwrap().input, Some(20_000));
        // Another error is a failure.
        let mut result: Value = serde_json::from_str(LIMITED.lines().last().unwrap()).unwrap();
        result["error"]["message"] = "[API Error: Request contains an invalid argument.]".into();
        let other = LIMITED.replace(LIMITED.lines().last().unwrap(), &result.to_string());
        let r = parse(Stdout::Whole(&other), NONE);
        assert!(matches!(r.verdict, Some(Verdict::Failed { .. })), "{r:?}");
    }

    #[test]
    fn a_429s_retry_delay_is_the_wait() {
        // HTTP 429 `RESOURCE_EXHAUSTED` whose details hold `RetryInfo.retryDelay: "90.5s"`.
        let text = include_str!("../../../testdata/agents/gemini/e2e-429-retry-info.jsonl");
        let r = parse(Stdout::Whole(text), NONE);
        let reset = limit_reset(&r);
        assert_eq!(reset.text, "retry after 90.5s");
        assert_eq!((reset.after_secs, reset.epoch), (Some(91), None));
    }

    #[test]
    fn no_result_is_unparsed_and_an_empty_stdout_reads_stderr() {
        let init: String = EDIT.lines().take(2).map(|l| format!("{l}\n")).collect();
        let r = parse(Stdout::Whole(&init), NONE);
        assert_eq!(
            r.unparsed.as_deref(),
            Some("no result event among 2 event(s)")
        );
        assert!(r.session_id.is_some());
        let auth = include_str!("../../../testdata/agents/gemini/auth-error.stderr");
        let r = parse(NONE, Stdout::Whole(auth));
        assert!(matches!(r.verdict, Some(Verdict::Failed { .. })), "{r:?}");
    }
}
