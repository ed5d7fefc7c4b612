//! RunState: the persisted record of a run, and the single source of truth about it.
//!
//! Nothing about a run survives between invocations except what is written here; resume and
//! status reconstruct everything from it. Each fact has one owner: the pipeline is stored once,
//! in `stages`; a stage's status and actor, the run's current stage, coverage, usage totals and
//! error are computed from the attempts, never stored beside them. What only the run knows — its
//! status, and why it halted between stages — changes in exactly one function,
//! [`transition::apply`]: events in, a new state or a typed error out. The fields it owns are
//! private here, so nothing else can assign them.
//!
//! [`store`] does the I/O (atomic writes, the run lock, listing, reading schema versions 1 to 3),
//! [`view`] is the document `status --json` prints, [`clock`] the source of time and id noise.
//! The field-by-field meaning is documented in docs/state.md.

mod agent;
mod check;
pub mod checks;
pub mod clock;
mod cycle;
mod id;
mod stage;
pub mod store;
pub mod transition;
pub mod trust;
mod v1;
pub mod view;
mod violation;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::coverage::{Report, Usage};
use crate::git::CommitId;
pub use agent::{AgentOutput, FallbackFrom, RateLimitReset, UsageSource};
pub use check::InvalidState;
pub use checks::{CheckOutcome, CheckResult};
pub use clock::Clock;
pub use cycle::{CycleFacts, Held};
pub use id::{BadRunId, RunId};
pub use stage::{
    Attempt, Stage, UNRECORDED_KEPT, UnrecordedPath, is_resumed, keep_unrecorded,
    unrecorded_message,
};
pub use transition::{Event, TransitionError};
pub use trust::BadPath;
pub use violation::{Violation, ViolationKind, violations_message};

/// The version `state.json` is written with; [`store`] also reads version 1.
pub const SCHEMA_VERSION: u32 = 3;

/// A lease's length when the configuration sets none (`lease:` in `.baton.yml`).
pub const DEFAULT_LEASE: std::time::Duration = std::time::Duration::from_secs(5 * 60);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Created; no stage has started yet.
    Pending,
    /// Created by `run --queue`, for `git baton cycle` (or a person's `resume`) to start.
    Queued,
    /// A stage is executing (or was, when a crashed process left it so: see `stale`).
    Running,
    /// Stopped at a stage boundary on request (`--stop-after`, `pause`).
    Paused,
    Interrupted,
    Failed,
    RateLimited,
    Blocked,
    /// Every stage succeeded; waiting for a person.
    Review,
    Finished,
}

impl RunStatus {
    /// The name used in the RunState and in messages.
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Pending => "pending",
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Paused => "paused",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::RateLimited => "rate_limited",
            RunStatus::Blocked => "blocked",
            RunStatus::Review => "review",
            RunStatus::Finished => "finished",
        }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum StageStatus {
    Pending,
    Running,
    Succeeded,
    Failed,
    RateLimited,
    Interrupted,
    Blocked,
}

impl StageStatus {
    /// The name used in the RunState and in messages.
    pub fn name(self) -> &'static str {
        match self {
            StageStatus::Pending => "pending",
            StageStatus::Running => "running",
            StageStatus::Succeeded => "succeeded",
            StageStatus::Failed => "failed",
            StageStatus::RateLimited => "rate_limited",
            StageStatus::Interrupted => "interrupted",
            StageStatus::Blocked => "blocked",
        }
    }
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Succeeded,
    Failed,
    RateLimited,
    Interrupted,
    Blocked,
}

impl Outcome {
    /// The name used in the RunState and in messages.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::Failed => "failed",
            Outcome::RateLimited => "rate_limited",
            Outcome::Interrupted => "interrupted",
            Outcome::Blocked => "blocked",
        }
    }
}

