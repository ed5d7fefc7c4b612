//! `finish`: commit a reviewed run's work with its reasons and mark it finished — for a
//! published run, where its newest record is and under its lease.

use crate::run::RunError;
use crate::run::lifecycle::{self, Finished};
use crate::run::note::{Note, Sink};
use crate::run::remote::CaughtUp;
use crate::run::session::{self, Lookup, Open, Session};
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
    let named = session::resolve(&ws.store, &ws.repo, options.name, Lookup::Remotes)?;
    // A published run is finished where its newest record is: another machine may have driven
    // it to review since this clone last saw it.
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
        command: "git baton finish",
        catch_up: here.as_ref(),
        caught_up: newer_taken,
        check: session::any_state,
    };
    let (mut session, mut state) = Session::open(&ws.repo, &ws.store, sink, &named, &open)?;
    // Finishing a published run is driving it one last step: under the lease, taken through
    // the remote before anything is committed, so that two clones never both finish it.
    let leased = state.remote().map(str::to_owned);
    if let Some(remote) = &leased {
        crate::state::transition::check_finishable(&state).map_err(RunError::from)?;
        let length = match &config {
            Some(config) => config.lease,
            None => ws.config()?.lease,
        };
        session.take_lease(&mut state, remote, length, false)?;
    }
    let now = ws.store.now();
    let finished = lifecycle::finish(&ws.repo, &session, &mut state, now);
    if leased.is_some() {
        // Published whether or not the finish worked: the lease is given back either way.
        session.release(&mut state)?;
        if finished.is_ok() {
            sink.note(Note::PushedFinished {
                run: state.run_id.to_string(),
                remote: state.remote().unwrap_or_default().to_owned(),
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
