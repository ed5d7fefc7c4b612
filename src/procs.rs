//! The process table as `/proc` shows it, and signals that cannot reach a stranger.
//!
//! A pid names a process only until that process is reaped; then the number may be given to
//! anyone. So a process is identified here by its pid *and* its start time (`/proc/<pid>/stat`,
//! field 22), and a signal is only sent after checking, through a pidfd where the kernel has
//! them, that the pid still names the process that was seen.
//!
//! Only processes of our own effective uid are listed: nothing git-baton starts (an attempt's
//! actor, a git command) can be anyone else's unless it ran a setuid program, and those we could
//! not signal anyway.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustix::process::{Pid, Signal};

/// One live or zombie process, as seen at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Proc {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    /// The session id: the pid of the session's leader (which may be gone).
    pub sid: i32,
    /// Clock ticks after boot: with `pid`, names this process and no later one.
    pub start: u64,
    pub zombie: bool,
}

/// Every process of our effective uid except ourselves. `Err` when `/proc` cannot be read
/// (not Linux, or not mounted): the caller falls back to what needs no process table.
pub fn list() -> io::Result<Vec<Proc>> {
    let me = std::process::id() as i32;
    let uid = rustix::process::geteuid().as_raw();
    let mut procs = Vec::new();
    for entry in std::fs::read_dir("/proc")? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        // The directory belongs to the process's effective uid (root when it is not dumpable).
        if pid == me || !entry.metadata().is_ok_and(|m| m.uid() == uid) {
            continue;
        }
        if let Some(proc) = stat(pid) {
            procs.push(proc);
        }
    }
    Ok(procs)
}

/// The processes descended from `root` (its children, theirs, and so on; not `root` itself),
/// as the process table shows them now. Empty where `/proc` cannot be read. An orphan that
/// re-parented elsewhere is no longer found: a caller that must reach what a child started
/// looks before the child ends.
pub fn descendants(root: i32) -> Vec<Proc> {
    let Ok(all) = list() else {
        return Vec::new();
    };
    let mut found: Vec<Proc> = Vec::new();
    let mut parents = vec![root];
    // Each round adds the children of the last round's processes; a pid is never its own
    // ancestor, so this ends after at most as many rounds as there are processes.
    while !parents.is_empty() {
        let children: Vec<Proc> = all
            .iter()
            .filter(|p| parents.contains(&p.ppid) && !found.iter().any(|f| f.pid == p.pid))
            .copied()
            .collect();
        parents = children.iter().map(|p| p.pid).collect();
        found.extend(children);
    }
    found
}

/// The process now at `pid`, if any.
pub fn stat(pid: i32) -> Option<Proc> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
    // stime cutime cstime priority nice threads itrealvalue starttime …`; comm may contain
    // spaces and parentheses, so fields are counted from the last `)`.
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(Proc {
        pid,
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        sid: fields.get(3)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
        zombie: matches!(fields.first(), Some(&"Z" | &"X")),
    })
}

/// Whether `proc` has ended: gone, a zombie, or its pid already names another process.
pub fn ended(proc: &Proc) -> bool {
    stat(proc.pid).is_none_or(|now| now.zombie || now.start != proc.start)
}

/// Whether the environment `pid` was started with holds `entry` (`NAME=value`) exactly.
/// Unreadable (gone, or not ours to read) counts as no.
///
/// A process in the middle of `execve` reads as an empty environment: the kernel installs the
/// new address space before it records where the new environment lies. On a loaded machine a
/// process can be descheduled in that window for milliseconds, and a scan that took the empty
/// read at its word missed it (a sweep then found nothing to end). So an empty read is read
/// again, a bounded number of times; a process that really has no environment costs the wait.
pub fn environ_has(pid: i32, entry: &str) -> bool {
    const REREADS: [u64; 5] = [1, 2, 5, 12, 30];
    let path = format!("/proc/{pid}/environ");
    for pause in std::iter::once(0).chain(REREADS) {
        if pause > 0 {
            std::thread::sleep(std::time::Duration::from_millis(pause));
        }
        let Ok(environ) = std::fs::read(&path) else {
            return false;
        };
        if !environ.is_empty() {
            return environ.split(|b| *b == 0).any(|e| e == entry.as_bytes());
        }
    }
    false
}

