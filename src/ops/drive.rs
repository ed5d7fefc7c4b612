//! Driving a run whose session is open: the one place the [`Driver`] is built.

use std::sync::atomic::AtomicBool;

use crate::config::Config;
use crate::run::session::Session;
use crate::run::{Driven, Driver};
use crate::state::RunState;

use super::{Result, Workspace};

/// A run driven until it stopped, and how.
#[derive(Debug)]
pub struct Drove {
    pub state: Box<RunState>,
    pub driven: Driven,
}

/// Drives `state`'s run through `session` (under its lease, when it holds one) until it reaches
/// review, stops at a boundary, or a stage does not succeed; `actor_override` is `resume
/// --actor`'s `(stage, actor)`.
pub(super) fn drive(
    ws: &Workspace,
    config: &Config,
    session: &Session,
    state: &mut RunState,
    actor_override: Option<(String, String)>,
    interrupted: &AtomicBool,
) -> Result<Driven> {
    let driver = Driver {
        repo: &ws.repo,
        store: &ws.store,
        config,
        session,
        interrupted,
        actor_override,
    };
    Ok(driver.drive_published(state)?)
}
