//! `git baton unchanged`: the agent records why a target needed no change.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, Ending, Workspace};
use crate::coverage::TargetStatus;
use crate::run::agent_side::Current;

/// Record why a target needed no change (for the agent, inside a run's worktree).
///
/// Run by the agent of a run, in the run's worktree, while its attempt runs. The reason goes to
/// the attempt's evidence, where the coverage gate reads it when the agent exits. Refused at
/// once (exit 2), with nothing written: a target the plan does not have, a placeholder or
/// too-short reason (at least 3 words and 15 characters), a target that already has an entry.
/// Never takes the run's lock; safe to call several times at once.
#[derive(Debug, Args)]
pub struct UnchangedArgs {
    /// The target exactly as the plan lists it.
    #[arg(value_name = "TARGET")]
    pub target: String,

    /// Why it needed no change: specific enough for a reviewer to check.
    #[arg(value_name = "REASON")]
    pub reason: String,
}

pub fn cmd_unchanged(
    cwd: &Path,
    args: UnchangedArgs,
    out: &mut dyn Write,
) -> Result<Ending, CliError> {
    let recorded = record(cwd, &args.target, &args.reason)?;
    let _ = out.write_all(recorded.text().as_bytes());
    Ok(Ending::Done)
}

/// A reason recorded in the open attempt's evidence.
pub(super) struct RecordedReason {
    run: String,
    stage: String,
    attempt: u32,
    target: String,
    reason: String,
    /// The target already has changes in the worktree: the gate counts it as changed.
    changed: bool,
}

impl RecordedReason {
    /// What `unchanged` prints.
    fn text(&self) -> String {
        let target = crate::report::escape::line(&self.target);
        let mut text = format!(
            "recorded: {target} needed no change, because: {}\n",
            crate::report::escape::line(&self.reason)
        );
        if self.changed {
            text.push_str(&format!("note: {}\n", changed_note(&target)));
        }
        text
    }

    /// What the MCP tool `unchanged` answers: the same facts, with the run and attempt.
    pub(super) fn json(&self) -> serde_json::Value {
        let mut value = serde_json::json!({
            "run_id": self.run,
            "stage": self.stage,
            "attempt": self.attempt,
            "target": self.target,
            "reason": self.reason,
            "recorded": true,
        });
        if self.changed {
            value["note"] = changed_note(&self.target).into();
        }
        value
    }
}

fn changed_note(target: &str) -> String {
    format!(
        "{target} already has changes in the worktree; the gate counts it as changed, and keeps the reason for the record"
    )
}

/// Records, for the agent in `cwd` (a run's worktree), why `target` needed no change.
pub(super) fn record(cwd: &Path, target: &str, reason: &str) -> Result<RecordedReason, CliError> {
    let ctx = Workspace::open(cwd)?;
    let current = Current::find(&ctx.repo, &ctx.store)?;
    current.record_unchanged(target, reason)?;
    // The diff wins over a reason: say so now, while the agent can still act on it.
    let changed = current.check(&ctx.repo).coverage.is_some_and(|report| {
        report
            .targets
            .iter()
            .any(|t| t.target == target && t.status == TargetStatus::Changed)
    });
    Ok(RecordedReason {
        run: current.state.run_id.to_string(),
        stage: current.state.stages()[current.stage].name.clone(),
        attempt: current.attempt,
        target: target.to_owned(),
        reason: reason.trim().to_owned(),
        changed,
    })
}
