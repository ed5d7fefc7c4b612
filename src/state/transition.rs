//! The one function that changes a RunState: [`apply`] takes a state, an event and the time it
//! happened, and returns the next state, or says why the event cannot happen in this state.
//!
//! It is pure (no I/O, no clock): the driver, `resume` and `finish` read the time, apply, and
//! save. Legal moves, by event:
//!
//! | event | allowed when | the run becomes |
//! |---|---|---|
//! | `AttemptStarted` | not in review or finished, no attempt open, the stage is the next to run | `running` |
//! | `AttemptEnded` | an attempt is open | `running` after a success, else the outcome's status |
//! | `CrashFound` | `running` | `interrupted` (the open attempt closed as a crash, or a halt) |
//! | `Paused` | not in review or finished, no attempt open, a stage is left | `paused` |
//! | `Halted` | not in review or finished, no attempt open | `interrupted` |
//! | `ReviewEntered` | not in review or finished, every stage succeeded | `review` |
//! | `Finished` | `review` | `finished` |
//! | `Published` | always | (unchanged) the remote is recorded |
//! | `LeaseTaken` | no other holder's lease in force (one ending further out than the new lease's length is not: [`super::trust::lease_in_force`]) | (unchanged) an expired lease of another holder is recorded as a takeover |
//! | `LeaseRenewed` | the lease is the renewer's | (unchanged) |
//! | `LeaseReleased` | always | (unchanged) the renewer's lease is gone |
//! | `Held` | not in review or finished, not held | (unchanged) `cycle` leaves it alone |
//! | `Released` | held, or resumed by `cycle` | (unchanged) `cycle` may take it, its resume count is 0 |
//! | `CycleResumed` | not in review or finished, not held, not stopped by a person, resumed fewer than `max_resumes` times | (unchanged) one more resume by `cycle` |
//! | `CycleStopped` | `interrupted` | (unchanged) the interruption was `cycle`'s own stop, not a person's |
//!
//! The four lease events change no status and leave `updated_at` alone: they say who may drive
//! the run, not what happened to it; so does `CycleResumed`. A succeeded attempt sets the resume
//! count back to 0: the run got somewhere.

use jiff::Timestamp;

use super::{
    AgentOutput, Attempt, Cause, CommitId, FallbackFrom, Halt, Lease, Outcome, RunId, RunState,
    RunStatus, Takeover, Usage, UsageSource,
};
use crate::coverage::Report;

/// Something that happened to a run.
#[derive(Debug, Clone)]
pub enum Event {
    /// A new attempt of stage `stage` (an index) by `actor`, recording into `dir`. Its number is
    /// the stage's [`super::Stage::next_attempt`]. `cleared_env` names the repository variables
    /// removed from the actor's environment ([`super::Attempt::cleared_env`]); `fallback_from`
    /// is set when the stage's `fallback:` started it, and must name the stage's latest attempt,
    /// ended rate limited.
    AttemptStarted {
        stage: usize,
        actor: String,
        dir: String,
        cleared_env: Vec<String>,
        fallback_from: Option<FallbackFrom>,
    },
    /// The open attempt ended.
    AttemptEnded(Box<AttemptEnd>),
    /// The run was `running` while no process held its lock: its driver died.
    CrashFound {
        snapshot: Option<CommitId>,
        /// How often the open attempt's Stop hook blocked before the crash, when it ran.
        hook_blocks: Option<u32>,
        /// What `snapshot` does not hold.
        unrecorded: Vec<super::UnrecordedPath>,
    },
    /// Stopped at a stage boundary on request.
    Paused,
    /// Stopped between two stages, no attempt running: by a signal, a stop request, or a crash.
    Halted { message: String },
    /// Every stage succeeded.
    ReviewEntered,
    /// `finish` committed the reviewed work.
    Finished,
    /// The run was pushed to this remote.
    Published { remote: String },
    /// A driver takes the run until `lease.until`.
    LeaseTaken(Lease),
    /// The holder keeps the run until `until`.
    LeaseRenewed { holder: String, until: Timestamp },
    /// The holder stopped driving.
    LeaseReleased { holder: String },
    /// A person excluded the run from `cycle` (`git baton hold`).
    Held { reason: Option<String> },
    /// A person gave the run back to `cycle` (`git baton release`); its resume count restarts.
    Released,
    /// `cycle` is about to resume the run, which it may resume `max_resumes` times without a
    /// stage succeeding.
    CycleResumed { max_resumes: u32 },
    /// The run was interrupted because the `cycle` driving it was stopped, not by a person.
    CycleStopped,
}

