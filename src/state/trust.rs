//! What a RunState must hold before git-baton acts on it, beyond the consistency every loaded
//! state is checked for (`check.rs`): the invariants every run is created with.
//!
//! A clone trusts its own `state.json`, but a record fetched from a remote is a claim by
//! whoever could push there (docs/state.md, "Who is trusted for what"). Such a claim is taken
//! only once it could have been made by git-baton: every path field has the one shape creation
//! gives it, a plan with targets has a gated stage, an attempt that passed a gate has the report
//! that says so, and a run this clone already has keeps what its creation fixed. A path field
//! is never joined to a directory without the accessors here, so not even a local file edited
//! by hand reads or writes outside its run directory. A lease that ends further out than a
//! fresh one would is not a lease ([`lease_in_force`]).
//!
//! Everything here is pure: the caller reads the files and passes their bytes.

use std::path::{Path, PathBuf};

use jiff::{SignedDuration, Timestamp};

use super::{Attempt, CoverageMode, Lease, RunState, TargetSource};
use crate::coverage::{Claim, EvidenceEntry, Report, Source, TargetStatus, check_reason};

/// Where creation puts the plan's snapshot, relative to the run directory.
pub const PLAN_SNAPSHOT: &str = "plan.md";

/// How far ahead of this clone's clock another machine's may run before its lease stops
/// counting: a lease renewed there just now must not read here as a forged one.
pub const LEASE_SKEW: SignedDuration = SignedDuration::from_secs(60);

/// The directory of attempt `n` of `stage`, relative to the run directory: the one place the
/// name is made.
pub fn attempt_dir(stage: &str, n: u32) -> String {
    format!("attempts/{stage}-{n}")
}

/// Whether `name` is a stage name `.baton.yml` accepts (`[a-z][a-z0-9_-]*`): one that cannot
/// leave a directory when it becomes part of a path.
pub fn is_stage_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// A path field of a RunState that is not what creation writes there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "run {run}: {field} is `{}`, not `{expected}`: a run's files stay inside its run directory",
    .value.escape_debug()
)]
pub struct BadPath {
    pub run: String,
    pub field: String,
    pub value: String,
    pub expected: String,
}

/// The invariant a claimed RunState breaks, as a sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Broken(pub String);

/// What a record holds besides its `state.json`: the names of its files, and its plan
/// snapshot's bytes when it has one.
pub struct RecordFiles<'a> {
    pub names: Vec<&'a str>,
    pub plan: Option<&'a [u8]>,
}

/// What this repository's configuration says a run is created with: its coverage mode, the
/// stages it gates, whether a plan must have targets, and the runner checks an attempt of each
/// stage runs. A record may not be weaker than that.
pub struct Configured<'a> {
    pub coverage: CoverageMode,
    pub gated: Vec<&'a str>,
    pub require_targets: bool,
    /// Per stage, the names of the checks an attempt of it runs (the repository's, and the
    /// plan snapshot's where the stage is gated).
    pub checks: Vec<(&'a str, Vec<String>)>,
}

/// This clone's own copy of a run, when it has one: its state and its plan snapshot's bytes.
pub struct Ours<'a> {
    pub state: &'a RunState,
    pub plan: Option<&'a [u8]>,
}

impl RunState {
    /// The plan snapshot's path inside `run_dir`, refusing any other than creation's.
    pub fn plan_snapshot_in(&self, run_dir: &Path) -> Result<PathBuf, BadPath> {
        if self.plan.snapshot != PLAN_SNAPSHOT {
            return Err(BadPath {
                run: self.run_id.to_string(),
                field: "plan.snapshot".into(),
                value: self.plan.snapshot.clone(),
                expected: PLAN_SNAPSHOT.into(),
            });
        }
        Ok(run_dir.join(PLAN_SNAPSHOT))
    }

