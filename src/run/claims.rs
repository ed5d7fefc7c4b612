//! Where a claim about a run is checked before it counts: a remote's record before this clone
//! shows or takes it, and the gate's verdict before `finish` commits a run or a push publishes
//! one in review — or `status` and `list` show a run only a remote has ([`judge_remote`]). The
//! rules are [`crate::state::trust`]'s; this module reads what they need.

use std::path::Path;

use crate::config::Config;
use crate::coverage::{self, Report};
use crate::git::{CommitId, RecordFile, Repo, Scope};
use crate::plan::Target;
use crate::run::{DriveError, SyncError};
use crate::state::{RunState, RunStatus, trust};

use super::RunError;

fn untrusted(id: &str, remote: &str, broken: trust::Broken) -> RunError {
    RunError::Sync(SyncError::UntrustedRecord {
        run: id.to_owned(),
        remote: remote.to_owned(),
        broken: broken.0,
    })
}

/// A remote's state of run `id`, shown or compared: refused unless git-baton could have
/// written it ([`trust::check_claim`]).
pub(super) fn check_claim(id: &str, remote: &str, state: &RunState) -> Result<(), RunError> {
    names_its_run(id, state)
        .and_then(|()| trust::check_claim(state))
        .map_err(|broken| untrusted(id, remote, broken))
}

/// The runner checks of a run this clone never had are commands it would run here: they must
/// be the ones the plan file has at the run's base commit, which this clone holds, and not
/// ones a record alone carries (anyone who can push there could have written them).
fn checks_committed(
    repo: &Repo,
    state: &RunState,
    plan: &crate::plan::Plan,
) -> Result<(), trust::Broken> {
    if plan.checks.is_empty() {
        return Ok(());
    }
    let limit = super::record::read_limit(trust::PLAN_SNAPSHOT);
    let at_base = repo
        .read_record_file_at(state.base, &state.plan.path, limit)
        .ok()
        .flatten()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| crate::plan::parse(&state.plan.path, &text).ok());
    let commands = |plan: &crate::plan::Plan| -> Vec<_> {
        plan.checks
            .iter()
            .map(|c| (c.name.clone(), c.command.clone(), c.timeout))
            .collect()
    };
    if at_base.is_some_and(|committed| commands(&committed) == commands(plan)) {
        return Ok(());
    }
    Err(trust::Broken(format!(
        "its plan snapshot has runner checks that `{}` does not have at the run's base {}: \
         commands no commit holds",
        state.plan.path.escape_debug(),
        state.base.short()
    )))
}

/// The record under run `id`'s ref is that run's: a state that names another run would be
/// listed, compared and driven as that one, and one that names a branch other than the run's
/// own (`main`) would have this clone move it.
fn names_its_run(id: &str, state: &RunState) -> Result<(), trust::Broken> {
    if state.run_id.as_str() != id {
        return Err(trust::Broken(format!(
            "it is the record of run `{}`, not of the run its ref names",
            state.run_id.as_str().escape_debug()
        )));
    }
    if state.branch != format!("baton/{id}") {
        return Err(trust::Broken(format!(
            "it names branch `{}`, not baton/{id}",
            state.branch.escape_debug()
        )));
    }
    Ok(())
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
    // The checks each stage's attempts run here, with the record's plan's own where the stage
    // is gated: a record that does not parse is refused below, before these are used.
    let plan = record
        .plan
        .and_then(|bytes| std::str::from_utf8(bytes).ok())
        .and_then(|text| crate::plan::parse(&state.plan.path, text).ok());
    let checks = config
        .pipeline
        .iter()
        .map(|stage| {
            let names = match &plan {
                Some(plan) => config
                    .checks_for(&stage.stage, stage.gated, plan, &state.plan.path)
                    .into_iter()
                    .map(|c| c.name)
                    .collect(),
                None => Vec::new(),
            };
            (stage.stage.as_str(), names)
        })
        .collect();
    let configured = trust::Configured {
        coverage: config.coverage,
        gated: config
            .pipeline
            .iter()
            .filter(|s| s.gated)
            .map(|s| s.stage.as_str())
            .collect(),
        require_targets: config.require_targets,
        checks,
    };
    names_its_run(id, state)
        .and_then(|()| trust::check_record(state, &record, ours.as_ref(), &configured))
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
    if ours.is_none()
        && let Some(plan) = &plan
    {
        checks_committed(repo, state, plan).map_err(|broken| untrusted(id, remote, broken))?;
    }
    // Every coverage report the record holds, derived here again: a record whose gate passed
    // (a run in review, or finished) on a report this clone would not derive is not taken —
    // taken, it would be shown and finished as this clone's own verdict.
    let plan = record.plan.map(String::from_utf8_lossy).unwrap_or_default();
    let problem = match rejudged(repo, state, &plan) {
        Ok((_, disagreement)) => disagreement,
        Err(problem) => Some(problem),
    };
    match problem {
        Some(problem) => Err(untrusted(
            id,
            remote,
            trust::Broken(format!(
                "its coverage is not what the gate derives here: {problem}"
            )),
        )),
        None => Ok(()),
    }
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
        return Err(RunError::Drive(DriveError::GateFails {
            run,
            stage: state
                .stages()
                .last()
                .map_or_else(String::new, |s| s.name.clone()),
            uncovered: plan.targets.iter().map(|t| t.spec.clone()).collect(),
            problem: Some("the plan has targets and no stage of the run is gated".into()),
        }));
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
        return Err(RunError::Drive(DriveError::NoFinalSnapshot {
            run,
            stage: state.stages()[last_stage].name.clone(),
            attempt: last.n,
        }));
    };
    match super::gate::judge_verdicts(repo, state, &plan, snapshot)? {
        None => Ok(()),
        Some(broken) => Err(RunError::Drive(DriveError::GateFails {
            run,
            stage: state.stages()[broken.stage].name.clone(),
            uncovered: broken.uncovered,
            problem: broken.problem.or_else(|| {
                (!broken.touched.is_empty()).then(|| {
                    format!(
                        "touched only in whitespace, line endings or file mode: {}",
                        broken.touched.join(", ")
                    )
                })
            }),
        })),
    }
}

