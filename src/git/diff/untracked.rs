//! The untracked side of the cumulative diff: what `git ls-files --others --exclude-standard`
//! lists, from the names the worktree walk found that the index does not track.

use std::path::Path;

use gix::bstr::ByteSlice;

#[cfg(unix)]
use super::walk;
use super::{GitError, Result, path_string};

/// The untracked, not ignored files among the walk's candidates, as `git ls-files --others
/// --exclude-standard` lists them: files and symlinks not ignored; below an untracked directory
/// that is not ignored, the same recursively, except that a directory holding a repository is
/// listed as itself with a trailing `/`. `.git` is never looked into.
#[cfg(unix)]
pub(in crate::git) fn untracked(
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
pub(in crate::git) fn untracked_path(entry: &gix::dir::Entry, workdir: &Path) -> Option<String> {
    use gix::dir::entry::{Kind, Status};
    if entry.status != Status::Untracked || entry.disk_kind == Some(Kind::Untrackable) {
        return None;
    }
    let mut path = path_string(entry.rela_path.as_bstr());
    // A nested repository is listed as a directory, like `git ls-files --others` — unless what
    // gix found a repository through is a symlink to one, which git never follows: a file.
    if entry.disk_kind == Some(Kind::Repository)
        && !std::fs::symlink_metadata(workdir.join(&path)).is_ok_and(|m| m.file_type().is_symlink())
    {
        path.push('/');
    }
    Some(path)
}
