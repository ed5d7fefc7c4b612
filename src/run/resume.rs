//! Before a resumed run is driven again: refuse what there is nothing to resume, record the
//! attempt a crashed driver left open, check the actor the resumed stage may switch to, and
//! make sure the run's worktree is the one it was (re-creating it only when asked).

use std::fmt;
use std::path::Path;

use crate::config::Config;
use crate::git::Repo;
use crate::run::DriveError;
use crate::state::transition::Event;
use crate::state::{RunState, RunStatus};

use super::RunError;
use super::note::Note as Said;
use super::session::Session;

pub struct PrepareOptions<'a> {
    /// `(stage, actor)`: the actor for the resumed attempt of that stage.
    pub actor: Option<&'a (String, String)>,
    /// Re-create a missing worktree from the run's branch and last snapshot.
    pub recreate_worktree: bool,
}

/// What preparing the resume did on the way, for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeNote {
    /// Processes a crashed attempt's actor left running in the worktree were stopped.
    StoppedLeftovers(usize),
    /// The crashed driver's open attempt was recorded as interrupted (crash).
    RecordedCrash,
    RecreatedWorktree {
        worktree: String,
        branch: String,
    },
    /// The latest attempt's work was not recorded; the worktree can be now, and the resumed
    /// attempt's snapshot will hold it.
    Unrecorded {
        stage: String,
        n: u32,
    },
    /// The latest attempt's snapshot, which the worktree was made from, lacks these paths.
    PartlyRecorded {
        stage: String,
        n: u32,
        paths: Vec<crate::state::UnrecordedPath>,
    },
}

impl fmt::Display for ResumeNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResumeNote::StoppedLeftovers(n) => write!(
                f,
                "stopped {n} process(es) the crashed attempt left running in the worktree"
            ),
            ResumeNote::RecordedCrash => write!(
                f,
                "the previous process driving this run died; its attempt is recorded as interrupted (crash)"
            ),
            ResumeNote::RecreatedWorktree { worktree, branch } => write!(
                f,
                "re-created the worktree {worktree} from {branch} and the last attempt's snapshot"
            ),
            ResumeNote::Unrecorded { stage, n } => write!(
                f,
                "the work of attempt {n} of stage `{stage}` was not recorded; it is still in the \
                 worktree, and the attempt that starts now records it"
            ),
            ResumeNote::PartlyRecorded { stage, n, paths } => {
                let named: Vec<String> = paths
                    .iter()
                    .map(|p| format!("{} ({})", p.path, p.reason))
                    .collect();
                write!(
                    f,
                    "the snapshot of attempt {n} of stage `{stage}` does not hold {} path(s) git \
                     could not record, which only the worktree that attempt ran in has: {}",
                    paths.len(),
                    named.join("; ")
                )
            }
        }
    }
}

/// Prepares a run the session opened (checked resumable) for [`super::Driver::drive`]. Each
/// note goes to the session's sink as soon as it is true, so that it is shown even if a later
/// check fails.
pub fn prepare(
    repo: &Repo,
    config: &Config,
    session: &Session,
    state: &mut RunState,
    options: &PrepareOptions,
) -> Result<(), RunError> {
    let note = |note| session.sink().note(Said::Resumed(note));
    if state.status() == RunStatus::Running {
        recover_crash(repo, session, state, &note)?;
    }
    let next = state.next_stage().map(|i| state.stages()[i].name.clone());
    if let Some((stage, actor)) = options.actor {
        if next.as_deref() != Some(stage.as_str()) {
            return Err(RunError::Drive(DriveError::NotTheResumedStage {
                stage: stage.clone(),
                next,
            }));
        }
        super::create::require_configured_actor(config, actor)?;
    }
    if options.recreate_worktree && !Path::new(&state.worktree).exists() {
        super::lifecycle::recreate_worktree(repo, state)?;
        note(ResumeNote::RecreatedWorktree {
            worktree: state.worktree.clone(),
            branch: state.branch.clone(),
        });
    }
    super::check_worktree(repo, state)?;
    if let Some((stage, n)) = super::unrecorded::check_recordable(repo, state)? {
        note(ResumeNote::Unrecorded { stage, n });
    }
    if let Some((stage, n, paths)) = super::unrecorded::latest_partial(state) {
        note(ResumeNote::PartlyRecorded { stage, n, paths });
    }
    Ok(())
}

/// The caller holds the lock, so whoever left the run running is gone. Its work is still in the
/// worktree: record it as the crashed attempt's snapshot before anything else runs. What the
/// dead driver's actor left running would keep editing the worktree under the resumed attempt:
/// stop it first.
fn recover_crash(
    repo: &Repo,
    session: &Session,
    state: &mut RunState,
    note: &dyn Fn(ResumeNote),
) -> Result<(), RunError> {
    let open = state.open_attempt().map(|(i, a)| {
        let stage = state.stages()[i].name.clone();
        let dir = state.attempt_dir_in(session.dir(), &stage, a);
        (stage, a.n, dir)
    });
    let mut snapshot = None;
    let mut hook_blocks = None;
    if let Some((stage, n, dir)) = open {
        let dir = dir?;
        // The Stop hook counted its blocks in the attempt's own file; a crash is one more way
        // the attempt ends, and its record keeps the count.
        hook_blocks = super::agent_side::stop_hook_blocks(&dir);
        let killed = crate::exec::kill_leftovers(
            &dir.join(super::ATTEMPT_TOKEN),
            &dir.join(super::ACTOR_PID),
            Path::new(&state.worktree),
            super::GRACE,
        )?;
        if killed > 0 {
            note(ResumeNote::StoppedLeftovers(killed));
        }
        snapshot = super::snapshot_for(repo, state, &stage, n, session.sink());
    }
    let (snapshot, unrecorded) = match snapshot {
        Some((commit, paths)) => (Some(commit), paths),
        None => (None, Vec::new()),
    };
    let found = Event::CrashFound {
        snapshot,
        hook_blocks,
        unrecorded,
    };
    session.commit(state, found)?;
    note(ResumeNote::RecordedCrash);
    Ok(())
}
