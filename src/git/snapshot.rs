//! Attempt provenance: the worktree recorded as a commit object under a private ref, without
//! touching the branch, the index or the files.
//!
//! This uses git plumbing (through [`super::command`]) with a throw-away index: `add -A` honours
//! `.gitignore`, `.gitattributes` filters and symlinks exactly as a commit would, which gix
//! offers no single call for yet. None of these commands runs hooks: the gateway points
//! `core.hooksPath` at nothing.

use std::path::Path;

use super::command::Git;
use super::unrecordable::{self, Unrecorded};
use super::{CommitId, GitError, Repo, Result};

/// The identity snapshot commits are made with, so they work where no user is configured.
const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "git-baton"),
    ("GIT_AUTHOR_EMAIL", "git-baton@localhost"),
    ("GIT_COMMITTER_NAME", "git-baton"),
    ("GIT_COMMITTER_EMAIL", "git-baton@localhost"),
];

/// Who a commit made from a worktree is by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// git-baton itself: for private snapshot refs, which must work with no user configured.
    Baton,
    /// The user's configured identity: for commits on the run's branch that people merge.
    User,
}

impl Identity {
    fn apply(self, mut git: Git) -> Git {
        if self == Identity::Baton {
            for (key, value) in IDENTITY {
                git = git.env(key, value);
            }
        }
        git
    }
}

/// A commit made of a worktree, and the paths git could not put in it.
pub struct WorktreeCommit {
    pub commit: CommitId,
    pub unrecorded: Vec<Unrecorded>,
    worktree: std::path::PathBuf,
}

impl WorktreeCommit {
    /// The commit, when it holds every path of the worktree; otherwise an error naming each
    /// path git could not record, with git's reason.
    pub fn whole(self) -> Result<CommitId> {
        if self.unrecorded.is_empty() {
            return Ok(self.commit);
        }
        let named: Vec<String> = self
            .unrecorded
            .iter()
            .map(|u| format!("{}: {}", u.path, u.reason))
            .collect();
        Err(GitError::op(
            format!("record the worktree {}", self.worktree.display()),
            format!("git cannot record {}", named.join("; ")),
        ))
    }
}

/// A worktree added to a scratch index: the index lives as long as this does.
struct Staged {
    scratch: tempfile::TempDir,
    git_dir: std::path::PathBuf,
    unrecorded: Vec<Unrecorded>,
}

impl Staged {
    fn index(&self) -> std::path::PathBuf {
        self.scratch.path().join("index")
    }
}

/// A commit id git printed.
fn printed_id(hex: &str, what: &str) -> Result<CommitId> {
    hex.parse()
        .map_err(|err| GitError::op(format!("read {what}"), err))
}

impl Repo {
    /// The git directory of `worktree`, for commands that name it: the worktree's own, so that
    /// its index and its `config.worktree` are the ones used.
    pub(super) fn git_dir_of(worktree: &Path) -> Result<std::path::PathBuf> {
        Ok(Repo::open_worktree(worktree)?.git_dir().to_path_buf())
    }

    /// Commits everything in `worktree` that git can record (tracked and untracked-not-ignored
    /// files, as they are now) on top of `parent` and points `refname` at it. Returns the commit
    /// id and the paths it does not hold, each with git's reason; a path left out keeps, in the
    /// commit, what the worktree's index has there (usually `parent`'s).
    pub fn snapshot_worktree(
        &self,
        worktree: &Path,
        refname: &str,
        parent: CommitId,
        message: &str,
    ) -> Result<(CommitId, Vec<Unrecorded>)> {
        let made = self.record_worktree(worktree, parent, message, Identity::Baton)?;
        Git::at_git_dir(self.common_dir())
            .args(["update-ref", refname, &made.commit.to_string()])
            .run()?;
        Ok((made.commit, made.unrecorded))
    }

    /// A commit object of the worktree's files on top of `parent`, made even when its tree is
    /// the parent's; nothing but the object database changes. A path git cannot add (an
    /// unreadable file, a name it refuses) keeps what the worktree's index has there, and is
    /// named in [`WorktreeCommit::unrecorded`].
    pub fn record_worktree(
        &self,
        worktree: &Path,
        parent: CommitId,
        message: &str,
        identity: Identity,
    ) -> Result<WorktreeCommit> {
        let staged = self.stage_in_scratch(worktree)?;
        let (git_dir, index) = (&staged.git_dir, staged.index());
        let scratch_git = |args: &[&str]| {
            Git::at_worktree(git_dir, worktree)
                .env("GIT_INDEX_FILE", &index)
                .args(args)
                .output()
        };
        let tree = scratch_git(&["write-tree"])?;
        let commit = identity
            .apply(Git::at_worktree(git_dir, worktree))
            .args([
                "commit-tree",
                &tree,
                "-p",
                &parent.to_string(),
                "-m",
                message,
            ])
            .output()?;
        Ok(WorktreeCommit {
            commit: printed_id(&commit, "the commit id git commit-tree printed")?,
            unrecorded: staged.unrecorded,
            worktree: worktree.to_path_buf(),
        })
    }

