//! `git baton release`: give a held run back to `git baton cycle`.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::args::RunArg;
use super::{CliError, Ending};
use crate::ops::Workspace;
use crate::state::transition::Event;

/// Give a held run back to `git baton cycle`.
///
/// Ends the hold of `git baton hold` and sets the count of cycle's resumes back to 0, so that a
/// run cycle gave up on is tried again. Exit status: 0 released, 2 bad input (an unknown run, or
/// one neither held nor resumed by cycle), 3 busy.
#[derive(Debug, Args)]
pub struct ReleaseArgs {
    #[command(flatten)]
    pub run: RunArg,
}

pub fn cmd_release(cwd: &Path, args: ReleaseArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let ws = Workspace::open(cwd)?;
    let sink = super::Terminal::notes();
    let state = crate::ops::hold::mark(
        &ws,
        &args.run.run,
        Event::Released,
        "git baton release",
        &sink,
    )
    .map_err(|err| super::hold::busy_hint(err, "released"))?;
    let _ = writeln!(
        out,
        "released run {} ({}): cycle may take it again",
        state.run_id,
        ws.status_label(&state)
    );
    Ok(Ending::Done)
}
