//! The only module that touches git.
//!
//! Everything runs in-process on gix: discovery (from any directory of any linked worktree),
//! revision parsing, merge bases, shallow detection, and the two diffs the coverage gate needs —
//! the cumulative diff of a worktree against a base commit ([`Repo::worktree_changes`]) and the
//! diff of two commits ([`Repo::tree_changes`]). Both can be scoped to a set of path prefixes so
//! that a gate over a few targets costs O(targets), not O(repository).
//!
//! Paths leave this module as repo-relative, `/`-separated `String`s, sorted by bytes and unique,
//! which is the form [`crate::coverage`] expects.

mod at_commit;
mod command;
mod config_files;
mod contents;
mod debris;
mod diff;
mod error;
mod extensions;
mod held;
mod id;
mod ignored;
mod record;
mod remote;
mod snapshot;
mod unrecordable;
mod worktree;

use std::path::Path;

use gix::ObjectId;
use gix::bstr::ByteSlice;

pub use at_commit::PathKind;
pub use command::{LOCAL_ENV_VARS, local_env_vars};
pub use contents::{
    CONTENTS_LIMIT, Contents, FileAt, TreeFiles, Unshowable, unshowable, worktree_contents,
};
pub use debris::BrokenWorktree;
pub use diff::index::IndexError;
pub use diff::scope::Scope;
pub use diff::worktree::DiffEngine;
use error::classify_open_error;
pub use error::{CommandFailed, GitError, Result};
pub use extensions::UnsupportedFormat;
use extensions::unsupported as unsupported_extension;
pub use id::{BadCommitId, CommitId, blob_id, short_hex};
pub use ignored::Ignored;
pub use record::RecordFile;
pub use remote::{Pushed, RefUpdate};
pub use snapshot::{Identity, WorktreeCommit};
pub use unrecordable::Unrecorded;

/// A repository opened at one of its worktrees.
pub struct Repo {
    repo: gix::Repository,
    /// gix's common directory with its `..` resolved: a linked worktree's is
    /// `.git/worktrees/<name>/../..`, which would make the paths of a run (`status --json`'s
    /// `run_dir`) depend on the worktree a command ran in.
    common_dir: std::path::PathBuf,
    /// The index check [`Repo::prepare_worktree_diff`] started, for the next worktree diff.
    index_check: std::cell::RefCell<Option<diff::index::IndexVerification>>,
}

impl Repo {
    /// Finds the repository containing `dir`, honouring `GIT_DIR` and friends like git does, and
    /// refuses one owned by another user unless `safe.directory` allows it — gix would otherwise
    /// open it with reduced trust, which is not what a user of git expects.
    pub fn discover(dir: &Path) -> Result<Repo> {
        let repo = gix::ThreadSafeRepository::discover_with_environment_overrides(dir)
            .map_err(|err| classify_open_error(dir, err))?
            .to_thread_local();
        Repo::checked(repo)
    }

    /// The repository as opened, once it is one git-baton may read: trusted as git would trust
    /// it, with no extension it cannot honour.
    fn checked(repo: gix::Repository) -> Result<Repo> {
        let path = || repo.workdir().unwrap_or(repo.git_dir()).to_path_buf();
        if repo.git_dir_trust() != gix::sec::Trust::Full {
            return Err(GitError::DubiousOwnership { path: path() });
        }
        if let Some(what) = unsupported_extension(&repo) {
            return Err(GitError::UnsupportedRepository {
                path: path(),
                what: Box::new(what),
            });
        }
        Ok(Repo::new(repo))
    }

    fn new(repo: gix::Repository) -> Repo {
        let common = repo.common_dir();
        let common_dir = std::env::current_dir()
            .ok()
            .and_then(|cwd| gix::path::normalize(common.into(), &cwd))
            .map_or_else(|| common.to_path_buf(), std::borrow::Cow::into_owned);
        Repo {
            repo,
            common_dir,
            index_check: Default::default(),
        }
    }

    /// Says that a worktree diff is coming, so that the check of the index's checksum, which
    /// the diff waits for, can start now on another thread and overlap whatever the caller does
    /// first (resolving revisions, reading plans). Without this, it starts with the diff.
    pub fn prepare_worktree_diff(&self) {
        let mut check = self.index_check.borrow_mut();
        if check.is_none() {
            *check = Some(diff::index::start(&self.repo));
        }
    }

