//! Branches and linked worktrees for runs.
//!
//! Creation is in-process with gix: `add_worktree` checks the branch out into a new linked
//! worktree and removes what it made if it fails. Unlike `git worktree add`, it runs no hooks
//! (no `post-checkout`): a run's worktree is the base commit exactly, whatever hooks a user has.
//! Removal uses the git CLI, which gix does not offer yet.

use std::path::Path;

use gix::bstr::ByteSlice;
use gix::refs::transaction::PreviousValue;

use super::command::Git;
use super::{CommitId, GitError, Repo, Result};

impl Repo {
    /// Creates `refs/heads/<branch>` at `commit`; fails if it exists.
    pub fn create_branch(&self, branch: &str, commit: CommitId) -> Result<()> {
        self.repo
            .reference(
                format!("refs/heads/{branch}").as_str(),
                commit.gix(),
                PreviousValue::MustNotExist,
                format!("baton: create {branch}"),
            )
            .map(|_| ())
            .map_err(|err| GitError::op(format!("create branch `{branch}`"), err))
    }

    /// Deletes `refs/heads/<branch>` if it exists.
    pub fn delete_branch(&self, branch: &str) -> Result<()> {
        let name = format!("refs/heads/{branch}");
        match self.repo.try_find_reference(name.as_str()) {
            Ok(Some(reference)) => reference
                .delete()
                .map_err(|err| GitError::op(format!("delete branch `{branch}`"), err)),
            Ok(None) => Ok(()),
            Err(err) => Err(GitError::op(format!("look up branch `{branch}`"), err)),
        }
    }

    /// The commit `refs/heads/<branch>` points at, if the branch exists.
    pub fn branch_tip(&self, branch: &str) -> Result<Option<CommitId>> {
        let name = format!("refs/heads/{branch}");
        match self.repo.try_find_reference(name.as_str()) {
            Ok(Some(mut reference)) => reference
                .peel_to_id()
                .map(|id| Some(CommitId::from_gix(id.detach())))
                .map_err(|err| GitError::op(format!("resolve branch `{branch}`"), err)),
            Ok(None) => Ok(None),
            Err(err) => Err(GitError::op(format!("look up branch `{branch}`"), err)),
        }
    }

    /// Checks `branch` out into a new linked worktree at `path` (which must not exist or be empty).
    pub fn add_worktree(&self, path: &Path, branch: &str) -> Result<()> {
        let name = format!("refs/heads/{branch}");
        let head = gix::worktree::add::Head::Attached(
            name.as_str()
                .try_into()
                .map_err(|err| GitError::op(format!("use branch name `{branch}`"), err))?,
        );
        let interrupt = std::sync::atomic::AtomicBool::new(false);
        self.repo
            .add_worktree(path, head, gix::progress::Discard, &interrupt)
            .map(|_| ())
            .map_err(|err| {
                GitError::op(
                    format!("create the worktree {}", path.display()),
                    format!("{err:#}"),
                )
            })
    }

    /// Removes the linked worktree at `path`, files and registration. With `force`, even with
    /// uncommitted changes: only callers that own the worktree's contents (rollback of a failed
    /// creation, an explicit `--force`) may pass it.
    pub fn remove_worktree(&self, path: &Path, force: bool) -> Result<()> {
        let force_args: &[&str] = if force { &["--force", "--force"] } else { &[] };
        let removed = Git::at_git_dir(self.common_dir())
            .args(["worktree", "remove"])
            .args(force_args)
            .arg(path)
            .run();
        // Failing because the directory was already gone is what removing it asked for.
        if let Err(err) = removed
            && path.exists()
        {
            return Err(err);
        }
        // A directory removed by hand leaves its registration behind; prune it.
        self.prune_worktrees();
        Ok(())
    }

    /// Forgets registrations of worktrees whose directories are gone. Best effort: a failure
    /// leaves a registration `git worktree prune` removes later.
    pub fn prune_worktrees(&self) {
        let _ = Git::at_git_dir(self.common_dir())
            .args(["worktree", "prune"])
            .run();
    }

    /// Local branches whose names start with `prefix` (e.g. `baton/`).
    pub fn branches_with_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let refs = self
            .repo
            .references()
            .map_err(|err| GitError::op("list branches", err))?;
        let iter = refs
            .prefixed(format!("refs/heads/{prefix}").as_str())
            .map_err(|err| GitError::op("list branches", err))?;
        let mut names = Vec::new();
        for r in iter.flatten() {
            if let Some(short) = r
                .name()
                .as_bstr()
                .to_str()
                .ok()
                .and_then(|n| n.strip_prefix("refs/heads/"))
            {
                names.push(short.to_string());
            }
        }
        Ok(names)
    }

    /// Adds `pattern` to `<common-dir>/info/exclude` unless a line already says it, so that
    /// worktrees nested in the main worktree do not show up as untracked there.
    pub fn ensure_excluded(&self, pattern: &str) -> Result<()> {
        let path = self.common_dir().join("info").join("exclude");
        let existing = std::fs::read_to_string(&path).unwrap_or_default();
        if existing.lines().any(|l| l.trim() == pattern) {
            return Ok(());
        }
        let mut text = existing;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("# worktrees of git-baton runs\n{pattern}\n"));
        let dir = path.parent().expect("info/exclude has a parent");
        std::fs::create_dir_all(dir)
            .map_err(|err| GitError::op(format!("create {}", dir.display()), err))?;
        crate::files::write_atomic(&path, text.as_bytes())
            .map_err(|err| GitError::op(format!("update {}", path.display()), err))
    }
}
