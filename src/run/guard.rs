//! What an attempt may not touch. Unless the run's plan targets them, an attempt may not change
//! a protected path — the plan file, `.baton.yml`, the CI configuration ([`DEFAULT_PROTECTED`]),
//! and what `protect:` in `.baton.yml` or the plan adds — nor the repository's git
//! configuration; and it may not move its worktree off the run's branch, rewrite the branch
//! below the commit it had when the attempt started, or leave the base outside its history.
//! An attempt that does any of these is `failed`, each violation named in its `violations` and
//! its `error` (docs/state.md, "Violations").
//!
//! Nor may it change the run's plan snapshot, which the run follows and which `BATON_PLAN_FILE`
//! names: a snapshot with fewer targets would gate less from the next attempt on. One that was
//! changed is put back as it was ([`judge`]).
//!
//! Nothing here trusts the agent: [`before`] records the facts git-baton needs before the actor
//! starts (the branch's tip, a digest of the git configuration, the plan snapshot's bytes),
//! [`after`] reads the same facts
//! from the repository once the snapshot is made, and [`violations`] — pure — compares them.
//! Protected paths are judged on the run's changes (its snapshot against the base), not on
//! this attempt's alone: a change an earlier attempt made and the worktree still holds is no
//! more acceptable now, and a resume cannot launder it.
//!
//! Where they overlap, the reasons are worded as `resume` words its refusal of such a worktree
//! ([`off_branch`], [`base_left`]).

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::DEFAULT_PROTECTED;
use crate::git::{CommitId, Repo, Scope};
use crate::plan::{Plan, Target};
use crate::state::transition::AttemptEnd;
use crate::state::{Outcome, RunState, Violation, ViolationKind, violations_message};

/// How many changed configuration files one violation names before it counts the rest.
const NAMED_FILES: usize = 5;

/// How `resume` and an attempt's violation describe a worktree whose HEAD is `found` rather
/// than `branch`: "is on branch other instead of baton/x".
pub fn off_branch(found: Option<&str>, branch: &str) -> String {
    let found = found.map_or("a detached HEAD".to_string(), |b| format!("branch {b}"));
    format!("is on {found} instead of {branch}")
}

/// How `resume` and an attempt's violation describe a branch whose history lost the base.
pub fn base_left(branch: &str, base: &str) -> String {
    format!("the history of {branch} does not contain the run's base {base}")
}

/// The paths no attempt of a run may change, each with what it is, and the targets that allow
/// some of them.
pub struct Protected<'a> {
    entries: Vec<(Target, &'static str)>,
    /// The plan file, repo-relative.
    plan_path: String,
    targets: &'a [Target],
}

impl<'a> Protected<'a> {
    /// The defaults, the configuration's `protect:` (`configured`), the plan's own `protect:`
    /// and the plan file itself; `plan.targets` allow what they match.
    pub fn new(configured: &[String], plan: &'a Plan, plan_path: &str) -> Protected<'a> {
        let mut entries: Vec<(Target, &'static str)> = DEFAULT_PROTECTED
            .iter()
            .filter_map(|(spec, what)| Target::pattern(spec).ok().map(|t| (t, *what)))
            .collect();
        entries.extend(
            configured
                .iter()
                .filter_map(|spec| Target::pattern(spec).ok())
                .map(|t| (t, "protected by .baton.yml")),
        );
        entries.extend(
            plan.protect
                .iter()
                .map(|t| (t.clone(), "protected by the plan")),
        );
        Protected {
            entries,
            plan_path: plan_path.trim_start_matches("./").to_string(),
            targets: &plan.targets,
        }
    }

    /// What `path` is, when it is protected.
    fn what(&self, path: &str) -> Option<&'static str> {
        if path == self.plan_path {
            return Some("the run's plan");
        }
        self.entries
            .iter()
            .find(|(t, _)| t.matches(path))
            .map(|(_, what)| *what)
    }

    /// Whether a target of the plan names `path`, which makes it the run's work.
    fn targeted(&self, path: &str) -> bool {
        self.targets.iter().any(|t| t.matches(path))
    }

    /// The part of the repository a protected path can be in.
    pub fn scope(&self) -> Scope {
        let scopes = self.entries.iter().map(|(t, _)| t.scope().to_string());
        Scope::prefixes(scopes.chain([self.plan_path.clone()]))
    }
}

/// What git-baton records before the actor starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Before {
    /// The tip of the run's branch: the run's last recorded commit.
    pub tip: Option<CommitId>,
    /// Each git configuration file and its digest (`Repo::git_config_digest`).
    pub git_config: BTreeMap<String, String>,
    /// The run's plan snapshot, as the run follows it.
    pub plan_snapshot: Option<Vec<u8>>,
}

