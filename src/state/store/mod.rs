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
//! Every file is replaced through an atomic write, whose temporary file
//! (`.git-baton-<pid>-` and six letters or digits, then `.tmp`, beside the file) a kill can leave
//! behind; [`Store::temporary_files`] finds those whose writer is gone, and nothing else, with
//! the lock that says whether another writer may still live.
//!
//! The OS lock (`File::try_lock`, released by the kernel when the holder dies) is the truth
//! about liveness, so a crashed runner is detected without trusting pids, which get reused.
//!
//! `state.json` is written with schema version 2 and read in version 1 too (see `state::v1`);
//! every RunState read is checked against the invariants the transitions keep.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::{Clock, RunId, RunState};

mod codec;
mod lock;
#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) use codec::Versioned;
pub use codec::{STATE_LIMIT, load, parse, save_in, to_json};
pub use lock::{Holder, RunLock, holder_in, host};

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

/// Opens (creating it) a file that exists to be locked: never truncated, since another process
/// may hold it. O_CLOEXEC (std's default) keeps actors from inheriting the lock: an orphaned
/// agent must not make a dead run look alive.
fn open_lock_file(path: &Path) -> Result<File> {
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(io("open", path))
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> StoreError {
    let path = path.to_path_buf();
    move |err| StoreError::Io {
        action,
        path,
        reason: crate::files::io_reason(&err),
    }
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
    /// The longest lease this clone honours (its `lease:` length): a lease that ends further
    /// out is no lease ([`super::trust::lease_in_force`]).
    lease_max: jiff::SignedDuration,
}

impl Store {
    /// The store of the repository whose common git directory is `common_dir`, dating what it
    /// writes with `clock`.
    pub fn new(common_dir: &Path, clock: Clock) -> Store {
        Store {
            root: common_dir.join("baton"),
            clock,
            clone_id: std::sync::OnceLock::new(),
            lease_max: jiff::SignedDuration::try_from(super::DEFAULT_LEASE)
                .unwrap_or(jiff::SignedDuration::MAX),
        }
    }

    /// The store, honouring leases up to `max` (the configured `lease:` length).
    pub fn with_lease_max(mut self, max: std::time::Duration) -> Store {
        self.lease_max = jiff::SignedDuration::try_from(max).unwrap_or(jiff::SignedDuration::MAX);
        self
    }

    /// Whether `lease` is in force now, by the rule every driver applies to take a run over.
    pub fn lease_in_force(&self, lease: &super::Lease) -> bool {
        super::trust::lease_in_force(lease, self.now(), self.lease_max)
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
        let file = open_lock_file(&path)?;
        file.lock().map_err(io("lock", &path))?;
        Ok(file)
    }

    /// Waits until no creation is in progress and keeps new ones from starting while the
    /// returned guard lives (a shared hold of the creation lock); `None` when no run was ever
    /// created here. Creates nothing.
    pub fn creations_settled(&self) -> Result<Option<File>> {
        let path = self.root.join("create.lock");
        let opened = crate::files::if_present(File::options().write(true).open(&path));
        let Some(file) = opened.map_err(io("open", &path))? else {
            return Ok(None);
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
    pub fn driven_elsewhere(&self, state: &RunState) -> bool {
        let Some(lease) = state.lease() else {
            return false;
        };
        !self.holds_here(lease) && self.lease_in_force(lease)
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
/// ([`crate::files::temporary_in`]) that no live write will rename: a regular file, not a link
/// to one, of exactly that name's shape, whose writer (the pid its name carries) is no live
/// process, or that is older than [`crate::files::TEMP_SAFE_AGE`] (its pid then names another
/// process). `.git/info` is shared with git and other tools; nothing else there is ours, and a
/// fresh file of a live git-baton is its write in progress.
fn is_temporary(name: &str, path: &Path) -> bool {
    let Some(pid) = crate::files::temporary_writer(name) else {
        return false;
    };
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    meta.is_file() && abandoned(pid, &meta)
}

/// Whether the temporary file `meta` describes, written by process `pid`, is no live write's.
fn abandoned(pid: u32, meta: &std::fs::Metadata) -> bool {
    let gone = i32::try_from(pid).map_or(true, |pid| {
        crate::procs::stat(pid).is_none_or(|now| now.zombie)
    });
    let old = meta
        .modified()
        .ok()
        .and_then(|at| at.elapsed().ok())
        .is_some_and(|age| age >= crate::files::TEMP_SAFE_AGE);
    gone || old
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

/// The entries of `dir` whose names are UTF-8, sorted by name; none when it cannot be read.
pub fn sorted_entries(dir: &Path) -> Vec<(String, PathBuf)> {
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
        } else if is_temporary(&name, &path) {
            out.push(path);
        }
    }
}
