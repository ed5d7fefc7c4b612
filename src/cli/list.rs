//! `git baton list`: every run of the repository.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, Context, Outcome};
use crate::term::errln;

/// List the runs of this repository, oldest first, one line each.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print a JSON array of the runs (each as `status --json` prints it).
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_list(cwd: &Path, args: ListArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let ctx = Context::open(cwd)?;
    let mut states = Vec::new();
    for id in ctx.store.list()? {
        match ctx.store.load(&id) {
            Ok(state) => states.push(state),
            // One unreadable run must not hide the others.
            Err(err) => errln!("warning: {err}"),
        }
    }
    if args.json {
        let views: Vec<_> = states
            .iter()
            .map(|s| super::json_view(&ctx.store, s))
            .collect();
        super::write_json(out, &views);
    } else {
        let runs: Vec<_> = states.iter().map(|s| (s, ctx.store.is_stale(s))).collect();
        let _ = out.write_all(crate::report::list::render(&runs).as_bytes());
    }
    Ok(Outcome::Done)
}
