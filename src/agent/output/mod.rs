//! An attempt's stdout, read as the structured output its agent prints: tokens, cost, model,
//! session id, and a verdict — succeeded, failed with a message, or rate limited with the reset
//! time when the output gives one.
//!
//! Every parser works on what the attempt's log holds, which `log_limit` may have cut in the
//! middle ([`Stdout::Cut`]): the head and the tail are read separately, a record broken by the
//! cut is skipped, and the report says that its usage may be a lower bound ([`Reading::cut`]).
//! Output that does not have the shape of its format is reported [`Reading::unparsed`] with the
//! reason, never guessed at: its attempt ends by its exit code and rate-limit rules as before.

mod aider;
mod claude;
mod clock;
mod codex;
mod gemini;
mod gemini_stream;
mod opencode;
mod reset;

use serde::{Deserialize, Serialize};

pub use reset::LimitReset;

/// The actor key `output:` — what the actor's stdout is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Nothing is parsed (plain commands; usage comes from the evidence file).
    #[default]
    Text,
    /// Claude Code `-p --output-format json` (one JSON object) or `stream-json --verbose` (JSON
    /// lines ending with that object).
    ClaudeJson,
    /// `codex exec --json`: one JSON event per line.
    CodexJsonl,
    /// Gemini CLI `--output-format json`: `{response, stats, error}`.
    GeminiJson,
    /// Gemini CLI `--output-format stream-json`: one JSON event per line, a `result` last.
    GeminiStreamJson,
    /// aider's console text (`--no-pretty`): its usage reports and its last API error.
    AiderText,
    /// `opencode run --format json`: one JSON event per line.
    OpencodeJsonl,
}

impl Format {
    /// The name written in `.baton.yml` and recorded in the RunState.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::ClaudeJson => "claude-json",
            Format::CodexJsonl => "codex-jsonl",
            Format::GeminiJson => "gemini-json",
            Format::GeminiStreamJson => "gemini-stream-json",
            Format::AiderText => "aider-text",
            Format::OpencodeJsonl => "opencode-jsonl",
        }
    }
}

/// The text of one of an attempt's output logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdout<'a> {
    /// Everything the actor printed.
    Whole(&'a str),
    /// `log_limit` dropped the middle: the first and the last part of the stream, the marker
    /// line between them left out. Either part may begin or end inside a line.
    Cut { head: &'a str, tail: &'a str },
}

impl<'a> Stdout<'a> {
    /// The parts of the log as kept (both ends of a cut one), and whether it was cut.
    fn parts(self) -> (Vec<&'a str>, bool) {
        match self {
            Stdout::Whole(text) => (vec![text], false),
            Stdout::Cut { head, tail } => (vec![head, tail], true),
        }
    }
}

/// The JSON objects of a JSONL log, one per non-empty line, in order, and what else the log
/// held. In a cut log the line broken at each side of the cut is not an object: skipped and
/// counted, like any line that is not an event.
fn jsonl_events(stdout: Stdout) -> (Vec<serde_json::Map<String, serde_json::Value>>, Log) {
    let (parts, cut) = stdout.parts();
    let mut events = Vec::new();
    let mut not_json = 0;
    for line in parts.iter().flat_map(|p| p.lines()) {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(serde_json::Value::Object(event)) => events.push(event),
            _ => not_json += 1,
        }
    }
    let log = Log {
        events: events.len(),
        not_json,
        cut,
    };
    (events, log)
}

/// How many events and other lines a JSONL log held, and whether `log_limit` cut it.
#[derive(Debug, Clone, Copy)]
struct Log {
    events: usize,
    not_json: usize,
    cut: bool,
}

impl Log {
    /// A reading's `verdict`, `unparsed` and `cut` for this log, whose ending event gave
    /// `verdict` if it held one (`wanted` names that event as the agent does); the parser adds
    /// what else it read.
    fn ending(self, verdict: Option<Verdict>, wanted: &str) -> Reading {
        Reading {
            unparsed: verdict.is_none().then(|| self.without(wanted)),
            verdict,
            cut: self.cut,
            ..Reading::default()
        }
    }

