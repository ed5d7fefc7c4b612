//! Attempt provenance: the worktree recorded as a commit object under a private ref, without
//! touching the branch, the index or the files.
//!
//! This uses git plumbing with a throw-away index (`GIT_INDEX_FILE`): `add -A` honours
//! `.gitignore`, `.gitattributes` filters and symlinks exactly as a commit would, which gix
//! offers no single call for yet. None of these commands runs hooks.

use std::path::Path;
use std::process::Command;

use gix::ObjectId;

use super::{GitError, Repo, Result};

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

fn git(worktree: &Path, index: Option<&Path>, args: &[&str]) -> Result<String> {
    git_as(worktree, index, args, Identity::Baton)
}

fn git_as(
    worktree: &Path,
    index: Option<&Path>,
    args: &[&str],
    identity: Identity,
) -> Result<String> {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(worktree).args(args);
    if identity == Identity::Baton {
        cmd.envs(IDENTITY);
    }
    if let Some(index) = index {
        cmd.env("GIT_INDEX_FILE", index);
    }
    let out = cmd
        .output()
        .map_err(|err| GitError::op(format!("run git {}", args.join(" ")), err))?;
    if !out.status.success() {
        return Err(GitError::op(
            format!("run git {} in {}", args.join(" "), worktree.display()),
            String::from_utf8_lossy(&out.stderr).trim(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Repo {
    /// Commits everything in `worktree` (tracked and untracked-not-ignored files, as they are
    /// now) on top of `parent` and points `refname` at it. Returns the commit id.
    pub fn snapshot_worktree(
        &self,
        worktree: &Path,
        refname: &str,
        parent: ObjectId,
        message: &str,
    ) -> Result<ObjectId> {
        let (commit, _) = self.commit_worktree(worktree, parent, message, Identity::Baton, true)?;
        git(
            worktree,
            None,
            &["update-ref", refname, &commit.to_string()],
        )?;
        Ok(commit)
    }

    /// A commit object of the worktree's files on top of `parent`, and whether its tree differs
    /// from the parent's. Nothing but the object database changes. With `always` false and no
    /// difference, no commit is made and `parent` is returned.
    pub fn commit_worktree(
        &self,
        worktree: &Path,
        parent: ObjectId,
        message: &str,
        identity: Identity,
        always: bool,
    ) -> Result<(ObjectId, bool)> {
        let scratch = tempfile::Builder::new()
            .prefix("baton-snapshot-")
            .tempdir_in(self.common_dir())
            .map_err(|err| GitError::op("create a scratch directory for a snapshot", err))?;
        let index = scratch.path().join("index");
        // Starting from the worktree's own index reuses its stat cache: only changed files are hashed.
        let wt = Repo::discover(worktree)?;
        let real_index = wt.git_dir().join("index");
        if real_index.exists() {
            std::fs::copy(&real_index, &index)
                .map_err(|err| GitError::op("copy the index for a snapshot", err))?;
        }
        git(worktree, Some(&index), &["add", "-A", "--", "."])?;
        let tree = git(worktree, Some(&index), &["write-tree"])?;
        let tree_id = ObjectId::from_hex(tree.as_bytes())
            .map_err(|err| GitError::op("read a tree id", err))?;
        let changed = self.tree_of(parent)? != tree_id;
        if !changed && !always {
            return Ok((parent, false));
        }
        let parent = parent.to_string();
        let commit = git_as(
            worktree,
            None,
            &["commit-tree", &tree, "-p", &parent, "-m", message],
            identity,
        )?;
        let id = ObjectId::from_hex(commit.as_bytes())
            .map_err(|err| GitError::op("read a new commit id", err))?;
        Ok((id, changed))
    }

    /// Moves `refs/heads/<branch>` from `old` to `new` (refusing if it moved meanwhile) and
    /// brings the index of `worktree`, which has the branch checked out, along; files stay.
    pub fn advance_branch(
        &self,
        worktree: &Path,
        branch: &str,
        old: ObjectId,
        new: ObjectId,
    ) -> Result<()> {
        let name = format!("refs/heads/{branch}");
        let (old, new) = (old.to_string(), new.to_string());
        git(
            worktree,
            None,
            &["update-ref", "-m", "baton: finish", &name, &new, &old],
        )?;
        git(worktree, None, &["reset", "-q"])?;
        Ok(())
    }

    /// Makes the files of `worktree` those of `commit` while its branch and index stay at HEAD:
    /// how a re-created worktree gets the work of the last attempt back.
    pub fn restore_files(&self, worktree: &Path, commit: ObjectId) -> Result<()> {
        let commit = commit.to_string();
        git(worktree, None, &["read-tree", "-m", "-u", "HEAD", &commit])?;
        git(worktree, None, &["reset", "-q"])?;
        Ok(())
    }

    /// Deletes every ref under `prefix` (e.g. a run's snapshots).
    pub fn delete_refs_under(&self, prefix: &str) -> Result<()> {
        let refs = git(
            self.common_dir(),
            None,
            &["for-each-ref", "--format=%(refname)", prefix],
        )?;
        for name in refs.lines().filter(|l| !l.is_empty()) {
            git(self.common_dir(), None, &["update-ref", "-d", name])?;
        }
        Ok(())
    }
}