/// What git-baton finds once the attempt's snapshot is made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct After {
    /// The branch the worktree's HEAD is on; `None` when detached (or unreadable).
    pub head_branch: Option<String>,
    pub tip: Option<CommitId>,
    /// The tip contains the tip recorded before the actor.
    pub keeps_recorded: bool,
    /// The tip and the worktree's HEAD contain the base.
    pub has_base: bool,
    pub git_config: BTreeMap<String, String>,
    pub plan_snapshot: Option<Vec<u8>>,
    /// The protected scope's paths the snapshot changes against the base, or why they could
    /// not be read; `None` without a snapshot.
    pub changed: Option<Result<Vec<String>, String>>,
}

/// Reads [`Before`]: the branch's tip, the git configuration of the run's worktree, and the
/// plan snapshot at `plan_file`.
pub fn before(repo: &Repo, state: &RunState, plan_file: &Path) -> Before {
    Before {
        tip: repo.branch_tip(&state.branch).ok().flatten(),
        git_config: config_digest(repo, state),
        plan_snapshot: read_snapshot(plan_file),
    }
}

fn read_snapshot(plan_file: &Path) -> Option<Vec<u8>> {
    crate::files::read_regular_string(plan_file)
        .ok()
        .map(String::into_bytes)
}

/// Reads [`After`], the snapshot (when one was made) against the base in `protected`'s scope.
pub fn after(
    repo: &Repo,
    state: &RunState,
    before: &Before,
    protected: &Protected<'_>,
    snapshot: Option<CommitId>,
    plan_file: &Path,
) -> After {
    let theirs = super::open_run_worktree(repo, state).ok();
    let head_branch = theirs.as_ref().and_then(|r| r.head_branch().ok().flatten());
    let head = theirs.as_ref().and_then(Repo::head_commit);
    let tip = repo.branch_tip(&state.branch).ok().flatten();
    let contains = |ancestor: CommitId, of: Option<CommitId>| {
        of.is_some_and(|commit| repo.is_ancestor(ancestor, commit))
    };
    let keeps_recorded = match before.tip {
        Some(recorded) => contains(recorded, tip),
        None => true,
    };
    let has_base = contains(state.base, tip) && contains(state.base, head);
    let changed = snapshot.map(|snapshot| {
        repo.tree_changes(state.base, snapshot, &protected.scope())
            .map_err(|err| err.to_string())
    });
    After {
        head_branch,
        tip,
        keeps_recorded,
        has_base,
        git_config: theirs.as_ref().unwrap_or(repo).git_config_digest(),
        plan_snapshot: read_snapshot(plan_file),
        changed,
    }
}

/// The digest of the run's worktree's git configuration, or of the repository's when the
/// worktree cannot be opened (its own `config.worktree` is then not read, before or after).
fn config_digest(repo: &Repo, state: &RunState) -> BTreeMap<String, String> {
    match super::open_run_worktree(repo, state) {
        Ok(theirs) => theirs.git_config_digest(),
        Err(_) => repo.git_config_digest(),
    }
}

