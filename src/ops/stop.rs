//! `stop`: ask the process driving a run to stop it now, and wait until it did.

use std::time::Duration;

use crate::run::request::{self, Request};
use crate::run::session::{self, Lookup};
use crate::state::RunState;

use super::{Result, Workspace};

pub struct StopOptions<'a> {
    /// The run: its id or a unique prefix.
    pub name: &'a str,
    /// How long to wait for the driver to act on the request.
    pub wait: Duration,
}

/// Stops the run `options` names; returns its state once its driver let go of it.
pub fn stop(ws: &Workspace, options: &StopOptions) -> Result<Box<RunState>> {
    let named = session::resolve(&ws.store, &ws.repo, options.name, Lookup::Here)?;
    request::send(&ws.store, named.id(), Request::Stop)?;
    let state = request::wait_released(&ws.store, named.id(), options.wait)?;
    Ok(Box::new(state))
}
