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

use super::index::IndexError;
use super::index_vs_base::{IndexVsBase, index_leaf};
use super::reader::{Worktree, WorktreeReader};
use super::scope::{Scope, is_within_bytes};
use super::tree::{Leaf, Trees};
#[cfg(unix)]
use super::untracked::untracked;
use super::untracked::untracked_path;
#[cfg(unix)]
use super::walk::{self, Walker};
use super::{GitError, Result, path_string};

/// Below this many index entries in scope the worktree is walked on the calling thread alone.
const PARALLEL_ENTRIES: usize = 4096;

/// What the worktree holds for one index entry, as far as the worktree side could tell.
pub(super) mod state {
    /// Not within the walked scope.
    pub const UNVISITED: u8 = 0;
    /// The worktree holds what the index holds.
    pub const CLEAN: u8 = 1;
    /// Something is there, but its stat does not vouch for the index: read it to know.
    pub const DIRTY: u8 = 2;
    /// Nothing is there (or a symlink is in its leading path).
    pub const REMOVED: u8 = 3;
    /// An unmerged entry.
    pub const CONFLICT: u8 = 4;
    /// A submodule's directory: its status decides.
    pub const SUBMODULE: u8 = 5;
    /// Something git cannot store (a fifo, a socket): changed, and never to be opened.
    pub const UNADDABLE: u8 = 6;
    /// A submodule gix's status found dirty in any way: git's ignore rules then decide.
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

pub(in crate::git) fn worktree_changes(
    repo: &gix::Repository,
    base_tree: ObjectId,
    scope: &Scope,
    engine: DiffEngine,
    mut started: Option<super::index::IndexVerification>,
) -> Result<Vec<String>> {
    let workdir = repo.workdir().ok_or_else(|| GitError::Bare {
        path: repo.git_dir().display().to_string(),
    })?;
    let prefixes = scope.prefix_list();
    let pass = Pass {
        repo,
        workdir,
        base_tree,
        scope,
        prefixes: &prefixes,
    };
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
            match walked_changes(pass, &loaded.index) {
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
                gix_status_changes(pass, &loaded.index)?
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

/// What a pass of the worktree diff compares with the index it is given: the worktree of
/// `repo` at `workdir` and `base_tree`, within `scope` (whose prefixes are `prefixes`).
#[derive(Clone, Copy)]
struct Pass<'a> {
    repo: &'a gix::Repository,
    workdir: &'a Path,
    base_tree: ObjectId,
    scope: &'a Scope,
    prefixes: &'a [String],
}

#[cfg(unix)]
fn walked_changes(pass: Pass<'_>, index: &gix::index::File) -> Result<Vec<String>, Fallback> {
    let Pass {
        repo,
        workdir,
        base_tree,
        scope,
        prefixes,
    } = pass;
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
    let mut changed = decide_all(pass, index, base, &states)?;
    changed.extend(untracked(repo, workdir, index, candidates)?);
    Ok(finish(changed, scope))
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
    pass: Pass<'_>,
    index: &gix::index::File,
    base: IndexVsBase,
    states: &[u8],
) -> Result<Vec<String>> {
    let Pass {
        repo,
        workdir,
        prefixes,
        ..
    } = pass;
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
            let base_leaf = base
                .base_leaf(index, first)
                .ok_or_else(|| GitError::Internal {
                    what: format!(
                        "index entry `{path}` in scope was not compared with the base tree"
                    ),
                    state: format!(
                        "worktree {}, index {} ({} entries), {} scope prefixes",
                        workdir.display(),
                        repo.index_path().display(),
                        entries.len(),
                        prefixes.len()
                    ),
                })?;
            if decide.changed(first, path, base_leaf, states[first])? {
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
    reader: Option<WorktreeReader<'a>>,
    submodules: Option<Vec<gix::Submodule<'a>>>,
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
                let modified = self.submodule_modified(path, index_leaf(entry))?;
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
            None => self
                .reader
                .insert(WorktreeReader::new(self.repo, self.index)?),
        };
        Ok(match reader.worktree_leaf(self.workdir, path)? {
            Worktree::Leaf(leaf) => Some(leaf) != base,
            Worktree::Absent => base.is_some(),
            Worktree::Unaddable => true,
        })
    }

    /// Whether the submodule at `path` is modified as `git diff` sees it: its checked-out
    /// commit differs from the index's, or it has dirty content that its ignore rule counts.
    fn submodule_modified(&mut self, path: &BStr, indexed: Option<Leaf>) -> Result<bool> {
        let action = || format!("compute the status of submodule `{path}`");
        let diff_ignore = self.diff_ignore_submodules()?;
        let submodules = match &mut self.submodules {
            Some(s) => s,
            None => self.submodules.insert(
                self.repo
                    .submodules()
                    .map_err(|err| GitError::op(action(), err))?
                    .map(Iterator::collect)
                    .unwrap_or_default(),
            ),
        };
        let Some(submodule) = submodules
            .iter()
            .find(|sm| sm.path().is_ok_and(|p| p.as_bstr() == path))
        else {
            return self.gitlink_modified(path, indexed, diff_ignore);
        };
        let configured = submodule
            .ignore()
            .map_err(|err| GitError::op(action(), err))?;
        let ignore = submodule_ignore(configured, diff_ignore);
        let status = submodule
            .status(ignore, true)
            .map_err(|err| GitError::op(action(), err))?;
        Ok(status.is_dirty() == Some(true))
    }

    /// [`Self::submodule_modified`] of a gitlink that no `.gitmodules` entry declares (an
    /// embedded repository `git add`ed, as vendoring scripts and agents do): git compares its
    /// checkout with the index all the same, and its tracked content under
    /// `diff.ignoreSubmodules` (by default, untracked content alone does not count).
    fn gitlink_modified(
        &mut self,
        path: &BStr,
        indexed: Option<Leaf>,
        diff_ignore: Option<SubmoduleIgnore>,
    ) -> Result<bool> {
        if self.worktree_differs(path, indexed)? {
            return Ok(true);
        }
        if submodule_ignore(None, diff_ignore) == SubmoduleIgnore::Dirty {
            return Ok(false);
        }
        let rel = gix::path::from_bstr(path)
            .map_err(|err| GitError::op(format!("use the path `{path}` on this system"), err))?;
        let dir = self.workdir.join(rel);
        // Not a repository (any more): the comparison above said what git says of it.
        let Ok(embedded) = gix::open(&dir) else {
            return Ok(false);
        };
        embedded
            .is_dirty()
            .map_err(|err| GitError::op(format!("compute the status of `{path}`"), err))
    }

    /// `diff.ignoreSubmodules`, which a submodule's own `ignore` overrides.
    fn diff_ignore_submodules(&self) -> Result<Option<SubmoduleIgnore>> {
        use gix::config::tree::Diff;
        self.repo
            .config_snapshot()
            .string(Diff::IGNORE_SUBMODULES)
            .map(|value| Diff::IGNORE_SUBMODULES.try_into_ignore(value))
            .transpose()
            .map_err(|err| GitError::op("read diff.ignoreSubmodules", err))
    }
}

use gix::submodule::config::Ignore as SubmoduleIgnore;

/// What of a submodule's worktree counts as a change, as `git diff` decides it: the submodule's
/// own `ignore` (`.git/config` over `.gitmodules`), else `diff.ignoreSubmodules`, else
/// untracked content does not count — `git diff` lists a submodule for modified content but not
/// for untracked files alone, which no commit of the superproject can carry. `all` hides the
/// submodule from `git diff` altogether; here its checked-out commit still counts, as a new commit
/// is work whatever the configuration says, and only its content is ignored.
fn submodule_ignore(
    own: Option<SubmoduleIgnore>,
    diff: Option<SubmoduleIgnore>,
) -> SubmoduleIgnore {
    match own.or(diff).unwrap_or(SubmoduleIgnore::Untracked) {
        SubmoduleIgnore::All => SubmoduleIgnore::Dirty,
        ignore => ignore,
    }
}

/// The fallback: gix's index→worktree status and directory walk supply the worktree side.
fn gix_status_changes(pass: Pass<'_>, index: &gix::index::File) -> Result<Vec<String>> {
    let patterns: Vec<BString> = match pass.scope {
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
    let worktree_walk = pass
        .repo
        .status(gix::progress::Discard)
        .map_err(|err| GitError::op("start the worktree status", err))?
        .index(gix::worktree::IndexPersistedOrInMemory::InMemory(for_gix))
        .untracked_files(gix::status::UntrackedFiles::Files)
        // Every dirty submodule is reported, whatever its configuration: which dirt counts is
        // decided below with git's precedence, which is not gix's.
        .index_worktree_submodules(gix::status::Submodule::Given {
            ignore: SubmoduleIgnore::None,
            check_dirty: true,
        })
        .index_worktree_rewrites(None)
        .into_index_worktree_iter(patterns)
        .map_err(|err| GitError::op("start the worktree status", err))?;

    let base = Trees::new(pass.repo).compare_index(pass.base_tree, index, pass.prefixes)?;

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
            Item::DirectoryContents { entry, .. } => {
                if let Some(path) = untracked_path(&entry, pass.workdir) {
                    // A tracked file whose place a nested repository took: git reports the
                    // tracked path as changed, not a new directory beside it.
                    let tracked = path.strip_suffix('/').filter(|file| {
                        index
                            .entry_by_path(gix::bstr::BStr::new(file.as_bytes()))
                            .is_some()
                    });
                    changed.push(tracked.map_or(path.clone(), str::to_owned));
                }
            }
            Item::Rewrite { .. } => unreachable!("rewrite tracking is disabled above"),
        }
    }
    // gix's status looks into the submodules `.gitmodules` declares; a gitlink it does not
    // declare is left for the decision, which compares it as git does.
    for (entry, state) in index.entries().iter().zip(states.iter_mut()) {
        if *state == state::CLEAN && entry.mode.is_submodule() && !entry.flags.intersects(trusted) {
            *state = state::SUBMODULE;
        }
    }
    // gix reports one conflict per path, on its first stage, which is the one decided.
    changed.extend(decide_all(pass, index, base, &states)?);
    Ok(finish(changed, pass.scope))
}
