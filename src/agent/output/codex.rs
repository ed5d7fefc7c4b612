//! `codex exec --json`: one JSON event per line.
//!
//! Read: `thread.started.thread_id` (the session id), the `usage` of every `turn.completed`
//! (`input_tokens`, `cached_input_tokens`, `output_tokens`, `reasoning_output_tokens`, summed
//! over turns; OpenAI's `input_tokens` counts the cached ones in, so input is recorded without
//! them, as Claude Code reports it), and the verdict from the last `turn.completed` or `turn.failed`. A
//! `turn.failed` whose message names a 429, a rate limit or a usage limit is a rate limit, with
//! `resets_at` (epoch seconds) when the error carries it, else the words of "try again …".
//! codex 0.171.0 carries none of the API's `resets_at` / `resets_in_seconds`: it words
//! `resets_at` as a local wall-clock time ("try again at 4:32 AM", or with the date on another
//! day), which the reset's rule dates, and `resets_in_seconds` alone as "try again later".
//! Codex reports no cost, so none is recorded. `item.completed` items of type `error` are
//! warnings (codex 0.171.0 prints one for unknown model metadata on every successful run) and
//! decide nothing.

use serde_json::Value;

use super::{Reading, Stdout, Tokens, Verdict, count, reset, text};

const LIMIT_WORDS: [&str; 5] = [
    "429",
    "too many requests",
    "rate limit",
    "usage limit",
    "hit your limit",
];

pub(super) fn parse(stdout: Stdout) -> Reading {
    let (found, log) = super::jsonl_events(stdout);
    let mut tokens: Option<Tokens> = None;
    let mut session_id = None;
    let mut verdict = None;
    for event in found {
        match event.get("type").and_then(Value::as_str) {
            Some("thread.started") => {
                session_id = text(event.get("thread_id")).map(str::to_string);
            }
            Some("turn.completed") => {
                if let Some(u) = event.get("usage").and_then(Value::as_object) {
                    let cached = count(u.get("cached_input_tokens"));
                    let turn = Tokens {
                        input: count(u.get("input_tokens"))
                            .map(|i| i.saturating_sub(cached.unwrap_or(0))),
                        output: count(u.get("output_tokens")),
                        cache_read: cached,
                        cache_creation: count(u.get("cache_write_input_tokens")),
                        reasoning: count(u.get("reasoning_output_tokens")),
                    };
                    tokens.get_or_insert_with(Tokens::default).add(&turn);
                }
                verdict = Some(Verdict::Succeeded);
            }
            Some("turn.failed") => verdict = Some(failed(event.get("error"))),
            _ => {}
        }
    }
    Reading {
        tokens,
        session_id,
        ..log.ending(verdict, "turn.completed or turn.failed")
    }
}

