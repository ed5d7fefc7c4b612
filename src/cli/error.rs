//! The one error type the CLI prints: a kind that decides the exit code, the error with its
//! cause chain, and the hints that say what to do next.
//!
//! Library modules have their own thiserror enums that keep their sources; this is where they
//! meet the user. A domain error enters the CLI through one `From` impl here, which picks its
//! kind and takes the hints the error itself gives for its variant. Every failure is printed as
//! one `error:` line — the message, then each cause the message does not already say, git style
//! (`cannot read X: permission denied`) — followed by `hint:` lines, the way git words its own
//! messages. The exit code is decided in [`super::exit`], from the kind.

use std::error::Error as StdError;
use std::io::Write;

use crate::config::ConfigError;
use crate::demo::DemoError;
use crate::exec::ExecError;
use crate::git::GitError;
use crate::plan::PlanError;
use crate::report::escape;
use crate::run::RunError;
use crate::run::agent_side::AgentSideError;
use crate::run::{DriveError, SyncError};
use crate::state::store::StoreError;
use crate::state::transition::TransitionError;
use crate::verify::VerifyError;

/// What kind of failure an error is; [`super::exit::code`] turns it into the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// The command line did not parse; clap words the message.
    Usage,
    /// Bad input or environment.
    Input,
    /// Another live process holds the run.
    Busy,
    /// The command ran and did not get what it was for (a demo step deviated, a run did not
    /// stop in time): a result, reported as an error because there is nothing else to print.
    Failed,
    /// git-baton itself was interrupted by a signal.
    Interrupted,
}

/// An error on its way to the user.
#[derive(Debug)]
pub struct CliError {
    pub kind: Class,
    pub error: Box<dyn StdError + Send + Sync>,
    pub hints: Vec<String>,
}

/// A message of the command layer itself, with no cause.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Message(String);

impl CliError {
    pub fn new(kind: Class, error: impl Into<Box<dyn StdError + Send + Sync>>) -> CliError {
        CliError {
            kind,
            error: error.into(),
            hints: Vec::new(),
        }
    }

    /// git-baton itself was interrupted by `signal`, and nothing else went wrong.
    pub fn interrupted(signal: i32) -> CliError {
        CliError::new(
            Class::Interrupted,
            Message(format!("interrupted by {}", crate::signals::name(signal))),
        )
    }

    /// Bad input or environment, worded by the command layer.
    pub fn input(message: impl Into<String>) -> CliError {
        CliError::new(Class::Input, Message(message.into()))
    }

    /// A usage error clap found; clap prints it.
    pub fn usage(error: clap::Error) -> CliError {
        CliError::new(Class::Usage, error)
    }

    pub fn hinted(mut self, hint: impl Into<String>) -> CliError {
        self.hints.push(hint.into());
        self
    }

    fn with_hints(mut self, hints: impl IntoIterator<Item = String>) -> CliError {
        self.hints.extend(hints);
        self
    }

    /// The `error:` line's text: the message, then every cause it does not already contain.
    pub fn line(&self) -> String {
        let mut line = self.error.to_string();
        let mut cause = self.error.source();
        while let Some(error) = cause {
            let text = error.to_string();
            // An I/O error reads as git words it ("permission denied"); messages that name the
            // path already carry that phrase.
            let short = error
                .downcast_ref::<std::io::Error>()
                .map(crate::files::io_reason);
            let said = line.contains(&text) || short.as_ref().is_some_and(|s| line.contains(s));
            if !said && !text.is_empty() {
                line.push_str(": ");
                line.push_str(short.as_deref().unwrap_or(&text));
            }
            cause = error.source();
        }
        line
    }

    /// Writes `error: …` and one `hint: …` per hint line, as git does. Usage errors are printed
    /// by clap, in its own words and colours.
    pub fn print(&self, out: &mut dyn Write) {
        if let Some(clap) = self.error.downcast_ref::<clap::Error>() {
            let _ = clap.print();
            return;
        }
        // Messages quote plans, evidence and paths, which agents and pull requests write.
        let _ = writeln!(out, "error: {}", escape::line(&self.line()));
        for hint in &self.hints {
            for line in escape::lines(hint).lines() {
                let _ = if line.is_empty() {
                    writeln!(out, "hint:")
                } else {
                    writeln!(out, "hint: {line}")
                };
            }
        }
    }
}

