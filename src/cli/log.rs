//! `git baton log`: what an actor printed during an attempt.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, Outcome};

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

pub fn run(cwd: &Path, args: LogArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let ctx = super::Context::open(cwd)?;
    let id = ctx.resolve(&args.run)?;
    let state = ctx.store.load(&id)?;
    let (stage, attempt) = super::pick_attempt(&state, args.stage.as_deref(), args.attempt)?;
    let dir = ctx.store.run_dir(&id).join(&attempt.dir);
    let read = |name: &str| {
        std::fs::read(dir.join(name))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    };
    let (stdout, stderr) = (read("stdout.log"), read("stderr.log"));
    if args.json {
        let value = serde_json::json!({
            "run_id": id, "stage": stage.name, "attempt": attempt,
            "stdout": stdout, "stderr": stderr, "dir": dir.display().to_string(),
        });
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&value).expect("serializes")
        );
        return Ok(Outcome::Done);
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
    for (name, text) in [("stdout", stdout), ("stderr", stderr)] {
        let _ = writeln!(out, "-- {name}");
        if text.is_empty() {
            let _ = writeln!(out, "(empty)");
        } else {
            let _ = write!(out, "{text}");
            if !text.ends_with('\n') {
                let _ = writeln!(out);
            }
        }
    }
    Ok(Outcome::Done)
}
