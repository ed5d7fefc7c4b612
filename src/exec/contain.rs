//! Containment: which processes belong to an attempt, and ending all of them.
//!
//! A process group is not enough: `setsid` (or `setpgid`) leaves it, and once the actor exits its
//! children re-parent away from it. So on Linux an attempt is recognised by what survives all of
//! that:
//!
//! - **The token.** Every attempt gets a unique token, written to the attempt directory
//!   (atomically, before the child is spawned) and put in the actor's environment as
//!   [`TOKEN_VAR`]. Children inherit it through `fork` and `exec`, whatever they do to their
//!   session, group or directory, and `/proc/<pid>/environ` shows it — also to a later
//!   git-baton, after a crash of the one that started them.
//! - **The output pipes.** A process still holding the attempt's stdout or stderr pipe is one of
//!   its descendants even if it scrubbed its environment.
//! - **The process group** of the actor, while the actor is not reaped (its pid, which is also
//!   the group id, cannot be reused until then).
//! - **Descent.** A child of any of the above belongs to the attempt. git-baton makes itself a
//!   child subreaper, so orphans re-parent to it rather than to init and stay in its process
//!   tree instead of disappearing from view.
//! - **Adoption.** An orphan that lost every other mark (its environment scrubbed, its output on
//!   `/dev/null`, in a session of its own) re-parents to git-baton, and is its child like the
//!   processes it starts itself. While the actor is driven, a child of git-baton that is in a
//!   session other than git-baton's, does not lead that session and started after the actor is
//!   the attempt's: git-baton starts nothing in another session, and a process that calls
//!   `setsid` leads its session, so only an orphan of something that did (an attempt's
//!   process) is all of that.
//!
//! Ending them ([`sweep`]): SIGTERM to every member, up to a grace period for them to go, then
//! SIGKILL to whatever is left or has appeared since, repeated for a bounded number of rounds.
//! Every signal goes through [`procs::signal`], which never reaches a process that merely
//! reuses a member's pid.
//!
//! Limits: a descendant that scrubs its environment *and* closes or replaces the output pipes
//! *and* leaves the process group *and* loses its parent chain escapes — while git-baton drives
//! the attempt, that takes an orphan that leads a session of its own (`setsid --fork`) or
//! stays in git-baton's session in a group of its own, since the rest is adopted; after a
//! crash, any such orphan. So does one that runs a setuid program (its `/proc` entries are not
//! ours to read), and what an already-running server (tmux, `systemd-run --user`, `at`, docker)
//! starts on the attempt's request: that is the server's child, not the attempt's. Without `/proc` (other unix
//! systems) only the process group is signalled and nothing is found after a crash.

use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::process::Signal;

use crate::procs::{self, Proc};

/// The environment variable that marks every process of an attempt. Not a `BATON_*` variable:
/// it is git-baton's bookkeeping, not information for the actor.
pub const TOKEN_VAR: &str = "GIT_BATON_ATTEMPT_TOKEN";

/// Rounds of SIGKILL before giving up on processes that keep appearing or do not die.
const KILL_ROUNDS: usize = 20;
/// How long one round waits for SIGKILLed processes to be gone.
const KILL_WAIT: Duration = Duration::from_secs(2);
const POLL: Duration = Duration::from_millis(10);

/// A token no other attempt, on this machine or before, has used.
pub(super) fn new_token() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    // Randomly keyed per process: two git-batons with the same pid and clock still differ.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(nanos);
    hasher.write_u64(count);
    format!(
        "{:x}-{nanos:x}-{:016x}",
        std::process::id(),
        hasher.finish()
    )
}

/// Makes this process the subreaper of its descendants (Linux), once; best effort.
pub(super) fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        static DONE: std::sync::Once = std::sync::Once::new();
        DONE.call_once(|| {
            // Refused only by sandboxes that filter prctl; the token scan still works then.
            let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
        });
    }
}

