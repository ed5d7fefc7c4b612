//! `git baton pause`: stop a run at its next stage boundary.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::args::RunArg;
use super::{CliError, Ending};
use crate::ops::Workspace;
use crate::ops::pause::PauseOptions;

/// Pause a run at the next stage boundary.
///
/// The stage in progress finishes, then the run stops as `paused`; resume continues it.
#[derive(Debug, Args)]
pub struct PauseArgs {
    #[command(flatten)]
    pub run: RunArg,
}

pub fn cmd_pause(cwd: &Path, args: PauseArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let ws = Workspace::open(cwd)?;
    let id = crate::ops::pause::pause(
        &ws,
        &PauseOptions {
            name: &args.run.run,
        },
    )?;
    let _ = writeln!(out, "run {id} will pause after its current stage");
    Ok(Ending::Done)
}
