//! The `hint:` lines of the errors whose next step can be a git-baton command (a run's, an
//! agent-side command's, `verify`'s, the demo's, and git's internal errors): chosen here because
//! only the command layer knows the command line. The errors themselves say what went wrong,
//! and nothing about which command to type.

use crate::demo::DemoError;
use crate::git::GitError;
use crate::run::RunError;
use crate::run::agent_side::AgentSideError;
use crate::run::{CreateError, DriveError, HistoryError, SyncError, WorktreeError};
use crate::state::transition::TransitionError;
use crate::verify::VerifyError;

/// What to do next after `err`, for its variant.
pub(super) fn run_hints(err: &RunError) -> Vec<String> {
    let hint = match err {
        RunError::Git(err) => git_hint(err),
        RunError::Plan(err) => err.hint.clone(),
        RunError::Leftovers(err) => err.hint(),
        RunError::Config(err) => err.hint(),
        RunError::Transition(
            TransitionError::NotInReview { run, .. } | TransitionError::NothingToResume { run, .. },
        ) => Some(format!("see `git baton status {run}`")),
        RunError::Transition(TransitionError::AlreadyHeld { run, .. }) => Some(format!(
            "`git baton release {run}` ends the hold; `git baton status {run}` shows it"
        )),
        RunError::Transition(TransitionError::NotHeld { run }) => Some(format!(
            "cycle may take it already; `git baton hold {run}` keeps cycle away from it"
        )),
        RunError::Transition(TransitionError::Settled { run, status, .. }) => Some(format!(
            "a run in {status} has nothing left for cycle or resume to do; see `git baton \
             status {run}`"
        )),
        RunError::Transition(TransitionError::LeaseHeld { lease, .. }) => Some(format!(
            "its driver renews the lease while it lives; once {} has passed without a \
             renewal, resuming takes the run over",
            lease.until
        )),
        RunError::NotFinished { run, worktree, .. } => Some(format!(
            "`git baton clean --force {run}` removes it anyway, with any uncommitted work in \
             {worktree}"
        )),
        RunError::Headless { run, .. } => Some(format!(
            "`git baton clean --force {run}` removes it; its worktree and branch, if any, stay \
             for `git baton doctor` to report"
        )),
        RunError::Store(_)
        | RunError::Io { .. }
        | RunError::PlanSnapshot { .. }
        | RunError::Transition(_)
        | RunError::Invalid(_)
        | RunError::NoBranch { .. }
        | RunError::Remove { .. }
        | RunError::CreateDir { .. } => None,
        RunError::BadPath(bad) => Some(format!(
            "the run's state.json was edited by something other than git-baton; put the \
             field back, or remove the run with `git baton clean --force {}`",
            bad.run
        )),
        RunError::Create(err) => create(err),
        RunError::Sync(err) => sync(err),
        RunError::Worktree(err) => return worktree(err),
        RunError::Drive(err) => drive(err),
        RunError::History(err) => history(err),
    };
    hint.into_iter().collect()
}

/// The hint of creating a run.
fn create(err: &CreateError) -> Option<String> {
    match err {
        CreateError::NoIdentity => Some(
            "git config --global user.name 'Your Name' && git config --global user.email you@example.com"
                .into(),
        ),
        CreateError::NoPipeline => Some(
            "for example:\n\nactors:\n  agent: { command: [my-agent, \"{prompt_file}\"] }\n\
             pipeline:\n  - { stage: executor, actor: agent, gate: coverage }"
                .into(),
        ),
        CreateError::UnknownPlanStage { known, .. } => {
            Some(format!("configured stages: {}", known.join(", ")))
        }
        CreateError::NoTargets { .. } => {
            Some("list the paths the work must touch under `targets:`".into())
        }
        CreateError::IgnoredTarget(ignored) => Some(ignored.hint()),
        CreateError::Ungated { .. } => Some(
            "add `gate: coverage` to the stage that does the work in .baton.yml's `pipeline`"
                .into(),
        ),
        CreateError::UnknownRunStage { known, .. } => {
            Some(format!("the run's stages: {}", known.join(", ")))
        }
        CreateError::UnknownActor { known, .. } => {
            Some(format!("configured actors: {}", known.join(", ")))
        }
        CreateError::KeyConflict { .. } => {
            Some("use another --key for another plan, or the same plan to get that run back".into())
        }
        CreateError::ReadPlan { .. }
        | CreateError::PlanNotUtf8 { .. }
        | CreateError::Injected { .. } => None,
    }
}

