//! The cumulative diff of a worktree against a base commit.
//!
//! Git has no single command for it; the oracle is `git diff --no-renames --name-only BASE` ∪
//! `git ls-files --others --exclude-standard`. Per path it is decided from three sides:
//!
//! - the base tree's leaf and the index entry, compared by a merge of the two in path order
//!   (flattening a tree in git's stored order yields the index's byte order);
//! - what the worktree holds, as far as the index entry's stat data can vouch for it
//!   ([`walk`](super::walk), one pass over the worktree that also finds untracked names);
//! - where the stat data cannot vouch (or the entry is unmerged), the worktree file read through
//!   the same filters `git add` would apply and compared with the base leaf directly, as
//!   `git diff` does after its stat check fails.
//!
//! Untracked names are filtered through the ignore rules; whole untracked directories are read
//! through, as `git ls-files --others` does. When the repository's configuration is one the walk
//! does not model (case-insensitive or precomposing file systems, no symlinks, a git directory
//! inside the worktree) or the walk meets something unexpected, gix's own index→worktree status
//! answers the middle side instead ([`DiffEngine`] chooses; the product lets it be automatic).
//! Either way the index is first read as git reads it ([`sparse`](super::sparse)).

use std::path::Path;

use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};
use gix::index::entry::Flags;
use gix::objs::tree::EntryKind;

use super::index::IndexError;
use super::tree::{IndexVsBase, Leaf, Trees, index_leaf};
#[cfg(unix)]
use super::walk::{self, Walker};
use super::{GitError, Result, path_string};

/// Which part of the repository a diff looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every path.
    All,
    /// Only paths equal to or below one of these prefixes (normalized: no overlaps, no trailing `/`).
    Prefixes(Vec<String>),
}

impl Scope {
    /// A scope covering `prefixes`; an empty prefix means the whole repository. Nested prefixes
    /// are folded into their parent so no path is visited twice.
    pub fn prefixes<I, S>(prefixes: I) -> Scope
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut list: Vec<String> = prefixes
            .into_iter()
            .map(|p| p.as_ref().trim_matches('/').to_string())
            .collect();
        if list.iter().any(|p| p.is_empty()) {
            return Scope::All;
        }
        list.sort();
        list.dedup();
        let mut kept: Vec<String> = Vec::with_capacity(list.len());
        for p in list {
            // Sorted order puts a parent right before the paths below it ("a" < "a/b" < "a0").
            if kept.last().is_some_and(|parent| is_within(&p, parent)) {
                continue;
            }
            kept.push(p);
        }
        Scope::Prefixes(kept)
    }

    /// The prefixes to visit; the whole repository is the single empty prefix.
    pub(super) fn prefix_list(&self) -> Vec<String> {
        match self {
            Scope::All => vec![String::new()],
            Scope::Prefixes(list) => list.clone(),
        }
    }

    pub fn contains(&self, path: &str) -> bool {
        match self {
            Scope::All => true,
            Scope::Prefixes(list) => list.iter().any(|p| is_within(path, p)),
        }
    }
}

fn is_within(path: &str, prefix: &str) -> bool {
    is_within_bytes(path.as_bytes(), prefix.as_bytes())
}

fn is_within_bytes(path: &[u8], prefix: &[u8]) -> bool {
    prefix.is_empty()
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
}

/// Below this many index entries in scope the worktree is walked on the calling thread alone.
const PARALLEL_ENTRIES: usize = 4096;

/// What the worktree holds for one index entry, as far as the worktree side could tell.
mod state {
    #[cfg(unix)]
    pub use super::walk::state::*;

    #[cfg(not(unix))]
    pub const UNVISITED: u8 = 0;
    #[cfg(not(unix))]
    pub const CLEAN: u8 = 1;
    #[cfg(not(unix))]
    pub const DIRTY: u8 = 2;
    #[cfg(not(unix))]
    pub const REMOVED: u8 = 3;
    #[cfg(not(unix))]
    pub const CONFLICT: u8 = 4;
    #[cfg(not(unix))]
    pub const SUBMODULE: u8 = 5;
    #[cfg(not(unix))]
    pub const UNADDABLE: u8 = 6;
    /// A submodule gix's status found modified.
    pub const SUBMODULE_MODIFIED: u8 = 7;
}

