//! `doctor --fix`: applying the fixes that cannot lose work, in order, each under the lock that
//! keeps a live git-baton from being pulled out from under.

use std::path::Path;

use crate::git::Repo;
use crate::run::WorktreeError;
use crate::run::{RunError, lifecycle};
use crate::state::store::{RunLock, Store, StoreError, TempOwner};

use super::{Action, Finding, findings};

/// A fix `--fix` applied, or tried to.
#[derive(Debug, serde::Serialize)]
pub struct Fixed {
    #[serde(flatten)]
    pub finding: Finding,
    /// Why it could not be applied; `None` when it was.
    pub error: Option<String>,
}

const COMMAND: &str = "git baton doctor --fix";

/// Applies the safe fixes (and with `force`, deletes branches holding commits no other branch
/// has), in order; returns what it did and what is left. No run is created meanwhile: it holds
/// the creation lock throughout.
pub fn fix(
    repo: &Repo,
    store: &Store,
    worktree_root: &Path,
    force: bool,
) -> Result<(Vec<Fixed>, Vec<Finding>), RunError> {
    let _no_creation = store.creation_lock()?;
    let mut fixed = Vec::new();
    for mut finding in findings(repo, store, worktree_root) {
        let Some(action) = finding.action.take() else {
            continue;
        };
        if !finding.safe && !force {
            continue;
        }
        match apply(repo, store, worktree_root, &action) {
            Ok(Applied::Done) => fixed.push(Fixed {
                finding,
                error: None,
            }),
            // A live process took it meanwhile: not debris after all.
            Ok(Applied::Busy) => {}
            Err(err) => fixed.push(Fixed {
                finding,
                error: Some(err.to_string()),
            }),
        }
    }
    let left = findings(repo, store, worktree_root);
    Ok((fixed, left))
}

enum Applied {
    Done,
    Busy,
}

fn apply(
    repo: &Repo,
    store: &Store,
    worktree_root: &Path,
    action: &Action,
) -> Result<Applied, RunError> {
    match action {
        Action::RemoveFile(path, owner) => {
            // The run's lock keeps a driver from starting while its directory is tidied; the
            // store's files are guarded by the creation lock, which `fix` holds.
            let _lock = match owner {
                TempOwner::Store => None,
                TempOwner::Run(id) => match store.lock(id, COMMAND) {
                    Ok(lock) => Some(lock),
                    Err(StoreError::Busy { .. }) => return Ok(Applied::Busy),
                    Err(err) => return Err(err.into()),
                },
            };
            remove(std::fs::remove_file(path), path)
        }
        Action::RemoveDir(path) => remove(std::fs::remove_dir_all(path), path),
        Action::FinishRemoval(id) => {
            let dir = store.removal_dir(id);
            let _lock = match RunLock::acquire_in(&dir, id, COMMAND, store.clock()) {
                Ok(lock) => lock,
                Err(StoreError::Busy { .. }) => return Ok(Applied::Busy),
                Err(err) => return Err(err.into()),
            };
            let worktree = lifecycle::recorded_worktree(store, id);
            // A directory left in place as not the run's worktree is no removal's to finish:
            // the next `doctor` reports it on its own, if at all.
            let _left = lifecycle::finish_removal(repo, store, id, worktree.as_deref())?;
            Ok(Applied::Done)
        }
        Action::RemoveHeadless(id) => {
            let mut lock = match store.lock(id, COMMAND) {
                Ok(lock) => lock,
                Err(StoreError::Busy { .. }) => return Ok(Applied::Busy),
                Err(err) => return Err(err.into()),
            };
            lifecycle::clean_headless(repo, store, &mut lock, id)?;
            Ok(Applied::Done)
        }
        Action::RemoveWorktree { path, registered } => {
            if *registered {
                repo.remove_worktree(path, true)?;
            } else {
                remove(std::fs::remove_dir_all(path), path)?;
                repo.forget_worktree(path)?;
            }
            Ok(Applied::Done)
        }
        Action::DeleteBranch { branch, id } => {
            // git refuses to delete a branch a worktree has checked out; so does this.
            if worktree_root.join(id).exists() {
                return Err(RunError::Worktree(WorktreeError::BranchInUse {
                    branch: branch.clone(),
                    worktree: worktree_root.join(id),
                }));
            }
            repo.delete_branch(branch)?;
            Ok(Applied::Done)
        }
        Action::Record(id) => {
            let lock = match store.lock(id, COMMAND) {
                Ok(lock) => lock,
                Err(StoreError::Busy { .. }) => return Ok(Applied::Busy),
                Err(err) => return Err(err.into()),
            };
            let state = store.load(id)?;
            super::super::record::record(repo, lock.dir(), &state)?;
            Ok(Applied::Done)
        }
    }
}

fn remove(result: std::io::Result<()>, path: &Path) -> Result<Applied, RunError> {
    match result {
        Ok(()) => Ok(Applied::Done),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Applied::Done),
        Err(source) => Err(RunError::Remove {
            path: path.to_path_buf(),
            source,
        }),
    }
}
