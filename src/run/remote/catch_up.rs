//! Catching a run up with a remote's newer record: rebuilding a run this clone does not have,
//! or taking the newer record and work of one it has.

use super::*;
use crate::run::{SyncError, WorktreeError};

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
        Standing::Diverged => Err(RunError::Sync(SyncError::Diverged {
            run: id.to_string(),
            remote: remote.to_owned(),
        })),
        Standing::Behind | Standing::RemoteOnly => {
            let lock = store.lock(id, "git baton (catching up with a remote)")?;
            let ours = store.load(id)?;
            let worktree = Path::new(&ours.worktree);
            let kept = latest_work(&ours, repo.branch_tip(&ours.branch)?);
            // Read and checked before any file moves: a record that names another run or
            // branch is refused while the worktree is still as it was.
            let mine = Some((&ours, lock.dir()));
            let record = RemoteRecord::read(here, id, remote, theirs, mine)?;
            crate::run::unrecorded::refuse_handoff(&record.state, Some(remote))?;
            let their_tip =
                repo.ref_target(&format!("refs/remotes/{remote}/{}", record.state.branch))?;
            let newest = latest_work(&record.state, their_tip);
            let in_place = worktree.exists();
            if in_place {
                // The files first, while everything else still says where they came from: a
                // kill after this leaves a worktree holding exactly the newer work, which the
                // next catch-up recognises.
                crate::run::open_run_worktree(repo, &ours)?;
                // One snapshot of the worktree as it is (tracked and untracked files, not
                // ignored ones), compared with both candidates.
                let message = format!("baton: run {id}, compared before catching up");
                let now = repo
                    .record_worktree(worktree, kept, &message, crate::git::Identity::Baton)?
                    .whole()?;
                let same = |commit| {
                    repo.tree_changes(commit, now, &crate::git::Scope::All)
                        .map(|paths| paths.is_empty())
                };
                if !same(newest)? {
                    let unrecorded = repo.tree_changes(kept, now, &crate::git::Scope::All)?;
                    if !unrecorded.is_empty() {
                        return Err(RunError::Sync(SyncError::UnrecordedWork {
                            run: id.to_string(),
                            worktree: ours.worktree.clone(),
                            paths: unrecorded,
                        }));
                    }
                    crate::run::in_the_way::check(repo, id.as_str(), worktree, kept, newest)?;
                    repo.move_files(worktree, kept, newest)?;
                }
            }
            let state = record.take(repo, lock.dir(), id, remote, local, &ours.worktree)?;
            if in_place {
                repo.reset_index(worktree)?;
            } else {
                crate::run::lifecycle::recreate_worktree(repo, &state)?;
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
    let exclude = crate::run::worktree_root::check(repo, here.main_worktree, here.config)?;
    let _creating = store.creation_lock()?;
    let worktree =
        crate::run::create::worktree_path(here.main_worktree, &here.config.worktree_root, id);
    if worktree.exists() {
        return Err(RunError::Worktree(WorktreeError::WorktreeExists {
            run: id.to_string(),
            worktree: worktree.display().to_string(),
        }));
    }
    let staging = store.staging_dir(id);
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|source| RunError::CreateDir {
        path: staging.clone(),
        source,
    })?;
    let local = repo.ref_target(&record_ref(id))?;
    let record = RemoteRecord::read(here, id, remote, theirs, None)?;
    crate::run::unrecorded::refuse_handoff(&record.state, Some(remote))?;
    let state = record.take(
        repo,
        &staging,
        id,
        remote,
        local,
        &worktree.display().to_string(),
    )?;
    if let Some(pattern) = &exclude {
        crate::run::worktree_root::exclude(repo, here.main_worktree, pattern)?;
    }
    let lock = store::RunLock::acquire_in(&staging, id, "git baton resume", store.clock())?;
    let dir = store.run_dir(id);
    std::fs::rename(&staging, &dir).map_err(|source| RunError::Io {
        action: "publish",
        path: dir.clone(),
        source,
    })?;
    crate::run::lifecycle::recreate_worktree(repo, &state)?;
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
        let bad = |message: String| {
            RunError::Sync(SyncError::BadRemoteRecord {
                run: id.to_string(),
                remote: remote.to_owned(),
                message,
            })
        };
        let state_bytes = files
            .iter()
            .find(|(path, _)| path == "state.json")
            .map(|(_, bytes)| bytes.as_slice())
            .ok_or_else(|| bad("it has no state.json".into()))?;
        let state = store::parse(state_bytes).map_err(bad)?;
        if repo.resolve_commit(&state.base.to_string()).is_err() {
            return Err(bad(format!(
                "its base commit {} is not in this repository (fetch the branch it came from)",
                state.base
            )));
        }
        crate::run::claims::check_record(repo, id, remote, &state, &files, ours, here.config)?;
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
        state = crate::run::session::published_as(&state, remote, state.updated_at())?;

        // The branch: this clone's may only be behind the remote's.
        let theirs_branch = repo.ref_target(&format!("refs/remotes/{remote}/{}", state.branch))?;
        let ours_branch = repo.branch_tip(&state.branch)?;
        let mut refs = Vec::new();
        match (ours_branch, theirs_branch) {
            (Some(ours), Some(tip)) if ours != tip && !repo.is_ancestor(ours, tip) => {
                return Err(RunError::Sync(SyncError::BranchConflict {
                    run: id.to_string(),
                    branch: state.branch.clone(),
                    remote: remote.to_owned(),
                }));
            }
            (_, Some(tip)) => refs.push((format!("refs/heads/{}", state.branch), Some(tip))),
            (None, None) => {
                return Err(RunError::Worktree(WorktreeError::BranchGone {
                    run: id.to_string(),
                    branch: state.branch.clone(),
                }));
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
