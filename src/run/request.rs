//! Requests to the process driving a run, from another process: stop now, or pause at the
//! next stage boundary.
//!
//! A request is a file in the run directory that the driver polls ([`super::Driver`]) rather
//! than a signal: no pid can be reused wrongly, and the driver acts on it where it is safe to.
//! A request is only left while a driver lives; a driver discards the requests of its
//! predecessors when it starts.

use std::time::{Duration, Instant};

use crate::report::status::label;
use crate::run::DriveError;
use crate::state::store::{Store, write_atomic};
use crate::state::{RunId, RunState};

use super::{PAUSE_REQUEST, RunError, STOP_REQUEST};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// Stop the actor now and record the attempt as interrupted (manual).
    Stop,
    /// Let the stage in progress finish, then pause the run.
    Pause,
}

/// Leaves `request` for the process driving run `id`, refusing when no live process drives it.
pub fn send(store: &Store, id: &RunId, request: Request) -> Result<(), RunError> {
    if store.holder(id)?.is_none() {
        let state = store.load(id)?;
        return Err(RunError::Drive(DriveError::NotDriven {
            run: id.to_string(),
            status: label(state.status(), store.is_stale(&state)),
        }));
    }
    let (file, text) = match request {
        Request::Stop => (STOP_REQUEST, "stop\n"),
        Request::Pause => (PAUSE_REQUEST, "pause\n"),
    };
    write_atomic(&store.run_dir(id).join(file), text.as_bytes())?;
    Ok(())
}

/// Waits until no process drives run `id` any more, for at most `timeout`, and returns the
/// state its driver left. The request stays in place when the time runs out.
pub fn wait_released(store: &Store, id: &RunId, timeout: Duration) -> Result<RunState, RunError> {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if store.holder(id)?.is_none() {
            return Ok(store.load(id)?);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(RunError::Drive(DriveError::DidNotStop {
        run: id.to_string(),
        seconds: timeout.as_secs(),
    }))
}