/// What this clone made of the coverage a remote's record claims for a run it does not have,
/// as `status` and `list` show it (`claim` in `status --json`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
// Its name in the published schema of `status --json`.
#[cfg_attr(test, schemars(rename = "Claim"))]
pub struct RemoteClaim {
    /// Every coverage report shown was derived here again — from the record's plan snapshot,
    /// the run's base and each attempt's snapshot, with the reasons the attempt recorded,
    /// checked again — and passes or fails as the record claimed. False: `problem` says why;
    /// the reports shown are still those derived here, or none when none could be.
    pub verified: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// Judges the coverage `state`, the record `remote` holds of a run this clone does not have,
/// claims: each attempt's report is replaced by the one derived here, as `finish` derives its
/// verdict ([`check_verdict_on`]). Where no report can be derived (no plan snapshot, no attempt
/// snapshot, targets that do not derive again), the run is shown without any, and the
/// [`RemoteClaim`] says why: a remote's word is never shown as a verdict.
pub fn judge_remote(repo: &Repo, remote: &str, mut state: RunState) -> (RunState, RemoteClaim) {
    match judged_reports(repo, remote, &state) {
        Ok((reports, disagreement)) => {
            for (shown, report) in state.coverage_reports_mut().zip(reports) {
                *shown = report;
            }
            let claim = RemoteClaim {
                verified: disagreement.is_none(),
                problem: disagreement,
            };
            (state, claim)
        }
        Err(problem) => {
            for shown in state.coverage_reports_mut() {
                *shown = None;
            }
            let claim = RemoteClaim {
                verified: false,
                problem: Some(problem),
            };
            (state, claim)
        }
    }
}

/// Each attempt's report derived again (in the order of [`RunState::attempts`]), and the
/// first place where one says other than the record: or why none can be derived.
fn judged_reports(
    repo: &Repo,
    remote: &str,
    state: &RunState,
) -> Result<(Vec<Option<Report>>, Option<String>), String> {
    let id = state.run_id.to_string();
    let record = super::remote::tracking_record(remote, &id);
    let snapshot = repo
        .ref_target(&record)
        .ok()
        .flatten()
        .and_then(|commit| {
            let limit = super::record::read_limit(trust::PLAN_SNAPSHOT);
            repo.read_record_file_at(commit, trust::PLAN_SNAPSHOT, limit)
                .ok()
                .flatten()
        })
        .ok_or_else(|| format!("the record has no plan snapshot `{}`", trust::PLAN_SNAPSHOT))?;
    let text =
        String::from_utf8(snapshot).map_err(|_| "its plan snapshot is not UTF-8".to_owned())?;
    rejudged(repo, state, &text)
}

/// [`judged_reports`] with the record's plan snapshot `text` in hand.
fn rejudged(
    repo: &Repo,
    state: &RunState,
    text: &str,
) -> Result<(Vec<Option<Report>>, Option<String>), String> {
    let plan = super::targets::of_snapshot(repo, state, text).map_err(|e| e.to_string())?;
    if !plan.targets.is_empty() && !state.stages().iter().any(|s| s.gated) {
        return Err("the plan has targets and no stage of the run is gated".into());
    }
    let scope = Scope::prefixes(plan.targets.iter().map(Target::scope));
    let mut reports = Vec::new();
    let mut disagreement = None;
    for (stage, attempt) in state
        .stages()
        .iter()
        .flat_map(|s| s.attempts.iter().map(move |a| (s, a)))
    {
        let Some(claimed) = &attempt.coverage else {
            reports.push(None);
            continue;
        };
        let at = format!("attempt {} of stage `{}`", attempt.n, stage.name);
        let Some(snapshot) = attempt.snapshot else {
            return Err(format!(
                "{at} has a coverage report and no snapshot to judge it on"
            ));
        };
        let changed = match plan.targets.is_empty() {
            true => Vec::new(),
            false => repo
                .tree_changes(state.base, snapshot, &scope)
                .map_err(|e| e.to_string())?,
        };
        let reasons = trust::recorded_reasons(Some(claimed), &attempt.dir);
        // Kept as the gate keeps a report in the state: paths bounded.
        let report = coverage::evaluate(&plan.targets, &changed, &reasons, &[])
            .bounded(coverage::KEPT_PATHS);
        if report.passed != claimed.passed && disagreement.is_none() {
            disagreement = Some(format!(
                "the record says the gate of {at} {}; judged here it {}",
                if claimed.passed { "passed" } else { "failed" },
                if report.passed { "passes" } else { "fails" },
            ));
        }
        reports.push(Some(report));
    }
    Ok((reports, disagreement))
}
