//! A stage of a run and its attempts, as the RunState records them: what each attempt was,
//! how it ended, and what a stage's attempts say about the stage.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::coverage::{Report, Usage};
use crate::git::CommitId;

use super::{
    AgentOutput, Cause, CheckResult, FallbackFrom, Outcome, StagePolicy, StageStatus, UsageSource,
    Violation,
};

/// Whether attempt number `n` of a stage is a resumed one: every attempt after a stage's
/// first, whatever ended the one before, starts from a worktree that may hold partial work.
pub const fn is_resumed(n: u32) -> bool {
    n > 1
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Attempt {
    /// 1-based within its stage; assigned by [`Stage::next_attempt`].
    pub n: u32,
    pub actor: String,
    /// `None` while the attempt runs (or when it was cut off by a crash not yet noticed).
    pub outcome: Option<Outcome>,
    /// Set when `outcome` is `interrupted`.
    pub cause: Option<Cause>,
    pub started_at: Timestamp,
    pub ended_at: Option<Timestamp>,
    /// Measured with a monotonic clock around the actor, not derived from the timestamps.
    pub duration_ms: Option<u64>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub usage: Option<Usage>,
    pub error: Option<String>,
    /// The actor could not be started at all (the run's error is then of kind `exec`).
    pub exec_error: bool,
    /// The gate's report, when the gate ran for this attempt.
    pub coverage: Option<Report>,
    /// Directory of this attempt's prompt, logs and evidence, relative to the run directory.
    pub dir: String,
    /// The commit recording the worktree as this attempt left it
    /// (`refs/baton/runs/<run>/attempts/<stage>-<n>`).
    pub snapshot: Option<CommitId>,
    /// The names (never the values) of the variables that were set in git-baton's environment
    /// and removed from the actor's: git's repository variables, so that its git commands find
    /// the run's worktree by discovery, and `TMUX`, `TMUX_PANE` and `STY`, which lead to a
    /// terminal multiplexer's server. Empty, and omitted from the file, when none was set; absent
    /// in files written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cleared_env: Vec<String>,
    /// Where `usage` came from; absent when there is no usage (and in files written before
    /// agents' outputs were read, where it was always the evidence file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_source: Option<UsageSource>,
    /// What was read from the agent's output, for actors with an `output:` format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentOutput>,
    /// Set when `fallback:` started this attempt after the previous one was rate limited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_from: Option<FallbackFrom>,
    /// How often the Claude Code Stop hook (`git baton check --hook claude-stop`) kept the agent
    /// working during this attempt; absent when the hook never ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook_blocks: Option<u32>,
    /// The paths of the worktree this attempt's snapshot does not hold (git refused them), each
    /// with git's reason. Empty, and omitted from the file, when the snapshot holds everything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unrecorded: Vec<UnrecordedPath>,
    /// How many more such paths there were beyond the first [`UNRECORDED_KEPT`] that
    /// `unrecorded` keeps, so that the RunState stays bounded. Omitted when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unrecorded_omitted: u64,
    /// The runner's checks on this attempt's work (docs/checks.md), in order; omitted when none
    /// ran (and in files written before them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckResult>,
    /// What the attempt changed that no attempt may (a protected path, the git configuration,
    /// the branch, the recorded history); an attempt with any is `failed`. Omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<Violation>,
}

/// A path of the worktree that an attempt's snapshot does not hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct UnrecordedPath {
    /// Relative to the worktree's root, `/`-separated; a directory ends with `/`.
    pub path: String,
    /// git's reason, or what the file is when git says nothing.
    pub reason: String,
}

/// How many unrecorded paths an attempt keeps by name; the rest are counted.
pub const UNRECORDED_KEPT: usize = 100;

/// How many unrecorded paths an attempt's error names; the rest are counted.
const UNRECORDED_NAMED: usize = 10;

pub(super) fn is_zero(n: &u64) -> bool {
    *n == 0
}

pub(super) fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// The first [`UNRECORDED_KEPT`] of `paths`, and how many more there were.
pub fn keep_unrecorded(mut paths: Vec<UnrecordedPath>) -> (Vec<UnrecordedPath>, u64) {
    let omitted = paths.len().saturating_sub(UNRECORDED_KEPT) as u64;
    paths.truncate(UNRECORDED_KEPT);
    (paths, omitted)
}