/// The hints of a run's worktree; a stale mapping gives those of what made it stale.
fn worktree(err: &WorktreeError) -> Vec<String> {
    let repair = |run: &str, worktree: &str| {
        format!(
            "`git worktree repair {worktree}` re-links a moved worktree; otherwise move it away \
             and run `git baton resume {run} --recreate-worktree`"
        )
    };
    let hint = match err {
        WorktreeError::Stale(inner) => return run_hints(inner),
        WorktreeError::NotAWorktree { run, worktree, .. }
        | WorktreeError::NotRegistered { run, worktree } => Some(repair(run, worktree)),
        WorktreeError::WorktreeMissing { run, branch, .. } => Some(format!(
            "`git baton resume {run} --recreate-worktree` rebuilds it from branch {branch} and \
             the last attempt's snapshot"
        )),
        WorktreeError::WrongBranch {
            worktree, branch, ..
        } => Some(format!(
            "put it back on the run's branch with `git -C {worktree} switch {branch}`"
        )),
        WorktreeError::BaseNotInHistory { run, branch, .. } => Some(format!(
            "the branch was rewritten; restore it from `git reflog {branch}`, or remove the \
             run with `git baton clean --force {run}`"
        )),
        WorktreeError::WorktreeNotRemoved {
            run,
            worktree,
            source,
        } => {
            let mut hints: Vec<String> = git_hint(source).into_iter().collect();
            hints.push(format!(
                "{worktree} holds uncommitted changes; `git baton clean --force {run}` removes \
                 them too"
            ));
            return hints;
        }
        WorktreeError::WorktreeHoldsWork { run, .. } => Some(format!(
            "commit them on the run's branch, or `git baton clean --force {run}` removes them \
             too"
        )),
        WorktreeError::WorktreeExists { .. } => {
            Some("move it away first if it is not the run's worktree".into())
        }
        WorktreeError::BranchInUse { .. } | WorktreeError::BranchGone { .. } => None,
    };
    hint.into_iter().collect()
}

/// The hint of driving or judging an attempt.
fn drive(err: &DriveError) -> Option<String> {
    match err {
        DriveError::NotDriven { run, .. } | DriveError::DidNotStop { run, .. } => {
            Some(format!("see `git baton status {run}`"))
        }
        DriveError::NotTheResumedStage { .. } => Some(
            "the RunState's pipeline is authoritative; only the actor of the stage being \
             resumed may change"
                .into(),
        ),
        DriveError::AttemptDirExists { run, path, .. } => Some(format!(
            "see what it holds, remove it (`rm -r {}`), then run `git baton resume {run}`",
            path.display()
        )),
        DriveError::UnrecordedAttempt {
            run,
            worktree,
            remote: None,
            ..
        } => Some(format!(
            "the work is still in {worktree}: remove or rename what the attempt's error names \
             (`git baton status {run}`), then `git baton resume {run}`, whose attempt records it"
        )),
        DriveError::UnrecordedAttempt {
            run,
            remote: Some(remote),
            ..
        } => Some(format!(
            "the work is only in the worktree of the machine that ran the attempt: resume the \
             run there (`git baton resume {run}`), then `git baton push {run}`, and fetch from \
             {remote} again"
        )),
        DriveError::Unrecordable { run, .. } => Some(format!(
            "remove or rename what git refuses in the worktree (named above), then run \
             `git baton resume {run}` again"
        )),
        DriveError::RecordFileTooLarge { .. } => Some(
            "state.json stays as it is; `git baton doctor` reports the record lagging it"
                .to_string(),
        ),
        DriveError::DerivedTargets { .. } | DriveError::BadRecord { .. } => None,
        DriveError::SnapshotChanged { run, .. } => Some(format!(
            "something changed it after creation; `git log -p refs/baton/runs/{run}/record -- \
             plan.md` shows each version the run's record holds"
        )),
        DriveError::GateFails { run, .. } => Some(format!(
            "`git baton review {run}` shows the work against the plan's targets: a run is \
             finished only when the gate passes on what its attempts recorded"
        )),
        DriveError::NoFinalSnapshot { run, .. } => Some(format!(
            "the work is still in the run's worktree; `git baton status {run}` shows its \
             attempts"
        )),
    }
}

/// The hint of syncing with a remote.
fn sync(err: &SyncError) -> Option<String> {
    match err {
        SyncError::LostRace { run, remote, .. } => Some(format!(
            "`git baton fetch --remote {remote}` brings the newer record; `git baton status \
             {run}` then says who drives the run"
        )),
        SyncError::LeaseExpired { run } => Some(format!(
            "once the remote is in reach, `git baton fetch` and `git baton status {run}` say \
             who drives it; `git baton resume {run}` continues it if nobody does"
        )),
        SyncError::Diverged { run, .. } => Some(format!(
            "two machines drove the run at once; `git baton status {run}` shows this clone's \
             record, `git baton fetch` the remote's"
        )),
        SyncError::Behind { run, .. } => Some(format!(
            "`git baton resume {run}` or `git baton finish {run}` brings this clone up to date first"
        )),
        SyncError::UnrecordedWork { run, worktree, .. } => Some(format!(
            "the remote's newer record would replace it: move that work out of {worktree} \
             first; or, to keep this clone's run as it is, leave the remote's alone \
             (`git baton status {run}` shows both)"
        )),
        SyncError::IgnoredInTheWay { worktree, .. } => Some(format!(
            "move those files out of {worktree} (or stop ignoring them), then run the command \
             again; nothing was changed"
        )),
        SyncError::BranchConflict { branch, remote, .. } => Some(format!(
            "merge {remote}/{branch} into {branch} (or the other way round) first; git-baton \
             never moves a branch backwards"
        )),
        SyncError::BadRemoteRecord { .. } => None,
        SyncError::UntrustedRecord { run, remote, .. } => Some(format!(
            "whoever can push to {remote} wrote it, not git-baton, and nothing of it was \
             taken here; a run only {remote} has is removed there with `git baton clean \
             {run} --remote={remote}`"
        )),
    }
}

