//! What an actor printed during an attempt: `git baton log`.
//!
//! The logs are streamed from their files, never held whole: an actor may have printed far more
//! than fits in memory (see `log_limit` for what is kept).

use std::io::{self, Write};
use std::path::PathBuf;

use crate::state::Attempt;

/// Where an attempt's logs are (a missing log shows as empty).
pub struct Logs {
    /// The attempt's directory.
    pub dir: PathBuf,
    pub stdout: PathBuf,
    pub stderr: PathBuf,
}

/// A heading naming the attempt, then each log under its own heading.
pub fn write(
    out: &mut dyn Write,
    run_id: &str,
    stage: &str,
    attempt: &Attempt,
    logs: &Logs,
) -> io::Result<()> {
    let outcome = attempt.outcome.map_or("running", |o| o.name());
    writeln!(
        out,
        "== run {run_id}, stage {stage}, attempt {} ({outcome}, actor {}, started {})",
        attempt.n, attempt.actor, attempt.started_at
    )?;
    for (name, path) in [("stdout", &logs.stdout), ("stderr", &logs.stderr)] {
        writeln!(out, "-- {name}")?;
        let shown = crate::exec::copy_log_text(path, out);
        if shown.bytes == 0 {
            writeln!(out, "(empty)")?;
        } else if !shown.ends_with_newline {
            writeln!(out)?;
        }
    }
    Ok(())
}

/// `record` (a JSON object) pretty-printed with the logs' text as its `stdout` and `stderr`.
pub fn write_json(out: &mut dyn Write, record: serde_json::Value, logs: &Logs) -> io::Result<()> {
    crate::exec::write_json_with_logs(
        record,
        &[("stdout", &logs.stdout), ("stderr", &logs.stderr)],
        out,
    )
}