/// What an attempt's error says of the paths its snapshot does not hold: the first few by name,
/// then how many more.
pub fn unrecorded_message(paths: &[UnrecordedPath]) -> String {
    let mut named: Vec<String> = paths
        .iter()
        .take(UNRECORDED_NAMED)
        .map(|p| format!("{} ({})", p.path, p.reason))
        .collect();
    if paths.len() > UNRECORDED_NAMED {
        named.push(format!("and {} more", paths.len() - UNRECORDED_NAMED));
    }
    format!(
        "its snapshot does not hold {} path(s) git cannot record, which are only in the worktree: {}",
        paths.len(),
        named.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(n: usize) -> Vec<UnrecordedPath> {
        (0..n)
            .map(|i| UnrecordedPath {
                path: format!("docs/{i:06}.GIT"),
                reason: "invalid path".into(),
            })
            .collect()
    }

    #[test]
    fn unrecorded_paths_are_kept_and_named_up_to_a_bound_and_the_rest_counted() {
        let (kept, omitted) = keep_unrecorded(paths(UNRECORDED_KEPT + 7));
        assert_eq!((kept.len(), omitted), (UNRECORDED_KEPT, 7));
        assert_eq!(keep_unrecorded(paths(3)).1, 0);

        let message = unrecorded_message(&paths(12));
        assert!(
            message.starts_with("its snapshot does not hold 12 path(s)"),
            "{message}"
        );
        assert!(message.contains("docs/000009.GIT") && !message.contains("docs/000010.GIT"));
        assert!(message.ends_with("; and 2 more"), "{message}");
        assert!(!unrecorded_message(&paths(2)).contains("more"));
    }
}

impl Attempt {
    /// A new attempt, open since `at`, with no number yet: [`super::transition::apply`] gives it
    /// the stage's next when it starts it.
    pub(super) fn open(
        actor: String,
        dir: String,
        cleared_env: Vec<String>,
        fallback_from: Option<FallbackFrom>,
        at: Timestamp,
    ) -> Attempt {
        Attempt {
            n: 0,
            actor,
            outcome: None,
            cause: None,
            started_at: at,
            ended_at: None,
            duration_ms: None,
            exit_code: None,
            signal: None,
            usage: None,
            error: None,
            exec_error: false,
            coverage: None,
            dir,
            snapshot: None,
            cleared_env,
            usage_source: None,
            agent: None,
            fallback_from,
            hook_blocks: None,
            unrecorded: Vec::new(),
            unrecorded_omitted: 0,
            checks: Vec::new(),
            violations: Vec::new(),
        }
    }

    pub fn resumed(&self) -> bool {
        is_resumed(self.n)
    }

    pub fn is_open(&self) -> bool {
        self.outcome.is_none()
    }
}

/// One stage of a run: the pipeline entry fixed at creation, and every attempt at it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Stage {
    pub name: String,
    /// The actor the pipeline assigns (`.baton.yml`, the plan, `run --actor`); an attempt may
    /// have another (`resume --actor`), recorded on the attempt.
    pub configured_actor: String,
    /// The stage passes the coverage gate before it may succeed.
    pub gated: bool,
    /// The actors `fallback:` hands the stage to when an attempt ends rate limited.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallback: Vec<String>,
    pub attempts: Vec<Attempt>,
}

impl Stage {
    /// `pending` before any attempt, `running` while the latest is open, else how it ended.
    pub fn status(&self) -> StageStatus {
        match self.attempts.last() {
            None => StageStatus::Pending,
            Some(a) => a.outcome.map_or(StageStatus::Running, StageStatus::from),
        }
    }

    /// The actor of the latest attempt, or the configured one before any attempt.
    pub fn actor(&self) -> &str {
        self.attempts
            .last()
            .map_or(&self.configured_actor, |a| &a.actor)
    }

    /// The number the next attempt of this stage gets: the one place attempts are numbered.
    pub fn next_attempt(&self) -> u32 {
        u32::try_from(self.attempts.len()).map_or(u32::MAX, |n| n.saturating_add(1))
    }

    pub fn policy(&self) -> StagePolicy {
        StagePolicy {
            stage: self.name.clone(),
            actor: self.configured_actor.clone(),
            gated: self.gated,
            fallback: self.fallback.clone(),
        }
    }
}
