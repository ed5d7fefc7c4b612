//! The scope prefixes of a walk: each is one name in its parent directory, visited like a name
//! of a listing once every ancestor is known to be a real directory.
//!
//! A scope of many prefixes (a plan of 100,000 file targets) has few parents: each ancestor is
//! `lstat`ed once however many prefixes lie below it, and each prefix is stat'ed relative to its
//! open parent (one `fstatat`, no path walk from the top), where stat'ing every ancestor and the
//! prefix by its full path cost four path walks per prefix and most of the gate's time.

use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};

use gix::bstr::ByteSlice;
use rustix::fs::OFlags;

use super::{Candidate, Found, Info, Meta, Task, Unsupported, Walker};
use super::{is_missing, rel, unsupported};

/// What the walk learnt about the directories prefixes sit in, kept across prefixes.
#[derive(Default)]
pub(super) struct Parents {
    /// Per ancestor looked at (repo-relative, no trailing `/`): whether it is a real directory,
    /// not a symlink to one (git's "no symlink in the leading path").
    real_dir: HashMap<Vec<u8>, bool>,
    /// The parent opened last and its descriptor (`None`: it vanished after its `lstat`).
    /// Prefixes come sorted, so those of one directory mostly come one after the other.
    open: Option<(Vec<u8>, Option<OwnedFd>)>,
    /// The parent whose trackedness was looked up last, and the answer.
    tracked: Option<(Vec<u8>, bool)>,
}

impl Walker<'_> {
    /// A scope prefix: its ancestors must be real directories, then it is one name like any other.
    pub(super) fn visit_prefix(
        &self,
        prefix: &[u8],
        parents: &mut Parents,
        tasks: &mut Vec<Task>,
        candidates: &mut Vec<Candidate>,
    ) -> Result<(), Unsupported> {
        // git never looks inside `.git`, and the index cannot hold paths there.
        if prefix.split(|b| *b == b'/').any(|c| c == b".git") {
            return Ok(());
        }
        let index = self.index;
        let mut dir_prefix = prefix.to_vec();
        dir_prefix.push(b'/');
        let file_range = index.entry_range(prefix.as_bstr());
        let dir_range = index.prefixed_entries_range(dir_prefix.as_bstr());

        for (at, _) in prefix.iter().enumerate().filter(|(_, b)| **b == b'/') {
            if !self.is_real_dir(&prefix[..at], parents)? {
                // A missing parent, a file, or a symlink in the leading path: nothing is there.
                for range in [file_range, dir_range].into_iter().flatten() {
                    self.mark_removed(range);
                }
                return Ok(());
            }
        }
        let (parent, name) = match prefix.iter().rposition(|b| *b == b'/') {
            Some(at) => (&prefix[..at], &prefix[at + 1..]),
            None => (&b""[..], prefix),
        };
        let found = match self.stat_in(parent, name, parents)? {
            Some(info) => Found::of(info.kind, Meta::Have(info)),
            None => Found::Missing,
        };
        let parent_tracked = parent.is_empty() || self.is_tracked_dir(parent, parents);
        self.visit_name(
            prefix,
            found,
            file_range,
            dir_range,
            parent_tracked,
            tasks,
            candidates,
        )
    }

    /// Whether the index has entries below the directory `dir` (not the top).
    fn is_tracked_dir(&self, dir: &[u8], parents: &mut Parents) -> bool {
        if let Some((last, tracked)) = &parents.tracked
            && last == dir
        {
            return *tracked;
        }
        let mut below = dir.to_vec();
        below.push(b'/');
        let tracked = self.index.prefixed_entries_range(below.as_bstr()).is_some();
        parents.tracked = Some((dir.to_vec(), tracked));
        tracked
    }

    /// Whether `dir` (an ancestor of a prefix) is a directory and not a symlink, `lstat`ed the
    /// first time it is asked about.
    fn is_real_dir(&self, dir: &[u8], parents: &mut Parents) -> Result<bool, Unsupported> {
        if let Some(&real) = parents.real_dir.get(dir) {
            return Ok(real);
        }
        let full = self.workdir.join(rel(dir));
        let real = match std::fs::symlink_metadata(&full) {
            Ok(meta) => meta.file_type().is_dir(),
            Err(err) if is_missing(&err) => false,
            Err(err) => return Err(unsupported(&full, err)),
        };
        parents.real_dir.insert(dir.to_vec(), real);
        Ok(real)
    }

    /// The `lstat` of `name` in the directory `parent` (checked to be a real directory), through
    /// a descriptor of the parent; `None` when nothing is there.
    fn stat_in(
        &self,
        parent: &[u8],
        name: &[u8],
        parents: &mut Parents,
    ) -> Result<Option<Info>, Unsupported> {
        let reopen = !matches!(&parents.open, Some((open, _)) if open == parent);
        if reopen {
            let full = self.workdir.join(rel(parent));
            let fd = match rustix::fs::open(
                &full,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            ) {
                Ok(fd) => Some(fd),
                Err(err) => {
                    let err = std::io::Error::from(err);
                    // Gone (or replaced by a file) since its `lstat`: nothing below it.
                    if !is_missing(&err) {
                        return Err(unsupported(&full, err));
                    }
                    None
                }
            };
            parents.open = Some((parent.to_vec(), fd));
        }
        let Some((_, Some(fd))) = &parents.open else {
            return Ok(None);
        };
        match rustix::fs::statat(fd.as_fd(), name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(Info::of_stat(&stat))),
            Err(err) => {
                let err = std::io::Error::from(err);
                if is_missing(&err) {
                    Ok(None)
                } else {
                    let full = self.workdir.join(rel(parent)).join(rel(name));
                    Err(unsupported(&full, err))
                }
            }
        }
    }
}
