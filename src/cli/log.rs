//! `git baton log`: what an actor printed during an attempt.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::args::{AttemptArgs, RunArg};
use super::{CliError, Ending, Workspace};

/// Show what an actor printed during an attempt.
///
/// By default the latest attempt of the latest stage that ran.
#[derive(Debug, Args)]
pub struct LogArgs {
    #[command(flatten)]
    pub run: RunArg,

    #[command(flatten)]
    pub attempt: AttemptArgs,

    /// Print the attempt's record and its logs as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The version of `log --json`'s layout (see docs/cli.md).
const LOG_SCHEMA_VERSION: u32 = 1;

pub fn cmd_log(cwd: &Path, args: LogArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let ctx = Workspace::open(cwd)?;
    let state = ctx.load(&args.run.run)?;
    let id = &state.run_id;
    let (stage, attempt) = crate::run::history::pick_attempt(
        &state,
        args.attempt.stage.as_deref(),
        args.attempt.attempt,
    )?;
    let logs = crate::run::history::logs(&ctx.store.run_dir(id), &state, &stage.name, attempt)?;
    if args.json {
        let value = serde_json::json!({
            "schema_version": LOG_SCHEMA_VERSION,
            "run_id": id, "stage": stage.name, "attempt": attempt,
            "dir": logs.dir.display().to_string(),
        });
        let _ = crate::report::log::write_json(out, value, &logs);
    } else {
        let _ = crate::report::log::write(out, id, &stage.name, attempt, &logs);
    }
    Ok(Ending::Done)
}