fn failed(error: Option<&Value>) -> Verdict {
    let message = error
        .and_then(|e| text(e.get("message")))
        .unwrap_or("codex reported turn.failed without a message")
        .to_string();
    let lower = message.to_lowercase();
    if !LIMIT_WORDS.iter().any(|w| lower.contains(w)) {
        return Verdict::Failed { message };
    }
    let resets_at = error
        .and_then(|e| e.get("resets_at"))
        .and_then(Value::as_i64);
    let reset = match resets_at {
        Some(epoch) => Some(reset::LimitReset {
            text: epoch.to_string(),
            epoch: Some(epoch),
            after_secs: None,
        }),
        None => reset::from_message(&message),
    };
    Verdict::RateLimited { message, reset }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::output::{limit_reset, rate_limit, success};

    // Captured from codex 0.171.0 run against a mock model server on 127.0.0.1: a success, an
    // HTTP 429, and a 429 whose body is a usage_limit_reached error.
    const SUCCESS: &str = include_str!("../../../testdata/agents/codex/success.jsonl");
    const RATE_LIMIT: &str = include_str!("../../../testdata/agents/codex/rate-limit-429.jsonl");
    const USAGE_LIMIT: &str = include_str!("../../../testdata/agents/codex/usage-limit.jsonl");

    #[test]
    fn success_gives_usage_and_session_but_no_cost() {
        // 2100 input tokens, 1024 of them cached.
        let r = success(
            parse(Stdout::Whole(SUCCESS)),
            "input 1076, output 57, cache_read 1024, cache_creation 0, reasoning 12",
        );
        assert_eq!(r.cost_usd, None);
        assert_eq!(
            r.session_id.as_deref(),
            Some("01a22e0a-08e3-7db3-a6ff-5cf1d7b5d482")
        );
    }

    #[test]
    fn turn_failed_with_429_is_a_rate_limit() {
        let r = parse(Stdout::Whole(RATE_LIMIT));
        assert_eq!(
            r.verdict,
            Some(Verdict::RateLimited {
                message: "exceeded retry limit, last status: 429 Too Many Requests".into(),
                reset: None,
            })
        );
        assert_eq!(r.tokens, None);
    }

    #[test]
    fn usage_limit_keeps_the_reset_words() {
        let r = parse(Stdout::Whole(USAGE_LIMIT));
        let reset = limit_reset(&r);
        assert_eq!(reset.text, "at 10:00 AM");
    }

    #[test]
    fn a_usage_limit_without_a_time_has_no_reset() {
        // `resets_in_seconds` alone: codex 0.171.0 words it "try again later" and passes no
        // field of the error on.
        let text = include_str!("../../../testdata/agents/codex/e2e-usage-limit-in-seconds.jsonl");
        let r = parse(Stdout::Whole(text));
        let (message, reset) = rate_limit(&r);
        assert!(message.ends_with("try again later."), "{message}");
        assert_eq!(reset, None);
    }

    #[test]
    fn resets_at_wins_over_the_words() {
        let text = USAGE_LIMIT.replace(
            r#"{"type":"turn.failed","error":{"message":"#,
            r#"{"type":"turn.failed","error":{"resets_at":1764500400,"message":"#,
        );
        let r = parse(Stdout::Whole(&text));
        let reset = limit_reset(&r);
        assert_eq!(reset.epoch, Some(1_764_500_400));
    }

    #[test]
    fn another_turn_failure_is_a_failure() {
        let text = RATE_LIMIT.replace(
            "exceeded retry limit, last status: 429 Too Many Requests",
            "stream disconnected before completion",
        );
        let r = parse(Stdout::Whole(&text));
        assert_eq!(
            r.verdict,
            Some(Verdict::Failed {
                message: "stream disconnected before completion".into()
            })
        );
    }

    #[test]
    fn turns_are_summed_and_a_cut_log_still_reads_its_tail() {
        let turn = SUCCESS.lines().last().unwrap();
        let text = format!("{SUCCESS}{turn}\n");
        assert_eq!(
            parse(Stdout::Whole(&text)).tokens.unwrap().input,
            Some(2 * 1076)
        );
        // The middle dropped, a line broken at each side: the turn in the tail still counts.
        let (head, rest) = SUCCESS.split_at(30);
        let tail = &rest[rest.find("\"type\":\"turn.started\"").unwrap()..];
        let r = parse(Stdout::Cut { head, tail });
        assert!(r.cut);
        assert_eq!(r.verdict, Some(Verdict::Succeeded));
        assert_eq!(r.tokens.unwrap().output, Some(57));
    }

    #[test]
    fn no_final_event_is_unparsed_with_why() {
        let started: String = SUCCESS.lines().take(3).map(|l| format!("{l}\n")).collect();
        let r = parse(Stdout::Whole(&started));
        assert_eq!(
            r.unparsed.as_deref(),
            Some("no turn.completed or turn.failed event among 3 event(s)")
        );
        assert!(r.verdict.is_none());
        let r = parse(Stdout::Whole(
            "error: unexpected argument '--full-auto' found\n",
        ));
        assert_eq!(
            r.unparsed.as_deref(),
            Some("none of the 1 line(s) of the output is a JSON event")
        );
        assert_eq!(
            parse(Stdout::Whole("")).unparsed.as_deref(),
            Some("the output is empty")
        );
    }
}
