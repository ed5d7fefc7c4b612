//! The cumulative diff of a worktree against a base commit.
//!
//! Git has no single command for it; the oracle is `git diff --no-renames --name-only BASE` ∪
//! `git ls-files --others --exclude-standard`. We compute it as two layers and reconcile them:
//!
//! - base tree → index (A): paths whose index entry differs from the base's leaf. Done here by
//!   walking only the base subtrees and index ranges under the scope's prefixes.
//! - index → worktree (B) and untracked files (U): gix's status, which lstats in parallel,
//!   applies `.gitattributes` filters and walks directories for untracked files.
//!
//! A path in A only or B only is changed. A path in both can cancel out (staged, then reverted in
//! the worktree), so for those few we read the worktree file through the same filters and compare
//! it with the base leaf directly, as `git diff` does after its stat check fails.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};
use gix::objs::tree::EntryKind;

use super::tree::{self, Entry};
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
    prefix.is_empty()
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

type Leaf = (EntryKind, ObjectId);

pub(super) fn worktree_changes(
    repo: &gix::Repository,
    base_tree: ObjectId,
    scope: &Scope,
) -> Result<Vec<String>> {
    let workdir = repo.workdir().ok_or_else(|| GitError::Bare {
        path: repo.git_dir().display().to_string(),
    })?;
    let index = repo
        .index_or_empty()
        .map_err(|err| GitError::op("read the index", err))?;
    let prefixes = scope.prefix_list();

    // Start the index→worktree walk first: it runs on gix's threads while we compare the base
    // tree with the index on this one.
    let patterns: Vec<BString> = match scope {
        Scope::All => Vec::new(),
        Scope::Prefixes(list) => list
            .iter()
            .map(|p| format!(":(top,literal){p}").into())
            .collect(),
    };
    let worktree_walk = repo
        .status(gix::progress::Discard)
        .map_err(|err| GitError::op("start the worktree status", err))?
        .index(gix::worktree::IndexPersistedOrInMemory::Persisted(
            index.clone(),
        ))
        .untracked_files(gix::status::UntrackedFiles::Files)
        .index_worktree_submodules(gix::status::Submodule::AsConfigured { check_dirty: false })
        .index_worktree_rewrites(None)
        .into_index_worktree_iter(patterns)
        .map_err(|err| GitError::op("start the worktree status", err))?;

    let staged = tree_vs_index(repo, base_tree, &index, &prefixes)?;

    let mut worktree_changed = BTreeSet::new();
    let mut changed: BTreeSet<String> = BTreeSet::new();
    for item in worktree_walk {
        let item = item.map_err(|err| GitError::op("compare the index with the worktree", err))?;
        use gix::status::index_worktree::Item;
        use gix::status::plumbing::index_as_worktree::EntryStatus;
        match item {
            Item::Modification {
                rela_path, status, ..
            } => match status {
                EntryStatus::Change(_)
                | EntryStatus::Conflict { .. }
                | EntryStatus::IntentToAdd => {
                    worktree_changed.insert(rela_path);
                }
                EntryStatus::NeedsUpdate(_) => {}
            },
            Item::DirectoryContents { entry, .. } => {
                if matches!(entry.status, gix::dir::entry::Status::Untracked) {
                    let mut path = path_string(entry.rela_path.as_bstr());
                    // A nested repository is listed as a directory, like `git ls-files --others`.
                    if entry.disk_kind == Some(gix::dir::entry::Kind::Repository) {
                        path.push('/');
                    }
                    changed.insert(path);
                }
            }
            Item::Rewrite { .. } => unreachable!("rewrite tracking is disabled above"),
        }
    }

    let mut reconcile = None;
    for (path, base_leaf) in &staged {
        if !worktree_changed.contains(path) {
            changed.insert(path_string(path.as_bstr()));
        }
        // In both layers: only the worktree against the base decides.
        else {
            let reconcile = match &mut reconcile {
                Some(r) => r,
                None => reconcile.insert(Reconcile::new(repo)?),
            };
            if reconcile.worktree_leaf(workdir, path.as_bstr())? != *base_leaf {
                changed.insert(path_string(path.as_bstr()));
            }
        }
    }
    for path in worktree_changed {
        if !staged.contains_key(&path) {
            changed.insert(path_string(path.as_bstr()));
        }
    }
    Ok(changed.into_iter().filter(|p| scope.contains(p)).collect())
}

