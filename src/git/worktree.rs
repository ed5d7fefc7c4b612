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

/// The reflog message of a branch git-baton creates.
fn creation_message(branch: &str) -> String {
    format!("baton: create {branch}")
}

impl Repo {
    /// Creates `refs/heads/<branch>` at `commit`; fails if it exists. Its reflog's first entry
    /// says git-baton made it ([`Self::created_here`]).
    pub fn create_branch(&self, branch: &str, commit: CommitId) -> Result<()> {
        self.repo
            .reference(
                format!("refs/heads/{branch}").as_str(),
                commit.gix(),
                PreviousValue::MustNotExist,
                creation_message(branch),
            )
            .map(|_| ())
            .map_err(|err| GitError::op(format!("create branch `{branch}`"), err))
    }

    /// Whether git has a committer to record ref updates and commits in the name of: from
    /// `GIT_COMMITTER_*`, `committer.*` or `user.*`, as git finds one.
    pub fn has_committer(&self) -> bool {
        self.repo.committer().is_some_and(|found| found.is_ok())
    }

    /// Whether `refs/heads/<branch>` is provably the branch [`Self::create_branch`] made: its
    /// reflog begins with that creation (from nothing, with git-baton's message). A branch made
    /// by any other means, or whose reflog is gone or was never kept
    /// (`core.logAllRefUpdates=false`), is not.
    pub fn created_here(&self, branch: &str) -> bool {
        let name = format!("refs/heads/{branch}");
        let Ok(Some(reference)) = self.repo.try_find_reference(name.as_str()) else {
            return false;
        };
        let mut log = reference.log_iter();
        let Ok(Some(mut lines)) = log.all() else {
            return false;
        };
        lines.next().is_some_and(|first| {
            first.is_ok_and(|line| {
                line.previous_oid().is_null()
                    && line.message.trim() == creation_message(branch).as_bytes()
            })
        })
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
        self.ref_target(&format!("refs/heads/{branch}"))
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
        // A directory removed by hand leaves its registration behind: that one goes, never
        // another worktree's (`git worktree prune` would forget every worktree whose directory
        // is away for a moment, an unmounted disk, with its index and HEAD).
        self.forget_worktree(path)
    }

    /// Removes the registration (`<common-dir>/worktrees/<name>/`) of the linked worktree at
    /// `path` when its directory is gone: exactly the entries whose `gitdir` file names
    /// `path/.git`, while no `.git` is there. A registration someone locked (other than git's
    /// own "initializing" lock of a killed creation) stays, as `git worktree prune` keeps it.
    /// Every other registration is left as it is, whatever state its directory is in.
    pub fn forget_worktree(&self, path: &Path) -> Result<()> {
        let link = path.join(".git");
        if std::fs::symlink_metadata(&link).is_ok() {
            return Ok(());
        }
        for admin in self.registrations_of(path) {
            let lock = std::fs::read_to_string(admin.join("locked")).ok();
            if lock.is_some_and(|reason| reason.trim() != "initializing") {
                continue;
            }
            std::fs::remove_dir_all(&admin).map_err(|err| {
                GitError::op(
                    format!("remove the worktree registration {}", admin.display()),
                    err,
                )
            })?;
        }
        Ok(())
    }

    /// The registrations under `<common-dir>/worktrees/` whose `gitdir` file names the `.git`
    /// of a worktree at `path` (compared with their existing parts resolved, since `path` may be
    /// gone).
    fn registrations_of(&self, path: &Path) -> Vec<std::path::PathBuf> {
        // A registration's files are one line each; anything else is not git's.
        const LIMIT: u64 = 64 << 10;
        let wanted = crate::files::resolved(&path.join(".git"));
        let Ok(entries) = std::fs::read_dir(self.common_dir().join("worktrees")) else {
            return Vec::new();
        };
        let mut found: Vec<std::path::PathBuf> = entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|admin| {
                crate::files::read_limited_regular(&admin.join("gitdir"), LIMIT)
                    .ok()
                    .flatten()
                    .and_then(|bytes| String::from_utf8(bytes).ok())
                    .is_some_and(|gitdir| {
                        let gitdir = gitdir.trim_end_matches(['\n', '\r']);
                        !gitdir.is_empty() && crate::files::resolved(Path::new(gitdir)) == wanted
                    })
            })
            .collect();
        found.sort();
        found
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