/// Which code supplies the index→worktree side of the cumulative diff. Both give git's answer;
/// the differential test holds each to git on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiffEngine {
    /// The walk where it models the repository, gix's status elsewhere: what the product uses.
    #[default]
    Auto,
    /// git-baton's own one-pass walk of the worktree (Unix only). A repository it does not model
    /// (see the module documentation) is an error rather than a fallback.
    Walk,
    /// gix's index→worktree status and directory walk, for every repository.
    Status,
}

impl std::fmt::Display for DiffEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DiffEngine::Auto => "auto",
            DiffEngine::Walk => "walk",
            DiffEngine::Status => "status",
        })
    }
}

pub(super) fn worktree_changes(
    repo: &gix::Repository,
    base_tree: ObjectId,
    scope: &Scope,
    engine: DiffEngine,
    mut started: Option<super::index::Verification>,
) -> Result<Vec<String>> {
    let workdir = repo.workdir().ok_or_else(|| GitError::Bare {
        path: repo.git_dir().display().to_string(),
    })?;
    let prefixes = scope.prefix_list();
    let unsupported = |why: String| GitError::EngineUnsupported { engine, why };
    let walkable = match engine {
        DiffEngine::Status => false,
        DiffEngine::Auto => walk_unsupported(repo, workdir)?.is_none(),
        DiffEngine::Walk => match walk_unsupported(repo, workdir)? {
            Some(why) => return Err(unsupported(why)),
            None => true,
        },
    };
    // The index is verified while the diff runs; should it be replaced by another git process in
    // the meantime, the diff is computed again from the new one.
    for _ in 0..3 {
        let scoped = match scope {
            Scope::Prefixes(list) if walkable => {
                super::index::load_scoped(repo, list, started.take())?
            }
            _ => None,
        };
        let partial = scoped.is_some();
        let mut loaded = match scoped {
            Some(loaded) => loaded,
            None => super::index::load(repo, started.take())?,
        };
        super::sparse::prepare(repo, workdir, &mut loaded.index)?;
        let mut changed = None;
        if walkable {
            #[cfg(unix)]
            match walked_changes(repo, workdir, base_tree, scope, &prefixes, &loaded.index) {
                Ok(paths) => changed = Some(paths),
                Err(Fallback::Error(err)) => return Err(err),
                Err(Fallback::Unsupported(why)) if engine == DiffEngine::Walk => {
                    return Err(unsupported(why.0));
                }
                Err(Fallback::Unsupported(_)) => {}
            }
        }
        let changed = match changed {
            Some(changed) => changed,
            None => {
                if partial {
                    loaded = super::index::load(repo, None)?;
                    super::sparse::prepare(repo, workdir, &mut loaded.index)?;
                }
                gix_status_changes(repo, workdir, base_tree, scope, &prefixes, &loaded.index)?
            }
        };
        if loaded.finish()? {
            return Ok(changed);
        }
    }
    Err(IndexError::Unstable {
        path: repo.index_path(),
    }
    .into())
}

#[cfg(unix)]
enum Fallback {
    Error(GitError),
    Unsupported(walk::Unsupported),
}

#[cfg(unix)]
impl From<GitError> for Fallback {
    fn from(err: GitError) -> Self {
        Fallback::Error(err)
    }
}

/// Why [`walk`] does not model this repository's configuration (see the module documentation),
/// if it does not.
fn walk_unsupported(repo: &gix::Repository, workdir: &Path) -> Result<Option<String>> {
    if cfg!(not(unix)) {
        return Ok(Some("it needs a Unix file system".into()));
    }
    let fs = repo
        .filesystem_options()
        .map_err(|err| GitError::op("read the file-system configuration", err))?;
    if fs.ignore_case {
        return Ok(Some("core.ignoreCase is set".into()));
    }
    if fs.precompose_unicode {
        return Ok(Some("core.precomposeUnicode is set".into()));
    }
    if !fs.symlink {
        return Ok(Some("core.symlinks is off".into()));
    }
    // The walk skips every `.git`; a git directory by another name inside the worktree would
    // look untracked.
    let git_dir = std::fs::canonicalize(repo.git_dir());
    let top = std::fs::canonicalize(workdir);
    Ok(match (git_dir, top) {
        (Ok(git_dir), Ok(top)) => (git_dir.starts_with(&top)
            && !git_dir.starts_with(top.join(".git")))
        .then(|| "the git directory is inside the worktree under another name".into()),
        _ => Some("the git directory or the worktree cannot be resolved".into()),
    })
}

