//! `git baton review`: the reviewer's page of a run.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::args::RunArg;
use super::{CliError, Ending, Workspace};

/// The reviewer's page: coverage per target, who changed what in each attempt, and the diffstat.
///
/// Every target shows the paths that changed it or the reason it needed no change, next to the
/// attempts that produced the work.
#[derive(Debug, Args)]
pub struct ReviewArgs {
    #[command(flatten)]
    pub run: RunArg,
}

pub fn cmd_review(cwd: &Path, args: ReviewArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let ctx = Workspace::open(cwd)?;
    let state = ctx.load(&args.run.run)?;
    let data = crate::run::history::review(&ctx.repo, &state)?;
    let page = crate::report::review::render(&state, &data.attempts, &data.stats, data.source);
    let _ = out.write_all(page.as_bytes());
    Ok(Ending::Done)
}
