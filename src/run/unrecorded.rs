//! Work no snapshot holds. Every attempt ends with a snapshot of the worktree, and that commit
//! is what travels: a run rebuilt on another machine has the files of its latest snapshot and
//! nothing else. git refuses some paths (an untracked `docs/.GIT`, a FIFO where a tracked file
//! was, a nested repository without a commit); the snapshot holds every other path, and names
//! the refused ones with git's reason, so:
//!
//! - the attempt does not succeed: it ends `failed` (or keeps the worse outcome it had), its
//!   `unrecorded` lists the paths and its error names them; nothing in the worktree is touched;
//! - its snapshot still holds the rest of its work, so `push` publishes the run, and a clone that
//!   takes it rebuilds the worktree with that work and says which paths it lacks;
//! - only when no snapshot could be made at all (git failed outright) is the work only in this
//!   worktree: then `push` refuses to publish the run, a clone refuses to take such a record, and
//!   `resume` first checks that the worktree can be recorded now.

use std::path::Path;

use crate::git::{CommitId, Repo};
use crate::run::DriveError;
use crate::state::transition::AttemptEnd;
use crate::state::{Outcome, RunState, UnrecordedPath};

use super::RunError;

/// Records the worktree as attempt `n` of `stage` left it, under its snapshot ref: the commit
/// and the paths it does not hold, or why no commit could be made.
pub fn snapshot(
    repo: &Repo,
    state: &RunState,
    stage: &str,
    n: u32,
) -> Result<(CommitId, Vec<UnrecordedPath>), String> {
    let refname = super::snapshot_ref(&state.run_id, stage, n);
    let parent = parent(repo, state);
    let message = format!("baton: run {}, stage {stage}, attempt {n}", state.run_id);
    super::open_run_worktree(repo, state).map_err(|err| err.to_string())?;
    let (commit, left_out) = repo
        .snapshot_worktree(Path::new(&state.worktree), &refname, parent, &message)
        .map_err(|err| err.to_string())?;
    let paths = left_out
        .into_iter()
        .map(|u| UnrecordedPath {
            path: u.path,
            reason: u.reason,
        })
        .collect();
    Ok((commit, paths))
}

/// What the snapshot at the attempt's end would leave out if the attempt ended now, found the
/// way that snapshot finds it (no commit or ref is made; the worktree and its index stay as they
/// are): for `git baton check` and the Stop hook, so that they apply the rule the attempt's end
/// applies. `Err` says why git could not record the worktree at all.
pub fn would_leave_out(repo: &Repo, state: &RunState) -> Result<Vec<UnrecordedPath>, String> {
    let left_out = repo
        .unrecordable(Path::new(&state.worktree))
        .map_err(|err| err.to_string().lines().collect::<Vec<_>>().join("; "))?;
    Ok(left_out
        .into_iter()
        .map(|u| UnrecordedPath {
            path: u.path,
            reason: u.reason,
        })
        .collect())
}

/// Makes `end` record the snapshot attempt `n` ended with: its commit, or why none could be
/// made, and the paths it does not hold.
pub fn apply(end: &mut AttemptEnd, made: Result<(CommitId, Vec<UnrecordedPath>), String>) {
    match made {
        Ok((commit, paths)) => {
            end.snapshot = Some(commit);
            if !paths.is_empty() {
                fail(end, &crate::state::unrecorded_message(&paths));
            }
            end.unrecorded = paths;
        }
        Err(why) => mark(end, &why),
    }
}

/// Makes `end` say that no snapshot of the attempt's work could be made (`why`).
pub fn mark(end: &mut AttemptEnd, why: &str) {
    end.snapshot = None;
    fail(
        end,
        &format!("its work could not be recorded, and is only in the worktree: {why}"),
    );
}

/// A success becomes a failure, any other outcome stays, and the error says `said` either way.
fn fail(end: &mut AttemptEnd, said: &str) {
    if end.outcome == Outcome::Succeeded {
        end.outcome = Outcome::Failed;
        end.error = None;
    }
    end.error = Some(match end.error.take() {
        Some(error) => format!("{error}; {said}"),
        None => said.to_string(),
    });
}

/// The stage, number and unrecorded paths of the run's latest attempt, when its snapshot left
/// some out.
pub fn latest_partial(state: &RunState) -> Option<(String, u32, Vec<UnrecordedPath>)> {
    let (index, attempt) = state.latest_attempt()?;
    (!attempt.is_open() && attempt.snapshot.is_some() && !attempt.unrecorded.is_empty()).then(
        || {
            (
                state.stages()[index].name.clone(),
                attempt.n,
                attempt.unrecorded.clone(),
            )
        },
    )
}

