//! `git baton push`: publish runs to a remote, as one compare-and-swap.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, Ending};
use crate::ops::Workspace;
use crate::ops::push::PushOptions;

/// Publish runs to a remote: their branch, record and attempt snapshots.
///
/// One atomic push, which the remote accepts only if every ref still holds what this clone last
/// saw there (fetched or pushed): of two clones that saw the same record, one wins and the other
/// exits 3, changing nothing. A published run is driven under a lease from then on, so that no
/// two machines drive it at once. The branch is published, never merged.
#[derive(Debug, Args)]
pub struct PushArgs {
    /// The runs (ids or unique prefixes); when none is named, every run of this clone that is
    /// published already.
    #[arg(value_name = "RUN")]
    pub runs: Vec<String>,

    /// The remote (default: where each run was published, else `remote:` of .baton.yml, else
    /// origin).
    #[arg(long, value_name = "NAME")]
    pub remote: Option<String>,
}

pub fn cmd_push(cwd: &Path, args: PushArgs, _out: &mut dyn Write) -> Result<Ending, CliError> {
    let ws = Workspace::open(cwd)?;
    let options = PushOptions {
        names: &args.runs,
        remote: args.remote.as_deref(),
    };
    crate::ops::push::push(&ws, &options, &super::Terminal::notes())?;
    Ok(Ending::Done)
}
