//! `git baton clean`: remove a run, or finish a removal that was cut short.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::args::RunArg;
use super::{CliError, Ending};
use crate::ops::Workspace;
use crate::ops::clean::{CleanOptions, Removed};
use crate::term::errln;

/// Remove a run: its worktree, its attempt snapshots and its record. The branch stays.
///
/// An unfinished run is refused without --force, and so is a worktree holding changes its
/// branch does not have, because they may exist nowhere else. Naming a run whose removal was cut
/// short (`doctor` reports it) finishes that removal.
#[derive(Debug, Args)]
pub struct CleanArgs {
    #[command(flatten)]
    pub run: RunArg,

    /// Remove an unfinished run too, with any uncommitted work in its worktree, and a run whose
    /// state cannot be read or is missing.
    #[arg(long)]
    pub force: bool,

    /// Also delete the run's record and snapshots on a remote (`--remote` alone: where it was
    /// published; `--remote=NAME`: that one); its branch stays there too. Refused while another
    /// machine's lease on it holds, unless --force. A run only the remote has is removed there
    /// alone.
    #[arg(
        long,
        value_name = "NAME",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = ""
    )]
    pub remote: Option<String>,
}

pub fn cmd_clean(cwd: &Path, args: CleanArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let ws = Workspace::open(cwd)?;
    let options = CleanOptions {
        name: &args.run.run,
        force: args.force,
        remote: args.remote.as_deref(),
    };
    let cleaned = crate::ops::clean::clean(&ws, &options)?;
    let id = &cleaned.id;
    if let Some(Removed::Run { left, .. } | Removed::Removal { left, .. }) = &cleaned.here
        && let Some(left) = left
    {
        errln!(
            "warning: left {} in place: no worktree registration of this repository names it on branch baton/{id}, so it is not run {id}'s worktree",
            left.display()
        );
    }
    let _ = match &cleaned.here {
        Some(Removed::Run { id, branch, .. }) => writeln!(
            out,
            "removed run {id}; branch {branch} is kept (`git branch -D {branch}` deletes it)"
        ),
        Some(Removed::Remnant { id }) => writeln!(
            out,
            "removed what was left of run {id}; its worktree and branch, if any, are kept (`git baton doctor` reports them)"
        ),
        Some(Removed::Removal { id, .. }) => writeln!(
            out,
            "finished removing run {id}; branch baton/{id} is kept (`git branch -D baton/{id}` deletes it)"
        ),
        None => Ok(()),
    };
    match cleaned.remote {
        None => {}
        Some(Err(err)) => return Err(err.into()),
        Some(Ok((remote, true))) => {
            errln!("removed run {id}'s record and snapshots from {remote}")
        }
        Some(Ok((remote, false))) => errln!("{remote} has no record of run {id}"),
    }
    Ok(Ending::Done)
}
