//! `git baton stop`: interrupt the process driving a run, from another terminal.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::args::RunArg;
use super::{CliError, Outcome};
use crate::ops::Workspace;

/// Stop a run now, from another terminal.
///
/// The process driving the run stops the actor (SIGTERM to its process group, then SIGKILL
/// after a grace period) and records the attempt as interrupted (manual).
#[derive(Debug, Args)]
pub struct StopArgs {
    #[command(flatten)]
    pub run: RunArg,
}

pub fn cmd_stop(cwd: &Path, args: StopArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let ws = Workspace::open(cwd)?;
    let state = crate::ops::stop::stop(&ws, &args.run.run)?;
    let _ = writeln!(
        out,
        "stopped run {}: {}",
        state.run_id,
        ws.status_label(&state)
    );
    Ok(Outcome::Done)
}
