//! Which uncovered targets name nothing: no path at the merge base, at the head or in the
//! worktree matches them, and the work created none (else they would be changed). Such a target
//! is a mistake in the plan, reported as `missing` with the existing path it most likely meant.
//!
//! Only uncovered targets are looked at, so a gate that passes pays nothing for this.

use std::collections::HashMap;
use std::path::Path;

use crate::coverage::{Report, TargetStatus, closest_name};
use crate::git::{CommitId, GitError, PathKind, Repo};
use crate::plan::{Target, TargetKind};

/// At most this many paths are listed to find a glob's match (in a tree, on disk); a glob whose
/// scope holds more is taken to name something rather than be reported on a guess.
const MAX_LISTED: usize = 100_000;

/// Where a target may name something.
pub struct Places<'a> {
    /// The commits whose trees count: the merge base, and the head in range mode. The first is
    /// where suggestions come from.
    pub commits: &'a [CommitId],
    /// The worktree, when the gate checks one.
    pub worktree: Option<&'a Path>,
}

/// Marks each uncovered target of `report` (one row per target of `targets`) that names nothing.
pub fn mark_missing(
    repo: &Repo,
    report: &mut Report,
    targets: &[Target],
    places: &Places<'_>,
) -> Result<(), GitError> {
    let uncovered: Vec<usize> = report
        .targets
        .iter()
        .enumerate()
        .filter(|(_, row)| row.status == TargetStatus::Uncovered)
        .map(|(i, _)| i)
        .collect();
    let mut dirs = Dirs::new(repo);
    for i in uncovered {
        let Some(target) = targets.get(i) else {
            continue;
        };
        if names_something(&mut dirs, target, places)? {
            continue;
        }
        let suggestion = match (target.kind == TargetKind::Glob, places.commits.first()) {
            (false, Some(&commit)) => suggest(repo, commit, target)?,
            _ => None,
        };
        report.mark_missing(i, suggestion);
    }
    Ok(())
}

/// The directories of the commits' trees listed so far, so that many targets in one directory
/// cost one listing and a lookup each, not a walk from the root each. Keyed by commit, then by
/// directory, so that a lookup borrows the target's path instead of building a key.
pub(super) struct Dirs<'r> {
    pub(super) repo: &'r Repo,
    listed: HashMap<CommitId, HashMap<String, HashMap<String, PathKind>>>,
}

impl<'r> Dirs<'r> {
    pub(super) fn new(repo: &'r Repo) -> Self {
        Dirs {
            repo,
            listed: HashMap::new(),
        }
    }

    /// What `path` is in `commit`, from the listing of its directory.
    pub(super) fn kind_at(
        &mut self,
        commit: CommitId,
        path: &str,
    ) -> Result<Option<PathKind>, GitError> {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        let dirs = self.listed.entry(commit).or_default();
        if !dirs.contains_key(dir) {
            let entries = self.repo.dir_entries_at(commit, dir)?.into_iter().collect();
            dirs.insert(dir.to_owned(), entries);
        }
        Ok(dirs[dir].get(name).copied())
    }
}

fn names_something(
    dirs: &mut Dirs<'_>,
    target: &Target,
    places: &Places<'_>,
) -> Result<bool, GitError> {
    let repo = dirs.repo;
    if target.kind == TargetKind::Glob {
        for &commit in places.commits {
            if glob_matches_at(repo, commit, target)? {
                return Ok(true);
            }
        }
        return Ok(places
            .worktree
            .is_some_and(|root| glob_matches_on_disk(root, target)));
    }
    let path = target.scope();
    let dir_only = target.kind == TargetKind::Dir;
    for &commit in places.commits {
        if let Some(kind) = dirs.kind_at(commit, path)?
            && (!dir_only || kind == PathKind::Dir)
        {
            return Ok(true);
        }
    }
    Ok(places.worktree.is_some_and(|root| {
        std::fs::symlink_metadata(root.join(path)).is_ok_and(|m| !dir_only || m.is_dir())
    }))
}

/// Whether a leaf of `commit`'s tree below the glob's literal scope matches it.
fn glob_matches_at(repo: &Repo, commit: CommitId, target: &Target) -> Result<bool, GitError> {
    let mut dirs = vec![target.scope().to_owned()];
    let mut listed = 0;
    while let Some(dir) = dirs.pop() {
        for (name, kind) in repo.dir_entries_at(commit, &dir)? {
            listed += 1;
            if listed > MAX_LISTED {
                return Ok(true);
            }
            let path = join(&dir, &name);
            match kind {
                PathKind::Dir => dirs.push(path),
                _ if target.matches(&path) => return Ok(true),
                _ => {}
            }
        }
    }
    Ok(false)
}

/// Whether a file below the glob's literal scope in the worktree matches it (ignored files
/// included: they exist, even if no change to them can count).
fn glob_matches_on_disk(root: &Path, target: &Target) -> bool {
    let mut dirs = vec![target.scope().to_owned()];
    let mut listed = 0;
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            listed += 1;
            if listed > MAX_LISTED {
                return true;
            }
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            if name == ".git" {
                continue;
            }
            let path = join(&dir, &name);
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(path);
            } else if target.matches(&path) {
                return true;
            }
        }
    }
    false
}

/// The existing path of `commit` that the target most likely misspells, one component at a
/// time (`crate/lib.rs` → `crates/lib.rs`); `None` when some component has no close name.
fn suggest(repo: &Repo, commit: CommitId, target: &Target) -> Result<Option<String>, GitError> {
    let mut found = String::new();
    for component in target.scope().split('/') {
        let names: Vec<String> = repo
            .dir_entries_at(commit, &found)?
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        let name = if names.iter().any(|n| n == component) {
            component
        } else {
            match closest_name(component, &names) {
                Some(name) => name,
                None => return Ok(None),
            }
        };
        found = join(&found, name);
    }
    if target.kind == TargetKind::Dir {
        found.push('/');
    }
    Ok((found != target.spec).then_some(found))
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}
