//! The one error type the CLI prints: what went wrong, what to do next, and the exit code.
//!
//! Library modules have their own thiserror enums; this is where they meet the user. Every
//! failure becomes one `error:` line naming the file, run, revision or path involved, followed by
//! `hint:` lines where a next step is obvious — the way git words its own messages.

use std::io::Write;
use std::process::ExitCode;

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

#[derive(Debug)]
pub struct CliError {
    pub exit: Exit,
    pub message: String,
    pub hints: Vec<String>,
}

impl CliError {
    /// Bad input or environment (exit 2).
    pub fn input(message: impl Into<String>) -> CliError {
        CliError {
            exit: Exit::Input,
            message: message.into(),
            hints: Vec::new(),
        }
    }

    pub fn hinted(mut self, hint: impl Into<String>) -> CliError {
        self.hints.push(hint.into());
        self
    }

    fn with_hint(mut self, hint: Option<String>) -> CliError {
        self.hints.extend(hint);
        self
    }

    /// Writes `error: …` and one `hint: …` per hint line, as git does.
    pub fn print(&self, out: &mut dyn Write) {
        let _ = writeln!(out, "error: {}", self.message);
        for hint in &self.hints {
            for line in hint.lines() {
                let _ = if line.is_empty() {
                    writeln!(out, "hint:")
                } else {
                    writeln!(out, "hint: {line}")
                };
            }
        }
    }
}

impl From<crate::git::GitError> for CliError {
    fn from(err: crate::git::GitError) -> CliError {
        let hint = err.hint();
        CliError::input(err.to_string()).with_hint(hint)
    }
}

impl From<crate::plan::PlanError> for CliError {
    fn from(err: crate::plan::PlanError) -> CliError {
        let hint = err.hint.clone();
        CliError::input(err.to_string()).with_hint(hint)
    }
}

impl From<crate::coverage::EvidenceError> for CliError {
    fn from(err: crate::coverage::EvidenceError) -> CliError {
        CliError::input(err.to_string())
            .hinted("see docs/plan-format.md#evidence for the evidence format")
    }
}

impl From<crate::config::ConfigError> for CliError {
    fn from(err: crate::config::ConfigError) -> CliError {
        let hint = err.hint();
        CliError::input(err.to_string()).with_hint(hint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_are_prefixed_line_by_line() {
        let err = CliError::input("bad thing in `x`").hinted("first\n\n\tindented");
        let mut out = Vec::new();
        err.print(&mut out);
        insta::assert_snapshot!(String::from_utf8(out).unwrap(), @r"
        error: bad thing in `x`
        hint: first
        hint:
        hint: 	indented
        ");
    }
}