impl Event {
    /// The open attempt ended with `end` (boxed: an end is much larger than every other event).
    pub fn attempt_ended(end: AttemptEnd) -> Event {
        Event::AttemptEnded(Box::new(end))
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
    pub usage_source: Option<UsageSource>,
    /// Boxed: most attempts have none, and the event stays small.
    pub agent: Option<Box<AgentOutput>>,
    pub error: Option<String>,
    pub coverage: Option<Report>,
    /// The actor could not be started at all.
    pub exec_error: bool,
    pub snapshot: Option<CommitId>,
    /// How often the agent's Stop hook blocked, when it ran.
    pub hook_blocks: Option<u32>,
    /// What `snapshot` does not hold.
    pub unrecorded: Vec<super::UnrecordedPath>,
    /// The runner's checks on the attempt's work.
    pub checks: Vec<super::CheckResult>,
    /// What the attempt changed that no attempt may.
    pub violations: Vec<super::Violation>,
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
            usage_source: None,
            agent: None,
            error: None,
            coverage: None,
            exec_error: false,
            snapshot: None,
            hook_blocks: None,
            unrecorded: Vec::new(),
            checks: Vec::new(),
            violations: Vec::new(),
        }
    }
}

/// The error of an attempt its driver's crash ended, naming what its snapshot does not hold.
fn crash_error(unrecorded: &[super::UnrecordedPath]) -> String {
    let died = "the process driving the run died during this attempt";
    if unrecorded.is_empty() {
        died.to_string()
    } else {
        format!("{died}; {}", super::unrecorded_message(unrecorded))
    }
}

/// An event that cannot happen in the state it was applied to; says what the state holds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    #[error("run {run} is in {status}: there is nothing to resume")]
    NothingToResume { run: RunId, status: RunStatus },
    #[error("run {run} is {status}: {event} is not possible any more")]
    Settled {
        run: RunId,
        status: RunStatus,
        event: &'static str,
    },
    #[error("run {run}: {event} while attempt {n} of stage {stage} is still open")]
    AttemptOpen {
        run: RunId,
        event: &'static str,
        stage: String,
        n: u32,
    },
    #[error("run {run} is {status} and has no open attempt to end")]
    NoOpenAttempt { run: RunId, status: RunStatus },
    #[error("run {run} has no stage #{index}: it has {count}")]
    NoSuchStage {
        run: RunId,
        index: usize,
        count: usize,
    },
    #[error("run {run}: stage {stage} cannot start: {}", match .next {
        Some(next) => format!("the stage to run next is {next}"),
        None => "every stage succeeded".to_string(),
    })]
    NotNextStage {
        run: RunId,
        stage: String,
        next: Option<String>,
    },
    #[error("run {run}: every stage succeeded, so there is no stage to pause before")]
    NothingToPause { run: RunId },
    #[error("run {run} cannot enter review: stage {stage} has not succeeded")]
    StageLeft { run: RunId, stage: String },
    #[error("run {run} is {status}, not running: no driver of it can have crashed")]
    NotRunning { run: RunId, status: RunStatus },
    #[error(
        "run {run} is {status}, not in review: only a run whose stages all succeeded can be finished"
    )]
    NotInReview { run: RunId, status: RunStatus },
    #[error(
        "run {run}: a fallback from attempt {attempt} of stage {stage} needs that attempt to be \
         the stage's latest, by the actor named, ended rate limited"
    )]
    NotAFallback {
        run: RunId,
        stage: String,
        attempt: u32,
    },
    #[error("run {run} is already held, since {since}")]
    AlreadyHeld { run: RunId, since: Timestamp },
    #[error("run {run} is not held, and cycle has not resumed it: there is nothing to release")]
    NotHeld { run: RunId },
    #[error("run {run} is {status}, not interrupted: cycle did not stop it")]
    NotInterrupted { run: RunId, status: RunStatus },
    #[error("run {run} is {status} by a person: cycle does not resume it")]
    StoppedByHand { run: RunId, status: RunStatus },
    #[error("run {run}: cycle resumed it {resumes} times without a stage succeeding")]
    ResumeCap { run: RunId, resumes: u32 },
    #[error("run {run} is held (git baton hold): cycle does not resume it")]
    HeldByHand { run: RunId },
    #[error("run {run} is leased by {} on {} until {}", .lease.holder, .lease.host, .lease.until)]
    LeaseHeld { run: RunId, lease: Box<Lease> },
    #[error("run {run}: the lease of {holder} is gone{}", match .now {
        Some(lease) => format!(": {} on {} holds it", lease.holder, lease.host),
        None => String::new(),
    })]
    LeaseLost {
        run: RunId,
        holder: String,
        now: Option<Box<Lease>>,
    },
}

