//! The index→worktree half of the cumulative diff, in one pass over the worktree.
//!
//! Git answers it with two passes: `git diff` lstats every index entry by its full path, and
//! `git ls-files --others` reads every directory to find untracked files. Here each tracked
//! directory is read once, its listing merged with the index entries below it (both in byte
//! order), and the files the index tracks are stat'ed relative to the open directory (the
//! listing comes straight from `getdents64`, the stat is one `fstatat`, and neither allocates
//! per entry: the kernel's work for them is most of the cost of a full diff). The same
//! pass yields the untracked names, and it never follows a symlink: a directory is only entered
//! when its parent's listing shows a real directory, which is git's "no symlink in the leading
//! path" rule for free.
//!
//! What it decides per index entry is what gix's index→worktree status decides (same flags, same
//! stat comparison and options, same racy-git rule, same mode-change rule); entries whose stat
//! does not vouch for the index are left for the caller to read through the filters. Untracked
//! candidates are only collected here; the caller applies the ignore rules.
//!
//! Directories are tasks on a shared stack worked on by as many threads as asked for.

use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::sync::{Condvar, Mutex};

use gix::bstr::{BString, ByteSlice};
use gix::index::entry::{Flags, Mode, Stat, mode::Change, stat};
use rustix::fs::OFlags;

use super::worktree::state;

mod prefixes;

/// Flags under which gix's status trusts an entry without looking at the worktree.
const TRUSTED: Flags = Flags::UPTODATE
    .union(Flags::SKIP_WORKTREE)
    .union(Flags::ASSUME_VALID)
    .union(Flags::FSMONITOR_VALID);

/// A name the index does not track at that path; the caller decides whether it is ignored.
pub(in crate::git) struct Candidate {
    pub path: BString,
    /// A directory (everything below it is untracked) rather than a file or symlink.
    pub is_dir: bool,
    /// Whether its parent directory is tracked (has index entries); only a scope prefix inside an
    /// untracked directory has an untracked parent, and then its ancestors decide whether it shows.
    pub parent_tracked: bool,
}

/// The walk hit something it does not handle (an unreadable directory, an unexpected error); the
/// caller falls back to gix's status.
#[derive(Debug)]
pub(in crate::git) struct Unsupported(pub String);

pub(in crate::git) struct Walker<'a> {
    workdir: &'a Path,
    index: &'a gix::index::State,
    stat: stat::Options,
    executable_bit: bool,
    states: Vec<AtomicU8>,
}

struct Task {
    /// Repo-relative, no trailing slash; empty for the worktree's top.
    dir: Vec<u8>,
    /// The index entries below `dir`.
    range: Range<usize>,
}

/// What is at a path in the worktree.
enum Found<'d> {
    Missing,
    Dir,
    File(Meta<'d>),
    Symlink(Meta<'d>),
    /// Neither file, symlink nor directory.
    Other,
}

/// The stat data of a file or symlink: already known, or to be read when an index entry needs it.
enum Meta<'d> {
    Have(Info),
    /// Stat'ed on demand, relative to the open directory (no path walk from the top, no
    /// allocation).
    At {
        dir: BorrowedFd<'d>,
        name: &'d [u8],
    },
}

impl Meta<'_> {
    fn get(&self) -> std::io::Result<Info> {
        match self {
            Meta::Have(info) => Ok(*info),
            Meta::At { dir, name } => {
                let stat = rustix::fs::statat(*dir, *name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)?;
                Ok(Info::of_stat(&stat))
            }
        }
    }
}

/// The kind of a directory entry or of a stat'ed path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    File,
    Symlink,
    Other,
    /// The file system did not say in the listing (`DT_UNKNOWN`): stat to know.
    Unknown,
}

impl Kind {
    fn of_listing(file_type: rustix::fs::FileType) -> Kind {
        use rustix::fs::FileType;
        match file_type {
            FileType::Directory => Kind::Dir,
            FileType::RegularFile => Kind::File,
            FileType::Symlink => Kind::Symlink,
            FileType::Unknown => Kind::Unknown,
            _ => Kind::Other,
        }
    }
}

/// What the walk needs of a path's stat data.
#[derive(Clone, Copy)]
struct Info {
    kind: Kind,
    executable: bool,
    stat: Stat,
}

