//! The targets a run gates: those its plan snapshot declares, or, under `derive_targets: body`,
//! those derived from the snapshot's body against the run's base.
//!
//! Derived targets are never read back from the RunState as the truth: the snapshot and the
//! base commit fix them, so every load derives them again and refuses a record whose list
//! differs (a record edited by hand, or pushed by someone else, cannot change what is gated).

use std::path::Path;

use super::RunError;
use crate::git::Repo;
use crate::plan::Plan;
use crate::run::DriveError;
use crate::state::{RunState, TargetSource};

/// The targets a new run of `plan` gates, and where they came from. A plan that declares
/// targets keeps them; one that declares none gets its body's paths when `derive` is set (and
/// records that it tried, so that a run whose body names nothing says why it is unverifiable).
pub fn for_new_run(
    repo: &Repo,
    base: crate::git::CommitId,
    plan_path: &str,
    plan: &Plan,
    derive: bool,
) -> Result<(Plan, TargetSource), RunError> {
    if !plan.targets.is_empty() || !derive {
        return Ok((plan.clone(), TargetSource::Declared));
    }
    let derived = crate::verify::targets::derive_at(repo, base, plan_path, plan)?;
    let mut with = plan.clone();
    with.targets = derived.targets.into_iter().map(|d| d.target).collect();
    Ok((with, TargetSource::Derived))
}

/// The plan a run follows: its snapshot, parsed, with the targets the run gates.
/// A snapshot that no longer says what the RunState says of the plan (its id, its declared
/// targets, its stages) is refused: the run follows the plan it was created with or none.
pub fn of_run(repo: &Repo, state: &RunState, run_dir: &Path) -> Result<Plan, RunError> {
    let path = state.plan_snapshot_in(run_dir)?;
    let text =
        crate::files::read_regular_string(&path).map_err(|source| RunError::PlanSnapshot {
            run: state.run_id.to_string(),
            path: path.clone(),
            source,
        })?;
    if let Err(broken) = crate::state::trust::check_snapshot(state, text.as_bytes()) {
        return Err(RunError::Drive(DriveError::SnapshotChanged {
            run: state.run_id.to_string(),
            path,
            problem: broken.0,
        }));
    }
    of_snapshot(repo, state, &text)
}

/// [`of_run`] of the plan snapshot's text `text`, wherever it was read from (a remote's record
/// of a run this clone does not have, for one).
pub fn of_snapshot(repo: &Repo, state: &RunState, text: &str) -> Result<Plan, RunError> {
    let plan = crate::plan::parse(&state.plan.path, text)?;
    // Declared targets are the snapshot's own, as they always were.
    let (plan, _) = match state.plan.targets_source {
        TargetSource::Declared => return Ok(plan),
        TargetSource::Derived if !plan.targets.is_empty() => {
            return Err(RunError::Drive(DriveError::DerivedTargets {
                run: state.run_id.to_string(),
                problem: "its plan snapshot declares targets of its own".into(),
            }));
        }
        TargetSource::Derived => for_new_run(repo, state.base, &state.plan.path, &plan, true)?,
    };
    let specs: Vec<&str> = plan.targets.iter().map(|t| t.spec.as_str()).collect();
    if specs != state.plan.targets {
        return Err(RunError::Drive(DriveError::DerivedTargets {
            run: state.run_id.to_string(),
            problem: format!(
                "its RunState lists targets [{}], its plan snapshot gives [{}]",
                state.plan.targets.join(", "),
                specs.join(", ")
            ),
        }));
    }
    Ok(plan)
}
