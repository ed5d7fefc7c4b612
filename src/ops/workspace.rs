//! The repository a command works in: the repository, its run store, its main worktree, and
//! the configuration, read only when an operation needs it.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::git::Repo;
use crate::run::remote::Here;
use crate::state::Clock;
use crate::state::store::Store;

use super::Result;

/// The repository and its run store, as every run command needs them.
pub struct Workspace {
    pub repo: Repo,
    pub store: Store,
    /// The configuration as read when the workspace was opened, when it loaded.
    loaded: Option<Config>,
}

impl Workspace {
    /// The repository `cwd` is in, its store dated by the clock the environment pins (or the
    /// system's).
    pub fn open(cwd: &Path) -> Result<Workspace> {
        let repo = Repo::discover(cwd)?;
        let clock = Clock::from_env()?;
        let store = Store::new(repo.common_dir(), clock);
        let mut ws = Workspace {
            repo,
            store,
            loaded: None,
        };
        // Read once, here: the configured lease decides which leases are in force in `status`
        // and `list` too. A configuration that does not load leaves the default lease, and its
        // error is for the commands that drive runs to report.
        ws.loaded = ws
            .main_worktree()
            .ok()
            .and_then(|main| crate::config::load(&main).ok());
        let lease = ws
            .loaded
            .as_ref()
            .map_or(crate::config::DEFAULT_LEASE, |config| config.lease);
        ws.store = ws.store.with_lease_max(lease);
        Ok(ws)
    }

    /// The configuration, read only by the commands that drive runs: a broken `.baton.yml` must
    /// not hide the runs from `status` and `list`. It comes from the main worktree, so that every
    /// worktree of a repository, the runs' own included, drives runs the same way.
    pub fn config(&self) -> Result<Config> {
        match &self.loaded {
            Some(config) => Ok(config.clone()),
            // Read again, for the error.
            None => Ok(crate::config::load(&self.main_worktree()?)?),
        }
    }

    /// The worktree the command was started in (`.` in a bare repository).
    pub fn workdir(&self) -> &Path {
        self.repo.workdir().unwrap_or(Path::new("."))
    }

    pub fn main_worktree(&self) -> Result<PathBuf> {
        // The common dir of a non-bare repository is `<main worktree>/.git`.
        let common = self.repo.common_dir();
        match common.file_name() {
            Some(name) if name == ".git" => Ok(common.parent().unwrap_or(common).to_path_buf()),
            _ => Ok(self.repo.workdir()?.to_path_buf()),
        }
    }

    /// This clone, as catching up with a remote needs it.
    pub fn here<'a>(&'a self, config: &'a Config, main_worktree: &'a Path) -> Here<'a> {
        Here {
            repo: &self.repo,
            store: &self.store,
            config,
            main_worktree,
        }
    }

    /// A run's status word, with `(stale)` when it says running but nobody holds the lock.
    pub fn status_label(&self, state: &crate::state::RunState) -> String {
        crate::report::status::label(state.status(), self.store.is_stale(state))
    }

    /// The RunState of the run `name` names (an id or a unique prefix of this clone's).
    pub fn load(&self, name: &str) -> Result<crate::state::RunState> {
        let named = crate::run::session::resolve(
            &self.store,
            &self.repo,
            name,
            crate::run::session::Lookup::Here,
        )?;
        Ok(self.store.load(named.id())?)
    }
}