/// The state after `event` happened at `at`, or why it cannot happen. Every status change of a
/// run goes through here.
pub fn apply(state: &RunState, event: Event, at: Timestamp) -> Result<RunState, TransitionError> {
    let stamped = moves_the_run(&event);
    let mut next = state.clone();
    match event {
        // The attempts.
        Event::AttemptStarted {
            stage,
            actor,
            dir,
            cleared_env,
            fallback_from,
        } => start_attempt(
            state,
            &mut next,
            stage,
            Attempt::open(actor, dir, cleared_env, fallback_from, at),
        )?,
        Event::AttemptEnded(end) => end_attempt(state, &mut next, *end, at)?,
        Event::CrashFound {
            snapshot,
            hook_blocks,
            unrecorded,
        } => crash_found(state, &mut next, snapshot, hook_blocks, unrecorded, at)?,
        // The run's status between attempts.
        Event::Paused => pause(state, &mut next)?,
        Event::Halted { message } => halt(state, &mut next, message)?,
        Event::ReviewEntered => enter_review(state, &mut next)?,
        Event::Finished => finish(state, &mut next)?,
        // Who may drive it.
        Event::Published { remote } => next.remote = Some(remote),
        Event::LeaseTaken(lease) => take_lease(state, &mut next, lease, at)?,
        Event::LeaseRenewed { holder, until } => renew_lease(state, &mut next, holder, until)?,
        Event::LeaseReleased { holder } => {
            if state.lease.as_ref().is_some_and(|l| l.holder == holder) {
                next.lease = None;
            }
        }
        // What `cycle` may do with it.
        Event::Held { reason } => hold(state, &mut next, reason, at)?,
        Event::Released => release(state, &mut next)?,
        Event::CycleResumed { max_resumes } => resume_by_cycle(state, &mut next, max_resumes)?,
        Event::CycleStopped => stop_by_cycle(state, &mut next, at)?,
    }
    if stamped {
        next.updated_at = at;
    }
    Ok(next)
}

/// Whether `event` says what happened to the run, and so moves its `updated_at`: the four lease
/// events, `CycleResumed` and `CycleStopped` do not.
fn moves_the_run(event: &Event) -> bool {
    !matches!(
        event,
        Event::Published { .. }
            | Event::LeaseTaken(_)
            | Event::LeaseRenewed { .. }
            | Event::LeaseReleased { .. }
            | Event::CycleResumed { .. }
            | Event::CycleStopped
    )
}

