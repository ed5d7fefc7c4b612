//! Runs that travel through a git remote: publishing a run's refs with a compare-and-swap,
//! fetching them, telling which side is ahead, and rebuilding a run another machine drove.
//!
//! A run's refs are its branch `refs/heads/baton/<id>`, its record
//! (`refs/baton/runs/<id>/record`, see [`super::record`]) and its attempt snapshots. `fetch`
//! copies a remote's into `refs/baton/remotes/<remote>/runs/<id>/…` and
//! `refs/remotes/<remote>/baton/<id>`: what this clone last saw there. A push sends every ref of
//! a run in one atomic push that the remote accepts only if each ref still holds what this clone
//! last saw; so of two machines that both saw the same record, exactly one can advance it.
//!
//! Publishing writes the new record commit first, pushes it, and only then moves anything local:
//! a lost race leaves this clone exactly as it was.

use std::collections::BTreeMap;
use std::path::Path;

use jiff::Timestamp;

use crate::config::Config;
use crate::git::{CommitId, Pushed, RefUpdate, Repo};
use crate::run::SyncError;
use crate::state::store::{self, Store};
use crate::state::{RunId, RunState};

use super::RunError;
pub use super::claims::{RemoteClaim, judge_remote};
use super::record::{self, record_ref, refs_prefix};

mod catch_up;
pub use catch_up::{CaughtUp, catch_up};

/// This clone, as catching up with a remote needs it: the repository, its runs, its
/// configuration (where worktrees go) and its main worktree.
pub struct Here<'a> {
    pub repo: &'a Repo,
    pub store: &'a Store,
    pub config: &'a Config,
    pub main_worktree: &'a Path,
}

/// Where the record of run `id` on `remote` is tracked.
pub fn tracking_record(remote: &str, id: &str) -> String {
    tracking_of(remote, &record_ref(id))
}

/// The remote-tracking name of a local ref of a run.
fn tracking_of(remote: &str, local: &str) -> String {
    match local.strip_prefix("refs/heads/") {
        Some(branch) => format!("refs/remotes/{remote}/{branch}"),
        None => local.replacen("refs/baton/", &format!("refs/baton/remotes/{remote}/"), 1),
    }
}

/// The refspecs that bring every run of `remote` into its tracking refs.
fn refspecs(remote: &str) -> Vec<String> {
    vec![
        format!("+refs/baton/runs/*:refs/baton/remotes/{remote}/runs/*"),
        format!("+refs/heads/baton/*:refs/remotes/{remote}/baton/*"),
    ]
}

/// How a run's record here stands against the one a remote held when last seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// The remote has no record of it.
    LocalOnly,
    /// Only the remote has it: `resume` rebuilds it here.
    RemoteOnly,
    UpToDate,
    /// This clone has saves the remote has not: `git baton push` publishes them.
    Ahead,
    /// The remote has saves this clone has not: `resume` and `finish` catch up first.
    Behind,
    /// Both advanced since they last agreed.
    Diverged,
}

impl Standing {
    pub fn name(self) -> &'static str {
        match self {
            Standing::LocalOnly => "local only",
            Standing::RemoteOnly => "remote only",
            Standing::UpToDate => "up to date",
            Standing::Ahead => "ahead",
            Standing::Behind => "behind",
            Standing::Diverged => "diverged",
        }
    }
}

/// How run `id`'s record here stands against `remote`'s.
pub fn sync_of(repo: &Repo, id: &str, remote: &str) -> Result<Standing, RunError> {
    let local = repo.ref_target(&record_ref(id))?;
    let theirs = repo.ref_target(&tracking_record(remote, id))?;
    Ok(compare(repo, local, theirs))
}

fn compare(repo: &Repo, local: Option<CommitId>, theirs: Option<CommitId>) -> Standing {
    match (local, theirs) {
        (_, None) => Standing::LocalOnly,
        (None, Some(_)) => Standing::RemoteOnly,
        (Some(l), Some(t)) if l == t => Standing::UpToDate,
        (Some(l), Some(t)) if repo.is_ancestor(t, l) => Standing::Ahead,
        (Some(l), Some(t)) if repo.is_ancestor(l, t) => Standing::Behind,
        _ => Standing::Diverged,
    }
}

