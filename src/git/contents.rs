//! File contents read for people — the diffstat of a review, the diff of an attempt — with a
//! bound on what is read: an agent can leave a file of any size (a 1 GB sparse file costs it
//! nothing) or a named pipe where a file was, and neither may cost the reader memory or block it.
//!
//! Whether a file is binary is git's rule: a NUL byte within its first 8,000 bytes, which is all
//! that is read of a larger worktree file to decide it. A blob is measured by its object header
//! before it is read.

use std::collections::HashMap;
use std::path::Path;

use gix::ObjectId;
use gix::objs::tree::EntryKind;

use super::{CommitId, GitError, PathKind, Repo, Result};

/// The most bytes of one side of a file that are read to count or show its lines.
pub const CONTENTS_LIMIT: u64 = 8 * 1024 * 1024;

/// How much of a file git looks at to decide that it is binary (`buffer_is_binary`).
pub const BINARY_PREFIX: usize = 8000;

/// One side of a changed file, as far as it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contents {
    /// Read whole (at most [`CONTENTS_LIMIT`] bytes): for a symbolic link, its target, as git
    /// stores it.
    Bytes(Vec<u8>),
    /// A NUL byte within the first [`BINARY_PREFIX`] bytes, found without reading the rest.
    Binary,
    /// Larger than [`CONTENTS_LIMIT`]: this many bytes, not read.
    Large(u64),
    /// Something git cannot store (a named pipe, a socket, a device), never opened: its kind.
    Special(&'static str),
}

/// Why the two sides of a changed file cannot be shown as lines, in the order the readers
/// decide it: something git cannot store, then binary, then too large (the larger side's size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unshowable {
    Special(&'static str),
    Binary,
    Large(u64),
}

/// [`Unshowable`] for a file's two sides (`None`: absent on that side), or `None` when both can
/// be shown as text.
pub fn unshowable(sides: [Option<&Contents>; 2]) -> Option<Unshowable> {
    let present = || sides.iter().flatten();
    if let Some(kind) = present().find_map(|c| match c {
        Contents::Special(kind) => Some(*kind),
        _ => None,
    }) {
        return Some(Unshowable::Special(kind));
    }
    if present().any(|c| c.is_binary()) {
        return Some(Unshowable::Binary);
    }
    present()
        .filter_map(|c| match c {
            Contents::Large(bytes) => Some(*bytes),
            _ => None,
        })
        .max()
        .map(Unshowable::Large)
}

impl Contents {
    /// Whether git would call these contents binary (a NUL in the first 8,000 bytes).
    pub fn is_binary(&self) -> bool {
        match self {
            Contents::Bytes(bytes) => bytes[..bytes.len().min(BINARY_PREFIX)].contains(&0),
            Contents::Binary => true,
            Contents::Large(_) | Contents::Special(_) => false,
        }
    }
}

impl Repo {
    /// The contents of `path` in `commit`, or `None` when it is not a file there; a blob over
    /// `limit` bytes is measured, not read.
    pub fn contents_at(
        &self,
        commit: CommitId,
        path: &str,
        limit: u64,
    ) -> Result<Option<Contents>> {
        let entry = self.entry_at(commit, path)?;
        let Some(entry) = entry.filter(|e| e.mode().is_blob_or_symlink()) else {
            return Ok(None);
        };
        self.blob_contents(&entry, commit, path, limit).map(Some)
    }

    /// The blob of a tree entry, measured before it is read.
    fn blob_contents(
        &self,
        entry: &gix::object::tree::Entry<'_>,
        commit: CommitId,
        path: &str,
        limit: u64,
    ) -> Result<Contents> {
        let read = |err: &dyn std::fmt::Display| {
            GitError::op(format!("read `{path}` in commit {commit}"), err)
        };
        let header = self
            .repo
            .find_header(entry.object_id())
            .map_err(|err| read(&err))?;
        if header.size() > limit {
            return Ok(Contents::Large(header.size()));
        }
        let blob = entry.object().map_err(|err| read(&err))?;
        Ok(Contents::Bytes(blob.detach().data))
    }
}

/// A path as one commit's tree has it, for comparing the two sides of a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileAt {
    /// Never [`PathKind::Dir`].
    pub kind: PathKind,
    /// A regular file whose mode is 100755.
    pub executable: bool,
    /// The blob as [`Repo::contents_at`] reads it; a submodule's is its commit id in hex.
    pub contents: Contents,
}