/// `AttemptStarted`: the stage must be the next to run, with no attempt open; a fallback must
/// follow the stage's latest attempt, ended rate limited.
fn start_attempt(
    state: &RunState,
    next: &mut RunState,
    stage: usize,
    mut attempt: Attempt,
) -> Result<(), TransitionError> {
    unsettled(state, "starting an attempt")?;
    nothing_open(state, "starting an attempt")?;
    let count = state.stages.len();
    let target = state
        .stages
        .get(stage)
        .ok_or(TransitionError::NoSuchStage {
            run: state.run_id.clone(),
            index: stage,
            count,
        })?;
    if state.next_stage() != Some(stage) {
        return Err(TransitionError::NotNextStage {
            run: state.run_id.clone(),
            stage: target.name.clone(),
            next: state.next_stage().map(|i| state.stages[i].name.clone()),
        });
    }
    if let Some(from) = &attempt.fallback_from {
        let latest = target.attempts.last();
        let valid = latest.is_some_and(|a| {
            a.n == from.attempt && a.actor == from.actor && a.outcome == Some(Outcome::RateLimited)
        });
        if !valid {
            return Err(TransitionError::NotAFallback {
                run: state.run_id.clone(),
                stage: target.name.clone(),
                attempt: from.attempt,
            });
        }
    }
    attempt.n = target.next_attempt();
    next.stages[stage].attempts.push(attempt);
    next.status = RunStatus::Running;
    next.halt = None;
    next.cycle.stopped = None;
    Ok(())
}

/// `AttemptEnded`: an attempt must be open.
fn end_attempt(
    state: &RunState,
    next: &mut RunState,
    end: AttemptEnd,
    at: Timestamp,
) -> Result<(), TransitionError> {
    let Some((stage, _)) = state.open_attempt() else {
        return Err(TransitionError::NoOpenAttempt {
            run: state.run_id.clone(),
            status: state.status,
        });
    };
    end_open_attempt(next, stage, end, at);
    Ok(())
}

/// `CrashFound`: the run must say it is running; the open attempt ends as a crash, or the run
/// halts if it died between stages.
fn crash_found(
    state: &RunState,
    next: &mut RunState,
    snapshot: Option<CommitId>,
    hook_blocks: Option<u32>,
    unrecorded: Vec<super::UnrecordedPath>,
    at: Timestamp,
) -> Result<(), TransitionError> {
    if state.status != RunStatus::Running {
        return Err(TransitionError::NotRunning {
            run: state.run_id.clone(),
            status: state.status,
        });
    }
    match state.open_attempt() {
        Some((stage, _)) => end_open_attempt(
            next,
            stage,
            AttemptEnd {
                outcome: Outcome::Interrupted,
                cause: Some(Cause::Crash),
                error: Some(crash_error(&unrecorded)),
                snapshot,
                hook_blocks,
                unrecorded,
                ..AttemptEnd::default()
            },
            at,
        ),
        None => {
            next.status = RunStatus::Interrupted;
            next.halt = Some(Halt {
                message: "the process driving the run died between stages".into(),
                cause: Some(Cause::Crash),
            });
        }
    }
    Ok(())
}

/// `Paused`: not settled, no attempt open, and a stage left to run.
fn pause(state: &RunState, next: &mut RunState) -> Result<(), TransitionError> {
    unsettled(state, "pausing")?;
    nothing_open(state, "pausing")?;
    if state.next_stage().is_none() {
        return Err(TransitionError::NothingToPause {
            run: state.run_id.clone(),
        });
    }
    next.status = RunStatus::Paused;
    next.halt = None;
    Ok(())
}

/// `Halted`: not settled, and no attempt open.
fn halt(state: &RunState, next: &mut RunState, message: String) -> Result<(), TransitionError> {
    unsettled(state, "halting")?;
    nothing_open(state, "halting")?;
    next.status = RunStatus::Interrupted;
    next.halt = Some(Halt {
        message,
        cause: Some(Cause::Manual),
    });
    Ok(())
}

