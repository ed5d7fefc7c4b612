//! Exit codes: the one place where what a command ended with becomes a number.
//!
//! Commands return an [`Ending`] in the domain's terms or a [`CliError`]; [`code`] maps both
//! to the codes of design §6 and docs/cli.md. Nothing below the command layer names an exit code.

use std::process::ExitCode;

use super::error::{Class, CliError};
use crate::run::Driven;
use crate::state::RunStatus;

/// Exit codes are a contract with scripts and CI (see docs/cli.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The run reached review, or the gate passed.
    Success = 0,
    /// The run ended in another state, or the gate failed: a result, not an error.
    Failed = 1,
    /// Bad input, usage or environment.
    Input = 2,
    /// Another live process holds the run.
    Busy = 3,
    /// git-baton itself was interrupted by a signal.
    Interrupted = 130,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit as u8)
    }
}

/// What a command ended with, when it did not fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It did what it was asked (including printing help).
    Done,
    /// A check ran: the coverage gate, or `doctor`. Failing it is a result, not an error.
    Checked { passed: bool },
    /// A run was driven until it ended like this.
    Driven(Driven),
    /// Several runs were driven (`run PLAN…`): `reached` when every one reached review or
    /// paused, as one driven run exits 0 then.
    Runs { reached: bool },
    /// `run --key` found an existing run, which was left as it is.
    Existing { status: RunStatus, stale: bool },
    /// A hook could not decide and printed why. Exits 1: Claude Code treats any code but 0 and
    /// 2 as a non-blocking error and lets the agent stop (2 would block it), so the gate after
    /// the agent exits decides.
    HookFailedOpen,
}

/// The exit code of a command (design §6).
pub fn code(result: &Result<Ending, CliError>) -> Exit {
    match result {
        Ok(Ending::Done) => Exit::Success,
        Ok(Ending::Checked { passed }) => {
            if *passed {
                Exit::Success
            } else {
                Exit::Failed
            }
        }
        Ok(Ending::Driven(driven)) => match driven {
            Driven::Review | Driven::Paused => Exit::Success,
            Driven::Stopped | Driven::StageEnded(_) => Exit::Failed,
            Driven::Interrupted => Exit::Interrupted,
        },
        Ok(Ending::Runs { reached }) => match reached {
            true => Exit::Success,
            false => Exit::Failed,
        },
        Ok(Ending::HookFailedOpen) => Exit::Failed,
        Ok(Ending::Existing { status, stale }) => match status {
            RunStatus::Review | RunStatus::Paused | RunStatus::Finished | RunStatus::Queued => {
                Exit::Success
            }
            RunStatus::Running | RunStatus::Pending if !stale => Exit::Busy,
            _ => Exit::Failed,
        },
        Err(err) => match err.kind {
            Class::Usage | Class::Input => Exit::Input,
            Class::Busy => Exit::Busy,
            Class::Failed => Exit::Failed,
            Class::Interrupted => Exit::Interrupted,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Outcome as StageOutcome;

    #[test]
    fn driven_runs_exit_as_design_section_6_says() {
        let driven = |d| code(&Ok(Ending::Driven(d)));
        assert_eq!(driven(Driven::Review), Exit::Success);
        assert_eq!(driven(Driven::Paused), Exit::Success);
        assert_eq!(driven(Driven::Stopped), Exit::Failed);
        assert_eq!(driven(Driven::Interrupted), Exit::Interrupted);
        for outcome in [
            StageOutcome::Failed,
            StageOutcome::Blocked,
            StageOutcome::RateLimited,
            StageOutcome::Interrupted,
        ] {
            assert_eq!(driven(Driven::StageEnded(outcome)), Exit::Failed);
        }
    }

    #[test]
    fn existing_runs_exit_by_their_status() {
        let existing = |status, stale| code(&Ok(Ending::Existing { status, stale }));
        assert_eq!(existing(RunStatus::Review, false), Exit::Success);
        assert_eq!(existing(RunStatus::Finished, false), Exit::Success);
        assert_eq!(existing(RunStatus::Running, false), Exit::Busy);
        assert_eq!(existing(RunStatus::Running, true), Exit::Failed);
        assert_eq!(existing(RunStatus::Blocked, false), Exit::Failed);
    }

    #[test]
    fn errors_exit_by_their_kind() {
        let kind = |kind| code(&Err(CliError::new(kind, "x")));
        assert_eq!(kind(Class::Usage), Exit::Input);
        assert_eq!(kind(Class::Input), Exit::Input);
        assert_eq!(kind(Class::Busy), Exit::Busy);
        assert_eq!(kind(Class::Failed), Exit::Failed);
        assert_eq!(kind(Class::Interrupted), Exit::Interrupted);
        assert_eq!(code(&Ok(Ending::Checked { passed: false })), Exit::Failed);
        assert_eq!(code(&Ok(Ending::Checked { passed: true })), Exit::Success);
        assert_eq!(code(&Ok(Ending::HookFailedOpen)), Exit::Failed);
    }
}