/// Reads files of commits' trees, listing each directory once: a gate that compares the sides of
/// many paths in few directories costs a listing per directory and a lookup per path, not a walk
/// from the root per path.
pub struct TreeFiles<'r> {
    repo: &'r Repo,
    /// A directory's entries by name (`None`: not a directory in that commit).
    dirs: HashMap<(CommitId, String), Option<Listing>>,
}

/// A directory's entries by name: kind and object id.
type Listing = HashMap<Vec<u8>, (EntryKind, ObjectId)>;

impl<'r> TreeFiles<'r> {
    pub fn new(repo: &'r Repo) -> Self {
        TreeFiles {
            repo,
            dirs: HashMap::new(),
        }
    }

    /// What `path` is in `commit`, or `None` when it is nothing there or a directory; a blob
    /// over `limit` bytes is measured, not read.
    pub fn file_at(&mut self, commit: CommitId, path: &str, limit: u64) -> Result<Option<FileAt>> {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        let Some((kind, id)) = self.entry(commit, dir, name)? else {
            return Ok(None);
        };
        let contents = match PathKind::of(kind) {
            PathKind::Dir => return Ok(None),
            PathKind::Submodule => Contents::Bytes(id.to_string().into_bytes()),
            PathKind::File | PathKind::Symlink => self.blob(id, commit, path, limit)?,
        };
        Ok(Some(FileAt {
            kind: PathKind::of(kind),
            executable: kind == EntryKind::BlobExecutable,
            contents,
        }))
    }

    fn blob(&self, id: ObjectId, commit: CommitId, path: &str, limit: u64) -> Result<Contents> {
        let read = |err: &dyn std::fmt::Display| {
            GitError::op(format!("read `{path}` in commit {commit}"), err)
        };
        let header = self.repo.repo.find_header(id).map_err(|err| read(&err))?;
        if header.size() > limit {
            return Ok(Contents::Large(header.size()));
        }
        let object = self.repo.repo.find_object(id).map_err(|err| read(&err))?;
        Ok(Contents::Bytes(object.detach().data))
    }

    /// The entry `name` of directory `dir` in `commit`.
    fn entry(
        &mut self,
        commit: CommitId,
        dir: &str,
        name: &str,
    ) -> Result<Option<(EntryKind, ObjectId)>> {
        let key = (commit, dir.to_owned());
        if !self.dirs.contains_key(&key) {
            let listing = match self.dir_tree(commit, dir)? {
                Some(tree) => Some(self.list(tree)?),
                None => None,
            };
            self.dirs.insert(key.clone(), listing);
        }
        Ok(self.dirs[&key]
            .as_ref()
            .and_then(|entries| entries.get(name.as_bytes()).copied()))
    }

    /// The tree of directory `dir` in `commit`, if it is one.
    fn dir_tree(&mut self, commit: CommitId, dir: &str) -> Result<Option<ObjectId>> {
        if dir.is_empty() {
            return self.repo.tree_of(commit).map(Some);
        }
        let (parent, name) = dir.rsplit_once('/').unwrap_or(("", dir));
        Ok(match self.entry(commit, parent, name)? {
            Some((EntryKind::Tree, id)) => Some(id),
            _ => None,
        })
    }

    fn list(&self, tree: ObjectId) -> Result<Listing> {
        let found = self
            .repo
            .repo
            .find_tree(tree)
            .map_err(|err| GitError::op(format!("read tree {tree}"), err))?;
        let mut entries = HashMap::new();
        for entry in found.iter() {
            let entry = entry.map_err(|err| GitError::op(format!("read tree {tree}"), err))?;
            entries.insert(
                entry.filename().to_vec(),
                (entry.mode().kind(), entry.oid().to_owned()),
            );
        }
        Ok(entries)
    }
}

