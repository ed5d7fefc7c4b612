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
//! baton/runs/.clean-<run-id>/         a run being removed: renamed aside in one step, then deleted
//! baton/cleaned                       ids of the runs removed on purpose (their branches stay)
//! baton/create.lock                   serializes creations and changes to `cleaned`
//! ```
//!
//! Every file is replaced through an atomic write, whose temporary file (`.tmp-` and six letters
//! or digits, beside the file) a kill can leave behind; [`Store::temporary_files`] finds those,
//! and nothing else, with the lock that says whether their writer still lives.
//!
//! The OS lock (`File::try_lock`, released by the kernel when the holder dies) is the truth
//! about liveness, so a crashed runner is detected without trusting pids, which get reused.
//!
//! `state.json` is written with schema version 2 and read in version 1 too (see `state::v1`);
//! every RunState read is checked against the invariants the transitions keep.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Clock, RunId, RunState, SCHEMA_VERSION};

/// How long a heartbeat promises the holder is alive; refreshed at a third of it.
const HEARTBEAT: Duration = Duration::from_secs(30);

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
    #[error("cannot allocate a run id: too many runs created this second")]
    IdsExhausted,
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

/// [`crate::files::write_atomic`], failing as the store does.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::files::write_atomic(path, bytes).map_err(|e| StoreError::Io {
        action: e.action,
        reason: crate::files::io_reason(&e.source),
        path: e.path,
    })
}

#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
    clock: Clock,
    /// This clone's id, read (or drawn) once per process: `list` asks it per leased run.
    clone_id: std::sync::OnceLock<String>,
}

impl Store {
    /// The store of the repository whose common git directory is `common_dir`, dating what it
    /// writes with `clock`.
    pub fn new(common_dir: &Path, clock: Clock) -> Store {
        Store {
            root: common_dir.join("baton"),
            clock,
            clone_id: std::sync::OnceLock::new(),
        }
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Now, by the store's clock.
    pub fn now(&self) -> jiff::Timestamp {
        self.clock.now()
    }

    /// A fresh run id: the clock's time and noise, the first not taken by a run or a creation.
    pub fn allocate_id(&self) -> Result<RunId> {
        let secs = u64::try_from(self.clock.now().as_second()).unwrap_or(0);
        let noise = self.clock.noise();
        (0..64u64)
            .map(|attempt| RunId::generate(secs, noise ^ attempt))
            .find(|id| {
                !self.run_dir(id).exists()
                    && !self.staging_dir(id).exists()
                    && !self.removal_dir(id).exists()
            })
            .ok_or(StoreError::IdsExhausted)
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

    /// Where `clean` moves a run directory in one step before deleting it: a kill midway leaves
    /// the whole run or a removal that `doctor` reports and `clean` finishes, never a run
    /// directory without its state that nothing lists.
    pub fn removal_dir(&self, id: &str) -> PathBuf {
        self.runs_dir().join(format!(".clean-{id}"))
    }

    /// Runs whose creation (`.new-<id>`) or removal (`.clean-<id>`) started, with their
    /// directories, by name.
    pub fn unfinished(&self) -> Vec<(Unfinished, RunId, PathBuf)> {
        let Ok(entries) = std::fs::read_dir(self.runs_dir()) else {
            return Vec::new();
        };
        let mut found: Vec<(Unfinished, RunId, PathBuf)> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let (what, id) = if let Some(id) = name.strip_prefix(".new-") {
                    (Unfinished::Creation, id)
                } else {
                    (Unfinished::Removal, name.strip_prefix(".clean-")?)
                };
                Some((what, id.parse().ok()?, e.path()))
            })
            .collect();
        found.sort();
        found
    }

    /// Serializes run creation, so that two `run --key K` at once make one run, and every change
    /// to the store's shared files (`cleaned`); `doctor` holds it while it looks and fixes, so
    /// that it never takes a creation in progress for the debris of a killed one.
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

