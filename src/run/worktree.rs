//! The run's worktree, as the pipeline and the commands that act on a run see it: opened only
//! when it is that run's registered worktree, checked before anything runs on it again, and
//! recorded as a snapshot commit when an attempt ends. Where worktrees may go is
//! [`super::worktree_root`]'s.

use std::path::Path;

use crate::git::{CommitId, Repo};
use crate::run::WorktreeError;
use crate::state::RunState;

use super::RunError;
use super::note::{Note, Sink};
use super::unrecorded;

/// The run's own worktree as a repository, refusing anything else: an actor that deleted the
/// worktree's `.git` file would otherwise make discovery walk up to the main worktree, and the
/// gate would read the wrong repository's changes.
pub fn open_run_worktree(repo: &Repo, state: &RunState) -> Result<Repo, RunError> {
    let path = Path::new(&state.worktree);
    let theirs = Repo::open_worktree(path).map_err(|source| {
        RunError::Worktree(WorktreeError::NotAWorktree {
            run: state.run_id.to_string(),
            worktree: state.worktree.clone(),
            source,
        })
    })?;
    let same_root = theirs
        .workdir()
        .ok()
        .and_then(|w| w.canonicalize().ok())
        .zip(path.canonicalize().ok())
        .is_some_and(|(a, b)| a == b);
    let same_repo =
        theirs.common_dir().canonicalize().ok() == repo.common_dir().canonicalize().ok();
    if !same_root || !same_repo {
        return Err(RunError::Worktree(WorktreeError::NotRegistered {
            run: state.run_id.to_string(),
            worktree: state.worktree.clone(),
        }));
    }
    Ok(theirs)
}

/// The linked worktree of `repo` whose root is `path`, if that is what `path` is: not another
/// repository's, and not a plain directory inside one of this repository's worktrees.
pub(crate) fn worktree_at(repo: &Repo, path: &Path) -> Option<Repo> {
    let same = |a: &Path, b: &Path| {
        a.canonicalize()
            .ok()
            .is_some_and(|a| b.canonicalize().ok() == Some(a))
    };
    Repo::open_worktree(path).ok().filter(|wt| {
        same(wt.common_dir(), repo.common_dir()) && wt.workdir().is_ok_and(|dir| same(dir, path))
    })
}

/// Records the worktree as attempt `n` of `stage` left it, for an attempt that ended otherwise
/// (a crash found on resume), with the paths it does not hold. A failure is reported to `sink`;
/// the attempt is then recorded without a snapshot, which [`unrecorded`] makes the run refuse
/// to hand on.
pub fn snapshot_for(
    repo: &Repo,
    state: &RunState,
    stage: &str,
    n: u32,
    sink: &dyn Sink,
) -> Option<(CommitId, Vec<crate::state::UnrecordedPath>)> {
    unrecorded::snapshot(repo, state, stage, n)
        .map_err(|err| {
            sink.note(Note::SnapshotFailed {
                stage: stage.to_owned(),
                n,
                reason: err.to_string(),
            })
        })
        .ok()
}

/// The ref that records the worktree as attempt `n` of `stage` left it.
pub fn snapshot_ref(run_id: &str, stage: &str, n: u32) -> String {
    format!("refs/baton/runs/{run_id}/attempts/{stage}-{n}")
}

/// Before anything runs on resume: the run's worktree must exist, be registered with this
/// repository, be on the run's branch, and contain the base in its history. Anything else is a
/// stale mapping, diagnosed with the command that repairs it, and never silently re-created.
pub fn check_worktree(repo: &Repo, state: &RunState) -> Result<(), RunError> {
    let (run, worktree, branch) = (&state.run_id.to_string(), &state.worktree, &state.branch);
    if !Path::new(worktree).is_dir() {
        return Err(RunError::Worktree(WorktreeError::WorktreeMissing {
            run: run.clone(),
            worktree: worktree.clone(),
            branch: branch.clone(),
        }));
    }
    let theirs = open_run_worktree(repo, state)
        .map_err(|e| RunError::Worktree(WorktreeError::Stale(Box::new(e))))?;
    let found = theirs.head_branch()?;
    if found.as_deref() != Some(branch.as_str()) {
        return Err(RunError::Worktree(WorktreeError::WrongBranch {
            run: run.clone(),
            worktree: worktree.clone(),
            found,
            branch: branch.clone(),
        }));
    }
    let base = state.base;
    let contains_base = theirs
        .head_commit()
        .is_some_and(|head| theirs.is_ancestor(base, head));
    if !contains_base {
        return Err(RunError::Worktree(WorktreeError::BaseNotInHistory {
            run: run.clone(),
            branch: branch.clone(),
            base: state.base.to_string(),
        }));
    }
    Ok(())
}
