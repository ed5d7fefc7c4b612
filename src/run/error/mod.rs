//! What can go wrong creating, driving, finishing and inspecting runs: one error type per
//! operation (creating, driving, syncing with a remote, a run's worktree, the record of
//! attempts), gathered in [`RunError`] with what every operation can meet (git, the store, the
//! configuration, an illegal transition).
//!
//! Each variant names the run, path or stage involved and keeps its cause. Which `hint:` follows
//! it and which exit code it means are the command layer's decisions (`cli/hints.rs`,
//! `cli/error.rs`), not this module's.

use std::io;
use std::path::PathBuf;

mod create;
mod drive;
mod history;
mod sync;
mod worktree;

pub use create::CreateError;
pub use drive::DriveError;
pub use history::HistoryError;
pub use sync::SyncError;
pub use worktree::WorktreeError;

use crate::files::io_reason;
use crate::git::GitError;
use crate::plan::PlanError;
use crate::report::status::word;
use crate::state::store::StoreError;
use crate::state::transition::TransitionError;
use crate::state::{InvalidState, RunStatus};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// A move the RunState does not allow: finishing a run not in review, resuming a finished
    /// one, … (and, were the driver wrong, any other illegal transition).
    #[error(transparent)]
    Transition(#[from] TransitionError),
    /// A RunState that breaks its invariants: made from a pipeline no run can have.
    #[error(transparent)]
    Invalid(#[from] InvalidState),
    /// What a crashed attempt left running could not be ended.
    #[error(transparent)]
    Leftovers(#[from] crate::exec::ExecError),
    #[error("cannot {action} {}: {}", .path.display(), io_reason(.source))]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read the plan snapshot of run {run} ({}): {}", .path.display(), io_reason(.source))]
    PlanSnapshot {
        run: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A path field of a RunState that points outside the run directory.
    #[error(transparent)]
    BadPath(#[from] crate::state::BadPath),

    #[error("run {run}: branch {branch} does not exist")]
    NoBranch { run: String, branch: String },
    #[error("run {run} is {}, not finished", word(.status))]
    NotFinished {
        run: String,
        status: RunStatus,
        worktree: String,
    },
    #[error("run {run} has no state.json: {} is what is left of it", .dir.display())]
    Headless { run: String, dir: PathBuf },
    #[error("cannot remove {}: {source}", .path.display())]
    Remove {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot create {}: {source}", .path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(transparent)]
    Create(#[from] CreateError),
    #[error(transparent)]
    Sync(#[from] SyncError),
    #[error(transparent)]
    Worktree(#[from] WorktreeError),
    #[error(transparent)]
    Drive(#[from] DriveError),
    #[error(transparent)]
    History(#[from] HistoryError),
}

/// Paths for a one-line message: the first few, then how many more.
fn list_paths(paths: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = paths
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        text.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    text
}
