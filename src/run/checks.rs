//! The runner's checks of an attempt (docs/checks.md): the commands `.baton.yml` and the plan
//! name, run by git-baton itself in the run's worktree once the actor has exited and its
//! snapshot is recorded, before the gate decides. They run through `exec` like an actor — own
//! process group, timeout with the group killed, capped logs, the actor's cleaned environment —
//! and what they did is recorded on the attempt as runner evidence, apart from anything the
//! agent wrote.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::config::CheckSpec;
use crate::exec::{self, ExecError};
use crate::state::checks::{CheckOutcome, CheckResult, MAX_ERROR, MAX_TAIL, TAIL_BYTES, log_paths};
use crate::state::clock::Clock;

/// Where the runner's check logs go in the attempt's directory (`state::checks::log_paths`).
pub(super) const RUNNER_LOGS: &str = "checks";
/// Where `git baton check --checks` puts the logs of the runs the agent asked for: never where
/// the runner's are, which only git-baton's own run after the agent writes.
const AGENT_LOGS: &str = "agent-checks";

/// Runs the checks the runner will run on the open attempt `current`, for the agent's
/// information (`git baton check --checks`): the same commands, environment and limits, logs
/// in the attempt's `agent-checks/`. Nothing is recorded: only the runner's run, after the
/// agent exits, counts.
pub fn for_agent(
    current: &super::agent_side::Current,
    config: &crate::config::Config,
    clock: &Clock,
) -> Result<Vec<CheckResult>, ExecError> {
    let state = &current.state;
    let stage = &state.stages()[current.stage];
    let checks = config.checks_for(&stage.name, stage.gated, &current.plan, &state.plan.path);
    let interrupted = exec::interrupt_flag()?;
    let cleared = super::attempt::actor_cleared_vars();
    let never = || false;
    let none = |_: &str| -> Option<Box<dyn Send>> { None };
    let env = vec![
        ("BATON_RUN_ID".to_string(), state.run_id.to_string()),
        ("BATON_STAGE".into(), stage.name.clone()),
        ("BATON_ATTEMPT".into(), current.attempt.to_string()),
        ("BATON_BASE".into(), state.base.to_string()),
        ("BATON_WORKTREE".into(), state.worktree.clone()),
    ];
    let token_file = current.attempt_dir.join(AGENT_LOGS).join("token");
    let cx = Context {
        worktree: Path::new(&state.worktree),
        attempt_dir: &current.attempt_dir,
        log_dir: AGENT_LOGS,
        token_file: &token_file,
        env,
        clear_env: &cleared,
        stop_requested: &never,
        interrupted: &interrupted,
        grace: super::GRACE,
        log_limit: config.log_limit,
        clock,
        running: &none,
    };
    Ok(run_all(&checks, &cx))
}

/// The lines of each stream's end kept as a check's tail.
const TAIL_LINES: usize = 20;

/// Where and how an attempt's checks run: everything but the checks themselves.
pub(super) struct Context<'a> {
    pub worktree: &'a Path,
    /// The attempt's directory: the logs go to its `checks/` (the runner's), or to its
    /// `agent-checks/` ([`for_agent`]).
    pub attempt_dir: &'a Path,
    pub log_dir: &'a str,
    /// Where the running check's token is recorded, so that a later git-baton finds what a
    /// crash left running (the actor's is no longer needed: its processes are all gone).
    pub token_file: &'a Path,
    pub env: Vec<(String, String)>,
    pub clear_env: &'a [&'a str],
    pub stop_requested: &'a dyn Fn() -> bool,
    pub interrupted: &'a AtomicBool,
    pub grace: Duration,
    pub log_limit: u64,
    pub clock: &'a Clock,
    /// Shown while a check runs (a status line), dropped when it ends.
    pub running: &'a dyn Fn(&str) -> Option<Box<dyn Send>>,
}

/// Runs `checks` in order and says how each ended; after one that was interrupted, the rest are
/// not started.
pub(super) fn run_all(checks: &[CheckSpec], cx: &Context) -> Vec<CheckResult> {
    let mut results = Vec::with_capacity(checks.len());
    for check in checks {
        let result = run_one(check, cx);
        let stop = result.outcome == CheckOutcome::Interrupted;
        results.push(result);
        if stop {
            break;
        }
    }
    results
}

