//! After the pipeline: finishing a reviewed run, removing a run, and re-creating a lost
//! worktree. Each acts only on an explicit command; nothing here deletes uncommitted work
//! unless the caller was told to (`--force`).

use std::path::Path;

use crate::coverage::TargetStatus;
use crate::error::CliError;
use crate::git::{Identity, Repo, Scope};
use crate::state::store::{self, Store};
use crate::state::{RunState, RunStatus};

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
        .coverage
        .iter()
        .flat_map(|r| &r.targets)
        .filter(|t| t.status == TargetStatus::Unchanged)
        .filter_map(|t| t.reason.clone().map(|r| (t.target.clone(), r)))
        .collect()
}

/// Commits what is left in the worktree onto the run's branch with `Baton-Run` and
/// `Baton-Unchanged` trailers, marks the run finished, and removes the worktree when nothing
/// is left uncommitted in it.
pub fn finish(repo: &Repo, lock_dir: &Path, state: &mut RunState) -> Result<Finished, CliError> {
    if state.status != RunStatus::Review {
        return Err(CliError::input(format!(
            "run {} is {}, not in review: only a run whose stages all succeeded can be finished",
            state.run_id,
            crate::report::status::word(state.status)
        ))
        .hinted(format!("see `git baton status {}`", state.run_id)));
    }
    super::check_worktree(repo, state)?;
    let worktree = Path::new(&state.worktree);
    let tip = repo.branch_tip(&state.branch)?.ok_or_else(|| {
        CliError::input(format!(
            "run {}: branch {} does not exist",
            state.run_id, state.branch
        ))
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
    state.status = RunStatus::Finished;
    state.current_stage = None;
    state.updated_at = store::now();
    store::save_in(lock_dir, state).map_err(|e| CliError::input(e.to_string()))?;
    super::write_result(lock_dir, state)?;

    let clean = Repo::open_worktree(worktree)
        .and_then(|wt| wt.worktree_changes(commit, &Scope::All))
        .is_ok_and(|changes| changes.is_empty());
    let worktree_removed = clean && repo.remove_worktree(worktree, false).is_ok();
    Ok(Finished {
        commit: committed.then(|| commit.to_string()),
        unchanged_trailers: reasons,
        worktree_removed,
    })
}

/// Removes a run: its worktree, its snapshot refs and its directory. The branch stays: it holds
/// the work. An unfinished run is refused unless `force`, because its worktree may hold work
/// that exists nowhere else.
pub fn clean(repo: &Repo, store: &Store, state: &RunState, force: bool) -> Result<(), CliError> {
    if state.status != RunStatus::Finished && !force {
        return Err(CliError::input(format!(
            "run {} is {}, not finished",
            state.run_id,
            crate::report::status::word(state.status)
        ))
        .hinted(format!(
            "`git baton clean --force {}` removes it anyway, with any uncommitted work in {}",
            state.run_id, state.worktree
        )));
    }
    let worktree = Path::new(&state.worktree);
    if worktree.exists() {
        // Without --force, git refuses a worktree with uncommitted changes: `finish` keeps the
        // worktree exactly when something in it was left uncommitted.
        repo.remove_worktree(worktree, force).map_err(|e| {
            CliError::from(e).hinted(format!(
                "{} holds uncommitted changes; `git baton clean --force {}` removes them too",
                state.worktree, state.run_id
            ))
        })?;
    } else {
        repo.prune_worktrees();
    }
    repo.delete_refs_under(&format!("refs/baton/runs/{}/", state.run_id))?;
    let dir = store.run_dir(&state.run_id);
    store
        .record_cleaned(&state.run_id)
        .map_err(|e| CliError::input(e.to_string()))?;
    std::fs::remove_dir_all(&dir)
        .map_err(|e| CliError::input(format!("cannot remove {}: {e}", dir.display())))?;
    Ok(())
}

/// Re-creates a run's missing worktree from its branch, then puts back the files of the last
/// attempt's snapshot (uncommitted work included), leaving branch and index at the branch tip.
pub fn recreate_worktree(repo: &Repo, state: &RunState) -> Result<(), CliError> {
    let worktree = Path::new(&state.worktree);
    if worktree.exists() {
        return Err(CliError::input(format!(
            "run {}: {} exists; --recreate-worktree only replaces a missing worktree",
            state.run_id, state.worktree
        ))
        .hinted("move it away first if it is not the run's worktree"));
    }
    if repo.branch_tip(&state.branch)?.is_none() {
        return Err(CliError::input(format!(
            "run {}: branch {} is gone, so there is nothing to re-create the worktree from",
            state.run_id, state.branch
        )));
    }
    repo.prune_worktrees();
    if let Some(parent) = worktree.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| CliError::input(format!("cannot create {}: {e}", parent.display())))?;
    }
    repo.add_worktree(worktree, &state.branch)?;
    let last_snapshot = state
        .stages
        .iter()
        .flat_map(|s| &s.attempts)
        .filter_map(|a| a.snapshot.as_deref())
        .next_back();
    if let Some(hex) = last_snapshot {
        let id = hex.parse::<crate::git::CommitId>().map_err(|_| {
            CliError::input(format!(
                "run {}: snapshot `{hex}` is not a commit id",
                state.run_id
            ))
        })?;
        repo.restore_files(worktree, id)?;
    }
    Ok(())
}
