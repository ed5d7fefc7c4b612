//! The repository a command works in: the repository, its run store, its main worktree, and
//! the configuration, read only when an operation needs it.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::git::Repo;
use crate::run::note::{Note, Sink};
use crate::run::remote::{CaughtUp, Here};
use crate::run::session::{self, Lookup, Open, Session};
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

    /// The session of the run `name` names (of this clone, or only on a remote), for `command`,
    /// open on its state. A published run is caught up with its remote first — another machine
    /// may have moved it since this clone last saw it — and `caught_up` says what that did.
    pub fn open_run<'a>(
        &'a self,
        name: &str,
        command: &'a str,
        caught_up: fn(&str, CaughtUp) -> Option<Note>,
        sink: &'a dyn Sink,
    ) -> Result<(Session<'a>, crate::state::RunState)> {
        let named = session::resolve(&self.store, &self.repo, name, Lookup::Remotes)?;
        let published =
            named.tracked_on().is_some() || self.store.load(named.id())?.remote().is_some();
        let (config, main_worktree) = match published {
            true => (Some(self.config()?), Some(self.main_worktree()?)),
            false => (None, None),
        };
        let here = config
            .as_ref()
            .zip(main_worktree.as_deref())
            .map(|(config, main)| self.here(config, main));
        let open = Open {
            command,
            catch_up: here.as_ref(),
            caught_up,
            check: session::any_state,
        };
        Ok(Session::open(&self.repo, &self.store, sink, &named, &open)?)
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
