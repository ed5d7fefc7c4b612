//! `git baton pause`: stop a run at its next stage boundary.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, Outcome};

/// Pause a run at the next stage boundary.
///
/// The stage in progress finishes, then the run stops as `paused`; resume continues it.
#[derive(Debug, Args)]
pub struct PauseArgs {
    /// The run: its id or any unique prefix.
    #[arg(value_name = "RUN")]
    pub run: String,
}

pub fn run(cwd: &Path, args: PauseArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let ctx = super::Context::open(cwd)?;
    let id = ctx.resolve(&args.run)?;
    super::require_driver(&ctx, &id)?;
    let request = ctx.store.run_dir(&id).join(crate::run::PAUSE_REQUEST);
    crate::state::store::write_atomic(&request, b"pause\n")?;
    let _ = writeln!(out, "run {id} will pause after its current stage");
    Ok(Outcome::Done)
}
