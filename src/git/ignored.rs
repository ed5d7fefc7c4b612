//! Which paths the worktree's ignore rules exclude while nothing tracks them: where a file the
//! work creates can never show as a change (`git ls-files --others --exclude-standard` leaves
//! it out), which a plan's target there must know before an agent works.

use std::path::Path;

use super::command::{Git, failed};
use super::{Repo, Result};

/// `git ls-files` listing the ignored paths nothing tracks, a directory entirely ignored as one
/// entry ending in `/` (build output is many files).
pub(super) const LS_IGNORED: [&str; 6] = [
    "ls-files",
    "-z",
    "--others",
    "--ignored",
    "--exclude-standard",
    "--directory",
];

/// An ignored path and the rule that ignores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    pub path: String,
    /// Where the rule is: `.gitignore:3`, `.git/info/exclude:1`, a global excludes file.
    pub source: String,
    pub pattern: String,
}

impl Repo {
    /// The paths among `paths` (repo-relative; a trailing `/` names a directory) that git's
    /// ignore rules exclude in the worktree `worktree` and no index entry tracks, as
    /// `git check-ignore` finds them, with the rule that does it.
    pub fn ignored_untracked(&self, worktree: &Path, paths: &[&str]) -> Result<Vec<Ignored>> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let mut input = Vec::new();
        for path in paths {
            input.extend_from_slice(path.as_bytes());
            input.push(0);
        }
        let (command, at, out) = Git::at_worktree(self.git_dir(), worktree)
            .args(["check-ignore", "--verbose", "-z", "--stdin"])
            .input(input)
            .finish()?;
        // 1: nothing is ignored.
        if !matches!(out.status.code(), Some(0 | 1)) {
            return Err(failed(command, at, &out));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let fields: Vec<&str> = text.split('\0').collect();
        Ok(fields
            .chunks_exact(4)
            // A negated pattern matched: the path is not ignored.
            .filter(|f| !f[2].starts_with('!'))
            .map(|f| Ignored {
                source: format!("{}:{}", f[0], f[1]),
                pattern: f[2].to_owned(),
                path: f[3].to_owned(),
            })
            .collect())
    }
}
