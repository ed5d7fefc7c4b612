//! The session's half for a published run: the lease that keeps a second machine out, renewed
//! while the driver lives, and the saves that go to the remote.
//!
//! A [`Publisher`] is made when a session takes the lease (through the remote's compare-and-swap)
//! and is then the one way the session persists a commit: every save with `sync: push`, and a renewal every
//! third of the lease's length, publish the whole record. A save that loses the race means
//! another machine took the run after this lease expired: the driver is stopped, nothing is
//! overwritten.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use jiff::Timestamp;

use crate::git::Repo;
use crate::run::SyncError;
use crate::state::clock::Clock;
use crate::state::store::Store;
use crate::state::transition::Event;
use crate::state::{Lease, RunState};

use super::super::note::{Note, Sink};
use super::super::record;
use super::super::remote::{self, Publication};
use super::RunError;
use super::apply;

/// Where a save under the lease goes: the repository, the run's directory, and the sink that
/// hears of a remote out of reach.
#[derive(Clone, Copy)]
pub struct Destination<'a> {
    pub repo: &'a Repo,
    pub dir: &'a Path,
    pub sink: &'a dyn Sink,
}

/// The driver's side of a lease on one published run.
pub struct Publisher {
    remote: String,
    /// Push after every save, not only at renewals.
    every_save: bool,
    holder: String,
    length: Duration,
    /// The state last saved, which a renewal builds on.
    last: Mutex<RunState>,
    /// Set when the lease was lost to another machine.
    lost: AtomicBool,
    /// The store's clock, read for when a push must have ended.
    clock: Clock,
}

impl Publisher {
    /// Takes the lease on `state`'s run for `length` and publishes it to `remote`; refused while
    /// another driver's lease holds, or when the remote moved since it was fetched.
    pub fn take(
        repo: &Repo,
        dir: &Path,
        state: &mut RunState,
        remote: &str,
        length: Duration,
        every_save: bool,
        store: &Store,
    ) -> Result<Publisher, RunError> {
        let now = store.now();
        let host = crate::state::store::host();
        let holder = store.holder_here(std::process::id(), now);
        let mut next = state.clone();
        // A lease of a driver of this very clone: the caller holds the run's lock, so that
        // driver is dead, and its lease needs no waiting out (the crash is recorded on resume).
        if let Some(old) = state.lease()
            && store.holds_here(old)
        {
            next = apply(
                &next,
                Event::LeaseReleased {
                    holder: old.holder.clone(),
                },
                now,
            )?;
        }
        if next.remote() != Some(remote) {
            next = apply(
                &next,
                Event::Published {
                    remote: remote.to_owned(),
                },
                now,
            )?;
        }
        let lease = Lease {
            holder: holder.clone(),
            host,
            taken_at: now,
            until: until(now, length),
        };
        next = apply(&next, Event::LeaseTaken(lease), now)?;
        remote::publish(repo, remote, &[Publication { dir, state: &next }])?;
        *state = next.clone();
        Ok(Publisher {
            remote: remote.to_owned(),
            every_save,
            holder,
            length,
            last: Mutex::new(next),
            lost: AtomicBool::new(false),
            clock: store.clock().clone(),
        })
    }