#[cfg(unix)]
fn walked_changes(
    repo: &gix::Repository,
    workdir: &Path,
    base_tree: ObjectId,
    scope: &Scope,
    prefixes: &[String],
    index: &gix::index::File,
) -> Result<Vec<String>, Fallback> {
    let fs = repo
        .filesystem_options()
        .map_err(|err| GitError::op("read the file-system configuration", err))?;
    let stat = repo
        .stat_options()
        .map_err(|err| GitError::op("read the stat configuration", err))?;
    let walker = Walker::new(workdir, index, stat, fs.executable_bit);
    let in_scope: usize = prefixes
        .iter()
        .map(|p| {
            index
                .prefixed_entries_range(p.as_bytes().as_bstr())
                .map_or(0, |r| r.len())
        })
        .sum();
    let threads = if in_scope >= PARALLEL_ENTRIES {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
    } else {
        1
    };
    // The base tree is compared with the index on this thread while the worktree is walked on
    // the others.
    let compare = || Trees::new(repo).compare_index(base_tree, index, prefixes);
    let (walked, base) = if threads > 1 {
        std::thread::scope(|s| {
            let walk = s.spawn(|| walker.run(prefixes, threads));
            let base = compare();
            (walk.join().expect("the worktree walk panicked"), base)
        })
    } else {
        (walker.run(prefixes, 1), compare())
    };
    let candidates = walked.map_err(Fallback::Unsupported)?;
    let base = base?;

    let states: Vec<u8> = (0..index.entries().len())
        .map(|i| walker.state(i))
        .collect();
    let mut changed = decide_all(repo, workdir, index, prefixes, base, &states)?;
    changed.extend(untracked(repo, workdir, index, candidates)?);
    Ok(finish(changed, scope))
}

/// The untracked, not ignored files among the walk's candidates, as `git ls-files --others
/// --exclude-standard` lists them: files and symlinks not ignored; below an untracked directory
/// that is not ignored, the same recursively, except that a directory holding a repository is
/// listed as itself with a trailing `/`. `.git` is never looked into.
#[cfg(unix)]
fn untracked(
    repo: &gix::Repository,
    workdir: &Path,
    index: &gix::index::File,
    mut candidates: Vec<walk::Candidate>,
) -> Result<Vec<String>> {
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    candidates.sort_by(|a, b| a.path.cmp(&b.path));
    let excludes = repo
        .excludes(
            index,
            None,
            gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
        )
        .map_err(|err| GitError::op("read the ignore rules", err))?;
    let mut untracked = Untracked {
        repo,
        workdir,
        index,
        excludes,
        git_dir: None,
        out: Vec::new(),
    };
    for candidate in candidates {
        let mut path = Vec::from(candidate.path);
        if !candidate.parent_tracked && untracked.inside_nested_repository(&path)? {
            continue;
        }
        if candidate.is_dir {
            if !untracked.excluded(&path, true)? {
                untracked.dir(&mut path)?;
            }
        } else if !untracked.excluded(&path, false)? {
            untracked.out.push(path_string(path.as_bstr()));
        }
    }
    Ok(untracked.out)
}

#[cfg(unix)]
struct Untracked<'a> {
    repo: &'a gix::Repository,
    workdir: &'a Path,
    index: &'a gix::index::File,
    excludes: gix::AttributeStack<'a>,
    /// Our own git directory, resolved, once a candidate repository needs comparing with it.
    git_dir: Option<Option<std::path::PathBuf>>,
    out: Vec<String>,
}