/// The runs each remote has a record of, as last fetched: `(remote, id)`.
pub fn tracked_runs(repo: &Repo) -> Result<Vec<(String, RunId)>, RunError> {
    let mut runs = Vec::new();
    for (name, _) in repo.refs_under("refs/baton/remotes/")? {
        // Remote names may hold `/`: the run id is read from the end.
        let Some(rest) = name
            .strip_prefix("refs/baton/remotes/")
            .and_then(|rest| rest.strip_suffix("/record"))
        else {
            continue;
        };
        if let Some((remote, id)) = rest.rsplit_once("/runs/")
            && let Ok(id) = id.parse::<RunId>()
        {
            runs.push((remote.to_owned(), id));
        }
    }
    Ok(runs)
}

/// The RunState a remote's record of run `id` holds, as last fetched.
pub fn tracked_state(repo: &Repo, remote: &str, id: &str) -> Result<Option<RunState>, RunError> {
    let Some(commit) = repo.ref_target(&tracking_record(remote, id))? else {
        return Ok(None);
    };
    let limit = crate::run::record::read_limit("state.json");
    let Some(bytes) = repo.read_record_file_at(commit, "state.json", limit)? else {
        return Ok(None);
    };
    let state = store::parse(&bytes).map_err(|message| {
        RunError::Sync(SyncError::BadRemoteRecord {
            run: id.to_owned(),
            remote: remote.to_owned(),
            message,
        })
    })?;
    // A claim, shown or compared only once git-baton could have written it.
    super::claims::check_claim(id, remote, &state)?;
    Ok(Some(state))
}

/// Before a command changes a published run (or one only a remote has): fetch the remote and
/// bring the run here up to date with it. Returns the remote and what catching up did.
pub fn refresh(
    here: &Here,
    id: &RunId,
    tracked_on: Option<String>,
) -> Result<Option<(String, CaughtUp)>, RunError> {
    let remote = match tracked_on {
        Some(remote) => remote,
        None => match here.store.load(id)?.remote() {
            Some(remote) => remote.to_owned(),
            None => return Ok(None),
        },
    };
    fetch(here.repo, &remote)?;
    let caught = catch_up(here, id, &remote)?;
    Ok(Some((remote, caught)))
}

/// What `fetch` changed, per run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    New,
    Updated,
    Gone,
}

/// Fetches every run of `remote`; returns what changed, by run id.
pub fn fetch(repo: &Repo, remote: &str) -> Result<Vec<(String, Fetched)>, RunError> {
    let records = |repo: &Repo| -> Result<BTreeMap<String, CommitId>, RunError> {
        let prefix = format!("refs/baton/remotes/{remote}/runs/");
        Ok(repo
            .refs_under(&prefix)?
            .into_iter()
            .filter_map(|(name, id)| {
                let run = name.strip_prefix(&prefix)?.strip_suffix("/record")?;
                Some((run.to_owned(), id))
            })
            .collect())
    };
    let before = records(repo)?;
    repo.fetch(remote, &refspecs(remote), None)?;
    let after = records(repo)?;
    let mut changes = Vec::new();
    for (id, commit) in &after {
        match before.get(id) {
            None => changes.push((id.clone(), Fetched::New)),
            Some(old) if old != commit => changes.push((id.clone(), Fetched::Updated)),
            Some(_) => {}
        }
    }
    for id in before.keys().filter(|id| !after.contains_key(*id)) {
        changes.push((id.clone(), Fetched::Gone));
    }
    Ok(changes)
}

/// A run to publish: its directory, and the state to save there once the remote took it.
pub struct Publication<'a> {
    pub dir: &'a Path,
    pub state: &'a RunState,
}

