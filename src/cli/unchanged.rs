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
    let ctx = Workspace::open(cwd)?;
    let current = Current::find(&ctx.repo, &ctx.store)?;
    current.record_unchanged(&args.target, &args.reason)?;
    let _ = writeln!(
        out,
        "recorded: {} needed no change, because: {}",
        crate::report::escape::line(&args.target),
        crate::report::escape::line(args.reason.trim())
    );
    // The diff wins over a reason: say so now, while the agent can still act on it.
    let changed = current.check(&ctx.repo).coverage.is_some_and(|report| {
        report
            .targets
            .iter()
            .any(|t| t.target == args.target && t.status == TargetStatus::Changed)
    });
    if changed {
        let _ = writeln!(
            out,
            "note: {} already has changes in the worktree; the gate counts it as changed, and keeps the reason for the record",
            crate::report::escape::line(&args.target)
        );
    }
    Ok(Ending::Done)
}
