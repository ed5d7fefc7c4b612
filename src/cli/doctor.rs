//! `git baton doctor`: what is wrong with the runs of this repository, and how to fix it.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, Context, Outcome};

/// Find stale runs, broken worktree mappings, leftovers of failed creations and ownership
/// problems, each with the command that fixes it.
///
/// Exit status: 0 nothing found, 1 something needs attention.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_doctor(cwd: &Path, args: DoctorArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let ctx = Context::open(cwd)?;
    let config = ctx.config()?;
    let root = ctx.main_worktree()?.join(&config.worktree_root);
    let findings = crate::run::doctor::check(&ctx.repo, &ctx.store, &root);
    if args.json {
        super::write_json(out, &findings);
    } else if findings.is_empty() {
        let _ = writeln!(out, "no problems found");
    } else {
        for f in &findings {
            let _ = writeln!(out, "{}: {}\n  fix: {}", f.kind, f.message, f.fix);
        }
    }
    Ok(Outcome::Checked {
        passed: findings.is_empty(),
    })
}
