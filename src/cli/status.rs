//! `git baton status`: one run, for people or scripts.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, Context, Outcome};

/// Show one run (without RUN, the most recent).
///
/// Status, plan, branch, worktree, each stage with its attempts, the last error, coverage, and
/// the next command to type.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The run: its id or any unique prefix.
    #[arg(value_name = "RUN")]
    pub run: Option<String>,

    /// Print the RunState plus derived fields as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_status(cwd: &Path, args: StatusArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let ctx = Context::open(cwd)?;
    let id = match &args.run {
        Some(name) => ctx.resolve(name)?,
        None => ctx.store.list()?.pop().ok_or_else(|| {
            CliError::input("there are no runs in this repository")
                .hinted("start one with `git baton run <PLAN>`")
        })?,
    };
    let state = ctx.store.load(&id)?;
    if args.json {
        super::write_json(out, &super::json_view(&ctx.store, &state));
    } else {
        let holder = ctx.store.holder(&id).ok().flatten();
        let text = crate::report::status::render(
            &state,
            ctx.store.is_stale(&state),
            holder.as_ref(),
            ctx.store.now(),
        );
        let _ = out.write_all(text.as_bytes());
    }
    Ok(Outcome::Done)
}