impl From<Outcome> for StageStatus {
    fn from(outcome: Outcome) -> StageStatus {
        match outcome {
            Outcome::Succeeded => StageStatus::Succeeded,
            Outcome::Failed => StageStatus::Failed,
            Outcome::RateLimited => StageStatus::RateLimited,
            Outcome::Interrupted => StageStatus::Interrupted,
            Outcome::Blocked => StageStatus::Blocked,
        }
    }
}

/// Why an attempt was interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// SIGINT, SIGTERM or SIGHUP to git-baton, or `git baton stop`.
    Manual,
    /// The actor ran past its configured timeout.
    Timeout,
    /// The process driving the run died; found later because the run's lock was free.
    Crash,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum CoverageMode {
    /// Gate every attempt of a gated stage.
    #[default]
    Always,
    /// Gate only resumed attempts.
    Resume,
}

/// One stage of the pipeline as configured: what `.baton.yml`, the plan and `run --actor` make
/// of it before a run exists. A run records it in its [`Stage`]s.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct StagePolicy {
    pub stage: String,
    pub actor: String,
    /// The stage passes the coverage gate before it may succeed.
    pub gated: bool,
    /// Actors that take over, in order, when the stage's attempt ends rate limited (`fallback:`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallback: Vec<String>,
}

/// What the run decided at creation besides its stages; authoritative on resume.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Policy {
    pub coverage: CoverageMode,
    pub stop_after: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PlanRef {
    pub id: String,
    pub title: Option<String>,
    /// Where the plan came from, repo-relative; the run follows `snapshot`, not this file.
    pub path: String,
    /// The copy taken at creation, relative to the run directory.
    pub snapshot: String,
    pub targets: Vec<String>,
    /// Where `targets` came from: the plan's frontmatter, or (`derive_targets: body`) its body.
    /// Absent in the JSON when declared, as every run before derivation existed has it.
    #[serde(default, skip_serializing_if = "TargetSource::is_declared")]
    pub targets_source: TargetSource,
}

/// Where a run's targets came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum TargetSource {
    /// The plan's `targets:`.
    #[default]
    Declared,
    /// The paths the plan's body names, derived against the base (docs/plan-format.md).
    Derived,
}

impl TargetSource {
    #[must_use]
    pub fn is_declared(&self) -> bool {
        *self == TargetSource::Declared
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Failed,
    RateLimited,
    Interrupted,
    Blocked,
    /// git-baton could not run the actor at all (missing program, unwritable log).
    Exec,
    /// The attempt failed because it changed what no attempt may ([`Attempt::violations`]).
    Violation,
}

/// The last failure of a run, as `status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct LastError {
    pub kind: ErrorKind,
    pub stage: String,
    pub message: String,
}

/// Why a run stopped between two stages, where no attempt holds the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Halt {
    pub message: String,
    /// `crash` when the driver died between stages; `manual` for a signal or a stop request.
    /// Absent in files written before it existed, which `cycle` takes as a person's stop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct UsageTotals {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Counted apart by the agents that report them ([`AgentOutput`]).
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    #[serde(default)]
    pub reasoning_output_tokens: u64,
    pub cost_usd: f64,
    /// Attempts whose usage has no cost (Codex and Gemini CLI report none): `cost_usd` is a
    /// lower bound when this is not zero.
    #[serde(default)]
    pub attempts_without_cost: u32,
    /// Attempts whose output `log_limit` cut: what the dropped middle counted is missing.
    #[serde(default)]
    pub attempts_cut: u32,
    /// The token totals are a lower bound: an attempt reported no usage, or only part of it.
    #[serde(default)]
    pub lower_bound: bool,
    /// Attempts that reported no usage: the totals are a lower bound when this is not zero.
    /// (Last, as in version 1, which had the fields before it up to `cost_usd`.)
    pub attempts_without_usage: u32,
}

