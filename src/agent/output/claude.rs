//! Claude Code `-p --output-format json` — one JSON object, `"type": "result"` — or
//! `--output-format stream-json --verbose`, one JSON event per line whose last is that same
//! `result` object (measured with claude 2.1.332: the same fields, the same values).
//!
//! Read: `usage.{input_tokens, output_tokens, cache_read_input_tokens,
//! cache_creation_input_tokens}`, `total_cost_usd`, the models of `modelUsage`, `session_id`,
//! and the verdict from `is_error`, `api_error_status` and `result`. `subtype` is not trusted for
//! the verdict: claude 2.1.332 reports `"subtype": "success"` beside `"is_error": true` on a 429.
//! A rate limit's reset is the `resetsAt` (unix seconds) of the last refusal stream-json reports
//! — a `rate_limit_event` or an API error message's `api_error_params.rate_limit_info` with
//! `"status": "rejected"` — else the words of `result` ("resets 5:37pm (Europe/Berlin)").

use super::{Reading, Stdout, Tokens, Verdict, count, final_object, reset, text};

/// Words of `result` that mean a usage limit, for errors that carry no `api_error_status`.
const LIMIT_WORDS: [&str; 3] = ["hit your limit", "usage limit reached", "rate limit"];

pub(super) fn parse(stdout: Stdout) -> Reading {
    let cut = matches!(stdout, Stdout::Cut { .. });
    let object = match final_object(stdout) {
        Ok(object) => object,
        Err(reason) => return Reading::unparsed(reason, cut),
    };
    if object.get("type").and_then(|t| t.as_str()) != Some("result") {
        return Reading::unparsed(
            "the JSON object is not Claude Code's result (no \"type\": \"result\")",
            cut,
        );
    }
    let Some(is_error) = object.get("is_error").and_then(|v| v.as_bool()) else {
        return Reading::unparsed("the result has no boolean `is_error`", cut);
    };
    let message = text(object.get("result")).unwrap_or("").to_string();
    let status = object.get("api_error_status").and_then(|v| v.as_u64());
    let lower = message.to_lowercase();
    let verdict = if !is_error {
        Verdict::Succeeded
    } else if status == Some(429) || LIMIT_WORDS.iter().any(|w| lower.contains(w)) {
        let words = reset::from_message(&message);
        let reset = match resets_at(stdout) {
            Some(epoch) => Some(reset::LimitReset {
                text: words.map_or_else(|| epoch.to_string(), |w| w.text),
                epoch: Some(epoch),
                after_secs: None,
            }),
            None => words,
        };
        Verdict::RateLimited { reset, message }
    } else {
        Verdict::Failed {
            message: if message.is_empty() {
                // `error_max_turns` and the like carry no `result`; their subtype says it.
                match (status, text(object.get("subtype"))) {
                    (Some(code), _) => format!("API error {code}"),
                    (None, Some(subtype)) => format!("Claude Code reported {subtype}"),
                    (None, None) => "Claude Code reported an error".into(),
                }
            } else {
                message
            },
        }
    };
    let tokens = object
        .get("usage")
        .and_then(|u| u.as_object())
        .map(|u| Tokens {
            input: count(u.get("input_tokens")),
            output: count(u.get("output_tokens")),
            cache_read: count(u.get("cache_read_input_tokens")),
            cache_creation: count(u.get("cache_creation_input_tokens")),
            reasoning: None,
        });
    let models: Vec<&str> = object
        .get("modelUsage")
        .and_then(|m| m.as_object())
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    Reading {
        tokens,
        cost_usd: object.get("total_cost_usd").and_then(|c| c.as_f64()),
        model: (!models.is_empty()).then(|| models.join(", ")),
        session_id: text(object.get("session_id")).map(str::to_string),
        verdict: Some(verdict),
        unparsed: None,
        cut,
    }
}

