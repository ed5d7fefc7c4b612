//! `hold` and `release`: a person's say over what `git baton cycle` may do with a run. The mark
//! is an event of the run, committed through its session — under its lease when it is
//! published, so that it reaches the remote and every machine's `cycle` sees it.

use crate::run::note::Sink;
use crate::run::session::{self, Lookup, Open, Session};
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
    let named = session::resolve(&ws.store, &ws.repo, name, Lookup::Remotes)?;
    let published = named.tracked_on().is_some() || ws.store.load(named.id())?.remote().is_some();
    let config = match published {
        true => Some(ws.config()?),
        false => None,
    };
    let main_worktree = match published {
        true => Some(ws.main_worktree()?),
        false => None,
    };
    let here = config
        .as_ref()
        .zip(main_worktree.as_deref())
        .map(|(config, main)| ws.here(config, main));
    let open = Open {
        command,
        catch_up: here.as_ref(),
        caught_up: session::caught_up_notes,
        check: session::any_state,
    };
    let (mut session, mut state) = Session::open(&ws.repo, &ws.store, sink, &named, &open)?;
    let Some(remote) = state.remote().map(str::to_owned) else {
        session.commit(&mut state, event)?;
        return Ok(Box::new(state));
    };
    // Refused before the lease is taken: a refusal leaves the remote as it was.
    transition::check_event(&state, &event).map_err(crate::run::RunError::from)?;
    let lease = match &config {
        Some(config) => config.lease,
        None => ws.config()?.lease,
    };
    session.take_lease(&mut state, &remote, lease, false)?;
    let committed = session.commit(&mut state, event);
    // Given back whether or not the commit worked; the release publishes the new record.
    session.release(&mut state)?;
    committed?;
    drop(session);
    Ok(Box::new(state))
}