    /// Why a log without the event that ends a run (`wanted`, as the agent names it) cannot be
    /// read: what [`Reading::unparsed`] says.
    fn without(self, wanted: &str) -> String {
        let Log {
            events,
            not_json,
            cut,
        } = self;
        if events == 0 && not_json == 0 {
            "the output is empty".to_string()
        } else if events == 0 {
            format!("none of the {not_json} line(s) of the output is a JSON event")
        } else if cut {
            format!(
                "no {wanted} event among {events} event(s); the log was cut in the middle by \
                 log_limit"
            )
        } else {
            format!("no {wanted} event among {events} event(s)")
        }
    }
}

/// Tokens as the agent reports them (docs/agents.md says what each agent counts in each).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tokens {
    pub input: Option<u64>,
    pub output: Option<u64>,
    pub cache_read: Option<u64>,
    pub cache_creation: Option<u64>,
    /// Codex's `reasoning_output_tokens`.
    pub reasoning: Option<u64>,
}

impl Tokens {
    /// Field by field; a field reported by either side is reported.
    fn add(&mut self, other: &Tokens) {
        let sum = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
        };
        self.input = sum(self.input, other.input);
        self.output = sum(self.output, other.output);
        self.cache_read = sum(self.cache_read, other.cache_read);
        self.cache_creation = sum(self.cache_creation, other.cache_creation);
        self.reasoning = sum(self.reasoning, other.reasoning);
    }
}

/// A reading's token counts in one line, `-` for a count the agent did not report: what the
/// parsers' tests compare, so that each states its agent's figures and not the struct again.
#[cfg(test)]
fn tokens_line(reading: &Reading) -> String {
    let Some(t) = &reading.tokens else {
        return "no tokens".to_owned();
    };
    let count = |n: Option<u64>| n.map_or_else(|| "-".to_owned(), |n| n.to_string());
    format!(
        "input {}, output {}, cache_read {}, cache_creation {}, reasoning {}",
        count(t.input),
        count(t.output),
        count(t.cache_read),
        count(t.cache_creation),
        count(t.reasoning)
    )
}

/// `reading`, which must be a success with the token counts `tokens` (as [`tokens_line`]
/// writes them), for the test to check the rest of it.
#[cfg(test)]
#[track_caller]
fn success(reading: Reading, tokens: &str) -> Reading {
    assert_eq!(reading.verdict, Some(Verdict::Succeeded), "{reading:?}");
    assert_eq!(tokens_line(&reading), tokens, "{reading:?}");
    reading
}

/// The rate limit `reading` reports: its message and reset. A test that expects one fails here,
/// with the whole reading, when it is not one.
#[cfg(test)]
fn rate_limit(reading: &Reading) -> (&str, Option<&LimitReset>) {
    match &reading.verdict {
        Some(Verdict::RateLimited { message, reset }) => (message, reset.as_ref()),
        _ => panic!("not a rate limit: {reading:?}"),
    }
}

/// The reset of the rate limit `reading` reports.
#[cfg(test)]
fn limit_reset(reading: &Reading) -> &LimitReset {
    rate_limit(reading)
        .1
        .unwrap_or_else(|| panic!("a rate limit without a reset: {reading:?}"))
}

/// How the agent says its run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Succeeded,
    Failed {
        message: String,
    },
    RateLimited {
        message: String,
        reset: Option<LimitReset>,
    },
}

/// What an attempt's output says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    pub tokens: Option<Tokens>,
    /// Only where the agent reports one (Claude Code); never computed here.
    pub cost_usd: Option<f64>,
    pub model: Option<String>,
    pub session_id: Option<String>,
    /// `None` exactly when [`Reading::unparsed`] is set.
    pub verdict: Option<Verdict>,
    /// Why the output could not be read as its format.
    pub unparsed: Option<String>,
    /// The log was cut by `log_limit`: what the dropped middle held is missing here.
    pub cut: bool,
}

impl Reading {
    fn unparsed(reason: impl Into<String>, cut: bool) -> Reading {
        Reading {
            unparsed: Some(reason.into()),
            cut,
            ..Reading::default()
        }
    }
}