fn run_one(check: &CheckSpec, cx: &Context) -> CheckResult {
    let (mut stdout_log, mut stderr_log) = log_paths(&check.name);
    if cx.log_dir != RUNNER_LOGS {
        stdout_log = format!("{}/{}.stdout.log", cx.log_dir, check.name);
        stderr_log = format!("{}/{}.stderr.log", cx.log_dir, check.name);
    }
    let mut result = CheckResult {
        name: check.name.clone(),
        outcome: CheckOutcome::Error,
        exit_code: None,
        signal: None,
        duration_ms: 0,
        stdout_log,
        stderr_log,
        tail: String::new(),
        error: None,
    };
    if let Err(err) = log_dir(&cx.attempt_dir.join(cx.log_dir)) {
        result.error = Some(bounded(format!(
            "{}: cannot create the checks' log directory: {}",
            check.origin,
            crate::files::io_reason(&err)
        )));
        return result;
    }
    let spec = exec::ActorSpec {
        name: check.name.clone(),
        command: check.command.clone(),
        stdin_prompt: false,
        env: Vec::new(),
        timeout: Some(check.timeout),
        rate_limit: exec::RateLimitRules::default(),
        output: crate::agent::output::Format::Text,
    };
    let stdout_path = cx.attempt_dir.join(&result.stdout_log);
    let stderr_path = cx.attempt_dir.join(&result.stderr_log);
    if let Err(err) = [&stdout_path, &stderr_path]
        .into_iter()
        .try_for_each(|p| fresh_log(p))
    {
        result.error = Some(bounded(format!(
            "{}: cannot make way for the check's logs: {}",
            check.origin,
            crate::files::io_reason(&err)
        )));
        return result;
    }
    let invocation = exec::Invocation {
        actor: &spec,
        workdir: cx.worktree,
        env: cx.env.clone(),
        clear_env: cx.clear_env,
        placeholders: None,
        // stdin is /dev/null: a check that waits for input fails rather than hangs.
        prompt_file: Path::new("/dev/null"),
        stdout_log: &stdout_path,
        stderr_log: &stderr_path,
        echo: &exec::no_echo,
        stop_requested: cx.stop_requested,
        interrupted: cx.interrupted,
        grace: cx.grace,
        token_file: Some(cx.token_file),
        pid_file: None,
        log_limit: cx.log_limit,
    };
    let status_line = (cx.running)(&check.name);
    let ran = exec::run(&invocation);
    drop(status_line);
    let finished = match ran {
        Ok(finished) => finished,
        Err(err) => {
            result.error = Some(bounded(format!("{}: {}", check.origin, reason(&err))));
            return result;
        }
    };
    result.outcome = match finished.outcome {
        exec::Ended::Succeeded => CheckOutcome::Passed,
        exec::Ended::Interrupted {
            cause: exec::StopCause::Timeout,
        } => CheckOutcome::TimedOut,
        exec::Ended::Interrupted { .. } => CheckOutcome::Interrupted,
        exec::Ended::Failed { .. } | exec::Ended::RateLimited { .. } => CheckOutcome::Failed,
    };
    result.exit_code = finished.exit_code;
    result.signal = finished.signal;
    result.duration_ms = cx.clock.measured_ms(finished.duration);
    result.tail = join_tails(&tail_of(&stdout_path), &finished.stderr_tail);
    if result.outcome == CheckOutcome::TimedOut {
        result.error = Some(format!(
            "killed with its process group after its timeout of {}s",
            check.timeout.as_secs()
        ));
    }
    result
}

/// What went wrong starting a configured command (a check, a `notify:` command), in its own
/// words rather than an actor's.
pub(super) fn reason(err: &ExecError) -> String {
    match err {
        ExecError::NotFound { program, .. } => {
            format!("command `{program}` not found (a name without `/` is looked up on PATH)")
        }
        ExecError::NotExecutable { program, .. } => {
            format!("command `{program}` cannot be executed: permission denied")
        }
        other => other.to_string(),
    }
}

fn bounded(mut text: String) -> String {
    if text.len() > MAX_ERROR {
        let mut end = MAX_ERROR - 3;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// The last [`TAIL_LINES`] lines of a log, from at most its last [`TAIL_BYTES`]; empty when it
/// cannot be read. Never reads the log whole.
fn tail_of(path: &Path) -> String {
    let read = || -> std::io::Result<Vec<u8>> {
        let mut file = crate::files::open_regular(path)?;
        let len = file.metadata()?.len();
        file.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES as u64)))?;
        let mut bytes = Vec::with_capacity(TAIL_BYTES);
        file.take(TAIL_BYTES as u64).read_to_end(&mut bytes)?;
        Ok(bytes)
    };
    let bytes = read().unwrap_or_default();
    last_lines(&String::from_utf8_lossy(&bytes), TAIL_LINES)
}

fn last_lines(text: &str, n: usize) -> String {
    let text = text.trim_end_matches('\n');
    let start = text
        .rmatch_indices('\n')
        .nth(n.saturating_sub(1))
        .map_or(0, |(i, _)| i + 1);
    text[start..].to_string()
}

/// A check's tail: the end of its stdout, then the end of its stderr, at most
/// [`MAX_TAIL`] bytes (lossy decoding may have grown either).
fn join_tails(stdout: &str, stderr: &str) -> String {
    let (stdout, stderr) = (stdout.trim_end(), stderr.trim_end());
    let joined = match (stdout.is_empty(), stderr.is_empty()) {
        (true, _) => stderr.to_string(),
        (_, true) => stdout.to_string(),
        _ => format!("{stdout}\n{stderr}"),
    };
    let mut start = joined.len().saturating_sub(MAX_TAIL);
    while !joined.is_char_boundary(start) {
        start += 1;
    }
    joined[start..].to_string()
}

/// The checks' log directory `dir` of the attempt, a directory of its own: the actor, which can
/// reach the attempt's directory and has exited by now, may have left a link there (to a
/// directory elsewhere, where the logs would land), which is removed first.
fn log_dir(dir: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(dir).is_ok_and(|meta| !meta.is_dir()) {
        std::fs::remove_file(dir)?;
    }
    std::fs::create_dir_all(dir)
}

/// Makes way for a check's log at `path`: a link or a file the actor left there is removed, so
/// that the log is created anew rather than written through the link to a file elsewhere.
fn fresh_log(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() || meta.file_type().is_symlink() => std::fs::remove_file(path),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails_keep_the_last_lines_of_both_streams() {
        assert_eq!(last_lines("a\nb\nc\n", 2), "b\nc");
        assert_eq!(last_lines("a\nb", 5), "a\nb");
        assert_eq!(join_tails("ok 1\n", "boom\n"), "ok 1\nboom");
        assert_eq!(join_tails("", "boom\n"), "boom");
        assert_eq!(join_tails("ok\n", " \n"), "ok");
        assert_eq!(join_tails(&"é".repeat(MAX_TAIL), "").len(), MAX_TAIL);
    }

    #[test]
    fn errors_are_bounded() {
        let long = bounded("é".repeat(MAX_ERROR));
        assert!(long.len() <= MAX_ERROR);
        assert!(long.ends_with('…'));
    }
}
