//! Where a claim about a run is checked before it counts: a remote's record before this clone
//! shows or takes it, and the gate's verdict before `finish` commits a run or a push publishes
//! one in review. The rules are [`crate::state::trust`]'s; this module reads what they need.

use std::path::Path;

use crate::config::Config;
use crate::git::{CommitId, RecordFile, Repo};
use crate::state::{RunState, RunStatus, trust};

use super::RunError;

fn untrusted(id: &str, remote: &str, broken: trust::Broken) -> RunError {
    RunError::UntrustedRecord {
        run: id.to_owned(),
        remote: remote.to_owned(),
        broken: broken.0,
    }
}

/// A remote's state of run `id`, shown or compared: refused unless git-baton could have
/// written it ([`trust::check_claim`]).
pub(super) fn check_claim(id: &str, remote: &str, state: &RunState) -> Result<(), RunError> {
    trust::check_claim(state).map_err(|broken| untrusted(id, remote, broken))
}

/// A remote's record of run `id` — its state and files — before this clone takes it: checked
/// against the invariants of creation and, when this clone has the run (`ours`: its state and
/// run directory), against what creation fixed here ([`trust::check_record`]).
pub(super) fn check_record(
    repo: &Repo,
    id: &str,
    remote: &str,
    state: &RunState,
    files: &[RecordFile],
    ours: Option<(&RunState, &Path)>,
    config: &Config,
) -> Result<(), RunError> {
    let our_plan = match ours {
        Some((state, dir)) => std::fs::read(state.plan_snapshot_in(dir)?).ok(),
        None => None,
    };
    let record = trust::RecordFiles {
        names: files.iter().map(|(path, _)| path.as_str()).collect(),
        plan: files
            .iter()
            .find(|(path, _)| path == trust::PLAN_SNAPSHOT)
            .map(|(_, bytes)| bytes.as_slice()),
    };
    let ours = ours.map(|(state, _)| trust::Ours {
        state,
        plan: our_plan.as_deref(),
    });
    let configured = trust::Configured {
        coverage: config.coverage,
        gated: config
            .pipeline
            .iter()
            .filter(|s| s.gated)
            .map(|s| s.stage.as_str())
            .collect(),
    };
    trust::check_record(state, &record, ours.as_ref(), &configured)
        .map_err(|broken| untrusted(id, remote, broken))?;
    // Every snapshot is work done on top of the base: a base swapped for another commit would
    // change what the gate counts as changed.
    for (stage, attempt) in state
        .stages()
        .iter()
        .flat_map(|s| s.attempts.iter().map(move |a| (s, a)))
    {
        if let Some(snapshot) = attempt.snapshot
            && !repo.is_ancestor(state.base, snapshot)
        {
            return Err(untrusted(
                id,
                remote,
                trust::Broken(format!(
                    "the snapshot {snapshot} of attempt {} of stage `{}` is not work on its base {}",
                    attempt.n, stage.name, state.base
                )),
            ));
        }
    }
    Ok(())
}

/// Judges the gate of a run in review again, as `finish` and the push of such a run do: the
/// plan's targets (from the snapshot in `run_dir`) against the diff from the base to the
/// run's final snapshot, with the reasons its gated attempts recorded, each checked again.
/// Whatever the status or a report says, a run whose gate does not pass so is refused.
pub fn check_verdict(repo: &Repo, run_dir: &Path, state: &RunState) -> Result<(), RunError> {
    check_verdict_on(repo, run_dir, state, None)
}

/// [`check_verdict`] on the commit `work` instead of the final snapshot: `finish` judges the
/// commit it is about to put on the branch, which holds the worktree as it is now.
pub fn check_verdict_on(
    repo: &Repo,
    run_dir: &Path,
    state: &RunState,
    work: Option<CommitId>,
) -> Result<(), RunError> {
    if !matches!(state.status(), RunStatus::Review) {
        return Ok(());
    }
    let run = state.run_id.to_string();
    // The targets the run gates, declared or derived again from the snapshot and the base —
    // before anything else, since a record that lists none can still have a plan that has some.
    let plan = super::targets::of_run(repo, state, run_dir)?;
    if !plan.targets.is_empty() && !state.stages().iter().any(|s| s.gated) {
        return Err(RunError::GateFails {
            run,
            stage: state
                .stages()
                .last()
                .map_or_else(String::new, |s| s.name.clone()),
            uncovered: plan.targets.iter().map(|t| t.spec.clone()).collect(),
            problem: Some("the plan has targets and no stage of the run is gated".into()),
        });
    }
    let verdicts = trust::gated_verdicts(state);
    if verdicts.is_empty() {
        return Ok(());
    }
    // The work as the latest attempt left it: what `finish` builds on.
    let Some((last_stage, last)) = state.latest_attempt() else {
        return Ok(());
    };
    let Some(snapshot) = work.or(last.snapshot) else {
        return Err(RunError::NoFinalSnapshot {
            run,
            stage: state.stages()[last_stage].name.clone(),
            attempt: last.n,
        });
    };
    match super::gate::judge_verdicts(repo, state, &plan.targets, snapshot)? {
        None => Ok(()),
        Some(broken) => Err(RunError::GateFails {
            run,
            stage: state.stages()[broken.stage].name.clone(),
            uncovered: broken.uncovered,
            problem: broken.problem,
        }),
    }
}