    /// The directory of `attempt`, an attempt of the stage named `stage`, inside `run_dir`:
    /// refused unless it is `attempts/<stage>-<n>` for a stage name that stays one path
    /// component.
    pub fn attempt_dir_in(
        &self,
        run_dir: &Path,
        stage: &str,
        attempt: &Attempt,
    ) -> Result<PathBuf, BadPath> {
        let name = stage;
        let expected = attempt_dir(name, attempt.n);
        if !is_stage_name(name) || attempt.dir != expected {
            return Err(BadPath {
                run: self.run_id.to_string(),
                field: format!("the dir of attempt {} of stage `{name}`", attempt.n),
                value: attempt.dir.clone(),
                expected,
            });
        }
        Ok(run_dir.join(expected))
    }
}

/// Whether `lease` keeps other drivers out at `now`: it has not ended, and it does not end
/// further out than a lease of length `max` taken now would (plus [`LEASE_SKEW`]). A lease
/// until the year 9000 — forged, or written by a clock far ahead — is no lease: it counts as
/// expired, and the next driver takes the run over.
pub fn lease_in_force(lease: &Lease, now: Timestamp, max: SignedDuration) -> bool {
    let latest = now
        .checked_add(max.saturating_add(LEASE_SKEW))
        .unwrap_or(Timestamp::MAX);
    lease.until > now && lease.until <= latest
}

/// Checks a RunState claimed by someone else against what git-baton itself could have
/// written: the shape of every path field, a gated stage when the plan has targets, and a
/// passing report behind every attempt whose gate decided its success.
pub fn check_claim(state: &RunState) -> Result<(), Broken> {
    let bad = |what: String| Err(Broken(what));
    let shape = |e: BadPath| {
        Broken(format!(
            "{} is `{}`, not `{}`",
            e.field,
            e.value.escape_debug(),
            e.expected
        ))
    };
    state.plan_snapshot_in(Path::new("")).map_err(shape)?;
    for stage in &state.stages {
        if !is_stage_name(&stage.name) {
            return bad(format!(
                "stage name `{}` does not match [a-z][a-z0-9_-]*",
                stage.name.escape_debug()
            ));
        }
        for attempt in &stage.attempts {
            state
                .attempt_dir_in(Path::new(""), &stage.name, attempt)
                .map_err(shape)?;
            check_checks(state, &stage.name, attempt)?;
            check_violations(&stage.name, attempt)?;
            check_unrecorded(&stage.name, attempt)?;
        }
    }
    if let Some(problem) = text_problem(&state.plan.path) {
        return bad(format!("plan.path {problem}"));
    }
    if let Some(problem) = state
        .cycle
        .held
        .as_ref()
        .and_then(|h| h.reason.as_deref())
        .and_then(text_problem)
    {
        return bad(format!("cycle.held.reason {problem}"));
    }
    if let Some(problem) = worktree_problem(&state.worktree) {
        return bad(format!(
            "worktree `{}` {problem}",
            state.worktree.escape_debug()
        ));
    }
    if !state.plan.targets.is_empty() && !state.stages.iter().any(|s| s.gated) {
        return bad(format!(
            "its plan has {} target(s) but no stage is gated, which no run is created with",
            state.plan.targets.len()
        ));
    }
    for stage in state.stages.iter().filter(|s| s.gated) {
        for attempt in &stage.attempts {
            if attempt.outcome == Some(super::Outcome::Succeeded) && state.gate_enforced(attempt.n)
            {
                check_passing_report(state, &stage.name, attempt)?;
            }
        }
    }
    Ok(())
}

/// The runner's checks of an attempt are ones git-baton could have recorded, and an attempt
/// that succeeded where they are enforced passed every one of them (a failed check blocks it,
/// whatever the gate says).
fn check_checks(state: &RunState, stage: &str, attempt: &Attempt) -> Result<(), Broken> {
    let at = format!("attempt {} of stage `{stage}`", attempt.n);
    for (i, check) in attempt.checks.iter().enumerate() {
        if let Some(problem) = super::checks::shape_problem(check) {
            return Err(Broken(format!("{at}: {problem}")));
        }
        if attempt.checks[..i].iter().any(|c| c.name == check.name) {
            return Err(Broken(format!("{at} ran check `{}` twice", check.name)));
        }
    }
    if attempt.outcome == Some(super::Outcome::Succeeded)
        && state.gate_enforced(attempt.n)
        && let Some(failed) = super::checks::first_failed(&attempt.checks)
    {
        return Err(Broken(format!(
            "{at} succeeded although its runner check `{}` is `{}`",
            failed.name,
            failed.outcome.name()
        )));
    }
    Ok(())
}

