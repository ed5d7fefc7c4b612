//! What stops a run from being created: the plan read, and the plan and the command line's
//! choices checked against the configuration (a stage or actor named on `resume`'s command line
//! is checked the same way).

use std::io;
use std::path::PathBuf;

use crate::files::io_reason;

#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    #[error("cannot read plan {}: {}", .path.display(), io_reason(.source))]
    ReadPlan {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("plan {} is not valid UTF-8", .path.display())]
    PlanNotUtf8 { path: PathBuf },

    #[error("no pipeline is configured: .baton.yml has no `pipeline`")]
    NoPipeline,
    /// git records a branch's creation, and a commit, in someone's name.
    #[error(
        "no committer identity: the run's branch and commits are recorded in your name, and neither \
         user.name and user.email nor GIT_COMMITTER_NAME and GIT_COMMITTER_EMAIL are set"
    )]
    NoIdentity,
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
}