/// What snapshots are made on: the run's branch tip, else its base.
fn parent(repo: &Repo, state: &RunState) -> CommitId {
    match repo.branch_tip(&state.branch) {
        Ok(Some(tip)) => tip,
        _ => state.base,
    }
}

/// The stage and number of the run's latest attempt when it ended without any snapshot.
pub fn latest_unrecorded(state: &RunState) -> Option<(String, u32)> {
    let (index, attempt) = state.latest_attempt()?;
    (!attempt.is_open() && attempt.snapshot.is_none())
        .then(|| (state.stages()[index].name.clone(), attempt.n))
}

/// Refuses to hand `state` on — publish it, or take it from `remote` — while no snapshot holds
/// its latest attempt's work.
pub fn refuse_handoff(state: &RunState, remote: Option<&str>) -> Result<(), RunError> {
    match latest_unrecorded(state) {
        None => Ok(()),
        Some((stage, n)) => Err(RunError::Drive(DriveError::UnrecordedAttempt {
            run: state.run_id.to_string(),
            stage,
            n,
            worktree: state.worktree.clone(),
            remote: remote.map(str::to_owned),
        })),
    }
}

/// Before a resumed attempt starts after one whose work was not recorded: whether the worktree
/// can be recorded now (a commit object is made, no ref moves). Returns the unrecorded attempt
/// when there was one, for the user.
pub fn check_recordable(repo: &Repo, state: &RunState) -> Result<Option<(String, u32)>, RunError> {
    let Some(unrecorded) = latest_unrecorded(state) else {
        return Ok(None);
    };
    let worktree = Path::new(&state.worktree);
    let made = repo
        .record_worktree(
            worktree,
            parent(repo, state),
            "baton: can this worktree be recorded",
            crate::git::Identity::Baton,
        )
        .and_then(crate::git::WorktreeCommit::whole);
    match made {
        Ok(_) => Ok(Some(unrecorded)),
        Err(err) => Err(RunError::Drive(DriveError::Unrecordable {
            run: state.run_id.to_string(),
            worktree: state.worktree.clone(),
            // git's reason spans lines; an `error:` line is one.
            message: err.to_string().lines().collect::<Vec<_>>().join("; "),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn left_out(path: &str, reason: &str) -> UnrecordedPath {
        UnrecordedPath {
            path: path.into(),
            reason: reason.into(),
        }
    }

    #[test]
    fn a_success_whose_work_is_unrecorded_fails_and_other_outcomes_keep_theirs() {
        let mut end = AttemptEnd {
            outcome: Outcome::Succeeded,
            ..AttemptEnd::default()
        };
        mark(&mut end, "invalid path 'docs/.GIT'");
        assert_eq!(end.outcome, Outcome::Failed);
        let error = end.error.unwrap();
        assert!(
            error.starts_with("its work could not be recorded"),
            "{error}"
        );
        assert!(error.contains("docs/.GIT"), "{error}");

        let mut end = AttemptEnd {
            outcome: Outcome::RateLimited,
            error: Some("rate limited (exit 75)".into()),
            ..AttemptEnd::default()
        };
        mark(&mut end, "docs/a.md: can only add regular files");
        assert_eq!(end.outcome, Outcome::RateLimited);
        assert!(
            end.error
                .unwrap()
                .starts_with("rate limited (exit 75); its work")
        );
    }

    #[test]
    fn a_snapshot_that_leaves_paths_out_is_kept_and_the_attempt_fails_naming_each() {
        let commit: CommitId = "0123456789abcdef0123456789abcdef01234567".parse().unwrap();
        let paths = vec![
            left_out("docs/.GIT", "invalid path 'docs/.GIT'"),
            left_out("docs/b.md", "a FIFO: git records only regular files"),
        ];
        let mut end = AttemptEnd {
            outcome: Outcome::Succeeded,
            ..AttemptEnd::default()
        };
        apply(&mut end, Ok((commit, paths.clone())));
        assert_eq!(end.outcome, Outcome::Failed);
        assert_eq!(end.snapshot, Some(commit));
        assert_eq!(end.unrecorded, paths);
        let error = end.error.unwrap();
        assert!(
            error.contains("docs/.GIT") && error.contains("docs/b.md"),
            "{error}"
        );

        let mut end = AttemptEnd {
            outcome: Outcome::Succeeded,
            ..AttemptEnd::default()
        };
        apply(&mut end, Ok((commit, Vec::new())));
        assert_eq!((end.outcome, end.error), (Outcome::Succeeded, None));
    }
}
