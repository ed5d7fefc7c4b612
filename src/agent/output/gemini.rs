//! Gemini CLI `--output-format json`: one (pretty-printed) JSON object, `{session_id, response,
//! stats, error}` — on stdout, except an error object, which gemini 0.61.0 prints on stderr
//! (measured: stdout empty, the object the last thing on stderr, exit code 41 for an
//! authentication error). So when stdout is blank the object is read from the end of stderr.
//!
//! Read: `session_id`; the tokens of every model under `stats.models` (`input`, or where it is
//! missing `prompt` less `cached`, as input — Gemini's `prompt` counts the cached tokens in, unlike Claude Code's
//! `input_tokens` — `cached` as cache reads, `candidates` as output, `thoughts` as reasoning),
//! summed, and the models' names;
//! the verdict from `error`: absent is a success, present is a failure, or a rate limit when its
//! `code` is 429 or its message names a 429, `RESOURCE_EXHAUSTED` or a quota. (`error.code` is
//! what Gemini CLI exits with: 41 for an authentication error, 429 for a rate limit.) Gemini CLI
//! reports no cost.
//!
//! A model server answering every request with 429 made gemini 0.61.0 retry 10 times with
//! backoff (minutes), logging each try with a stack trace on stderr, then print the object with
//! `error.code: 429` on stderr and exit 173 — 429 modulo 256. (Exit code 55 is an untrusted
//! folder.) Output without the object reads as unparsed, and the exit code and the actor's
//! `rate_limit` rules decide.

use serde_json::Value;

use super::{Reading, Stdout, Tokens, Verdict, count, final_object, reset, text};

const LIMIT_WORDS: [&str; 4] = ["429", "resource_exhausted", "quota", "rate limit"];

pub(super) fn parse(stdout: Stdout, stderr: Stdout) -> Reading {
    let blank = match stdout {
        Stdout::Whole(text) => text.trim().is_empty(),
        Stdout::Cut { .. } => false,
    };
    let (stream, from_stderr) = match blank {
        true => (trailing_object(stderr), true),
        false => (stdout, false),
    };
    let cut = matches!(stream, Stdout::Cut { .. });
    let object = match final_object(stream) {
        Err(reason) if from_stderr => {
            return Reading::unparsed(
                format!("stdout is empty and stderr does not end with a JSON object ({reason})"),
                cut,
            );
        }
        Ok(object) => object,
        Err(reason) => return Reading::unparsed(reason, cut),
    };
    if !["response", "stats", "error"]
        .iter()
        .any(|key| object.contains_key(*key))
    {
        return Reading::unparsed(
            "the JSON object has none of Gemini CLI's `response`, `stats`, `error`",
            cut,
        );
    }
    let verdict = match object.get("error") {
        None | Some(Value::Null) => Verdict::Succeeded,
        Some(error) => {
            let message = text(error.get("message"))
                .unwrap_or("Gemini CLI reported an error")
                .to_string();
            let lower = message.to_lowercase();
            let code = error.get("code").and_then(Value::as_u64);
            if code == Some(429) || LIMIT_WORDS.iter().any(|w| lower.contains(w)) {
                Verdict::RateLimited {
                    reset: reset::from_message(&message),
                    message,
                }
            } else {
                Verdict::Failed { message }
            }
        }
    };
    let models = object
        .get("stats")
        .and_then(|s| s.get("models"))
        .and_then(Value::as_object);
    let mut tokens = None;
    let mut names = Vec::new();
    for (name, model) in models.into_iter().flatten() {
        names.push(name.as_str());
        if let Some(t) = model.get("tokens").and_then(Value::as_object) {
            let cached = count(t.get("cached"));
            // gemini 0.61.0 prints `input` (`prompt` less `cached`) beside `prompt`.
            let input = count(t.get("input"))
                .or_else(|| count(t.get("prompt")).map(|p| p.saturating_sub(cached.unwrap_or(0))));
            tokens.get_or_insert_with(Tokens::default).add(&Tokens {
                input,
                output: count(t.get("candidates")),
                cache_read: count(t.get("cached")),
                cache_creation: None,
                reasoning: count(t.get("thoughts")),
            });
        }
    }
    Reading {
        tokens,
        cost_usd: None,
        model: (!names.is_empty()).then(|| names.join(", ")),
        session_id: text(object.get("session_id")).map(str::to_string),
        verdict: Some(verdict),
        unparsed: None,
        cut,
    }
}

