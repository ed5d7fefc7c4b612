//! A run session: the one way a command changes a run.
//!
//! Every command that changes a run does the same steps, in this order: name the run (its id or
//! a unique prefix, of this clone or only on a remote: [`resolve`]), catch up with the remote
//! when the run is published, take the run's lock, load its state, check that the command may
//! act on it, and, for a published run, take the lease through the remote ([`Session::open`],
//! [`Session::take_lease`]). From then on [`Session::commit`] is the only way the run changes:
//! the event is applied by [`crate::state::transition::apply`] and the result persisted as one
//! operation — `state.json`, the git record and, under the lease, the remote. The lease is given
//! back by [`Session::release`], or when the session is dropped; the lock goes with the session.
//!
//! The lease's half (taking, renewing on a thread of its own, publishing saves, releasing) is in
//! [`lease`]; its own events go through the same private application of the transition function
//! as every other change.

pub mod lease;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use jiff::Timestamp;

use crate::git::Repo;
use crate::run::SyncError;
use crate::state::store::{RunLock, Store, StoreError, Unfinished};
use crate::state::transition::{self, Event, TransitionError};
use crate::state::{RunId, RunState};

use super::note::{Note, Sink};
use super::notify::Notifier;
use super::remote::{self, CaughtUp, Here, Publication};
use super::{Driven, RunError, record};
use lease::{Destination, Publisher};

/// The one application of an event to a state in the crate.
fn apply(state: &RunState, event: Event, at: Timestamp) -> Result<RunState, TransitionError> {
    transition::apply(state, event, at)
}

/// What a run name names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamedRun {
    /// A run of this clone.
    Here(RunId),
    /// A run only a remote has, as last fetched.
    OnRemote { id: RunId, remote: String },
    /// A run whose removal was cut short (`runs/.clean-<id>`).
    Removal(RunId),
    /// A run directory without `state.json`.
    Headless(RunId),
}

impl NamedRun {
    pub fn id(&self) -> &RunId {
        match self {
            NamedRun::Here(id)
            | NamedRun::OnRemote { id, .. }
            | NamedRun::Removal(id)
            | NamedRun::Headless(id) => id,
        }
    }

    /// The remote a run only a remote has is on.
    pub fn tracked_on(&self) -> Option<&str> {
        match self {
            NamedRun::OnRemote { remote, .. } => Some(remote),
            _ => None,
        }
    }
}

/// Where [`resolve`] looks beyond this clone's runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// This clone's runs only.
    Here,
    /// Then the runs only a remote has, as last fetched.
    Remotes,
    /// Then a removal cut short, then a run directory without state (`clean`).
    Debris,
}

/// The run `name` names: its full id or a unique prefix, among this clone's runs first, then
/// where `lookup` says. An empty name names no run.
pub fn resolve(
    store: &Store,
    repo: &Repo,
    name: &str,
    lookup: Lookup,
) -> Result<NamedRun, RunError> {
    let ids = store.list()?;
    if let Some(id) = ids.iter().find(|id| *id == name) {
        return Ok(NamedRun::Here(id.clone()));
    }
    if let Some(id) = unique(name, ids)? {
        return Ok(NamedRun::Here(id));
    }
    match lookup {
        Lookup::Here => {}
        Lookup::Remotes => {
            let mut found: Vec<(String, RunId)> = remote::tracked_runs(repo)?
                .into_iter()
                .filter(|(_, id)| !name.is_empty() && id.starts_with(name))
                .collect();
            found.dedup_by(|a, b| a.1 == b.1);
            match found.len() {
                0 => {}
                1 => {
                    let (remote, id) = found.remove(0);
                    return Ok(NamedRun::OnRemote { id, remote });
                }
                _ => {
                    return Err(StoreError::Ambiguous {
                        prefix: name.into(),
                        candidates: found.iter().map(|(_, id)| id.to_string()).collect(),
                    }
                    .into());
                }
            }
        }
        Lookup::Debris => {
            // Debris is named only unambiguously: two matches name none of them.
            let removals = store
                .unfinished()
                .into_iter()
                .filter(|(what, _, _)| *what == Unfinished::Removal)
                .map(|(_, id, _)| id);
            if let Ok(Some(id)) = unique(name, removals) {
                return Ok(NamedRun::Removal(id));
            }
            let headless = store.headless().into_iter().map(|(id, _)| id);
            if let Ok(Some(id)) = unique(name, headless) {
                return Ok(NamedRun::Headless(id));
            }
        }
    }
    Err(StoreError::Unknown(name.into()).into())
}