impl Info {
    // The field types of `struct stat` differ between platforms (and are already `i64`/`u64`
    // on some); the casts are what `std`'s `MetadataExt` does.
    #[allow(clippy::unnecessary_cast)]
    fn of_stat(st: &rustix::fs::Stat) -> Info {
        let mode = st.st_mode as u32;
        let kind = match rustix::fs::FileType::from_raw_mode(mode as _) {
            rustix::fs::FileType::Directory => Kind::Dir,
            rustix::fs::FileType::RegularFile => Kind::File,
            rustix::fs::FileType::Symlink => Kind::Symlink,
            _ => Kind::Other,
        };
        Info {
            kind,
            executable: kind == Kind::File && mode & 0o100 != 0,
            stat: stat_of(
                (st.st_mtime as i64, st.st_mtime_nsec as i64),
                (st.st_ctime as i64, st.st_ctime_nsec as i64),
                st.st_dev as u64,
                st.st_ino as u64,
                st.st_uid as u32,
                st.st_gid as u32,
                st.st_size as u64,
            ),
        }
    }
}

impl<'d> Found<'d> {
    fn of(kind: Kind, meta: Meta<'d>) -> Self {
        match kind {
            Kind::Dir => Found::Dir,
            Kind::Symlink => Found::Symlink(meta),
            Kind::File => Found::File(meta),
            Kind::Other | Kind::Unknown => Found::Other,
        }
    }
}

/// Size of the buffer a directory is listed through (`getdents64`).
const LISTING_BUFFER: usize = 32 * 1024;

impl<'a> Walker<'a> {
    pub fn new(
        workdir: &'a Path,
        index: &'a gix::index::State,
        stat: stat::Options,
        executable_bit: bool,
    ) -> Self {
        Walker {
            workdir,
            index,
            stat,
            executable_bit,
            states: (0..index.entries().len())
                .map(|_| AtomicU8::new(state::UNVISITED))
                .collect(),
        }
    }

    pub fn state(&self, entry: usize) -> u8 {
        self.states[entry].load(Relaxed)
    }

    /// Walks everything below (or at) each prefix (the empty prefix is the whole worktree) on
    /// `threads` threads, this one included, and returns the untracked candidates.
    pub fn run(&self, prefixes: &[String], threads: usize) -> Result<Vec<Candidate>, Unsupported> {
        let mut tasks = Vec::new();
        let mut candidates = Vec::new();
        let mut parents = prefixes::Parents::default();
        for prefix in prefixes {
            if prefix.is_empty() {
                tasks.push(Task {
                    dir: Vec::new(),
                    range: 0..self.index.entries().len(),
                });
            } else {
                self.visit_prefix(prefix.as_bytes(), &mut parents, &mut tasks, &mut candidates)?;
            }
        }
        if threads <= 1 {
            while let Some(task) = tasks.pop() {
                self.visit_dir(task, &mut tasks, &mut candidates)?;
            }
            return Ok(candidates);
        }
        let queue = Mutex::new(Queue {
            tasks,
            busy: 0,
            error: None,
        });
        let wake = Condvar::new();
        let found = std::thread::scope(|s| {
            let helpers: Vec<_> = (1..threads)
                .map(|_| s.spawn(|| self.work(&queue, &wake)))
                .collect();
            let mut found = vec![self.work(&queue, &wake)];
            found.extend(
                helpers
                    .into_iter()
                    .map(|h| h.join().expect("a worktree walker panicked")),
            );
            found
        });
        let queue = queue.into_inner().expect("no walker panicked");
        if let Some(err) = queue.error {
            return Err(err);
        }
        candidates.extend(found.into_iter().flatten());
        Ok(candidates)
    }

    fn work(&self, queue: &Mutex<Queue>, wake: &Condvar) -> Vec<Candidate> {
        let mut candidates = Vec::new();
        let mut spawned = Vec::new();
        loop {
            let task = {
                let mut q = queue.lock().expect("walk queue");
                loop {
                    if q.error.is_some() {
                        return candidates;
                    }
                    if let Some(task) = q.tasks.pop() {
                        q.busy += 1;
                        break task;
                    }
                    if q.busy == 0 {
                        wake.notify_all();
                        return candidates;
                    }
                    q = wake.wait(q).expect("walk queue");
                }
            };
            let result = self.visit_dir(task, &mut spawned, &mut candidates);
            let mut q = queue.lock().expect("walk queue");
            q.busy -= 1;
            if let Err(err) = result {
                q.error.get_or_insert(err);
            }
            let notify = !spawned.is_empty() || q.busy == 0 || q.error.is_some();
            q.tasks.append(&mut spawned);
            drop(q);
            if notify {
                wake.notify_all();
            }
        }
    }