/// What the attempt did that no attempt may, from the facts before and after it.
pub fn violations(
    protected: &Protected<'_>,
    branch: &str,
    base: CommitId,
    before: &Before,
    after: &After,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let changed = match &after.changed {
        None => &[][..],
        Some(Ok(paths)) => paths.as_slice(),
        // Failing closed: a diff git-baton cannot make is no proof that nothing changed.
        Some(Err(why)) => {
            out.push(Violation {
                kind: ViolationKind::ProtectedPath,
                subject: String::new(),
                message: format!("git-baton cannot tell which protected paths it changes: {why}"),
            });
            &[][..]
        }
    };
    for path in changed {
        if let Some(what) = protected.what(path)
            && !protected.targeted(path)
        {
            out.push(Violation {
                kind: ViolationKind::ProtectedPath,
                subject: path.clone(),
                message: format!("it changes {path} ({what}), which the plan does not target"),
            });
        }
    }
    let changed: Vec<&String> = before
        .git_config
        .keys()
        .chain(
            after
                .git_config
                .keys()
                .filter(|k| !before.git_config.contains_key(*k)),
        )
        .filter(|k| before.git_config.get(*k) != after.git_config.get(*k))
        .collect();
    if !changed.is_empty() {
        // One sentence for all of them, which each of their violations carries.
        let named: Vec<&str> = changed
            .iter()
            .take(NAMED_FILES)
            .map(|s| s.as_str())
            .collect();
        let more = match changed.len() - named.len() {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        let said = format!(
            "it changes the repository's git configuration: {}{more}",
            named.join(", ")
        );
        out.extend(changed.iter().map(|file| Violation {
            kind: ViolationKind::GitConfig,
            subject: (*file).clone(),
            message: said.clone(),
        }));
    }
    if after.head_branch.as_deref() != Some(branch) {
        out.push(Violation {
            kind: ViolationKind::Branch,
            subject: after.head_branch.clone().unwrap_or_default(),
            message: format!(
                "its worktree {}",
                off_branch(after.head_branch.as_deref(), branch)
            ),
        });
    }
    if !after.keeps_recorded
        && let Some(recorded) = before.tip
    {
        let now = after
            .tip
            .map_or("is gone".to_string(), |t| format!("is at {}", t.short()));
        out.push(Violation {
            kind: ViolationKind::History,
            subject: recorded.to_string(),
            message: format!(
                "it rewrote {branch} below {}, its tip before the attempt: the branch {now}",
                recorded.short()
            ),
        });
    }
    if after.plan_snapshot != before.plan_snapshot {
        out.push(Violation {
            kind: ViolationKind::PlanSnapshot,
            subject: crate::state::trust::PLAN_SNAPSHOT.into(),
            message: "it changes the run's plan snapshot, which the run follows".into(),
        });
    }
    if !after.has_base {
        out.push(Violation {
            kind: ViolationKind::Base,
            subject: base.to_string(),
            message: base_left(branch, &base.to_string()),
        });
    }
    out
}

/// Makes `end` record `violations`: the attempt fails, whatever it would have been, and its
/// error names each after any other reason. One sentence shared by several violations (the
/// git configuration's) is said once.
pub fn record(end: &mut AttemptEnd, violations: Vec<Violation>) {
    if violations.is_empty() {
        return;
    }
    if end.outcome != Outcome::Failed {
        // An interrupted or rate-limited attempt that did this is no less failed; a blocked
        // one's gate report does not stand for it.
        end.outcome = Outcome::Failed;
        end.cause = None;
        end.coverage = None;
    }
    let mut said: Vec<Violation> = Vec::new();
    for v in &violations {
        if !said.iter().any(|s| s.message == v.message) {
            said.push(v.clone());
        }
    }
    let message = violations_message(&said);
    end.error = Some(match end.error.take() {
        Some(error) => format!("{error}; {message}"),
        None => message,
    });
    end.violations = violations;
}

/// Judges the attempt `end` is the end of: the facts [`before`] recorded against what the
/// repository holds now. A plan snapshot the attempt changed is written back as it was, so
/// that the run goes on following the plan it was created with; the attempt fails for it.
pub fn judge(
    end: &mut AttemptEnd,
    repo: &Repo,
    state: &RunState,
    before: &Before,
    protected: &Protected<'_>,
    plan_file: &Path,
) {
    let after = after(repo, state, before, protected, end.snapshot, plan_file);
    let found = violations(protected, &state.branch, state.base, before, &after);
    if let Some(original) = &before.plan_snapshot
        && after.plan_snapshot.as_ref() != Some(original)
        && let Err(err) = crate::files::write_atomic(plan_file, original)
    {
        end.error = Some(format!(
            "cannot restore the plan snapshot {}: {err}",
            plan_file.display()
        ));
    }
    record(end, found);
}

#[cfg(test)]
mod tests;
