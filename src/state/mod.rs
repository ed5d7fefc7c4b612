//! RunState: the persisted record of a run, and the single source of truth about it.
//!
//! Nothing about a run survives between invocations except what is written here; resume and
//! status reconstruct everything from it. The types are plain data (serde), and the transitions
//! below are pure functions of the state and a timestamp, so every rule about what a status
//! means is unit-tested without touching a disk. [`store`] does the I/O: atomic writes, the run
//! lock and listing. The field-by-field meaning is documented in docs/state.md.

pub mod store;

use serde::{Deserialize, Serialize};

use crate::coverage::{Report, Usage};

/// Bumped whenever a field changes meaning; readers refuse versions they do not know.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Created; no stage has started yet.
    Pending,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

impl From<Outcome> for RunStatus {
    fn from(outcome: Outcome) -> RunStatus {
        match outcome {
            Outcome::Succeeded => RunStatus::Running,
            Outcome::Failed => RunStatus::Failed,
            Outcome::RateLimited => RunStatus::RateLimited,
            Outcome::Interrupted => RunStatus::Interrupted,
            Outcome::Blocked => RunStatus::Blocked,
        }
    }
}

/// Why an attempt was interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// SIGINT/SIGTERM to git-baton, or `git baton stop`.
    Manual,
    /// The actor ran past its configured timeout.
    Timeout,
    /// The process driving the run died; found later because the run's lock was free.
    Crash,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CoverageMode {
    /// Gate every attempt of a gated stage.
    #[default]
    Always,
    /// Gate only resumed attempts.
    Resume,
}

