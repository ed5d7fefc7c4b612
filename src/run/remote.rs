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
use crate::state::store::{self, Store};
use crate::state::{RunId, RunState};

use super::RunError;
pub use super::claims::{RemoteClaim, judge_remote};
use super::record::{self, record_ref, refs_prefix};

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
    let Some(bytes) = repo.read_file_at(commit, "state.json")? else {
        return Ok(None);
    };
    let state = store::parse(&bytes).map_err(|message| RunError::BadRemoteRecord {
        run: id.to_owned(),
        remote: remote.to_owned(),
        message,
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
            return Err(RunError::LostRace {
                run: id.to_owned(),
                remote: remote.to_owned(),
                by: advanced_by(repo, remote, std::slice::from_ref(run)),
            });
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
                return Err(RunError::BranchConflict {
                    run: id.to_owned(),
                    branch: run.state.branch.clone(),
                    remote: remote.to_owned(),
                });
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
            return Err(RunError::LostRace {
                run,
                remote: remote.to_owned(),
                by,
            });
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
        Err(RunError::UntrustedRecord { .. }) => None,
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
        return Err(RunError::LostRace {
            run: id.to_string(),
            remote: remote.to_owned(),
            by: None,
        });
    }
    let gone: Vec<_> = tracked.into_iter().map(|(name, _)| (name, None)).collect();
    repo.set_refs(&gone)?;
    Ok(true)
}

/// What bringing a run up to date with a remote did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaughtUp {
    /// Nothing to do: the remote has no newer record.
    Nothing,
    /// The run existed here and took the remote's newer record and work.
    Updated,
    /// The run did not exist here and was rebuilt from the remote.
    Adopted,
}

/// Brings run `id` up to date with `remote`'s record as last fetched: a run this clone does not
/// have is rebuilt (run directory, branch, worktree with the latest snapshot's files), and a run
/// whose record here is an ancestor of the remote's takes the newer one, its worktree replaced
/// when it holds nothing the records do not. Diverged records are refused. The caller must not
/// hold the run's lock; none may be held by anyone else either.
pub fn catch_up(here: &Here, id: &RunId, remote: &str) -> Result<CaughtUp, RunError> {
    let (repo, store) = (here.repo, here.store);
    let Some(theirs) = repo.ref_target(&tracking_record(remote, id))? else {
        return Ok(CaughtUp::Nothing);
    };
    let exists = store.run_dir(id).join("state.json").exists();
    if !exists {
        adopt(here, id, remote, theirs)?;
        return Ok(CaughtUp::Adopted);
    }
    let local = repo.ref_target(&record_ref(id))?;
    match compare(repo, local, Some(theirs)) {
        Standing::UpToDate | Standing::Ahead | Standing::LocalOnly => Ok(CaughtUp::Nothing),
        Standing::Diverged => Err(RunError::Diverged {
            run: id.to_string(),
            remote: remote.to_owned(),
        }),
        Standing::Behind | Standing::RemoteOnly => {
            let lock = store.lock(id, "git baton (catching up with a remote)")?;
            let ours = store.load(id)?;
            let worktree = Path::new(&ours.worktree);
            let kept = latest_work(&ours, repo.branch_tip(&ours.branch)?);
            // Read and checked before any file moves: a record that names another run or
            // branch is refused while the worktree is still as it was.
            let mine = Some((&ours, lock.dir()));
            let record = RemoteRecord::read(here, id, remote, theirs, mine)?;
            super::unrecorded::refuse_handoff(&record.state, Some(remote))?;
            let their_tip =
                repo.ref_target(&format!("refs/remotes/{remote}/{}", record.state.branch))?;
            let newest = latest_work(&record.state, their_tip);
            let in_place = worktree.exists();
            if in_place {
                // The files first, while everything else still says where they came from: a
                // kill after this leaves a worktree holding exactly the newer work, which the
                // next catch-up recognises.
                super::open_run_worktree(repo, &ours)?;
                // One snapshot of the worktree as it is (tracked and untracked files, not
                // ignored ones), compared with both candidates.
                let message = format!("baton: run {id}, compared before catching up");
                let (now, _) = repo.commit_worktree(
                    worktree,
                    kept,
                    &message,
                    crate::git::Identity::Baton,
                    true,
                )?;
                let same = |commit| {
                    repo.tree_changes(commit, now, &crate::git::Scope::All)
                        .map(|paths| paths.is_empty())
                };
                if !same(newest)? {
                    let unrecorded = repo.tree_changes(kept, now, &crate::git::Scope::All)?;
                    if !unrecorded.is_empty() {
                        return Err(RunError::UnrecordedWork {
                            run: id.to_string(),
                            worktree: ours.worktree.clone(),
                            paths: unrecorded,
                        });
                    }
                    super::in_the_way::check(repo, id.as_str(), worktree, kept, newest)?;
                    repo.move_files(worktree, kept, newest)?;
                }
            }
            let state = record.take(repo, lock.dir(), id, remote, local, &ours.worktree)?;
            if in_place {
                repo.reset_index(worktree)?;
            } else {
                super::lifecycle::recreate_worktree(repo, &state)?;
            }
            Ok(CaughtUp::Updated)
        }
    }
}

/// The commit that holds a run's latest work: its last attempt snapshot, else its branch tip
/// (`tip`), else its base.
fn latest_work(state: &RunState, tip: Option<CommitId>) -> CommitId {
    state
        .attempts()
        .filter_map(|a| a.snapshot)
        .next_back()
        .or(tip)
        .unwrap_or(state.base)
}