    /// Saves `state` into `dir`: published with `sync: push`, else recorded here. The lease's
    /// renewed end is carried into `state` first, so that a save never shortens it.
    pub fn save(
        &self,
        to: Destination<'_>,
        state: &mut RunState,
        at: Timestamp,
    ) -> Result<(), RunError> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        // Another machine has the run now: nothing more is saved over its record, here or
        // there; what this driver's attempt did stays in the worktree, and catching up with
        // the remote later refuses to replace it.
        if self.lost.load(Ordering::Acquire) {
            return Err(RunError::Sync(SyncError::LeaseExpired {
                run: state.run_id.to_string(),
            }));
        }
        if let (Some(renewed), Some(ours)) = (last.lease(), state.lease())
            && renewed.holder == ours.holder
            && renewed.until > ours.until
        {
            *state = apply(
                state,
                Event::LeaseRenewed {
                    holder: self.holder.clone(),
                    until: renewed.until,
                },
                at,
            )?;
        }
        if self.every_save {
            // Read now, under the lock: a renewal may have held it for a while.
            let deadline = self.push_deadline(&last);
            self.publish(to, state, deadline)?;
        } else {
            record::save(to.repo, to.dir, state)?;
        }
        *last = state.clone();
        Ok(())
    }

    /// The state last saved through the lease.
    pub fn last_saved(&self) -> RunState {
        self.last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn publish(
        &self,
        to: Destination<'_>,
        state: &RunState,
        deadline: Option<Instant>,
    ) -> Result<(), RunError> {
        let publication = [Publication { dir: to.dir, state }];
        match remote::publish_within(to.repo, &self.remote, &publication, deadline) {
            Ok(()) => Ok(()),
            Err(err @ RunError::Sync(SyncError::LostRace { .. })) => {
                self.lost.store(true, Ordering::Release);
                Err(err)
            }
            // The remote cannot be reached: the save stays here, and the next one tries again.
            Err(err) => {
                to.sink.note(Note::PublishFailed {
                    run: state.run_id.to_string(),
                    reason: err.to_string(),
                });
                record::save(to.repo, to.dir, state)
            }
        }
    }

    /// Renews the lease every third of its length until `stop` is set; run on its own thread
    /// beside the driver. A lost lease sets `interrupt`, which stops the driver's attempt.
    pub fn keep(
        &self,
        workdir: &Path,
        dir: &Path,
        store: &Store,
        stop: &AtomicBool,
        interrupt: &AtomicBool,
        sink: &dyn Sink,
    ) {
        let Ok(repo) = Repo::discover(workdir) else {
            sink.note(Note::RenewalNoRepository);
            return;
        };
        let every = (self.length / 3).max(Duration::from_millis(200));
        let margin = self.stop_margin();
        let mut next_renewal = Instant::now() + every;
        while !stop.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(50).min(every));
            let published_until = self.published_until();
            if published_until.is_some_and(|until| store.now() >= until - margin) {
                self.lost.store(true, Ordering::Release);
                sink.note(Note::LeaseExpiring {
                    run: self.run_id(),
                    remote: self.remote.clone(),
                });
                interrupt.store(true, Ordering::Release);
                return;
            }
            if Instant::now() < next_renewal {
                continue;
            }
            next_renewal = Instant::now() + every;
            if let Err(err) = self.renew(&repo, dir, store.now()) {
                if self.lost.load(Ordering::Acquire) {
                    sink.note(Note::LeaseLost {
                        reason: err.to_string(),
                    });
                    interrupt.store(true, Ordering::Release);
                    return;
                }
                sink.note(Note::RenewalFailed {
                    reason: err.to_string(),
                });
            }
        }
    }

    /// How long before the lease ends a driver that could not renew it stops: a driver cut off
    /// from the remote stops while its lease still holds, so that the machine that takes the
    /// run over once it expired never drives beside it.
    fn stop_margin(&self) -> jiff::SignedDuration {
        jiff::SignedDuration::try_from(self.length / 4).unwrap_or_default()
    }

    /// When a push under this lease must have ended: when [`Self::keep`] stops the driver, a
    /// quarter of the lease before the end last published (`last`'s, read under its lock). git
    /// waits on a remote that hangs for as long as the connection stays open; a push that held
    /// the driver (the lock on `last`, which the stop needs) past that would let it drive beside
    /// the machine that takes the run over once the lease expired. (A push is never cut short
    /// sooner, when the driver merely ends: one stopped after the remote took it would leave
    /// this clone a step behind its own lease, and the release would then lose its race.)
    fn push_deadline(&self, last: &RunState) -> Option<Instant> {
        let until = last.lease()?.until;
        let left = until
            .duration_since(self.clock.peek())
            .saturating_sub(self.stop_margin());
        Some(Instant::now() + Duration::try_from(left).unwrap_or(Duration::ZERO))
    }

    /// The end of the lease as last published: renewals move it only when the remote took them.
    fn published_until(&self) -> Option<Timestamp> {
        let last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        last.lease().map(|lease| lease.until)
    }

    fn run_id(&self) -> String {
        let last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        last.run_id.to_string()
    }

    /// Whether the lease was lost: to another machine, or by failing to renew it in time.
    pub fn lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    fn renew(&self, repo: &Repo, dir: &Path, now: Timestamp) -> Result<(), RunError> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        let next = apply(
            &last,
            Event::LeaseRenewed {
                holder: self.holder.clone(),
                until: until(now, self.length),
            },
            now,
        )?;
        let deadline = self.push_deadline(&last);
        let publication = [Publication { dir, state: &next }];
        match remote::publish_within(repo, &self.remote, &publication, deadline) {
            Ok(()) => {
                *last = next;
                Ok(())
            }
            Err(err) => {
                if matches!(err, RunError::Sync(SyncError::LostRace { .. })) {
                    self.lost.store(true, Ordering::Release);
                }
                Err(err)
            }
        }
    }

    /// Gives the lease up and publishes that, unless it was lost. A remote out of reach is a
    /// warning, since the lease expires by itself; a remote that another machine advanced
    /// meanwhile is the lost race it is.
    pub fn release(
        &self,
        to: Destination<'_>,
        state: &mut RunState,
        at: Timestamp,
    ) -> Result<(), RunError> {
        if self.lost.load(Ordering::Acquire) {
            return Ok(());
        }
        let released = apply(
            state,
            Event::LeaseReleased {
                holder: self.holder.clone(),
            },
            at,
        );
        let Ok(released) = released else {
            return Ok(());
        };
        let publication = [Publication {
            dir: to.dir,
            state: &released,
        }];
        match remote::publish(to.repo, &self.remote, &publication) {
            Ok(()) => {
                *state = released;
                Ok(())
            }
            Err(err @ RunError::Sync(SyncError::LostRace { .. })) => Err(err),
            Err(err) => {
                to.sink.note(Note::ReleaseFailed {
                    run: state.run_id.to_string(),
                    reason: err.to_string(),
                });
                Ok(())
            }
        }
    }
}

fn until(now: Timestamp, length: Duration) -> Timestamp {
    jiff::SignedDuration::try_from(length)
        .ok()
        .and_then(|d| now.checked_add(d).ok())
        .unwrap_or(Timestamp::MAX)
}
