//! How an attempt ends, from what the exec layer observed: the outcome, the error message, and
//! what the agent's output said (usage, session, the reset of a rate limit).

use jiff::Timestamp;

use crate::agent::output::{Format, LimitReset, Reading, Verdict};
use crate::coverage;
use crate::exec;
use crate::state::transition::AttemptEnd;
use crate::state::{AgentOutput, Cause, Outcome, RateLimitReset, UsageSource};

/// How the attempt ended, from what the exec layer observed; with the rate limit's reset as the
/// output gave it, dated by the caller once the attempt's end is known.
pub(super) fn attempt_end(f: &exec::Ran, format: Format) -> (AttemptEnd, Option<LimitReset>) {
    let duration_ms = Some(f.duration.as_millis() as u64);
    let tail = |prefix: String| {
        if f.stderr_tail.trim().is_empty() {
            prefix
        } else {
            format!("{prefix}; stderr ends with:\n{}", f.stderr_tail.trim_end())
        }
    };
    let verdict = f.agent.as_ref().and_then(|r| r.verdict.as_ref());
    let (outcome, cause, error) = match &f.outcome {
        exec::Ended::Succeeded => (Outcome::Succeeded, None, None),
        exec::Ended::Failed { exit_code, signal } => {
            let what = match (exit_code, signal) {
                (Some(code), _) => format!("the actor exited with code {code}"),
                (None, Some(sig)) => format!("the actor was killed by signal {sig}"),
                _ => "the actor failed".into(),
            };
            let what = match verdict {
                Some(Verdict::Failed { message }) => {
                    format!(
                        "{what}; its output ({}) reports a failure: {message}",
                        format.name()
                    )
                }
                _ => what,
            };
            (Outcome::Failed, None, Some(tail(what)))
        }
        exec::Ended::RateLimited { matched, .. } => {
            let resets = match verdict {
                Some(Verdict::RateLimited {
                    reset: Some(reset), ..
                }) => format!("; resets {}", reset.text),
                _ => String::new(),
            };
            (
                Outcome::RateLimited,
                None,
                Some(format!("rate limited ({matched}){resets}")),
            )
        }
        exec::Ended::Interrupted { cause } => {
            let (cause, what) = match cause {
                exec::StopCause::Manual => (Cause::Manual, "stopped by request"),
                exec::StopCause::Timeout => {
                    (Cause::Timeout, "stopped: the actor's timeout elapsed")
                }
            };
            (Outcome::Interrupted, Some(cause), Some(what.to_string()))
        }
    };
    let (usage, agent, reset) = match &f.agent {
        None => (None, None, None),
        Some(report) => agent_record(report, format),
    };
    let end = AttemptEnd {
        outcome,
        cause,
        duration_ms,
        exit_code: f.exit_code,
        signal: f.signal,
        usage_source: usage.as_ref().map(|_| UsageSource::Output),
        usage,
        agent,
        error,
        // What the gate, the snapshot and the checks find is added after the actor ended.
        ..AttemptEnd::default()
    };
    (end, reset)
}

/// What an attempt records of its agent's output: the usage (when the output counted tokens or
/// cost), the rest of what was read, and the reset of a rate limit, still to be dated.
fn agent_record(
    report: &Reading,
    format: Format,
) -> (
    Option<coverage::Usage>,
    Option<Box<AgentOutput>>,
    Option<LimitReset>,
) {
    let tokens = report.tokens.clone().unwrap_or_default();
    let usage = (report.tokens.is_some() || report.cost_usd.is_some()).then(|| coverage::Usage {
        input_tokens: tokens.input,
        output_tokens: tokens.output,
        cost_usd: report.cost_usd,
        model: report.model.as_deref().map(clipped),
        provider: None,
    });
    let reset = match &report.verdict {
        Some(Verdict::RateLimited { reset, .. }) => reset.clone(),
        _ => None,
    };
    let agent = AgentOutput {
        format,
        session_id: report.session_id.as_deref().map(clipped),
        cache_read_input_tokens: tokens.cache_read,
        cache_creation_input_tokens: tokens.cache_creation,
        reasoning_output_tokens: tokens.reasoning,
        rate_limit_reset: None,
        unparsed: report.unparsed.clone(),
        cut: report.cut,
    };
    (usage, Some(Box::new(agent)), reset)
}

/// A name the agent's output gives (its model, its session), as the attempt records it: at
/// most [`coverage::USAGE_NAME_LIMIT`] characters, so that the RunState stays bounded whatever
/// an agent prints.
fn clipped(name: &str) -> String {
    match name.char_indices().nth(coverage::USAGE_NAME_LIMIT) {
        Some((cut, _)) => format!("{}…", &name[..cut]),
        None => name.to_owned(),
    }
}

/// The reset as recorded: its words, and its instant when the output named one (an epoch), a
/// wait (counted from the attempt's end) or a wall-clock time (the next one after the attempt's
/// end, in the zone the words name or else in this machine's: see `Reset::instant`). A machine
/// whose zone cannot be found gives a wall-clock time without a zone no instant: taking UTC
/// instead would be a guess.
pub(super) fn reset_record(reset: LimitReset, ended_at: Timestamp) -> RateLimitReset {
    let local = jiff::tz::TimeZone::try_system().ok();
    let (at, text) = reset.instant(ended_at, local.as_ref());
    RateLimitReset { text, at }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name the agent prints is recorded whole up to the limit, and cut past it on a
    /// character's boundary, marked.
    #[test]
    fn agent_names_are_clipped_to_the_limit() {
        let limit = coverage::USAGE_NAME_LIMIT;
        assert_eq!(clipped("claude-sonnet-4"), "claude-sonnet-4");
        assert_eq!(clipped(&"a".repeat(limit)), "a".repeat(limit));
        let cut = clipped(&"é".repeat(limit + 1));
        assert_eq!(cut, format!("{}…", "é".repeat(limit)));
    }
}
