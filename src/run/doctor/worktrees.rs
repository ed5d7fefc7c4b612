//! Directories under the worktree root that belong to no run, and which of them `doctor --fix`
//! may remove: only those git-baton provably made, holding nothing that exists nowhere else.

use std::path::{Path, PathBuf};

use crate::git::{CommitId, Repo, Scope};

use super::{Action, Finding, Kind, quote};

/// The entries of `root` no run in `owners` has, as findings pushed onto `found`; returns those
/// `--fix` leaves (their branches stay checked out). Only an entry named like a run is looked
/// at — a user's `.baton/worktrees/my-scratch` is not even reported — and only one git-baton
/// provably made may be removed: its branch `baton/<name>` is one git-baton created
/// ([`Repo::created_here`], as for orphaned branches). One named like a run that git-baton did
/// not provably make is reported for the user to judge, never removed.
pub(super) fn orphaned(
    repo: &Repo,
    root: &Path,
    owners: &[&str],
    found: &mut Vec<Finding>,
) -> Vec<(String, PathBuf)> {
    let mut kept = Vec::new();
    for (name, path) in crate::state::store::sorted_entries(root) {
        if !crate::run::create::is_run_id(&name) || owners.contains(&name.as_str()) {
            continue;
        }
        let finding = orphaned_worktree(repo, &name, &path);
        if !finding.safe {
            kept.push((name, path));
        }
        found.push(finding);
    }
    kept
}

/// A directory under the worktree root that no run owns. Removing it is safe when it holds no
/// content that a commit does not: for a worktree git knows, nothing its HEAD lacks (files a
/// killed checkout never wrote are no loss); for a directory whose registration is gone or never
/// completed, no file but ones equal to the same path on its branch. A worktree is git-baton's
/// only when its branch is provably one git-baton made.
fn orphaned_worktree(repo: &Repo, name: &str, path: &Path) -> Finding {
    let branch = format!("baton/{name}");
    let ours = repo.created_here(&branch);
    let registered = crate::run::worktree_at(repo, path);
    let (unkept, fix) = match &registered {
        // Twice forced: a creation killed inside git leaves its worktree locked ("initializing").
        Some(worktree) => (
            unkept_in_worktree(repo, worktree, path),
            format!("git worktree remove --force --force {}", quote(path)),
        ),
        None => {
            let tip = repo.branch_tip(&branch).ok().flatten();
            (
                unkept_in_directory(repo, path, tip),
                format!("rm -rf {}", quote(path)),
            )
        }
    };
    let mut message = format!("{} belongs to no run", path.display());
    if registered.is_none() {
        message.push_str(
            " and is no worktree git knows (its registration is gone or was never completed)",
        );
    }
    if !unkept.is_empty() {
        message.push_str(&format!(
            "; it holds what no commit has ({}): removing it loses that",
            unkept.join(", ")
        ));
    }
    // Someone locked it on purpose (a worktree on removable media, say): not debris to us.
    let lock = registered
        .as_ref()
        .and_then(|wt| std::fs::read_to_string(wt.git_dir().join("locked")).ok())
        .filter(|reason| reason.trim() != "initializing");
    if let Some(reason) = &lock {
        message.push_str(&format!("; it is locked ({})", reason.trim()));
    }
    if !ours {
        message.push_str(&format!(
            "; it is named like a run, but branch {branch} is gone or its reflog does not show \
             git-baton creating it (a directory made by hand or by another tool): `doctor --fix` \
             leaves it; remove it yourself if it is not yours"
        ));
    }
    let finding = Finding::new(Kind::OrphanedWorktree, None, message, fix);
    if !ours || !unkept.is_empty() || lock.is_some() {
        return finding;
    }
    finding.applied(
        Action::RemoveWorktree {
            path: path.to_path_buf(),
            registered: registered.is_some(),
        },
        true,
    )
}

/// The paths of a worktree whose content its HEAD does not have: changed or untracked files
/// that are there (a deletion loses nothing), ignored files, and what the removal would take
/// besides ([`Repo::held_beyond_files`]: a HEAD no ref reaches, submodule work).
fn unkept_in_worktree(repo: &Repo, worktree: &Repo, path: &Path) -> Vec<String> {
    let Some(head) = worktree.head_commit() else {
        return vec!["(no commit checked out)".into()];
    };
    // Removal deletes ignored files too; they may be an agent's work.
    let changes = worktree
        .worktree_changes(head, &Scope::All)
        .and_then(|changes| Ok((changes, worktree.ignored_files(path)?)))
        .and_then(|(changes, ignored)| Ok((changes, ignored, repo.held_beyond_files(path)?)));
    match changes {
        Ok((changes, ignored, held)) => changes
            .into_iter()
            .filter(|rel| std::fs::symlink_metadata(path.join(rel)).is_ok())
            .chain(ignored)
            .chain(held)
            .collect(),
        Err(err) => vec![format!("(cannot tell: {err})")],
    }
}

/// The files of a directory (its `.git` link aside) that are not the same file at the same path
/// in commit `tip`.
fn unkept_in_directory(repo: &Repo, dir: &Path, tip: Option<CommitId>) -> Vec<String> {
    fn walk(repo: &Repo, dir: &Path, rel: &str, tip: Option<CommitId>, out: &mut Vec<String>) {
        for (name, path) in crate::state::store::sorted_entries(dir) {
            if rel.is_empty() && name == ".git" && path.is_file() {
                continue;
            }
            let rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.is_dir() => walk(repo, &path, &rel, tip, out),
                Ok(meta) if meta.is_file() => {
                    let committed = tip.and_then(|tip| repo.read_file_at(tip, &rel).ok().flatten());
                    if committed.is_none() || crate::files::read_regular(&path).ok() != committed {
                        out.push(rel);
                    }
                }
                _ => out.push(rel),
            }
        }
    }
    let mut out = Vec::new();
    walk(repo, dir, "", tip, &mut out);
    out
}
