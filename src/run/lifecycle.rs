//! After the pipeline: finishing a reviewed run, removing a run, and re-creating a lost
//! worktree. Each acts only on an explicit command; nothing here deletes uncommitted work
//! unless the caller was told to (`--force`).

use std::path::Path;

use crate::coverage::TargetStatus;
use crate::git::{Identity, Repo, Scope};
use crate::state::store::{self, Store};
use crate::state::transition::{self, Event};
use crate::state::{RunState, RunStatus};

use super::RunError;

pub struct Finished {
    /// The commit made on the run's branch, if there was anything to commit.
    pub commit: Option<String>,
    pub unchanged_trailers: usize,
    pub worktree_removed: bool,
}

/// The commit message `finish` writes: trailers that `verify` reads in CI.
pub fn finish_message(state: &RunState) -> String {
    let title = state.plan.title.as_deref().unwrap_or(&state.plan.id);
    let mut message = format!(
        "{title}\n\nWork of git-baton run {} for plan {}.\n\nBaton-Run: {}\n",
        state.run_id, state.plan.path, state.run_id
    );
    for t in unchanged(state) {
        message.push_str(&format!(
            "{}: {}: {}\n",
            crate::coverage::TRAILER_KEY,
            t.0,
            t.1.replace('\n', " ")
        ));
    }
    message
}

fn unchanged(state: &RunState) -> Vec<(String, String)> {
    state
        .coverage()
        .into_iter()
        .flat_map(|r| &r.targets)
        .filter(|t| t.status == TargetStatus::Unchanged)
        .filter_map(|t| t.reason.clone().map(|r| (t.target.clone(), r)))
        .collect()
}

/// Commits what is left in the worktree onto the run's branch with `Baton-Run` and
/// `Baton-Unchanged` trailers, marks the run finished (as of `at`, when it was asked to), and
/// removes the worktree when nothing is left uncommitted in it.
pub fn finish(
    repo: &Repo,
    lock_dir: &Path,
    state: &mut RunState,
    at: jiff::Timestamp,
) -> Result<Finished, RunError> {
    // Refused before anything is committed: only a run in review may be finished.
    let finished = transition::apply(state, Event::Finished, at)?;
    super::check_worktree(repo, state)?;
    let worktree = Path::new(&state.worktree);
    let tip = repo
        .branch_tip(&state.branch)?
        .ok_or_else(|| RunError::NoBranch {
            run: state.run_id.to_string(),
            branch: state.branch.clone(),
        })?;
    let reasons = unchanged(state).len();
    // Reasons must reach the branch even when every change is already committed: CI reads them.
    let (commit, _) = repo.commit_worktree(
        worktree,
        tip,
        &finish_message(state),
        Identity::User,
        reasons > 0,
    )?;
    let committed = commit != tip;
    if committed {
        repo.advance_branch(worktree, &state.branch, tip, commit)?;
    }
    store::save_in(lock_dir, &finished)?;
    super::write_result(lock_dir, &finished)?;

    let clean = Repo::open_worktree(worktree)
        .and_then(|wt| wt.worktree_changes(commit, &Scope::All))
        .is_ok_and(|changes| changes.is_empty());
    let worktree_removed = clean && repo.remove_worktree(worktree, false).is_ok();
    *state = finished;
    Ok(Finished {
        commit: committed.then(|| commit.to_string()),
        unchanged_trailers: reasons,
        worktree_removed,
    })
}

/// Removes a run: its worktree, its snapshot refs and its directory. The branch stays: it holds
/// the work. An unfinished run is refused unless `force`, because its worktree may hold work
/// that exists nowhere else.
pub fn clean(repo: &Repo, store: &Store, state: &RunState, force: bool) -> Result<(), RunError> {
    if state.status() != RunStatus::Finished && !force {
        return Err(RunError::NotFinished {
            run: state.run_id.to_string(),
            status: state.status(),
            worktree: state.worktree.clone(),
        });
    }
    let worktree = Path::new(&state.worktree);
    if worktree.exists() {
        // Without --force, git refuses a worktree with uncommitted changes: `finish` keeps the
        // worktree exactly when something in it was left uncommitted.
        repo.remove_worktree(worktree, force)
            .map_err(|source| RunError::WorktreeNotRemoved {
                run: state.run_id.to_string(),
                worktree: state.worktree.clone(),
                source,
            })?;
    } else {
        repo.prune_worktrees();
    }
    repo.delete_refs_under(&format!("refs/baton/runs/{}/", state.run_id))?;
    let dir = store.run_dir(&state.run_id);
    store.record_cleaned(&state.run_id)?;
    // Renamed aside first, in one step: a kill midway leaves the run whole or a hidden remnant
    // that `doctor` reports, never a run directory without its state that nothing sees.
    let aside = store.runs_dir().join(format!(".clean-{}", state.run_id));
    std::fs::rename(&dir, &aside).map_err(|source| RunError::Remove {
        path: dir.clone(),
        source,
    })?;
    std::fs::remove_dir_all(&aside).map_err(|source| RunError::Remove {
        path: aside.clone(),
        source,
    })?;
    Ok(())
}

/// Re-creates a run's missing worktree from its branch, then puts back the files of the last
/// attempt's snapshot (uncommitted work included), leaving branch and index at the branch tip.
pub fn recreate_worktree(repo: &Repo, state: &RunState) -> Result<(), RunError> {
    let worktree = Path::new(&state.worktree);
    if worktree.exists() {
        return Err(RunError::WorktreeExists {
            run: state.run_id.to_string(),
            worktree: state.worktree.clone(),
        });
    }
    if repo.branch_tip(&state.branch)?.is_none() {
        return Err(RunError::BranchGone {
            run: state.run_id.to_string(),
            branch: state.branch.clone(),
        });
    }
    repo.prune_worktrees();
    if let Some(parent) = worktree.parent() {
        std::fs::create_dir_all(parent).map_err(|source| RunError::CreateDir {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    repo.discard_broken_worktrees(super::create::is_run_id)?;
    repo.add_worktree(worktree, &state.branch)?;
    if let Some(id) = state.attempts().filter_map(|a| a.snapshot).next_back() {
        repo.restore_files(worktree, id)?;
    }
    Ok(())
}
