//! `git baton stop`: interrupt the process driving a run, from another terminal.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use clap::Args;

use super::args::RunArg;
use super::{CliError, Context, Outcome};
use crate::run::request::{self, Request};

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

pub fn cmd_stop(cwd: &Path, args: StopArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let ctx = Context::open(cwd)?;
    let id = ctx.resolve(&args.run.run)?;
    request::send(&ctx.store, &id, Request::Stop)?;
    let state = request::wait_released(&ctx.store, &id, WAIT)?;
    let _ = writeln!(out, "stopped run {id}: {}", ctx.status_label(&state));
    Ok(Outcome::Done)
}
