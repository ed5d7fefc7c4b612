//! `git baton verify`: the coverage gate, for CI and for humans.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::{CliError, Ending};
use crate::term::errln;
use crate::{report, verify};

/// The coverage gate: every target changed, or a recorded reason.
///
/// Checks that every target of the plans has a changed path or a recorded reason.
///
/// With --head, the diff is merge-base(BASE, HEAD)..HEAD, as in a pull request, and the merge base
/// is the gate: its .baton.yml and its plans' targets count, whatever the range does to them.
/// Without it, the current worktree (committed, staged, unstaged and untracked changes) is checked
/// against the merge base of BASE and HEAD. Reasons for unchanged targets come from --evidence
/// files and from `Baton-Unchanged: <target>: <reason>` trailers of the commits in the range
/// (merge commits excepted). A run branch's commits name their plan in a `Baton-Plan` trailer,
/// and that plan is checked too, read where the gate reads plans.
///
/// Exit status: 0 the gate passed, 1 the gate failed, 2 bad input or environment.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Plan files to check. Without any, the plans that the range adds, modifies or deletes under
    /// the configured plans directory (`plans_dir` in .baton.yml, default `plans/`), and the
    /// plans that `Baton-Plan` trailers of its commits name (as `git baton finish` writes them).
    #[arg(value_name = "PLAN")]
    pub plans: Vec<PathBuf>,

    /// The revision the work started from (a branch, tag or commit). Default: the current
    /// branch's upstream, else HEAD (which checks only uncommitted work).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,

    /// Check the commit REV (diffed against merge-base(BASE, REV)) instead of the worktree.
    #[arg(long, value_name = "REV")]
    pub head: Option<String>,

    /// An evidence file with reasons for unchanged targets (repeatable).
    #[arg(long, value_name = "FILE")]
    pub evidence: Vec<PathBuf>,

    /// Output format; `github` also appends a Markdown table to $GITHUB_STEP_SUMMARY when set;
    /// `sarif` is a SARIF 2.1.0 log for code-scanning views (docs/ci.md).
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,

    /// Shorthand for --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,

    /// Fail a plan that declares no targets instead of passing it as unverified.
    #[arg(long)]
    pub require_targets: bool,

    /// With --head, accept what the range does to the plans that gate it (a removed target, a
    /// deleted, moved or hidden plan): the plans are checked as the head has them, and each
    /// change is still reported, in every format.
    #[arg(long)]
    pub allow_plan_changes: bool,

    /// Fail (exit 1) when no plan was checked, instead of passing with "no plans to verify".
    #[arg(long)]
    pub require_plans: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    Github,
    Markdown,
    // SARIF 2.1.0, for code-scanning views (a plain comment: a doc comment would make it the
    // only value with a description in the help).
    Sarif,
}

pub fn cmd_verify(cwd: &Path, args: VerifyArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let options = verify::Options {
        plans: args.plans,
        base: args.base,
        head: args.head,
        evidence: args.evidence,
        require_targets: args.require_targets,
        allow_plan_changes: args.allow_plan_changes,
        require_plans: args.require_plans,
    };
    let result = verify::verify(cwd, &options)?;
    for ignored in &result.ignored_targets {
        errln!("warning: {ignored}");
        errln!("hint: {}", ignored.hint());
    }
    let format = if args.json {
        OutputFormat::Json
    } else {
        args.format
    };
    let rendered = match format {
        OutputFormat::Text => report::text(&result),
        OutputFormat::Json => report::json(&result),
        OutputFormat::Github => report::github(&result),
        OutputFormat::Markdown => report::markdown(&result),
        OutputFormat::Sarif => report::sarif(&result),
    };
    let _ = out.write_all(rendered.as_bytes());
    // After the report, so that a broken summary file does not hide the verdict.
    if format == OutputFormat::Github {
        append_step_summary(&report::markdown(&result))?;
    }
    Ok(Ending::Checked {
        passed: result.passed,
    })
}

fn append_step_summary(markdown: &str) -> Result<(), CliError> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    let fail = |err: std::io::Error| {
        CliError::input(format!(
            "cannot append to $GITHUB_STEP_SUMMARY ({}): {}",
            Path::new(&path).display(),
            crate::files::io_reason(&err)
        ))
    };
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
        .map_err(fail)?;
    file.write_all(markdown.as_bytes()).map_err(fail)
}