    /// Makes `<common-dir>/info/exclude` hold `pattern` below git-baton's marker line, so that
    /// worktrees nested in the main worktree do not show up as untracked there. The file applies
    /// to every worktree, so a pattern broader than the worktree root hides an agent's new files
    /// from the gate, the snapshot and `finish`.
    ///
    /// Lines git-baton wrote are recognised only by the marker line above each (the current
    /// marker, or `# worktrees of git-baton runs` of older versions). One of them stays, under the
    /// current marker, exactly while `in_use` says the directory it names still holds run
    /// worktrees: changing `worktree_root` must not un-ignore the runs already under the old
    /// root (they would show up as untracked in the main worktree). The others are dropped, so an
    /// older, broader pattern (`/.baton/`, whose directory holds no run worktree itself) is
    /// migrated. Every other line is the user's and stays as it is. Idempotent; written
    /// atomically.
    pub fn ensure_excluded(&self, pattern: &str, in_use: &dyn Fn(&str) -> bool) -> Result<()> {
        let path = self.common_dir().join("info").join("exclude");
        let existing = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(err) => return Err(GitError::op(format!("read {}", path.display()), err)),
        };
        let text = excluded(&existing, pattern, in_use);
        if text == existing {
            return Ok(());
        }
        let dir = path.parent().expect("info/exclude has a parent");
        std::fs::create_dir_all(dir)
            .map_err(|err| GitError::op(format!("create {}", dir.display()), err))?;
        crate::files::write_atomic(&path, text.as_bytes())
            .map_err(|err| GitError::op(format!("update {}", path.display()), err))
    }

    /// Whether `dir` (relative to the main worktree `main`, `/`-separated) holds tracked files
    /// at HEAD or in the main worktree's index, or is itself a tracked file.
    pub fn is_tracked(&self, main: &Path, dir: &str) -> Result<bool> {
        let at_index = Git::at_worktree(self.common_dir(), main)
            // A directory named `a*` is that directory, not a glob.
            .args([
                "--literal-pathspecs",
                "ls-files",
                "-z",
                "--cached",
                "--full-name",
                "--",
            ])
            .arg(dir)
            .output()?;
        if !at_index.is_empty() {
            return Ok(true);
        }
        if self.repo.head_id().is_err() {
            return Ok(false); // an unborn HEAD has no tree
        }
        let at_head = Git::at_git_dir(self.common_dir())
            .args([
                "--literal-pathspecs",
                "ls-tree",
                "-z",
                "--name-only",
                "HEAD",
                "--",
            ])
            .arg(dir)
            .output()?;
        Ok(!at_head.is_empty())
    }

    /// The ignored files and directories in the worktree at `worktree` (a directory entirely
    /// ignored is one entry ending in `/`). `git worktree remove` deletes them without asking,
    /// so whoever removes a worktree that may hold work asks this first.
    pub fn ignored_files(&self, worktree: &Path) -> Result<Vec<String>> {
        let git_dir = Repo::git_dir_of(worktree)?;
        super::unrecordable::refuse_unreadable_control_files(worktree)?;
        let out = Git::at_worktree(&git_dir, worktree)
            .args(super::ignored::LS_IGNORED)
            .output()?;
        Ok(out
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(String::from)
            .collect())
    }
}

/// The marker line above each line of `info/exclude` git-baton owns.
pub const EXCLUDE_MARKER: &str = "# git-baton: run worktrees (git-baton manages the next line)";
/// The marker older versions wrote, above a broader pattern that is migrated.
const OLD_EXCLUDE_MARKER: &str = "# worktrees of git-baton runs";

