//! `pause`: ask the process driving a run to pause it at its next stage boundary.

use crate::run::request::{self, Request};
use crate::run::session::{self, Lookup};
use crate::state::RunId;

use super::{Result, Workspace};

pub struct PauseOptions<'a> {
    /// The run: its id or a unique prefix.
    pub name: &'a str,
}

/// Asks for the pause; returns the run's id.
pub fn pause(ws: &Workspace, options: &PauseOptions) -> Result<RunId> {
    let named = session::resolve(&ws.store, &ws.repo, options.name, Lookup::Here)?;
    request::send(&ws.store, named.id(), Request::Pause)?;
    Ok(named.id().clone())
}