#[cfg(unix)]
impl Untracked<'_> {
    /// The ignore rules, including "below an ignored directory".
    fn excluded(&mut self, path: &[u8], is_dir: bool) -> Result<bool> {
        use gix::index::entry::Mode;
        let mode = if is_dir { Mode::DIR } else { Mode::FILE };
        self.excludes
            .at_entry(path.as_bstr(), Some(mode))
            .map(|platform| platform.is_excluded())
            .map_err(|err| {
                GitError::op(
                    format!("apply the ignore rules to `{}`", path.as_bstr()),
                    err,
                )
            })
    }

    /// An untracked, not ignored directory: itself if it holds a repository, else its contents.
    fn dir(&mut self, path: &mut Vec<u8>) -> Result<()> {
        if self.is_repository(path) {
            // `ls-files` drops `X/` when the index has an entry at `X` (a file a repository
            // replaced), as it drops any name the index has.
            if self.index.entry_range(path.as_bstr()).is_none() {
                let mut shown = path_string(path.as_bstr());
                shown.push('/');
                self.out.push(shown);
            }
            return Ok(());
        }
        let full = self.workdir.join(rel_path(path));
        // Like git, an unreadable directory lists nothing.
        let Ok(listing) = std::fs::read_dir(&full) else {
            return Ok(());
        };
        let mut entries: Vec<(Vec<u8>, std::fs::FileType)> = listing
            .filter_map(|entry| entry.ok())
            .filter_map(|entry| {
                use std::os::unix::ffi::OsStringExt;
                let file_type = entry.file_type().ok()?;
                Some((entry.file_name().into_vec(), file_type))
            })
            .filter(|(name, _)| name != b".git")
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let len = path.len();
        for (name, file_type) in entries {
            path.truncate(len);
            path.push(b'/');
            path.extend_from_slice(&name);
            if file_type.is_dir() {
                if !self.excluded(path, true)? {
                    self.dir(path)?;
                }
            } else if (file_type.is_file() || file_type.is_symlink())
                && !self.excluded(path, false)?
            {
                self.out.push(path_string(path.as_bstr()));
            }
        }
        path.truncate(len);
        Ok(())
    }

    /// Whether an untracked ancestor of `path` holds a repository, which git lists as itself and
    /// does not look into.
    fn inside_nested_repository(&mut self, path: &[u8]) -> Result<bool> {
        for (at, _) in path.iter().enumerate().filter(|(_, b)| **b == b'/') {
            let tracked = self
                .index
                .prefixed_entries_range(path[..=at].as_bstr())
                .is_some();
            if !tracked && self.is_repository(&path[..at]) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether the directory at `path` holds a repository (its `.git` is one), other than ours.
    fn is_repository(&mut self, path: &[u8]) -> bool {
        let dot_git = self.workdir.join(rel_path(path)).join(".git");
        if gix::discover::is_git(&dot_git).is_err() {
            return false;
        }
        let ours = self
            .git_dir
            .get_or_insert_with(|| std::fs::canonicalize(self.repo.git_dir()).ok());
        std::fs::canonicalize(&dot_git).ok() != *ours
    }
}

#[cfg(unix)]
fn rel_path(path: &[u8]) -> &Path {
    use std::os::unix::ffi::OsStrExt;
    Path::new(std::ffi::OsStr::from_bytes(path))
}

/// The path `git ls-files --others` shows for a directory-walk entry, if it shows one.
fn untracked_path(entry: &gix::dir::Entry) -> Option<String> {
    use gix::dir::entry::{Kind, Status};
    if entry.status != Status::Untracked || entry.disk_kind == Some(Kind::Untrackable) {
        return None;
    }
    let mut path = path_string(entry.rela_path.as_bstr());
    // A nested repository is listed as a directory, like `git ls-files --others`.
    if entry.disk_kind == Some(Kind::Repository) {
        path.push('/');
    }
    Some(path)
}

/// Restricts to the scope, sorts and dedups.
fn finish(mut changed: Vec<String>, scope: &Scope) -> Vec<String> {
    changed.retain(|p| scope.contains(p));
    changed.sort_unstable();
    changed.dedup();
    changed
}

/// Decides every path in scope from the base, the index and what the worktree side found.
fn decide_all(
    repo: &gix::Repository,
    workdir: &Path,
    index: &gix::index::File,
    prefixes: &[String],
    base: IndexVsBase,
    states: &[u8],
) -> Result<Vec<String>> {
    let mut decide = Decide {
        repo,
        workdir,
        index,
        reader: None,
        submodules: None,
    };
    let entries = index.entries();
    let mut changed = Vec::new();
    for prefix in prefixes {
        let prefix = prefix.as_bytes();
        let range = index
            .prefixed_entries_range(prefix.as_bstr())
            .unwrap_or(0..0);
        let mut i = range.start;
        while i < range.end {
            // The stages of an unmerged path follow its first entry, which stands for all.
            let mut end = i + 1;
            while end < range.end
                && entries[end].stage_raw() != 0
                && entries[end].path(index) == entries[i].path(index)
            {
                end += 1;
            }
            let first = i;
            i = end;
            if base.same[first] && states[first] == state::CLEAN {
                continue;
            }
            let path = entries[first].path(index);
            // Entries sharing the prefix's bytes without being below it ("a.txt" for "a").
            if !is_within_bytes(path, prefix) {
                continue;
            }
            if decide.changed(first, path, base.base_leaf(index, first), states[first])? {
                changed.push(path_string(path));
            }
        }
    }
    changed.extend(base.base_only);
    Ok(changed)
}

struct Decide<'a> {
    repo: &'a gix::Repository,
    workdir: &'a Path,
    index: &'a gix::index::File,
    reader: Option<Reader<'a>>,
    submodules: Option<gix::status::index_worktree::BuiltinSubmoduleStatus>,
}