/// The one id of `ids` that `name` is a prefix of; `None` when none is, an error when several
/// are. Every id starts with the empty string: naming no run is not naming all of them.
fn unique(name: &str, ids: impl IntoIterator<Item = RunId>) -> Result<Option<RunId>, StoreError> {
    if name.is_empty() {
        return Ok(None);
    }
    let mut found: Vec<RunId> = ids.into_iter().filter(|id| id.starts_with(name)).collect();
    match found.len() {
        0 => Ok(None),
        1 => Ok(Some(found.remove(0))),
        _ => Err(StoreError::Ambiguous {
            prefix: name.into(),
            candidates: found.iter().map(|id| id.to_string()).collect(),
        }),
    }
}

/// How a session is opened on a run that exists.
pub struct Open<'a> {
    /// The command, as the lock names its holder.
    pub command: &'a str,
    /// This clone, to catch up with the remote first: `None` skips catching up.
    pub catch_up: Option<&'a Here<'a>>,
    /// What is said of what catching up did.
    pub caught_up: fn(&str, CaughtUp) -> Option<Note>,
    /// What the run must be for the command to act on it, checked under the lock.
    pub check: fn(&RunState) -> Result<(), TransitionError>,
}

/// The notes [`Open::caught_up`] gives by default: a rebuilt run, a newer record taken.
pub fn caught_up_notes(remote: &str, caught: CaughtUp) -> Option<Note> {
    let remote = remote.to_owned();
    match caught {
        CaughtUp::Adopted => Some(Note::Rebuilt { remote }),
        CaughtUp::Updated => Some(Note::TookNewer { remote }),
        CaughtUp::Nothing => None,
    }
}

/// Accepts every state.
pub fn any_state(_: &RunState) -> Result<(), TransitionError> {
    Ok(())
}

/// A run locked by this process, with the lease on it when it is published and driven.
pub struct Session<'a> {
    repo: &'a Repo,
    store: &'a Store,
    sink: &'a dyn Sink,
    lock: RunLock,
    publisher: Option<Publisher>,
    /// The lease was given back (or lost): nothing is released on drop.
    released: AtomicBool,
    /// Who is told when a commit makes the run need a person (`notify:`).
    notifier: Notifier,
}

impl<'a> Session<'a> {
    /// Catches `named` up with its remote (when asked and it is published or only there), locks
    /// it, loads it and checks it.
    pub fn open(
        repo: &'a Repo,
        store: &'a Store,
        sink: &'a dyn Sink,
        named: &NamedRun,
        open: &Open,
    ) -> Result<(Session<'a>, RunState), RunError> {
        let id = named.id();
        if let Some(here) = open.catch_up
            && let Some((remote, caught)) =
                remote::refresh(here, id, named.tracked_on().map(str::to_owned))?
            && let Some(note) = (open.caught_up)(&remote, caught)
        {
            sink.note(note);
        }
        let lock = store.lock(id, open.command)?;
        let state = store.load(id)?;
        (open.check)(&state)?;
        Ok((Session::locked(repo, store, sink, lock), state))
    }