/// Reads an attempt's output as `format`; `None` for [`Format::Text`], which is not parsed.
/// Only Gemini CLI looks at `stderr`, where it prints its error object.
pub fn parse(format: Format, stdout: Stdout, stderr: Stdout) -> Option<Reading> {
    let report = match format {
        Format::Text => return None,
        Format::ClaudeJson => claude::parse(stdout),
        Format::CodexJsonl => codex::parse(stdout),
        Format::GeminiJson => gemini::parse(stdout, stderr),
        Format::GeminiStreamJson => gemini_stream::parse(stdout, stderr),
        Format::AiderText => aider::parse(stdout),
        Format::OpencodeJsonl => opencode::parse(stdout),
    };
    Some(report)
}

/// The last non-blank line of `text`, for formats that print one JSON document on one line.
fn last_line(text: &str) -> Option<&str> {
    text.lines().rev().map(str::trim).find(|l| !l.is_empty())
}

/// The one JSON object an agent prints at its end (Claude Code, Gemini CLI): the whole output,
/// or, when the output holds more than it, its last line. From a cut log only a tail that holds
/// the whole object is read; anything else would be a guess.
fn final_object(stdout: Stdout) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    use serde_json::Value;
    let (text, cut) = match stdout {
        Stdout::Whole(text) => (text, false),
        Stdout::Cut { tail, .. } => (tail, true),
    };
    if text.trim().is_empty() {
        return Err("the output is empty".into());
    }
    let whole = (!cut)
        .then(|| serde_json::from_str::<Value>(text.trim()).ok())
        .flatten();
    let value = match whole {
        Some(value) => value,
        None => {
            let line = last_line(text).unwrap_or_default();
            match serde_json::from_str::<Value>(line) {
                Ok(value) => value,
                Err(_) if cut => {
                    return Err(
                        "the log was cut in the middle by log_limit and its tail does not hold \
                         the whole JSON object"
                            .into(),
                    );
                }
                Err(err) => return Err(format!("the output is not one JSON object: {err}")),
            }
        }
    };
    match value {
        Value::Object(map) => Ok(map),
        other => Err(format!(
            "the output is JSON but not an object: {}",
            kind(&other)
        )),
    }
}

fn kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// A count of tokens: a non-negative integer.
fn count(value: Option<&serde_json::Value>) -> Option<u64> {
    value.and_then(serde_json::Value::as_u64)
}

fn text(value: Option<&serde_json::Value>) -> Option<&str> {
    value
        .and_then(serde_json::Value::as_str)
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_not_parsed() {
        let json = Stdout::Whole("{}");
        assert_eq!(parse(Format::Text, json, json), None);
    }

    #[test]
    fn format_names_are_the_config_words() {
        for format in [
            Format::Text,
            Format::ClaudeJson,
            Format::CodexJsonl,
            Format::GeminiJson,
            Format::GeminiStreamJson,
            Format::AiderText,
            Format::OpencodeJsonl,
        ] {
            let json = serde_json::to_string(&format).unwrap();
            assert_eq!(json, format!("\"{}\"", format.name()));
        }
    }

    #[test]
    fn tokens_add_field_by_field() {
        let mut a = Tokens {
            input: Some(1),
            output: None,
            ..Tokens::default()
        };
        a.add(&Tokens {
            input: Some(2),
            reasoning: Some(5),
            ..Tokens::default()
        });
        assert_eq!(
            a,
            Tokens {
                input: Some(3),
                reasoning: Some(5),
                ..Tokens::default()
            }
        );
    }

    #[test]
    fn a_cut_object_is_unparsed_not_guessed() {
        let err = final_object(Stdout::Cut {
            head: "{\"type\":\"result\",\"result\":\"aaa",
            tail: "aaa\",\"total_cost_usd\":1.5}\n",
        })
        .unwrap_err();
        assert!(err.contains("cut in the middle by log_limit"), "{err}");
        assert!(
            final_object(Stdout::Cut {
                head: "noise",
                tail: "noise\n{\"a\":1}\n"
            })
            .is_ok()
        );
    }

    #[test]
    fn empty_and_non_object_outputs_say_why() {
        assert_eq!(
            final_object(Stdout::Whole(" \n")).unwrap_err(),
            "the output is empty"
        );
        assert_eq!(
            final_object(Stdout::Whole("[1]")).unwrap_err(),
            "the output is JSON but not an object: an array"
        );
        assert!(
            final_object(Stdout::Whole("Error: boom"))
                .unwrap_err()
                .starts_with("the output is not one JSON object: ")
        );
    }
}
