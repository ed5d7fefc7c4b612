//! `git baton stop`: interrupt the process driving a run, from another terminal.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use clap::Args;

use super::{CliError, Outcome};

/// Stop a run now, from another terminal.
///
/// The process driving the run stops the actor (SIGTERM to its process group, then SIGKILL
/// after a grace period) and records the attempt as interrupted (manual).
#[derive(Debug, Args)]
pub struct StopArgs {
    /// The run: its id or any unique prefix.
    #[arg(value_name = "RUN")]
    pub run: String,
}

pub fn run(cwd: &Path, args: StopArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let ctx = super::Context::open(cwd)?;
    let id = ctx.resolve(&args.run)?;
    super::require_driver(&ctx, &id)?;
    // A request file rather than a signal: the driver polls it, and no pid can be reused wrongly.
    let request = ctx.store.run_dir(&id).join(crate::run::STOP_REQUEST);
    crate::state::store::write_atomic(&request, b"stop\n")?;
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if ctx.store.holder(&id)?.is_none() {
            let state = ctx.store.load(&id)?;
            let _ = writeln!(
                out,
                "stopped run {id}: {}",
                super::status_word(&ctx.store, &state)
            );
            return Ok(Outcome::Done);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(CliError::new(
        super::ErrorKind::Failed,
        format!("run {id} did not stop within 30 seconds; the stop request stays in place"),
    )
    .hinted(format!("see `git baton status {id}`")))
}
