//! What the runner's checks found on an attempt: runner evidence, recorded apart from anything
//! the agent wrote (docs/checks.md). git-baton ran each command itself after the actor exited;
//! an agent's claim that its tests pass is not one of these.

use serde::{Deserialize, Serialize};

/// The most of a check's output kept in the RunState: the tail a reader and the next agent see.
/// The whole (capped) output stays in the attempt's log files.
pub const TAIL_BYTES: usize = 2048;
/// The most of a check's tail recorded: both streams' ends.
pub const MAX_TAIL: usize = 2 * TAIL_BYTES;
/// The longest error message recorded for a check that could not be started.
pub const MAX_ERROR: usize = 1024;
/// The longest check name: it becomes part of a file name.
pub const MAX_NAME: usize = crate::plan::MAX_CHECK_NAME;

/// How one check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CheckOutcome {
    /// It exited 0.
    Passed,
    /// It exited non-zero or was killed by a signal git-baton did not send.
    Failed,
    /// Its timeout elapsed; it was killed with its process group.
    TimedOut,
    /// It could not be started (program not found, not executable, …): `error` says why.
    Error,
    /// The run was stopped while it ran.
    Interrupted,
}

impl CheckOutcome {
    pub fn name(self) -> &'static str {
        match self {
            CheckOutcome::Passed => "passed",
            CheckOutcome::Failed => "failed",
            CheckOutcome::TimedOut => "timed_out",
            CheckOutcome::Error => "error",
            CheckOutcome::Interrupted => "interrupted",
        }
    }
}

/// One check the runner ran on an attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CheckResult {
    /// The check's name, as configured (`[a-z0-9][a-z0-9_-]*`, at most 64 characters).
    pub name: String,
    pub outcome: CheckOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Measured with a monotonic clock (0 under an injected clock).
    pub duration_ms: u64,
    /// Its output streams' logs, relative to the attempt's directory
    /// (`checks/<name>.stdout.log`, `checks/<name>.stderr.log`), capped like the actor's.
    pub stdout_log: String,
    pub stderr_log: String,
    /// The last lines of its output (stdout, then stderr), at most [`MAX_TAIL`] bytes.
    pub tail: String,
    /// Why it could not be run, for `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl CheckResult {
    pub fn passed(&self) -> bool {
        self.outcome == CheckOutcome::Passed
    }
}

pub use crate::plan::is_check_name;

impl super::RunState {
    /// The runner's checks of the latest attempt that ran any (empty when none did).
    pub fn checks(&self) -> &[CheckResult] {
        self.attempts()
            .rev()
            .find(|a| !a.checks.is_empty())
            .map_or(&[], |a| &a.checks)
    }
}

/// The logs of check `name`, relative to its attempt's directory: the one place they are named.
pub fn log_paths(name: &str) -> (String, String) {
    (
        format!("checks/{name}.stdout.log"),
        format!("checks/{name}.stderr.log"),
    )
}

/// The first of `checks` that did not pass.
pub fn first_failed(checks: &[CheckResult]) -> Option<&CheckResult> {
    checks.iter().find(|c| !c.passed())
}

/// The sentence an attempt's error and the next prompt give for a check that did not pass.
pub fn failed_message(check: &CheckResult) -> String {
    let how = match (check.outcome, check.exit_code, check.signal) {
        (CheckOutcome::TimedOut, ..) => "timed out and was killed".to_string(),
        (CheckOutcome::Error, ..) => format!(
            "could not be run: {}",
            check.error.as_deref().unwrap_or("unknown error")
        ),
        (CheckOutcome::Interrupted, ..) => "was interrupted".to_string(),
        (_, Some(code), _) => format!("failed with exit code {code}"),
        (_, _, Some(signal)) => format!("was killed by signal {signal}"),
        _ => "failed".to_string(),
    };
    let tail = check.tail.trim_end();
    if tail.is_empty() {
        format!("runner check `{}` {how}", check.name)
    } else {
        format!(
            "runner check `{}` {how}; the tail of its output:\n{tail}",
            check.name
        )
    }
}

/// What in a check result could not have been written by git-baton: a malformed name, log paths
/// other than the ones it names, or text longer than it keeps.
pub fn shape_problem(check: &CheckResult) -> Option<String> {
    let name = check.name.escape_debug();
    if !is_check_name(&check.name) {
        return Some(format!("check name `{name}` is not [a-z0-9][a-z0-9_-]*"));
    }
    let (stdout, stderr) = log_paths(&check.name);
    if check.stdout_log != stdout || check.stderr_log != stderr {
        return Some(format!(
            "the logs of check `{name}` are not `{stdout}` and `{stderr}`"
        ));
    }
    if check.tail.len() > MAX_TAIL {
        return Some(format!(
            "the tail of check `{name}` is longer than git-baton keeps"
        ));
    }
    if check.error.as_ref().is_some_and(|e| e.len() > MAX_ERROR) {
        return Some(format!(
            "the error of check `{name}` is longer than git-baton keeps"
        ));
    }
    if (check.outcome == CheckOutcome::Passed) != (check.exit_code == Some(0)) {
        return Some(format!(
            "check `{name}` is `{}` with exit code {:?}",
            check.outcome.name(),
            check.exit_code
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str, outcome: CheckOutcome, exit_code: Option<i32>) -> CheckResult {
        let (stdout_log, stderr_log) = log_paths(name);
        CheckResult {
            name: name.into(),
            outcome,
            exit_code,
            signal: None,
            duration_ms: 5,
            stdout_log,
            stderr_log,
            tail: "test foo ... FAILED\n".into(),
            error: None,
        }
    }

    #[test]
    fn names_stay_one_path_component() {
        assert!(is_check_name("tests"));
        assert!(is_check_name("0-lint_fast"));
        for bad in ["", "../x", "a/b", "Tests", "-x", "_x", &"a".repeat(65)] {
            assert!(!is_check_name(bad), "{bad}");
        }
    }

    #[test]
    fn a_failed_check_is_named_with_its_tail() {
        let failed = result("tests", CheckOutcome::Failed, Some(101));
        assert_eq!(
            failed_message(&failed),
            "runner check `tests` failed with exit code 101; the tail of its output:\ntest foo ... FAILED"
        );
        let timed = result("tests", CheckOutcome::TimedOut, None);
        assert!(failed_message(&timed).starts_with("runner check `tests` timed out"));
        assert_eq!(
            first_failed(&[result("a", CheckOutcome::Passed, Some(0)), failed.clone()]),
            Some(&failed)
        );
    }

    #[test]
    fn shapes_git_baton_never_writes_are_refused() {
        assert_eq!(
            shape_problem(&result("tests", CheckOutcome::Passed, Some(0))),
            None
        );
        let mut moved = result("tests", CheckOutcome::Failed, Some(1));
        moved.stdout_log = "../../state.json".into();
        assert!(shape_problem(&moved).unwrap().contains("logs"));
        let mut long = result("tests", CheckOutcome::Failed, Some(1));
        long.tail = "x".repeat(10_000);
        assert!(shape_problem(&long).unwrap().contains("tail"));
        assert!(shape_problem(&result("tests", CheckOutcome::Passed, Some(1))).is_some());
        assert!(shape_problem(&result("a/b", CheckOutcome::Failed, Some(1))).is_some());
    }
}