    /// The repository of the worktree containing `dir`, a worktree git-baton names itself (a
    /// run's): unlike [`Self::discover`], none of [`LOCAL_ENV_VARS`] applies, because they
    /// describe the repository git-baton was started in — with `GIT_DIR` set, discovery would
    /// open that one instead, and with `GIT_INDEX_FILE` set it would read that index.
    pub fn open_worktree(dir: &Path) -> Result<Repo> {
        let found =
            gix::ThreadSafeRepository::discover_opts(dir, Default::default(), Default::default())
                .map_err(|err| classify_open_error(dir, err))?
                .to_thread_local();
        // gix applies GIT_WORK_TREE, GIT_INDEX_FILE… to any repository it opens by path, but not
        // to a linked worktree it opens through the main repository's registry of them. (A main
        // worktree found here keeps them: gix offers no way to open one without; runs' worktrees
        // are always linked ones.)
        let repo = if found.kind() == gix::repository::Kind::LinkedWorkTree {
            let open = |err: &dyn std::fmt::Display| GitError::Open {
                path: dir.to_path_buf(),
                message: err.to_string(),
            };
            let main = found.main_repo().map_err(|err| open(&err))?;
            let git_dir = std::fs::canonicalize(found.git_dir());
            let proxy = main
                .worktrees()
                .map_err(|err| open(&err))?
                .into_iter()
                .find(|proxy| {
                    std::fs::canonicalize(proxy.git_dir()).ok() == git_dir.as_ref().ok().cloned()
                });
            match proxy {
                Some(proxy) => proxy
                    .into_repo_with_possibly_inaccessible_worktree()
                    .map_err(|err| open(&err))?,
                None => {
                    return Err(open(
                        &"it is not registered as a worktree of its repository",
                    ));
                }
            }
        } else {
            found
        };
        Repo::checked(repo)
    }

    /// The top of the worktree this repository was opened at.
    pub fn workdir(&self) -> Result<&Path> {
        self.repo.workdir().ok_or_else(|| GitError::Bare {
            path: self.repo.git_dir().display().to_string(),
        })
    }

    /// The directory shared by all linked worktrees (`git rev-parse --git-common-dir`).
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// This worktree's own git directory (differs from [`Self::common_dir`] in linked worktrees).
    pub fn git_dir(&self) -> &Path {
        self.repo.git_dir()
    }

    /// A string value of the repository's git configuration (`core.pager`), as git reads it:
    /// system, global, repository and worktree files, and `GIT_CONFIG_*` in the environment.
    pub fn config_string(&self, key: &str) -> Option<String> {
        self.repo
            .config_snapshot()
            .string(key)
            .map(|value| value.to_string())
    }

    pub fn is_shallow(&self) -> bool {
        self.repo.is_shallow().unwrap_or(false)
    }

    /// Resolves `rev` (anything `git rev-parse` takes) to a commit.
    pub fn resolve_commit(&self, rev: &str) -> Result<CommitId> {
        let id = self
            .repo
            .rev_parse_single(rev)
            .map_err(|_| GitError::UnknownRevision { rev: rev.into() })?;
        let object = id
            .object()
            .map_err(|_| GitError::UnknownRevision { rev: rev.into() })?;
        let commit = object
            .peel_to_commit()
            .map_err(|_| GitError::NotACommit { rev: rev.into() })?;
        Ok(CommitId::from_gix(commit.id))
    }

    /// The best common ancestor of two commits, as `git merge-base` picks it. A missing one is an
    /// error that says whether the clone is shallow: a base is never guessed.
    pub fn merge_base(
        &self,
        base: CommitId,
        head: CommitId,
        names: (&str, &str),
    ) -> Result<CommitId> {
        let found = self.repo.merge_base(base.gix(), head.gix()).map_err(|err| {
            GitError::op(
                format!("find the merge base of `{}` and `{}`", names.0, names.1),
                err,
            )
        });
        match found {
            Ok(Some(id)) => Ok(CommitId::from_gix(id.detach())),
            // A shallow boundary makes the walk fail or come back empty; both mean "not reachable".
            Ok(None) | Err(_) if self.is_shallow() => Err(GitError::NoMergeBase {
                base: names.0.into(),
                head: names.1.into(),
                shallow: true,
            }),
            Ok(None) => Err(GitError::NoMergeBase {
                base: names.0.into(),
                head: names.1.into(),
                shallow: false,
            }),
            Err(err) => Err(err),
        }
    }

    /// The branch HEAD is on (`main`, `baton/x`), or `None` when HEAD is detached or unborn.
    pub fn head_branch(&self) -> Result<Option<String>> {
        let name = self
            .repo
            .head_name()
            .map_err(|err| GitError::op("read HEAD", err))?;
        Ok(name.and_then(|n| {
            n.as_bstr()
                .to_str()
                .ok()
                .and_then(|s| s.strip_prefix("refs/heads/"))
                .map(String::from)
        }))
    }

    /// Whether `ancestor` is in the history of `commit` (or is it).
    pub fn is_ancestor(&self, ancestor: CommitId, commit: CommitId) -> bool {
        let (ancestor, commit) = (ancestor.gix(), commit.gix());
        ancestor == commit
            || matches!(self.repo.merge_base(ancestor, commit), Ok(Some(id)) if id.detach() == ancestor)
    }

