//! What is wrong with a run's worktree: not one, not registered, missing, off the run's branch,
//! holding work its branch lacks, or in the way of being made again.

use std::path::PathBuf;

use super::{RunError, list_paths};
use crate::git::GitError;

#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error("run {run}: its worktree {worktree} is not a git worktree ({source})")]
    NotAWorktree {
        run: String,
        worktree: String,
        #[source]
        source: GitError,
    },
    #[error("run {run}: {worktree} is not a worktree registered with this repository")]
    NotRegistered { run: String, worktree: String },
    /// A worktree problem found before resuming or finishing.
    #[error("stale worktree mapping: {0}")]
    Stale(#[source] Box<RunError>),
    #[error("stale worktree mapping: run {run}: its worktree {worktree} does not exist")]
    WorktreeMissing {
        run: String,
        worktree: String,
        branch: String,
    },
    #[error(
        "stale worktree mapping: run {run}: its worktree {worktree} {}",
        crate::run::guard::off_branch(.found.as_deref(), .branch)
    )]
    WrongBranch {
        run: String,
        worktree: String,
        found: Option<String>,
        branch: String,
    },
    #[error(
        "stale worktree mapping: run {run}: {}", crate::run::guard::base_left(.branch, .base)
    )]
    BaseNotInHistory {
        run: String,
        branch: String,
        base: String,
    },
    #[error(
        "run {run}: its worktree {worktree} holds changes its branch does not have: {}",
        list_paths(.paths)
    )]
    WorktreeHoldsWork {
        run: String,
        worktree: String,
        paths: Vec<String>,
    },
    #[error("branch {branch} is checked out in {}", .worktree.display())]
    BranchInUse { branch: String, worktree: PathBuf },
    #[error("{source}")]
    WorktreeNotRemoved {
        run: String,
        worktree: String,
        #[source]
        source: GitError,
    },
    #[error("run {run}: {worktree} exists; --recreate-worktree only replaces a missing worktree")]
    WorktreeExists { run: String, worktree: String },
    #[error(
        "run {run}: branch {branch} is gone, so there is nothing to re-create the worktree from"
    )]
    BranchGone { run: String, branch: String },
}
