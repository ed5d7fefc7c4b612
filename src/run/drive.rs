//! Driving a run: its stages one after another, each attempt through [`super::attempt`], until
//! the run reaches review, stops at a boundary, or a stage does not succeed.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use crate::git::Repo;
use crate::state::store::Store;
use crate::state::transition::Event;
use crate::state::{Cause, FallbackFrom, Outcome, RunState};

use super::note::{Note, Sink};
use super::session::Session;
use super::{Driven, PAUSE_REQUEST, RunError, STOP_REQUEST, fallback, result, targets};

/// What driving a run needs besides its state.
pub struct Driver<'a> {
    pub repo: &'a Repo,
    pub store: &'a Store,
    pub config: &'a crate::config::Config,
    /// The run's session: its lock, its lease when published, and every change of its state.
    pub session: &'a Session<'a>,
    pub interrupted: &'a AtomicBool,
    /// An actor chosen for the next attempt of this stage (`resume --actor`).
    pub actor_override: Option<(String, String)>,
}

impl Driver<'_> {
    pub(super) fn run_dir(&self) -> &Path {
        self.session.dir()
    }

    pub(super) fn sink(&self) -> &dyn Sink {
        self.session.sink()
    }

    /// Commits `event`, now, before anything else happens.
    fn commit(&self, state: &mut RunState, event: Event) -> Result<(), RunError> {
        self.session.commit(state, event)
    }

    pub(super) fn commit_at(
        &self,
        state: &mut RunState,
        event: Event,
        at: jiff::Timestamp,
    ) -> Result<(), RunError> {
        self.session.commit_at(state, event, at)
    }

    fn take_request(&self, name: &str) -> bool {
        std::fs::remove_file(self.run_dir().join(name)).is_ok()
    }

    /// [`Driver::drive`], with the lease kept beside it when the run is published.
    pub fn drive_published(&self, state: &mut RunState) -> Result<Driven, RunError> {
        self.session
            .keep_lease_while(state, self.interrupted, |state| self.drive(state))
    }

    /// What ends the drive before the next stage starts, if anything: a signal, else a `stop`
    /// request, else a `pause` request (each request is taken, so that it acts once).
    fn stop_at_boundary(&self) -> Option<(Event, Driven)> {
        let halted = |message: &str| Event::Halted {
            message: message.into(),
        };
        if self.interrupted.load(std::sync::atomic::Ordering::Acquire) {
            let event = halted("git-baton was interrupted before this stage started");
            return Some((event, Driven::Interrupted));
        }
        if self.take_request(STOP_REQUEST) {
            let event = halted("stopped by request before this stage started");
            return Some((event, Driven::Stopped));
        }
        self.take_request(PAUSE_REQUEST)
            .then_some((Event::Paused, Driven::Paused))
    }

    /// Drives the run from its first unfinished stage until it reaches review, stops at a
    /// boundary, or a stage does not succeed.
    pub fn drive(&self, state: &mut RunState) -> Result<Driven, RunError> {
        // Requests addressed to an earlier driver are stale: `stop` and `pause` only write them
        // while a driver lives, and that driver is gone.
        self.take_request(STOP_REQUEST);
        self.take_request(PAUSE_REQUEST);
        let plan = self.plan(state)?;
        // The actor `fallback:` hands the stage to next, after a rate-limited attempt.
        let mut fallback: Option<(String, FallbackFrom)> = None;
        loop {
            let Some(index) = state.next_stage() else {
                self.commit(state, Event::ReviewEntered)?;
                result::write_result(self.run_dir(), state)?;
                // Once more, so that the record holds the result too.
                self.session.commit_files(state)?;
                return Ok(Driven::Review);
            };
            if let Some((event, driven)) = self.stop_at_boundary() {
                self.commit(state, event)?;
                return Ok(driven);
            }
            match self.attempt(state, index, &plan, fallback.take())? {
                Outcome::Succeeded => {
                    let name = &state.stages()[index].name;
                    if state.policy.stop_after.as_deref() == Some(name.as_str())
                        && state.next_stage().is_some()
                    {
                        self.commit(state, Event::Paused)?;
                        return Ok(Driven::Paused);
                    }
                }
                Outcome::Interrupted => {
                    let manual = state.stages()[index].attempts.last().and_then(|a| a.cause)
                        == Some(Cause::Manual);
                    let signalled = self.interrupted.load(std::sync::atomic::Ordering::Acquire);
                    return Ok(if manual && signalled {
                        Driven::Interrupted
                    } else {
                        Driven::StageEnded(Outcome::Interrupted)
                    });
                }
                Outcome::RateLimited => match fallback::next_fallback(&state.stages()[index]) {
                    Some(next) => {
                        self.sink().note(Note::FallingBack {
                            attempt: next.1.attempt,
                            stage: state.stages()[index].name.clone(),
                            actor: next.0.clone(),
                        });
                        fallback = Some(next);
                    }
                    None => return Ok(Driven::StageEnded(Outcome::RateLimited)),
                },
                outcome => return Ok(Driven::StageEnded(outcome)),
            }
        }
    }

    /// The plan snapshot, read and parsed once per drive: the run follows it, not the plan file.
    fn plan(&self, state: &RunState) -> Result<crate::plan::Plan, RunError> {
        targets::of_run(self.repo, state, self.run_dir())
    }
}