/// An attempt that changed what no attempt may is failed, and says what it changed: git-baton
/// records a violation only on an attempt it fails, always with its subject and message.
fn check_violations(stage: &str, attempt: &Attempt) -> Result<(), Broken> {
    let at = format!("attempt {} of stage `{stage}`", attempt.n);
    if !attempt.violations.is_empty() && attempt.outcome != Some(super::Outcome::Failed) {
        return Err(Broken(format!(
            "{at} records {} violation(s) but is not failed",
            attempt.violations.len()
        )));
    }
    if let Some(v) = attempt.violations.iter().find(|v| v.message.is_empty()) {
        return Err(Broken(format!(
            "{at} records a violation of `{}` that says nothing",
            v.subject.escape_debug()
        )));
    }
    Ok(())
}

/// The paths an attempt's snapshot left out are kept up to a bound, and an attempt that left any
/// out did not succeed.
fn check_unrecorded(stage: &str, attempt: &Attempt) -> Result<(), Broken> {
    let at = format!("attempt {} of stage `{stage}`", attempt.n);
    if attempt.unrecorded.len() > super::UNRECORDED_KEPT {
        return Err(Broken(format!(
            "{at} lists {} unrecorded paths, more than the {} git-baton keeps",
            attempt.unrecorded.len(),
            super::UNRECORDED_KEPT
        )));
    }
    let left_out = !attempt.unrecorded.is_empty() || attempt.unrecorded_omitted > 0;
    if left_out && attempt.outcome == Some(super::Outcome::Succeeded) {
        return Err(Broken(format!(
            "{at} succeeded although its snapshot left paths out"
        )));
    }
    Ok(())
}

/// A gated attempt that succeeded passed its gate: its report says so, and agrees with itself.
fn check_passing_report(state: &RunState, stage: &str, attempt: &Attempt) -> Result<(), Broken> {
    let at = format!("attempt {} of gated stage `{stage}`", attempt.n);
    let Some(report) = &attempt.coverage else {
        return Err(Broken(format!("{at} succeeded without a coverage report")));
    };
    if !report.passed {
        return Err(Broken(format!(
            "{at} succeeded although its coverage report did not pass"
        )));
    }
    let rows: Vec<&str> = report.targets.iter().map(|r| r.target.as_str()).collect();
    if rows
        != state
            .plan
            .targets
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
    {
        return Err(Broken(format!(
            "the coverage report of {at} is not about the plan's targets"
        )));
    }
    if let Some(problem) = report.problems.first() {
        return Err(Broken(format!(
            "the coverage report of {at} passed despite a problem: {}",
            problem.message
        )));
    }
    for row in &report.targets {
        let fine = match row.status {
            TargetStatus::Uncovered | TargetStatus::Missing | TargetStatus::Touched => false,
            TargetStatus::Changed => !row.paths.is_empty() || row.paths_omitted > 0,
            TargetStatus::Unchanged => row
                .reason
                .as_deref()
                .is_some_and(|r| check_reason(r).is_ok()),
        };
        if !fine {
            return Err(Broken(format!(
                "the coverage report of {at} passed although target {:?} is not covered",
                row.target
            )));
        }
    }
    Ok(())
}