    /// The commit HEAD points at, if any.
    pub fn head_commit(&self) -> Option<CommitId> {
        self.repo
            .head_id()
            .ok()
            .map(|id| CommitId::from_gix(id.detach()))
    }

    /// The tree of a commit.
    fn tree_of(&self, commit: CommitId) -> Result<ObjectId> {
        let commit = self
            .repo
            .find_commit(commit.gix())
            .map_err(|err| GitError::op(format!("read commit {commit}"), err))?;
        commit
            .tree_id()
            .map(|id| id.detach())
            .map_err(|err| GitError::op(format!("read the tree of commit {}", commit.id), err))
    }

    /// Every path that differs between two commits' trees (both sides of a rename), scoped.
    pub fn tree_changes(&self, from: CommitId, to: CommitId, scope: &Scope) -> Result<Vec<String>> {
        let (a, b) = (self.tree_of(from)?, self.tree_of(to)?);
        let mut out = Vec::new();
        // One reader for every prefix, so that the trees above them are read once.
        let mut trees = diff::tree::Trees::new(&self.repo);
        for prefix in scope.prefix_list() {
            trees.diff_at(a, b, &prefix, &mut out)?;
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// The cumulative diff of this worktree against `base` (design §2): every path whose content,
    /// mode or existence differs between `base`'s tree and the files as they are now, plus
    /// untracked files that are not ignored. Equals `git diff --no-renames --name-only BASE` ∪
    /// `git ls-files --others --exclude-standard`.
    pub fn worktree_changes(&self, base: CommitId, scope: &Scope) -> Result<Vec<String>> {
        self.worktree_changes_with(base, scope, DiffEngine::Auto)
    }

    /// [`Self::worktree_changes`] computed by the given engine; one that does not support this
    /// repository is an error (see [`DiffEngine`]).
    pub fn worktree_changes_with(
        &self,
        base: CommitId,
        scope: &Scope,
        engine: DiffEngine,
    ) -> Result<Vec<String>> {
        let tree = self.tree_of(base)?;
        let started = self.index_check.borrow_mut().take();
        // Damage can trip the diff before the check reports it (gix reads a split or sparse
        // index again itself): the checksum's verdict on the named file is the cause to report.
        diff::worktree::worktree_changes(&self.repo, tree, scope, engine, started)
            .map_err(|err| diff::index::damage(&self.repo).map_or(err, GitError::from))
    }

    /// The tree entry at `path` in `commit`, or `None` when the tree has nothing there.
    fn entry_at(
        &self,
        commit: CommitId,
        path: &str,
    ) -> Result<Option<gix::object::tree::Entry<'_>>> {
        let tree = self.tree_of(commit)?;
        let tree = self
            .repo
            .find_tree(tree)
            .map_err(|err| GitError::op(format!("read the tree of commit {commit}"), err))?;
        tree.lookup_entry_by_path(path)
            .map_err(|err| GitError::op(format!("look up `{path}` in commit {commit}"), err))
    }

    /// The contents of `path` in `commit`, or `None` when it is not a file there.
    pub fn read_file_at(&self, commit: CommitId, path: &str) -> Result<Option<Vec<u8>>> {
        match self.entry_at(commit, path)? {
            Some(entry) if entry.mode().is_blob() => {
                let blob = entry.object().map_err(|err| {
                    GitError::op(format!("read `{path}` in commit {commit}"), err)
                })?;
                Ok(Some(blob.detach().data))
            }
            _ => Ok(None),
        }
    }

    /// Messages of the commits reachable from `head` but not from `base`, newest first.
    pub fn commit_messages(
        &self,
        base: CommitId,
        head: CommitId,
    ) -> Result<Vec<(CommitId, String)>> {
        let action = || format!("list the commits of {base}..{head}");
        let walk = self
            .repo
            .rev_walk([head.gix()])
            .with_hidden([base.gix()])
            .sorting(gix::revision::walk::Sorting::ByCommitTime(
                Default::default(),
            ))
            .all()
            .map_err(|err| GitError::op(action(), err))?;
        let mut out = Vec::new();
        for info in walk {
            let info = info.map_err(|err| GitError::op(action(), err))?;
            let commit = info.object().map_err(|err| GitError::op(action(), err))?;
            let message = commit.message_raw_sloppy().to_str_lossy().into_owned();
            out.push((CommitId::from_gix(info.id), message));
        }
        Ok(out)
    }
}

/// Converts a repo-relative git path to the `String` form the rest of the crate uses.
fn path_string(path: &gix::bstr::BStr) -> String {
    path.to_str_lossy().into_owned()
}
