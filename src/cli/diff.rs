//! `git baton diff`: what one attempt changed, relative to the snapshot before it.

use std::io::Write;
use std::path::Path;

use clap::Args;

use crate::error::{CliError, Exit};
use crate::git::Scope;

/// Show what an attempt changed relative to the previous attempt's snapshot (or the base).
///
/// Every attempt ends with a snapshot of the worktree; this compares two of them, so "the second
/// agent ran 11 minutes and changed nothing" shows in one command. By default the latest attempt.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The run: its id or any unique prefix.
    #[arg(value_name = "RUN")]
    pub run: String,

    /// The stage (default: the latest stage that ran).
    #[arg(long, value_name = "STAGE")]
    pub stage: Option<String>,

    /// The attempt number within the stage (default: its latest).
    #[arg(long, value_name = "N")]
    pub attempt: Option<u32>,

    /// List the changed paths only.
    #[arg(long)]
    pub name_only: bool,
}

pub fn run(cwd: &Path, args: DiffArgs, out: &mut dyn Write) -> Result<Exit, CliError> {
    let ctx = super::Context::open(cwd)?;
    let id = ctx.resolve(&args.run)?;
    let state = ctx.store.load(&id).map_err(super::store_error)?;
    // Attempts in the order they ran: stages run one after another.
    let order: Vec<(&str, &crate::state::Attempt)> = state
        .stages
        .iter()
        .flat_map(|s| s.attempts.iter().map(move |a| (s.name.as_str(), a)))
        .collect();
    let (stage, attempt) = super::pick_attempt(&state, args.stage.as_deref(), args.attempt)?;
    let n = attempt.n;
    let position = order
        .iter()
        .position(|(s, a)| *s == stage.name && a.n == n)
        .expect("the picked attempt is one of the run's attempts");
    let Some(snapshot) = &attempt.snapshot else {
        return Err(CliError::input(format!(
            "attempt {n} of stage `{}` has no snapshot (it is still running, or its snapshot failed)",
            stage.name
        )));
    };
    let previous = order[..position]
        .iter()
        .rev()
        .find_map(|(s, a)| a.snapshot.as_ref().map(|id| (*s, a, id)));
    let parse = |hex: &str| {
        hex.parse::<crate::git::CommitId>()
            .map_err(|_| CliError::input(format!("run {id}: `{hex}` is not a commit id")))
    };
    let new = parse(snapshot)?;
    let (old, old_label) = match previous {
        Some((s, a, hex)) => (
            parse(hex)?,
            format!("attempt {} of {s} (actor {})", a.n, a.actor),
        ),
        None => (
            parse(&state.base)?,
            format!("the base {}", &state.base[..12.min(state.base.len())]),
        ),
    };
    let outcome = attempt
        .outcome
        .map(|o| o.name().to_string())
        .unwrap_or_else(|| "running".into());
    let took = attempt
        .duration_ms
        .map(|ms| format!(", {}", crate::report::status::duration(ms)))
        .unwrap_or_default();
    let paths = ctx.repo.tree_changes(old, new, &Scope::All)?;
    let _ = writeln!(
        out,
        "attempt {n} of {} (actor {}, {outcome}{took}) against {old_label}: {}",
        stage.name,
        attempt.actor,
        match paths.len() {
            0 => "changed nothing".to_string(),
            1 => "1 path changed".to_string(),
            k => format!("{k} paths changed"),
        }
    );
    for path in &paths {
        if args.name_only {
            let _ = writeln!(out, "{path}");
            continue;
        }
        let before = ctx.repo.read_file_at(old, path)?;
        let after = ctx.repo.read_file_at(new, path)?;
        let _ = write!(
            out,
            "{}",
            crate::report::diff::render(path, before.as_deref(), after.as_deref())
        );
    }
    Ok(Exit::Success)
}