/// A run. Serialized as it is stored (schema version 3); read it through [`store::parse`], which
/// also reads versions 1 and 2 and checks the invariants. The fields that [`transition::apply`] owns are
/// private.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RunState {
    pub run_id: RunId,
    status: RunStatus,
    pub key: Option<String>,
    pub plan: PlanRef,
    /// The base commit, and the revision it was resolved from.
    pub base: CommitId,
    pub base_rev: String,
    pub branch: String,
    pub worktree: String,
    pub created_at: Timestamp,
    updated_at: Timestamp,
    pub policy: Policy,
    stages: Vec<Stage>,
    halt: Option<Halt>,
    /// The remote the run was published to (`git baton push`): from then on it is driven under
    /// a lease, and its record is compared with that remote's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    remote: Option<String>,
    /// Who may drive the run until when, across machines; see [`Lease`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lease: Option<Lease>,
    /// Leases that expired and were taken by another driver, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    takeovers: Vec<Takeover>,
    /// What `git baton cycle` may do with the run; absent while there is nothing to say.
    #[serde(default, skip_serializing_if = "CycleFacts::is_empty")]
    cycle: CycleFacts,
}

/// The right to drive a published run, recorded in the RunState and published with it through
/// the remote's compare-and-swap, so that two machines never drive one run at once. The holder
/// renews it while it drives and releases it when it stops; one that stopped renewing (its
/// machine died, its network went) may be taken over once `until` has passed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Lease {
    /// Who holds it: one driver process, unique across machines.
    pub holder: String,
    /// The host the holder runs on, for people.
    pub host: String,
    pub taken_at: Timestamp,
    pub until: Timestamp,
}

/// A lease that had expired when another driver took the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Takeover {
    /// The expired lease.
    pub from_holder: String,
    pub from_host: String,
    pub expired_at: Timestamp,
    /// The new holder, and when it took the run.
    pub holder: String,
    pub host: String,
    pub at: Timestamp,
}

/// Everything a new run is made of.
pub struct NewRun {
    pub run_id: RunId,
    pub key: Option<String>,
    pub plan: PlanRef,
    pub base: CommitId,
    pub base_rev: String,
    pub branch: String,
    pub worktree: String,
    pub pipeline: Vec<StagePolicy>,
    pub policy: Policy,
    /// `run --queue`: the run is born `queued`, for `cycle` to start.
    pub queued: bool,
}

impl RunState {
    /// A `pending` (or `queued`) run whose stages are `new.pipeline`, checked like a loaded one.
    pub fn new(new: NewRun, now: Timestamp) -> Result<RunState, InvalidState> {
        let stages = new
            .pipeline
            .into_iter()
            .map(|p| Stage {
                name: p.stage,
                configured_actor: p.actor,
                gated: p.gated,
                fallback: p.fallback,
                attempts: Vec::new(),
            })
            .collect();
        let state = RunState {
            run_id: new.run_id,
            status: if new.queued {
                RunStatus::Queued
            } else {
                RunStatus::Pending
            },
            key: new.key,
            plan: new.plan,
            base: new.base,
            base_rev: new.base_rev,
            branch: new.branch,
            worktree: new.worktree,
            created_at: now,
            updated_at: now,
            policy: new.policy,
            stages,
            halt: None,
            remote: None,
            lease: None,
            takeovers: Vec::new(),
            cycle: CycleFacts::default(),
        };
        state.check()?;
        Ok(state)
    }

    pub fn status(&self) -> RunStatus {
        self.status
    }

    pub fn stages(&self) -> &[Stage] {
        &self.stages
    }

    /// Changes with every transition.
    pub fn updated_at(&self) -> Timestamp {
        self.updated_at
    }

    pub fn halt(&self) -> Option<&Halt> {
        self.halt.as_ref()
    }

    /// The remote the run was published to, once it was.
    pub fn remote(&self) -> Option<&str> {
        self.remote.as_deref()
    }

    /// The lease as recorded; whether it still holds depends on the time (see [`Lease`]).
    pub fn lease(&self) -> Option<&Lease> {
        self.lease.as_ref()
    }

    pub fn takeovers(&self) -> &[Takeover] {
        &self.takeovers
    }

    /// The run's standing with `git baton cycle`.
    pub fn cycle(&self) -> &CycleFacts {
        &self.cycle
    }

