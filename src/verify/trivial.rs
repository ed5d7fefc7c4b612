//! The two sides of the paths a target changed, fetched for the trivial-change rule
//! ([`crate::coverage::is_trivial`], which decides on values and reads nothing).
//!
//! The old side is always a blob of the base commit; the new side is a blob of the head (range
//! mode, a run's snapshot) or the worktree file. Each side is read up to
//! [`CONTENTS_LIMIT`]: a larger one is not read and makes the change real, and a worktree path
//! that is not a regular file or a symbolic link (a named pipe, a socket) is never opened, and
//! is a real change too. Only the paths of `changed` rows are fetched, and not past a row's first
//! real change, so a gate whose targets really changed reads one pair of files per target.

use std::collections::HashMap;
use std::path::Path;

use super::VerifyError;
use crate::coverage::{FileKind, Report, Side, is_trivial};
use crate::git::{CONTENTS_LIMIT, CommitId, Contents, FileAt, PathKind, Repo, TreeFiles};
use crate::plan::Plan;

/// Where the new side of each change is.
#[derive(Debug, Clone, Copy)]
pub enum NewSide<'a> {
    Commit(CommitId),
    Worktree(&'a Path),
}

/// The comparison of one base with one new side: each path's verdict is kept for the next
/// target or plan that asks, and each directory of the trees is listed once.
pub struct Sides<'r> {
    files: TreeFiles<'r>,
    base: CommitId,
    new: NewSide<'r>,
    known: HashMap<String, bool>,
}

impl<'r> Sides<'r> {
    pub fn new(repo: &'r Repo, base: CommitId, new: NewSide<'r>) -> Self {
        Sides {
            files: TreeFiles::new(repo),
            base,
            new,
            known: HashMap::new(),
        }
    }

    /// Whether `path` changed trivially from the base to the new side.
    pub fn trivial(&mut self, path: &str) -> Result<bool, VerifyError> {
        if let Some(&known) = self.known.get(path) {
            return Ok(known);
        }
        let old = self.files.file_at(self.base, path, CONTENTS_LIMIT)?;
        let new = match self.new {
            NewSide::Commit(head) => self.files.file_at(head, path, CONTENTS_LIMIT)?,
            NewSide::Worktree(root) => worktree_file(root, path)?,
        };
        let verdict = is_trivial(old.as_ref().map(side), new.as_ref().map(side));
        self.known.insert(path.to_owned(), verdict);
        Ok(verdict)
    }
}

/// Marks the `changed` rows of `report` whose every path changed trivially between `sides` as
/// `touched` (see [`Report::mark_touched`]).
pub fn mark_touched(
    report: &mut Report,
    plan: &Plan,
    sides: &mut Sides<'_>,
) -> Result<(), VerifyError> {
    report.mark_touched(plan, |path| sides.trivial(path))
}

fn side(file: &FileAt) -> Side<'_> {
    Side {
        kind: match file.kind {
            PathKind::Symlink => FileKind::Symlink,
            PathKind::Submodule | PathKind::Dir => FileKind::Submodule,
            PathKind::File => FileKind::File {
                executable: file.executable,
            },
        },
        bytes: match &file.contents {
            Contents::Bytes(bytes) => Some(bytes),
            Contents::Binary | Contents::Large(_) | Contents::Special(_) => None,
        },
    }
}

/// The worktree's file at `path` as a [`FileAt`]: `None` when there is none (deleted, or a
/// directory now — a submodule's checkout is one, and its change is real either way).
fn worktree_file(root: &Path, path: &str) -> Result<Option<FileAt>, VerifyError> {
    let full = root.join(path);
    // Behind a symbolic link to a directory, the path is not in the worktree as git sees it (a
    // tracked file there is deleted); what the link leads to is outside the repository's files.
    if behind_a_symlink(root, path) {
        return Ok(None);
    }
    let meta = match std::fs::symlink_metadata(&full) {
        Ok(meta) => meta,
        Err(err) if is_gone(&err) => return Ok(None),
        Err(source) => return Err(VerifyError::Read { path: full, source }),
    };
    let file_type = meta.file_type();
    if file_type.is_dir() {
        return Ok(None);
    }
    let kind = if file_type.is_symlink() {
        PathKind::Symlink
    } else {
        PathKind::File
    };
    // A symbolic link is read as git stores it (its target); anything else but a regular file
    // is never opened.
    let contents = match crate::git::worktree_contents(root, path, CONTENTS_LIMIT)? {
        Some(Contents::Binary) if kind == PathKind::File => read_whole(&full)?,
        Some(contents) => contents,
        None => return Ok(None),
    };
    Ok(Some(FileAt {
        kind,
        executable: meta.is_file() && crate::files::git_executable(&meta),
        contents,
    }))
}

/// Whether a directory on the way to `path` (below `root`) is a symbolic link, or no directory.
fn behind_a_symlink(root: &Path, path: &str) -> bool {
    let mut dir = root.to_path_buf();
    let mut components: Vec<&str> = path.split('/').collect();
    components.pop();
    components.into_iter().any(|component| {
        dir.push(component);
        !std::fs::symlink_metadata(&dir).is_ok_and(|meta| meta.is_dir())
    })
}

/// A binary file read whole, within the bound: it is compared byte for byte.
fn read_whole(full: &Path) -> Result<Contents, VerifyError> {
    match crate::files::read_limited_regular(full, CONTENTS_LIMIT) {
        Ok(Some(bytes)) => Ok(Contents::Bytes(bytes)),
        Ok(None) => Ok(Contents::Large(CONTENTS_LIMIT + 1)),
        // Replaced by something else since it was looked at: not read, so not trivial.
        Err(err)
            if err
                .get_ref()
                .is_some_and(|e| e.is::<crate::files::NotAFile>()) =>
        {
            Ok(Contents::Special("file"))
        }
        Err(err) if is_gone(&err) => Ok(Contents::Special("file")),
        Err(source) => Err(VerifyError::Read {
            path: full.to_path_buf(),
            source,
        }),
    }
}

fn is_gone(err: &std::io::Error) -> bool {
    matches!(
        err.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}
