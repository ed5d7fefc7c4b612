//! `git baton finish`: commit a reviewed run's work with its reasons, and mark it finished.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::args::RunArg;
use super::{CliError, Ending};
use crate::ops::Workspace;
use crate::ops::finish::{FinishOptions, FinishOutcome};
use crate::run::lifecycle::Finished;
use crate::state::RunState;

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

pub fn cmd_finish(cwd: &Path, args: FinishArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let ws = Workspace::open(cwd)?;
    let sink = super::Terminal::notes();
    let FinishOutcome {
        state,
        finished: done,
    } = crate::ops::finish::finish(
        &ws,
        &FinishOptions {
            name: &args.run.run,
        },
        &sink,
    )?;
    render(&state, &done, out);
    Ok(Ending::Done)
}

/// What finishing did, on stdout: the commit, the worktree, and the next step.
fn render(state: &RunState, done: &Finished, out: &mut dyn Write) {
    let id = &state.run_id;
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
}