/// Publishes runs to `remote` in one atomic push: a new record commit per run (its files with
/// the state given), the branch and every snapshot, each only if the remote still holds what
/// this clone last saw. Then, and only then, each state is saved and recorded here and the
/// tracking refs are moved. A lost race changes nothing here and names who advanced the run.
pub fn publish(repo: &Repo, remote: &str, runs: &[Publication]) -> Result<(), RunError> {
    // A run published as in review must pass its gate, judged again, on what it recorded.
    for run in runs {
        super::claims::check_verdict(repo, run.dir, run.state)?;
    }
    publish_within(repo, remote, runs, None)
}

/// [`publish`], with the network stopped at `deadline` (a [`crate::git::GitError::TimedOut`]):
/// for a driver whose lease ends, which must hear of a remote that hangs in time to stop.
pub fn publish_within(
    repo: &Repo,
    remote: &str,
    runs: &[Publication],
    deadline: Option<std::time::Instant>,
) -> Result<(), RunError> {
    let mut updates = Vec::new();
    let mut records = Vec::new();
    for run in runs {
        let id = run.state.run_id.as_str();
        let refname = record_ref(id);
        let parent = repo.ref_target(&refname)?;
        // The lease only says the remote has not moved since this clone last looked; a record
        // this clone has fetched but not taken (another machine's takeover, say) must not be
        // overwritten by a push that expects it.
        let theirs = repo.ref_target(&tracking_record(remote, id))?;
        let sync = compare(repo, parent, theirs);
        if matches!(
            sync,
            Standing::Behind | Standing::Diverged | Standing::RemoteOnly
        ) {
            return Err(RunError::Sync(SyncError::LostRace {
                run: id.to_owned(),
                remote: remote.to_owned(),
                by: advanced_by(repo, remote, std::slice::from_ref(run)),
            }));
        }
        let mut files = record::record_files(run.dir)?;
        files.retain(|(path, _)| path != "state.json");
        files.push(record::state_file(run.dir, run.state)?);
        files.sort();
        let message = format!("baton: run {id} is {}", run.state.status());
        // Dated by the state, as every record commit is: the same files on the same parent are
        // then the same commit, so a kill between this push and the local save below is mended
        // by the next save here making exactly the commit the remote already has.
        let seconds = run.state.updated_at().as_second();
        let (commit, _) = repo.write_record(&files, parent, &message, seconds)?;
        records.push((refname.clone(), commit, parent));

        let mut local = vec![(refname, Some(commit))];
        let branch = format!("refs/heads/{}", run.state.branch);
        if let Some(tip) = repo.branch_tip(&run.state.branch)? {
            local.push((branch, Some(tip)));
        }
        for (name, id) in repo.refs_under(&refs_prefix(id))? {
            if !name.ends_with("/record") {
                local.push((name, Some(id)));
            }
        }
        for (name, new) in local {
            let expected = repo.ref_target(&tracking_of(remote, &name))?;
            if name.starts_with("refs/heads/")
                && let (Some(theirs), Some(ours)) = (expected, new)
                && theirs != ours
                && !repo.is_ancestor(theirs, ours)
            {
                // The branch holds people's commits: it only ever moves forward. One the remote
                // has ahead of this clone stays as it is; one that went elsewhere is a conflict.
                if repo.is_ancestor(ours, theirs) {
                    continue;
                }
                return Err(RunError::Sync(SyncError::BranchConflict {
                    run: id.to_owned(),
                    branch: run.state.branch.clone(),
                    remote: remote.to_owned(),
                }));
            }
            if expected != new || name.ends_with("/record") {
                updates.push(RefUpdate {
                    name,
                    new,
                    expected,
                });
            }
        }
    }
    match repo.push_atomic(remote, &updates, deadline)? {
        Pushed::Done => {}
        Pushed::Rejected { .. } => {
            let run = runs
                .first()
                .map(|r| r.state.run_id.to_string())
                .unwrap_or_default();
            // What moved it: fetched now, for the message; this clone's runs stay as they were.
            let by = repo
                .fetch(remote, &refspecs(remote), deadline)
                .ok()
                .and_then(|()| advanced_by(repo, remote, runs));
            return Err(RunError::Sync(SyncError::LostRace {
                run,
                remote: remote.to_owned(),
                by,
            }));
        }
    }
    for (run, (refname, commit, parent)) in runs.iter().zip(&records) {
        store::save_in(run.dir, run.state)?;
        if Some(*commit) != *parent {
            repo.swap_ref(refname, *commit, *parent)?;
        }
    }
    let tracking: Vec<_> = updates
        .iter()
        .map(|u| (tracking_of(remote, &u.name), u.new))
        .collect();
    repo.set_refs(&tracking)?;
    Ok(())
}

