//! `git baton resume`: continue a run from its RunState.

use std::io::Write;
use std::path::Path;

use clap::Args;

use crate::error::{CliError, Exit};
use crate::run::Driver;
use crate::state::{RunStatus, StageStatus};

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
    /// The run: its id or any unique prefix.
    #[arg(value_name = "RUN")]
    pub run: String,

    /// Use actor NAME for the resumed attempt of STAGE (recorded on the attempt).
    #[arg(long, value_name = "STAGE=NAME", value_parser = super::parse_actor)]
    pub actor: Option<(String, String)>,

    /// Re-create a missing worktree from the run's branch and the last attempt's snapshot.
    #[arg(long)]
    pub recreate_worktree: bool,

    /// Print the final RunState as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// The stage and number of the attempt a crash left open.
fn crashed_attempt(state: &crate::state::RunState) -> Option<(String, u32)> {
    let stage = state
        .stages
        .iter()
        .find(|s| s.status == StageStatus::Running)?;
    let attempt = stage.attempts.last().filter(|a| a.outcome.is_none())?;
    Some((stage.name.clone(), attempt.n))
}

pub fn run(cwd: &Path, args: ResumeArgs, out: &mut dyn Write) -> Result<Exit, CliError> {
    let ctx = super::Context::open(cwd)?;
    let config = ctx.config()?;
    let id = ctx.resolve(&args.run)?;
    eprintln!("run {id}");
    let lock = ctx
        .store
        .lock(&id, "git baton resume")
        .map_err(super::store_error)?;
    let mut state = ctx.store.load(&id).map_err(super::store_error)?;

    match state.status {
        RunStatus::Review | RunStatus::Finished => {
            return Err(CliError::input(format!(
                "run {id} is in {}: there is nothing to resume",
                crate::report::status::word(state.status)
            ))
            .hinted(format!("see `git baton status {id}`")));
        }
        RunStatus::Running => {
            // We hold the lock, so whoever left it running is gone. Its work is still in the
            // worktree; record it as the crashed attempt's snapshot before anything else runs.
            // What the dead driver's actor left running would keep editing the worktree
            // under the resumed attempt: stop it first.
            if let Some(dir) = state
                .stages
                .iter()
                .find(|s| s.status == StageStatus::Running)
                .and_then(|s| s.attempts.last())
                .map(|a| lock.dir().join(&a.dir))
            {
                let killed = crate::exec::kill_leftovers(
                    &dir.join(crate::run::ATTEMPT_TOKEN),
                    &dir.join(crate::run::ACTOR_PID),
                    Path::new(&state.worktree),
                    crate::run::GRACE,
                )
                .map_err(|e| CliError::input(e.to_string()))?;
                if killed > 0 {
                    eprintln!(
                        "note: stopped {killed} process(es) the crashed attempt left running in the worktree"
                    );
                }
            }
            let snapshot = crashed_attempt(&state)
                .and_then(|(stage, n)| crate::run::snapshot_for(&ctx.repo, &state, &stage, n));
            state.record_crash(&crate::state::store::now(), snapshot);
            crate::state::store::save_in(lock.dir(), &state).map_err(super::store_error)?;
            eprintln!(
                "note: the previous process driving this run died; its attempt is recorded as interrupted (crash)"
            );
        }
        _ => {}
    }
    let next = state.next_stage().map(|i| state.stages[i].name.clone());
    if let Some((stage, actor)) = &args.actor {
        if next.as_deref() != Some(stage.as_str()) {
            return Err(CliError::input(format!(
                "--actor names stage `{stage}`, but the stage to resume is `{}`",
                next.as_deref().unwrap_or("none")
            ))
            .hinted("the RunState's pipeline is authoritative; only the actor of the stage being resumed may change"));
        }
        if !config.actors.contains_key(actor) {
            let names: Vec<&str> = config.actors.keys().map(String::as_str).collect();
            return Err(CliError::input(format!(
                "--actor names actor `{actor}`, which is not configured"
            ))
            .hinted(format!("configured actors: {}", names.join(", "))));
        }
    }
    if args.recreate_worktree && !Path::new(&state.worktree).exists() {
        crate::run::lifecycle::recreate_worktree(&ctx.repo, &state)?;
        eprintln!(
            "note: re-created the worktree {} from {} and the last attempt's snapshot",
            state.worktree, state.branch
        );
    }
    crate::run::check_worktree(&ctx.repo, &state)?;

    let interrupted = crate::exec::interrupt_flag().map_err(|e| CliError::input(e.to_string()))?;
    let driver = Driver {
        repo: &ctx.repo,
        store: &ctx.store,
        config: &config,
        lock: &lock,
        interrupted: &interrupted,
        echo: !args.json,
        actor_override: args.actor.clone(),
    };
    let exit = driver.drive(&mut state)?;
    drop(lock);
    super::finish(&ctx.store, &state, exit, args.json, out)
}
