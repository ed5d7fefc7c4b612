//! What an actor printed during an attempt: `git baton log`.

use std::fmt::Write;
use std::path::PathBuf;

use crate::state::Attempt;

/// An attempt's logs, as read back from its directory (empty when a log is missing).
pub struct Logs {
    /// The attempt's directory.
    pub dir: PathBuf,
    pub stdout: String,
    pub stderr: String,
}

/// A heading naming the attempt, then each log under its own heading.
pub fn render(run_id: &str, stage: &str, attempt: &Attempt, logs: &Logs) -> String {
    let mut out = String::new();
    let outcome = attempt.outcome.map_or("running", |o| o.name());
    let _ = writeln!(
        out,
        "== run {run_id}, stage {stage}, attempt {} ({outcome}, actor {}, started {})",
        attempt.n, attempt.actor, attempt.started_at
    );
    for (name, text) in [("stdout", &logs.stdout), ("stderr", &logs.stderr)] {
        let _ = writeln!(out, "-- {name}");
        if text.is_empty() {
            let _ = writeln!(out, "(empty)");
        } else {
            out.push_str(text);
            if !text.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}
