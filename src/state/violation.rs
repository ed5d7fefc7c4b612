//! What an attempt changed that no attempt may change (docs/state.md, "Violations"): a
//! protected path, the repository's git configuration, the branch its worktree is on, or the
//! history the run had recorded. Each is decided by git-baton from what it recorded before the
//! actor and found after; an attempt with any is `failed`, and the run's error is of kind
//! `violation`.

use serde::{Deserialize, Serialize};

/// One thing an attempt may not do, done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Violation {
    pub kind: ViolationKind,
    /// What it concerns: the protected path (repo-relative), the git file (relative to the
    /// repository's common git directory), the branch HEAD is on (empty when detached), or the
    /// commit that is no longer in the branch's history, or `plan.md` for the plan snapshot.
    pub subject: String,
    /// The sentence the attempt's `error` holds for it.
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    /// The run's changes (its snapshot against the base) hold a protected path no target names.
    ProtectedPath,
    /// A file of the repository's git configuration (`config`, `config.worktree`, `hooks/`,
    /// `info/`) differs from what it was before the actor.
    GitConfig,
    /// The worktree's HEAD is not on the run's branch.
    Branch,
    /// The run's branch no longer contains the commit it had before the actor.
    History,
    /// The run's branch (or HEAD) no longer contains the run's base.
    Base,
    /// The run's plan snapshot (`plan.md` of the run directory) differs from what it was
    /// before the actor; git-baton writes it back.
    PlanSnapshot,
}

/// The error an attempt with `violations` records, after any other reason.
pub fn violations_message(violations: &[Violation]) -> String {
    let said: Vec<&str> = violations.iter().map(|v| v.message.as_str()).collect();
    format!(
        "the attempt changed what no attempt may: {}",
        said.join("; ")
    )
}
