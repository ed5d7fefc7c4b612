//! Worktree registrations that a killed creation left half-written, and ref locks that a
//! killed git left in a namespace of ours.
//!
//! Registering a linked worktree writes several files under `<common-dir>/worktrees/<name>/`
//! (`gitdir`, `commondir`, `HEAD`) one after the other. A creation killed between them leaves an
//! entry that neither git nor gix can use, and gix then refuses *every* later worktree
//! operation in the repository ("Refusing to read an empty path from …/gitdir"), so one
//! `kill -9` at the wrong moment would stop all future runs. Such entries hold no work — the
//! worktree's files are elsewhere and untouched — so they are discarded before a worktree is
//! created, and `doctor` reports them.
//!
//! What counts as broken is deliberately narrow: an entry whose `gitdir` is missing or empty is
//! one git itself prunes whatever else is true (`git worktree prune`: "invalid gitdir file").
//! An entry missing only `commondir` or `HEAD` is discarded only when the caller says the name
//! is its own (a run id), because a foreign tool's entry is not ours to judge. A foreign locked
//! entry is never touched. Our own entries are judged whatever their lock says: git and gix
//! lock a registration ("initializing") before they write its files, so a creation killed
//! midway leaves it locked, or with an empty lock file if the kill came while the lock itself
//! was written (the caller makes sure none of its creations is in progress).

use std::path::{Path, PathBuf};

use super::{GitError, Repo, Result};

/// A registration under `<common-dir>/worktrees/` that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenWorktree {
    pub name: String,
    pub path: PathBuf,
    /// What is wrong with it, in git's words where git has them.
    pub why: &'static str,
}

impl Repo {
    /// The broken registrations; `ours` says which entry names belong to the caller.
    pub fn broken_worktrees(&self, ours: impl Fn(&str) -> bool) -> Vec<BrokenWorktree> {
        let dir = self.common_dir().join("worktrees");
        let Ok(read) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut broken: Vec<BrokenWorktree> = read
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_str()?.to_string();
                let path = entry.path();
                let why = diagnose(&path, ours(&name))?;
                Some(BrokenWorktree { name, path, why })
            })
            .collect();
        broken.sort_by(|a, b| a.name.cmp(&b.name));
        broken
    }

    /// Removes the broken registrations and returns them.
    pub fn discard_broken_worktrees(
        &self,
        ours: impl Fn(&str) -> bool,
    ) -> Result<Vec<BrokenWorktree>> {
        let broken = self.broken_worktrees(ours);
        for entry in &broken {
            std::fs::remove_dir_all(&entry.path).map_err(|err| {
                GitError::op(
                    format!(
                        "remove the broken worktree registration {}",
                        entry.path.display()
                    ),
                    err,
                )
            })?;
        }
        Ok(broken)
    }
}

impl Repo {
    /// Removes the lock files (`<ref>.lock`) that a git killed while it updated a ref left under
    /// `refs/<namespace>/`, and returns how many. Only for a namespace whose every writer the
    /// caller knows to be gone (a run's snapshot refs, under the run's lock): a live git's lock
    /// must not be taken away. Without this, every later update of those refs fails.
    pub fn discard_ref_locks(&self, namespace: &str) -> Result<usize> {
        let mut found = Vec::new();
        lock_files_under(&self.common_dir().join("refs").join(namespace), &mut found);
        for path in &found {
            std::fs::remove_file(path).map_err(|err| {
                GitError::op(format!("remove the stale ref lock {}", path.display()), err)
            })?;
        }
        Ok(found.len())
    }
}

/// The lock files git takes for the repository as a whole, in the common git directory and in
/// each worktree's own: git removes them when it finishes, never when it is killed, and while one
/// exists every git command that needs it fails ("Unable to create '…': File exists").
const REPOSITORY_LOCKS: [&str; 5] = [
    "packed-refs.lock",
    "HEAD.lock",
    "config.lock",
    "index.lock",
    "shallow.lock",
];

impl Repo {
    /// Every git lock file that exists now: the repository-wide ones, each worktree's `index.lock`
    /// and `HEAD.lock`, and every `<ref>.lock` under `refs/`. A live git holds one for
    /// milliseconds; one that stays was left by a git that was killed. Only reported, never
    /// removed here: whether a git is still running is the user's to judge.
    pub fn git_locks(&self) -> Vec<std::path::PathBuf> {
        let common = self.common_dir();
        let mut found: Vec<std::path::PathBuf> = REPOSITORY_LOCKS
            .iter()
            .map(|name| common.join(name))
            .filter(|path| path.is_file())
            .collect();
        for entry in std::fs::read_dir(common.join("worktrees"))
            .into_iter()
            .flatten()
            .flatten()
        {
            for name in ["index.lock", "HEAD.lock"] {
                let path = entry.path().join(name);
                if path.is_file() {
                    found.push(path);
                }
            }
        }
        lock_files_under(&common.join("refs"), &mut found);
        found
    }
}

/// Every `*.lock` file below `dir`, recursively (ref locks: `refs/heads/x.lock`).
fn lock_files_under(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => lock_files_under(&path, found),
            Ok(kind) if kind.is_file() && path.extension().is_some_and(|e| e == "lock") => {
                found.push(path)
            }
            _ => {}
        }
    }
}

fn diagnose(entry: &Path, ours: bool) -> Option<&'static str> {
    // Our own entries are judged whatever their lock says: gix and git write `locked` first
    // ("initializing") and a kill can leave it empty, and no creation of ours is under way.
    if !entry.is_dir() || (!ours && entry.join("locked").exists()) {
        return None;
    }
    match std::fs::read(entry.join("gitdir")) {
        Err(_) => return Some("gitdir file does not exist"),
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => {
            return Some("invalid gitdir file");
        }
        Ok(_) => {}
    }
    if !ours {
        return None;
    }
    if !entry.join("commondir").is_file() {
        return Some("commondir file does not exist");
    }
    if !entry.join("HEAD").is_file() {
        return Some("HEAD file does not exist");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(root: &Path, name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in files {
            std::fs::write(dir.join(file), text).unwrap();
        }
        dir
    }

    #[test]
    fn diagnoses_what_git_would_prune_and_half_written_entries_of_our_own() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let whole = [
            ("gitdir", "/w/.git\n"),
            ("commondir", "../..\n"),
            ("HEAD", "ref: refs/heads/x\n"),
        ];
        let gitdir = [("gitdir", "/w/.git\n")];
        let (none, lost) = (None, Some("gitdir file does not exist"));
        // Killed while git wrote the lock itself: the lock is empty. Killed right after git
        // locked the new entry: what a creation killed then leaves.
        let (empty_lock, creating) = ([("locked", "")], [("locked", "initializing\n")]);
        #[rustfmt::skip]
        let cases = [
            (entry(root, "whole", &whole), true, none),
            (entry(root, "empty", &[("gitdir", "")]), false, Some("invalid gitdir file")),
            (entry(root, "none", &[]), false, lost),
            (entry(root, "nocommon", &gitdir), true, Some("commondir file does not exist")),
            (entry(root, "foreign", &gitdir), false, none),
            (entry(root, "nohead", &whole[..2]), true, Some("HEAD file does not exist")),
            (entry(root, "locked", &[("gitdir", ""), ("locked", "")]), false, none),
            (entry(root, "emptylock", &empty_lock), true, lost),
            (entry(root, "killed", &creating), true, lost),
            (entry(root, "theirs", &creating), false, none),
        ];
        for (path, ours, want) in cases {
            assert_eq!(diagnose(&path, ours), want, "{}", path.display());
        }
    }
}
