//! `git baton hold`: keep `git baton cycle` away from a run until `git baton release`.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::args::RunArg;
use super::{CliError, Ending};
use crate::ops::Workspace;
use crate::state::transition::Event;

/// Keep `git baton cycle` away from a run until `git baton release`.
///
/// The hold is recorded in the run (for a published run, on its remote too, under its lease),
/// so that no machine's `cycle` resumes or starts it. A person can still `resume` it. A run a
/// live process drives is busy (exit 3): hold it once its driver lets go of it. Exit status: 0
/// held, 2 bad input (an unknown run, one in review or finished, one held already), 3 busy.
#[derive(Debug, Args)]
pub struct HoldArgs {
    #[command(flatten)]
    pub run: RunArg,

    /// Why, for whoever reads `status` and `list` (one line).
    #[arg(long, value_name = "TEXT", value_parser = parse_reason)]
    pub reason: Option<String>,
}

/// One line of text: a reason every clone can show on one line, and reads back from a remote.
fn parse_reason(value: &str) -> Result<String, String> {
    if value.trim().is_empty() {
        return Err("the reason is empty".into());
    }
    if value.chars().any(char::is_control) {
        return Err("the reason holds a control character (a line break?): give one line".into());
    }
    Ok(value.to_owned())
}

pub fn cmd_hold(cwd: &Path, args: HoldArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let ws = Workspace::open(cwd)?;
    let event = Event::Held {
        reason: args.reason,
    };
    let sink = super::Terminal::notes();
    let state = crate::ops::hold::mark(&ws, &args.run.run, event, "git baton hold", &sink)
        .map_err(|err| busy_hint(err, "held"))?;
    let id = &state.run_id;
    let _ = writeln!(
        out,
        "held run {id} ({}): cycle leaves it alone until `git baton release {id}`",
        ws.status_label(&state)
    );
    Ok(Ending::Done)
}

/// A run a live process drives cannot be marked now: say when it can.
pub(super) fn busy_hint(err: crate::ops::Error, done: &str) -> CliError {
    use crate::run::RunError;
    use crate::state::store::StoreError;
    let busy = match &err {
        crate::ops::Error::Run(run) => match &**run {
            RunError::Store(StoreError::Busy { run, .. }) => Some(run.clone()),
            _ => None,
        },
        _ => None,
    };
    let mut err = CliError::from(err);
    if let Some(run) = busy {
        err.hints = vec![format!(
            "it can be {done} once its driver lets go of it; `git baton pause {run}` stops it at \
             its next stage boundary"
        )];
    }
    err
}
