//! `git baton doctor`: what is wrong with the runs of this repository, and how to fix it.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, Ending, Workspace};
use crate::run::doctor::{self, Finding, Fixed};

/// Find stale runs, broken worktree mappings, leftovers of killed creations, removals and writes,
/// and ownership problems, each with the command that fixes it.
///
/// The fixes are listed in an order in which they apply top to bottom. Exit status: 0 nothing
/// found, 1 something needs attention.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,

    /// Apply the fixes that cannot lose work (leftovers of killed creations, removals and writes,
    /// broken worktree registrations, worktrees and branches that hold nothing no other place
    /// has), say what was done, then report what is left.
    #[arg(long)]
    pub fix: bool,

    /// With --fix, also delete branches of no run that hold commits no other branch has.
    #[arg(long, requires = "fix")]
    pub force: bool,
}

/// The version of `doctor --json`'s layout (see docs/cli.md).
const DOCTOR_SCHEMA_VERSION: u32 = 1;

pub fn cmd_doctor(cwd: &Path, args: DoctorArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let ctx = Workspace::open(cwd)?;
    let config = ctx.config()?;
    let root = ctx.main_worktree()?.join(&config.worktree_root);
    let (fixed, findings) = if args.fix {
        doctor::fix(&ctx.repo, &ctx.store, &root, args.force)?
    } else {
        (Vec::new(), doctor::check(&ctx.repo, &ctx.store, &root)?)
    };
    if args.json {
        let mut document = serde_json::json!({
            "schema_version": DOCTOR_SCHEMA_VERSION,
            "findings": findings,
        });
        if args.fix {
            document["fixed"] = serde_json::json!(fixed);
        }
        super::write_json(out, &document);
    } else {
        write_text(out, &fixed, &findings, args.fix);
    }
    Ok(Ending::Checked {
        passed: findings.is_empty(),
    })
}

fn write_text(out: &mut dyn Write, fixed: &[Fixed], findings: &[Finding], fixing: bool) {
    for done in fixed {
        let f = &done.finding;
        let _ = match &done.error {
            None => writeln!(out, "fixed {}: {}", f.kind.name(), f.fix),
            Some(error) => writeln!(out, "not fixed {}: {}: {error}", f.kind.name(), f.fix),
        };
    }
    if findings.is_empty() {
        let _ = writeln!(out, "no problems found");
        return;
    }
    for f in findings {
        let _ = writeln!(out, "{}: {}\n  fix: {}", f.kind.name(), f.message, f.fix);
    }
    let safe = findings.iter().filter(|f| f.safe).count();
    if safe > 0 && !fixing {
        let _ = writeln!(
            out,
            "{safe} of these cannot lose work; `git baton doctor --fix` applies them"
        );
    }
}
