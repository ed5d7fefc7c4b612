//! What can go wrong creating, driving, finishing and inspecting runs.
//!
//! Each variant names the run, path or stage involved and keeps its cause; [`RunError::hints`]
//! gives the next step for the variant, the way git follows an `error:` with `hint:` lines.
//! Which exit code an error means is the command layer's decision, not this module's.

use std::io;
use std::path::PathBuf;

use crate::files::io_reason;
use crate::git::GitError;
use crate::plan::PlanError;
use crate::report::status::word;
use crate::state::store::StoreError;
use crate::state::transition::TransitionError;
use crate::state::{InvalidState, RunStatus};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// A move the RunState does not allow: finishing a run not in review, resuming a finished
    /// one, … (and, were the driver wrong, any other illegal transition).
    #[error(transparent)]
    Transition(#[from] TransitionError),
    /// A RunState that breaks its invariants: made from a pipeline no run can have.
    #[error(transparent)]
    Invalid(#[from] InvalidState),
    /// What a crashed attempt left running could not be ended.
    #[error(transparent)]
    Leftovers(#[from] crate::exec::ExecError),
    #[error("cannot {action} {}: {}", .path.display(), io_reason(.source))]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read plan {}: {}", .path.display(), io_reason(.source))]
    ReadPlan {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("plan {} is not valid UTF-8", .path.display())]
    PlanNotUtf8 { path: PathBuf },
    #[error("cannot read the plan snapshot of run {run} ({}): {}", .path.display(), io_reason(.source))]
    PlanSnapshot {
        run: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A run under `derive_targets: body` whose record and snapshot disagree on its targets.
    #[error("run {run} gates targets derived from its plan's body, but {problem}")]
    DerivedTargets { run: String, problem: String },

    // --- remotes
    /// The compare-and-swap of a push was lost: the remote moved since this clone last saw it.
    #[error("run {run}: {remote} holds a newer record than this clone last saw{}", match .by {
        Some(by) => format!(" (advanced by {by})"),
        None => String::new(),
    })]
    LostRace {
        run: String,
        remote: String,
        by: Option<String>,
    },
    #[error(
        "run {run}: its lease could not be renewed in time; the driver stopped so that another \
         machine may take the run over"
    )]
    LeaseExpired { run: String },
    #[error(
        "run {run}: its records here and on {remote} have diverged: both advanced since they last agreed"
    )]
    Diverged { run: String, remote: String },
    #[error("run {run}: {remote} holds a newer record than this clone")]
    Behind { run: String, remote: String },
    #[error("run {run}: its worktree {worktree} holds work that no record has: {}", list_paths(.paths))]
    UnrecordedWork {
        run: String,
        worktree: String,
        paths: Vec<String>,
    },
    #[error("run {run}: branch {branch} here and on {remote} have gone different ways")]
    BranchConflict {
        run: String,
        branch: String,
        remote: String,
    },
    #[error("run {run}: the record {remote} holds cannot be read: {message}")]
    BadRemoteRecord {
        run: String,
        remote: String,
        message: String,
    },
    /// A remote's record that git-baton could not have written: it breaks an invariant every
    /// run is created with (docs/state.md, "Who is trusted for what").
    #[error("run {run}: the record {remote} holds is refused: {broken}")]
    UntrustedRecord {
        run: String,
        remote: String,
        broken: String,
    },
    /// A path field of a RunState that points outside the run directory.
    #[error(transparent)]
    BadPath(#[from] crate::state::BadPath),
    /// `finish` (or the push of a run in review) judged the gate again, on the final snapshot
    /// and the recorded reasons, and it does not pass.
    #[error("run {run}: the coverage gate of stage {stage} does not pass on the run's final snapshot{}{}",
        if .uncovered.is_empty() { String::new() } else { format!(": uncovered {}", list_paths(.uncovered)) },
        .problem.as_ref().map(|p| format!("; {p}")).unwrap_or_default())]
    GateFails {
        run: String,
        stage: String,
        uncovered: Vec<String>,
        problem: Option<String>,
    },
    /// The gate's verdict cannot be judged again: no snapshot records the run's final work.
    #[error(
        "run {run}: no snapshot records the work of attempt {attempt} of stage {stage}, so its gate cannot be checked"
    )]
    NoFinalSnapshot {
        run: String,
        stage: String,
        attempt: u32,
    },
    /// A record (from a remote, perhaps) names a file no run directory holds.
    #[error("a run record holds `{path}`, which is not a file of a run")]
    BadRecord { path: String },

    // --- the run's worktree
    #[error("run {run}: its worktree {worktree} is not a git worktree ({source})")]
    NotAWorktree {
        run: String,
        worktree: String,
        #[source]
        source: GitError,
    },
    #[error("run {run}: {worktree} is not a worktree registered with this repository")]
    NotRegistered { run: String, worktree: String },
    /// A worktree problem found before resuming or finishing.
    #[error("stale worktree mapping: {0}")]
    Stale(#[source] Box<RunError>),
    #[error("stale worktree mapping: run {run}: its worktree {worktree} does not exist")]
    WorktreeMissing {
        run: String,
        worktree: String,
        branch: String,
    },
    #[error(
        "stale worktree mapping: run {run}: its worktree {worktree} {}",
        super::guard::off_branch(.found.as_deref(), .branch)
    )]
    WrongBranch {
        run: String,
        worktree: String,
        found: Option<String>,
        branch: String,
    },
    #[error(
        "stale worktree mapping: run {run}: {}", super::guard::base_left(.branch, .base)
    )]
    BaseNotInHistory {
        run: String,
        branch: String,
        base: String,
    },

    // --- creating a run: the plan against the configuration, then the transaction
    #[error("no pipeline is configured: .baton.yml has no `pipeline`")]
    NoPipeline,
    #[error("{plan}:{line}:{column}: plan stage `{stage}` is not in the configured pipeline")]
    UnknownPlanStage {
        plan: String,
        line: usize,
        column: usize,
        stage: String,
        known: Vec<String>,
    },
    #[error("{plan}: the plan declares no targets, and .baton.yml sets `require_targets: true`")]
    NoTargets { plan: String },
    /// Before the run starts: an agent could only leave such a target uncovered.
    #[error("{0}")]
    IgnoredTarget(Box<crate::verify::ignored::IgnoredTarget>),
    #[error(
        "no stage of this run has `gate: coverage`, so the targets of {plan} would never be checked"
    )]
    Ungated { plan: String },
    /// `option` is the command-line option that named the stage.
    #[error("{option} names stage `{stage}`, which this run does not have")]
    UnknownRunStage {
        option: &'static str,
        stage: String,
        known: Vec<String>,
    },
    #[error("--actor names actor `{actor}`, which is not configured")]
    UnknownActor { actor: String, known: Vec<String> },
    #[error("key `{key}` already names run {run} of plan {plan}, with a different plan")]
    KeyConflict {
        key: String,
        run: String,
        plan: String,
    },
    #[error("injected failure at step `{step}` (GIT_BATON_FAIL_AT)")]
    Injected { step: String },

    // --- after the pipeline
    #[error("run {run}: branch {branch} does not exist")]
    NoBranch { run: String, branch: String },
    #[error("run {run} is {}, not finished", word(.status))]
    NotFinished {
        run: String,
        status: RunStatus,
        worktree: String,
    },
    #[error(
        "run {run}: its worktree {worktree} holds changes its branch does not have: {}",
        list_paths(.paths)
    )]
    WorktreeHoldsWork {
        run: String,
        worktree: String,
        paths: Vec<String>,
    },
    #[error("branch {branch} is checked out in {}", .worktree.display())]
    BranchInUse { branch: String, worktree: PathBuf },
    #[error("{source}")]
    WorktreeNotRemoved {
        run: String,
        worktree: String,
        #[source]
        source: GitError,
    },
    #[error("run {run} has no state.json: {} is what is left of it", .dir.display())]
    Headless { run: String, dir: PathBuf },
    #[error("cannot remove {}: {source}", .path.display())]
    Remove {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("run {run}: {worktree} exists; --recreate-worktree only replaces a missing worktree")]
    WorktreeExists { run: String, worktree: String },
    #[error(
        "run {run}: branch {branch} is gone, so there is nothing to re-create the worktree from"
    )]
    BranchGone { run: String, branch: String },
    #[error("cannot create {}: {source}", .path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    // --- resuming
    #[error("--actor names stage `{stage}`, but the stage to resume is `{}`", .next.as_deref().unwrap_or("none"))]
    NotTheResumedStage { stage: String, next: Option<String> },

    // --- handing a run's work on: every attempt's work recorded, nothing local overwritten
    /// Something is already where the driver makes the directory of a new attempt.
    #[error(
        "run {run}: the directory of attempt {attempt}, {}, exists already: git-baton did not \
         make it for this attempt (an earlier attempt's agent may have written it), so it is not \
         used",
        .path.display()
    )]
    AttemptDirExists {
        run: String,
        attempt: String,
        path: PathBuf,
    },
    /// The latest attempt ended without a snapshot: its work is only in a worktree.
    #[error(
        "run {run}: the work of attempt {n} of stage `{stage}` is not recorded (its snapshot failed)"
    )]
    UnrecordedAttempt {
        run: String,
        stage: String,
        n: u32,
        worktree: String,
        /// The record came from this remote: the work is on the machine that ran the attempt.
        remote: Option<String>,
    },
    /// The worktree cannot be recorded as a commit now, so no attempt may start in it.
    #[error("run {run}: its worktree {worktree} cannot be recorded: {message}")]
    Unrecordable {
        run: String,
        worktree: String,
        message: String,
    },
    /// Catching up would write the remote's work over files this clone ignores.
    #[error(
        "run {run}: the remote's newer snapshot has files where its worktree {worktree} holds \
         files this clone ignores, which catching up would overwrite: {}",
        list_paths(.paths)
    )]
    IgnoredInTheWay {
        run: String,
        worktree: String,
        paths: Vec<String>,
    },
    /// A file of the record is too large to be recorded whole, and is not recorded cut.
    #[error(
        "{} is {size} bytes, more than a run's record holds whole ({limit}); the record is left \
         as it was",
        .path.display()
    )]
    RecordFileTooLarge {
        path: PathBuf,
        size: usize,
        limit: usize,
    },

    // --- the record of attempts
    #[error("run {run} has no stage `{stage}`")]
    NoStage {
        run: String,
        stage: String,
        known: Vec<String>,
    },
    #[error("run {run} has no attempts yet")]
    NoAttempts { run: String },
    #[error(
        "stage `{stage}` of run {run} has no {}",
        .n.map_or("any attempts yet".to_string(), |n| format!("attempt {n}"))
    )]
    NoAttempt {
        run: String,
        stage: String,
        n: Option<u32>,
        count: usize,
    },
    #[error(
        "attempt {n} of stage `{stage}` has no snapshot (it is still running, or its snapshot failed)"
    )]
    NoSnapshot { stage: String, n: u32 },

    // --- requests to the process driving a run
    /// `status` as `status` shows it, `(stale)` included.
    #[error("run {run} is not being driven by any process (status: {status})")]
    NotDriven { run: String, status: String },
    #[error("run {run} did not stop within {seconds} seconds; the stop request stays in place")]
    DidNotStop { run: String, seconds: u64 },
}

/// Paths for a one-line message: the first few, then how many more.
fn list_paths(paths: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut text = paths
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        text.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    text
}
