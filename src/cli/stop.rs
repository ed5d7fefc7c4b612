//! `git baton stop`: interrupt the process driving a run, from another terminal.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use clap::Args;

use super::args::RunArg;
use super::{CliError, Ending};
use crate::ops::Workspace;
use crate::ops::stop::StopOptions;

/// How long `stop` waits for the driver to act on the request.
const WAIT: Duration = Duration::from_secs(30);

/// Stop a run now, from another terminal.
///
/// The process driving the run stops the actor (SIGTERM to its process group, then SIGKILL
/// after a grace period) and records the attempt as interrupted (manual).
#[derive(Debug, Args)]
pub struct StopArgs {
    #[command(flatten)]
    pub run: RunArg,
}

pub fn cmd_stop(cwd: &Path, args: StopArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let ws = Workspace::open(cwd)?;
    let options = StopOptions {
        name: &args.run.run,
        wait: WAIT,
    };
    let state = crate::ops::stop::stop(&ws, &options)?;
    let _ = writeln!(
        out,
        "stopped run {}: {}",
        state.run_id,
        ws.status_label(&state)
    );
    Ok(Ending::Done)
}