    /// The paths of `worktree` that a record of it ([`Repo::record_worktree`], an attempt's
    /// snapshot) would leave out now, each with git's reason: the same `git add` into a scratch
    /// index, with no tree, commit or ref made (only the blobs git hashes reach the object
    /// database), and the worktree and its index untouched.
    pub fn unrecordable(&self, worktree: &Path) -> Result<Vec<Unrecorded>> {
        Ok(self.stage_in_scratch(worktree)?.unrecorded)
    }

    /// `git add -A --ignore-errors` of `worktree` into a scratch index (in a temporary directory
    /// of the common directory, removed when the result is dropped), and what it left out.
    fn stage_in_scratch(&self, worktree: &Path) -> Result<Staged> {
        let scratch = tempfile::Builder::new()
            .prefix("baton-snapshot-")
            .tempdir_in(self.common_dir())
            .map_err(|err| GitError::op("create a scratch directory for a snapshot", err))?;
        let index = scratch.path().join("index");
        // Starting from the worktree's own index reuses its stat cache: only changed files are hashed.
        let git_dir = Repo::git_dir_of(worktree)?;
        let real_index = git_dir.join("index");
        // Only a real file: copying a named pipe the agent left there would wait for ever; git
        // then builds the scratch index from nothing.
        if std::fs::symlink_metadata(&real_index).is_ok_and(|meta| meta.is_file()) {
            std::fs::copy(&real_index, &index).map_err(|err| {
                GitError::op(
                    format!("copy the index {} for a snapshot", real_index.display()),
                    err,
                )
            })?;
        }
        unrecordable::refuse_unreadable_control_files(worktree)?;
        // Past a path it cannot add, git goes on with the others and exits 1; what it left out
        // is then read back from git (see `unrecordable`). Any other failure is one.
        let (command, at, out) = Git::at_worktree(&git_dir, worktree)
            .env("GIT_INDEX_FILE", &index)
            .args(["add", "-A", "--ignore-errors", "--", "."])
            .finish()?;
        if !matches!(out.status.code(), Some(0 | 1)) {
            return Err(super::command::failed(command, at, &out));
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        let unrecorded = unrecordable::left_out(&git_dir, worktree, &index, &stderr)?;
        Ok(Staged {
            scratch,
            git_dir,
            unrecorded,
        })
    }

    /// Moves `refs/heads/<branch>` from `old` to `new` (refusing if it moved meanwhile) and
    /// brings the index of `worktree`, which has the branch checked out, along; files stay.
    pub fn advance_branch(
        &self,
        worktree: &Path,
        branch: &str,
        old: CommitId,
        new: CommitId,
    ) -> Result<()> {
        let name = format!("refs/heads/{branch}");
        let (old, new) = (old.to_string(), new.to_string());
        Git::at_git_dir(self.common_dir())
            .args(["update-ref", "-m", "baton: finish", &name, &new, &old])
            .run()?;
        Git::at_worktree(&Repo::git_dir_of(worktree)?, worktree)
            .args(["reset", "-q"])
            .run()
    }

    /// Makes the files of `worktree` those of `commit` while its branch and index stay at HEAD:
    /// how a re-created worktree gets the work of the last attempt back.
    pub fn restore_files(&self, worktree: &Path, commit: CommitId) -> Result<()> {
        let commit = commit.to_string();
        let git_dir = Repo::git_dir_of(worktree)?;
        Git::at_worktree(&git_dir, worktree)
            .args(["read-tree", "-m", "-u", "HEAD", &commit])
            .run()?;
        Git::at_worktree(&git_dir, worktree)
            .args(["reset", "-q"])
            .run()
    }

    /// Changes the files of `worktree`, which are exactly those of `from`, into those of `to`,
    /// in place — ignored files stay: how a run's worktree takes another machine's newer work.
    /// The index is left at `to` until [`Repo::reset_index`] puts it back at HEAD.
    pub fn move_files(&self, worktree: &Path, from: CommitId, to: CommitId) -> Result<()> {
        let git_dir = Repo::git_dir_of(worktree)?;
        let git = || Git::at_worktree(&git_dir, worktree);
        let (from, to) = (from.to_string(), to.to_string());
        git().args(["read-tree", &from]).run()?;
        // A fresh index has no stat data: without a refresh every entry looks modified and the
        // merge refuses. Entries that really differ make it exit 1; the merge then says which.
        git().args(["update-index", "-q", "--refresh"]).finish()?;
        git().args(["read-tree", "-m", "-u", &from, &to]).run()
    }

    /// Puts the index of `worktree` back at its HEAD; files stay.
    pub fn reset_index(&self, worktree: &Path) -> Result<()> {
        Git::at_worktree(&Repo::git_dir_of(worktree)?, worktree)
            .args(["reset", "-q"])
            .run()
    }

    /// Deletes every ref under `prefix` (e.g. a run's snapshots), in one transaction.
    pub fn delete_refs_under(&self, prefix: &str) -> Result<()> {
        let gone: Vec<_> = self
            .refs_under(prefix)?
            .into_iter()
            .map(|(name, _)| (name, None))
            .collect();
        self.set_refs(&gone)
    }
}
