//! The lock of a run and its heartbeat: who drives the run (`lock.json`), held by one live
//! process at a time and released by the kernel when it dies.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::super::Clock;
use super::codec::read_own;
use super::{Result, StoreError, io, open_lock_file, write_atomic};

/// The most bytes a `lock.json` may have: a few fields of one line each.
const HOLDER_LIMIT: u64 = 64 << 10;

/// How long a heartbeat promises the holder is alive; refreshed at a third of it.
const HEARTBEAT: Duration = Duration::from_secs(30);

/// Who drives a run, written beside the lock for `status` and for `busy` errors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Holder {
    pub pid: u32,
    pub host: String,
    pub since: String,
    /// Refreshed while the holder lives; past it on another host, the holder is presumed dead.
    pub lock_until: String,
    pub command: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` (pid {} on {}) has driven it since {}",
            self.command, self.pid, self.host, self.since
        )
    }
}

pub fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown-host".into())
}

/// Whether a live process holds the lock of the run directory `dir` right now (and who, when it
/// says): also for a directory being created or removed.
pub fn holder_in(dir: &Path) -> Result<Option<Holder>> {
    let path = dir.join("lock");
    let opened = crate::files::if_present(File::options().write(true).open(&path));
    let Some(file) = opened.map_err(io("open", &path))? else {
        return Ok(None);
    };
    // A shared lock: probes never exclude each other, and a driver's exclusive lock excludes
    // them.
    match file.try_lock_shared() {
        Ok(()) => Ok(None),
        Err(std::fs::TryLockError::WouldBlock) => {
            Ok(Some(read_holder(dir).unwrap_or_else(|| Holder {
                pid: 0,
                host: "unknown".into(),
                since: "unknown".into(),
                lock_until: "unknown".into(),
                command: "another git-baton".into(),
            })))
        }
        Err(std::fs::TryLockError::Error(err)) => Err(io("lock", &path)(err)),
    }
}

pub(super) fn read_holder(dir: &Path) -> Option<Holder> {
    serde_json::from_slice(&read_own(&dir.join("lock.json"), HOLDER_LIMIT).ok()?).ok()
}

/// The exclusive right to drive one run. The kernel releases it if the process dies; dropping
/// it releases it too. A heartbeat thread keeps `lock_until` in the future meanwhile.
pub struct RunLock {
    file: File,
    dir: PathBuf,
    shared_dir: Arc<Mutex<PathBuf>>,
    stop: Arc<AtomicBool>,
    heartbeat: Option<std::thread::JoinHandle<()>>,
}

impl RunLock {
    /// Takes the lock of the run directory `dir` (also a staged one, during creation).
    pub fn acquire_in(dir: &Path, id: &str, command: &str, clock: &Clock) -> Result<RunLock> {
        let path = dir.join("lock");
        let file = open_lock_file(&path)?;
        // A probe by `status` or `list` holds a shared lock for an instant; only a lock that
        // stays taken means another driver.
        let mut tries = 0;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock)
                    if tries < 10 && read_holder(dir).is_none() =>
                {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    let holder = read_holder(dir)
                        .map(|h| h.to_string())
                        .unwrap_or_else(|| "another git-baton process is driving it".into());
                    return Err(StoreError::Busy {
                        run: id.into(),
                        holder,
                    });
                }
                Err(std::fs::TryLockError::Error(err)) => return Err(io("lock", &path)(err)),
            }
        }
        let holder = Holder {
            pid: std::process::id(),
            host: host(),
            since: clock.now().to_string(),
            lock_until: heartbeat_end(clock),
            command: command.into(),
        };
        write_holder(dir, &holder)?;
        let stop = Arc::new(AtomicBool::new(false));
        // Shared with the heartbeat, so that it follows the directory when creation renames it.
        let shared_dir = Arc::new(Mutex::new(dir.to_path_buf()));
        let heartbeat = {
            let (stop, shared_dir, clock) = (stop.clone(), shared_dir.clone(), clock.clone());
            std::thread::spawn(move || {
                let mut holder = holder;
                while !sleep_unless(&stop, HEARTBEAT / 3) {
                    holder.lock_until = heartbeat_end(&clock);
                    let dir = shared_dir
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .clone();
                    let _ = write_holder(&dir, &holder);
                }
            })
        };
        Ok(RunLock {
            file,
            dir: dir.to_path_buf(),
            shared_dir,
            stop,
            heartbeat: Some(heartbeat),
        })
    }

    /// The run directory this lock guards (moves with a rename of the directory on Linux).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Follows the run directory to its final place after creation renamed it.
    pub fn moved_to(&mut self, dir: PathBuf) {
        *self
            .shared_dir
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = dir.clone();
        self.dir = dir;
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.heartbeat.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
        let _ = std::fs::remove_file(self.dir.join("lock.json"));
        let _ = self.file.unlock();
    }
}

fn heartbeat_end(clock: &Clock) -> String {
    let until = clock.peek() + jiff::SignedDuration::try_from(HEARTBEAT).unwrap_or_default();
    until.round(jiff::Unit::Second).unwrap_or(until).to_string()
}

fn write_holder(dir: &Path, holder: &Holder) -> Result<()> {
    write_atomic(
        &dir.join("lock.json"),
        &serde_json::to_vec_pretty(holder).expect("serializes"),
    )
}

/// Sleeps up to `d` in short steps; returns true as soon as `stop` is set.
fn sleep_unless(stop: &AtomicBool, d: Duration) -> bool {
    let step = Duration::from_millis(100);
    let mut left = d;
    while !left.is_zero() {
        if stop.load(Ordering::Acquire) {
            return true;
        }
        let s = left.min(step);
        std::thread::park_timeout(s);
        left = left.saturating_sub(s);
    }
    stop.load(Ordering::Acquire)
}
