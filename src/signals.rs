//! SIGINT, SIGTERM and SIGHUP to git-baton: who takes them, and what the child processes it
//! waits on get of them.
//!
//! By default a signal ends git-baton at once. That is right while it only computes, and wrong
//! while it waits on a child: the child (a `git fetch` hanging on a remote that never answers,
//! say) would live on with ppid 1, and the command would not exit with the 130 the docs promise.
//! So two things take these signals over, each installed once per process and never removed:
//!
//! - **An owner** ([`interrupt_flag`]): a command that drives a run (`run`, `resume`, the demo)
//!   polls a flag the handlers set, stops its actor, records the attempt and exits 130 itself.
//! - **The waiter** ([`Waiting`]): around every child git-baton waits on. Once a command has
//!   waited on a network command ([`Waiting::start`] with `install`), a signal no longer ends
//!   the process by itself: while a child is waited on, it is counted for the waiter to see
//!   ([`Waiting::since`]: the caller forwards it to the child, waits for it and unwinds, which
//!   makes the command exit 130); while none is and nobody owns the signals, the process exits
//!   130 at once, as the default action would have ended it, with no child left behind.
//!
//! A command that nobody owns and that a signal already reached starts no further child
//! ([`Waiting::start`] refuses): it is on its way out.
//!
//! SIGHUP (the terminal went away) counts like the other two, except that one already ignored
//! when git-baton started (`nohup git baton …`) stays ignored.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// The exit status of a process that a signal interrupted (design §6).
pub const INTERRUPTED_STATUS: i32 = 130;

/// How many signals the waiter's handlers have seen, and the number of the last one.
static RECEIVED: AtomicUsize = AtomicUsize::new(0);
static LAST: AtomicI32 = AtomicI32::new(0);
/// Set once [`interrupt_flag`] gave the signals to an owner.
static OWNED: AtomicBool = AtomicBool::new(false);

/// The waiter's state, under one lock so that the handler thread never exits the process
/// between a waiter's registration and its spawn.
struct Waiters {
    /// Children being waited on right now.
    waiting: usize,
    /// Whether the handler thread runs.
    installed: bool,
}

static WAITERS: Mutex<Waiters> = Mutex::new(Waiters {
    waiting: 0,
    installed: false,
});

fn waiters() -> std::sync::MutexGuard<'static, Waiters> {
    WAITERS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The signals git-baton takes over: SIGINT, SIGTERM, and SIGHUP unless it is ignored.
fn taken() -> Vec<i32> {
    let mut signals = vec![SIGINT, SIGTERM];
    if !ignores(SIGHUP) {
        signals.push(SIGHUP);
    }
    signals
}

/// The flag our SIGINT, SIGTERM and SIGHUP handlers set, registered on the first call.
///
/// From then on those signals no longer end git-baton: whoever holds the flag must look at it
/// and wind down, so that an interrupted attempt is stopped and recorded rather than orphaned.
/// A signal that reached a waiter before (see the module documentation) is found set.
pub fn interrupt_flag() -> io::Result<Arc<AtomicBool>> {
    static FLAG: Mutex<Option<Arc<AtomicBool>>> = Mutex::new(None);
    let mut slot = FLAG.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(flag) = &*slot {
        return Ok(Arc::clone(flag));
    }
    let flag = Arc::new(AtomicBool::new(false));
    let mut registered = Vec::new();
    for signal in taken() {
        match signal_hook::flag::register(signal, Arc::clone(&flag)) {
            Ok(id) => registered.push(id),
            Err(err) => {
                // All or nothing, so that a retry does not stack handlers.
                for id in registered {
                    signal_hook::low_level::unregister(id);
                }
                return Err(err);
            }
        }
    }
    OWNED.store(true, Ordering::SeqCst);
    if RECEIVED.load(Ordering::SeqCst) > 0 {
        flag.store(true, Ordering::SeqCst);
    }
    *slot = Some(Arc::clone(&flag));
    Ok(flag)
}

