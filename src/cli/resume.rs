//! `git baton resume`: continue a run from its RunState.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::args::{RunArg, parse_actor};
use super::{CliError, Context, Outcome};
use crate::run::Driver;
use crate::run::lease::Publisher;
use crate::run::remote;
use crate::run::resume::{self, ResumeOptions};
use crate::term::errln;

/// Continue a run from its RunState.
///
/// Re-runs the first stage that has not succeeded as a new, resumed attempt, then the rest of
/// the pipeline.
///
/// Everything comes from the RunState recorded at creation (pipeline, actors, gate policy,
/// stop-after); only the actor of the stage being resumed may be changed. A resumed attempt of a
/// gated stage always goes through the coverage gate. Exit status as for `run`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    #[command(flatten)]
    pub run: RunArg,

    /// Use actor NAME for the resumed attempt of STAGE (recorded on the attempt).
    #[arg(long, value_name = "STAGE=NAME", value_parser = parse_actor)]
    pub actor: Option<(String, String)>,

    /// Re-create a missing worktree from the run's branch and the last attempt's snapshot.
    #[arg(long)]
    pub recreate_worktree: bool,

    /// Print the final RunState as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_resume(cwd: &Path, args: ResumeArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let ctx = Context::open(cwd)?;
    let config = ctx.config()?;
    let (id, tracked_on) = remote::resolve(&ctx.store, &ctx.repo, &args.run.run)?;
    errln!("run {id}");
    let main_worktree = ctx.main_worktree()?;
    if let Some((remote, caught)) =
        remote::refresh(&ctx.here(&config, &main_worktree), &id, tracked_on)?
    {
        match caught {
            remote::CaughtUp::Adopted => errln!("note: rebuilt the run from {remote}"),
            remote::CaughtUp::Updated => errln!("note: took the newer record of {remote}"),
            remote::CaughtUp::Nothing => {}
        }
    }
    let lock = ctx.store.lock(&id, "git baton resume")?;
    let mut state = ctx.store.load(&id)?;
    crate::state::transition::check_resumable(&state).map_err(crate::run::RunError::from)?;
    let publish_to = state
        .remote()
        .map(str::to_owned)
        .or_else(|| config.sync_push.then(|| config.remote.clone()));
    let publisher = match publish_to {
        Some(remote) => Some(Publisher::take(
            &ctx.repo,
            lock.dir(),
            &mut state,
            &remote,
            config.lease,
            config.sync_push,
            &ctx.store,
        )?),
        None => None,
    };
    let options = ResumeOptions {
        actor: args.actor.as_ref(),
        recreate_worktree: args.recreate_worktree,
    };
    let prepared = resume::prepare(
        &ctx.repo,
        &config,
        &lock,
        &mut state,
        &options,
        ctx.store.clock(),
        &mut |note| errln!("note: {note}"),
    );
    if let Some(publisher) = &publisher {
        publisher.saved(&state);
        if prepared.is_err() {
            // Nothing will drive the run: the lease goes back at once, not when it expires.
            publisher.release(&ctx.repo, lock.dir(), &mut state, ctx.store.now())?;
        }
    }
    prepared?;

    let interrupted = crate::exec::interrupt_flag()?;
    let driver = Driver {
        repo: &ctx.repo,
        store: &ctx.store,
        config: &config,
        lock: &lock,
        interrupted: &interrupted,
        echo: !args.json && !crate::term::quiet(),
        actor_override: args.actor.clone(),
        publisher: publisher.as_ref(),
    };
    let driven = driver.drive_published(&mut state)?;
    drop(lock);
    super::print_summary(&ctx.store, &state, driven, args.json, out)
}