/// `text` (an `info/exclude`) with git-baton's lines set: `pattern`, and each marked line that is
/// `in_use`, once each and in place, under the current marker; other marked lines are dropped,
/// the user's lines stay.
fn excluded(text: &str, pattern: &str, in_use: &dyn Fn(&str) -> bool) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut ours: Vec<&str> = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_end();
        if trimmed == EXCLUDE_MARKER || trimmed == OLD_EXCLUDE_MARKER {
            // The pattern git-baton wrote under its marker.
            let Some(marked) = lines.next() else { break };
            if !ours.contains(&marked) && (marked == pattern || in_use(marked)) {
                out.extend([EXCLUDE_MARKER, marked]);
                ours.push(marked);
            }
            continue;
        }
        out.push(line);
    }
    if !ours.contains(&pattern) {
        out.extend([EXCLUDE_MARKER, pattern]);
    }
    let mut joined = out.join("\n");
    joined.push('\n');
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unused(_: &str) -> bool {
        false
    }

    /// Only a branch whose reflog begins with git-baton's creation of it counts as made here.
    #[test]
    fn a_branch_is_made_here_only_by_its_reflog() {
        let dir = crate::testing::git_init(&[]);
        let git = |args: &[&str]| {
            crate::testing::git(dir.path(), args);
        };
        let repo = Repo::discover(dir.path()).unwrap();
        let files = vec![("f".to_owned(), b"x".to_vec())];
        let (commit, _) = repo.write_record(&files, None, "c", 1_700_000_000).unwrap();
        repo.create_branch("baton/0aaaaaaaaa", commit).unwrap();
        assert!(repo.created_here("baton/0aaaaaaaaa"));
        // Moved afterwards: still the branch git-baton made.
        git(&["branch", "-f", "baton/0aaaaaaaaa", &commit.to_string()]);
        assert!(repo.created_here("baton/0aaaaaaaaa"));
        // Made by git, under any name; gone; or recreated by hand after git-baton's was deleted.
        git(&["branch", "baton/0bbbbbbbbb", &commit.to_string()]);
        assert!(!repo.created_here("baton/0bbbbbbbbb"));
        assert!(!repo.created_here("baton/0ccccccccc"));
        git(&["branch", "-D", "baton/0aaaaaaaaa"]);
        git(&["branch", "baton/0aaaaaaaaa", &commit.to_string()]);
        assert!(!repo.created_here("baton/0aaaaaaaaa"));
        // A message that merely looks like ours, written by someone else, names another branch.
        git(&[
            "update-ref",
            "-m",
            "baton: create baton/0ddddddddd",
            "refs/heads/baton/0eeeeeeeee",
            &commit.to_string(),
        ]);
        assert!(!repo.created_here("baton/0eeeeeeeee"));
        // Without reflogs nothing is provable.
        git(&["config", "core.logAllRefUpdates", "false"]);
        let repo = Repo::discover(dir.path()).unwrap();
        repo.create_branch("baton/0fffffffff", commit).unwrap();
        assert!(!repo.created_here("baton/0fffffffff"));
    }

    #[test]
    fn exclude_line_is_added_once_and_keeps_user_lines() {
        let once = excluded("# user\n*.log\n", "/.baton/worktrees/", &unused);
        assert_eq!(
            once,
            format!("# user\n*.log\n{EXCLUDE_MARKER}\n/.baton/worktrees/\n")
        );
        assert_eq!(excluded(&once, "/.baton/worktrees/", &unused), once);
        assert_eq!(
            excluded("", "/w/", &unused),
            format!("{EXCLUDE_MARKER}\n/w/\n")
        );
    }

    #[test]
    fn older_broader_lines_are_migrated_and_only_those() {
        let old = "/.baton/\n# worktrees of git-baton runs\n/.baton/\n*.tmp\n# worktrees of git-baton runs\n/docs/\n";
        assert_eq!(
            excluded(old, "/.baton/worktrees/", &unused),
            format!("/.baton/\n*.tmp\n{EXCLUDE_MARKER}\n/.baton/worktrees/\n")
        );
    }

    /// A root that still holds run worktrees keeps its line, in place, beside the new root's;
    /// one that does not any more loses it; a line is never written twice.
    #[test]
    fn lines_of_roots_in_use_stay() {
        let two = format!(
            "# user\n{EXCLUDE_MARKER}\n/old/\n*.log\n{EXCLUDE_MARKER}\n/gone/\n{EXCLUDE_MARKER}\n/old/\n"
        );
        let in_use = |p: &str| p == "/old/";
        let now = excluded(&two, "/new/", &in_use);
        assert_eq!(
            now,
            format!("# user\n{EXCLUDE_MARKER}\n/old/\n*.log\n{EXCLUDE_MARKER}\n/new/\n")
        );
        assert_eq!(excluded(&now, "/new/", &in_use), now, "idempotent");
        // Back to the old root: its line is the current one, written once.
        assert_eq!(
            excluded(&now, "/old/", &unused),
            format!("# user\n{EXCLUDE_MARKER}\n/old/\n*.log\n")
        );
        // A marker on the last line has no pattern to keep.
        assert_eq!(
            excluded(&format!("x\n{EXCLUDE_MARKER}\n"), "/new/", &unused),
            format!("x\n{EXCLUDE_MARKER}\n/new/\n")
        );
    }
}
