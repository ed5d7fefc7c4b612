//! `baton/` branches that belong to no run, and which of them `doctor --fix` may delete: only
//! those git-baton provably made.

use std::path::PathBuf;

use crate::git::{CommitId, Repo};

use super::{Action, Finding, Kind};

/// `baton/<run id>` branches of no run. Only a branch git-baton provably made is git-baton's to
/// remove: its name is a run id and its reflog begins with git-baton's creation of it
/// ([`Repo::created_here`]); a user's `baton/my-experiment` is not reported at all, and a
/// branch named like a run id that git-baton did not make is reported for the user to judge,
/// never deleted by `--fix`. Deleting one of git-baton's own is safe when its tip is reachable
/// from a branch that stays (or from HEAD), so that no commit is lost; a branch checked out in
/// the main worktree is someone's work in progress, not debris.
pub(super) fn orphaned(
    repo: &Repo,
    owners: &[&str],
    kept_worktrees: &[(String, PathBuf)],
) -> Vec<Finding> {
    let all = repo.branches_with_prefix("").unwrap_or_default();
    let orphan = |branch: &str| {
        branch
            .strip_prefix("baton/")
            .is_some_and(|id| crate::run::create::is_run_id(id) && !owners.contains(&id))
    };
    let current = repo.head_branch().ok().flatten();
    let kept_tips: Vec<CommitId> = all
        .iter()
        .filter(|b| !orphan(b))
        .filter_map(|b| repo.branch_tip(b).ok().flatten())
        .chain(repo.head_commit())
        .collect();
    let mut found = Vec::new();
    for branch in all.iter().filter(|b| orphan(b)) {
        if current.as_deref() == Some(branch.as_str()) {
            continue;
        }
        let Ok(Some(tip)) = repo.branch_tip(branch) else {
            continue;
        };
        let kept_elsewhere = kept_tips.iter().any(|&t| repo.is_ancestor(tip, t));
        let ours = repo.created_here(branch);
        let mut message = match ours {
            true => format!(
                "branch {branch} belongs to no run (a creation that was killed, or a run whose \
                 directory was deleted by hand)"
            ),
            false => format!(
                "branch {branch} is named like a run but belongs to no run here, and its reflog \
                 does not show git-baton creating it (a branch made by hand or fetched from \
                 elsewhere): `doctor --fix` leaves it; delete it yourself if it is not yours"
            ),
        };
        if !kept_elsewhere {
            message.push_str(
                "; it holds commits no other branch has: merge them first if you want them",
            );
        }
        let id = branch.trim_start_matches("baton/").to_string();
        let finding = Finding::new(
            Kind::OrphanedBranch,
            None,
            message,
            format!("git branch -D {branch}"),
        );
        if !ours {
            found.push(finding);
            continue;
        }
        if let Some((_, worktree)) = kept_worktrees.iter().find(|(name, _)| *name == id) {
            let mut finding = finding;
            finding.message.push_str(&format!(
                "; it is checked out in {}, which the fix before this one removes",
                worktree.display()
            ));
            found.push(finding);
            continue;
        }
        found.push(finding.applied(
            Action::DeleteBranch {
                branch: branch.clone(),
                id,
            },
            kept_elsewhere,
        ));
    }
    found
}
