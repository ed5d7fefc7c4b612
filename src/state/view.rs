//! The RunState as `status --json`, `list --json` and `run --json` print it: every stored fact
//! plus what is derived from them (each stage's status and actor, the current stage, the run's
//! coverage, usage and error, each attempt's `resumed`), in the layout scripts rely on (design
//! §6). Nothing reads this document back; `state.json` holds only the stored facts.

use jiff::Timestamp;
use serde::Serialize;

use super::{
    AgentOutput, Attempt, Cause, CommitId, FallbackFrom, LastError, Lease, Outcome, PlanRef, RunId,
    RunState, RunStatus, Stage, StagePolicy, StageStatus, Takeover, UnrecordedPath, UsageSource,
    UsageTotals, Violation,
};
use crate::coverage::{Report, Usage};

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RunView<'a> {
    pub schema_version: u32,
    pub run_id: &'a RunId,
    pub status: RunStatus,
    pub key: &'a Option<String>,
    pub plan: &'a PlanRef,
    pub base: &'a CommitId,
    pub base_rev: &'a str,
    pub branch: &'a str,
    pub worktree: &'a str,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub current_stage: Option<&'a str>,
    pub policy: PolicyView<'a>,
    pub stages: Vec<StageView<'a>>,
    pub coverage: Option<&'a Report>,
    /// The runner's checks of the latest attempt that ran any (absent when none did).
    #[serde(skip_serializing_if = "<[super::CheckResult]>::is_empty")]
    pub checks: &'a [super::CheckResult],
    pub usage: UsageTotals,
    pub error: Option<LastError>,
    /// Where the run was published (absent until it was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<&'a str>,
    /// Who may drive the published run until when (absent when nobody holds it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<&'a Lease>,
    #[serde(skip_serializing_if = "<[Takeover]>::is_empty")]
    pub takeovers: &'a [Takeover],
    /// The run's standing with `git baton cycle` (absent while there is nothing to say).
    #[serde(skip_serializing_if = "super::CycleFacts::is_empty")]
    pub cycle: &'a super::CycleFacts,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PolicyView<'a> {
    pub pipeline: Vec<StagePolicy>,
    pub coverage: super::CoverageMode,
    pub stop_after: &'a Option<String>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct StageView<'a> {
    pub name: &'a str,
    pub status: StageStatus,
    pub actor: &'a str,
    pub gated: bool,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub fallback: &'a [String],
    pub attempts: Vec<AttemptView<'a>>,
}

#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct AttemptView<'a> {
    pub n: u32,
    pub actor: &'a str,
    pub outcome: Option<Outcome>,
    pub cause: Option<Cause>,
    pub resumed: bool,
    pub started_at: Timestamp,
    pub ended_at: Option<Timestamp>,
    pub duration_ms: Option<u64>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub usage: &'a Option<Usage>,
    pub error: &'a Option<String>,
    pub coverage: &'a Option<Report>,
    pub dir: &'a str,
    pub snapshot: Option<CommitId>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub cleared_env: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_source: Option<UsageSource>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: &'a Option<AgentOutput>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback_from: &'a Option<FallbackFrom>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_blocks: Option<u32>,
    #[serde(skip_serializing_if = "<[UnrecordedPath]>::is_empty")]
    pub unrecorded: &'a [UnrecordedPath],
    #[serde(skip_serializing_if = "super::stage::is_zero")]
    pub unrecorded_omitted: u64,
    #[serde(skip_serializing_if = "<[super::CheckResult]>::is_empty")]
    pub checks: &'a [super::CheckResult],
    #[serde(skip_serializing_if = "<[Violation]>::is_empty")]
    pub violations: &'a [Violation],
}

impl<'a> RunView<'a> {
    pub fn of(state: &'a RunState) -> RunView<'a> {
        RunView {
            schema_version: super::SCHEMA_VERSION,
            run_id: &state.run_id,
            status: state.status(),
            key: &state.key,
            plan: &state.plan,
            base: &state.base,
            base_rev: &state.base_rev,
            branch: &state.branch,
            worktree: &state.worktree,
            created_at: state.created_at,
            updated_at: state.updated_at(),
            current_stage: state.current_stage(),
            policy: PolicyView {
                pipeline: state.stages().iter().map(Stage::policy).collect(),
                coverage: state.policy.coverage,
                stop_after: &state.policy.stop_after,
            },
            stages: state.stages().iter().map(StageView::of).collect(),
            coverage: state.coverage(),
            checks: state.checks(),
            usage: state.usage(),
            error: state.error(),
            remote: state.remote(),
            lease: state.lease(),
            takeovers: state.takeovers(),
            cycle: state.cycle(),
        }
    }
}

impl<'a> StageView<'a> {
    fn of(stage: &'a Stage) -> StageView<'a> {
        StageView {
            name: &stage.name,
            status: stage.status(),
            actor: stage.actor(),
            gated: stage.gated,
            fallback: &stage.fallback,
            attempts: stage.attempts.iter().map(AttemptView::of).collect(),
        }
    }
}

impl<'a> AttemptView<'a> {
    fn of(a: &'a Attempt) -> AttemptView<'a> {
        AttemptView {
            n: a.n,
            actor: &a.actor,
            outcome: a.outcome,
            cause: a.cause,
            resumed: a.resumed(),
            started_at: a.started_at,
            ended_at: a.ended_at,
            duration_ms: a.duration_ms,
            exit_code: a.exit_code,
            signal: a.signal,
            usage: &a.usage,
            error: &a.error,
            coverage: &a.coverage,
            dir: &a.dir,
            snapshot: a.snapshot,
            cleared_env: &a.cleared_env,
            usage_source: a.usage_source,
            agent: &a.agent,
            fallback_from: &a.fallback_from,
            hook_blocks: a.hook_blocks,
            unrecorded: &a.unrecorded,
            unrecorded_omitted: a.unrecorded_omitted,
            checks: &a.checks,
            violations: &a.violations,
        }
    }
}
