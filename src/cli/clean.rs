//! `git baton clean`: remove a run.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::args::RunArg;
use super::{CliError, Context, Outcome};

/// Remove a run: its worktree, its attempt snapshots and its record. The branch stays.
///
/// An unfinished run is refused without --force, because its worktree may hold work that
/// exists nowhere else.
#[derive(Debug, Args)]
pub struct CleanArgs {
    #[command(flatten)]
    pub run: RunArg,

    /// Remove an unfinished run too, with any uncommitted work in its worktree.
    #[arg(long)]
    pub force: bool,
}

pub fn cmd_clean(cwd: &Path, args: CleanArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let ctx = Context::open(cwd)?;
    let id = ctx.resolve(&args.run.run)?;
    let lock = ctx.store.lock(&id, "git baton clean")?;
    let state = ctx.store.load(&id)?;
    crate::run::lifecycle::clean(&ctx.repo, &ctx.store, &state, args.force)?;
    drop(lock);
    let _ = writeln!(
        out,
        "removed run {id}; branch {} is kept (`git branch -D {}` deletes it)",
        state.branch, state.branch
    );
    Ok(Outcome::Done)
}