/// The hint of the record of attempts.
fn history(err: &HistoryError) -> Option<String> {
    match err {
        HistoryError::NoStage { known, .. } => Some(format!("its stages: {}", known.join(", "))),
        HistoryError::NoAttempt { count, .. } => Some(format!("it has {count} attempt(s)")),
        HistoryError::NoAttempts { .. } | HistoryError::NoSnapshot { .. } => None,
    }
}

/// What to do next after a git error: git's own words, or for an internal error (a bug of
/// git-baton's, not of the repository) the command that checks the repository and the runs.
pub(super) fn git_hint(err: &GitError) -> Option<String> {
    match err {
        GitError::Internal { .. } => Some(
            "this is a bug in git-baton, not in the repository: `git baton doctor` checks the \
             repository and the runs; please report the error line above"
                .into(),
        ),
        _ => err.hint(),
    }
}

/// What to do next after an agent-side command failed, for its variant.
pub(super) fn agent_side_hints(err: &AgentSideError) -> Vec<String> {
    match err {
        AgentSideError::Git(err) => git_hint(err).into_iter().collect(),
        AgentSideError::NotInRun { .. } => vec![
            "these commands are for the agent of a run, in the run's worktree (`git baton status` names it)".into(),
        ],
        AgentSideError::Stale { run } => vec![format!(
            "the attempt was cut off; `git baton resume {run}` records that and starts a new one"
        )],
        AgentSideError::NoOpenAttempt { run, .. } => vec![format!(
            "reasons are recorded by the agent while its attempt runs; resume the run with `git baton resume {run}`"
        )],
        AgentSideError::UnknownTarget {
            suggestion, targets, ..
        } => match suggestion {
            Some(s) => vec![format!("did you mean `{s}`?")],
            None => vec![format!("the targets: {}", targets.join(", "))],
        },
        AgentSideError::BadReason { .. } => vec![
            "say specifically why this target needed no change, e.g. \"already states the new rule in section 3\"".into(),
        ],
        AgentSideError::Duplicate { .. } => {
            vec!["one reason per target and attempt; `git baton check` shows what is recorded".into()]
        }
        _ => Vec::new(),
    }
}

/// What to do next after a failed `verify`, for its variant.
pub(super) fn verify_hints(err: &VerifyError) -> Vec<String> {
    let hint = match err {
        VerifyError::Git(err) => git_hint(err),
        VerifyError::Config(err) => err.hint(),
        VerifyError::Plan(err) => err.hint.clone(),
        VerifyError::Evidence(_) => {
            Some("see docs/plan-format.md#evidence for the evidence format".into())
        }
        VerifyError::EvidenceTooLarge { .. } => Some(
            "an evidence file holds one entry per target, with a reason of a sentence or two; \
             see docs/plan-format.md#evidence-files"
                .into(),
        ),
        VerifyError::PlansDirMissing {
            dir,
            suggestion: Some(found),
            ..
        } => Some(format!(
            "did you mean `{found}`? git paths are case-sensitive; the gate reads plans_dir \
             from .baton.yml at the merge base, so correct `{dir}` on the base branch"
        )),
        VerifyError::PlansDirMissing { dir, .. } => Some(format!(
            "the gate reads plans_dir from .baton.yml at the merge base: create `{dir}/` on \
             the base branch (an empty `{dir}/.gitkeep` will do), set plans_dir there, or \
             name the plans to check"
        )),
        VerifyError::TrailerPlanPath { .. } => Some(
            "a Baton-Plan trailer names a plan by its repo-relative path, as `git baton \
             finish` writes it (`Baton-Plan: plans/<name>.md`)"
                .into(),
        ),
        VerifyError::TrailerPlanMissing { .. } => Some(
            "commit the plan to the base branch before the run, or correct the trailer; the \
             gate checks the plan a run branch names and never skips it"
                .into(),
        ),
        VerifyError::NotUtf8 { .. } | VerifyError::ReadNamed { .. } | VerifyError::Read { .. } => {
            None
        }
    };
    hint.into_iter().collect()
}

/// What to do next after a failed demo, for its variant.
pub(super) fn demo_hints(err: &DemoError) -> Vec<String> {
    let hint = match err {
        DemoError::Deviated { removed: true, .. } => {
            "run `git baton demo --keep` to keep the demo repository and look at the run"
        }
        DemoError::TempDir { .. } => "set TMPDIR to a writable directory",
        DemoError::NoGit(err) if err.kind() == std::io::ErrorKind::NotFound => {
            "the demo needs git on PATH"
        }
        _ => return Vec::new(),
    };
    vec![hint.to_string()]
}
