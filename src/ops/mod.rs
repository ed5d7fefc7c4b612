//! The operations: one use case per file for each command that changes a run, on top of the
//! run session ([`crate::run::session`]), and the one operation of a command that changes no
//! run but writes files for the user: [`packaging`] (`init --packaging`).
//!
//! Each run operation takes the [`Workspace`], an options struct and the command layer's note
//! [`Sink`](crate::run::note::Sink), and returns a typed outcome; it prints nothing and names no
//! exit code. What it has to say on the way goes to the sink as it happens (see
//! [`crate::run::note`] for why it is not collected), and what it ends with is its outcome,
//! which the command layer renders.

pub mod clean;
pub mod cycle;
mod drive;
pub mod fetch;
pub mod finish;
pub mod hold;
pub mod packaging;
pub mod pause;
pub mod push;
pub mod resume;
pub mod run;
pub mod stop;
mod workspace;

pub use drive::Drove;
pub use workspace::Workspace;

use crate::run::RunError;

/// What can stop an operation: the domain's errors, kept whole so that the command layer
/// chooses their kind and hints, and the few refusals of the operations themselves.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Run(#[from] Box<RunError>),
    #[error(transparent)]
    Store(#[from] crate::state::store::StoreError),
    #[error(transparent)]
    Git(#[from] crate::git::GitError),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Exec(#[from] crate::exec::ExecError),
    #[error(transparent)]
    Clock(#[from] crate::state::clock::ClockError),
    #[error(transparent)]
    Cycle(#[from] cycle::Error),
    /// `sync: push` could not publish a run just created: it exists, and waits, pending.
    #[error("{source}")]
    NotStarted {
        run: String,
        remote: String,
        #[source]
        source: Box<RunError>,
    },
    /// `push` without names, and no run of this clone is published.
    #[error("no run of this clone is published yet")]
    NothingPublished,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<RunError> for Error {
    fn from(err: RunError) -> Error {
        Error::Run(Box::new(err))
    }
}
