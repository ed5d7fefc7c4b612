//! The targets a plan's body names, checked against a commit: what `git baton targets` shows
//! and what `derive_targets: body` runs with.
//!
//! The rules are [`crate::plan::derive`]'s; this module only answers its one question — what
//! the commit holds at a path — from the commit's tree, never from the worktree, so that the
//! same plan and base always derive the same targets (a run re-derives them on every load).

use std::path::Path;

use serde::Serialize;

use super::{VerifyError, parse_plan};
use crate::files::repo_relative;
use crate::git::{CommitId, GitError, PathKind, Repo};
use crate::plan::derive::{self, Derivation, Existence, Form, Mention};
use crate::plan::{Plan, Target};

/// `git baton targets PLAN`.
#[derive(Debug, Clone)]
pub struct Options {
    pub plan: std::path::PathBuf,
    /// Default: HEAD, as for `git baton run`.
    pub base: Option<String>,
}

/// One path of the body, as the outputs show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Named {
    pub target: String,
    pub line: usize,
    pub column: usize,
    pub found_in: Form,
    /// Whether the base has the path already (`false`: a file the work creates).
    pub exists: bool,
}

/// What `git baton targets` reports about one plan.
#[derive(Debug, Clone, Serialize)]
pub struct TargetsReport {
    /// The plan's path as shown: repository-relative where it is inside the repository.
    pub plan: String,
    pub base: String,
    /// The plan's own `targets`, as normalized.
    pub declared: Vec<String>,
    /// The targets the body names, each where it is first named.
    pub derived: Vec<Named>,
    /// Mentions that are no target: nothing at the base, and no directory to create them in.
    pub not_found: Vec<Named>,
    /// With declared targets: derived paths that no declared target covers.
    pub not_covered: Vec<Named>,
}

impl TargetsReport {
    /// Whether the plan declares targets (then `derived` only checks them).
    #[must_use]
    pub fn declares(&self) -> bool {
        !self.declared.is_empty()
    }
}

/// Reads a plan from the worktree and derives its targets against `options.base`.
pub fn targets(cwd: &Path, options: &Options) -> Result<TargetsReport, VerifyError> {
    let repo = Repo::discover(cwd)?;
    let workdir = repo.workdir()?.to_path_buf();
    let full = cwd.join(&options.plan);
    let shown =
        repo_relative(&workdir, &full).unwrap_or_else(|| options.plan.display().to_string());
    // As `run` and `verify` read it: a named pipe or a device is refused at once, never waited on.
    let bytes = crate::files::read_regular(&full).map_err(|source| VerifyError::ReadNamed {
        what: "plan",
        path: options.plan.clone(),
        source,
    })?;
    let (path, plan) = parse_plan(&shown, bytes)?;
    let base = repo.resolve_commit(options.base.as_deref().unwrap_or("HEAD"))?;
    let derivation = derive_at(&repo, base, &path, &plan)?;
    let declared: Vec<String> = plan.targets.iter().map(|t| t.spec.clone()).collect();
    let not_covered = not_covered(&plan.targets, &derivation);
    Ok(TargetsReport {
        plan: path,
        base: base.to_string(),
        declared,
        derived: derivation
            .targets
            .iter()
            .map(|d| named(&d.mention, &d.target.spec, d.exists))
            .collect(),
        not_found: derivation
            .not_found
            .iter()
            .map(|m| named(m, &m.path, false))
            .collect(),
        not_covered,
    })
}

/// The targets `plan`'s body names, judged against the tree of `base`. `plan_path` is the
/// plan's repository-relative path (its directory is where links start).
pub fn derive_at(
    repo: &Repo,
    base: CommitId,
    plan_path: &str,
    plan: &Plan,
) -> Result<Derivation, GitError> {
    let plan_dir = plan_path.rsplit_once('/').map_or("", |(dir, _)| dir);
    let mentions = derive::mentions(&plan.body, plan.body_line, plan_dir);
    let mut failed = None;
    let derivation = derive::derive(&mentions, |path| match existence(repo, base, path) {
        Ok(found) => found,
        Err(err) => {
            failed.get_or_insert(err);
            Existence::Nothing
        }
    });
    match failed {
        Some(err) => Err(err),
        None => Ok(derivation),
    }
}

fn existence(repo: &Repo, base: CommitId, path: &str) -> Result<Existence, GitError> {
    Ok(match repo.path_kind_at(base, path)? {
        Some(PathKind::Dir) => Existence::Dir,
        // A symlink or a submodule is changed as one path, like a file.
        Some(_) => Existence::File,
        None => {
            let parent = path.rsplit_once('/').map_or("", |(dir, _)| dir);
            if repo.path_kind_at(base, parent)? == Some(PathKind::Dir) {
                Existence::ParentDir
            } else {
                Existence::Nothing
            }
        }
    })
}

/// The paths the body names that no declared target covers (none for a plan without targets,
/// whose derived targets are all there is).
#[must_use]
pub fn not_covered(declared: &[Target], derivation: &Derivation) -> Vec<Named> {
    if declared.is_empty() {
        return Vec::new();
    }
    derivation
        .targets
        .iter()
        .filter(|d| !covered(declared, &d.target.spec))
        .map(|d| named(&d.mention, &d.target.spec, d.exists))
        .collect()
}

/// Whether a declared target covers a derived one: matches the file, or for a directory
/// matches the directory's path with its `/` (what a directory target or a glob ending in `**`
/// does, and a target naming a file in it does not).
fn covered(declared: &[Target], derived: &str) -> bool {
    declared.iter().any(|t| t.matches(derived))
}

fn named(mention: &Mention, target: &str, exists: bool) -> Named {
    Named {
        target: target.to_owned(),
        line: mention.line,
        column: mention.column,
        found_in: mention.form,
        exists,
    }
}