/// Whether this process is a child subreaper, so that orphans re-parent to it.
fn subreaper() -> bool {
    #[cfg(target_os = "linux")]
    {
        rustix::process::child_subreaper().is_ok_and(|me| me.is_some())
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// What marks a process as one of an attempt's.
pub(super) struct Marker {
    /// `TOKEN_VAR=<token>`, as it appears in an environment.
    entry: String,
    /// The actor's pid, which is also its process group id; only while it is not reaped.
    leader: Option<i32>,
    /// Inode numbers of the actor's output pipes.
    pipes: Vec<u64>,
    /// Who adopts the attempt's orphans, while the actor is driven: see [`Adopter`].
    adopter: Option<Adopter>,
}

/// This process, as the subreaper its attempt's orphans re-parent to.
#[derive(Debug, Clone, Copy)]
struct Adopter {
    pid: i32,
    sid: i32,
    /// The actor's start time: nothing of the attempt started before it.
    after: u64,
}

impl Adopter {
    /// This process, while it is a child subreaper (else no orphan comes to it, and there is
    /// nothing to tell apart from its own children), with `leader`'s start time.
    fn of(leader: i32) -> Option<Adopter> {
        if !subreaper() {
            return None;
        }
        let pid = std::process::id() as i32;
        Some(Adopter {
            pid,
            // From /proc, not getsid(2): inside a container whose session leader lives in a
            // parent pid namespace the session id reads as 0, which no `Pid` can hold.
            sid: procs::stat(pid)?.sid,
            after: procs::stat(leader)?.start,
        })
    }

    /// An orphan of the attempt that re-parented to us (see the module documentation).
    fn adopted(&self, p: &Proc) -> bool {
        p.ppid == self.pid && p.sid != self.sid && p.pid != p.sid && p.start >= self.after
    }
}

impl Marker {
    pub(super) fn new(token: &str) -> Marker {
        Marker {
            entry: format!("{TOKEN_VAR}={token}"),
            leader: None,
            pipes: Vec::new(),
            adopter: None,
        }
    }

    /// Also count the leader's group and children. The caller must stop using this marker
    /// once the leader is reaped.
    pub(super) fn with_leader(mut self, pid: i32, pipes: Vec<u64>) -> Marker {
        self.leader = Some(pid);
        self.pipes = pipes;
        self.adopter = Adopter::of(pid);
        self
    }

    /// The live members of the attempt now; `Err` when there is no process table to read.
    pub(super) fn members(&self) -> io::Result<Vec<Proc>> {
        let procs: Vec<Proc> = procs::list()?.into_iter().filter(|p| !p.zombie).collect();
        let mut members: Vec<Proc> = procs
            .iter()
            .filter(|p| {
                Some(p.pgrp) == self.leader
                    || self.adopter.is_some_and(|a| a.adopted(p))
                    || procs::environ_has(p.pid, &self.entry)
                    || procs::holds_pipe(p.pid, &self.pipes)
            })
            .copied()
            .collect();
        // Descendants, to a fixpoint: the table is small and chains are short.
        loop {
            let children: Vec<Proc> = procs
                .iter()
                .filter(|p| !members.contains(p))
                .filter(|p| Some(p.ppid) == self.leader || members.iter().any(|m| m.pid == p.ppid))
                .copied()
                .collect();
            if children.is_empty() {
                return Ok(members);
            }
            members.extend(children);
        }
    }

    /// Sends `signal` to every member outside the leader's process group, which its owner
    /// signals as a whole (one signal each: some programs take a second SIGTERM or SIGINT as
    /// "quit now, skip the cleanup"); how many it reached (`Err`: no process table).
    pub(super) fn signal_outside_group(&self, signal: Signal) -> io::Result<usize> {
        let members = self.members()?;
        Ok(members
            .iter()
            .filter(|p| Some(p.pgrp) != self.leader)
            .filter(|p| procs::signal(p, signal))
            .count())
    }
}

/// How a [`sweep`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Swept {
    /// Nothing of the attempt is left; this many processes were signalled.
    Clean(usize),
    /// This many were still there after every round.
    Survivors(usize),
    /// No process table: nothing could be looked for.
    Blind,
}

/// Ends every member of the attempt: SIGTERM and up to `grace` for them to go (skipped when
/// `grace` is `None`, e.g. because they already had theirs), then rounds of SIGKILL until none
/// is left, at most [`KILL_ROUNDS`] of them.
pub(super) fn sweep(marker: &Marker, grace: Option<Duration>) -> Swept {
    let Ok(mut found) = marker.members() else {
        return Swept::Blind;
    };
    let mut signalled: Vec<Proc> = Vec::new();
    let mut round = |found: &[Proc], signal: Signal, wait: Duration| {
        for proc in found {
            if procs::signal(proc, signal) && !signalled.contains(proc) {
                signalled.push(*proc);
            }
        }
        let deadline = Instant::now() + wait;
        while !found.iter().all(procs::ended) && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
    };
    if let Some(grace) = grace
        && !found.is_empty()
    {
        round(&found, Signal::TERM, grace);
        found = marker.members().unwrap_or_default();
    }
    for _ in 0..KILL_ROUNDS {
        if found.is_empty() {
            break;
        }
        round(&found, Signal::KILL, KILL_WAIT);
        found = marker.members().unwrap_or_default();
    }
    for proc in &signalled {
        if marker.leader != Some(proc.pid) {
            procs::reap_orphan(proc);
        }
    }
    if found.is_empty() {
        Swept::Clean(signalled.len())
    } else {
        Swept::Survivors(found.len())
    }
}

/// Ends what an attempt whose driver died left running; returns how many processes it ended.
///
/// `token_file` is what the attempt wrote before its child was spawned, so whenever a process
/// of the attempt can exist, it exists. Attempts recorded by versions of git-baton that wrote no
/// token only have `pid_file`: for them, the processes of that process group whose working
/// directory is inside `workdir` are killed (both must hold, so that a reused group id does not
/// reach a stranger) — which misses whatever left the group or the worktree.
pub fn kill_leftovers(
    token_file: &Path,
    pid_file: &Path,
    workdir: &Path,
    grace: Duration,
) -> Result<usize, super::ExecError> {
    // The attempt's directory is the agent's to write: its files are read only when they are
    // regular files, never waiting on a named pipe left there.
    let token = match crate::files::read_regular_string(token_file) {
        Ok(text) => text.trim().to_string(),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Ok(legacy_leftovers(pid_file, workdir));
        }
        Err(source) => {
            return Err(super::ExecError::TokenFile {
                path: token_file.to_owned(),
                source,
            });
        }
    };
    if token.is_empty() {
        return Err(super::ExecError::TokenFile {
            path: token_file.to_owned(),
            source: io::Error::new(io::ErrorKind::InvalidData, "the file is empty"),
        });
    }
    match sweep(&Marker::new(&token), Some(grace)) {
        Swept::Clean(count) => Ok(count),
        Swept::Blind => Ok(0),
        Swept::Survivors(count) => Err(super::ExecError::Survivors {
            count,
            token: token.clone(),
        }),
    }
}

