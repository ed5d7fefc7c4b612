//! The record of a run's attempts, read back: which attempt a command means, what one attempt
//! changed compared with the snapshot before it, what every attempt changed for the review, and
//! what an actor printed.
//!
//! Every attempt ends with a snapshot commit of the worktree, so "what did this attempt change"
//! is a diff between two snapshots (or the base, for the first), whatever happened to the
//! worktree since. What is read back fills the views of [`crate::report`], which render it.

use std::path::Path;

use crate::git::{CONTENTS_LIMIT, Repo, Scope};
use crate::report::diff::{Against, AttemptDiff, FileChange};
use crate::report::log::Logs;
use crate::report::review::{AttemptChanges, Stat, stat};
use crate::run::HistoryError;
use crate::state::{Attempt, RunState, Stage};

use super::RunError;

/// The attempt `--stage S --attempt N` names: by default the latest attempt of the latest stage
/// that ran. `--attempt N` alone means the gated stage's attempt N (the latest gated stage that
/// ran): the attempts worth numbering are those the gate judged, and "attempt 1" of a run that
/// went on to its reporter means the executor's first, not the reporter's.
pub fn pick_attempt<'a>(
    state: &'a RunState,
    stage: Option<&str>,
    n: Option<u32>,
) -> Result<(&'a Stage, &'a Attempt), RunError> {
    let run = &state.run_id.to_string();
    let stage = match stage {
        Some(name) => state.stage(name).map(|(_, s)| s).ok_or_else(|| {
            RunError::History(HistoryError::NoStage {
                run: run.clone(),
                stage: name.to_string(),
                known: state.stages().iter().map(|s| s.name.clone()).collect(),
            })
        })?,
        None => {
            let ran = || {
                state
                    .stages()
                    .iter()
                    .rev()
                    .filter(|s| !s.attempts.is_empty())
            };
            let gated = n.and_then(|_| ran().find(|s| s.gated));
            gated
                .or_else(|| ran().next())
                .ok_or_else(|| RunError::History(HistoryError::NoAttempts { run: run.clone() }))?
        }
    };
    let attempt = match n {
        Some(n) => stage.attempts.iter().find(|a| a.n == n),
        None => stage.attempts.last(),
    };
    let attempt = attempt.ok_or_else(|| {
        RunError::History(HistoryError::NoAttempt {
            run: run.clone(),
            stage: stage.name.clone(),
            n,
            count: stage.attempts.len(),
        })
    })?;
    Ok((stage, attempt))
}

/// The attempt `stage`/`n` pick (see [`pick_attempt`]) against the attempt before it, in the
/// order the attempts ran; with `contents`, each file's contents on both sides.
pub fn attempt_diff(
    repo: &Repo,
    state: &RunState,
    stage: Option<&str>,
    n: Option<u32>,
    contents: bool,
) -> Result<AttemptDiff, RunError> {
    // Attempts in the order they ran: stages run one after another.
    let order: Vec<(&str, &Attempt)> = state
        .stages()
        .iter()
        .flat_map(|s| s.attempts.iter().map(move |a| (s.name.as_str(), a)))
        .collect();
    let (stage, attempt) = pick_attempt(state, stage, n)?;
    let position = order
        .iter()
        .position(|(s, a)| *s == stage.name && a.n == attempt.n)
        .expect("the picked attempt is one of the run's attempts");
    let Some(snapshot) = attempt.snapshot else {
        return Err(RunError::History(HistoryError::NoSnapshot {
            stage: stage.name.clone(),
            n: attempt.n,
        }));
    };
    let previous = order[..position]
        .iter()
        .rev()
        .find_map(|(s, a)| a.snapshot.map(|id| (*s, a, id)));
    let new = snapshot;
    let (old, against) = match previous {
        Some((s, a, old)) => (
            old,
            Against::Attempt {
                stage: s.to_string(),
                n: a.n,
                actor: a.actor.clone(),
            },
        ),
        None => (state.base, Against::Base(state.base.to_string())),
    };
    let mut files = Vec::new();
    for path in repo.tree_changes(old, new, &Scope::All)? {
        let (before, after) = if contents {
            (
                repo.contents_at(old, &path, CONTENTS_LIMIT)?,
                repo.contents_at(new, &path, CONTENTS_LIMIT)?,
            )
        } else {
            (None, None)
        };
        files.push(FileChange {
            path,
            before,
            after,
        });
    }
    Ok(AttemptDiff {
        stage: stage.name.clone(),
        attempt: attempt.clone(),
        against,
        files,
    })
}

/// What the review shows besides the RunState: each attempt with the paths it changed, and the
/// diffstat of the whole work.
pub struct ReviewData {
    pub attempts: Vec<AttemptChanges>,
    pub stats: Vec<Stat>,
    /// What the diffstat compares the base with: `worktree now`, or the `branch` of a run whose
    /// worktree is gone.
    pub source: &'static str,
}

pub fn review(repo: &Repo, state: &RunState) -> Result<ReviewData, RunError> {
    let base = state.base;

    let mut attempts = Vec::new();
    let mut previous = base;
    for stage in state.stages() {
        for a in &stage.attempts {
            let snapshot = a.snapshot;
            let paths = match snapshot {
                Some(id) => {
                    let paths = repo.tree_changes(previous, id, &Scope::All)?;
                    previous = id;
                    Some(paths)
                }
                None => None,
            };
            attempts.push(AttemptChanges {
                stage: stage.name.clone(),
                n: a.n,
                actor: a.actor.clone(),
                outcome: a.outcome.map_or("running", |o| o.name()).to_string(),
                duration_ms: a.duration_ms,
                paths,
            });
        }
    }

    let mut stats = Vec::new();
    let mut source = "worktree now";
    let worktree = Path::new(&state.worktree);
    if let Ok(wt) = Repo::open_worktree(worktree) {
        for path in wt.worktree_changes(base, &Scope::All)? {
            let before = repo.contents_at(base, &path, CONTENTS_LIMIT)?;
            // Bounded, and never opened when it is no file (a named pipe would block the read).
            let after = crate::git::worktree_contents(worktree, &path, CONTENTS_LIMIT)?;
            stats.push(stat(&path, before.as_ref(), after.as_ref()));
        }
    } else if let Some(tip) = repo.branch_tip(&state.branch)? {
        // A finished run's worktree is gone; its work is on the branch.
        source = "branch";
        for path in repo.tree_changes(base, tip, &Scope::All)? {
            let before = repo.contents_at(base, &path, CONTENTS_LIMIT)?;
            let after = repo.contents_at(tip, &path, CONTENTS_LIMIT)?;
            stats.push(stat(&path, before.as_ref(), after.as_ref()));
        }
    }
    Ok(ReviewData {
        attempts,
        stats,
        source,
    })
}

/// Where what an actor printed during an attempt is: its logs, read when shown.
pub fn logs(
    run_dir: &Path,
    state: &RunState,
    stage: &str,
    attempt: &Attempt,
) -> Result<Logs, RunError> {
    let dir = state.attempt_dir_in(run_dir, stage, attempt)?;
    Ok(Logs {
        stdout: dir.join("stdout.log"),
        stderr: dir.join("stderr.log"),
        dir,
    })
}
