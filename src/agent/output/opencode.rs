//! `opencode run --format json`: one JSON event per line (`step_start`, `text`, `tool_use`,
//! `step_finish`, `error`), each with the session's `sessionID`.
//!
//! Read: the `sessionID`; every `step_finish`'s `part.tokens` (`input`, `output`, `reasoning`,
//! `cache.read`, `cache.write`) and `part.cost`, summed over the steps; the verdict from the last
//! `error` event when there is one, else a success once a step finished. opencode 1.18.33
//! already counts `input` without the cache's reads and writes, whichever provider it talks to,
//! so its figures are recorded as they are. An `error` whose `data.statusCode` is 429, or whose
//! message names a rate limit or a quota, is a rate limit, with the wait of the response's
//! `retry-after-ms` / `retry-after` header (`data.responseHeaders`) when it has one, else the
//! words of "try again …". opencode prints no model name in these events, so none is recorded.

use serde_json::{Map, Value};

use super::{Reading, Stdout, Tokens, Verdict, count, reset, text};

/// Words of an error message that mean a rate limit, lower-cased; "exceeded your current quota"
/// is OpenAI's `insufficient_quota`, which arrives as a 429 too.
const LIMIT_WORDS: [&str; 5] = [
    "429",
    "too many requests",
    "rate limit",
    "quota",
    "resource_exhausted",
];

pub(super) fn parse(stdout: Stdout) -> Reading {
    let (found, log) = super::jsonl_events(stdout);
    let mut tokens: Option<Tokens> = None;
    let mut cost: Option<f64> = None;
    let mut session_id: Option<String> = None;
    let mut finished = false;
    let mut error: Option<Verdict> = None;
    for event in found {
        if let Some(id) = text(event.get("sessionID")) {
            session_id = Some(id.to_string());
        }
        match event.get("type").and_then(Value::as_str) {
            Some("step_finish") => {
                let part = event.get("part");
                if let Some(t) = part
                    .and_then(|p| p.get("tokens"))
                    .and_then(Value::as_object)
                {
                    tokens
                        .get_or_insert_with(Tokens::default)
                        .add(&step_tokens(t));
                }
                if let Some(c) = part.and_then(|p| p.get("cost")).and_then(Value::as_f64) {
                    *cost.get_or_insert(0.0) += c;
                }
                finished = true;
            }
            Some("error") => error = Some(failed(event.get("error"))),
            _ => {}
        }
    }
    let verdict = match error {
        Some(verdict) => Some(verdict),
        None => finished.then_some(Verdict::Succeeded),
    };
    Reading {
        tokens,
        cost_usd: cost,
        session_id,
        ..log.ending(verdict, "step_finish or error")
    }
}

fn step_tokens(t: &Map<String, Value>) -> Tokens {
    let cache = t.get("cache");
    Tokens {
        input: count(t.get("input")),
        output: count(t.get("output")),
        cache_read: count(cache.and_then(|c| c.get("read"))),
        cache_creation: count(cache.and_then(|c| c.get("write"))),
        reasoning: count(t.get("reasoning")),
    }
}

/// The verdict of an `error` event: `{"name": "APIError", "data": {"message", "statusCode",
/// "responseHeaders", …}}`.
fn failed(error: Option<&Value>) -> Verdict {
    let data = error.and_then(|e| e.get("data"));
    let name = error.and_then(|e| text(e.get("name")));
    let message = data
        .and_then(|d| text(d.get("message")))
        .or(name)
        .unwrap_or("opencode reported an error without a message")
        .to_string();
    let status = data
        .and_then(|d| d.get("statusCode"))
        .and_then(Value::as_u64);
    let lower = message.to_lowercase();
    if status != Some(429) && !LIMIT_WORDS.iter().any(|w| lower.contains(w)) {
        return Verdict::Failed { message };
    }
    let headers = data
        .and_then(|d| d.get("responseHeaders"))
        .and_then(Value::as_object);
    let reset = headers
        .and_then(retry_after)
        .or_else(|| reset::from_message(&message));
    Verdict::RateLimited { message, reset }
}