    /// Waits until no creation is in progress and keeps new ones from starting while the
    /// returned guard lives (a shared hold of the creation lock); `None` when no run was ever
    /// created here. Creates nothing.
    pub fn creations_settled(&self) -> Result<Option<File>> {
        let path = self.root.join("create.lock");
        let file = match File::options().write(true).open(&path) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(io("open", &path)(err)),
        };
        file.lock_shared().map_err(io("lock", &path))?;
        Ok(Some(file))
    }

    /// Ids of the complete runs, oldest first (ids sort by creation time). What is not named
    /// like a run was not made by git-baton and is not listed.
    pub fn list(&self) -> Result<Vec<RunId>> {
        let dir = self.runs_dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(io("list", &dir)(err)),
        };
        let mut ids: Vec<RunId> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok()?.parse().ok())
            .filter(|id: &RunId| dir.join(id).join("state.json").is_file())
            .collect();
        ids.sort();
        Ok(ids)
    }

    /// Run directories without a `state.json` (what a `clean` of an older git-baton killed
    /// midway, or a hand, left), by id: no command lists them as runs, so `doctor` reports them
    /// and `clean --force` removes them.
    pub fn headless(&self) -> Vec<(RunId, PathBuf)> {
        sorted_entries(&self.runs_dir())
            .into_iter()
            .filter_map(|(name, path)| Some((name.parse::<RunId>().ok()?, path)))
            .filter(|(_, path)| path.is_dir() && !path.join("state.json").exists())
            .collect()
    }

    /// Remembers that run `id` was cleaned on purpose, so that its kept branch is not reported as
    /// a leftover of a failed creation. Once per id, one writer at a time.
    pub fn record_cleaned(&self, id: &str) -> Result<()> {
        let _one_writer = self.creation_lock()?;
        let path = self.root.join("cleaned");
        let mut text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(err) => return Err(io("read", &path)(err)),
        };
        if text.lines().any(|line| line == id) {
            return Ok(());
        }
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
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
            state.status(),
            super::RunStatus::Running | super::RunStatus::Pending
        ) && matches!(self.holder(&state.run_id), Ok(None))
            && !self.driven_elsewhere(state)
    }

    /// Whether another clone drives the run under a lease still in force: then nobody here
    /// holding its lock says nothing about a crash.
    fn driven_elsewhere(&self, state: &RunState) -> bool {
        let Some(lease) = state.lease() else {
            return false;
        };
        !self.holds_here(lease) && lease.until > self.now()
    }

    /// The holder name of a lease taken by process `pid` of this clone at `at`:
    /// `host:clone:pid:milliseconds`, unique across machines and clones.
    pub fn holder_here(&self, pid: u32, at: jiff::Timestamp) -> String {
        format!(
            "{}:{}:{pid}:{}",
            host(),
            self.clone_id(),
            at.as_millisecond()
        )
    }

    /// Whether `lease` was taken by a driver of this clone on this host (see
    /// [`Self::holder_here`]).
    pub fn holds_here(&self, lease: &super::Lease) -> bool {
        lease
            .holder
            .starts_with(&format!("{}:{}:", host(), self.clone_id()))
    }

    /// This clone's own name, the same for every process working in it and for no other clone,
    /// even one at the same path on a machine of the same name (CI runners, containers): drawn
    /// at random once and kept in `baton/clone-id`. Lease holders carry it.
    pub fn clone_id(&self) -> String {
        self.clone_id
            .get_or_init(|| self.read_or_draw_clone_id())
            .clone()
    }

    fn read_or_draw_clone_id(&self) -> String {
        let path = self.root.join("clone-id");
        let valid = |id: &str| id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit());
        if let Ok(id) = std::fs::read_to_string(&path)
            && valid(id.trim())
        {
            return id.trim().to_owned();
        }
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        hasher.write_u128(nanos);
        hasher.write_u32(std::process::id());
        let fresh = format!("{:016x}", hasher.finish());
        // The first writer wins; a second process of this clone reads the same id back.
        let created = std::fs::create_dir_all(&self.root).and_then(|()| {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)?;
            std::io::Write::write_all(&mut file, fresh.as_bytes())
        });
        match created {
            Ok(()) => fresh,
            Err(_) => match std::fs::read_to_string(&path) {
                Ok(id) if valid(id.trim()) => id.trim().to_owned(),
                // A file a killed writer left empty: replaced whole.
                _ => {
                    let _ = crate::files::write_atomic(&path, fresh.as_bytes());
                    fresh
                }
            },
        }
    }

    pub fn load(&self, id: &RunId) -> Result<RunState> {
        load(&self.run_dir(id).join("state.json"))
    }

    /// Takes the run's lock for the life of the returned guard, or says who holds it.
    pub fn lock(&self, id: &RunId, command: &str) -> Result<RunLock> {
        RunLock::acquire_in(&self.run_dir(id), id, command, &self.clock)
    }

    /// Whether a live process holds the run's lock right now (and who, when it says).
    pub fn holder(&self, id: &str) -> Result<Option<Holder>> {
        holder_in(&self.run_dir(id))
    }

    /// The temporary files of atomic writes under the store (and in `<git-common-dir>/info`,
    /// where creation updates `exclude`), each with the lock its writer held. Those inside the
    /// directory of an unfinished creation or removal are not listed: they go with it.
    pub fn temporary_files(&self) -> Vec<TempFile> {
        let mut found = Vec::new();
        let common = self.root.parent().unwrap_or(&self.root);
        // Nothing writes directly in `runs/` but a run's creation and removal, which rename
        // whole directories: whatever temporary is there is debris of the store's.
        for dir in [self.root.clone(), self.runs_dir(), common.join("info")] {
            for (name, path) in sorted_entries(&dir) {
                if is_temporary(&name, &path) {
                    found.push(TempFile {
                        path,
                        owner: TempOwner::Store,
                    });
                }
            }
        }
        for (name, dir) in sorted_entries(&self.runs_dir()) {
            let Ok(id) = name.parse::<RunId>() else {
                continue;
            };
            let mut paths = Vec::new();
            temporaries_under(&dir, &mut paths);
            found.extend(paths.into_iter().map(|path| TempFile {
                path,
                owner: TempOwner::Run(id.clone()),
            }));
        }
        found
    }
}