/// `ReviewEntered`: not settled, and no stage left to run.
fn enter_review(state: &RunState, next: &mut RunState) -> Result<(), TransitionError> {
    unsettled(state, "entering review")?;
    if let Some(i) = state.next_stage() {
        return Err(TransitionError::StageLeft {
            run: state.run_id.clone(),
            stage: state.stages[i].name.clone(),
        });
    }
    next.status = RunStatus::Review;
    next.halt = None;
    Ok(())
}

/// `Finished`: only a run in review.
fn finish(state: &RunState, next: &mut RunState) -> Result<(), TransitionError> {
    if state.status != RunStatus::Review {
        return Err(TransitionError::NotInReview {
            run: state.run_id.clone(),
            status: state.status,
        });
    }
    next.status = RunStatus::Finished;
    Ok(())
}

/// `LeaseTaken`: no other holder's lease in force; an expired one is recorded as a takeover.
fn take_lease(
    state: &RunState,
    next: &mut RunState,
    lease: Lease,
    at: Timestamp,
) -> Result<(), TransitionError> {
    if let Some(old) = state.lease.as_ref().filter(|l| l.holder != lease.holder) {
        // The longest lease there is, is the one being taken (this clone's `lease:`):
        // one that ends further out than that was never a lease, and is taken over.
        let longest = lease.until.duration_since(lease.taken_at);
        if super::trust::lease_in_force(old, at, longest) {
            return Err(TransitionError::LeaseHeld {
                run: state.run_id.clone(),
                lease: Box::new(old.clone()),
            });
        }
        next.takeovers.push(Takeover {
            from_holder: old.holder.clone(),
            from_host: old.host.clone(),
            expired_at: old.until,
            holder: lease.holder.clone(),
            host: lease.host.clone(),
            at,
        });
    }
    next.lease = Some(lease);
    Ok(())
}

/// `LeaseRenewed`: only the lease's own holder renews it.
fn renew_lease(
    state: &RunState,
    next: &mut RunState,
    holder: String,
    until: Timestamp,
) -> Result<(), TransitionError> {
    match next.lease.as_mut().filter(|l| l.holder == holder) {
        Some(lease) => lease.until = until,
        None => {
            return Err(TransitionError::LeaseLost {
                run: state.run_id.clone(),
                holder,
                now: state.lease.clone().map(Box::new),
            });
        }
    }
    Ok(())
}

/// `Held`: not settled, and not held already.
fn hold(
    state: &RunState,
    next: &mut RunState,
    reason: Option<String>,
    at: Timestamp,
) -> Result<(), TransitionError> {
    unsettled(state, "holding")?;
    if let Some(held) = &state.cycle.held {
        return Err(TransitionError::AlreadyHeld {
            run: state.run_id.clone(),
            since: held.at,
        });
    }
    next.cycle.held = Some(super::Held { at, reason });
    Ok(())
}

/// `Released`: held, or resumed by `cycle`; what `cycle` knew of the run is forgotten.
fn release(state: &RunState, next: &mut RunState) -> Result<(), TransitionError> {
    if state.cycle.is_empty() {
        return Err(TransitionError::NotHeld {
            run: state.run_id.clone(),
        });
    }
    next.cycle = super::CycleFacts::default();
    Ok(())
}

/// `CycleResumed`: not settled, not held, not stopped by a person, and under the cap.
fn resume_by_cycle(
    state: &RunState,
    next: &mut RunState,
    max_resumes: u32,
) -> Result<(), TransitionError> {
    unsettled(state, "resuming by cycle")?;
    if state.cycle.held.is_some() {
        return Err(TransitionError::HeldByHand {
            run: state.run_id.clone(),
        });
    }
    if state.stopped_by_hand() {
        return Err(TransitionError::StoppedByHand {
            run: state.run_id.clone(),
            status: state.status,
        });
    }
    if state.cycle.resumes >= max_resumes {
        return Err(TransitionError::ResumeCap {
            run: state.run_id.clone(),
            resumes: state.cycle.resumes,
        });
    }
    next.cycle.resumes = next.cycle.resumes.saturating_add(1);
    Ok(())
}

