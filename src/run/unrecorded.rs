//! Work no snapshot holds. Every attempt ends with a snapshot of the worktree, and that commit
//! is what travels: a run rebuilt on another machine has the files of its latest snapshot and
//! nothing else. When the snapshot fails (git refuses a path: an untracked `docs/.GIT`, a FIFO
//! where a tracked file was), the attempt's work exists only in this worktree, so:
//!
//! - the attempt does not succeed: it ends `failed` (or keeps the worse outcome it had), with
//!   git's reason, which names the path, in its error; nothing in the worktree is touched;
//! - `push` refuses to publish the run, and a clone refuses to take a remote record whose latest
//!   attempt ended so, since either would hand the run on without that work;
//! - `resume` first checks that the worktree can be recorded now, so that no agent works on in a
//!   worktree whose work would be lost again, and the attempt it starts records everything.

use std::path::Path;

use crate::git::{CommitId, Repo};
use crate::state::transition::AttemptEnd;
use crate::state::{Outcome, RunState};

use super::RunError;

/// Records the worktree as attempt `n` of `stage` left it, under its snapshot ref: the commit,
/// or why it could not be made.
pub fn snapshot(repo: &Repo, state: &RunState, stage: &str, n: u32) -> Result<CommitId, String> {
    let refname = super::snapshot_ref(&state.run_id, stage, n);
    let parent = parent(repo, state);
    let message = format!("baton: run {}, stage {stage}, attempt {n}", state.run_id);
    super::open_run_worktree(repo, state).map_err(|err| err.to_string())?;
    repo.snapshot_worktree(Path::new(&state.worktree), &refname, parent, &message)
        .map_err(|err| err.to_string())
}

/// What snapshots are made on: the run's branch tip, else its base.
fn parent(repo: &Repo, state: &RunState) -> CommitId {
    match repo.branch_tip(&state.branch) {
        Ok(Some(tip)) => tip,
        _ => state.base,
    }
}

/// Makes `end` say that the attempt's work could not be recorded (`why`): a success becomes a
/// failure, any other outcome stays, and the error says what happened either way.
pub fn mark(end: &mut AttemptEnd, why: &str) {
    let said = format!("its work could not be recorded, and is only in the worktree: {why}");
    if end.outcome == Outcome::Succeeded {
        end.outcome = Outcome::Failed;
        end.error = None;
    }
    end.snapshot = None;
    end.error = Some(match end.error.take() {
        Some(error) => format!("{error}; {said}"),
        None => said,
    });
}

/// The stage and number of the run's latest attempt when it ended without a snapshot.
pub fn latest_unrecorded(state: &RunState) -> Option<(String, u32)> {
    let (index, attempt) = state.latest_attempt()?;
    (!attempt.is_open() && attempt.snapshot.is_none())
        .then(|| (state.stages()[index].name.clone(), attempt.n))
}

/// Refuses to hand `state` on — publish it, or take it from `remote` — while its latest
/// attempt's work is unrecorded.
pub fn refuse_handoff(state: &RunState, remote: Option<&str>) -> Result<(), RunError> {
    match latest_unrecorded(state) {
        None => Ok(()),
        Some((stage, n)) => Err(RunError::UnrecordedAttempt {
            run: state.run_id.to_string(),
            stage,
            n,
            worktree: state.worktree.clone(),
            remote: remote.map(str::to_owned),
        }),
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
    let made = repo.commit_worktree(
        worktree,
        parent(repo, state),
        "baton: can this worktree be recorded",
        crate::git::Identity::Baton,
        true,
    );
    match made {
        Ok(_) => Ok(Some(unrecorded)),
        Err(err) => Err(RunError::Unrecordable {
            run: state.run_id.to_string(),
            worktree: state.worktree.clone(),
            // git's reason spans lines; an `error:` line is one.
            message: err.to_string().lines().collect::<Vec<_>>().join("; "),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
