//! `run`: create a run of a plan and drive it; or, with several plans, create them all, each
//! left `queued` for `cycle`, and drive them with a cycle of their own (`--jobs`).

mod plans;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::config::Config;
use crate::run::note::{Note, Sink};
use crate::run::session::Session;
use crate::run::{CreateOptions, Created, PlanFile};
use crate::state::RunState;

use super::{Drove, Error, Result, Workspace};

pub use plans::{PlansError, expand};

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

/// A plan read, with the base it starts from and the paths its body names that no declared
/// target covers: what a run needs before it is created.
struct Ready {
    plan: PlanFile,
    base: crate::git::CommitId,
    untargeted: Vec<crate::verify::targets::Named>,
}

/// Creates the run and drives it; with `sync: push`, under a lease from its start.
pub fn run(ws: &Workspace, options: &RunOptions, sink: &dyn Sink) -> Result<RunOutcome> {
    let config = ws.config()?;
    let ready = ready(ws, options)?;
    // Before anything is created: a signal from here on stops the run at a boundary.
    let interrupted = crate::exec::interrupt_flag()?;
    start(ws, &config, options, ready, &interrupted, sink)
}

/// `run PLAN…`: every plan is read and checked against the configuration before any run
/// exists, so that a bad one creates none; then each run is created, one transaction each, and
/// left `queued` whatever `queue` says. A signal stops the creations between two runs; the
/// runs created until then stand, and are returned.
pub fn queue_all(ws: &Workspace, runs: &[RunOptions], sink: &dyn Sink) -> Result<Vec<RunOutcome>> {
    let config = ws.config()?;
    let main_worktree = ws.main_worktree()?;
    let mut all = Vec::new();
    for options in runs {
        let ready = ready(ws, options)?;
        let create = create_options(options, &ready, &main_worktree, true);
        crate::run::check_new_run(&ws.repo, &config, &create)?;
        all.push(ready);
    }
    let interrupted = crate::exec::interrupt_flag()?;
    let mut outcomes = Vec::new();
    for (options, ready) in runs.iter().zip(all) {
        if interrupted.load(Ordering::SeqCst) {
            break;
        }
        let options = RunOptions {
            queue: true,
            ..*options
        };
        outcomes.push(start(ws, &config, &options, ready, &interrupted, sink)?);
    }
    Ok(outcomes)
}

/// `run PLAN…` without `--queue`: the runs queued as [`queue_all`] queues them, then driven by
/// a cycle that takes only them, once each, at most `jobs` at once — each by a `git baton resume`
/// of its own (`program`), in its own worktree. Returns the runs as they ended.
pub fn drive_all(
    ws: &Workspace,
    runs: &[RunOptions],
    jobs: usize,
    program: PathBuf,
    sink: &dyn Sink,
) -> Result<(Vec<RunState>, super::cycle::Cycled)> {
    let queued = queue_all(ws, runs, sink)?;
    let ids: Vec<crate::state::RunId> = queued
        .iter()
        .map(|outcome| match outcome {
            RunOutcome::Queued(state) | RunOutcome::Existing(state) => state.run_id.clone(),
            RunOutcome::Driven(drove) => drove.state.run_id.clone(),
        })
        .collect();
    let options = super::cycle::CycleOptions {
        once: true,
        jobs,
        until: None,
        // `cycle`'s defaults: a run just created has no resume to count against the cap yet.
        max_resumes: super::cycle::MAX_RESUMES,
        max_reset: super::cycle::MAX_RESET,
        remote: None,
        dry_run: false,
        interval: super::cycle::INTERVAL,
        only: Some(ids.clone()),
        program,
    };
    let cycled = super::cycle::cycle(ws, &options, sink)?;
    let mut ended = Vec::new();
    for id in &ids {
        ended.push(ws.store.load(id)?);
    }
    Ok((ended, cycled))
}

/// Reads the plan and resolves the base.
fn ready(ws: &Workspace, options: &RunOptions) -> Result<Ready> {
    let plan = crate::run::read_plan(ws.workdir(), options.cwd, options.plan)?;
    let base = ws.repo.resolve_commit(options.base)?;
    let untargeted = if plan.plan.targets.is_empty() {
        Vec::new()
    } else {
        let found = crate::verify::targets::derive_at(&ws.repo, base, &plan.path, &plan.plan)?;
        crate::verify::targets::not_covered(&plan.plan.targets, &found)
    };
    Ok(Ready {
        plan,
        base,
        untargeted,
    })
}

fn create_options<'a>(
    options: &'a RunOptions,
    ready: &'a Ready,
    main_worktree: &'a Path,
    queued: bool,
) -> CreateOptions<'a> {
    CreateOptions {
        plan: &ready.plan.plan,
        plan_text: &ready.plan.text,
        plan_path: ready.plan.path.clone(),
        base_rev: options.base,
        base: ready.base,
        key: options.key,
        stop_after: options.stop_after,
        actors: options.actors,
        main_worktree,
        command: "git baton run",
        queued,
    }
}

/// Creates the run of a plan that is ready, then leaves it queued or drives it.
fn start(
    ws: &Workspace,
    config: &Config,
    options: &RunOptions,
    ready: Ready,
    interrupted: &AtomicBool,
    sink: &dyn Sink,
) -> Result<RunOutcome> {
    let main_worktree = ws.main_worktree()?;
    let create = create_options(options, &ready, &main_worktree, options.queue);
    let created = crate::run::create(&ws.repo, &ws.store, config, &create, sink)?;
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
    for named in ready.untargeted {
        sink.note(Note::Untargeted {
            plan: ready.plan.path.clone(),
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
    let driven = super::drive::drive(ws, config, &session, &mut state, None, interrupted)?;
    drop(session);
    Ok(RunOutcome::Driven(Drove { state, driven }))
}