    /// A session on a run whose lock is held already: one just created.
    pub fn locked(
        repo: &'a Repo,
        store: &'a Store,
        sink: &'a dyn Sink,
        lock: RunLock,
    ) -> Session<'a> {
        Session {
            repo,
            store,
            sink,
            lock,
            publisher: None,
            released: AtomicBool::new(false),
            notifier: Notifier::default(),
        }
    }

    /// The run directory.
    pub fn dir(&self) -> &Path {
        self.lock.dir()
    }

    pub fn sink(&self) -> &'a dyn Sink {
        self.sink
    }

    pub fn now(&self) -> Timestamp {
        self.store.now()
    }

    /// Takes the lease on the run for `length` and publishes it to `remote`: from then on every
    /// commit goes through the lease (and, with `every_save`, to the remote). Refused while
    /// another driver's lease holds, or when the remote moved since it was fetched.
    pub fn take_lease(
        &mut self,
        state: &mut RunState,
        remote: &str,
        length: Duration,
        every_save: bool,
    ) -> Result<(), RunError> {
        let publisher = Publisher::take(
            self.repo,
            self.dir(),
            state,
            remote,
            length,
            every_save,
            self.store,
        )?;
        self.publisher = Some(publisher);
        self.released.store(false, Ordering::Release);
        Ok(())
    }

    /// Applies `event`, now, and persists the result before anything else happens.
    pub fn commit(&self, state: &mut RunState, event: Event) -> Result<(), RunError> {
        self.commit_at(state, event, self.store.now())
    }

    /// [`Self::commit`] of an event that happened at `at`.
    pub fn commit_at(
        &self,
        state: &mut RunState,
        event: Event,
        at: Timestamp,
    ) -> Result<(), RunError> {
        self.commit_with(state, event, at, |_, _| Ok(()))
    }

    /// [`Self::commit_at`], writing the files that go with the new state into the run
    /// directory (`write(dir, new state)`) before it is persisted, so that its record holds them.
    /// Once it is persisted, a change into a status a person waits on is notified
    /// ([`super::notify`]); nothing the notification does changes the run or the result.
    pub fn commit_with(
        &self,
        state: &mut RunState,
        event: Event,
        at: Timestamp,
        write: impl FnOnce(&Path, &RunState) -> Result<(), RunError>,
    ) -> Result<(), RunError> {
        debug_assert_eq!(self.lock.dir(), self.store.run_dir(&state.run_id));
        let before = state.status();
        *state = apply(state, event, at)?;
        write(self.dir(), state)?;
        self.persist(state, at)?;
        self.notifier
            .committed(self.repo, self.dir(), self.sink, before, state, at);
        Ok(())
    }

    /// Persists `state` once more, unchanged, so that the record also holds the run files
    /// written since its last commit (the result, after review).
    pub fn commit_files(&self, state: &mut RunState) -> Result<(), RunError> {
        self.persist(state, state.updated_at())
    }

    fn destination(&self) -> Destination<'_> {
        Destination {
            repo: self.repo,
            dir: self.dir(),
            sink: self.sink,
        }
    }

    fn persist(&self, state: &mut RunState, at: Timestamp) -> Result<(), RunError> {
        match &self.publisher {
            Some(publisher) => publisher.save(self.destination(), state, at),
            None => record::save(self.repo, self.dir(), state),
        }
    }

    /// Runs `drive` with the lease renewed beside it on a thread of its own, then gives the
    /// lease back; without a lease, just runs it.
    pub fn keep_lease_while(
        &self,
        state: &mut RunState,
        interrupted: &AtomicBool,
        drive: impl FnOnce(&mut RunState) -> Result<Driven, RunError>,
    ) -> Result<Driven, RunError> {
        let Some(publisher) = &self.publisher else {
            return drive(state);
        };
        let stop = AtomicBool::new(false);
        let workdir = self.repo.workdir()?.to_path_buf();
        let (dir, store, sink) = (self.dir(), self.store, self.sink);
        let result = std::thread::scope(|scope| {
            scope.spawn(|| publisher.keep(&workdir, dir, store, &stop, interrupted, sink));
            let result = drive(state);
            stop.store(true, Ordering::Release);
            result
        });
        let released = self.release(state);
        let driven = result?;
        if publisher.lost() {
            // The attempt was stopped because the lease could not be kept: another machine may
            // drive the run now.
            return Err(RunError::Sync(SyncError::LeaseExpired {
                run: state.run_id.to_string(),
            }));
        }
        released.map(|()| driven)
    }

    /// Gives the lease back and publishes that, unless it was lost or given back already.
    pub fn release(&self, state: &mut RunState) -> Result<(), RunError> {
        let Some(publisher) = &self.publisher else {
            return Ok(());
        };
        if self.released.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        publisher.release(self.destination(), state, self.store.now())
    }

    /// Publishes several runs to `remote` as one compare-and-swap (`push`): each recorded as
    /// published there first, when it is not yet. Nothing changes here unless the remote took
    /// them all.
    pub fn publish_together(
        remote: &str,
        runs: &mut [(&Session, &mut RunState)],
    ) -> Result<(), RunError> {
        let Some(repo) = runs.first().map(|(session, _)| session.repo) else {
            return Ok(());
        };
        let mut next = Vec::new();
        for (session, state) in runs.iter() {
            next.push(published_as(state, remote, session.store.now())?);
        }
        let publications: Vec<Publication> = runs
            .iter()
            .zip(&next)
            .map(|((session, _), state)| Publication {
                dir: session.dir(),
                state,
            })
            .collect();
        remote::publish(repo, remote, &publications)?;
        for ((_, state), new) in runs.iter_mut().zip(next) {
            **state = new;
        }
        Ok(())
    }
}

/// `state` as published to `remote`, as of `at`; also what catching up takes in
/// ([`remote::catch_up`]): the remote's record with this clone's name for the remote.
pub(super) fn published_as(
    state: &RunState,
    remote: &str,
    at: Timestamp,
) -> Result<RunState, RunError> {
    if state.remote() == Some(remote) {
        return Ok(state.clone());
    }
    let event = Event::Published {
        remote: remote.to_owned(),
    };
    Ok(apply(state, event, at)?)
}

impl Drop for Session<'_> {
    /// A lease not given back explicitly (a command that failed on the way) is given back now,
    /// not when it expires; what the remote says is of no use here any more.
    fn drop(&mut self) {
        if let Some(publisher) = &self.publisher
            && !self.released.swap(true, Ordering::AcqRel)
            && !publisher.lost()
        {
            let mut state = publisher.last_saved();
            let _ = publisher.release(self.destination(), &mut state, self.store.now());
        }
    }
}

#[cfg(test)]
mod tests;