impl From<crate::ops::Error> for CliError {
    /// Each domain error as the command line words it on its own; the operations' own refusals
    /// with the next step to take.
    fn from(err: crate::ops::Error) -> CliError {
        use crate::ops::Error;
        match err {
            Error::Run(err) => (*err).into(),
            Error::Store(err) => err.into(),
            Error::Git(err) => err.into(),
            Error::Config(err) => err.into(),
            Error::Exec(err) => err.into(),
            Error::Clock(err) => CliError::new(Class::Input, err),
            Error::NotStarted {
                run,
                remote,
                source,
            } => CliError::from(*source).hinted(format!(
                "run {run} exists and waits, pending; `git baton resume {run}` starts it once \
                 {remote} is in reach"
            )),
            Error::NothingPublished => CliError::input(Error::NothingPublished.to_string())
                .hinted("name the runs to publish: `git baton push <RUN>…`"),
            Error::Cycle(err) => CliError::new(Class::Failed, err),
        }
    }
}

/// Errors of the input that name their own hints (none, one or several): the error, with them.
macro_rules! input_errors {
    ($($error:ty => $hints:expr),* $(,)?) => {$(
        impl From<$error> for CliError {
            fn from(err: $error) -> CliError {
                let hints = $hints(&err);
                CliError::new(Class::Input, err).with_hints(hints)
            }
        }
    )*};
}

input_errors! {
    GitError => super::hints::git_hint,
    PlanError => |err: &PlanError| err.hint.clone(),
    ConfigError => ConfigError::hint,
    ExecError => ExecError::hint,
    AgentSideError => super::hints::agent_side_hints,
    VerifyError => super::hints::verify_hints,
}

/// The store's hints name commands, so they are chosen here, by variant.
impl From<StoreError> for CliError {
    fn from(err: StoreError) -> CliError {
        let (kind, hint) = match &err {
            StoreError::Busy { run, .. } => (
                Class::Busy,
                Some(format!(
                    "wait for it to finish, or stop it with `git baton stop {run}`"
                )),
            ),
            StoreError::Unknown(_) => (
                Class::Input,
                Some("see the runs with `git baton list`".to_string()),
            ),
            StoreError::Ambiguous { .. } => {
                (Class::Input, Some("type more of the run id".to_string()))
            }
            _ => (Class::Input, None),
        };
        CliError::new(kind, err).with_hints(hint)
    }
}

impl From<RunError> for CliError {
    fn from(err: RunError) -> CliError {
        let kind = match err {
            RunError::Drive(DriveError::DidNotStop { .. }) => Class::Failed,
            // The gate, judged again, failed: what `verify` exits with.
            RunError::Drive(DriveError::GateFails { .. } | DriveError::NoFinalSnapshot { .. }) => {
                Class::Failed
            }
            // Worded, hinted and classed (busy: another driver has the run) as the store's own.
            RunError::Store(store) => return store.into(),
            RunError::Sync(
                SyncError::LostRace { .. }
                | SyncError::Behind { .. }
                | SyncError::Diverged { .. }
                | SyncError::LeaseExpired { .. }
                | SyncError::BranchConflict { .. },
            )
            | RunError::Transition(
                TransitionError::LeaseHeld { .. } | TransitionError::LeaseLost { .. },
            ) => Class::Busy,
            _ => Class::Input,
        };
        let hints = super::hints::run_hints(&err);
        CliError::new(kind, err).with_hints(hints)
    }
}

