//! Worktree files read the way `git add` would store them, for the paths whose stat data cannot
//! vouch for the index: through the attribute filters, with git's rules for modes and symlinks.

use std::path::Path;

use gix::bstr::BStr;
use gix::objs::tree::EntryKind;

use super::index_vs_base::index_leaf;
use super::tree::Leaf;
use super::{GitError, Result};

/// What the worktree holds at a path, as `git add` would record it.
pub(in crate::git) enum Worktree {
    Absent,
    Leaf(Leaf),
    /// Something git cannot store, like a fifo: never opened, always a change.
    Unaddable,
}

/// Reads worktree files the way git stores them, for the paths whose stat data cannot vouch for
/// the index.
pub(in crate::git) struct WorktreeReader<'a> {
    pipeline: gix::filter::Pipeline<'a>,
    index: &'a gix::index::File,
    file_mode: bool,
    symlinks: bool,
    hash_kind: gix::hash::Kind,
    buf: Vec<u8>,
}

impl<'a> WorktreeReader<'a> {
    pub fn new(repo: &'a gix::Repository, index: &'a gix::index::File) -> Result<Self> {
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
        Ok(WorktreeReader {
            pipeline,
            index,
            file_mode: config.boolean("core.fileMode").unwrap_or(true),
            symlinks: config.boolean("core.symlinks").unwrap_or(true),
            hash_kind: repo.object_hash(),
            buf: Vec::new(),
        })
    }

    /// The leaf the worktree holds at `path`, as it would be if added: kind and blob id.
    pub fn worktree_leaf(&mut self, workdir: &Path, path: &BStr) -> Result<Worktree> {
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
            crate::files::git_executable(&meta)
        } else {
            // Without core.fileMode git keeps the bit the index has.
            self.index_entry_kind(path) == Some(EntryKind::BlobExecutable)
        };
        // Never a blocking open: the path may have become a named pipe since it was looked at.
        let file = match crate::files::open_regular(&full) {
            Ok(file) => file,
            Err(err) if is_not_a_file(&err) => return Ok(Worktree::Unaddable),
            Err(err)
                if err.kind() == std::io::ErrorKind::NotFound
                    || err.kind() == std::io::ErrorKind::NotADirectory =>
            {
                return Ok(Worktree::Absent);
            }
            Err(err) => return Err(read_err(err)),
        };
        let len = file.metadata().map_err(read_err)?.len();
        self.buf.clear();
        let converted = self
            .pipeline
            .convert_to_git(file, &rel, self.index)
            .map_err(|err| {
                GitError::op(format!("apply the filters of `{}`", full.display()), err)
            })?;
        use gix::filter::plumbing::pipeline::convert::ToGitOutcome;
        use std::io::Read;
        let id = match converted {
            // No filter applies: hashed as it streams by, so that a large file costs no memory.
            ToGitOutcome::Unchanged(mut r) => gix::objs::compute_stream_hash(
                self.hash_kind,
                gix::objs::Kind::Blob,
                &mut r,
                len,
                &mut gix::progress::Discard,
                &std::sync::atomic::AtomicBool::new(false),
            )
            .map_err(|err| GitError::op(format!("read `{}`", full.display()), err))?,
            ToGitOutcome::Process(mut r) => {
                r.read_to_end(&mut self.buf).map_err(read_err)?;
                hash_blob(self.hash_kind, &self.buf)?
            }
            ToGitOutcome::Buffer(bytes) => hash_blob(self.hash_kind, bytes)?,
        };
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

fn hash_blob(kind: gix::hash::Kind, data: &[u8]) -> Result<gix::ObjectId> {
    gix::objs::compute_hash(kind, gix::objs::Kind::Blob, data)
        .map_err(|err| GitError::op("hash a file", err))
}

/// The path is no regular file (any more): git cannot store it.
fn is_not_a_file(err: &std::io::Error) -> bool {
    err.get_ref()
        .is_some_and(|e| e.is::<crate::files::NotAFile>())
}
