//! The child's process group: watching its leader, signalling all of it, and reaping.
//!
//! The leader is only *observed* to have exited (`waitid` with `WNOWAIT`) until [`Group::reap`],
//! so it stays a zombie in the meantime and its pid — which is also the group id — cannot be
//! reused: signalling the group can never reach a stranger.

use std::io;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions, kill_process_group, waitid};

/// How often [`Group::terminate`] looks for the leader's exit.
const POLL: Duration = Duration::from_millis(10);

pub(super) struct Group {
    child: Child,
    pgid: Pid,
    reaped: bool,
}

impl Group {
    /// `child` must have been spawned as the leader of a new process group.
    pub(super) fn new(child: Child) -> Group {
        let pgid = Pid::from_child(&child);
        Group {
            child,
            pgid,
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

    /// SIGTERM to the group, up to `grace` for the leader to exit, then SIGKILL to the group;
    /// returns once the leader has exited.
    ///
    /// The grace period ends with the leader: what it leaves behind is killed by the caller.
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

    /// SIGKILL to whatever is left of the group.
    pub(super) fn kill(&self) {
        self.signal(Signal::KILL);
    }

    /// Waits for the leader (after which the group id may be reused) and returns its status.
    pub(super) fn reap(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait()?;
        self.reaped = true;
        Ok(status)
    }

    fn signal(&self, signal: Signal) {
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

/// Kills what an attempt whose driver died left running: the processes of the process group
/// recorded in `pid_file` whose working directory is inside `workdir`. Both conditions must
/// hold, so a reused pid or group id never reaches a stranger. Returns how many were killed.
pub fn kill_leftovers(pid_file: &std::path::Path, workdir: &std::path::Path) -> usize {
    let Some(pgid) = std::fs::read_to_string(pid_file)
        .ok()
        .and_then(|text| text.trim().parse::<i32>().ok())
    else {
        return 0;
    };
    let Ok(workdir) = workdir.canonicalize() else {
        return 0;
    };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut killed = 0;
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the parenthesised command name: state, ppid, pgrp, …
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        let in_group = fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid);
        let zombie = fields.first() == Some(&"Z");
        if !in_group || zombie {
            continue;
        }
        let inside =
            std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(&workdir));
        if inside
            && let Some(pid) = Pid::from_raw(pid)
            && rustix::process::kill_process(pid, Signal::KILL).is_ok()
        {
            killed += 1;
        }
    }
    killed
}
