//! `git baton fetch`: bring a remote's runs into this clone's view.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, Ending};
use crate::ops::Workspace;
use crate::ops::fetch::FetchOptions;
use crate::run::remote::Fetched;
use crate::term::errln;

/// Fetch every run a remote holds: records, attempt snapshots and branches.
///
/// Only the remote-tracking refs change (`refs/baton/remotes/<remote>/…` and
/// `refs/remotes/<remote>/baton/…`); no run here is touched. `list` and `status` then show runs
/// that exist only on the remote and which side is ahead; `resume` rebuilds or updates a run
/// from them.
#[derive(Debug, Args)]
pub struct FetchArgs {
    /// The remote (default: `remote:` of .baton.yml, else origin).
    #[arg(long, value_name = "NAME")]
    pub remote: Option<String>,
}

pub fn cmd_fetch(cwd: &Path, args: FetchArgs, _out: &mut dyn Write) -> Result<Ending, CliError> {
    let ws = Workspace::open(cwd)?;
    let options = FetchOptions {
        remote: args.remote.as_deref(),
    };
    let fetched = crate::ops::fetch::fetch(&ws, &options)?;
    for (id, change) in &fetched.changes {
        let what = match change {
            Fetched::New => "new",
            Fetched::Updated => "updated",
            Fetched::Gone => "gone from the remote",
        };
        errln!("{id}: {what}");
    }
    if fetched.changes.is_empty() {
        errln!("no run changed on {}", fetched.remote);
    }
    Ok(Ending::Done)
}