/// The pids of what an attempt whose driver died left running, without touching them: what
/// [`kill_leftovers`] would end now (for `doctor`). Empty when nothing can be found or looked for.
pub fn live_leftovers(token_file: &Path, pid_file: &Path, workdir: &Path) -> Vec<i32> {
    let token = crate::files::read_regular_string(token_file).map(|text| text.trim().to_string());
    let procs: Vec<Proc> = match token {
        Ok(token) if !token.is_empty() => Marker::new(&token).members().unwrap_or_default(),
        Ok(_) => Vec::new(),
        Err(_) => legacy_group(pid_file, workdir),
    };
    let mut pids: Vec<i32> = procs.iter().map(|p| p.pid).collect();
    pids.sort_unstable();
    pids
}

/// The rule before tokens: the recorded group, and only inside the worktree.
fn legacy_leftovers(pid_file: &Path, workdir: &Path) -> usize {
    legacy_group(pid_file, workdir)
        .iter()
        .filter(|p| procs::signal(p, Signal::KILL))
        .count()
}

/// The live processes of the recorded group whose working directory is inside `workdir`.
fn legacy_group(pid_file: &Path, workdir: &Path) -> Vec<Proc> {
    let Some(pgid) = crate::files::read_regular_string(pid_file)
        .ok()
        .and_then(|text| text.trim().parse::<i32>().ok())
    else {
        return Vec::new();
    };
    let Ok(workdir) = workdir.canonicalize() else {
        return Vec::new();
    };
    let Ok(procs) = procs::list() else {
        return Vec::new();
    };
    procs
        .into_iter()
        .filter(|p| p.pgrp == pgid && !p.zombie)
        .filter(|p| procs::cwd(p.pid).is_some_and(|cwd| cwd.starts_with(&workdir)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The attempt's token and pid files as named pipes (the agent can write its attempt's
    /// directory): refused or taken as absent at once, never waited on (a thread deadline turns
    /// a regression into a failure, not a hang).
    #[test]
    fn a_token_or_pid_file_that_is_a_named_pipe_is_never_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let (token, pid) = (
            dir.path().join("attempt.token"),
            dir.path().join("actor.pid"),
        );
        for path in [&token, &pid] {
            crate::testing::fifo(path);
        }
        let workdir = dir.path().to_path_buf();
        let (live, killed) = crate::testing::without_waiting(move || {
            let live = live_leftovers(&token, &pid, &workdir);
            let killed = kill_leftovers(&token, &pid, &workdir, Duration::from_millis(10));
            (live, killed.map_err(|e| e.to_string()))
        });
        assert!(live.is_empty(), "{live:?}");
        let err = killed.unwrap_err();
        assert!(
            err.contains("attempt.token: is a named pipe (FIFO)"),
            "{err}"
        );
    }

    #[test]
    fn tokens_differ() {
        let a = new_token();
        let b = new_token();
        assert_ne!(a, b);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit() || c == '-'), "{a}");
    }

    #[test]
    fn members_are_found_by_token_and_by_descent_and_swept() {
        let token = new_token();
        // The leader starts a member by token whose child scrubs its environment: that one is
        // found by descent from the member, not from the leader.
        let mut leader = std::process::Command::new("sh")
            .args(["-c", "sh -c 'env -i sleep 30 & wait' & wait"])
            .env(TOKEN_VAR, &token)
            .spawn()
            .unwrap();
        let marker = Marker::new(&token).with_leader(leader.id() as i32, Vec::new());
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut members = marker.members().unwrap();
        // Until `env -i` has exec'd `sleep`, its process still carries the token: wait for the
        // scrubbed environment, not only for the third process.
        let scrubbed_yet = |members: &[procs::Proc]| {
            members
                .iter()
                .any(|p| !procs::environ_has(p.pid, &marker.entry))
        };
        while (members.len() < 3 || !scrubbed_yet(&members)) && Instant::now() < deadline {
            std::thread::sleep(POLL);
            members = marker.members().unwrap();
        }
        assert_eq!(members.len(), 3, "{members:?}");
        let scrubbed = members
            .iter()
            .find(|p| !procs::environ_has(p.pid, &marker.entry))
            .expect("the scrubbed one is a member");
        assert_ne!(scrubbed.ppid, leader.id() as i32);

        assert_eq!(
            sweep(&marker, Some(Duration::from_secs(5))),
            Swept::Clean(3)
        );
        // The leader is left for its owner to reap.
        leader.wait().unwrap();
        assert!(marker.members().unwrap().is_empty());
        assert_eq!(sweep(&marker, None), Swept::Clean(0));
    }
}
