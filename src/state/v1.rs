//! Reading `state.json` files of schema version 1 (git-baton before the RunState kept one owner
//! per fact). Version 1 stored the pipeline twice (`policy.pipeline[]` and `stages[]`, matched by
//! index) and every derived value beside what it derives from; this reader checks the two
//! pipelines against each other, keeps each fact once, and leaves the derived values to be
//! computed again. The next save writes version 2.

use jiff::Timestamp;
use serde::Deserialize;

use super::{
    Attempt, Cause, CommitId, CoverageMode, ErrorKind, Halt, LastError, Outcome, PlanRef, Policy,
    RunId, RunState, RunStatus, Stage, StagePolicy, StageStatus,
};
use crate::coverage::{Report, Usage};

/// A version-1 RunState, field for field as version 1 wrote it.
#[derive(Deserialize)]
struct File {
    run_id: RunId,
    status: RunStatus,
    key: Option<String>,
    plan: PlanRef,
    base: CommitId,
    base_rev: String,
    branch: String,
    worktree: String,
    created_at: Timestamp,
    updated_at: Timestamp,
    #[allow(dead_code, reason = "derived in version 2")]
    current_stage: Option<String>,
    policy: FilePolicy,
    stages: Vec<FileStage>,
    #[allow(dead_code, reason = "derived in version 2")]
    coverage: Option<Report>,
    #[allow(dead_code, reason = "derived in version 2")]
    usage: super::UsageTotals,
    error: Option<LastError>,
}

#[derive(Deserialize)]
struct FilePolicy {
    pipeline: Vec<StagePolicy>,
    coverage: CoverageMode,
    stop_after: Option<String>,
}

#[derive(Deserialize)]
struct FileStage {
    name: String,
    status: StageStatus,
    #[allow(dead_code, reason = "derived in version 2")]
    actor: String,
    gated: bool,
    attempts: Vec<FileAttempt>,
}

#[derive(Deserialize)]
struct FileAttempt {
    n: u32,
    actor: String,
    outcome: Option<Outcome>,
    cause: Option<Cause>,
    #[allow(dead_code, reason = "derived in version 2")]
    resumed: bool,
    started_at: Timestamp,
    ended_at: Option<Timestamp>,
    duration_ms: Option<u64>,
    exit_code: Option<i32>,
    signal: Option<i32>,
    usage: Option<Usage>,
    error: Option<String>,
    coverage: Option<Report>,
    dir: String,
    #[serde(default)]
    snapshot: Option<CommitId>,
}

