//! `git baton run`: create a run and drive its stages.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::args::parse_actor;
use super::{CliError, Ending};
use crate::ops::Workspace;
use crate::ops::run::{RunOptions, RunOutcome};

/// Create a run of a plan and execute its stages.
///
/// The run gets its own branch `baton/<id>` and linked worktree, created from BASE.
///
/// With several plans (or a quoted glob, `'plans/*.md'`, expanded relative to the current
/// directory, sorted), every plan is read and checked before any run is created, then each run
/// is created on its own and, with --queue, left `queued` for `git baton cycle`; without it,
/// driven as `git baton cycle` drives runs, at most --jobs at once.
///
/// Prints `run <RUN-ID>` as the first line of stderr (with several plans, one such line per
/// run, as it is created). Exit status: 0 the run reached review (or paused on request, or was
/// queued; with several plans, every one of them), 1 it ended in any other state, 2 bad input, 3
/// the run is busy, 130 git-baton was interrupted.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The plan files, or globs the shell did not expand.
    #[arg(value_name = "PLAN", required = true)]
    pub plan: Vec<PathBuf>,

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

    /// Create the run `queued` and leave it for `git baton cycle` (or `resume`) to drive.
    #[arg(long)]
    pub queue: bool,

    /// With several plans: drive at most N runs at once, each in its own worktree.
    #[arg(long, value_name = "N", default_value_t = 1, conflicts_with = "queue",
          value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: u16,

    /// Print the final RunState as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_run(cwd: &Path, args: RunArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let ws = Workspace::open(cwd)?;
    let plans = crate::ops::run::expand(cwd, &args.plan).map_err(plans_error)?;
    let options = |plan| RunOptions {
        plan,
        cwd,
        base: &args.base,
        key: args.key.as_deref(),
        stop_after: args.stop_after.as_deref(),
        actors: &args.actor,
        queue: args.queue,
    };
    let sink = super::Terminal::driving(!args.json);
    if let [plan] = plans.as_slice() {
        let outcome = crate::ops::run::run(&ws, &options(plan), &sink)?;
        return ended(&ws, outcome, args.json, out);
    }
    if args.key.is_some() {
        return Err(CliError::input(format!(
            "--key names one run, and {} plans were given",
            plans.len()
        ))
        .hinted("give each plan its own `git baton run PLAN --key KEY`, or drop --key"));
    }
    let runs: Vec<RunOptions> = plans.iter().map(|plan| options(plan)).collect();
    if !args.queue {
        let program = std::env::current_exe()
            .map_err(|err| CliError::input(format!("cannot find the running git-baton: {err}")))?;
        let jobs = usize::from(args.jobs);
        let (ended, cycled) = crate::ops::run::drive_all(&ws, &runs, jobs, program, &sink)?;
        return Ok(drove_all(&ws, &ended, cycled.interrupted, args.json, out));
    }
    let outcomes = crate::ops::run::queue_all(&ws, &runs, &sink)?;
    if args.json {
        let views: Vec<_> = outcomes
            .iter()
            .map(|outcome| match outcome {
                RunOutcome::Queued(state) | RunOutcome::Existing(state) => state,
                RunOutcome::Driven(drove) => &drove.state,
            })
            .map(|state| super::json_view(&ws.store, state))
            .collect();
        super::write_json(out, &views);
    }
    Ok(Ending::Done)
}

/// How the runs of several plans ended: `--json` an array of them, else the table `list` prints,
/// on stderr after what their drivers said.
fn drove_all(
    ws: &Workspace,
    ended: &[crate::state::RunState],
    interrupted: bool,
    json: bool,
    out: &mut dyn Write,
) -> Ending {
    if json {
        let views: Vec<_> = ended
            .iter()
            .map(|state| super::json_view(&ws.store, state))
            .collect();
        super::write_json(out, &views);
    } else {
        let rows: Vec<_> = ended
            .iter()
            .map(|state| (state, ws.store.is_stale(state), None, None))
            .collect();
        crate::term::err!("\n{}", crate::report::list::render(&rows));
    }
    if interrupted {
        return Ending::Driven(crate::run::Driven::Interrupted);
    }
    let reached = ended.iter().all(|state| {
        matches!(
            state.status(),
            crate::state::RunStatus::Review | crate::state::RunStatus::Paused
        )
    });
    Ending::Runs { reached }
}

/// How one run ended, printed as `--json` asks.
fn ended(
    ws: &Workspace,
    outcome: RunOutcome,
    json: bool,
    out: &mut dyn Write,
) -> Result<Ending, CliError> {
    match outcome {
        RunOutcome::Existing(state) => {
            if json {
                super::write_json(out, &super::json_view(&ws.store, &state));
            }
            Ok(Ending::Existing {
                status: state.status(),
                stale: ws.store.is_stale(&state),
            })
        }
        RunOutcome::Driven(drove) => super::print_summary(&ws.store, drove, json, out),
        RunOutcome::Queued(state) => {
            if json {
                super::write_json(out, &super::json_view(&ws.store, &state));
            }
            Ok(Ending::Done)
        }
    }
}

/// A plan argument that names nothing: bad input.
fn plans_error(err: crate::ops::run::PlansError) -> CliError {
    use crate::ops::run::PlansError;
    let hint = match &err {
        PlansError::NoMatch { .. } => Some(
            "a glob is matched against files relative to the current directory; `*` does not cross `/`, `**` does",
        ),
        _ => None,
    };
    let err = CliError::new(super::Class::Input, err);
    match hint {
        Some(hint) => err.hinted(hint),
        None => err,
    }
}