/// Who holds the record the remote now has of the first of `runs` that moved there.
fn advanced_by(repo: &Repo, remote: &str, runs: &[Publication]) -> Option<String> {
    runs.iter().find_map(|run| {
        let theirs = tracked_state(repo, remote, &run.state.run_id).ok()??;
        if theirs == *run.state {
            return None;
        }
        Some(match theirs.lease() {
            Some(lease) => format!(
                "{} on {}, now {}",
                lease.holder,
                lease.host,
                theirs.status()
            ),
            None => match theirs.latest_attempt() {
                Some((stage, attempt)) => format!(
                    "attempt {} of stage {} by actor {}, now {}",
                    attempt.n,
                    theirs.stages()[stage].name,
                    attempt.actor,
                    theirs.status()
                ),
                None => format!("another clone, now {}", theirs.status()),
            },
        })
    })
}

/// Fetches `remote` and refuses, unless `force`, while another driver's lease on run `id` is in
/// force there: removing its record would pull the run from under that driver. A lease that
/// ends further out than one of `longest` (this clone's `lease:`) taken now is none
/// ([`crate::state::trust::lease_in_force`]), as when a driver takes the run over.
pub fn check_unleased(
    repo: &Repo,
    id: &RunId,
    remote: &str,
    force: bool,
    now: Timestamp,
    longest: std::time::Duration,
) -> Result<(), RunError> {
    fetch(repo, remote)?;
    // A record git-baton could not have written holds no lease that keeps anyone out.
    let theirs = match tracked_state(repo, remote, id) {
        Err(RunError::Sync(SyncError::UntrustedRecord { .. })) => None,
        theirs => theirs?,
    };
    if !force
        && let Some(theirs) = theirs
        && let Some(lease) = theirs.lease()
        && crate::state::trust::lease_in_force(
            lease,
            now,
            jiff::SignedDuration::try_from(longest).unwrap_or(jiff::SignedDuration::MAX),
        )
    {
        return Err(crate::state::TransitionError::LeaseHeld {
            run: id.clone(),
            lease: Box::new(lease.clone()),
        }
        .into());
    }
    Ok(())
}

/// Deletes run `id`'s record and snapshots on `remote` (never its branch: that holds the work),
/// in one atomic push that requires them to hold what this clone last saw (see
/// [`check_unleased`] for the lease). Returns whether the remote had any.
pub fn unpublish(repo: &Repo, id: &RunId, remote: &str) -> Result<bool, RunError> {
    let prefix = tracking_of(remote, &refs_prefix(id));
    let tracked = repo.refs_under(&prefix)?;
    if tracked.is_empty() {
        return Ok(false);
    }
    let updates: Vec<RefUpdate> = tracked
        .iter()
        .map(|(name, target)| RefUpdate {
            name: format!("{}{}", refs_prefix(id), &name[prefix.len()..]),
            new: None,
            expected: Some(*target),
        })
        .collect();
    if let Pushed::Rejected { .. } = repo.push_atomic(remote, &updates, None)? {
        return Err(RunError::Sync(SyncError::LostRace {
            run: id.to_string(),
            remote: remote.to_owned(),
            by: None,
        }));
    }
    let gone: Vec<_> = tracked.into_iter().map(|(name, _)| (name, None)).collect();
    repo.set_refs(&gone)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::tracking_of;

    #[test]
    fn every_ref_of_a_run_has_its_tracking_place() {
        assert_eq!(
            tracking_of("origin", "refs/heads/baton/abc"),
            "refs/remotes/origin/baton/abc"
        );
        assert_eq!(
            tracking_of("up", "refs/baton/runs/abc/attempts/executor-1"),
            "refs/baton/remotes/up/runs/abc/attempts/executor-1"
        );
    }
}
