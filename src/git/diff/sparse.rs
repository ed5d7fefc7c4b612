//! Sparse checkouts: the index as git reads it before it compares anything.
//!
//! Two things git does on reading an index that a diff must do too:
//!
//! - a *sparse index* stands for whole directories outside the sparse-checkout cones by one
//!   entry holding their tree; git expands such an entry into the files of that tree whenever it
//!   has to look below it. Here every one is expanded, into skip-worktree entries with no stat
//!   data, so that both engines see only file entries;
//! - in a sparse checkout (`core.sparseCheckout`, unless `sparse.expectFilesOutsideOfPatterns`),
//!   git takes a skip-worktree file that is present in the worktree anyway as no longer outside
//!   the cones, and compares it like any file (`clear_skip_worktree_from_present_files`).
//!
//! Both happen on the in-memory copy only; the index file is never written.

use std::path::Path;

use gix::bstr::ByteSlice;
use gix::index::entry::{Flags, Mode, Stat};
use gix::objs::tree::EntryKind;

use super::tree::Trees;
use super::{GitError, Result};

/// Expands sparse directory entries and clears the skip-worktree bit of present files, as git
/// would before a diff.
pub(in crate::git) fn prepare(
    repo: &gix::Repository,
    workdir: &Path,
    index: &mut gix::index::File,
) -> Result<()> {
    if index.is_sparse() {
        let path = index.path().to_path_buf();
        expand(repo, index, &path)?;
    }
    let config = repo.config_snapshot();
    let sparse_checkout = config.boolean("core.sparseCheckout").unwrap_or(false)
        && !config
            .boolean("sparse.expectFilesOutsideOfPatterns")
            .unwrap_or(false);
    if sparse_checkout {
        clear_present(workdir, index);
    }
    Ok(())
}

/// Replaces every sparse directory entry by the files of its tree. An entry whose id cannot be
/// read as a tree is damage of the index at `index_path`, and is reported as such.
fn expand(repo: &gix::Repository, index: &mut gix::index::State, index_path: &Path) -> Result<()> {
    let corrupt = |problem: String| {
        GitError::from(super::index::IndexError::Corrupt {
            path: index_path.to_path_buf(),
            problem,
        })
    };
    let sparse: Vec<(Vec<u8>, gix::ObjectId)> = index
        .entries()
        .iter()
        .filter(|entry| entry.mode.is_sparse())
        .map(|entry| (entry.path(index).to_vec(), entry.id))
        .collect();
    if sparse.is_empty() {
        return Ok(());
    }
    let mut files = Vec::new();
    let mut trees = Trees::new(repo);
    for (dir, tree) in &sparse {
        // The entry's path ends in `/`; its files' paths do not start with one more.
        let mut path = dir.strip_suffix(b"/").unwrap_or(dir).to_vec();
        trees
            .leaves(tree, &mut path, &mut |path, kind, id| {
                files.push((path.to_vec(), kind, id.to_owned()));
            })
            .map_err(|err| {
                corrupt(format!(
                    "its sparse directory entry `{}` names {tree}, which cannot be read as a tree ({err})",
                    dir.as_bstr()
                ))
            })?;
    }
    index.remove_entries(|_, _, entry| entry.mode.is_sparse());
    for (path, kind, id) in files {
        let mode = match kind {
            EntryKind::Blob => Mode::FILE,
            EntryKind::BlobExecutable => Mode::FILE_EXECUTABLE,
            EntryKind::Link => Mode::SYMLINK,
            EntryKind::Commit => Mode::COMMIT,
            EntryKind::Tree => {
                return Err(corrupt(format!(
                    "expanding its sparse directory entries gave a tree among the files: `{}`",
                    path.as_bstr()
                )));
            }
        };
        index.dangerously_push_entry(
            Stat::default(),
            id,
            Flags::SKIP_WORKTREE | Flags::EXTENDED,
            mode,
            path.as_bstr(),
        );
    }
    index.sort_entries();
    Ok(())
}

/// Clears the skip-worktree bit of every entry whose path exists (`lstat` succeeds), remembering
/// the last missing directory so that a directory outside the cones costs one `lstat`.
fn clear_present(workdir: &Path, index: &mut gix::index::State) {
    let mut missing_dir: Option<Vec<u8>> = None;
    let (entries, paths) = index.entries_mut_and_pathbacking();
    for entry in entries {
        if !entry.flags.contains(Flags::SKIP_WORKTREE) {
            continue;
        }
        let path = entry.path_in(paths);
        if let Some(dir) = &missing_dir
            && path.starts_with(dir)
            && path.get(dir.len()) == Some(&b'/')
        {
            continue;
        }
        let full = workdir.join(rel(path));
        if std::fs::symlink_metadata(&full).is_ok() {
            entry.flags.remove(Flags::SKIP_WORKTREE);
            continue;
        }
        // The highest missing ancestor, so its siblings' entries skip their `lstat` too.
        missing_dir = path
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'/')
            .map(|(at, _)| &path[..at])
            .find(|dir| std::fs::symlink_metadata(workdir.join(rel(dir))).is_err())
            .map(|dir| dir.to_vec());
    }
}

#[cfg(unix)]
fn rel(path: &[u8]) -> &Path {
    use std::os::unix::ffi::OsStrExt;
    Path::new(std::ffi::OsStr::from_bytes(path))
}

#[cfg(not(unix))]
fn rel(path: &[u8]) -> std::path::PathBuf {
    std::path::PathBuf::from(String::from_utf8_lossy(path).into_owned())
}