/// Paths under `prefixes` whose index entry differs from the base tree, with the base's leaf
/// (`None` when the base does not have the path).
fn tree_vs_index(
    repo: &gix::Repository,
    base_tree: ObjectId,
    index: &gix::index::File,
    prefixes: &[String],
) -> Result<BTreeMap<BString, Option<Leaf>>> {
    let mut base: Vec<Entry> = Vec::new();
    for prefix in prefixes {
        tree::flatten_at(repo, base_tree, prefix, &mut base)?;
    }
    let base: BTreeMap<BString, Leaf> =
        base.into_iter().map(|e| (e.path, (e.kind, e.id))).collect();

    let mut staged = BTreeMap::new();
    let mut seen_in_index: BTreeSet<&BStr> = BTreeSet::new();
    for prefix in prefixes {
        let entries = index
            .prefixed_entries(prefix.as_bytes().as_bstr())
            .unwrap_or_default();
        for entry in entries {
            let path = entry.path(index);
            if !is_within(&path.to_str_lossy(), prefix) {
                continue;
            }
            seen_in_index.insert(path);
            let base_leaf = base.get(path).copied();
            let index_leaf = index_leaf(entry);
            // An unmerged path is never equal to the base: `git diff` lists it.
            let unmerged = entry.flags.stage() != gix::index::entry::Stage::Unconflicted;
            if unmerged || index_leaf != base_leaf {
                staged.insert(path.to_owned(), base_leaf);
            }
        }
    }
    for (path, leaf) in &base {
        if !seen_in_index.contains(path.as_bstr()) {
            staged.insert(path.clone(), Some(*leaf));
        }
    }
    Ok(staged)
}

fn index_leaf(entry: &gix::index::Entry) -> Option<Leaf> {
    use gix::index::entry::Mode;
    let kind = match entry.mode {
        Mode::FILE => EntryKind::Blob,
        Mode::FILE_EXECUTABLE => EntryKind::BlobExecutable,
        Mode::SYMLINK => EntryKind::Link,
        Mode::COMMIT => EntryKind::Commit,
        // Sparse directory entries stand for trees the base may hold leaf by leaf; treat as changed.
        _ => return None,
    };
    Some((kind, entry.id))
}

/// Reads worktree files the way git stores them, for the few paths whose two layers must be
/// reconciled.
struct Reconcile<'repo> {
    pipeline: gix::filter::Pipeline<'repo>,
    index: gix::worktree::IndexPersistedOrInMemory,
    file_mode: bool,
    symlinks: bool,
    hash_kind: gix::hash::Kind,
    buf: Vec<u8>,
}

impl<'repo> Reconcile<'repo> {
    fn new(repo: &'repo gix::Repository) -> Result<Self> {
        let (pipeline, index) = repo
            .filter_pipeline(None)
            .map_err(|err| GitError::op("set up the attribute filters", err))?;
        let config = repo.config_snapshot();
        Ok(Reconcile {
            pipeline,
            index,
            file_mode: config.boolean("core.fileMode").unwrap_or(true),
            symlinks: config.boolean("core.symlinks").unwrap_or(true),
            hash_kind: repo.object_hash(),
            buf: Vec::new(),
        })
    }

    /// The leaf the worktree holds at `path`, as it would be if added: kind and blob id.
    fn worktree_leaf(&mut self, workdir: &Path, path: &BStr) -> Result<Option<Leaf>> {
        let rel = gix::path::from_bstr(path)
            .map_err(|err| GitError::op(format!("use the path `{path}` on this system"), err))?;
        let full = workdir.join(&rel);
        let read_err =
            |err: std::io::Error| GitError::op(format!("read `{}`", full.display()), err);
        let meta = match std::fs::symlink_metadata(&full) {
            Ok(meta) => meta,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) if err.raw_os_error() == Some(20) => return Ok(None), // ENOTDIR: a parent is a file now
            Err(err) => return Err(read_err(err)),
        };
        let file_type = meta.file_type();
        if file_type.is_dir() {
            // A directory stands for a submodule only when it is a repository; then its HEAD counts.
            return Ok(gix::open(&full).ok().and_then(|sub| {
                sub.head_id()
                    .ok()
                    .map(|id| (EntryKind::Commit, id.detach()))
            }));
        }
        if file_type.is_symlink() && self.symlinks {
            let target = std::fs::read_link(&full).map_err(read_err)?;
            let bytes = gix::path::into_bstr(target).map_err(|err| {
                GitError::op(format!("read the symlink `{}`", full.display()), err)
            })?;
            let id = gix::objs::compute_hash(self.hash_kind, gix::objs::Kind::Blob, bytes.as_ref())
                .map_err(|err| GitError::op("hash a symlink", err))?;
            return Ok(Some((EntryKind::Link, id)));
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
            .convert_to_git(file, &rel, &self.index)
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
        Ok(Some((kind, id)))
    }

    fn index_entry_kind(&self, path: &BStr) -> Option<EntryKind> {
        let entry = self.index.entry_by_path(path)?;
        index_leaf(entry).map(|(kind, _)| kind)
    }
}

#[cfg(unix)]
fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
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