/// `CycleStopped`: only an interrupted run; the interruption was `cycle`'s own stop.
fn stop_by_cycle(
    state: &RunState,
    next: &mut RunState,
    at: Timestamp,
) -> Result<(), TransitionError> {
    if state.status != RunStatus::Interrupted {
        return Err(TransitionError::NotInterrupted {
            run: state.run_id.clone(),
            status: state.status,
        });
    }
    next.cycle.stopped = Some(at);
    Ok(())
}

/// Whether `finish` may finish the run: only one in review.
pub fn check_finishable(state: &RunState) -> Result<(), TransitionError> {
    match state.status {
        RunStatus::Review => Ok(()),
        status => Err(TransitionError::NotInReview {
            run: state.run_id.clone(),
            status,
        }),
    }
}

/// Whether `resume` has anything to do: a run in review or finished has not.
pub fn check_resumable(state: &RunState) -> Result<(), TransitionError> {
    match state.status {
        RunStatus::Review | RunStatus::Finished => Err(TransitionError::NothingToResume {
            run: state.run_id.clone(),
            status: state.status,
        }),
        _ => Ok(()),
    }
}

/// Whether `event` would apply to `state`, changing nothing: asked before a published run's
/// lease is taken for one event (`hold`, `release`), so that a refusal costs no round trip to
/// the remote and leaves no lease behind on it.
pub fn check_event(state: &RunState, event: &Event) -> Result<(), TransitionError> {
    apply(state, event.clone(), state.updated_at).map(drop)
}

fn unsettled(state: &RunState, event: &'static str) -> Result<(), TransitionError> {
    match state.status {
        RunStatus::Review | RunStatus::Finished => Err(TransitionError::Settled {
            run: state.run_id.clone(),
            status: state.status,
            event,
        }),
        _ => Ok(()),
    }
}

fn nothing_open(state: &RunState, event: &'static str) -> Result<(), TransitionError> {
    match state.open_attempt() {
        Some((stage, attempt)) => Err(TransitionError::AttemptOpen {
            run: state.run_id.clone(),
            event,
            stage: state.stages[stage].name.clone(),
            n: attempt.n,
        }),
        None => Ok(()),
    }
}

fn end_open_attempt(next: &mut RunState, stage: usize, end: AttemptEnd, at: Timestamp) {
    let Some(attempt) = next.stages[stage].attempts.last_mut() else {
        return;
    };
    attempt.outcome = Some(end.outcome);
    attempt.cause = end.cause;
    attempt.ended_at = Some(at);
    attempt.duration_ms = end.duration_ms;
    attempt.exit_code = end.exit_code;
    attempt.signal = end.signal;
    attempt.usage = end.usage;
    attempt.usage_source = end.usage_source;
    attempt.agent = end.agent.map(|agent| *agent);
    attempt.error = end.error;
    attempt.exec_error = end.exec_error;
    attempt.coverage = end.coverage;
    attempt.snapshot = end.snapshot;
    attempt.hook_blocks = end.hook_blocks;
    (attempt.unrecorded, attempt.unrecorded_omitted) =
        super::stage::keep_unrecorded(end.unrecorded);
    attempt.checks = end.checks;
    attempt.violations = end.violations;
    if end.outcome == Outcome::Succeeded {
        next.cycle.resumes = 0;
    }
    next.status = match end.outcome {
        // Between two stages the run is still running: the driver goes on to the next one.
        Outcome::Succeeded => RunStatus::Running,
        Outcome::Failed => RunStatus::Failed,
        Outcome::RateLimited => RunStatus::RateLimited,
        Outcome::Interrupted => RunStatus::Interrupted,
        Outcome::Blocked => RunStatus::Blocked,
    };
}

#[cfg(test)]
mod tests;