/// The wait a 429's headers ask for: `retry-after-ms` (milliseconds, rounded up to a second) or
/// `retry-after` in seconds. A `retry-after` that is an HTTP date is left out, not guessed at.
fn retry_after(headers: &Map<String, Value>) -> Option<reset::LimitReset> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| v.as_str())
            .map(str::trim)
    };
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<u64>().ok()) {
        return Some(reset::LimitReset {
            text: format!("retry-after-ms: {ms}"),
            epoch: None,
            after_secs: Some(ms.div_ceil(1000)),
        });
    }
    let secs = header("retry-after").and_then(|v| v.parse::<u64>().ok())?;
    Some(reset::LimitReset {
        text: format!("retry-after: {secs}"),
        epoch: None,
        after_secs: Some(secs),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::output::{rate_limit, success};

    // Captured from opencode 1.18.33 (`opencode run --format json`, the prompt on stdin, its
    // `@ai-sdk/anthropic` provider at a mock model server on 127.0.0.1); the `e2e-*` files by
    // tests/agents/opencode.rs through the preset, turns of 20,000 input, 5,000 cache-read and
    // 2,000 output tokens.
    /// A `write`, a `bash` call of `git baton unchanged`, a text answer: three steps.
    const EDIT: &str = include_str!("../../../testdata/agents/opencode/e2e-edit-unchanged.jsonl");
    /// Two `bash` calls the preset's rules deny, then a text answer: three steps, exit 0.
    const DENIED: &str = include_str!("../../../testdata/agents/opencode/e2e-denied.jsonl");
    /// A `bash` call whose rule asks (`"*": "ask"`): rejected, the run ends after one step of
    /// 100/20 tokens, exit 0.
    const ASKED: &str = include_str!("../../../testdata/agents/opencode/ask-rejected.jsonl");
    /// HTTP 429 `rate_limit_error` with `retry-after-ms: 1` to every try; exit 1.
    const RATE_LIMIT: &str = include_str!("../../../testdata/agents/opencode/e2e-429.jsonl");
    /// HTTP 429 with OpenAI's `insufficient_quota` body ("You exceeded your current quota");
    /// exit 1.
    const QUOTA: &str = include_str!("../../../testdata/agents/opencode/e2e-quota-429.jsonl");

    #[test]
    fn steps_are_summed_with_the_cost_and_the_session() {
        let r = success(
            parse(Stdout::Whole(EDIT)),
            "input 60000, output 6000, cache_read 15000, cache_creation 0, reasoning 0",
        );
        // opencode's own figure: 3 × (20,000 × $3 + 5,000 × $0.30 + 2,000 × $15) per million.
        assert!((r.cost_usd.unwrap() - 3.0 * 0.0915).abs() < 1e-9, "{r:?}");
        assert_eq!(
            r.session_id.as_deref(),
            Some("ses_dcb9bddb2ffeXGYOJKSrO2M04h")
        );
        assert_eq!(r.model, None);
    }

    #[test]
    fn refused_tool_calls_decide_nothing() {
        // The gate judges what the refusals left undone.
        let r = parse(Stdout::Whole(DENIED));
        assert_eq!(r.verdict, Some(Verdict::Succeeded));
        assert_eq!(r.tokens.unwrap().input, Some(60_000));
        assert_eq!(
            DENIED
                .matches("prevents you from using this specific tool")
                .count(),
            2
        );
    }

    #[test]
    fn an_auto_rejected_permission_reads_as_a_success_for_the_gate_to_judge() {
        // opencode exits 0 and says nothing more than the rejected tool call.
        let r = parse(Stdout::Whole(ASKED));
        assert_eq!(r.verdict, Some(Verdict::Succeeded));
        assert_eq!(r.tokens.unwrap().input, Some(100));
        assert!(ASKED.contains("The user rejected permission"));
    }

    #[test]
    fn a_429_is_a_rate_limit_with_its_retry_after() {
        let r = parse(Stdout::Whole(RATE_LIMIT));
        assert_eq!(
            r.verdict,
            Some(Verdict::RateLimited {
                message: "This request would exceed your account's rate limit. Please try again \
                          later."
                    .into(),
                reset: Some(reset::LimitReset {
                    text: "retry-after-ms: 1".into(),
                    epoch: None,
                    after_secs: Some(1),
                }),
            })
        );
        assert_eq!((r.tokens, r.cost_usd), (None, None));
        assert_eq!(
            r.session_id.as_deref(),
            Some("ses_dcb9bdf5fffeStrLz5bucQsP1F")
        );
    }

    #[test]
    fn a_quota_429_is_a_rate_limit_whatever_its_words() {
        let r = parse(Stdout::Whole(QUOTA));
        let (message, _) = rate_limit(&r);
        assert!(
            message.contains("You exceeded your current quota"),
            "{message}"
        );
        // The status alone says it.
        let other = QUOTA.replace("current quota", "current plan");
        let other = other.replace("insufficient_quota", "insufficient_plan");
        let r = parse(Stdout::Whole(&other));
        assert!(
            matches!(r.verdict, Some(Verdict::RateLimited { .. })),
            "{r:?}"
        );
        // Another status and words: a failure with the message.
        let other = other.replace("\"statusCode\":429", "\"statusCode\":400");
        let other = other.replace("Too Many Requests", "Bad Request");
        let r = parse(Stdout::Whole(&other));
        assert!(matches!(r.verdict, Some(Verdict::Failed { .. })), "{r:?}");
    }

    #[test]
    fn retry_after_in_seconds_and_a_date_left_out() {
        let headers = |h: Value| retry_after(h.as_object().unwrap());
        assert_eq!(
            headers(serde_json::json!({"Retry-After": "120"}))
                .unwrap()
                .after_secs,
            Some(120)
        );
        assert_eq!(
            headers(serde_json::json!({"retry-after-ms": "1500", "retry-after": "9"}))
                .unwrap()
                .after_secs,
            Some(2)
        );
        assert_eq!(
            headers(serde_json::json!({"retry-after": "Wed, 02 Dec 2026 01:22:03 GMT"})),
            None
        );
    }

    #[test]
    fn a_cut_log_still_reads_its_tail_and_no_final_event_is_unparsed() {
        let (head, rest) = EDIT.split_at(40);
        let tail = &rest[rest.rfind("{\"type\":\"step_start\"").unwrap()..];
        let r = parse(Stdout::Cut { head, tail });
        assert!(r.cut);
        assert_eq!(r.verdict, Some(Verdict::Succeeded));
        assert_eq!(r.tokens.unwrap().output, Some(2_000));

        let started: String = EDIT.lines().take(2).map(|l| format!("{l}\n")).collect();
        let r = parse(Stdout::Whole(&started));
        assert_eq!(
            r.unparsed.as_deref(),
            Some("no step_finish or error event among 2 event(s)")
        );
        assert!(r.verdict.is_none());
        assert_eq!(
            parse(Stdout::Whole("Error: unknown flag\n"))
                .unparsed
                .as_deref(),
            Some("none of the 1 line(s) of the output is a JSON event")
        );
        assert_eq!(
            parse(Stdout::Whole("")).unparsed.as_deref(),
            Some("the output is empty")
        );
    }
}