/// One stage of the pipeline as recorded at creation; authoritative on resume.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StagePolicy {
    pub stage: String,
    pub actor: String,
    /// The stage passes the coverage gate before it may succeed.
    pub gated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    pub pipeline: Vec<StagePolicy>,
    pub coverage: CoverageMode,
    pub stop_after: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanRef {
    pub id: String,
    pub title: Option<String>,
    /// Where the plan came from, repo-relative; the run follows `snapshot`, not this file.
    pub path: String,
    /// The copy taken at creation, relative to the run directory.
    pub snapshot: String,
    pub targets: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// 1-based within its stage.
    pub n: u32,
    pub actor: String,
    /// `None` while the attempt runs (or when it was cut off by a crash not yet noticed).
    pub outcome: Option<Outcome>,
    /// Set when `outcome` is `interrupted`.
    pub cause: Option<Cause>,
    /// A later attempt of a stage that had an earlier, unsuccessful one.
    pub resumed: bool,
    pub started_at: String,
    pub ended_at: Option<String>,
    /// Measured with a monotonic clock around the actor, not derived from the timestamps.
    pub duration_ms: Option<u64>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub usage: Option<Usage>,
    pub error: Option<String>,
    /// The gate's report, when the gate ran for this attempt.
    pub coverage: Option<Report>,
    /// Directory of this attempt's prompt, logs and evidence, relative to the run directory.
    pub dir: String,
    /// The commit recording the worktree as this attempt left it
    /// (`refs/baton/runs/<run>/attempts/<stage>-<n>`).
    #[serde(default)]
    pub snapshot: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageState {
    pub name: String,
    pub status: StageStatus,
    /// The actor of the latest attempt, or the configured one before any attempt.
    pub actor: String,
    pub gated: bool,
    pub attempts: Vec<Attempt>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Failed,
    RateLimited,
    Interrupted,
    Blocked,
    /// git-baton could not run the actor at all (missing program, unwritable log).
    Exec,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunError {
    pub kind: ErrorKind,
    pub stage: String,
    pub message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageTotals {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    /// Attempts that reported no usage: the totals are a lower bound when this is not zero.
    pub attempts_without_usage: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub schema_version: u32,
    pub run_id: String,
    pub status: RunStatus,
    pub key: Option<String>,
    pub plan: PlanRef,
    /// The base commit id, and the revision it was resolved from.
    pub base: String,
    pub base_rev: String,
    pub branch: String,
    pub worktree: String,
    pub created_at: String,
    pub updated_at: String,
    /// The stage executing, or at a settled status the stage the run stopped at (the one resume
    /// re-runs); `None` before the first stage and once every stage succeeded.
    pub current_stage: Option<String>,
    pub policy: Policy,
    pub stages: Vec<StageState>,
    /// Coverage of the latest gate that ran.
    pub coverage: Option<Report>,
    pub usage: UsageTotals,
    pub error: Option<RunError>,
}

/// Everything a new run is made of; the run id and timestamps come from the store.
pub struct NewRun {
    pub run_id: String,
    pub key: Option<String>,
    pub plan: PlanRef,
    pub base: String,
    pub base_rev: String,
    pub branch: String,
    pub worktree: String,
    pub policy: Policy,
}

impl RunState {
    pub fn new(new: NewRun, now: &str) -> RunState {
        let stages = new
            .policy
            .pipeline
            .iter()
            .map(|p| StageState {
                name: p.stage.clone(),
                status: StageStatus::Pending,
                actor: p.actor.clone(),
                gated: p.gated,
                attempts: Vec::new(),
            })
            .collect();
        RunState {
            schema_version: SCHEMA_VERSION,
            run_id: new.run_id,
            status: RunStatus::Pending,
            key: new.key,
            plan: new.plan,
            base: new.base,
            base_rev: new.base_rev,
            branch: new.branch,
            worktree: new.worktree,
            created_at: now.into(),
            updated_at: now.into(),
            current_stage: None,
            policy: new.policy,
            stages,
            coverage: None,
            usage: UsageTotals::default(),
            error: None,
        }
    }

    /// The first stage that has not succeeded: the one to run next.
    pub fn next_stage(&self) -> Option<usize> {
        self.stages
            .iter()
            .position(|s| s.status != StageStatus::Succeeded)
    }

    /// Records the start of a new attempt of stage `index` and returns its number.
    /// An attempt is `resumed` when the stage already had one: whatever ended that one, the
    /// new attempt starts from a worktree that may hold partial work.
    pub fn start_attempt(&mut self, index: usize, actor: &str, dir: String, now: &str) -> u32 {
        let stage = &mut self.stages[index];
        let n = stage.attempts.len() as u32 + 1;
        stage.attempts.push(Attempt {
            n,
            actor: actor.into(),
            outcome: None,
            cause: None,
            resumed: n > 1,
            started_at: now.into(),
            ended_at: None,
            duration_ms: None,
            exit_code: None,
            signal: None,
            usage: None,
            error: None,
            coverage: None,
            dir,
            snapshot: None,
        });
        stage.status = StageStatus::Running;
        stage.actor = actor.into();
        self.status = RunStatus::Running;
        self.current_stage = Some(stage.name.clone());
        self.error = None;
        self.updated_at = now.into();
        n
    }

    /// Records how the running attempt of stage `index` ended, and what that means for the run.
    pub fn end_attempt(&mut self, index: usize, end: AttemptEnd, now: &str) {
        let stage = &mut self.stages[index];
        let attempt = stage.attempts.last_mut().expect("an attempt was started");
        attempt.outcome = Some(end.outcome);
        attempt.cause = end.cause;
        attempt.ended_at = Some(now.into());
        attempt.duration_ms = end.duration_ms;
        attempt.exit_code = end.exit_code;
        attempt.signal = end.signal;
        attempt.usage = end.usage.clone();
        attempt.error = end.error.clone();
        attempt.snapshot = end.snapshot.clone();
        if end.coverage.is_some() {
            attempt.coverage = end.coverage.clone();
            self.coverage = end.coverage;
        }
        stage.status = end.outcome.into();
        self.status = end.outcome.into();
        self.error = match end.outcome {
            Outcome::Succeeded => None,
            other => Some(RunError {
                kind: match other {
                    Outcome::Failed if end.exec_error => ErrorKind::Exec,
                    Outcome::Failed => ErrorKind::Failed,
                    Outcome::RateLimited => ErrorKind::RateLimited,
                    Outcome::Interrupted => ErrorKind::Interrupted,
                    Outcome::Blocked | Outcome::Succeeded => ErrorKind::Blocked,
                },
                stage: stage.name.clone(),
                message: end.error.unwrap_or_else(|| other.name().to_string()),
            }),
        };
        self.usage = totals(&self.stages);
        self.updated_at = now.into();
    }

    /// After the last stage succeeded: the run waits for review.
    pub fn enter_review(&mut self, now: &str) {
        self.status = RunStatus::Review;
        self.current_stage = None;
        self.updated_at = now.into();
    }

    /// Stopped at a stage boundary on request; `current_stage` names the stage resume runs next.
    pub fn pause(&mut self, now: &str) {
        self.status = RunStatus::Paused;
        self.current_stage = self.next_stage().map(|i| self.stages[i].name.clone());
        self.updated_at = now.into();
    }

    /// Stopped between two stages (no attempt was running): `interrupted`, with the stage to run
    /// next as `current_stage` so that resume and status say where the run stands.
    pub fn halt(&mut self, message: &str, now: &str) {
        let next = self.next_stage().map(|i| self.stages[i].name.clone());
        self.status = RunStatus::Interrupted;
        self.error = next.clone().map(|stage| RunError {
            kind: ErrorKind::Interrupted,
            stage,
            message: message.into(),
        });
        self.current_stage = next;
        self.updated_at = now.into();
    }

    /// A `running` attempt whose process died without recording an end: the caller found the
    /// run's lock free. The attempt is closed as interrupted by a crash, with no duration (none
    /// was measured).
    pub fn record_crash(&mut self, now: &str, snapshot: Option<String>) -> bool {
        let Some(index) = self
            .stages
            .iter()
            .position(|s| s.status == StageStatus::Running)
        else {
            if self.status == RunStatus::Running {
                self.halt("the process driving the run died between stages", now);
                return true;
            }
            return false;
        };
        let open = self.stages[index]
            .attempts
            .last()
            .is_some_and(|a| a.outcome.is_none());
        if !open {
            self.stages[index].status = StageStatus::Interrupted;
            self.status = RunStatus::Interrupted;
            return true;
        }
        self.end_attempt(
            index,
            AttemptEnd {
                outcome: Outcome::Interrupted,
                cause: Some(Cause::Crash),
                error: Some("the process driving the run died during this attempt".into()),
                snapshot,
                ..AttemptEnd::default()
            },
            now,
        );
        true
    }
}

/// What the pipeline learned when an attempt ended.
#[derive(Debug, Clone)]
pub struct AttemptEnd {
    pub outcome: Outcome,
    pub cause: Option<Cause>,
    pub duration_ms: Option<u64>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub usage: Option<Usage>,
    pub error: Option<String>,
    pub coverage: Option<Report>,
    /// The actor could not be started at all.
    pub exec_error: bool,
    pub snapshot: Option<String>,
}

impl Default for AttemptEnd {
    fn default() -> Self {
        AttemptEnd {
            outcome: Outcome::Failed,
            cause: None,
            duration_ms: None,
            exit_code: None,
            signal: None,
            usage: None,
            error: None,
            coverage: None,
            exec_error: false,
            snapshot: None,
        }
    }
}

/// Usage summed over every attempt of every stage, carried forward across resumes.
pub fn totals(stages: &[StageState]) -> UsageTotals {
    let mut t = UsageTotals::default();
    for attempt in stages.iter().flat_map(|s| &s.attempts) {
        if attempt.outcome.is_none() {
            continue;
        }
        match &attempt.usage {
            Some(u) => {
                t.input_tokens += u.input_tokens.unwrap_or(0);
                t.output_tokens += u.output_tokens.unwrap_or(0);
                t.cost_usd += u.cost_usd.unwrap_or(0.0);
            }
            None => t.attempts_without_usage += 1,
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> RunState {
        RunState::new(
            NewRun {
                run_id: "r1".into(),
                key: None,
                plan: PlanRef {
                    id: "p".into(),
                    title: None,
                    path: "plans/p.md".into(),
                    snapshot: "plan.md".into(),
                    targets: vec!["a.md".into()],
                },
                base: "0".repeat(40),
                base_rev: "main".into(),
                branch: "baton/r1".into(),
                worktree: "/w".into(),
                policy: Policy {
                    pipeline: vec![
                        StagePolicy {
                            stage: "executor".into(),
                            actor: "a".into(),
                            gated: true,
                        },
                        StagePolicy {
                            stage: "reporter".into(),
                            actor: "b".into(),
                            gated: false,
                        },
                    ],
                    coverage: CoverageMode::Always,
                    stop_after: None,
                },
            },
            "t0",
        )
    }

    fn ok(usage: Option<Usage>) -> AttemptEnd {
        AttemptEnd {
            outcome: Outcome::Succeeded,
            duration_ms: Some(5),
            exit_code: Some(0),
            usage,
            ..AttemptEnd::default()
        }
    }

    #[test]
    fn a_full_run_reaches_review_with_no_current_stage() {
        let mut s = run();
        assert_eq!(s.next_stage(), Some(0));
        assert_eq!(
            s.start_attempt(0, "a", "attempts/executor-1".into(), "t1"),
            1
        );
        assert_eq!(s.status, RunStatus::Running);
        assert_eq!(s.current_stage.as_deref(), Some("executor"));
        s.end_attempt(0, ok(None), "t2");
        s.start_attempt(1, "b", "attempts/reporter-1".into(), "t3");
        s.end_attempt(1, ok(None), "t4");
        assert_eq!(s.next_stage(), None);
        s.enter_review("t5");
        assert_eq!(s.status, RunStatus::Review);
        assert_eq!(s.current_stage, None);
        assert_eq!(s.usage.attempts_without_usage, 2);
    }

    #[test]
    fn failure_keeps_the_stage_current_and_the_next_attempt_is_resumed() {
        let mut s = run();
        s.start_attempt(0, "a", "d".into(), "t1");
        s.end_attempt(
            0,
            AttemptEnd {
                outcome: Outcome::RateLimited,
                exit_code: Some(75),
                error: Some("rate limit: matched `usage limit`".into()),
                usage: Some(Usage {
                    input_tokens: Some(10),
                    cost_usd: Some(0.5),
                    ..Usage::default()
                }),
                ..AttemptEnd::default()
            },
            "t2",
        );
        assert_eq!(s.status, RunStatus::RateLimited);
        assert_eq!(s.current_stage.as_deref(), Some("executor"));
        let err = s.error.clone().unwrap();
        assert_eq!(
            (err.kind, err.stage.as_str()),
            (ErrorKind::RateLimited, "executor")
        );
        assert_eq!(s.next_stage(), Some(0));
        s.start_attempt(0, "other", "d2".into(), "t3");
        let attempt = s.stages[0].attempts.last().unwrap();
        assert!(attempt.resumed);
        assert_eq!(s.stages[0].actor, "other");
        assert_eq!(s.error, None);
        s.end_attempt(
            0,
            ok(Some(Usage {
                input_tokens: Some(5),
                ..Usage::default()
            })),
            "t4",
        );
        assert_eq!(s.usage.input_tokens, 15);
        assert_eq!(s.usage.cost_usd, 0.5);
    }

    #[test]
    fn a_crash_closes_the_open_attempt_without_a_duration() {
        let mut s = run();
        s.start_attempt(0, "a", "d".into(), "t1");
        assert!(s.record_crash("t9", None));
        let attempt = &s.stages[0].attempts[0];
        assert_eq!(attempt.outcome, Some(Outcome::Interrupted));
        assert_eq!(attempt.cause, Some(Cause::Crash));
        assert_eq!(attempt.duration_ms, None);
        assert_eq!(s.status, RunStatus::Interrupted);
        assert!(!s.record_crash("t10", None), "nothing is running any more");
    }

    #[test]
    fn a_crash_between_stages_leaves_the_next_stage_current() {
        let mut s = run();
        s.start_attempt(0, "a", "d".into(), "t1");
        s.end_attempt(0, ok(None), "t2");
        assert_eq!(
            s.status,
            RunStatus::Running,
            "between stages the run is still running"
        );
        assert!(s.record_crash("t3", None));
        assert_eq!(s.status, RunStatus::Interrupted);
        assert_eq!(s.current_stage.as_deref(), Some("reporter"));
        assert_eq!(s.error.map(|e| e.kind), Some(ErrorKind::Interrupted));
    }

    #[test]
    fn pause_names_the_stage_to_run_next() {
        let mut s = run();
        s.start_attempt(0, "a", "d".into(), "t1");
        s.end_attempt(0, ok(None), "t2");
        s.pause("t3");
        assert_eq!(s.status, RunStatus::Paused);
        assert_eq!(s.current_stage.as_deref(), Some("reporter"));
    }

    #[test]
    fn state_round_trips_through_json() {
        let mut s = run();
        s.start_attempt(0, "a", "d".into(), "t1");
        let text = serde_json::to_string(&s).unwrap();
        let back: RunState = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
    }
}