impl<'a> Decide<'a> {
    /// Whether the path of index entry `i` (the first of its stages) differs between the base and
    /// the worktree.
    fn changed(&mut self, i: usize, path: &BStr, base: Option<Leaf>, state: u8) -> Result<bool> {
        let entry = &self.index.entries()[i];
        let staged = index_leaf(entry) != base;
        match state {
            state::CLEAN => Ok(staged),
            state::REMOVED => Ok(base.is_some()),
            state::UNADDABLE => Ok(true),
            state::SUBMODULE | state::SUBMODULE_MODIFIED => {
                let modified =
                    state == state::SUBMODULE_MODIFIED || self.submodule_modified(entry, path)?;
                match (modified, staged) {
                    (false, _) => Ok(staged),
                    (true, false) => Ok(true),
                    (true, true) => self.worktree_differs(path, base),
                }
            }
            // DIRTY and CONFLICT (git compares an unmerged path's worktree file with the base);
            // UNVISITED cannot happen for an entry in scope, and reading is always right.
            _ => {
                debug_assert_ne!(state, state::UNVISITED, "entry {path} was not visited");
                self.worktree_differs(path, base)
            }
        }
    }

    fn worktree_differs(&mut self, path: &BStr, base: Option<Leaf>) -> Result<bool> {
        let reader = match &mut self.reader {
            Some(reader) => reader,
            None => self.reader.insert(Reader::new(self.repo, self.index)?),
        };
        Ok(match reader.worktree_leaf(self.workdir, path)? {
            Worktree::Leaf(leaf) => Some(leaf) != base,
            Worktree::Absent => base.is_some(),
            Worktree::Unaddable => true,
        })
    }

    /// gix's submodule status, as its index→worktree status computes it.
    fn submodule_modified(&mut self, entry: &gix::index::Entry, path: &BStr) -> Result<bool> {
        use gix::status::plumbing::index_as_worktree::traits::SubmoduleStatus;
        let action = || format!("compute the status of submodule `{path}`");
        let submodules = match &mut self.submodules {
            Some(s) => s,
            None => self.submodules.insert(
                gix::status::index_worktree::BuiltinSubmoduleStatus::new(
                    self.repo.clone().into_sync(),
                    gix::status::Submodule::AsConfigured { check_dirty: false },
                )
                .map_err(|err| GitError::op(action(), err))?,
            ),
        };
        Ok(submodules
            .status(entry, path)
            .map_err(|err| GitError::op(action(), err))?
            .is_some())
    }
}

