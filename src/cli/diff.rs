//! `git baton diff`: what one attempt changed, relative to the snapshot before it.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::args::{AttemptArgs, RunArg};
use super::{CliError, Ending, Workspace};

/// Show what an attempt changed relative to the previous attempt's snapshot (or the base).
///
/// Every attempt ends with a snapshot of the worktree; this compares two of them, so "the second
/// agent ran 11 minutes and changed nothing" shows in one command. By default the latest attempt.
#[derive(Debug, Args)]
pub struct DiffArgs {
    #[command(flatten)]
    pub run: RunArg,

    #[command(flatten)]
    pub attempt: AttemptArgs,

    /// List the changed paths only.
    #[arg(long)]
    pub name_only: bool,
}

pub fn cmd_diff(cwd: &Path, args: DiffArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let ctx = Workspace::open(cwd)?;
    let state = ctx.load(&args.run.run)?;
    let diff = crate::run::history::attempt_diff(
        &ctx.repo,
        &state,
        args.attempt.stage.as_deref(),
        args.attempt.attempt,
        !args.name_only,
    )?;
    let _ = out.write_all(crate::report::diff::attempt(&diff, args.name_only).as_bytes());
    Ok(Ending::Done)
}