    /// Whether a person stopped the run (`stop`, a signal, `pause`, `--stop-after`), so that
    /// `cycle` must not start it again: only a person does. A halt from before halts recorded
    /// their cause counts as a person's; a stop of the `cycle` that drove the run does not.
    pub fn stopped_by_hand(&self) -> bool {
        match self.status {
            RunStatus::Paused => true,
            RunStatus::Interrupted if self.cycle.stopped.is_some() => false,
            RunStatus::Interrupted => match &self.halt {
                Some(halt) => halt.cause != Some(Cause::Crash),
                None => self
                    .latest_attempt()
                    .is_some_and(|(_, a)| a.cause == Some(Cause::Manual)),
            },
            _ => false,
        }
    }

    /// Whether `other` is this state as another clone keeps it: the same in everything but the
    /// two facts about that clone itself — where its worktree is, and what it calls the remote.
    pub fn same_but_local(&self, other: &RunState) -> bool {
        let mut other = other.clone();
        other.worktree.clone_from(&self.worktree);
        other.remote.clone_from(&self.remote);
        *self == other
    }

    /// The stage named `name`, with its index.
    pub fn stage(&self, name: &str) -> Option<(usize, &Stage)> {
        self.stages.iter().enumerate().find(|(_, s)| s.name == name)
    }

    /// The first stage that has not succeeded: the one to run next.
    pub fn next_stage(&self) -> Option<usize> {
        self.stages
            .iter()
            .position(|s| s.status() != StageStatus::Succeeded)
    }

