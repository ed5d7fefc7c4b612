//! `git baton cycle`: resume every run that is due, as `git baton resume` would.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use clap::Args;
use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

use super::{CliError, Ending};
use crate::ops::Workspace;
use crate::ops::cycle::{CycleOptions, Cycled};
use crate::run::schedule::Decision;

/// Resume every run that is due, and keep doing it.
///
/// Due: a run `queued` by `run --queue`; a run whose driver died; a run interrupted by the stop
/// of the cycle that drove it; a rate-limited run past its reset. None of them while the actor
/// its next attempt uses is on hold — a rate limit holds its actor (or its `account:`) for
/// every run until the reset — unless a `fallback:` actor of the stage is free, which then
/// takes it. A run held (`git baton hold`), paused or stopped by a person, failed, blocked,
/// or resumed --max-resumes times by cycle without a stage succeeding, waits for a person.
///
/// Each run is driven by `git baton resume RUN` in a process of its own (same gate, prompts,
/// provenance and lease), at most --jobs at once. Without --once, cycle then waits until the
/// next run is due and goes on. SIGINT or SIGTERM stops it: every run it drives is stopped at
/// a safe point, and the next cycle resumes those. Exit status: 0 done, 2 bad input, 130
/// interrupted.
#[derive(Debug, Args)]
pub struct CycleArgs {
    /// One pass: resume what is due now, wait for those runs to end, and exit (cron, CI).
    #[arg(long)]
    pub once: bool,

    /// Runs driven at once, each in its own worktree.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: u16,

    /// Start no run after TIME (RFC 3339, or `YYYY-MM-DD HH:MM` in the local time zone); the
    /// runs started before are driven to their end.
    #[arg(long, value_name = "TIME", value_parser = parse_time, conflicts_with = "for_")]
    pub until: Option<Timestamp>,

    /// Start no run after this long (`90m`, `8h`).
    #[arg(long = "for", id = "for_", value_name = "DURATION", value_parser = parse_duration)]
    pub for_: Option<Duration>,

    /// Resumes by cycle without a stage succeeding, after which a run waits for a person.
    #[arg(long, value_name = "N", default_value_t = crate::ops::cycle::MAX_RESUMES)]
    pub max_resumes: u32,

    /// A reset further out than this is still waited for, but reported.
    #[arg(long, value_name = "DURATION", default_value = "168h", value_parser = parse_duration)]
    pub max_reset: Duration,

    /// Also take due runs from this remote (fetched before every pass): several machines and
    /// CI runners can cycle one remote, and no run is driven twice.
    #[arg(long, value_name = "NAME")]
    pub remote: Option<String>,

    /// How often a waiting cycle looks for new work (queued runs, crashes).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub interval: Duration,

    /// Say what would be done, and why; start nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Print what was decided and done as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    crate::duration::parse(text)
}

fn parse_time(text: &str) -> Result<Timestamp, String> {
    if let Ok(at) = text.parse::<Timestamp>() {
        return Ok(at);
    }
    let civil: jiff::civil::DateTime = text
        .parse()
        .map_err(|_| format!("`{text}` is neither RFC 3339 nor `YYYY-MM-DD HH:MM`"))?;
    civil
        .to_zoned(jiff::tz::TimeZone::system())
        .map(|z| z.timestamp())
        .map_err(|e| format!("`{text}`: {e}"))
}

pub fn cmd_cycle(cwd: &Path, args: CycleArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let ws = Workspace::open(cwd)?;
    let until = match (args.until, args.for_) {
        (Some(until), _) => Some(until),
        (None, Some(span)) => {
            let span = SignedDuration::try_from(span).unwrap_or(SignedDuration::MAX);
            Some(ws.store.now().checked_add(span).unwrap_or(Timestamp::MAX))
        }
        (None, None) => None,
    };
    let program = std::env::current_exe()
        .map_err(|err| CliError::input(format!("cannot find the running git-baton: {err}")))?;
    let options = CycleOptions {
        once: args.once,
        jobs: usize::from(args.jobs),
        until,
        max_resumes: args.max_resumes,
        max_reset: SignedDuration::try_from(args.max_reset).unwrap_or(SignedDuration::MAX),
        remote: args.remote,
        dry_run: args.dry_run,
        interval: args.interval,
        only: None,
        program,
    };
    let sink = super::Terminal::driving(false);
    let cycled = crate::ops::cycle::cycle(&ws, &options, &sink)?;
    if args.json {
        super::write_json(out, &CycleJson::of(&ws, &cycled));
    }
    Ok(if cycled.interrupted {
        Ending::Driven(crate::run::Driven::Interrupted)
    } else {
        Ending::Done
    })
}

/// `cycle --json`.
#[derive(Serialize)]
struct CycleJson {
    schema_version: u32,
    /// The resumes started, in order, with how each exited and the run's status after it.
    resumed: Vec<ResumedJson>,
    /// The last decision about every run that is not in review or finished.
    decisions: Vec<DecisionJson>,
    interrupted: bool,
}

#[derive(Serialize)]
struct ResumedJson {
    run: String,
    exit_code: Option<i32>,
    status: Option<crate::state::RunStatus>,
}

#[derive(Serialize)]
struct DecisionJson {
    run: String,
    /// `resume`, `wait` or `skip`.
    action: &'static str,
    /// For `wait`: when the run is due; absent when only a person can take it further.
    #[serde(skip_serializing_if = "Option::is_none")]
    until: Option<Timestamp>,
    /// For `resume` by a fallback actor: that actor.
    #[serde(skip_serializing_if = "Option::is_none")]
    actor: Option<String>,
    why: String,
}

impl CycleJson {
    fn of(ws: &Workspace, cycled: &Cycled) -> CycleJson {
        CycleJson {
            schema_version: 1,
            resumed: cycled
                .resumed
                .iter()
                .map(|(id, code)| ResumedJson {
                    run: id.to_string(),
                    exit_code: *code,
                    status: ws.store.load(id).ok().map(|s| s.status()),
                })
                .collect(),
            decisions: cycled
                .decisions
                .iter()
                .map(|(id, d)| {
                    let run = id.to_string();
                    match d {
                        Decision::Resume { actor, why } => DecisionJson {
                            run,
                            action: "resume",
                            until: None,
                            actor: actor.as_ref().map(|(_, a)| a.clone()),
                            why: why.clone(),
                        },
                        Decision::Wait { until, why } => DecisionJson {
                            run,
                            action: "wait",
                            until: *until,
                            actor: None,
                            why: why.clone(),
                        },
                        Decision::Skip { why } => DecisionJson {
                            run,
                            action: "skip",
                            until: None,
                            actor: None,
                            why: why.clone(),
                        },
                    }
                })
                .collect(),
            interrupted: cycled.interrupted,
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: super::CycleArgs,
    }

    /// The defaults the help shows are the ones every cycle uses (`run PLAN…`'s too).
    #[test]
    fn the_defaults_are_the_operations() {
        let args = Cli::parse_from(["cycle"]).args;
        assert_eq!(args.max_resumes, crate::ops::cycle::MAX_RESUMES);
        assert_eq!(
            jiff::SignedDuration::try_from(args.max_reset).unwrap(),
            crate::ops::cycle::MAX_RESET
        );
        assert_eq!(args.interval, crate::ops::cycle::INTERVAL);
        assert_eq!(args.jobs, 1);
    }
}
