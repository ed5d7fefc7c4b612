//! `hold` and `release`: a person's say over what `git baton cycle` may do with a run. The mark
//! is an event of the run, committed through its session — under its lease when it is
//! published, so that it reaches the remote and every machine's `cycle` sees it.

use crate::run::note::Sink;
use crate::run::session;
use crate::state::RunState;
use crate::state::transition::{self, Event};

use super::{Result, Workspace};

/// Commits one of the events that say what `cycle` may do with a run (`Held`, `Released`,
/// `CycleResumed`, `CycleStopped`) to the run `name` names: of this clone, or one only a remote
/// has (rebuilt here first, as `resume` does). A published run is caught up with its remote and
/// changed under its lease; the lease is given back at once. `command` names the lock's holder.
///
/// The run's lock is needed: a run a live process drives is busy, and nothing is changed.
pub fn mark(
    ws: &Workspace,
    name: &str,
    event: Event,
    command: &'static str,
    sink: &dyn Sink,
) -> Result<Box<RunState>> {
    let (mut session, mut state) = ws.open_run(name, command, session::caught_up_notes, sink)?;
    let Some(remote) = state.remote().map(str::to_owned) else {
        session.commit(&mut state, event)?;
        return Ok(Box::new(state));
    };
    // Refused before the lease is taken: a refusal leaves the remote as it was.
    transition::check_event(&state, &event).map_err(crate::run::RunError::from)?;
    session.take_lease(&mut state, &remote, ws.config()?.lease, false)?;
    let committed = session.commit(&mut state, event);
    // Given back whether or not the commit worked; the release publishes the new record.
    session.release(&mut state)?;
    committed?;
    drop(session);
    Ok(Box::new(state))
}
