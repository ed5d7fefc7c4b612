//! `git baton resume`: continue a run from its RunState.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::args::{RunArg, parse_actor};
use super::{CliError, Ending};
use crate::ops::Workspace;
use crate::ops::resume::ResumeOptions;

/// Continue a run from its RunState.
///
/// Re-runs the first stage that has not succeeded as a new, resumed attempt, then the rest of
/// the pipeline.
///
/// Everything comes from the RunState recorded at creation (pipeline, actors, gate policy,
/// stop-after); only the actor of the stage being resumed may be changed. A resumed attempt of a
/// gated stage always goes through the coverage gate. Exit status as for `run`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    #[command(flatten)]
    pub run: RunArg,

    /// Use actor NAME for the resumed attempt of STAGE (recorded on the attempt).
    #[arg(long, value_name = "STAGE=NAME", value_parser = parse_actor)]
    pub actor: Option<(String, String)>,

    /// Re-create a missing worktree from the run's branch and the last attempt's snapshot.
    #[arg(long)]
    pub recreate_worktree: bool,

    /// Print the final RunState as JSON on stdout.
    #[arg(long)]
    pub json: bool,

    /// The resume is `git baton cycle`'s, which may resume the run this many times without a
    /// stage succeeding (set by cycle for the processes it starts).
    #[arg(long, value_name = "N", hide = true)]
    pub by_cycle: Option<u32>,
}

pub fn cmd_resume(cwd: &Path, args: ResumeArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let ws = Workspace::open(cwd)?;
    let options = ResumeOptions {
        name: &args.run.run,
        actor: args.actor,
        recreate_worktree: args.recreate_worktree,
        by_cycle: args.by_cycle,
    };
    let sink = super::Terminal::driving(!args.json);
    let drove = crate::ops::resume::resume(&ws, &options, &sink)?;
    super::print_summary(&ws.store, drove, args.json, out)
}
