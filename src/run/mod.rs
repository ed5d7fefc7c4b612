//! Runs: creating one (a single transaction) and driving its stages (the pipeline).
//!
//! The pipeline writes the RunState before an actor starts and after it ends, so that whatever
//! is killed when, the state on disk says what happened up to that point. It reads nothing but
//! the RunState and the run directory: everything it needs was recorded at creation.
//!
//! Every change of a run goes through its [`session`], which also holds the lease of a published
//! run; what the driver has to say goes to the session's [`note::Sink`]. Around the pipeline:
//! [`resume`] prepares a run to be driven again, [`request`] carries stop
//! and pause requests from other processes to the driver, [`lifecycle`] finishes and removes
//! runs, [`history`] reads the record of attempts back, and [`doctor`] checks every run. Errors
//! are [`RunError`]s; how driving ended is a [`Driven`]. Neither names an exit code: that is the
//! command layer's decision.

pub mod agent_side;
mod attempt;
mod attempt_dir;
pub mod checks;
mod claims;
mod create;
pub mod doctor;
mod drive;
mod ending;
mod error;
mod fallback;
mod gate;
mod guard;
pub mod history;
mod in_the_way;
pub mod lifecycle;
pub mod note;
pub mod notify;
pub mod prompt;
pub mod record;
pub mod remote;
pub mod request;
mod result;
pub mod resume;
pub mod schedule;
pub mod session;
mod targets;
pub mod unrecorded;
mod worktree;
mod worktree_root;

use std::time::Duration;

pub use create::{CreateOptions, Created, PlanFile, check as check_new_run, create, read_plan};
pub use drive::Driver;
pub use error::{CreateError, DriveError, HistoryError, RunError, SyncError, WorktreeError};
pub use gate::blocked_message;
pub(crate) use gate::{Work, gate, parse_evidence, read_evidence, read_evidence_text};
pub use result::write_result;
pub(crate) use worktree::worktree_at;
pub use worktree::{check_worktree, open_run_worktree, snapshot_for, snapshot_ref};

use crate::state::Outcome;

/// How driving a run ended; the command layer decides what each means for its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driven {
    /// Every stage succeeded: the run waits for a person in `review`.
    Review,
    /// Paused at a stage boundary: on request, or after the `--stop-after` stage.
    Paused,
    /// Stopped by request before a stage started.
    Stopped,
    /// git-baton itself was interrupted by a signal, before a stage or during one.
    Interrupted,
    /// A stage ended with this outcome, other than success.
    StageEnded(Outcome),
}

/// Time between SIGTERM to an attempt's processes and SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// Files in the run directory that other processes create to ask the driver to stop or pause.
pub const STOP_REQUEST: &str = "stop.request";
pub const PAUSE_REQUEST: &str = "pause.request";
/// In an attempt's directory: the actor's pid, which is also its process group id.
pub const ACTOR_PID: &str = "actor.pid";
/// In an attempt's directory, written before the actor starts: the token that marks every
/// process of the attempt (see `exec::kill_leftovers`).
pub const ATTEMPT_TOKEN: &str = "attempt.token";
