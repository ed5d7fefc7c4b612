//! `git baton log`: what an actor printed during an attempt.

use std::io::Write;
use std::path::Path;

use clap::Args;

use crate::error::{CliError, Exit};

/// Show what an actor printed during an attempt.
///
/// By default the latest attempt of the latest stage that ran.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// The run: its id or any unique prefix.
    #[arg(value_name = "RUN")]
    pub run: String,

    /// The stage (default: the latest stage that ran).
    #[arg(long, value_name = "STAGE")]
    pub stage: Option<String>,

    /// The attempt number within the stage (default: its latest).
    #[arg(long, value_name = "N")]
    pub attempt: Option<u32>,

    /// Print the attempt's record and its logs as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cwd: &Path, args: LogArgs, out: &mut dyn Write) -> Result<Exit, CliError> {
    let ctx = super::Context::open(cwd)?;
    let id = ctx.resolve(&args.run)?;
    let state = ctx.store.load(&id).map_err(super::store_error)?;
    let (stage, attempt) = super::pick_attempt(&state, args.stage.as_deref(), args.attempt)?;
    let dir = ctx.store.run_dir(&id).join(&attempt.dir);
    // Streamed from the files, never read whole: a log can be large.
    let logs = [
        ("stdout", dir.join("stdout.log")),
        ("stderr", dir.join("stderr.log")),
    ];
    if args.json {
        let value = serde_json::json!({
            "run_id": id, "stage": stage.name, "attempt": attempt,
            "dir": dir.display().to_string(),
        });
        let logs: Vec<(&str, &Path)> = logs.iter().map(|(k, p)| (*k, p.as_path())).collect();
        let _ = crate::exec::write_json_with_logs(value, &logs, out);
        return Ok(Exit::Success);
    }
    let outcome = attempt
        .outcome
        .map(|o| o.name().to_string())
        .unwrap_or_else(|| "running".into());
    let _ = writeln!(
        out,
        "== run {id}, stage {}, attempt {} ({}, actor {}, started {})",
        stage.name, attempt.n, outcome, attempt.actor, attempt.started_at
    );
    for (name, path) in &logs {
        let _ = writeln!(out, "-- {name}");
        let shown = crate::exec::copy_log_text(path, out);
        if shown.bytes == 0 {
            let _ = writeln!(out, "(empty)");
        } else if !shown.ends_with_newline {
            let _ = writeln!(out);
        }
    }
    Ok(Exit::Success)
}