/// The fallback: gix's index→worktree status and directory walk supply the worktree side.
fn gix_status_changes(
    repo: &gix::Repository,
    workdir: &Path,
    base_tree: ObjectId,
    scope: &Scope,
    prefixes: &[String],
    index: &gix::index::File,
) -> Result<Vec<String>> {
    let patterns: Vec<BString> = match scope {
        Scope::All => Vec::new(),
        Scope::Prefixes(list) => list
            .iter()
            .map(|p| format!(":(top,literal){p}").into())
            .collect(),
    };
    // gix's directory walk trusts a skip-worktree or assume-unchanged entry to be what the index
    // says without looking (a file where there is a directory now; a directory of skip-worktree
    // entries as tracked, whatever it holds), where git reads the worktree. So gix gets a copy
    // without those bits, and their entries are taken as clean below, as git takes them.
    let trusted = Flags::SKIP_WORKTREE | Flags::ASSUME_VALID;
    let mut for_gix = index.clone();
    for entry in for_gix.entries_mut() {
        entry.flags.remove(trusted);
    }
    let worktree_walk = repo
        .status(gix::progress::Discard)
        .map_err(|err| GitError::op("start the worktree status", err))?
        .index(gix::worktree::IndexPersistedOrInMemory::InMemory(for_gix))
        .untracked_files(gix::status::UntrackedFiles::Files)
        .index_worktree_submodules(gix::status::Submodule::AsConfigured { check_dirty: false })
        .index_worktree_rewrites(None)
        .into_index_worktree_iter(patterns)
        .map_err(|err| GitError::op("start the worktree status", err))?;

    let base = Trees::new(repo).compare_index(base_tree, index, prefixes)?;

    let mut states = vec![state::CLEAN; index.entries().len()];
    let mut changed = Vec::new();
    for item in worktree_walk {
        let item = item.map_err(|err| GitError::op("compare the index with the worktree", err))?;
        use gix::status::index_worktree::Item;
        use gix::status::plumbing::index_as_worktree::{Change, EntryStatus};
        match item {
            Item::Modification {
                entry_index,
                status,
                ..
            } => {
                states[entry_index] = match status {
                    _ if index.entries()[entry_index].flags.intersects(trusted) => state::CLEAN,
                    EntryStatus::Change(Change::Removed) => state::REMOVED,
                    EntryStatus::Change(Change::SubmoduleModification(_)) => {
                        state::SUBMODULE_MODIFIED
                    }
                    EntryStatus::Change(_) | EntryStatus::IntentToAdd => state::DIRTY,
                    EntryStatus::Conflict { .. } => state::CONFLICT,
                    EntryStatus::NeedsUpdate(_) => state::CLEAN,
                }
            }
            Item::DirectoryContents { entry, .. } => changed.extend(untracked_path(&entry)),
            Item::Rewrite { .. } => unreachable!("rewrite tracking is disabled above"),
        }
    }
    // gix reports one conflict per path, on its first stage, which is the one decided.
    changed.extend(decide_all(repo, workdir, index, prefixes, base, &states)?);
    Ok(finish(changed, scope))
}

/// What the worktree holds at a path, as `git add` would record it.
enum Worktree {
    Absent,
    Leaf(Leaf),
    /// Something git cannot store, like a fifo: never opened, always a change.
    Unaddable,
}

/// Reads worktree files the way git stores them, for the paths whose stat data cannot vouch for
/// the index.
struct Reader<'a> {
    pipeline: gix::filter::Pipeline<'a>,
    index: &'a gix::index::File,
    file_mode: bool,
    symlinks: bool,
    hash_kind: gix::hash::Kind,
    buf: Vec<u8>,
}

impl<'a> Reader<'a> {
    fn new(repo: &'a gix::Repository, index: &'a gix::index::File) -> Result<Self> {
        let action = "set up the attribute filters";
        let attributes = repo
            .attributes_only(
                index,
                gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
            )
            .map_err(|err| GitError::op(action, err))?;
        let pipeline = gix::filter::Pipeline::new(repo, attributes.detach())
            .map_err(|err| GitError::op(action, err))?;
        let config = repo.config_snapshot();
        Ok(Reader {
            pipeline,
            index,
            file_mode: config.boolean("core.fileMode").unwrap_or(true),
            symlinks: config.boolean("core.symlinks").unwrap_or(true),
            hash_kind: repo.object_hash(),
            buf: Vec::new(),
        })
    }

