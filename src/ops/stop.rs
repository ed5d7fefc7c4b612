//! `stop`: ask the process driving a run to stop it now, and wait until it did.

use std::time::Duration;

use crate::run::request::{self, Request};
use crate::run::session::{self, Lookup};
use crate::state::RunState;

use super::{Result, Workspace};

/// How long `stop` waits for the driver to act on the request.
const WAIT: Duration = Duration::from_secs(30);

/// Stops the run `name` names; returns its state once its driver let go of it.
pub fn stop(ws: &Workspace, name: &str) -> Result<Box<RunState>> {
    let named = session::resolve(&ws.store, &ws.repo, name, Lookup::Here)?;
    request::send(&ws.store, named.id(), Request::Stop)?;
    Ok(Box::new(request::wait_released(
        &ws.store,
        named.id(),
        WAIT,
    )?))
}
