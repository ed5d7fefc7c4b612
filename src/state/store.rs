//! Where runs live on disk, and the two guarantees about them: a RunState is never half-written,
//! and one live process at a time drives a run.
//!
//! Layout, under the repository's common git directory (shared by every linked worktree):
//!
//! ```text
//! baton/runs/<run-id>/state.json      the RunState, replaced atomically
//! baton/runs/<run-id>/lock            held (OS lock) by the process driving the run
//! baton/runs/<run-id>/lock.json       who holds it: pid, host, since, heartbeat (display only)
//! baton/runs/<run-id>/plan.md         the plan snapshot taken at creation
//! baton/runs/<run-id>/attempts/…      prompt, logs and evidence of each attempt
//! baton/runs/.new-<run-id>/           a run being created; renamed into place when complete
//! ```
//!
//! The OS lock (`File::try_lock`, released by the kernel when the holder dies) is the truth
//! about liveness, so a crashed runner is detected without trusting pids, which get reused.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{RunState, SCHEMA_VERSION};

/// How long a heartbeat promises the holder is alive; refreshed at a third of it.
const LEASE: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("unknown run `{0}`")]
    Unknown(String),
    #[error("run name `{prefix}` is ambiguous: it matches {}", .candidates.join(", "))]
    Ambiguous {
        prefix: String,
        candidates: Vec<String>,
    },
    #[error("run {run} is busy: {holder}")]
    Busy { run: String, holder: String },
    #[error("cannot {action} {}: {reason}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        reason: String,
    },
    #[error("{}: {message}", .path.display())]
    Corrupt { path: PathBuf, message: String },
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> StoreError {
    let path = path.to_path_buf();
    move |err| StoreError::Io {
        action,
        path,
        reason: crate::files::io_reason(&err),
    }
}

/// Who drives a run, written beside the lock for `status` and for `busy` errors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

pub fn now() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Millisecond)
        .unwrap_or(jiff::Timestamp::now())
        .to_string()
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown-host".into())
}

/// Writes `bytes` to `path` so that a reader sees either the old or the new content, whatever is
/// killed when: temp file in the same directory, fsync, rename over, fsync the directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().expect("a file inside a directory");
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .map_err(io("create a temporary file in", dir))?;
    tmp.write_all(bytes).map_err(io("write", tmp.path()))?;
    tmp.as_file().sync_all().map_err(io("sync", tmp.path()))?;
    tmp.persist(path)
        .map_err(|e| io("replace", path)(e.error))?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io("sync", dir))?;
    Ok(())
}

#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

impl Store {
    /// The store of the repository whose common git directory is `common_dir`.
    pub fn new(common_dir: &Path) -> Store {
        Store {
            root: common_dir.join("baton"),
        }
    }

    pub fn runs_dir(&self) -> PathBuf {
        self.root.join("runs")
    }

    pub fn run_dir(&self, id: &str) -> PathBuf {
        self.runs_dir().join(id)
    }

    /// Where a run is assembled before it becomes visible under its id.
    pub fn staging_dir(&self, id: &str) -> PathBuf {
        self.runs_dir().join(format!(".new-{id}"))
    }