    /// The latest attempt of the run, with the index of its stage. Stages run in order and a
    /// succeeded stage never runs again, so the latest is the last attempt of the last stage
    /// that has any.
    pub fn latest_attempt(&self) -> Option<(usize, &Attempt)> {
        self.stages
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, s)| s.attempts.last().map(|a| (i, a)))
    }

    /// Whether the coverage gate decides attempt `n` of a gated stage: every attempt, or with
    /// `coverage: resume` only resumed ones. The driver and `git baton check` both ask here.
    pub fn gate_enforced(&self, n: u32) -> bool {
        self.policy.coverage == CoverageMode::Always || is_resumed(n)
    }

    /// The attempt that has started and not ended (at most one: the latest).
    pub fn open_attempt(&self) -> Option<(usize, &Attempt)> {
        self.latest_attempt().filter(|(_, a)| a.is_open())
    }

    /// While `running`: the stage executing (or, between two stages, the one that just
    /// succeeded). At the other unsettled statuses: the stage the run stopped at, which resume
    /// runs next. `None` before the first stage (`pending`) and once every stage succeeded.
    pub fn current_stage(&self) -> Option<&str> {
        let index = match self.status {
            RunStatus::Pending | RunStatus::Review | RunStatus::Finished => None,
            RunStatus::Running => self.latest_attempt().map(|(i, _)| i),
            _ => self.next_stage(),
        }?;
        Some(&self.stages[index].name)
    }

    /// The report of the latest gate that ran.
    pub fn coverage(&self) -> Option<&Report> {
        self.attempts().rev().find_map(|a| a.coverage.as_ref())
    }

    /// Usage summed over every ended attempt of every stage, carried forward across resumes.
    pub fn usage(&self) -> UsageTotals {
        let mut t = UsageTotals::default();
        for attempt in self.attempts().filter(|a| !a.is_open()) {
            match &attempt.usage {
                Some(u) => {
                    t.input_tokens += u.input_tokens.unwrap_or(0);
                    t.output_tokens += u.output_tokens.unwrap_or(0);
                    match u.cost_usd {
                        Some(cost) => t.cost_usd += cost,
                        None => t.attempts_without_cost += 1,
                    }
                }
                None => t.attempts_without_usage += 1,
            }
            if let Some(agent) = &attempt.agent {
                t.cache_read_input_tokens += agent.cache_read_input_tokens.unwrap_or(0);
                t.cache_creation_input_tokens += agent.cache_creation_input_tokens.unwrap_or(0);
                t.reasoning_output_tokens += agent.reasoning_output_tokens.unwrap_or(0);
                t.attempts_cut += u32::from(agent.cut);
            }
        }
        t.lower_bound = t.attempts_without_usage > 0 || t.attempts_cut > 0;
        t
    }

    /// Why the run stopped, while it is stopped by a failure: the latest attempt's outcome, or
    /// the halt between stages (naming the stage resume runs next).
    pub fn error(&self) -> Option<LastError> {
        if let Some(halt) = &self.halt {
            return self.next_stage().map(|i| LastError {
                kind: ErrorKind::Interrupted,
                stage: self.stages[i].name.clone(),
                message: halt.message.clone(),
            });
        }
        if !matches!(
            self.status,
            RunStatus::Failed
                | RunStatus::RateLimited
                | RunStatus::Blocked
                | RunStatus::Interrupted
        ) {
            return None;
        }
        let (index, attempt) = self.latest_attempt()?;
        let outcome = attempt.outcome?;
        let kind = match outcome {
            Outcome::Succeeded => return None,
            Outcome::Failed if attempt.exec_error => ErrorKind::Exec,
            Outcome::Failed if !attempt.violations.is_empty() => ErrorKind::Violation,
            Outcome::Failed => ErrorKind::Failed,
            Outcome::RateLimited => ErrorKind::RateLimited,
            Outcome::Interrupted => ErrorKind::Interrupted,
            Outcome::Blocked => ErrorKind::Blocked,
        };
        Some(LastError {
            kind,
            stage: self.stages[index].name.clone(),
            message: attempt
                .error
                .clone()
                .unwrap_or_else(|| outcome.name().to_string()),
        })
    }

    /// Every attempt in the order they ran.
    pub fn attempts(&self) -> impl DoubleEndedIterator<Item = &Attempt> {
        self.stages.iter().flat_map(|s| &s.attempts)
    }

    /// Every attempt's coverage report, in the order of [`Self::attempts`]: for a remote's claim
    /// to be shown with the reports this clone derived instead (`run::claims::judge_remote`).
    pub fn coverage_reports_mut(&mut self) -> impl Iterator<Item = &mut Option<Report>> {
        self.stages
            .iter_mut()
            .flat_map(|s| s.attempts.iter_mut().map(|a| &mut a.coverage))
    }

    /// The document `status --json` prints: this state and every fact derived from it.
    pub fn view(&self) -> view::RunView<'_> {
        view::RunView::of(self)
    }
}

#[cfg(test)]
pub(crate) mod fixture {
    //! A two-stage run for the unit tests of this module tree.
    use super::*;

    pub fn at(second: i64) -> Timestamp {
        Timestamp::from_second(1_767_225_600 + second).unwrap()
    }

    pub fn run() -> RunState {
        RunState::new(
            NewRun {
                run_id: "1ngvbzkqq5".parse().unwrap(),
                key: None,
                plan: PlanRef {
                    id: "p".into(),
                    title: None,
                    path: "plans/p.md".into(),
                    snapshot: "plan.md".into(),
                    targets: vec!["a.md".into()],
                    targets_source: TargetSource::Declared,
                },
                base: "0".repeat(40).parse().unwrap(),
                base_rev: "main".into(),
                branch: "baton/1ngvbzkqq5".into(),
                worktree: "/w".into(),
                queued: false,
                pipeline: vec![
                    StagePolicy {
                        stage: "executor".into(),
                        actor: "a".into(),
                        gated: true,
                        fallback: Vec::new(),
                    },
                    StagePolicy {
                        stage: "reporter".into(),
                        actor: "b".into(),
                        gated: false,
                        fallback: Vec::new(),
                    },
                ],
                policy: Policy {
                    coverage: CoverageMode::Always,
                    stop_after: None,
                },
            },
            at(0),
        )
        .unwrap()
    }
}
