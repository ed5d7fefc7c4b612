//! `clean`: remove a run here (or finish a removal cut short), and with `--remote` its record
//! and snapshots on a remote.

use std::path::PathBuf;

use crate::run::session::{self, Lookup, NamedRun};
use crate::run::{RunError, lifecycle, remote};
use crate::state::RunId;
use crate::state::store::{RunLock, StoreError};

use super::{Result, Workspace};

pub struct CleanOptions<'a> {
    /// The run: its id or a unique prefix.
    pub name: &'a str,
    pub force: bool,
    /// `Some("")`: where the run was published; `Some(name)`: that remote; `None`: here only.
    pub remote: Option<&'a str>,
}

/// What was removed here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removed {
    /// The run, its branch kept; `left` is a directory at its worktree's path that is not its
    /// worktree, left in place.
    Run {
        id: RunId,
        branch: String,
        left: Option<PathBuf>,
    },
    /// What was left of a run without state; its worktree and branch, if any, kept.
    Remnant { id: RunId },
    /// A removal cut short, finished (`left` as for [`Removed::Run`]).
    Removal { id: RunId, left: Option<PathBuf> },
}

/// What `clean` did: here first, then on the remote.
#[derive(Debug)]
pub struct Cleaned {
    pub id: RunId,
    /// `None` for a run only the remote had.
    pub here: Option<Removed>,
    /// With `--remote`: the remote, and whether it had a record of the run — or why removing
    /// it there failed after the run was removed here.
    pub remote: Option<Result<(String, bool)>>,
}

/// Removes the run `options` names.
pub fn clean(ws: &Workspace, options: &CleanOptions) -> Result<Cleaned> {
    let Some(remote) = options.remote else {
        let named = session::resolve(&ws.store, &ws.repo, options.name, Lookup::Debris)?;
        let here = clean_here(ws, &named, options.force)?;
        return Ok(Cleaned {
            id: named.id().clone(),
            here: Some(here),
            remote: None,
        });
    };
    let named = session::resolve(&ws.store, &ws.repo, options.name, Lookup::Remotes)?;
    let id = named.id().clone();
    let remote = match remote {
        "" => match named.tracked_on() {
            Some(remote) => remote.to_owned(),
            None => match ws.store.load(&id)?.remote() {
                Some(remote) => remote.to_owned(),
                None => ws.config()?.remote,
            },
        },
        remote => remote.to_owned(),
    };
    // What may refuse is asked first — another machine's lease, then everything the local
    // removal checks — so that a refusal leaves both copies; the remote's goes last.
    let longest = ws.config()?.lease;
    remote::check_unleased(
        &ws.repo,
        &id,
        &remote,
        options.force,
        ws.store.now(),
        longest,
    )?;
    let here = match named {
        NamedRun::OnRemote { .. } => None,
        named => Some(clean_here(ws, &named, options.force)?),
    };
    let unpublished = remote::unpublish(&ws.repo, &id, &remote)
        .map(|had| (remote, had))
        .map_err(Into::into);
    Ok(Cleaned {
        id,
        here,
        remote: Some(unpublished),
    })
}

/// Removes the run `named` names from this clone (or finishes a removal cut short).
fn clean_here(ws: &Workspace, named: &NamedRun, force: bool) -> Result<Removed> {
    let id = match named {
        NamedRun::Here(id) => id,
        NamedRun::Removal(id) => return finish_removal(ws, id),
        NamedRun::Headless(id) => return clean_headless(ws, id, force),
        NamedRun::OnRemote { id, .. } => return Err(StoreError::Unknown(id.to_string()).into()),
    };
    let mut lock = ws.store.lock(id, "git baton clean")?;
    let (branch, left) = match ws.store.load(id) {
        Ok(state) => {
            let left = lifecycle::clean(&ws.repo, &ws.store, &mut lock, &state, force)?;
            (state.branch, left)
        }
        Err(StoreError::Corrupt { .. } | StoreError::Io { .. }) if force => {
            // Where creation put the worktree, if the configuration still says.
            let worktree = match (ws.main_worktree(), ws.config()) {
                (Ok(main), Ok(config)) => Some(main.join(&config.worktree_root).join(&**id)),
                _ => None,
            };
            let left = lifecycle::clean_unreadable(&ws.repo, &ws.store, &mut lock, id, worktree)?;
            (format!("baton/{id}"), left)
        }
        Err(err) => return Err(err.into()),
    };
    drop(lock);
    Ok(Removed::Run {
        id: id.clone(),
        branch,
        left,
    })
}

fn clean_headless(ws: &Workspace, id: &RunId, force: bool) -> Result<Removed> {
    if !force {
        return Err(RunError::Headless {
            run: id.to_string(),
            dir: ws.store.run_dir(id),
        }
        .into());
    }
    let mut lock = ws.store.lock(id, "git baton clean")?;
    lifecycle::clean_headless(&ws.repo, &ws.store, &mut lock, id)?;
    drop(lock);
    Ok(Removed::Remnant { id: id.clone() })
}

fn finish_removal(ws: &Workspace, id: &RunId) -> Result<Removed> {
    let dir = ws.store.removal_dir(id);
    let lock = RunLock::acquire_in(&dir, id, "git baton clean", ws.store.clock())?;
    let worktree = lifecycle::recorded_worktree(&ws.store, id);
    let left = lifecycle::finish_removal(&ws.repo, &ws.store, id, worktree.as_deref())?;
    drop(lock);
    Ok(Removed::Removal {
        id: id.clone(),
        left,
    })
}
