//! `git baton list`: every run of the repository.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, Ending, Workspace};

/// List the runs of this repository, oldest first, one line each.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print a JSON array of the runs (each as `status --json` prints it).
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_list(cwd: &Path, args: ListArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let ctx = Workspace::open(cwd)?;
    let runs = super::listed_runs(&ctx)?;
    let holds = super::Holds::of(&ctx, &runs);
    if args.json {
        let views: Vec<_> = runs.iter().map(|run| run.json(&ctx, &holds)).collect();
        super::write_json(out, &views);
    } else {
        let rows: Vec<_> = runs
            .iter()
            .map(|run| {
                let here = matches!(run, super::Listed::Here(_));
                let stale = here && ctx.store.is_stale(run.state());
                // A remote's claim not verified here says so where it is listed.
                let unverified = match run {
                    super::Listed::OnRemote { claim, .. } if !claim.verified => ", not verified",
                    _ => "",
                };
                let sync = run
                    .sync(&ctx.repo)
                    .map(|(remote, sync)| format!("{remote}: {}{unverified}", sync.name()));
                (run.state(), stale, sync, holds.words(run.state()))
            })
            .collect();
        let _ = out.write_all(crate::report::list::render(&rows).as_bytes());
    }
    Ok(Ending::Done)
}
