//! The actor and everything it started: watching the actor, signalling all of it, and reaping.
//!
//! The actor leads its own process group, so a Ctrl-C in the terminal reaches only git-baton.
//! Its *members* are that group plus whatever [`contain`](super::contain) recognises as the
//! attempt's (the token, the output pipes, descent) — so a child that called `setsid` is
//! signalled with the rest.
//!
//! The actor is only *observed* to have exited (`waitid` with `WNOWAIT`) until [`Group::reap`],
//! so it stays a zombie in the meantime and its pid — which is also the group id — cannot be
//! reused: signalling the group can never reach a stranger.

use std::io;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions, kill_process_group, waitid};

use super::contain::{self, Marker, Swept};

/// How often [`Group::terminate`] looks for the leader's exit.
const POLL: Duration = Duration::from_millis(10);

pub(super) struct Group {
    child: Child,
    pgid: Pid,
    marker: Marker,
    reaped: bool,
}

impl Group {
    /// `child` must have been spawned as the leader of a new process group, with `token` in
    /// its environment; `pipes` are the inode numbers of its output pipes.
    pub(super) fn new(child: Child, token: &str, pipes: Vec<u64>) -> Group {
        let pgid = Pid::from_child(&child);
        let marker = Marker::new(token).with_leader(pgid.as_raw_nonzero().get(), pipes);
        Group {
            child,
            pgid,
            marker,
            reaped: false,
        }
    }

    /// Whether the leader has exited, leaving it waitable.
    pub(super) fn exited(&self) -> io::Result<bool> {
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        loop {
            match waitid(WaitId::Pid(self.pgid), options) {
                Ok(status) => return Ok(status.is_some()),
                Err(rustix::io::Errno::INTR) => continue,
                Err(err) => return Err(err.into()),
            }
        }
    }

    /// SIGTERM to every member, up to `grace` for the leader to exit, then SIGKILL to every
    /// member; returns once the leader has exited.
    ///
    /// The grace period ends with the leader: what it leaves behind is for [`Group::sweep`].
    pub(super) fn terminate(&self, grace: Duration) -> io::Result<()> {
        self.signal(Signal::TERM);
        let deadline = Instant::now() + grace;
        while !self.exited()? {
            if Instant::now() >= deadline {
                self.signal(Signal::KILL);
                while !self.exited()? {
                    std::thread::sleep(POLL);
                }
                break;
            }
            std::thread::sleep(POLL);
        }
        Ok(())
    }

    /// Ends every member left once the leader has exited (see [`contain::sweep`]); `grace`
    /// `None` when they already had a SIGTERM and its grace period.
    pub(super) fn sweep(&self, grace: Option<Duration>) -> Swept {
        let swept = contain::sweep(&self.marker, grace);
        if swept == Swept::Blind {
            // No process table: the group is all we can reach.
            self.signal_group(Signal::KILL);
        }
        swept
    }

    /// Waits for the leader (after which the group id may be reused) and returns its status.
    pub(super) fn reap(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait()?;
        self.reaped = true;
        Ok(status)
    }

    fn signal(&self, signal: Signal) {
        self.signal_group(signal);
        if !self.reaped {
            // Without a process table the group signal above is all there is.
            let _ = self.marker.signal_outside_group(signal);
        }
    }

    fn signal_group(&self, signal: Signal) {
        if self.reaped {
            return;
        }
        // ESRCH (nobody left) is the common case and nothing else can be done about EPERM.
        let _ = kill_process_group(self.pgid, signal);
    }
}

impl Drop for Group {
    /// An early return or a panic must not leave the actor running unsupervised.
    fn drop(&mut self) {
        if !self.reaped {
            self.signal(Signal::KILL);
            let _ = self.child.wait();
        }
    }
}
