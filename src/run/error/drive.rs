//! What stops an attempt from starting, being recorded or being judged, and what goes wrong
//! asking the process that drives a run to stop.

use std::path::PathBuf;

use super::list_paths;

#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    /// A run under `derive_targets: body` whose record and snapshot disagree on its targets.
    #[error("run {run} gates targets derived from its plan's body, but {problem}")]
    DerivedTargets { run: String, problem: String },
    /// A run whose plan snapshot no longer says what its RunState says of the plan.
    #[error("run {run}: its plan snapshot {} is not the plan the run was created with: {problem}", .path.display())]
    SnapshotChanged {
        run: String,
        path: std::path::PathBuf,
        problem: String,
    },
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

    #[error("--actor names stage `{stage}`, but the stage to resume is `{}`", .next.as_deref().unwrap_or("none"))]
    NotTheResumedStage { stage: String, next: Option<String> },

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

    /// `status` as `status` shows it, `(stale)` included.
    #[error("run {run} is not being driven by any process (status: {status})")]
    NotDriven { run: String, status: String },
    #[error("run {run} did not stop within {seconds} seconds; the stop request stays in place")]
    DidNotStop { run: String, seconds: u64 },
}