    /// Serializes run creation, so that two `run --key K` at once make one run.
    pub fn creation_lock(&self) -> Result<File> {
        std::fs::create_dir_all(&self.root).map_err(io("create", &self.root))?;
        let path = self.root.join("create.lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io("open", &path))?;
        file.lock().map_err(io("lock", &path))?;
        Ok(file)
    }

    /// Ids of the complete runs, oldest first (ids sort by creation time).
    pub fn list(&self) -> Result<Vec<String>> {
        let dir = self.runs_dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(io("list", &dir)(err)),
        };
        let mut ids: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|name| !name.starts_with('.'))
            .filter(|name| dir.join(name).join("state.json").is_file())
            .collect();
        ids.sort();
        Ok(ids)
    }

    /// The run named by its full id or any unique prefix.
    pub fn resolve(&self, name: &str) -> Result<String> {
        let ids = self.list()?;
        if ids.iter().any(|id| id == name) {
            return Ok(name.to_string());
        }
        let matches: Vec<String> = ids.into_iter().filter(|id| id.starts_with(name)).collect();
        match matches.len() {
            0 => Err(StoreError::Unknown(name.into())),
            1 => Ok(matches.into_iter().next().unwrap()),
            _ => Err(StoreError::Ambiguous {
                prefix: name.into(),
                candidates: matches,
            }),
        }
    }

    /// Remembers that run `id` was cleaned on purpose, so that its kept branch is not reported as
    /// a leftover of a failed creation.
    pub fn record_cleaned(&self, id: &str) -> Result<()> {
        let path = self.root.join("cleaned");
        let mut text = std::fs::read_to_string(&path).unwrap_or_default();
        text.push_str(id);
        text.push('\n');
        write_atomic(&path, text.as_bytes())
    }

    /// The runs removed with `clean`.
    pub fn cleaned(&self) -> Vec<String> {
        std::fs::read_to_string(self.root.join("cleaned"))
            .map(|t| t.lines().map(String::from).collect())
            .unwrap_or_default()
    }

    /// A run whose RunState says it is `running` (or `pending`, killed between creation and its
    /// first attempt) while no live process holds its lock: its driver crashed or was killed.
    pub fn is_stale(&self, state: &RunState) -> bool {
        matches!(
            state.status,
            super::RunStatus::Running | super::RunStatus::Pending
        ) && matches!(self.holder(&state.run_id), Ok(None))
    }

    pub fn load(&self, id: &str) -> Result<RunState> {
        load_state(&self.run_dir(id).join("state.json"))
    }

    /// Takes the run's lock for the life of the returned guard, or says who holds it.
    pub fn lock(&self, id: &str, command: &str) -> Result<RunLock> {
        RunLock::acquire_in(&self.run_dir(id), id, command)
    }

    /// Whether a live process holds the run's lock right now (and who, when it says).
    pub fn holder(&self, id: &str) -> Result<Option<Holder>> {
        let dir = self.run_dir(id);
        let path = dir.join("lock");
        let file = match File::options().write(true).open(&path) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(io("open", &path)(err)),
        };
        // A shared lock: probes never exclude each other, and a driver's exclusive lock
        // excludes them.
        match file.try_lock_shared() {
            Ok(()) => Ok(None),
            Err(std::fs::TryLockError::WouldBlock) => {
                Ok(Some(read_holder(&dir).unwrap_or_else(|| Holder {
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
}

pub fn save_in(dir: &Path, state: &RunState) -> Result<()> {
    let mut text = serde_json::to_vec_pretty(state).expect("RunState serializes");
    text.push(b'\n');
    write_atomic(&dir.join("state.json"), &text)
}

fn load_state(path: &Path) -> Result<RunState> {
    let text = std::fs::read(path).map_err(io("read", path))?;
    #[derive(Deserialize)]
    struct Version {
        schema_version: u32,
    }
    let corrupt = |message: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        message,
    };
    let version: Version =
        serde_json::from_slice(&text).map_err(|e| corrupt(format!("not a RunState: {e}")))?;
    if version.schema_version != SCHEMA_VERSION {
        return Err(corrupt(format!(
            "schema_version {} is not supported by this git-baton (it reads {SCHEMA_VERSION})",
            version.schema_version
        )));
    }
    serde_json::from_slice(&text).map_err(|e| corrupt(format!("not a RunState: {e}")))
}

fn read_holder(dir: &Path) -> Option<Holder> {
    serde_json::from_slice(&std::fs::read(dir.join("lock.json")).ok()?).ok()
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
    pub fn acquire_in(dir: &Path, id: &str, command: &str) -> Result<RunLock> {
        let path = dir.join("lock");
        // O_CLOEXEC (std's default) keeps actors from inheriting the lock: an orphaned agent
        // must not make a dead run look alive.
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io("open", &path))?;
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
        let since = now();
        let holder = Holder {
            pid: std::process::id(),
            host: host(),
            since: since.clone(),
            lock_until: lease_end(),
            command: command.into(),
        };
        write_holder(dir, &holder)?;
        let stop = Arc::new(AtomicBool::new(false));
        // Shared with the heartbeat, so that it follows the directory when creation renames it.
        let shared_dir = Arc::new(Mutex::new(dir.to_path_buf()));
        let heartbeat = {
            let (stop, shared_dir) = (stop.clone(), shared_dir.clone());
            std::thread::spawn(move || {
                let mut holder = holder;
                while !sleep_unless(&stop, LEASE / 3) {
                    holder.lock_until = lease_end();
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

fn lease_end() -> String {
    let until = jiff::Timestamp::now() + jiff::SignedDuration::try_from(LEASE).unwrap_or_default();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_by_unique_prefix() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path());
        for id in ["1abc000", "1abd000", "2xyz000"] {
            std::fs::create_dir_all(store.run_dir(id)).unwrap();
            std::fs::write(store.run_dir(id).join("state.json"), "{}").unwrap();
        }
        std::fs::create_dir_all(store.staging_dir("3new000")).unwrap();
        assert_eq!(store.list().unwrap(), ["1abc000", "1abd000", "2xyz000"]);
        assert_eq!(store.resolve("2").unwrap(), "2xyz000");
        assert_eq!(store.resolve("1abc").unwrap(), "1abc000");
        assert!(matches!(
            store.resolve("1ab"),
            Err(StoreError::Ambiguous { .. })
        ));
        assert!(matches!(store.resolve("3"), Err(StoreError::Unknown(_))));
    }

    #[test]
    fn one_holder_at_a_time_and_the_lock_is_released_on_drop() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path());
        std::fs::create_dir_all(store.run_dir("r")).unwrap();
        let lock = store.lock("r", "git baton run").unwrap();
        let holder = store.holder("r").unwrap().expect("held");
        assert_eq!(holder.pid, std::process::id());
        match store.lock("r", "git baton resume") {
            Err(StoreError::Busy { holder, .. }) => {
                assert!(holder.contains("git baton run"), "{holder}")
            }
            other => panic!("expected busy, got {:?}", other.map(|_| ())),
        }
        drop(lock);
        assert_eq!(store.holder("r").unwrap(), None);
        assert!(!store.run_dir("r").join("lock.json").exists());
    }

    #[test]
    fn atomic_write_replaces_whole_files() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("state.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let leftovers: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary files are left behind");
    }
}
