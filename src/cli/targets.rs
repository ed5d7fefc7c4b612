//! `git baton targets`: the paths a plan's body names, as targets.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{CliError, Ending};
use crate::term::errln;
use crate::{report, verify};

/// Show the targets a plan's body names.
///
/// Reads the plan's markdown body for repository paths — in code spans, link destinations and
/// plain prose — and keeps those that exist at the base, or whose directory does when they are
/// named deliberately (a new file). For a plan without targets, prints them as a `targets:` block
/// to paste into its frontmatter, each with the line that names it; `derive_targets: body` in
/// .baton.yml runs such plans with exactly these targets. For a plan with targets, warns about
/// each path the body names that no target covers. docs/plan-format.md gives the rules.
#[derive(Debug, Args)]
pub struct TargetsArgs {
    /// The plan file.
    #[arg(value_name = "PLAN")]
    pub plan: PathBuf,

    /// The revision whose tree says which paths exist (default: HEAD, as for `run`).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,

    /// Print the derivation as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_targets(cwd: &Path, args: TargetsArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let options = verify::targets::Options {
        plan: args.plan,
        base: args.base,
    };
    let found = verify::targets::targets(cwd, &options)?;
    if args.json {
        let mut text = serde_json::to_string_pretty(&found)
            .map_err(|err| CliError::input(format!("cannot render JSON: {err}")))?;
        text.push('\n');
        let _ = out.write_all(text.as_bytes());
    } else {
        let _ = out.write_all(report::targets::text(&found).as_bytes());
    }
    for named in &found.not_covered {
        errln!(
            "warning: {}:{}:{}: the body names `{}`, which no target covers",
            found.plan,
            named.line,
            named.column,
            report::escape::line(&named.target)
        );
    }
    Ok(Ending::Done)
}