/// The RunState a version-1 document describes, or what is wrong with it.
pub(super) fn read(bytes: &[u8]) -> Result<RunState, String> {
    let file: File =
        serde_json::from_slice(bytes).map_err(|e| format!("not a version-1 RunState: {e}"))?;
    let pipeline = &file.policy.pipeline;
    if pipeline.len() != file.stages.len()
        || pipeline
            .iter()
            .zip(&file.stages)
            .any(|(p, s)| p.stage != s.name || p.gated != s.gated)
    {
        return Err(format!(
            "policy.pipeline ({}) and stages ({}) disagree",
            pipeline
                .iter()
                .map(|p| p.stage.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            file.stages
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    // Version 1 recorded an actor that could not start only in the run's error.
    let exec_failed = matches!(&file.error, Some(e) if e.kind == ErrorKind::Exec);
    let last_stage = file.stages.iter().rposition(|s| !s.attempts.is_empty());
    let stages: Vec<Stage> = file
        .stages
        .into_iter()
        .zip(pipeline)
        .enumerate()
        .map(|(i, (stage, policy))| {
            let count = stage.attempts.len();
            let attempts = stage
                .attempts
                .into_iter()
                .enumerate()
                .map(|(k, a)| Attempt {
                    exec_error: exec_failed && Some(i) == last_stage && k + 1 == count,
                    n: a.n,
                    actor: a.actor,
                    outcome: a.outcome,
                    cause: a.cause,
                    started_at: a.started_at,
                    ended_at: a.ended_at,
                    duration_ms: a.duration_ms,
                    exit_code: a.exit_code,
                    signal: a.signal,
                    usage: a.usage,
                    error: a.error,
                    coverage: a.coverage,
                    dir: a.dir,
                    snapshot: a.snapshot,
                    cleared_env: Vec::new(),
                    usage_source: None,
                    agent: None,
                    fallback_from: None,
                    hook_blocks: None,
                    unrecorded: Vec::new(),
                    unrecorded_omitted: 0,
                    checks: Vec::new(),
                    violations: Vec::new(),
                })
                .collect();
            (
                stage.status,
                Stage {
                    name: stage.name,
                    configured_actor: policy.actor.clone(),
                    gated: stage.gated,
                    fallback: Vec::new(),
                    attempts,
                },
            )
        })
        .map(|(recorded, stage)| {
            if recorded == stage.status() {
                Ok(stage)
            } else {
                Err(format!(
                    "stage `{}` is recorded as {} but its attempts say {}",
                    stage.name,
                    recorded.name(),
                    stage.status().name()
                ))
            }
        })
        .collect::<Result<_, String>>()?;
    let mut state = RunState {
        cycle: super::CycleFacts::default(),
        run_id: file.run_id,
        status: file.status,
        key: file.key,
        plan: file.plan,
        base: file.base,
        base_rev: file.base_rev,
        branch: file.branch,
        worktree: file.worktree,
        created_at: file.created_at,
        updated_at: file.updated_at,
        policy: Policy {
            coverage: file.policy.coverage,
            stop_after: file.policy.stop_after,
        },
        stages,
        halt: None,
        remote: None,
        lease: None,
        takeovers: Vec::new(),
    };
    // An interrupted run whose error its latest attempt does not explain was halted between
    // stages: version 1 kept the reason only in the error.
    let explained = state
        .latest_attempt()
        .is_some_and(|(_, a)| a.outcome == Some(Outcome::Interrupted))
        && state.error() == file.error;
    if state.status == RunStatus::Interrupted && !explained {
        state.halt = Some(Halt {
            message: file.error.map_or_else(
                || "the process driving the run died between stages".into(),
                |e| e.message,
            ),
            cause: None,
        });
    }
    state.check().map_err(|e| e.to_string())?;
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The version-1 files in testdata/state/v1, captured from git-baton's last version-1
    /// release (`halted.json` by hand: `paused.json` as version 1's `halt` would have left it).
    const FILES: &[(&str, &str)] = &[
        (
            "rate_limited",
            include_str!("../../testdata/state/v1/rate_limited.json"),
        ),
        (
            "review",
            include_str!("../../testdata/state/v1/review.json"),
        ),
        (
            "exec_failed",
            include_str!("../../testdata/state/v1/exec_failed.json"),
        ),
        (
            "blocked",
            include_str!("../../testdata/state/v1/blocked.json"),
        ),
        (
            "paused",
            include_str!("../../testdata/state/v1/paused.json"),
        ),
        (
            "crashed",
            include_str!("../../testdata/state/v1/crashed.json"),
        ),
        (
            "halted",
            include_str!("../../testdata/state/v1/halted.json"),
        ),
    ];

    /// Version 1 wrote what `status --json` prints, so the view of the migrated state must be
    /// the very same document, but for the version number: every derived value computes back to
    /// what version 1 had stored.
    #[test]
    fn every_v1_file_reads_back_to_the_same_document() {
        for (name, text) in FILES {
            let state = read(text.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut expected: serde_json::Value = serde_json::from_str(text).unwrap();
            expected["schema_version"] = crate::state::SCHEMA_VERSION.into();
            // The totals version 2 added beside version 1's (agents' outputs); everything else
            // is the version 1 document.
            const ADDED: [&str; 6] = [
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
                "reasoning_output_tokens",
                "attempts_without_cost",
                "attempts_cut",
                "lower_bound",
            ];
            let shown: String = serde_json::to_string_pretty(&state.view())
                .unwrap()
                .lines()
                .filter(|l| {
                    !ADDED
                        .iter()
                        .any(|k| l.trim_start().starts_with(&format!("\"{k}\": ")))
                })
                .map(|l| format!("{l}\n"))
                .collect();
            let current = text.replacen(
                "\"schema_version\": 1",
                &format!("\"schema_version\": {}", crate::state::SCHEMA_VERSION),
                1,
            );
            assert_eq!(shown, current, "{name}: byte for byte");
            let mut view = serde_json::to_value(state.view()).unwrap();
            let totals = view["usage"].as_object_mut().unwrap();
            let added: Vec<_> = ADDED.iter().filter_map(|k| totals.remove(*k)).collect();
            assert_eq!(added.len(), ADDED.len(), "{name}");
            assert_eq!(view, expected, "{name}");
        }
    }

    #[test]
    fn the_pipeline_is_read_once_from_policy_and_checked_against_stages() {
        let (_, text) = FILES[1];
        let state = read(text.as_bytes()).unwrap();
        let executor = &state.stages()[0];
        assert_eq!(
            (executor.configured_actor.as_str(), executor.actor()),
            ("limited", "finisher"),
            "the configured actor comes from policy.pipeline, the latest from the attempts"
        );
        let swapped = text.replacen("\"stage\": \"executor\"", "\"stage\": \"reviewer\"", 1);
        assert_eq!(
            read(swapped.as_bytes()).unwrap_err(),
            "policy.pipeline (reviewer, reporter) and stages (executor, reporter) disagree"
        );
    }

    #[test]
    fn a_stored_value_its_attempts_contradict_is_refused() {
        let (_, text) = FILES[0];
        let lying = text.replacen(
            "\"status\": \"rate_limited\",\n      \"actor\"",
            "\"status\": \"succeeded\",\n      \"actor\"",
            1,
        );
        assert_ne!(lying, text);
        assert_eq!(
            read(lying.as_bytes()).unwrap_err(),
            "stage `executor` is recorded as succeeded but its attempts say rate_limited"
        );
    }

    #[test]
    fn an_exec_error_and_a_halt_are_recovered_from_the_error() {
        let exec = read(FILES[2].1.as_bytes()).unwrap();
        assert!(exec.stages()[0].attempts[0].exec_error);
        assert_eq!(exec.error().map(|e| e.kind), Some(ErrorKind::Exec));
        let halted = read(FILES[6].1.as_bytes()).unwrap();
        assert_eq!(
            halted.halt().map(|h| h.message.as_str()),
            Some("stopped by request before this stage started")
        );
        let crashed = read(FILES[5].1.as_bytes()).unwrap();
        assert_eq!(crashed.halt(), None);
        assert!(crashed.open_attempt().is_some());
    }
}
