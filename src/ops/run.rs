//! `run`: create a run of a plan and drive it.

use std::path::Path;

use crate::run::note::{Note, Sink};
use crate::run::session::Session;
use crate::run::{CreateOptions, Created};
use crate::state::RunState;

use super::{Drove, Error, Result, Workspace};

pub struct RunOptions<'a> {
    /// The plan file, as named relative to `cwd`.
    pub plan: &'a Path,
    pub cwd: &'a Path,
    /// The revision to start from, as named.
    pub base: &'a str,
    pub key: Option<&'a str>,
    pub stop_after: Option<&'a str>,
    /// `(stage, actor)` choices for this run.
    pub actors: &'a [(String, String)],
    /// Leave the run `queued` for `cycle` instead of driving it.
    pub queue: bool,
}

#[derive(Debug)]
pub enum RunOutcome {
    /// `--key` named a run that exists: it is left as it is.
    Existing(Box<RunState>),
    /// A new run, driven.
    Driven(Drove),
    /// A new run, left `queued` (`--queue`).
    Queued(Box<RunState>),
}

/// Creates the run and drives it; with `sync: push`, under a lease from its start.
pub fn run(ws: &Workspace, options: &RunOptions, sink: &dyn Sink) -> Result<RunOutcome> {
    let config = ws.config()?;
    let plan = crate::run::read_plan(ws.workdir(), options.cwd, options.plan)?;
    let base = ws.repo.resolve_commit(options.base)?;
    let untargeted = if plan.plan.targets.is_empty() {
        Vec::new()
    } else {
        let found = crate::verify::targets::derive_at(&ws.repo, base, &plan.path, &plan.plan)?;
        crate::verify::targets::not_covered(&plan.plan.targets, &found)
    };
    // Before anything is created: a signal from here on stops the run at a boundary.
    let interrupted = crate::exec::interrupt_flag()?;
    let created = crate::run::create(
        &ws.repo,
        &ws.store,
        &config,
        &CreateOptions {
            plan: &plan.plan,
            plan_text: &plan.text,
            plan_path: plan.path.clone(),
            base_rev: options.base,
            base,
            key: options.key,
            stop_after: options.stop_after,
            actors: options.actors,
            main_worktree: &ws.main_worktree()?,
            command: "git baton run",
            queued: options.queue,
        },
        sink,
    )?;
    let (mut state, lock) = match created {
        Created::Existing(state) => {
            sink.note(Note::Run {
                run: state.run_id.to_string(),
            });
            sink.note(Note::ExistingKey {
                key: options.key.unwrap_or_default().to_owned(),
                label: ws.status_label(&state),
            });
            return Ok(RunOutcome::Existing(state));
        }
        Created::New(state, lock) => (state, lock),
    };
    sink.note(Note::Run {
        run: state.run_id.to_string(),
    });
    sink.note(Note::Worktree {
        path: state.worktree.clone(),
    });
    // Said before the agent starts, so that the plan's author sees a gap before an agent does.
    for named in untargeted {
        sink.note(Note::Untargeted {
            plan: plan.path.clone(),
            line: named.line,
            column: named.column,
            target: crate::report::escape::line(&named.target).into_owned(),
        });
    }
    let mut session = Session::locked(&ws.repo, &ws.store, sink, lock);
    if options.queue {
        // A queued run is published when `cycle` takes it, as any run is when driven.
        drop(session);
        return Ok(RunOutcome::Queued(state));
    }
    // `sync: push` publishes the run from its start, and drives it under a lease.
    if config.sync_push {
        session
            .take_lease(&mut state, &config.remote, config.lease, true)
            .map_err(|source| Error::NotStarted {
                run: state.run_id.to_string(),
                remote: config.remote.clone(),
                source: Box::new(source),
            })?;
    }
    let driven = super::drive::drive(ws, &config, &session, &mut state, None, &interrupted)?;
    drop(session);
    Ok(RunOutcome::Driven(Drove { state, driven }))
}
