//! Targets that `.gitignore` (or `.git/info/exclude`, or a global excludes file) ignores while
//! nothing there is tracked: a file the work creates there never shows as a change, so the
//! target could only end uncovered. Found when the plan is read (`run`, `verify`), located at
//! the target's line and column, before an agent works for nothing.

use std::path::Path;

use serde::Serialize;

use super::missing::Dirs;
use crate::git::{CommitId, GitError, PathKind, Repo};
use crate::plan::{Plan, TargetKind};

/// A target the ignore rules exclude.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct IgnoredTarget {
    /// The plan, as reports name it.
    pub plan: String,
    pub line: usize,
    pub column: usize,
    pub target: String,
    /// The rule that ignores it: `.gitignore:3`, and its pattern.
    pub source: String,
    pub pattern: String,
}

impl std::fmt::Display for IgnoredTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: target `{}` is ignored by {} (`{}`), so no file the work creates there can \
             count as a change",
            self.plan, self.line, self.column, self.target, self.source, self.pattern
        )
    }
}

impl IgnoredTarget {
    pub fn hint(&self) -> String {
        format!(
            "un-ignore it (`!{}` after that rule), track it first (`git add -f`), or target a \
             tracked path",
            self.target
        )
    }
}

/// Whether a directory on the way to `path` is a submodule at `commit`: what is inside is the
/// submodule's, which no rule of this repository ignores (and git refuses to be asked).
fn in_a_submodule(dirs: &mut Dirs<'_>, commit: CommitId, path: &str) -> Result<bool, GitError> {
    let mut end = 0;
    while let Some(slash) = path[end..].find('/') {
        end += slash;
        match dirs.kind_at(commit, &path[..end])? {
            Some(PathKind::Submodule) => return Ok(true),
            Some(PathKind::Dir) => end += 1,
            _ => return Ok(false),
        }
    }
    Ok(false)
}

/// The targets of `plan` (its file named `plan_path`) that the worktree's ignore rules exclude.
/// Globs are left alone: what they match is not one path. So is a target that `commit` (the
/// worktree's base or HEAD) has: a tracked path is not subject to ignore rules, and a plan of
/// many existing targets asks git about none of them.
pub fn ignored_targets(
    repo: &Repo,
    worktree: &Path,
    commit: CommitId,
    plan_path: &str,
    plan: &Plan,
) -> Result<Vec<IgnoredTarget>, GitError> {
    let mut dirs = Dirs::new(repo);
    let mut targets = Vec::new();
    for target in &plan.targets {
        // A path longer than the system's limit can be no file, ignored or not (and git
        // refuses to look at it).
        if target.kind != TargetKind::Glob
            && target.spec.len() < 4096
            && dirs.kind_at(commit, target.scope())?.is_none()
            && !in_a_submodule(&mut dirs, commit, target.scope())?
        {
            targets.push(target);
        }
    }
    let specs: Vec<&str> = targets.iter().map(|t| t.spec.as_str()).collect();
    let ignored = repo.ignored_untracked(worktree, &specs)?;
    Ok(targets
        .iter()
        .filter_map(|t| {
            let found = ignored.iter().find(|i| i.path == t.spec)?;
            Some(IgnoredTarget {
                plan: plan_path.to_owned(),
                line: t.line,
                column: t.column,
                target: t.spec.clone(),
                source: found.source.clone(),
                pattern: found.pattern.clone(),
            })
        })
        .collect())
}
