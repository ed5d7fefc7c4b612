//! `git baton run`: create a run and drive its stages.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::args::parse_actor;
use super::{CliError, Context, Outcome};
use crate::run::lease::Publisher;
use crate::run::{CreateOptions, Created, Driver};
use crate::term::errln;

/// Create a run of a plan and execute its stages.
///
/// The run gets its own branch `baton/<id>` and linked worktree, created from BASE.
///
/// Prints `run <RUN-ID>` as the first line of stderr. Exit status: 0 the run reached review (or
/// paused on request), 1 it ended in any other state, 2 bad input, 3 the run is busy, 130
/// git-baton was interrupted.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The plan file.
    #[arg(value_name = "PLAN")]
    pub plan: PathBuf,

    /// The revision to start from.
    #[arg(long, value_name = "REV", default_value = "HEAD")]
    pub base: String,

    /// An idempotency key: a retried `run` with the same key returns the existing run.
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,

    /// Pause after this stage succeeds.
    #[arg(long, value_name = "STAGE")]
    pub stop_after: Option<String>,

    /// Use actor NAME for stage STAGE in this run (repeatable).
    #[arg(long, value_name = "STAGE=NAME", value_parser = parse_actor)]
    pub actor: Vec<(String, String)>,

    /// Print the final RunState as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_run(cwd: &Path, args: RunArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let ctx = Context::open(cwd)?;
    let config = ctx.config()?;
    let plan = crate::run::read_plan(ctx.workdir(), cwd, &args.plan)?;
    let base = ctx.repo.resolve_commit(&args.base)?;
    let interrupted = crate::exec::interrupt_flag()?;

    let created = crate::run::create(
        &ctx.repo,
        &ctx.store,
        &config,
        &CreateOptions {
            plan: &plan.plan,
            plan_text: &plan.text,
            plan_path: plan.path.clone(),
            base_rev: &args.base,
            base,
            key: args.key.as_deref(),
            stop_after: args.stop_after.as_deref(),
            actors: &args.actor,
            main_worktree: &ctx.main_worktree()?,
            command: "git baton run",
        },
    )?;
    let (mut state, lock) = match created {
        Created::Existing(state) => {
            errln!("run {}", state.run_id);
            errln!(
                "note: key `{}` names this existing run ({}); not creating another",
                args.key.as_deref().unwrap_or_default(),
                ctx.status_label(&state)
            );
            if args.json {
                super::write_json(out, &super::json_view(&ctx.store, &state));
            }
            return Ok(Outcome::Existing {
                status: state.status(),
                stale: ctx.store.is_stale(&state),
            });
        }
        Created::New(state, lock) => (state, lock),
    };
    errln!("run {}", state.run_id);
    errln!("worktree {}", state.worktree);
    // `sync: push` publishes the run from its start, and drives it under a lease.
    let publisher = match config.sync_push {
        true => {
            let taken = Publisher::take(
                &ctx.repo,
                lock.dir(),
                &mut state,
                &config.remote,
                config.lease,
                true,
                &ctx.store,
            );
            Some(taken.map_err(|err| {
                let id = &state.run_id;
                CliError::from(err).hinted(format!(
                    "run {id} exists and waits, pending; `git baton resume {id}` starts it once \
                     {} is in reach",
                    config.remote
                ))
            })?)
        }
        false => None,
    };
    let driver = Driver {
        repo: &ctx.repo,
        store: &ctx.store,
        config: &config,
        lock: &lock,
        interrupted: &interrupted,
        echo: !args.json && !crate::term::quiet(),
        actor_override: None,
        publisher: publisher.as_ref(),
    };
    let driven = driver.drive_published(&mut state)?;
    drop(lock);
    super::print_summary(&ctx.store, &state, driven, args.json, out)
}