/// Whether `pid` has a file descriptor open on one of the pipes with these inode numbers.
pub fn holds_pipe(pid: i32, inodes: &[u64]) -> bool {
    if inodes.is_empty() {
        return false;
    }
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten()
        .any(|fd| pipe_at(&fd.path()).is_some_and(|ino| inodes.contains(&ino)))
}

/// The inode number of the pipe that our file descriptor `fd` is open on.
pub fn own_pipe(fd: std::os::fd::RawFd) -> Option<u64> {
    pipe_at(Path::new(&format!("/proc/self/fd/{fd}")))
}

/// `/proc/<pid>/fd/<n>` links to `pipe:[<inode>]` for a pipe.
fn pipe_at(link: &Path) -> Option<u64> {
    let target = std::fs::read_link(link).ok()?;
    target
        .to_str()?
        .strip_prefix("pipe:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// The current directory of `pid`.
pub fn cwd(pid: i32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/cwd")).ok()
}

/// Sends `signal` to `proc` if its pid still names it; says whether it was sent.
pub fn signal(proc: &Proc, signal: Signal) -> bool {
    let Some(pid) = Pid::from_raw(proc.pid) else {
        return false;
    };
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{PidfdFlags, pidfd_open, pidfd_send_signal};
        match pidfd_open(pid, PidfdFlags::empty()) {
            // The pidfd pins the process it was opened on: if the pid still names `proc` after
            // it was opened, the pidfd is `proc`'s (or `proc` has died and the signal is lost).
            Ok(fd) => {
                return stat(proc.pid).is_some_and(|now| now.start == proc.start)
                    && pidfd_send_signal(&fd, signal).is_ok();
            }
            Err(rustix::io::Errno::NOSYS) => {}
            Err(_) => return false,
        }
    }
    // Without pidfds (kernels before 5.3) a narrow window remains between this check and the
    // signal, in which the pid would have to be freed and reused.
    stat(proc.pid).is_some_and(|now| now.start == proc.start && !now.zombie)
        && rustix::process::kill_process(pid, signal).is_ok()
}

/// Reaps `proc` if it is a zombie child of ours (an orphan that re-parented to us as the
/// subreaper); nobody else could, and an unreaped zombie lingers until we exit.
pub fn reap_orphan(proc: &Proc) {
    let me = std::process::id() as i32;
    let ours =
        stat(proc.pid).is_some_and(|now| now.zombie && now.ppid == me && now.start == proc.start);
    if ours && let Some(pid) = Pid::from_raw(proc.pid) {
        let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_listed_with_its_parent_and_group() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let procs = list().unwrap();
        let seen = procs
            .iter()
            .find(|p| p.pid == pid)
            .expect("the child is listed");
        assert_eq!(seen.ppid, std::process::id() as i32);
        assert!(!seen.zombie && !ended(seen));
        assert!(procs.iter().all(|p| p.pid != std::process::id() as i32));

        assert!(signal(seen, Signal::KILL));
        child.wait().unwrap();
        assert!(ended(seen));
        assert!(
            !signal(seen, Signal::KILL),
            "a reaped pid is never signalled"
        );
    }

    #[test]
    fn descendants_are_children_and_theirs() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("grandchild");
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "sleep 30 & echo $! > '{}'; wait",
                pid_file.display()
            ))
            .spawn()
            .unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::fs::read_to_string(&pid_file).map_or(true, |t| !t.ends_with('\n'))
            && std::time::Instant::now() < until
        {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let grandchild: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let found = descendants(child.id() as i32);
        assert!(found.iter().any(|p| p.pid == grandchild), "{found:?}");
        assert!(found.iter().all(|p| p.pid != child.id() as i32));
        let me = descendants(std::process::id() as i32);
        assert!(me.iter().any(|p| p.pid == child.id() as i32));
        assert!(me.iter().any(|p| p.pid == grandchild));
        for p in &found {
            signal(p, Signal::KILL);
        }
        let _ = child.kill();
        child.wait().unwrap();
    }

    #[test]
    fn a_different_start_time_is_another_process() {
        let me = stat(std::process::id() as i32).unwrap();
        let other = Proc {
            start: me.start + 1,
            ..me
        };
        assert!(ended(&other));
        // Harmless even if it were sent, which it must not be.
        assert!(!signal(&other, Signal::CONT));
    }
}