/// Checks a remote's record — its state, file names and plan snapshot — against the invariants
/// of creation ([`check_claim`]), and, when this clone has the run (`ours`), against what the
/// run's creation fixed here: the plan, the pipeline, the policy, and the attempts that ended.
/// A run this clone never had may not gate less than `configured` does.
pub fn check_record(
    state: &RunState,
    files: &RecordFiles,
    ours: Option<&Ours>,
    configured: &Configured,
) -> Result<(), Broken> {
    check_claim(state)?;
    let dirs: Vec<String> = state
        .stages
        .iter()
        .flat_map(|s| s.attempts.iter().map(|a| attempt_dir(&s.name, a.n)))
        .collect();
    for name in &files.names {
        if let Some(rest) = name.strip_prefix("attempts/") {
            let dir = rest.split('/').next().unwrap_or_default();
            if !dirs.iter().any(|d| d["attempts/".len()..] == *dir) {
                return Err(Broken(format!(
                    "it holds `{}`, the file of an attempt it does not have",
                    name.escape_debug()
                )));
            }
        }
    }
    let Some(plan) = files.plan else {
        return Err(Broken(format!("it has no plan snapshot `{PLAN_SNAPSHOT}`")));
    };
    check_snapshot(state, plan)?;
    match ours {
        Some(ours) => check_against_ours(state, plan, ours)?,
        None => check_configured(state, configured)?,
    }
    Ok(())
}

/// A run from elsewhere gates at least what this repository's configuration gates: creation
/// takes the gates and the coverage mode from there, so a weaker record was made weaker later.
fn check_configured(state: &RunState, configured: &Configured) -> Result<(), Broken> {
    if state.policy.coverage == CoverageMode::Resume && configured.coverage == CoverageMode::Always
    {
        return Err(Broken(
            "its policy gates only resumed attempts (`coverage: resume`), while .baton.yml gates every one".into(),
        ));
    }
    if let Some(stage) = state
        .stages
        .iter()
        .find(|s| !s.gated && configured.gated.contains(&s.name.as_str()))
    {
        return Err(Broken(format!(
            "its stage `{}` is not gated, while .baton.yml gates it",
            stage.name
        )));
    }
    if configured.require_targets && state.plan.targets.is_empty() {
        return Err(Broken(
            "its plan has no targets, while .baton.yml requires them (`require_targets: true`)"
                .into(),
        ));
    }
    // Creation runs the configured checks on every attempt that can succeed where they are
    // enforced; a success without a result for one is a check that was never run.
    for stage in &state.stages {
        let required = configured
            .checks
            .iter()
            .find(|(name, _)| *name == stage.name)
            .map_or(&[][..], |(_, names)| names.as_slice());
        for attempt in &stage.attempts {
            if attempt.outcome != Some(super::Outcome::Succeeded) || !state.gate_enforced(attempt.n)
            {
                continue;
            }
            if let Some(missing) = required
                .iter()
                .find(|name| !attempt.checks.iter().any(|c| c.name == **name))
            {
                return Err(Broken(format!(
                    "attempt {} of stage `{}` succeeded without a result of its runner check `{missing}`",
                    attempt.n, stage.name
                )));
            }
        }
    }
    Ok(())
}

/// The plan snapshot says what the state says of the plan: its id, its declared targets (or
/// none, where the run derives them) and its stages.
pub fn check_snapshot(state: &RunState, plan: &[u8]) -> Result<(), Broken> {
    let text = std::str::from_utf8(plan)
        .map_err(|_| Broken(format!("its plan snapshot `{PLAN_SNAPSHOT}` is not UTF-8")))?;
    let parsed = crate::plan::parse(&state.plan.path, text)
        .map_err(|e| Broken(format!("its plan snapshot does not parse: {e}")))?;
    let targets: Vec<&str> = parsed.targets.iter().map(|t| t.spec.as_str()).collect();
    // Derived targets come from the body and the base; a run that gates them is checked against
    // both where it is loaded (`run::targets`). Here: the snapshot declares none of its own.
    let declared = match state.plan.targets_source {
        TargetSource::Declared => {
            targets
                == state
                    .plan
                    .targets
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
        }
        TargetSource::Derived => targets.is_empty(),
    };
    if parsed.id != state.plan.id || !declared {
        return Err(Broken(
            "plan.id or plan.targets is not what its plan snapshot declares".into(),
        ));
    }
    if let Some(names) = &parsed.stages {
        let stages: Vec<&str> = state.stages.iter().map(|s| s.name.as_str()).collect();
        if *names != stages {
            return Err(Broken(format!(
                "its stages ({}) are not the ones its plan names ({})",
                stages.join(", "),
                names.join(", ")
            )));
        }
    }
    Ok(())
}