/// Rebuilds run `id`, which this clone does not have, from `remote`'s record `theirs`.
fn adopt(here: &Here, id: &RunId, remote: &str, theirs: CommitId) -> Result<(), RunError> {
    let (repo, store) = (here.repo, here.store);
    let exclude = super::worktree_root::check(repo, here.main_worktree, here.config)?;
    let _creating = store.creation_lock()?;
    let worktree = super::create::worktree_path(here.main_worktree, &here.config.worktree_root, id);
    if worktree.exists() {
        return Err(RunError::WorktreeExists {
            run: id.to_string(),
            worktree: worktree.display().to_string(),
        });
    }
    let staging = store.staging_dir(id);
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|source| RunError::CreateDir {
        path: staging.clone(),
        source,
    })?;
    let local = repo.ref_target(&record_ref(id))?;
    let record = RemoteRecord::read(here, id, remote, theirs, None)?;
    super::unrecorded::refuse_handoff(&record.state, Some(remote))?;
    let state = record.take(
        repo,
        &staging,
        id,
        remote,
        local,
        &worktree.display().to_string(),
    )?;
    if let Some(pattern) = &exclude {
        super::worktree_root::exclude(repo, here.main_worktree, pattern)?;
    }
    let lock = store::RunLock::acquire_in(&staging, id, "git baton resume", store.clock())?;
    let dir = store.run_dir(id);
    std::fs::rename(&staging, &dir).map_err(|source| RunError::Io {
        action: "publish",
        path: dir.clone(),
        source,
    })?;
    super::lifecycle::recreate_worktree(repo, &state)?;
    drop(lock);
    Ok(())
}

/// A remote's record of a run, read within bounds and checked: its files and the RunState
/// they hold.
struct RemoteRecord {
    commit: CommitId,
    files: Vec<crate::git::RecordFile>,
    state: RunState,
}

impl RemoteRecord {
    /// Reads `remote`'s record `commit` of run `id`, refusing one that names another run or a
    /// branch other than the run's, whose base commit this repository lacks, or that breaks an
    /// invariant of creation (`claims::check_record`; against `ours`, this clone's state of the
    /// run and its directory, when it has one).
    fn read(
        here: &Here,
        id: &RunId,
        remote: &str,
        commit: CommitId,
        ours: Option<(&RunState, &Path)>,
    ) -> Result<Self, RunError> {
        let repo = here.repo;
        // Files are bounded when recorded (`record::read_limit`); a run holds its run files and a
        // handful per attempt, for a few thousand attempts at most.
        let files = repo.read_record(commit, record::read_limit, 100_000)?;
        let bad = |message: String| RunError::BadRemoteRecord {
            run: id.to_string(),
            remote: remote.to_owned(),
            message,
        };
        let state_bytes = files
            .iter()
            .find(|(path, _)| path == "state.json")
            .map(|(_, bytes)| bytes.as_slice())
            .ok_or_else(|| bad("it has no state.json".into()))?;
        let state = store::parse(state_bytes).map_err(bad)?;
        // A record is data from elsewhere: it may only name its own run and that run's branch,
        // never a branch of this clone such as `main`.
        if state.run_id != *id {
            return Err(bad(format!("it is the record of run {}", state.run_id)));
        }
        if state.branch != format!("baton/{id}") {
            return Err(bad(format!(
                "it names branch `{}`, not baton/{id}",
                state.branch
            )));
        }
        if repo.resolve_commit(&state.base.to_string()).is_err() {
            return Err(bad(format!(
                "its base commit {} is not in this repository (fetch the branch it came from)",
                state.base
            )));
        }
        super::claims::check_record(repo, id, remote, &state, &files, ours, here.config)?;
        Ok(RemoteRecord {
            commit,
            files,
            state,
        })
    }

    /// Writes the record into `dir` with this machine's `worktree`, points the local record
    /// (last `local`), snapshots and branch where the remote's are, and returns the state. The
    /// local record stays exactly the remote's: the two local facts (worktree, remote name)
    /// reach it with the next save, which only a driver holding the lease makes.
    fn take(
        self,
        repo: &Repo,
        dir: &Path,
        id: &RunId,
        remote: &str,
        local: Option<CommitId>,
        worktree: &str,
    ) -> Result<RunState, RunError> {
        let RemoteRecord {
            commit: theirs,
            files,
            mut state,
        } = self;
        state.worktree = worktree.to_owned();
        // Remote names are a clone's own: from now on this clone reaches the run through `remote`.
        state = super::session::published_as(&state, remote, state.updated_at())?;

        // The branch: this clone's may only be behind the remote's.
        let theirs_branch = repo.ref_target(&format!("refs/remotes/{remote}/{}", state.branch))?;
        let ours_branch = repo.branch_tip(&state.branch)?;
        let mut refs = Vec::new();
        match (ours_branch, theirs_branch) {
            (Some(ours), Some(tip)) if ours != tip && !repo.is_ancestor(ours, tip) => {
                return Err(RunError::BranchConflict {
                    run: id.to_string(),
                    branch: state.branch.clone(),
                    remote: remote.to_owned(),
                });
            }
            (_, Some(tip)) => refs.push((format!("refs/heads/{}", state.branch), Some(tip))),
            (None, None) => {
                return Err(RunError::BranchGone {
                    run: id.to_string(),
                    branch: state.branch.clone(),
                });
            }
            (Some(_), None) => {}
        }
        let tracking_prefix = tracking_of(remote, &refs_prefix(id));
        for (name, target) in repo.refs_under(&tracking_prefix)? {
            if let Some(rest) = name.strip_prefix(&tracking_prefix)
                && rest != "record"
            {
                refs.push((format!("{}{rest}", refs_prefix(id)), Some(target)));
            }
        }
        record::write_files(dir, &files)?;
        store::save_in(dir, &state)?;
        repo.set_refs(&refs)?;
        let refname = record_ref(id);
        repo.swap_ref(&refname, theirs, local)?;
        Ok(state)
    }
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