    /// A tracked directory: merge its listing with the index entries below it.
    fn visit_dir(
        &self,
        task: Task,
        tasks: &mut Vec<Task>,
        candidates: &mut Vec<Candidate>,
    ) -> Result<(), Unsupported> {
        let index = self.index;
        let full = self.workdir.join(rel(&task.dir));
        let dir: OwnedFd = match rustix::fs::open(
            &full,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        ) {
            Ok(dir) => dir,
            Err(err) => {
                let err = std::io::Error::from(err);
                if is_missing(&err) {
                    self.mark_removed(task.range);
                    return Ok(());
                }
                return Err(unsupported(&full, err));
            }
        };
        // The names, back to back in one buffer, and per name its span there and its kind:
        // listing a directory allocates nothing per entry.
        let mut text: Vec<u8> = Vec::new();
        let mut names: Vec<(Range<usize>, Kind)> = Vec::new();
        let mut buf: Vec<u8> = Vec::with_capacity(LISTING_BUFFER);
        let mut listing = rustix::fs::RawDir::new(dir.as_fd(), buf.spare_capacity_mut());
        while let Some(entry) = listing.next() {
            let entry = entry.map_err(|err| unsupported(&full, err.into()))?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." || name == b".git" {
                continue;
            }
            let start = text.len();
            text.extend_from_slice(name);
            names.push((start..text.len(), Kind::of_listing(entry.file_type())));
        }
        names.sort_unstable_by(|a, b| text[a.0.clone()].cmp(&text[b.0.clone()]));

        // The index entries below `dir`, grouped by their first component: a file (in all its
        // stages) or a directory (everything below it, skipped by binary search).
        let base = if task.dir.is_empty() {
            0
        } else {
            task.dir.len() + 1
        };
        let entries = index.entries();
        let mut groups: Vec<(&[u8], bool, Range<usize>)> = Vec::new();
        let mut i = task.range.start;
        while i < task.range.end {
            let path = entries[i].path(index);
            let rest = &path[base..];
            match rest.find_byte(b'/') {
                Some(slash) => {
                    let prefix = &path[..base + slash + 1];
                    let end = i + entries[i..task.range.end]
                        .partition_point(|e| e.path(index).starts_with(prefix));
                    groups.push((&rest[..slash], true, i..end));
                    i = end;
                }
                None => {
                    // Only unmerged entries share a path (stages 1 to 3, adjacent).
                    let mut end = i + 1;
                    while end < task.range.end
                        && entries[end].stage_raw() != 0
                        && entries[end].path(index) == path
                    {
                        end += 1;
                    }
                    groups.push((rest, false, i..end));
                    i = end;
                }
            }
        }
        // Git's order puts `a.txt` between the file `a` and the directory `a`; byte order by name
        // (files first) lines them up with the listing.
        groups.sort_by(|a, b| a.0.cmp(b.0).then(a.1.cmp(&b.1)));