/// What the worktree at `root` holds at the repo-relative `path`, read as [`Contents`]: `None`
/// when there is no file there (nothing, or a directory). A symbolic link is not followed.
pub fn worktree_contents(root: &Path, path: &str, limit: u64) -> Result<Option<Contents>> {
    use std::io::Read;
    let full = root.join(path);
    let failed = |err: std::io::Error| GitError::op(format!("read `{}`", full.display()), err);
    let meta = match std::fs::symlink_metadata(&full) {
        Ok(meta) => meta,
        Err(err) if is_missing(&err) => return Ok(None),
        Err(err) => return Err(failed(err)),
    };
    let file_type = meta.file_type();
    if file_type.is_dir() {
        return Ok(None);
    }
    if file_type.is_symlink() {
        let target = std::fs::read_link(&full).map_err(failed)?;
        let bytes = gix::path::into_bstr(target)
            .map_err(|err| GitError::op(format!("read the symlink `{}`", full.display()), err))?;
        return Ok(Some(Contents::Bytes(bytes.into_owned().into())));
    }
    if !file_type.is_file() {
        return Ok(Some(Contents::Special(crate::files::kind_name(&file_type))));
    }
    let file = match crate::files::open_regular(&full) {
        Ok(file) => file,
        Err(err) => {
            // Replaced since it was looked at.
            return match err
                .get_ref()
                .and_then(|e| e.downcast_ref::<crate::files::NotAFile>())
            {
                Some(not_a_file) => Ok(Some(Contents::Special(not_a_file.kind))),
                None if is_missing(&err) => Ok(None),
                None => Err(failed(err)),
            };
        }
    };
    let len = file.metadata().map_err(failed)?.len();
    let mut bytes = Vec::new();
    let mut file = file.take(limit.saturating_add(1));
    (&mut file)
        .take(BINARY_PREFIX as u64)
        .read_to_end(&mut bytes)
        .map_err(failed)?;
    if bytes.contains(&0) {
        return Ok(Some(Contents::Binary));
    }
    if len > limit {
        return Ok(Some(Contents::Large(len)));
    }
    file.read_to_end(&mut bytes).map_err(failed)?;
    // It grew while it was read.
    if bytes.len() as u64 > limit {
        return Ok(Some(Contents::Large(bytes.len() as u64)));
    }
    Ok(Some(Contents::Bytes(bytes)))
}

fn is_missing(err: &std::io::Error) -> bool {
    err.kind() == std::io::ErrorKind::NotFound || err.kind() == std::io::ErrorKind::NotADirectory
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_sparse_file_is_binary_from_its_first_bytes_alone() {
        let dir = tempfile::tempdir().unwrap();
        let sparse = std::fs::File::create(dir.path().join("sparse")).unwrap();
        sparse.set_len(1024 * 1024 * 1024).unwrap();
        assert_eq!(
            worktree_contents(dir.path(), "sparse", CONTENTS_LIMIT).unwrap(),
            Some(Contents::Binary)
        );
        std::fs::write(dir.path().join("text"), "a\n".repeat(600)).unwrap();
        assert_eq!(
            worktree_contents(dir.path(), "text", 1000).unwrap(),
            Some(Contents::Large(1200))
        );
        assert_eq!(
            worktree_contents(dir.path(), "text", 1200).unwrap(),
            Some(Contents::Bytes("a\n".repeat(600).into_bytes()))
        );
        // git's rule: a NUL after the first 8,000 bytes does not make a file binary.
        let mut late = vec![b'x'; BINARY_PREFIX];
        late.push(0);
        assert!(!Contents::Bytes(late).is_binary());
        assert_eq!(worktree_contents(dir.path(), "missing", 10).unwrap(), None);
        assert_eq!(
            worktree_contents(dir.path(), "text/below", 10).unwrap(),
            None
        );
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_named_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        crate::testing::fifo(dir.path().join("fifo"));
        let _socket = std::os::unix::net::UnixListener::bind(dir.path().join("socket")).unwrap();
        std::os::unix::fs::symlink("fifo", dir.path().join("link")).unwrap();
        assert_eq!(
            worktree_contents(dir.path(), "fifo", 10).unwrap(),
            Some(Contents::Special("named pipe (FIFO)"))
        );
        assert_eq!(
            worktree_contents(dir.path(), "socket", 10).unwrap(),
            Some(Contents::Special("socket"))
        );
        // A link is what git stores: its target, whatever that names.
        assert_eq!(
            worktree_contents(dir.path(), "link", 10).unwrap(),
            Some(Contents::Bytes(b"fifo".to_vec()))
        );
    }
}
