//! How an attempt ended: the agent's output read back from the logs, and the outcome that
//! it, the exit status and the rate-limit rules make.

use std::io;
use std::path::Path;
use std::process::ExitStatus;

use std::os::unix::process::ExitStatusExt;

use super::{ActorSpec, Ended, Invocation, Stop, StopCause, log, output};
use crate::agent::output::{Format, Reading, Stdout, Verdict};

/// How the attempt ended: stopped by us, or — when it ran to its end — by what the agent's
/// output says, then the exit status, then the rate-limit rules.
pub(super) fn outcome(
    actor: &ActorSpec,
    stop: Option<Stop>,
    status: ExitStatus,
    agent: Option<&Reading>,
    drained: [&Option<output::Drained>; 2],
) -> Ended {
    let exit_code = status.code();
    let signal = status.signal();
    let matched = drained
        .into_iter()
        .flatten()
        .find_map(|drained| drained.matched.clone());
    let verdict = agent.and_then(|report| report.verdict.as_ref());
    match stop {
        Some(Stop::StopCause(cause)) => Ended::Interrupted { cause },
        // Unreachable in practice: a log failure returned above.
        Some(Stop::LogFailed) => Ended::Interrupted {
            cause: StopCause::Manual,
        },
        None if matches!(verdict, Some(Verdict::RateLimited { .. })) => {
            let message = match verdict {
                Some(Verdict::RateLimited { message, .. }) => message.as_str(),
                _ => "",
            };
            Ended::RateLimited {
                exit_code,
                matched: format!("{}: {message}", actor.output.name()),
            }
        }
        None if status.success() && !matches!(verdict, Some(Verdict::Failed { .. })) => {
            Ended::Succeeded
        }
        None => match exit_code.filter(|code| actor.rate_limit.exit_codes.contains(code)) {
            Some(code) => Ended::RateLimited {
                exit_code,
                matched: format!("exit code {code}"),
            },
            None => match matched {
                Some(matched) => Ended::RateLimited { exit_code, matched },
                None => Ended::Failed { exit_code, signal },
            },
        },
    }
}

/// Reads the attempt's logs as the actor's `output:` format says; `None` for `text`.
pub(super) fn read_agent_output(
    format: Format,
    inv: &Invocation,
    stdout: &Option<output::Drained>,
    stderr: &Option<output::Drained>,
) -> Option<Reading> {
    if format == Format::Text {
        return None;
    }
    let read = |path: &Path| {
        read_ends(path, MAX_PARSED).map_err(|err| format!("cannot read {}: {err}", path.display()))
    };
    let (out, err) = match (read(inv.stdout_log), read(inv.stderr_log)) {
        (Ok(out), Ok(err)) => (out, err),
        (Err(reason), _) | (_, Err(reason)) => {
            return Some(Reading {
                unparsed: Some(reason),
                ..Reading::default()
            });
        }
    };
    crate::agent::output::parse(format, stream(&out, stdout), stream(&err, stderr))
}

/// The most of a log read for its agent's output: what a `log_limit` far above the default
/// keeps is read as a cut log of this size, so memory stays bounded whatever the setting.
const MAX_PARSED: u64 = 64 * 1024 * 1024;

/// A log's text: whole, or — past `max` bytes — its first and last `max / 2` bytes.
fn read_ends(path: &Path, max: u64) -> io::Result<(String, Option<String>)> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = crate::files::open_regular(path)?;
    let len = file.metadata()?.len();
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    if len <= max {
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        return Ok((text(bytes), None));
    }
    let half = max / 2;
    let mut head = Vec::new();
    (&mut file).take(half).read_to_end(&mut head)?;
    file.seek(SeekFrom::End(-(half as i64)))?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail)?;
    Ok((text(head), Some(text(tail))))
}

/// A log's text as the parsers take it: whole, or head and tail when `log_limit` cut it (or
/// [`read_ends`] read only its ends).
fn stream<'a>(
    (text, tail): &'a (String, Option<String>),
    drained: &Option<output::Drained>,
) -> Stdout<'a> {
    if let Some(tail) = tail {
        return Stdout::Cut { head: text, tail };
    }
    let cut = drained.as_ref().is_some_and(|d| d.cut);
    match (cut, log::split_at_cut(text)) {
        (false, _) => Stdout::Whole(text),
        (true, Some((head, tail))) => Stdout::Cut { head, tail },
        // Cut, but no marker found: all of it is read as a tail, so that nothing is taken for
        // the whole output.
        (true, None) => Stdout::Cut {
            head: "",
            tail: text,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The attempt's directory is the agent's to write: a log it replaced by a named pipe is
    /// refused by its kind at once, never waited on (under a thread deadline).
    #[cfg(unix)]
    #[test]
    fn a_log_replaced_by_a_named_pipe_is_refused_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stdout.log");
        crate::testing::fifo(&path);
        let read = crate::testing::without_waiting(move || {
            read_ends(&path, 100).map_err(|e| e.to_string())
        });
        assert_eq!(
            read,
            Err("is a named pipe (FIFO), not a regular file".to_string())
        );
    }

    #[test]
    fn a_log_past_the_read_bound_is_read_by_its_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stdout.log");
        std::fs::write(&path, "head\nmiddle\ntail\n").unwrap();
        assert_eq!(
            read_ends(&path, 100).unwrap(),
            ("head\nmiddle\ntail\n".into(), None)
        );
        let (head, tail) = read_ends(&path, 10).unwrap();
        assert_eq!((head.as_str(), tail.as_deref()), ("head\n", Some("tail\n")));
        let both = (head, tail);
        assert_eq!(
            stream(&both, &None),
            Stdout::Cut {
                head: "head\n",
                tail: "tail\n"
            }
        );
    }
}