/// The pretty-printed object at the end of `stderr`: from its last line that is a lone `{`.
fn trailing_object(stderr: Stdout) -> Stdout {
    let start = |text: &str| match text.rfind("\n{\n") {
        Some(at) => at + 1,
        None => 0,
    };
    match stderr {
        Stdout::Whole(text) => Stdout::Whole(&text[start(text)..]),
        Stdout::Cut { head, tail } => Stdout::Cut {
            head,
            tail: &tail[start(tail)..],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::output::success;

    // Captured from gemini 0.61.0 with no authentication method configured: stdout was empty,
    // this was its stderr, exit code 41.
    const AUTH_ERROR: &str = include_str!("../../../testdata/agents/gemini/auth-error.stderr");
    const NONE: Stdout = Stdout::Whole("");

    #[test]
    fn an_error_object_is_a_failure_with_its_session() {
        let r = parse(NONE, Stdout::Whole(AUTH_ERROR));
        assert_eq!(
            r.verdict,
            Some(Verdict::Failed {
                message: "Invalid auth method selected.".into()
            })
        );
        assert_eq!(
            r.session_id.as_deref(),
            Some("3a019d00-76cc-4afe-9c9e-b80139c4814f")
        );
        assert_eq!((r.tokens, r.cost_usd), (None, None));
    }

    // The end of gemini 0.61.0's stderr after 10 tries against a server answering 429: its last
    // try's line and the object (the stack traces before them, which name this machine's paths,
    // left out). It exited 173.
    const RATE_LIMIT: &str = include_str!("../../../testdata/agents/gemini/rate-limit-429.stderr");

    #[test]
    fn the_captured_429_is_a_rate_limit() {
        let r = parse(NONE, Stdout::Whole(RATE_LIMIT));
        assert_eq!(
            r.verdict,
            Some(Verdict::RateLimited {
                message: "Resource has been exhausted (e.g. check quota).".into(),
                reset: None
            })
        );
        assert_eq!(
            r.session_id.as_deref(),
            Some("cc350c8c-f664-4734-ba8b-9832f1861aac")
        );
        // The code alone says it, whatever the message.
        let other = RATE_LIMIT.replace("Resource has been exhausted (e.g. check quota).", "x");
        let r = parse(NONE, Stdout::Whole(&other));
        assert!(
            matches!(r.verdict, Some(Verdict::RateLimited { .. })),
            "{r:?}"
        );
    }

    #[test]
    fn quota_errors_are_rate_limits() {
        // The message Gemini's API returns with HTTP 429 (as gemini 0.61.0 logged it on stderr
        // while retrying), in the captured error object.
        let mut object: Value = serde_json::from_str(AUTH_ERROR).unwrap();
        object["error"]["message"] =
            "[{\"error\":{\"code\":429,\"message\":\"Resource has been exhausted (e.g. check quota).\",\"status\":\"RESOURCE_EXHAUSTED\"}}]".into();
        let text = format!("Attempt 1 failed with status 429.\n{object:#}\n");
        let r = parse(Stdout::Whole("\n"), Stdout::Whole(&text));
        assert!(
            matches!(r.verdict, Some(Verdict::RateLimited { .. })),
            "{r:?}"
        );
    }

    // Captured from gemini 0.61.0 through the `gemini` preset with `--output-format json` (before
    // it moved to `stream-json`; tests/agents/gemini.rs) against a mock model server on 127.0.0.1: a `write_file`, a `run_shell_command` of
    // `git baton unchanged`, then text; each turn 25,000 prompt tokens (5,000 of them cached) and
    // 2,000 output tokens.
    const EDIT: &str = include_str!("../../../testdata/agents/gemini/e2e-edit-unchanged.json");

    #[test]
    fn a_captured_success_records_input_without_the_cached_tokens() {
        let r = success(
            parse(Stdout::Whole(EDIT), NONE),
            "input 60000, output 6000, cache_read 15000, cache_creation -, reasoning 0",
        );
        assert_eq!(r.model.as_deref(), Some("gemini-2.5-pro"));
        assert_eq!(
            r.session_id.as_deref(),
            Some("1ff3ad6f-2fab-4547-ae2d-091a17879960")
        );
        // Without `input`, as older builds print: `prompt` less `cached`.
        let mut object: Value = serde_json::from_str(EDIT).unwrap();
        let tokens = &mut object["stats"]["models"]["gemini-2.5-pro"]["tokens"];
        tokens.as_object_mut().unwrap().remove("input");
        let text = object.to_string();
        let r = parse(Stdout::Whole(&text), NONE);
        assert_eq!(r.tokens.unwrap().input, Some(60_000));
    }

    #[test]
    fn stats_give_tokens_per_model_summed() {
        // Two models (as without `-m`, where the router's model is listed too), without
        // `input`: each model's `prompt` less its `cached`.
        let text = r#"{"session_id":"s","response":"done","stats":{"models":{
            "gemini-2.5-pro":{"tokens":{"prompt":100,"candidates":20,"total":130,"cached":40,"thoughts":10,"tool":0}},
            "gemini-2.5-flash":{"tokens":{"prompt":5,"candidates":1,"total":6,"cached":0,"thoughts":0,"tool":0}}}}}"#;
        // (100 - 40) + 5: the cached tokens are counted once, as cache reads.
        let r = success(
            parse(Stdout::Whole(text), NONE),
            "input 65, output 21, cache_read 40, cache_creation -, reasoning 10",
        );
        assert_eq!(r.model.as_deref(), Some("gemini-2.5-flash, gemini-2.5-pro"));
    }

    #[test]
    fn empty_or_foreign_output_is_unparsed() {
        // What gemini 0.61.0 prints while it retries a 429: nothing on stdout, tries on stderr.
        let retries = "Attempt 1 failed with status 429. Retrying with backoff... _ApiError: \
                       [{\"error\":{\"code\":429}}]\n  status: 429\n}\n";
        let r = parse(NONE, Stdout::Whole(retries));
        assert!(r.verdict.is_none());
        assert!(
            r.unparsed
                .unwrap()
                .starts_with("stdout is empty and stderr does not end with a JSON object"),
        );
        let r = parse(Stdout::Whole("{\"x\":1}"), NONE);
        assert!(r.unparsed.unwrap().contains("none of"));
    }
}