/// Whether the entry `name` at `path` is the temporary file of one of git-baton's atomic writes
/// ([`crate::files::temporary_in`]): a regular file, not a link to one, of exactly that name's
/// shape. `.git/info` is shared with git and other tools; nothing else there is ours.
fn is_temporary(name: &str, path: &Path) -> bool {
    crate::files::is_temporary_name(name)
        && std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_file())
}

/// A run whose creation or removal started and did not finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unfinished {
    Creation,
    Removal,
}

/// A temporary file an atomic write left, or is about to rename into place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TempFile {
    pub path: PathBuf,
    pub owner: TempOwner,
}

/// The lock whoever writes a file holds: while it is held the writer may be alive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TempOwner {
    /// The creation lock: the store's own files and `info/exclude`.
    Store,
    /// The run's lock: everything in its directory.
    Run(RunId),
}

fn sorted_entries(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf)> = read
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
        .collect();
    out.sort();
    out
}

fn temporaries_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for (name, path) in sorted_entries(dir) {
        // Not followed: a run directory holds no links, and a link must not lead the walk out.
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            temporaries_under(&path, out);
        } else if meta.is_file() && crate::files::is_temporary_name(&name) {
            out.push(path);
        }
    }
}

/// Whether a live process holds the lock of the run directory `dir` right now (and who, when it
/// says): also for a directory being created or removed.
pub fn holder_in(dir: &Path) -> Result<Option<Holder>> {
    let path = dir.join("lock");
    let file = match File::options().write(true).open(&path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(io("open", &path)(err)),
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

/// `state.json` as written: the schema version, then the RunState's stored facts.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(title = "git-baton state.json"))]
pub(crate) struct Versioned<'a> {
    schema_version: u32,
    #[serde(flatten)]
    state: &'a RunState,
}

/// The bytes of `state.json` for `state`, in the current schema version.
pub fn to_json(state: &RunState) -> Vec<u8> {
    let versioned = Versioned {
        schema_version: SCHEMA_VERSION,
        state,
    };
    let mut text = serde_json::to_vec_pretty(&versioned).expect("RunState serializes");
    text.push(b'\n');
    text
}

pub fn save_in(dir: &Path, state: &RunState) -> Result<()> {
    write_atomic(&dir.join("state.json"), &to_json(state))
}

/// The most bytes a `state.json` may have: far beyond what a run's state grows to (coverage
/// reports keep a bounded number of paths), and what a run's record carries whole.
pub const STATE_LIMIT: u64 = 64 << 20;

/// The most bytes a `lock.json` may have: a few fields of one line each.
const HOLDER_LIMIT: u64 = 64 << 10;

/// Reads one of the store's own files, at most `limit` bytes of it: a regular file only, so
/// that a named pipe planted at its path is refused unread instead of blocking for ever.
fn read_own(path: &Path, limit: u64) -> Result<Vec<u8>> {
    match crate::files::read_limited_regular(path, limit) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(StoreError::Io {
            action: "read",
            path: path.to_path_buf(),
            reason: format!("it holds more than {limit} bytes"),
        }),
        Err(err) => Err(io("read", path)(err)),
    }
}

