//! What removing a linked worktree takes with it besides the files its status shows: the commit
//! its HEAD holds when no ref reaches it (a detached HEAD's own commits), and the work of its
//! submodules — their uncommitted and untracked content, which the superproject's status does
//! not look into, and the commits of submodule repositories kept in the worktree's own git
//! directory (`<common-dir>/worktrees/<name>/modules/`), which the removal deletes.
//!
//! Whoever removes a worktree that may hold work asks [`Repo::held_beyond_files`] as well as
//! for its changed and ignored files; anything it names is work that would exist nowhere else.

use std::path::{Path, PathBuf};

use super::command::Git;
use super::{Repo, Result};

impl Repo {
    /// What the linked worktree at `worktree` holds that neither its files' status nor its
    /// ignored files show, one entry per thing, each saying what it is:
    ///
    /// - `HEAD (commit …, which no ref reaches)`: its HEAD is a commit that no ref of the
    ///   repository, nor the main worktree's HEAD, has in its history;
    /// - `<submodule path> (submodule: …)`: git's own status of the submodule
    ///   (`--ignore-submodules=none`) says it has new commits, modified or untracked content;
    /// - `<submodule name> (submodule: commits only … has)`: a submodule repository in the
    ///   worktree's git directory holds commits that none of its remote-tracking refs has.
    pub fn held_beyond_files(&self, worktree: &Path) -> Result<Vec<String>> {
        let git_dir = Repo::git_dir_of(worktree)?;
        let mut held = Vec::new();
        if let Some(head) = self.unreachable_head(&git_dir)? {
            held.push(format!("HEAD (commit {head}, which no ref reaches)"));
        }
        held.extend(dirty_submodules(&git_dir, worktree)?);
        for module in submodule_repositories(&git_dir.join("modules")) {
            if let Some(commit) = unpublished_commit(&module)? {
                let name = module
                    .strip_prefix(git_dir.join("modules"))
                    .unwrap_or(&module)
                    .display()
                    .to_string();
                held.push(format!(
                    "{name} (submodule: commit {commit} and any before it that only {} has)",
                    module.display()
                ));
            }
        }
        Ok(held)
    }

    /// The HEAD commit of the worktree whose git directory is `git_dir`, when no ref of the
    /// repository and not the main worktree's HEAD reach it; `None` for an unborn HEAD.
    fn unreachable_head(&self, git_dir: &Path) -> Result<Option<String>> {
        let head = Git::at_git_dir(git_dir)
            .args(["rev-parse", "--verify", "-q", "HEAD^{commit}"])
            .finish()?;
        if !head.2.status.success() {
            return Ok(None);
        }
        let head = String::from_utf8_lossy(&head.2.stdout).trim().to_string();
        // From the common directory with `--single-worktree`: every ref and the main worktree's
        // HEAD, never the HEAD of the worktree being asked about.
        let out = Git::at_git_dir(self.common_dir())
            .args([
                "rev-list",
                "--single-worktree",
                "-n1",
                &head,
                "--not",
                "--all",
            ])
            .output()?;
        Ok((!out.is_empty()).then_some(head))
    }
}

/// The submodules of the worktree that git's own status finds not clean, with what it found.
fn dirty_submodules(git_dir: &Path, worktree: &Path) -> Result<Vec<String>> {
    let out = Git::at_worktree(git_dir, worktree)
        .args([
            "--no-optional-locks",
            "status",
            "--porcelain=v2",
            "-z",
            "--ignore-submodules=none",
        ])
        .output()?;
    Ok(submodule_states(&out))
}

/// The entries of `git status --porcelain=v2 -z` output whose submodule field (`S<c><m><u>`)
/// says something: `<path> (submodule: new commits, modified content, untracked content)`.
fn submodule_states(porcelain: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut records = porcelain.split('\0');
    while let Some(record) = records.next() {
        // `1 XY sub mH mI mW hH hI path`, `2 … X<score> path` (then the original path as a
        // record of its own), `u XY sub m1 m2 m3 mW h1 h2 h3 path`.
        let fields = match record.as_bytes().first() {
            Some(b'1') => 9,
            Some(b'2') => 10,
            Some(b'u') => 11,
            _ => continue,
        };
        let parts: Vec<&str> = record.splitn(fields, ' ').collect();
        if record.starts_with('2') {
            records.next();
        }
        let (Some(sub), Some(path)) = (parts.get(2), parts.get(fields - 1)) else {
            continue;
        };
        let Some(flags) = sub.strip_prefix('S') else {
            continue;
        };
        let said: Vec<&str> = flags
            .chars()
            .zip(["new commits", "modified content", "untracked content"])
            .filter(|(flag, _)| *flag != '.')
            .map(|(_, what)| what)
            .collect();
        if !said.is_empty() {
            found.push(format!("{path} (submodule: {})", said.join(", ")));
        }
    }
    found
}

/// The git directories of submodules below `modules` (nested submodules' too), sorted.
fn submodule_repositories(modules: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(read) = std::fs::read_dir(dir) else {
            return;
        };
        let mut dirs: Vec<PathBuf> = read
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
        dirs.sort();
        for path in dirs {
            if path.join("HEAD").is_file() && path.join("objects").is_dir() {
                out.push(path.clone());
                walk(&path.join("modules"), out);
            } else {
                walk(&path, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(modules, &mut out);
    out
}

/// A commit the submodule repository at `git_dir` reaches from its HEAD, branches or tags that
/// none of its remote-tracking refs has: what exists only there.
fn unpublished_commit(git_dir: &Path) -> Result<Option<String>> {
    let out = Git::at_git_dir(git_dir)
        .args(["rev-list", "-n1", "--all", "--not", "--remotes"])
        .output()?;
    Ok((!out.is_empty()).then_some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_submodules_whose_status_says_something_are_named() {
        let z = "1 .M N... 100644 100644 100644 a a docs/a.md\0\
                 1 .M S.M. 160000 160000 160000 a a sub\0\
                 1 .M SC.U 160000 160000 160000 a a deps/two words\0\
                 1 .. S... 160000 160000 160000 a a clean\0\
                 2 R. S..U 160000 160000 160000 a a R100 moved\0old\0\
                 ? untracked\0";
        assert_eq!(
            submodule_states(z),
            [
                "sub (submodule: modified content)",
                "deps/two words (submodule: new commits, untracked content)",
                "moved (submodule: untracked content)",
            ]
        );
        assert!(submodule_states("").is_empty());
    }
}