/// The `resetsAt` of the last refusal among stream-json's events: Claude Code reports the API's
/// `anthropic-ratelimit-unified-*` headers as `rate_limit_event`s (`allowed`, `allowed_warning`
/// on successes; `rejected` on the 429) and again in the 429's synthetic assistant message.
/// Only a refusal says when the limit that stopped the attempt lifts.
fn resets_at(stdout: Stdout) -> Option<i64> {
    let (events, _) = super::jsonl_events(stdout);
    events.iter().rev().find_map(|event| {
        let info = match event.get("type")?.as_str()? {
            "rate_limit_event" => event.get("rate_limit_info")?,
            "assistant" => event.get("api_error_params")?.get("rate_limit_info")?,
            _ => return None,
        };
        if info.get("status")?.as_str()? != "rejected" {
            return None;
        }
        info.get("resetsAt")?.as_i64()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::output::{limit_reset, rate_limit, success};

    // Captured from claude 2.1.332 run against a mock model server on 127.0.0.1.
    const SUCCESS: &str = include_str!("../../../testdata/agents/claude/success.json");
    const RATE_LIMIT: &str = include_str!("../../../testdata/agents/claude/rate-limit-429.json");

    // Captured from claude 2.1.332 with `--output-format stream-json --verbose`, signed in as a
    // subscriber, against the mock sending the unified rate-limit headers (tests/agents/claude.rs):
    // a success under `allowed_warning`, and a 429 `rejected` resetting at 1796488633
    // (2026-12-05T16:37:13Z).
    const STREAM_TEXT: &str = include_str!("../../../testdata/agents/claude/e2e-stream-text.jsonl");
    const STREAM_LIMIT: &str =
        include_str!("../../../testdata/agents/claude/e2e-stream-usage-limit.jsonl");

    #[test]
    fn stream_json_reads_as_its_last_result() {
        let r = parse(Stdout::Whole(STREAM_TEXT));
        assert_eq!(r.verdict, Some(Verdict::Succeeded));
        let t = r.tokens.unwrap();
        assert_eq!((t.input, t.output), (Some(100), Some(20)));
        assert!(r.cost_usd.unwrap() > 0.0);
        assert!(r.session_id.is_some() && r.model.is_some());
    }

    #[test]
    fn stream_json_gives_the_refusals_resets_at() {
        let r = parse(Stdout::Whole(STREAM_LIMIT));
        let reset = limit_reset(&r);
        let (_, words) = reset.text.split_once("Dec ").unwrap();
        assert!(words.ends_with(":37pm (Europe/Berlin)"), "{}", reset.text);
        assert_eq!(reset.epoch, Some(1_796_488_633));
        // The refusal's event dropped by a cut: the error message still carries it.
        let at = STREAM_LIMIT.find("\"type\":\"rate_limit_event\"").unwrap();
        let (head, tail) = STREAM_LIMIT.split_at(at + 10);
        let r = parse(Stdout::Cut { head, tail });
        let (_, reset) = rate_limit(&r);
        assert_eq!(reset.unwrap().epoch, Some(1_796_488_633));
    }

    #[test]
    fn only_a_refusal_gives_the_reset() {
        // An `allowed_warning` event before a 429 of another kind says nothing of its end.
        let allowed = STREAM_TEXT
            .lines()
            .find(|l| l.contains("\"rate_limit_event\""))
            .unwrap();
        let text = format!("{allowed}\n{}", RATE_LIMIT.trim());
        let r = parse(Stdout::Whole(&text));
        let (_, reset) = rate_limit(&r);
        assert_eq!(reset, None);
        let rejected = allowed.replace("allowed_warning", "rejected");
        let text = format!("{rejected}\n{}", RATE_LIMIT.trim());
        let r = parse(Stdout::Whole(&text));
        let (_, reset) = rate_limit(&r);
        let reset = reset.unwrap();
        assert_eq!(reset.text, reset.epoch.unwrap().to_string());
    }

    #[test]
    fn success_gives_usage_cost_model_and_session() {
        let r = success(
            parse(Stdout::Whole(SUCCESS)),
            "input 1200, output 42, cache_read 4000, cache_creation 300, reasoning -",
        );
        assert_eq!(r.cost_usd, Some(0.00794));
        assert_eq!(r.model.as_deref(), Some("claude-opus-5-5"));
        assert_eq!(
            r.session_id.as_deref(),
            Some("774ff390-4899-478b-8069-fb5ffbe5d317")
        );
        assert!(!r.cut && r.unparsed.is_none());
    }

    #[test]
    fn api_error_429_is_a_rate_limit() {
        let r = parse(Stdout::Whole(RATE_LIMIT));
        let (message, reset) = rate_limit(&r);
        assert!(
            message.starts_with("API Error: Request rejected (429)"),
            "{message}"
        );
        assert_eq!(reset, None);
        assert_eq!(r.cost_usd, Some(0.0));
        assert_eq!(
            r.model, None,
            "modelUsage is empty when no request succeeded"
        );
    }

    #[test]
    fn subscription_limit_texts_are_rate_limits_with_their_reset() {
        // The result texts public reports show (no 429 status beside them); the rest of the
        // object is the captured one.
        for (result, words, epoch) in [
            (
                "You've hit your limit · resets 3pm (Europe/Berlin)",
                "3pm (Europe/Berlin)",
                None,
            ),
            (
                "Claude AI usage limit reached|1764500400",
                "1764500400",
                Some(1_764_500_400),
            ),
        ] {
            let mut object: serde_json::Value = serde_json::from_str(RATE_LIMIT).unwrap();
            object["api_error_status"] = serde_json::Value::Null;
            object["result"] = result.into();
            let r = parse(Stdout::Whole(&object.to_string()));
            let reset = limit_reset(&r);
            assert_eq!((reset.text.as_str(), reset.epoch), (words, epoch));
        }
    }

    #[test]
    fn another_error_is_a_failure_with_its_message() {
        let mut object: serde_json::Value = serde_json::from_str(RATE_LIMIT).unwrap();
        object["api_error_status"] = 500.into();
        object["result"] = "API Error: 500 Internal server error".into();
        let r = parse(Stdout::Whole(&object.to_string()));
        assert_eq!(
            r.verdict,
            Some(Verdict::Failed {
                message: "API Error: 500 Internal server error".into()
            })
        );
    }

    #[test]
    fn an_error_without_a_result_names_its_subtype() {
        let mut object: serde_json::Value = serde_json::from_str(SUCCESS).unwrap();
        object["is_error"] = true.into();
        object["subtype"] = "error_max_turns".into();
        object.as_object_mut().unwrap().remove("result");
        let r = parse(Stdout::Whole(&object.to_string()));
        assert_eq!(
            r.verdict,
            Some(Verdict::Failed {
                message: "Claude Code reported error_max_turns".into()
            })
        );
        assert_eq!(r.cost_usd, Some(0.00794), "what it cost is kept");
    }

    #[test]
    fn what_is_not_a_result_is_unparsed() {
        let r = parse(Stdout::Whole("Error: unknown option '--output-format'\n"));
        assert!(r.verdict.is_none());
        assert!(
            r.unparsed
                .unwrap()
                .starts_with("the output is not one JSON object")
        );
        let r = parse(Stdout::Whole("{\"type\":\"system\"}"));
        assert!(r.unparsed.unwrap().contains("not Claude Code's result"));
        let r = parse(Stdout::Whole("{\"type\":\"result\"}"));
        assert_eq!(
            r.unparsed.as_deref(),
            Some("the result has no boolean `is_error`")
        );
    }

    #[test]
    fn a_result_cut_by_log_limit_is_unparsed() {
        let (head, tail) = SUCCESS.split_at(SUCCESS.len() / 2);
        let r = parse(Stdout::Cut { head, tail });
        assert!(r.cut && r.tokens.is_none() && r.verdict.is_none());
        assert!(r.unparsed.unwrap().contains("log_limit"));
        // Noise before the object was dropped, the object itself is whole: it is read.
        let r = parse(Stdout::Cut {
            head: "progress…",
            tail: &format!("…progress\n{SUCCESS}"),
        });
        assert_eq!(r.verdict, Some(Verdict::Succeeded));
        assert!(r.cut);
    }
}
