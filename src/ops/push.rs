//! `push`: publish runs to their remotes, each remote's runs as one compare-and-swap.

use std::collections::BTreeMap;

use crate::run::RunError;
use crate::run::SyncError;
use crate::run::note::{Arrival, Note, Sink};
use crate::run::remote::{self, Standing};
use crate::run::session::{self, Lookup, NamedRun, Open, Session};
use crate::state::RunState;

use super::{Error, Result, Workspace};

pub struct PushOptions<'a> {
    /// The runs (ids or unique prefixes); none: every run of this clone published already.
    pub names: &'a [String],
    /// The remote, else where each run was published, else the configuration's.
    pub remote: Option<&'a str>,
}

/// Publishes the runs; each pushed run is said to `sink` once its remote took it.
pub fn push(ws: &Workspace, options: &PushOptions, sink: &dyn Sink) -> Result<()> {
    let config = ws.config()?;
    let named = !options.names.is_empty();
    let ids: Vec<_> = match named {
        // Publishing is a choice made per run: without names, only what is published already.
        false => ws
            .store
            .list()?
            .into_iter()
            .filter(|id| ws.store.load(id).is_ok_and(|s| s.remote().is_some()))
            .collect(),
        true => options
            .names
            .iter()
            .map(|name| {
                Ok(session::resolve(&ws.store, &ws.repo, name, Lookup::Here)?
                    .id()
                    .clone())
            })
            .collect::<Result<_>>()?,
    };
    // Every run is locked, so that no save here slips between the record pushed and the one
    // kept; a run driven here right now is busy (its driver publishes it itself).
    // How each record stands against its remote, asked once, under the lock.
    let open = Open {
        command: "git baton push",
        catch_up: None,
        caught_up: session::caught_up_notes,
        check: session::any_state,
    };
    let mut held: Vec<(Session, RunState, String, Standing)> = Vec::new();
    for id in ids {
        let (session, mut state) = Session::open(
            &ws.repo,
            &ws.store,
            sink,
            &NamedRun::Here(id.clone()),
            &open,
        )?;
        // A lease of this clone's whose holder is gone (its release could not reach the
        // remote): this process holds the run's lock, so that driver no longer drives it.
        // Published as it is, the lease would keep every other machine off the run until it
        // expires.
        if let Some(lease) = state.lease().filter(|l| ws.store.holds_here(l)) {
            let holder = lease.holder.clone();
            session.commit(&mut state, crate::state::Event::LeaseReleased { holder })?;
        }
        let remote = options
            .remote
            .map(str::to_owned)
            .or_else(|| state.remote().map(str::to_owned))
            .unwrap_or_else(|| config.remote.clone());
        let sync = remote::sync_of(&ws.repo, &state.run_id, &remote)?;
        // Gone from the remote since (`clean --remote` elsewhere): not brought back unless
        // named.
        if !named && sync == Standing::LocalOnly {
            sink.note(Note::NoLongerOn {
                run: id.to_string(),
                remote,
            });
            continue;
        }
        // A run whose latest attempt's work no snapshot holds would be rebuilt elsewhere
        // without it.
        crate::run::unrecorded::refuse_handoff(&state, None)?;
        held.push((session, state, remote, sync));
    }
    if held.is_empty() {
        return Err(Error::NothingPublished);
    }
    let mut by_remote: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, (_, _, remote, _)) in held.iter().enumerate() {
        by_remote.entry(remote.clone()).or_default().push(i);
    }
    for (remote, indexes) in by_remote {
        for &i in &indexes {
            let (_, state, _, sync) = &held[i];
            let run = state.run_id.to_string();
            match *sync {
                Standing::Behind | Standing::RemoteOnly => {
                    return Err(RunError::Sync(SyncError::Behind { run, remote }).into());
                }
                Standing::Diverged => {
                    return Err(RunError::Sync(SyncError::Diverged { run, remote }).into());
                }
                _ => {}
            }
        }
        let mut runs: Vec<(&Session, &mut RunState)> = held
            .iter_mut()
            .enumerate()
            .filter(|(i, _)| indexes.contains(i))
            .map(|(_, (session, state, _, _))| (&*session, state))
            .collect();
        Session::publish_together(&remote, &mut runs)?;
        for &i in &indexes {
            let (_, state, _, before) = &held[i];
            let run = state.run_id.to_string();
            let how = match before {
                Standing::UpToDate => Arrival::AlreadyThere,
                _ => Arrival::Now {
                    status: state.status().to_string(),
                },
            };
            sink.note(Note::Pushed {
                run,
                remote: remote.clone(),
                how,
            });
        }
    }
    Ok(())
}
