//! Health checks of every run in a repository, each finding with the command that fixes it.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::git::{GitError, Repo};
use crate::state::store::Store;
use crate::state::{RunState, RunStatus};

#[derive(Debug, Serialize)]
pub struct Finding {
    /// `stale_run`, `broken_worktree`, `orphaned_branch`, `orphaned_creation`, `orphaned_removal`,
    /// `orphaned_worktree`, `broken_registration`, `temporary_file`, `dubious_ownership`,
    /// `unreadable_state`.
    pub kind: &'static str,
    pub run: Option<String>,
    pub message: String,
    pub fix: String,
}

pub fn check(repo: &Repo, store: &Store, worktree_root: &Path) -> Vec<Finding> {
    let mut findings = Vec::new();
    let ids = store.list().unwrap_or_default();
    let mut states: Vec<RunState> = Vec::new();
    for id in &ids {
        match store.load(id) {
            Ok(state) => states.push(state),
            Err(err) => findings.push(Finding {
                kind: "unreadable_state",
                run: Some(id.to_string()),
                message: err.to_string(),
                fix: format!(
                    "inspect {}, or remove the run: git baton clean --force {id}",
                    store.run_dir(id).display()
                ),
            }),
        }
    }
    for id in &ids {
        // A live driver may be between writing and renaming one; a killed one leaves it.
        if !matches!(store.holder(id), Ok(None)) {
            continue;
        }
        for (name, path) in entries(&store.run_dir(id)) {
            if name.starts_with(".tmp-") {
                findings.push(Finding {
                    kind: "temporary_file",
                    run: Some(id.to_string()),
                    message: format!(
                        "{} is left over from a write that did not complete",
                        path.display()
                    ),
                    fix: format!("rm -f '{}'", path.display()),
                });
            }
        }
    }
    for state in &states {
        let id = &state.run_id;
        if store.is_stale(state) {
            findings.push(Finding {
                kind: "stale_run",
                run: Some(id.to_string()),
                message: format!(
                    "run {id} is {} but no process drives it: it crashed or was killed",
                    state.status()
                ),
                fix: format!("git baton resume {id}"),
            });
        }
        if state.status() == RunStatus::Finished {
            continue;
        }
        match Repo::open_worktree(Path::new(&state.worktree)) {
            Err(GitError::DubiousOwnership { path }) => findings.push(Finding {
                kind: "dubious_ownership",
                run: Some(id.to_string()),
                message: format!(
                    "the worktree of run {id} is owned by another user: {}",
                    path.display()
                ),
                fix: format!(
                    "git config --global --add safe.directory {}",
                    path.display()
                ),
            }),
            _ => {
                if let Err(err) = super::check_worktree(repo, state) {
                    findings.push(Finding {
                        kind: "broken_worktree",
                        run: Some(id.to_string()),
                        message: err.to_string(),
                        fix: err.hints().join("; "),
                    });
                }
            }
        }
    }
    let cleaned = store.cleaned();
    let known: Vec<&str> = ids
        .iter()
        .map(|id| id.as_str())
        .chain(cleaned.iter().map(String::as_str))
        .collect();
    for branch in repo.branches_with_prefix("baton/").unwrap_or_default() {
        let id = branch.trim_start_matches("baton/");
        if !known.contains(&id) {
            findings.push(Finding {
                kind: "orphaned_branch",
                run: None,
                message: format!(
                    "branch {branch} belongs to no run (a failed creation, or a cleaned run)"
                ),
                fix: format!("merge it if it holds work you want, else: git branch -D {branch}"),
            });
        }
    }
    for (name, path) in entries(&store.runs_dir()) {
        if let Some(id) = name.strip_prefix(".new-")
            && !matches!(store.holder(&format!(".new-{id}")), Ok(Some(_)))
        {
            findings.push(Finding {
                kind: "orphaned_creation",
                run: None,
                message: format!(
                    "{} is left over from a run creation that did not complete",
                    path.display()
                ),
                fix: format!("rm -rf '{}'", path.display()),
            });
        }
        if name.starts_with(".clean-") {
            findings.push(Finding {
                kind: "orphaned_removal",
                run: None,
                message: format!(
                    "{} is left over from a `git baton clean` that did not complete",
                    path.display()
                ),
                fix: format!("rm -rf '{}'", path.display()),
            });
        }
    }
    for broken in repo.broken_worktrees(super::create::is_run_id) {
        findings.push(Finding {
            kind: "broken_registration",
            run: None,
            message: format!(
                "{} is a worktree registration a killed creation left unusable ({}); the next run discards it",
                broken.path.display(),
                broken.why
            ),
            fix: format!("rm -rf '{}'", broken.path.display()),
        });
    }
    for (name, path) in entries(worktree_root) {
        if !known.contains(&name.as_str()) {
            findings.push(Finding {
                kind: "orphaned_worktree",
                run: None,
                message: format!("{} belongs to no run", path.display()),
                fix: format!("git worktree remove --force '{}'", path.display()),
            });
        }
    }
    findings
}

fn entries(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf)> = read
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
        .collect();
    out.sort();
    out
}