/// A newer record of a run this clone has keeps what creation fixed, and the attempts that had
/// ended here.
fn check_against_ours(state: &RunState, plan: &[u8], ours: &Ours) -> Result<(), Broken> {
    let mine = ours.state;
    let fixed = [
        ("key", mine.key == state.key),
        ("plan", mine.plan == state.plan),
        (
            "base",
            mine.base == state.base && mine.base_rev == state.base_rev,
        ),
        ("created_at", mine.created_at == state.created_at),
        ("policy", mine.policy == state.policy),
        (
            "pipeline",
            mine.stages.iter().map(|s| s.policy()).collect::<Vec<_>>()
                == state.stages.iter().map(|s| s.policy()).collect::<Vec<_>>(),
        ),
        ("plan snapshot", ours.plan.is_none_or(|p| p == plan)),
    ];
    if let Some((what, _)) = fixed.iter().find(|(_, same)| !same) {
        return Err(Broken(format!(
            "its {what} is not the one this clone's run was created with"
        )));
    }
    for (mine_stage, their_stage) in mine.stages.iter().zip(&state.stages) {
        for attempt in mine_stage.attempts.iter().filter(|a| !a.is_open()) {
            if their_stage.attempts.get(attempt.n as usize - 1) != Some(attempt) {
                return Err(Broken(format!(
                    "it rewrites attempt {} of stage `{}`, which had ended here",
                    attempt.n, mine_stage.name
                )));
            }
        }
    }
    Ok(())
}

/// The attempts whose gate decided the run: the latest attempt of each gated stage that
/// succeeded under an enforced gate, with its stage's index. `finish` re-derives each verdict.
pub fn gated_verdicts(state: &RunState) -> Vec<(usize, &Attempt)> {
    state
        .stages
        .iter()
        .enumerate()
        .filter(|(_, s)| s.gated)
        .filter_map(|(i, s)| s.attempts.last().map(|a| (i, a)))
        .filter(|(_, a)| a.outcome == Some(super::Outcome::Succeeded) && state.gate_enforced(a.n))
        .collect()
}

/// The reasons an attempt's report accepted, as evidence entries for the rule to judge again:
/// a reason is what the agent gave, and a record carries it as a claim.
pub fn recorded_reasons(report: Option<&Report>, dir: &str) -> Vec<EvidenceEntry> {
    report
        .into_iter()
        .flat_map(|r| &r.targets)
        .filter(|row| row.status == TargetStatus::Unchanged)
        .enumerate()
        .filter_map(|(index, row)| {
            Some(EvidenceEntry {
                target: row.target.clone(),
                claim: Claim::Unchanged {
                    reason: row.reason.clone()?,
                },
                source: Source::File {
                    path: format!("{dir}/evidence.json"),
                    index,
                },
            })
        })
        .collect()
}

/// What is wrong with `text` as a one-line field, if anything.
fn text_problem(text: &str) -> Option<&'static str> {
    if text.is_empty() {
        return Some("is empty");
    }
    text.chars()
        .any(char::is_control)
        .then_some("holds a control character")
}

/// What is wrong with `worktree` as the place a run's worktree is, if anything: creation makes
/// it absolute, with no `.` or `..` in it.
fn worktree_problem(worktree: &str) -> Option<&'static str> {
    if let Some(problem) = text_problem(worktree) {
        return Some(problem);
    }
    let path = Path::new(worktree);
    if !path.is_absolute() {
        return Some("is not an absolute path");
    }
    path.components()
        .any(|c| {
            matches!(
                c,
                std::path::Component::ParentDir | std::path::Component::CurDir
            )
        })
        .then_some("holds `.` or `..`")
}

#[cfg(test)]
mod tests;
