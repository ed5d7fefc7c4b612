//! `git baton finish`: commit a reviewed run's work with its reasons, and mark it finished.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::args::RunArg;
use super::{CliError, Context, Outcome};
use crate::run::lease::Publisher;
use crate::run::remote;
use crate::term::errln;

/// Commit what is left in a reviewed run's worktree and mark the run finished.
///
/// The commit on branch `baton/<id>` (made even when nothing is left to commit) carries the
/// trailers `Baton-Run: <id>`, `Baton-Plan: <plan path>` and one `Baton-Unchanged: <target>:
/// <reason>` per unchanged target, so that `git baton verify` in CI checks the plan and sees the
/// reasons. The worktree is removed only when nothing in it is left uncommitted.
/// Nothing is merged.
#[derive(Debug, Args)]
pub struct FinishArgs {
    #[command(flatten)]
    pub run: RunArg,
}

pub fn cmd_finish(cwd: &Path, args: FinishArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let ctx = Context::open(cwd)?;
    let (id, tracked_on) = remote::resolve(&ctx.store, &ctx.repo, &args.run.run)?;
    // A published run is finished where its newest record is: another machine may have driven
    // it to review since this clone last saw it.
    if tracked_on.is_some() || ctx.store.load(&id)?.remote().is_some() {
        let config = ctx.config()?;
        let main_worktree = ctx.main_worktree()?;
        let here = ctx.here(&config, &main_worktree);
        if let Some((remote, remote::CaughtUp::Adopted | remote::CaughtUp::Updated)) =
            remote::refresh(&here, &id, tracked_on)?
        {
            errln!("note: took the newer record of {remote}");
        }
    }
    let lock = ctx.store.lock(&id, "git baton finish")?;
    let mut state = ctx.store.load(&id)?;
    // Finishing a published run is driving it one last step: under the lease, taken through
    // the remote before anything is committed, so that two clones never both finish it.
    let publisher = match state.remote().map(str::to_owned) {
        Some(remote) => {
            crate::state::transition::check_finishable(&state)
                .map_err(crate::run::RunError::from)?;
            let config = ctx.config()?;
            Some(Publisher::take(
                &ctx.repo,
                lock.dir(),
                &mut state,
                &remote,
                config.lease,
                false,
                &ctx.store,
            )?)
        }
        None => None,
    };
    let finished =
        crate::run::lifecycle::finish(&ctx.repo, lock.dir(), &mut state, ctx.store.now());
    if let Some(publisher) = &publisher {
        // Published whether or not the finish worked: the lease is given back either way.
        publisher.release(&ctx.repo, lock.dir(), &mut state, ctx.store.now())?;
        if finished.is_ok() {
            errln!("pushed run {id} to {}", state.remote().unwrap_or_default());
        }
    }
    let done = finished?;
    match &done.commit {
        Some(commit) => {
            let _ = writeln!(
                out,
                "finished run {id}: committed {} on {} ({} unchanged reason(s) as trailers)",
                &commit[..12],
                state.branch,
                done.unchanged_trailers
            );
        }
        None => {
            let _ = writeln!(
                out,
                "finished run {id}: nothing left to commit on {}",
                state.branch
            );
        }
    }
    if done.worktree_removed {
        let _ = writeln!(out, "removed the worktree {}", state.worktree);
    } else if done.left.is_empty() {
        let _ = writeln!(out, "kept the worktree {}: it is not clean", state.worktree);
    } else {
        // Bounded: a build directory alone may hold thousands of paths.
        const SHOWN: usize = 10;
        let _ = writeln!(
            out,
            "kept the worktree {}: it holds {} path(s) the branch does not have:",
            state.worktree,
            done.left.len()
        );
        for path in done.left.iter().take(SHOWN) {
            let _ = writeln!(out, "  {}", path.escape_debug());
        }
        if done.left.len() > SHOWN {
            let _ = writeln!(out, "  … and {} more", done.left.len() - SHOWN);
        }
        let _ = writeln!(
            out,
            "remove it by hand once they are saved: `git worktree remove --force {}`",
            state.worktree
        );
    }
    let _ = writeln!(
        out,
        "next: merge branch {} (e.g. `git merge {}`)",
        state.branch, state.branch
    );
    Ok(Outcome::Done)
}
