//! `finish`: commit a reviewed run's work with its reasons and mark it finished — for a
//! published run, where its newest record is and under its lease.

use crate::run::RunError;
use crate::run::lifecycle::{self, Finished};
use crate::run::note::{Arrival, Note, Sink};
use crate::run::remote::CaughtUp;
use crate::state::RunState;

use super::{Result, Workspace};

pub struct FinishOutcome {
    pub state: Box<RunState>,
    pub finished: Finished,
}

/// Catching up before a finish says only that a newer record was taken.
fn newer_taken(remote: &str, caught: CaughtUp) -> Option<Note> {
    match caught {
        CaughtUp::Adopted | CaughtUp::Updated => Some(Note::TookNewer {
            remote: remote.to_owned(),
        }),
        CaughtUp::Nothing => None,
    }
}

pub struct FinishOptions<'a> {
    /// The run: its id or a unique prefix, of this clone or only on a remote.
    pub name: &'a str,
}

/// Finishes the run `options` names.
pub fn finish(ws: &Workspace, options: &FinishOptions, sink: &dyn Sink) -> Result<FinishOutcome> {
    // A published run is finished where its newest record is: another machine may have driven
    // it to review since this clone last saw it.
    let (mut session, mut state) =
        ws.open_run(options.name, "git baton finish", newer_taken, sink)?;
    // Finishing a published run is driving it one last step: under the lease, taken through
    // the remote before anything is committed, so that two clones never both finish it.
    let leased = state.remote().map(str::to_owned);
    if let Some(remote) = &leased {
        crate::state::transition::check_finishable(&state).map_err(RunError::from)?;
        session.take_lease(&mut state, remote, ws.config()?.lease, false)?;
    }
    let now = ws.store.now();
    let finished = lifecycle::finish(&ws.repo, &session, &mut state, now);
    if leased.is_some() {
        // Published whether or not the finish worked: the lease is given back either way.
        session.release(&mut state)?;
        if finished.is_ok() {
            sink.note(Note::Pushed {
                run: state.run_id.to_string(),
                remote: state.remote().unwrap_or_default().to_owned(),
                how: Arrival::Finished,
            });
        }
    }
    let finished = finished?;
    drop(session);
    Ok(FinishOutcome {
        state: Box::new(state),
        finished,
    })
}