/// Reads the `state.json` at `path`, of either schema version.
pub fn load(path: &Path) -> Result<RunState> {
    let bytes = read_own(path, STATE_LIMIT)?;
    parse(&bytes).map_err(|message| StoreError::Corrupt {
        path: path.to_path_buf(),
        message,
    })
}

/// The RunState in the text of a `state.json` of either schema version, or what is wrong with
/// it (the caller names the file).
pub fn parse(bytes: &[u8]) -> Result<RunState, String> {
    #[derive(Deserialize)]
    struct Version {
        schema_version: u32,
    }
    let version: Version =
        serde_json::from_slice(bytes).map_err(|e| format!("not a RunState: {e}"))?;
    let state = match version.schema_version {
        1 => super::v1::read(bytes)?,
        SCHEMA_VERSION => {
            serde_json::from_slice(bytes).map_err(|e| format!("not a RunState: {e}"))?
        }
        other => {
            return Err(format!(
                "schema_version {other} is not supported by this git-baton (it reads 1 and {SCHEMA_VERSION})"
            ));
        }
    };
    let state: RunState = state;
    state.check().map_err(|e| e.to_string())?;
    Ok(state)
}

fn read_holder(dir: &Path) -> Option<Holder> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_listed_by_id_and_only_complete_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path(), Clock::system());
        for id in ["1abc000000", "1abd000000", "2xyz000000", "not-a-run"] {
            std::fs::create_dir_all(store.run_dir(id)).unwrap();
            std::fs::write(store.run_dir(id).join("state.json"), "{}").unwrap();
        }
        std::fs::create_dir_all(store.staging_dir("3new000000")).unwrap();
        assert_eq!(
            store.list().unwrap(),
            ["1abc000000", "1abd000000", "2xyz000000"]
        );
    }

    /// A named pipe planted where the store keeps `state.json` or `lock.json` is refused at
    /// once, with the path named; read plainly it would block until a writer came. The read
    /// runs on a thread so that a regression fails (after a bounded wait, opening the pipe's
    /// other end to free the thread) instead of hanging the suite.
    #[cfg(unix)]
    #[test]
    fn a_named_pipe_for_a_state_or_lock_file_is_refused_unread() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path(), Clock::system());
        let r: RunId = "1ngvbzkqq5".parse().unwrap();
        let dir = store.run_dir(&r);
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["state.json", "lock.json"] {
            rustix::fs::mknodat(
                rustix::fs::CWD,
                dir.join(name),
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o644),
                0,
            )
            .unwrap();
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let state_path = dir.join("state.json");
        let (run_dir, path) = (dir.clone(), state_path.clone());
        let reader = std::thread::spawn(move || {
            let loaded = load(&path).map(|_| ()).map_err(|e| e.to_string());
            let holder = read_holder(&run_dir);
            let _ = tx.send((loaded, holder.is_none()));
        });
        let Ok((loaded, no_holder)) = rx.recv_timeout(Duration::from_secs(30)) else {
            // A writer that opens and closes at once ends a blocked reader's wait; without a
            // reader the open fails at once (non-blocking), so the loop is bounded.
            for _ in 0..100 {
                if reader.is_finished() {
                    break;
                }
                for name in ["state.json", "lock.json"] {
                    let _ = rustix::fs::open(
                        dir.join(name),
                        rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::NONBLOCK,
                        rustix::fs::Mode::empty(),
                    );
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = reader.join();
            panic!("reading a named pipe blocked");
        };
        reader.join().unwrap();
        let message = loaded.unwrap_err();
        assert!(
            message.contains(&state_path.display().to_string()),
            "{message}"
        );
        assert!(message.contains("named pipe (FIFO)"), "{message}");
        assert!(no_holder, "a lock.json that is not a file names no holder");
    }

    #[test]
    fn one_holder_at_a_time_and_the_lock_is_released_on_drop() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path(), Clock::system());
        let r: RunId = "1ngvbzkqq5".parse().unwrap();
        std::fs::create_dir_all(store.run_dir(&r)).unwrap();
        let lock = store.lock(&r, "git baton run").unwrap();
        let holder = store.holder(&r).unwrap().expect("held");
        assert_eq!(holder.pid, std::process::id());
        match store.lock(&r, "git baton resume") {
            Err(StoreError::Busy { holder, .. }) => {
                assert!(holder.contains("git baton run"), "{holder}")
            }
            other => panic!("expected busy, got {:?}", other.map(|_| ())),
        }
        drop(lock);
        assert_eq!(store.holder(&r).unwrap(), None);
        assert!(!store.run_dir(&r).join("lock.json").exists());
    }

    #[test]
    fn unfinished_creations_and_removals_are_found_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path(), Clock::system());
        let (a, b): (RunId, RunId) = ("1abc000000".parse().unwrap(), "1abd000000".parse().unwrap());
        for dir in [
            store.staging_dir(&a),
            store.removal_dir(&b),
            store.runs_dir().join(".clean-not-a-run"),
            store.run_dir("1abe000000"),
        ] {
            std::fs::create_dir_all(dir).unwrap();
        }
        assert_eq!(
            store.unfinished(),
            [
                (Unfinished::Creation, a.clone(), store.staging_dir(&a)),
                (Unfinished::Removal, b.clone(), store.removal_dir(&b)),
            ]
        );
    }

    #[test]
    fn temporary_files_are_found_with_the_lock_their_writer_held() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(&tmp.path().join(".git"), Clock::system());
        let id: RunId = "1abc000000".parse().unwrap();
        let attempt = store.run_dir(&id).join("attempts/executor-1");
        let info = tmp.path().join(".git/info");
        let files = [
            store.runs_dir().parent().unwrap().join(".tmp-a1B2c3"),
            store.runs_dir().join(".tmp-012345"),
            info.join(".tmp-XyZ789"),
            store.run_dir(&id).join(".tmp-aaaaaa"),
            attempt.join(".tmp-Prompt"),
            // Removed with their directories, so not listed:
            store.staging_dir("1abd000000").join(".tmp-plan00"),
            store.removal_dir("1abe000000").join(".tmp-lock00"),
        ];
        // Not the name an atomic write gives (somebody else's), or no file: not listed either.
        let foreign = [
            ".tmp-foo",
            ".tmp-sparse-drafts",
            ".tmp-abcdefg",
            ".tmp-abc.ef",
            ".tmp-",
        ];
        for file in files.iter().chain(&foreign.map(|name| info.join(name))) {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, "half").unwrap();
        }
        std::fs::create_dir_all(info.join(".tmp-d1r000/inside")).unwrap();
        std::os::unix::fs::symlink(&files[0], info.join(".tmp-l1nk00")).unwrap();
        std::fs::write(attempt.join("prompt.md"), "whole").unwrap();
        let real = crate::files::temporary_in(&info).unwrap();
        let name = real
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(crate::files::is_temporary_name(&name), "{name}");
        drop(real);
        let run = TempOwner::Run(id);
        assert_eq!(
            store.temporary_files(),
            [
                (files[0].clone(), TempOwner::Store),
                (files[1].clone(), TempOwner::Store),
                (files[2].clone(), TempOwner::Store),
                (files[3].clone(), run.clone()),
                (files[4].clone(), run),
            ]
            .map(|(path, owner)| TempFile { path, owner })
        );
    }

    /// A run directory without its state is no run, but it is found; a directory being created
    /// or removed, or named like no run, is not one of those.
    #[test]
    fn run_directories_without_state_are_found() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path(), Clock::system());
        for (name, state) in [
            ("1abc000000", true),
            ("1abd000000", false),
            ("not-a-run", false),
            (".clean-1abe000000", false),
            (".new-1abf000000", false),
        ] {
            let dir = store.runs_dir().join(name);
            std::fs::create_dir_all(dir.join("attempts")).unwrap();
            if state {
                std::fs::write(dir.join("state.json"), "{}").unwrap();
            }
        }
        let id: RunId = "1abd000000".parse().unwrap();
        assert_eq!(store.headless(), [(id.clone(), store.run_dir(&id))]);
        assert_eq!(store.list().unwrap().len(), 1);
    }

    #[test]
    fn a_cleaned_run_is_recorded_once() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::new(tmp.path(), Clock::system());
        for id in ["1abc000000", "1abd000000", "1abc000000"] {
            store.record_cleaned(id).unwrap();
        }
        assert_eq!(store.cleaned(), ["1abc000000", "1abd000000"]);
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

    #[test]
    fn a_version_1_file_loads_and_is_saved_as_version_2() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("state.json");
        let v1 = include_str!("../../testdata/state/v1/review.json");
        std::fs::write(&path, v1).unwrap();
        let state = load(&path).unwrap();
        save_in(tmp.path(), &state).unwrap();
        let saved: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(saved["schema_version"], 2);
        for derived in ["current_stage", "coverage", "usage", "error"] {
            assert!(saved.get(derived).is_none(), "{derived} is not stored");
        }
        assert_eq!(saved["stages"][0]["configured_actor"], "limited");
        assert!(saved["stages"][0].get("status").is_none());
        assert!(
            saved["policy"].get("pipeline").is_none(),
            "the pipeline is stored once"
        );
        assert_eq!(load(&path).unwrap(), state, "and reads back the same");
    }

    #[test]
    fn cleared_variables_are_stored_by_name_and_absent_means_none() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("state.json");
        std::fs::write(&path, include_str!("../../testdata/state/v1/review.json")).unwrap();
        let mut state = load(&path).unwrap();
        assert!(state.stages[0].attempts[0].cleared_env.is_empty());
        // A version-2 file written before the field existed, or with nothing cleared, omits it.
        save_in(tmp.path(), &state).unwrap();
        let saved: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert!(
            saved["stages"][0]["attempts"][0]
                .get("cleared_env")
                .is_none()
        );
        assert_eq!(load(&path).unwrap(), state);

        state.stages[0].attempts[0].cleared_env = vec!["GIT_DIR".into(), "GIT_INDEX_FILE".into()];
        save_in(tmp.path(), &state).unwrap();
        let saved: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(
            saved["stages"][0]["attempts"][0]["cleared_env"],
            serde_json::json!(["GIT_DIR", "GIT_INDEX_FILE"])
        );
        assert_eq!(load(&path).unwrap(), state, "and reads back the same");
    }

    #[test]
    fn unknown_versions_and_inconsistent_states_are_refused_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("state.json");
        let v1 = include_str!("../../testdata/state/v1/review.json");
        let cases = [
            (
                v1.replacen("\"schema_version\": 1", "\"schema_version\": 3", 1),
                "schema_version 3 is not supported by this git-baton (it reads 1 and 2)",
            ),
            (
                "{}".to_string(),
                "not a RunState: missing field `schema_version` at line 1 column 2",
            ),
            (
                v1.replacen("\"status\": \"review\"", "\"status\": \"paused\"", 1),
                "inconsistent RunState: the run is paused but every stage succeeded, so there \
                 is nothing to pause before",
            ),
        ];
        for (text, message) in cases {
            std::fs::write(&path, text).unwrap();
            let err = load(&path).unwrap_err();
            assert_eq!(err.to_string(), format!("{}: {message}", path.display()));
        }
    }

    #[test]
    fn ids_come_from_the_clock_and_skip_taken_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let start: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let first = Store::new(tmp.path(), Clock::fixed(start, 1))
            .allocate_id()
            .unwrap();
        let store = Store::new(tmp.path(), Clock::fixed(start, 1));
        assert_eq!(
            store.allocate_id().unwrap(),
            first,
            "the same seed, the same id"
        );
        std::fs::create_dir_all(store.staging_dir(&first)).unwrap();
        let store = Store::new(tmp.path(), Clock::fixed(start, 1));
        let second = store.allocate_id().unwrap();
        assert_ne!(second, first);
        assert_eq!(second[..7], first[..7], "the same second");
    }
}