    /// The leaf the worktree holds at `path`, as it would be if added: kind and blob id.
    fn worktree_leaf(&mut self, workdir: &Path, path: &BStr) -> Result<Worktree> {
        let rel = gix::path::from_bstr(path)
            .map_err(|err| GitError::op(format!("use the path `{path}` on this system"), err))?;
        let full = workdir.join(&rel);
        let read_err =
            |err: std::io::Error| GitError::op(format!("read `{}`", full.display()), err);
        let meta = match std::fs::symlink_metadata(&full) {
            Ok(meta) => meta,
            Err(err)
                if err.kind() == std::io::ErrorKind::NotFound
                    || err.kind() == std::io::ErrorKind::NotADirectory =>
            {
                return Ok(Worktree::Absent);
            }
            Err(err) => return Err(read_err(err)),
        };
        let file_type = meta.file_type();
        if file_type.is_dir() {
            // A directory stands for a submodule only when it is a repository; then its HEAD counts.
            return Ok(gix::open(&full)
                .ok()
                .and_then(|sub| {
                    sub.head_id()
                        .ok()
                        .map(|id| Worktree::Leaf((EntryKind::Commit, id.detach())))
                })
                .unwrap_or(Worktree::Absent));
        }
        if file_type.is_symlink() && self.symlinks {
            let target = std::fs::read_link(&full).map_err(read_err)?;
            let bytes = gix::path::into_bstr(target).map_err(|err| {
                GitError::op(format!("read the symlink `{}`", full.display()), err)
            })?;
            let id = gix::objs::compute_hash(self.hash_kind, gix::objs::Kind::Blob, bytes.as_ref())
                .map_err(|err| GitError::op("hash a symlink", err))?;
            return Ok(Worktree::Leaf((EntryKind::Link, id)));
        }
        if !file_type.is_file() && !file_type.is_symlink() {
            return Ok(Worktree::Unaddable);
        }
        let executable = if self.file_mode {
            is_executable(&meta)
        } else {
            // Without core.fileMode git keeps the bit the index has.
            self.index_entry_kind(path) == Some(EntryKind::BlobExecutable)
        };
        let file = std::fs::File::open(&full).map_err(read_err)?;
        self.buf.clear();
        let converted = self
            .pipeline
            .convert_to_git(file, &rel, self.index)
            .map_err(|err| {
                GitError::op(format!("apply the filters of `{}`", full.display()), err)
            })?;
        use gix::filter::plumbing::pipeline::convert::ToGitOutcome;
        use std::io::Read;
        match converted {
            ToGitOutcome::Unchanged(mut r) => {
                r.read_to_end(&mut self.buf).map_err(read_err)?;
            }
            ToGitOutcome::Process(mut r) => {
                r.read_to_end(&mut self.buf).map_err(read_err)?;
            }
            ToGitOutcome::Buffer(bytes) => self.buf.extend_from_slice(bytes),
        }
        let id = gix::objs::compute_hash(self.hash_kind, gix::objs::Kind::Blob, &self.buf)
            .map_err(|err| GitError::op("hash a file", err))?;
        let kind = if executable {
            EntryKind::BlobExecutable
        } else {
            EntryKind::Blob
        };
        Ok(Worktree::Leaf((kind, id)))
    }

    fn index_entry_kind(&self, path: &BStr) -> Option<EntryKind> {
        let entry = self.index.entry_by_path(path)?;
        index_leaf(entry).map(|(kind, _)| kind)
    }
}

/// Git records a file as executable when its owner may execute it.
#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o100 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &std::fs::Metadata) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_folds_nested_prefixes_and_keeps_siblings() {
        let scope = Scope::prefixes(["src/parser/", "src", "docs/a.md", "docs/a.mdx", "src0"]);
        assert_eq!(
            scope,
            Scope::Prefixes(vec![
                "docs/a.md".into(),
                "docs/a.mdx".into(),
                "src".into(),
                "src0".into()
            ])
        );
        assert!(scope.contains("src/parser/x.rs"));
        assert!(scope.contains("docs/a.md"));
        assert!(!scope.contains("docs/a.mdy"));
        assert!(!scope.contains("src1/x"));
        assert_eq!(Scope::prefixes(["a", ""]), Scope::All);
    }
}