        let mut path = task.dir.clone();
        let listed = |n: usize| {
            names
                .get(n)
                .map(|(span, kind)| (&text[span.clone()], *kind))
        };
        let (mut g, mut n) = (0, 0);
        while g < groups.len() || n < names.len() {
            let name: &[u8] = match (groups.get(g), listed(n)) {
                (Some(group), Some((listed, _))) => group.0.min(listed),
                (Some(group), None) => group.0,
                (None, Some((listed, _))) => listed,
                (None, None) => unreachable!("loop condition"),
            };
            let mut file_range = None;
            let mut dir_range = None;
            while let Some((group_name, is_dir, range)) = groups.get(g)
                && *group_name == name
            {
                if *is_dir {
                    dir_range = Some(range.clone());
                } else {
                    file_range = Some(range.clone());
                }
                g += 1;
            }
            let found = match listed(n) {
                Some((listed, kind)) if listed == name => {
                    n += 1;
                    let at = Meta::At {
                        dir: dir.as_fd(),
                        name: listed,
                    };
                    match kind {
                        Kind::Unknown => match at.get() {
                            Ok(info) => Found::of(info.kind, Meta::Have(info)),
                            Err(err) if is_missing(&err) => Found::Missing,
                            Err(err) => {
                                return Err(unsupported(&full.join(rel(listed)), err));
                            }
                        },
                        kind => Found::of(kind, at),
                    }
                }
                _ => Found::Missing,
            };
            path.truncate(task.dir.len());
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(name);
            self.visit_name(&path, found, file_range, dir_range, true, tasks, candidates)?;
        }
        Ok(())
    }

    /// One name: the index entries at it (`file`, all stages), those below it (`dir`), and what
    /// the worktree has there.
    #[allow(clippy::too_many_arguments)]
    fn visit_name(
        &self,
        path: &[u8],
        found: Found<'_>,
        file: Option<Range<usize>>,
        dir: Option<Range<usize>>,
        parent_tracked: bool,
        tasks: &mut Vec<Task>,
        candidates: &mut Vec<Candidate>,
    ) -> Result<(), Unsupported> {
        let entries = self.index.entries();
        let mut gitlink = false;
        if let Some(file) = &file {
            for i in file.clone() {
                gitlink |= entries[i].mode == Mode::COMMIT;
                let state = self.evaluate(&entries[i], &found, path)?;
                self.states[i].store(state, Relaxed);
            }
        }
        if let Some(dir) = &dir {
            if matches!(found, Found::Dir) {
                tasks.push(Task {
                    dir: path.to_vec(),
                    range: dir.clone(),
                });
            } else {
                self.mark_removed(dir.clone());
            }
        }
        let is_dir = match found {
            Found::File(_) | Found::Symlink(_) if file.is_none() => Some(false),
            Found::Dir if dir.is_none() && !gitlink => Some(true),
            _ => None,
        };
        if let Some(is_dir) = is_dir {
            candidates.push(Candidate {
                path: path.into(),
                is_dir,
                parent_tracked,
            });
        }
        Ok(())
    }

    /// gix's `compute_status`, up to where it would read the file.
    fn evaluate(
        &self,
        entry: &gix::index::Entry,
        found: &Found<'_>,
        path: &[u8],
    ) -> Result<u8, Unsupported> {
        if entry.flags.intersects(TRUSTED) {
            return Ok(state::CLEAN);
        }
        if entry.stage_raw() != 0 {
            return Ok(state::CONFLICT);
        }
        let meta = match found {
            Found::Missing => return Ok(state::REMOVED),
            Found::Dir if entry.mode.is_submodule() => return Ok(state::SUBMODULE),
            // A directory where a file was: gone, unless it is a repository, which reading decides.
            Found::Dir => return Ok(state::DIRTY),
            Found::Other => return Ok(state::UNADDABLE),
            Found::File(meta) | Found::Symlink(meta) => meta,
        };
        if entry.flags.contains(Flags::INTENT_TO_ADD) {
            return Ok(state::DIRTY);
        }
        let info = match meta.get() {
            Ok(info) => info,
            Err(err) if is_missing(&err) => return Ok(state::REMOVED),
            Err(err) => {
                return Err(unsupported(&self.workdir.join(rel(path)), err));
            }
        };
        let change = entry.mode.change_to_match_fs_with_values(
            info.kind == Kind::File,
            info.kind == Kind::Dir,
            info.kind == Kind::Symlink,
            info.executable,
            true,
            self.executable_bit,
        );
        match change {
            Some(Change::Type { .. } | Change::ExecutableBit) => return Ok(state::DIRTY),
            None => {}
        }
        let stat = info.stat;
        let vouches = stat.matches(&entry.stat, self.stat)
            && (!entry.id.is_empty_blob() || entry.stat.size == 0)
            && !stat.is_racy(self.index.timestamp(), self.stat);
        Ok(if vouches { state::CLEAN } else { state::DIRTY })
    }

    /// Entries whose path is not there in the worktree.
    fn mark_removed(&self, range: Range<usize>) {
        for i in range {
            let entry = &self.index.entries()[i];
            let state = if entry.flags.intersects(TRUSTED) {
                state::CLEAN
            } else if entry.stage_raw() != 0 {
                state::CONFLICT
            } else {
                state::REMOVED
            };
            self.states[i].store(state, Relaxed);
        }
    }
}

struct Queue {
    tasks: Vec<Task>,
    busy: usize,
    error: Option<Unsupported>,
}

/// Stat data as gix's `Stat::from_fs` records it (truncated to 32 bits like git's).
fn stat_of(
    mtime: (i64, i64),
    ctime: (i64, i64),
    dev: u64,
    ino: u64,
    uid: u32,
    gid: u32,
    size: u64,
) -> Stat {
    let time = |(secs, nsecs): (i64, i64)| {
        if secs >= 0 && (0..1_000_000_000).contains(&nsecs) {
            stat::Time {
                secs: secs as u32,
                nsecs: nsecs as u32,
            }
        } else {
            stat::Time::default()
        }
    };
    Stat {
        mtime: time(mtime),
        ctime: time(ctime),
        dev: dev as u32,
        ino: ino as u32,
        uid,
        gid,
        size: size as u32,
    }
}

fn rel(path: &[u8]) -> &Path {
    use std::os::unix::ffi::OsStrExt;
    Path::new(std::ffi::OsStr::from_bytes(path))
}

/// Not found, or a path component that is not a directory (`ENOTDIR`).
fn is_missing(err: &std::io::Error) -> bool {
    err.kind() == std::io::ErrorKind::NotFound || err.kind() == std::io::ErrorKind::NotADirectory
}

fn unsupported(path: &Path, err: std::io::Error) -> Unsupported {
    Unsupported(format!("{}: {err}", path.display()))
}