/// Whether [`interrupt_flag`] gave the signals to an owner.
pub fn owned() -> bool {
    OWNED.load(Ordering::SeqCst)
}

/// The last signal the waiter's handlers saw, if any did.
pub fn received() -> Option<i32> {
    (RECEIVED.load(Ordering::SeqCst) > 0).then(|| LAST.load(Ordering::SeqCst))
}

/// `SIGTERM`, `SIGINT`, `SIGHUP`, … for messages.
pub fn name(signal: i32) -> &'static str {
    signal_hook::low_level::signal_name(signal).unwrap_or("a signal")
}

/// One child process being waited on, from before it is spawned until it was reaped: while any
/// is, a signal is counted instead of ending the process.
#[derive(Debug)]
pub struct Waiting {
    /// [`RECEIVED`] when the wait began.
    start: usize,
}

impl Waiting {
    /// Registers a child about to be spawned; with `install`, installs the handlers first (a
    /// network command, which may wait for ever). `Err(signal)` when a signal already reached a
    /// command nobody owns the signals of: it should start nothing more.
    pub fn start(install: bool) -> Result<Waiting, i32> {
        let mut waiters = waiters();
        if let Some(signal) = received()
            && !owned()
        {
            return Err(signal);
        }
        if install && !waiters.installed {
            // Without the handlers a signal keeps its default action, which ends git-baton but
            // not the child; installing them is worth a try for every network command.
            waiters.installed = install_handlers().is_ok();
        }
        waiters.waiting += 1;
        Ok(Waiting {
            start: RECEIVED.load(Ordering::SeqCst),
        })
    }

    /// The last signal received since the wait began, if one was.
    pub fn since(&self) -> Option<i32> {
        (RECEIVED.load(Ordering::SeqCst) > self.start).then(|| LAST.load(Ordering::SeqCst))
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut waiters = waiters();
        waiters.waiting = waiters.waiting.saturating_sub(1);
    }
}

/// Starts the thread that takes the signals (signal-hook's self-pipe: the handler itself only
/// writes a byte, and the thread may then do anything, even exit).
fn install_handlers() -> io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new(taken())?;
    std::thread::Builder::new()
        .name("git-baton signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                // Under the lock: no waiter registers between the look and the exit.
                let waiters = waiters();
                LAST.store(signal, Ordering::SeqCst);
                RECEIVED.fetch_add(1, Ordering::SeqCst);
                if waiters.waiting == 0 && !owned() {
                    std::process::exit(INTERRUPTED_STATUS);
                }
            }
        })?;
    Ok(())
}

/// Whether this process ignores `signal` (`SIG_IGN`), as it inherited it through `exec`: how
/// `nohup` asks a program to outlive its terminal. Read from `/proc/self/status`; where that
/// cannot be read, nothing counts as ignored.
pub fn ignores(signal: i32) -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| ignored_mask(&status))
        .is_some_and(|mask| (1..=64).contains(&signal) && mask & (1 << (signal - 1)) != 0)
}

/// The `SigIgn:` mask of a `/proc/<pid>/status` text: bit n-1 is signal n.
fn ignored_mask(status: &str) -> Option<u64> {
    let hex = status.lines().find_map(|l| l.strip_prefix("SigIgn:"))?;
    u64::from_str_radix(hex.trim(), 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ignored_mask_has_bit_n_minus_1_for_signal_n() {
        let status = "Name:\tsh\nSigBlk:\t0000000000000000\nSigIgn:\t0000000000000005\n";
        assert_eq!(ignored_mask(status), Some(0b101));
        assert_eq!(ignored_mask("Name:\tsh\n"), None);
        // Every Rust program ignores SIGPIPE from its start.
        assert!(ignores(signal_hook::consts::SIGPIPE));
    }

    #[test]
    fn signals_are_named_for_messages() {
        assert_eq!(name(SIGTERM), "SIGTERM");
        assert_eq!(name(SIGHUP), "SIGHUP");
        assert_eq!(name(-1), "a signal");
    }
}
