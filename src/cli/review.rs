//! `git baton review`: the reviewer's page of a run.

use std::io::Write;
use std::path::Path;

use clap::Args;

use crate::error::{CliError, Exit};
use crate::git::Scope;
use crate::report::review::{self, AttemptChanges};

/// The reviewer's page: coverage per target, who changed what in each attempt, and the diffstat.
///
/// Every target shows the paths that changed it or the reason it needed no change, next to the
/// attempts that produced the work.
#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// The run: its id or any unique prefix.
    #[arg(value_name = "RUN")]
    pub run: String,
}

pub fn run(cwd: &Path, args: ReviewArgs, out: &mut dyn Write) -> Result<Exit, CliError> {
    let ctx = super::Context::open(cwd)?;
    let id = ctx.resolve(&args.run)?;
    let state = ctx.store.load(&id).map_err(super::store_error)?;
    let base = state.base.parse::<crate::git::CommitId>().map_err(|_| {
        CliError::input(format!(
            "run {id}: the RunState's base `{}` is not a commit id",
            state.base
        ))
    })?;

    let mut attempts = Vec::new();
    let mut previous = base;
    for stage in &state.stages {
        for a in &stage.attempts {
            let snapshot = a
                .snapshot
                .as_deref()
                .and_then(|h| h.parse::<crate::git::CommitId>().ok());
            let paths = match snapshot {
                Some(id) => {
                    let paths = ctx.repo.tree_changes(previous, id, &Scope::All)?;
                    previous = id;
                    Some(paths)
                }
                None => None,
            };
            attempts.push(AttemptChanges {
                stage: stage.name.clone(),
                n: a.n,
                actor: a.actor.clone(),
                outcome: a.outcome.map_or("running", |o| o.name()).to_string(),
                duration_ms: a.duration_ms,
                paths,
            });
        }
    }

    let mut stats = Vec::new();
    let mut source = "worktree now";
    let worktree = Path::new(&state.worktree);
    if let Ok(wt) = crate::git::Repo::open_worktree(worktree) {
        for path in wt.worktree_changes(base, &Scope::All)? {
            let before = ctx.repo.read_file_at(base, &path)?;
            let after = std::fs::read(worktree.join(&path)).ok();
            stats.push(review::stat(&path, before.as_deref(), after.as_deref()));
        }
    } else if let Some(tip) = ctx.repo.branch_tip(&state.branch)? {
        // A finished run's worktree is gone; its work is on the branch.
        source = "branch";
        for path in ctx.repo.tree_changes(base, tip, &Scope::All)? {
            let before = ctx.repo.read_file_at(base, &path)?;
            let after = ctx.repo.read_file_at(tip, &path)?;
            stats.push(review::stat(&path, before.as_deref(), after.as_deref()));
        }
    }
    let _ = out.write_all(review::render(&state, &attempts, &stats, source).as_bytes());
    Ok(Exit::Success)
}