impl From<DemoError> for CliError {
    fn from(err: DemoError) -> CliError {
        let kind = match err {
            DemoError::Deviated { .. } => Class::Failed,
            DemoError::Interrupted => Class::Interrupted,
            _ => Class::Input,
        };
        let hints = super::hints::demo_hints(&err);
        CliError::new(kind, err).with_hints(hints)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::WorktreeError;

    fn printed(err: &CliError) -> String {
        let mut out = Vec::new();
        err.print(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn hints_are_prefixed_line_by_line() {
        let err = CliError::input("bad thing in `x`").hinted("first\n\n\tindented");
        insta::assert_snapshot!(printed(&err), @r"
        error: bad thing in `x`
        hint: first
        hint:
        hint: 	indented
        ");
    }

    #[test]
    fn run_errors_bring_their_variants_hints_and_kind() {
        let not_a_repo = || GitError::NotARepository {
            path: "wt/abc".into(),
        };
        // A worktree problem found before resuming: the cause is said once, the hint is the
        // inner variant's.
        let stale = CliError::from(RunError::Worktree(WorktreeError::Stale(Box::new(
            RunError::Worktree(WorktreeError::NotAWorktree {
                run: "abc".into(),
                worktree: "wt/abc".into(),
                source: not_a_repo(),
            }),
        ))));
        insta::assert_snapshot!(printed(&stale), @r"
        error: stale worktree mapping: run abc: its worktree wt/abc is not a git worktree (not a git repository (or any of the parent directories): wt/abc)
        hint: `git worktree repair wt/abc` re-links a moved worktree; otherwise move it away and run `git baton resume abc --recreate-worktree`
        ");
        assert_eq!(stale.kind, Class::Input);
        // git's own hint first, then the one of the run.
        let kept = CliError::from(RunError::Worktree(WorktreeError::WorktreeNotRemoved {
            run: "abc".into(),
            worktree: "wt/abc".into(),
            source: not_a_repo(),
        }));
        insta::assert_snapshot!(printed(&kept), @r"
        error: not a git repository (or any of the parent directories): wt/abc
        hint: run git-baton inside a git repository or one of its linked worktrees
        hint: wt/abc holds uncommitted changes; `git baton clean --force abc` removes them too
        ");
        let late = CliError::from(RunError::Drive(DriveError::DidNotStop {
            run: "abc".into(),
            seconds: 30,
        }));
        assert_eq!(late.kind, Class::Failed);
        insta::assert_snapshot!(printed(&late), @r"
        error: run abc did not stop within 30 seconds; the stop request stays in place
        hint: see `git baton status abc`
        ");
        let busy = CliError::from(StoreError::Busy {
            run: "abc".into(),
            holder: "pid 1".into(),
        });
        assert_eq!(busy.kind, Class::Busy);
        assert_eq!(
            busy.hints,
            ["wait for it to finish, or stop it with `git baton stop abc`"]
        );
    }

    /// An internal error is git-baton's bug: the hint naming `git baton doctor` is the CLI's,
    /// through every error type that carries a git error up; the git layer names no command.
    /// (Where the gate turns a git error into a stage's message, it is recorded, not hinted.)
    #[test]
    fn an_internal_error_points_at_doctor_through_every_error_type() {
        let internal = || GitError::Internal {
            what: "index entry `a` in scope was not compared with the base tree".into(),
            state: "worktree wt".into(),
        };
        assert_eq!(internal().hint(), None);
        let doctor = "this is a bug in git-baton, not in the repository: `git baton doctor` \
                      checks the repository and the runs; please report the error line above";
        for err in [
            CliError::from(internal()),
            CliError::from(RunError::Git(internal())),
            CliError::from(VerifyError::Git(internal())),
            CliError::from(AgentSideError::Git(internal())),
        ] {
            assert_eq!(err.hints, [doctor], "{}", printed(&err));
            assert_eq!(err.kind, Class::Input);
        }
    }

    #[derive(Debug, thiserror::Error)]
    #[error("{message}")]
    struct Outer {
        message: String,
        #[source]
        source: std::io::Error,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("cannot open the index")]
    struct Middle {
        #[source]
        source: Outer,
    }

    #[test]
    fn causes_the_message_does_not_say_are_appended_in_git_style() {
        let denied = || std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        // The cause is appended as git words it, not as Rust does ("(os error 13)").
        let err = CliError::new(
            Class::Input,
            Middle {
                source: Outer {
                    message: "cannot read .git/index".into(),
                    source: denied(),
                },
            },
        );
        assert_eq!(
            err.line(),
            "cannot open the index: cannot read .git/index: permission denied"
        );
        // A cause the message already says, in either wording, is not repeated.
        for message in [
            "cannot read x: permission denied".to_string(),
            format!("cannot read x: {}", denied()),
        ] {
            let err = CliError::new(
                Class::Input,
                Outer {
                    message: message.clone(),
                    source: denied(),
                },
            );
            assert_eq!(err.line(), message);
        }
        insta::assert_snapshot!(printed(&err.hinted("check the permissions")), @r"
        error: cannot open the index: cannot read .git/index: permission denied
        hint: check the permissions
        ");
    }
}
