//! `git baton status`: one run, for people or scripts.

use std::io::Write;
use std::path::Path;

use clap::Args;
use serde::Serialize;

use crate::error::{CliError, Exit};
use crate::state::RunState;
use crate::state::store::{Holder, Store};

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

/// The RunState with every derived fact, plus what only the store knows at read time.
#[derive(Serialize)]
pub struct JsonView<'a> {
    #[serde(flatten)]
    pub state: crate::state::view::RunView<'a>,
    /// `status` is `running` but no live process holds the run: it crashed.
    pub stale: bool,
    /// Who drives the run right now, if anyone.
    pub lock: Option<Holder>,
    pub run_dir: String,
}

pub fn json_view<'a>(store: &Store, state: &'a RunState) -> JsonView<'a> {
    JsonView {
        state: state.view(),
        stale: super::is_stale(store, state),
        lock: store.holder(&state.run_id).ok().flatten(),
        run_dir: store.run_dir(&state.run_id).display().to_string(),
    }
}

pub fn run(cwd: &Path, args: StatusArgs, out: &mut dyn Write) -> Result<Exit, CliError> {
    let ctx = super::Context::open(cwd)?;
    let id = match &args.run {
        Some(name) => ctx.resolve(name)?,
        None => ctx
            .store
            .list()
            .map_err(super::store_error)?
            .pop()
            .ok_or_else(|| {
                CliError::input("there are no runs in this repository")
                    .hinted("start one with `git baton run <PLAN>`")
            })?,
    };
    let state = ctx.store.load(&id).map_err(super::store_error)?;
    if args.json {
        super::print_state_json(&ctx.store, &state, out)?;
    } else {
        let holder = ctx.store.holder(&id).ok().flatten();
        let stale = super::is_stale(&ctx.store, &state);
        let text = crate::report::status::render(&state, stale, holder.as_ref(), ctx.store.now());
        let _ = out.write_all(text.as_bytes());
    }
    Ok(Exit::Success)
}
