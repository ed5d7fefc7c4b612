//! `git baton run`: create a run and drive its stages.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::args::parse_actor;
use super::{CliError, Ending};
use crate::ops::Workspace;
use crate::ops::run::{RunOptions, RunOutcome};

/// Create a run of a plan and execute its stages.
///
/// The run gets its own branch `baton/<id>` and linked worktree, created from BASE.
///
/// Prints `run <RUN-ID>` as the first line of stderr. Exit status: 0 the run reached review (or
/// paused on request), 1 it ended in any other state, 2 bad input, 3 the run is busy, 130
/// git-baton was interrupted.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The plan file.
    #[arg(value_name = "PLAN")]
    pub plan: PathBuf,

    /// The revision to start from.
    #[arg(long, value_name = "REV", default_value = "HEAD")]
    pub base: String,

    /// An idempotency key: a retried `run` with the same key returns the existing run.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,

    /// Pause after this stage succeeds.
    #[arg(long, value_name = "STAGE")]
    pub stop_after: Option<String>,

    /// Use actor NAME for stage STAGE in this run (repeatable).
    #[arg(long, value_name = "STAGE=NAME", value_parser = parse_actor)]
    pub actor: Vec<(String, String)>,

    /// Create the run `queued` and leave it for `git baton cycle` (or `resume`) to drive.
    #[arg(long)]
    pub queue: bool,

    /// Print the final RunState as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_run(cwd: &Path, args: RunArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let ws = Workspace::open(cwd)?;
    let options = RunOptions {
        plan: &args.plan,
        cwd,
        base: &args.base,
        key: args.key.as_deref(),
        stop_after: args.stop_after.as_deref(),
        actors: &args.actor,
        queue: args.queue,
    };
    let sink = super::Terminal::driving(!args.json);
    match crate::ops::run::run(&ws, &options, &sink)? {
        RunOutcome::Existing(state) => {
            if args.json {
                super::write_json(out, &super::json_view(&ws.store, &state));
            }
            Ok(Ending::Existing {
                status: state.status(),
                stale: ws.store.is_stale(&state),
            })
        }
        RunOutcome::Driven(drove) => super::print_summary(&ws.store, drove, args.json, out),
        RunOutcome::Queued(state) => {
            if args.json {
                super::write_json(out, &super::json_view(&ws.store, &state));
            }
            Ok(Ending::Done)
        }
    }
}
