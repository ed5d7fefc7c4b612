//! What `git baton cycle` does with each run, now: the scheduler's rule, pure (no I/O, no
//! clock). `ops::cycle` reads the runs and the time, asks [`decide`], and drives what is due
//! through `git baton resume`, which checks the run's own facts again under its lock.
//!
//! **Holds.** A rate limit holds an *account* — by default the actor's name, or the `account:`
//! several actors share in `.baton.yml` — until its reset. The hold is read from what the runs
//! already record: for each account, the attempt that ended last across every run; if it ended
//! rate limited with a known reset still ahead, the account is on hold until then. A later
//! attempt on the account that was not rate limited lifts it: the limit was over. A reset whose
//! words could not be made an instant holds nothing (there is no end to wait for); the run it
//! ended waits for a person.
//!
//! **Due.** A run is due when it is `queued`, crashed (it says `running` or `pending` and
//! nothing holds its lock), interrupted but not by a person (a crash, or the stop of the cycle
//! that drove it), or rate limited past its reset; and the actor its next attempt would use is
//! not on hold — or a `fallback:` actor of that stage is not, which the resume then uses. A run
//! held by hand, stopped or paused by hand, failed, blocked, stopped by its timeout, in review
//! or finished is not cycle's to start; neither is one resumed `max_resumes` times by cycle
//! without a stage succeeding.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};

use crate::state::{Cause, Outcome, RunState, RunStatus};

/// What decides, besides the runs.
#[derive(Debug, Clone)]
pub struct Rules {
    /// Resumes by cycle without a stage succeeding, after which the run waits for a person.
    pub max_resumes: u32,
    /// A reset further out than this is still held, but reported as suspicious.
    pub max_reset: SignedDuration,
    /// The account of each actor that names one (`account:`); the others are their own.
    pub accounts: BTreeMap<String, String>,
}

impl Rules {
    /// The rules with `config`'s accounts (`account:` of its actors); without a configuration,
    /// each actor is its own account.
    pub fn of(
        config: Option<&crate::config::Config>,
        max_resumes: u32,
        max_reset: SignedDuration,
    ) -> Rules {
        Rules {
            max_resumes,
            max_reset,
            accounts: config
                .iter()
                .flat_map(|config| &config.actors)
                .filter_map(|(name, actor)| Some((name.clone(), actor.account.clone()?)))
                .collect(),
        }
    }

    /// The account an actor's limits count against.
    pub fn account<'a>(&'a self, actor: &'a str) -> &'a str {
        self.accounts.get(actor).map_or(actor, String::as_str)
    }
}

/// A run as the scheduler sees it.
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    pub state: &'a RunState,
    /// It says `running` or `pending` and nothing holds its lock, here or under a lease.
    pub stale: bool,
    /// Something drives it right now: its lock here, or a lease in force elsewhere.
    pub busy: bool,
}

/// An account on hold: until when, and what says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    pub until: Timestamp,
    /// The run and actor of the rate-limited attempt, and the reset as the agent wrote it.
    pub run: String,
    pub actor: String,
    pub text: String,
}

/// The accounts on hold at `now`, by account.
pub fn holds(runs: &[Seen], rules: &Rules, now: Timestamp) -> BTreeMap<String, Hold> {
    // The attempt that ended last on each account.
    let mut last: BTreeMap<&str, (Timestamp, &RunState, &crate::state::Attempt)> = BTreeMap::new();
    for seen in runs {
        for attempt in seen.state.attempts() {
            let Some(ended) = attempt.ended_at else {
                continue;
            };
            let account = rules.account(&attempt.actor);
            if last.get(account).is_none_or(|(at, _, _)| ended > *at) {
                last.insert(account, (ended, seen.state, attempt));
            }
        }
    }
    last.into_iter()
        .filter_map(|(account, (_, state, attempt))| {
            if attempt.outcome != Some(Outcome::RateLimited) {
                return None;
            }
            let reset = attempt.agent.as_ref()?.rate_limit_reset.as_ref()?;
            let until = reset.at.filter(|at| *at > now)?;
            Some((
                account.to_owned(),
                Hold {
                    until,
                    run: state.run_id.to_string(),
                    actor: attempt.actor.clone(),
                    text: reset.text.clone(),
                },
            ))
        })
        .collect()
}

/// The hold the next attempt of `state` waits for: the one on the account of its next stage's
/// actor, with that actor. `None` for a settled run, or when that account is not on hold.
pub fn waiting_for<'h>(
    state: &RunState,
    holds: &'h BTreeMap<String, Hold>,
    rules: &Rules,
) -> Option<(String, &'h Hold)> {
    if matches!(state.status(), RunStatus::Review | RunStatus::Finished) {
        return None;
    }
    let actor = next_actor(state)?;
    holds
        .get(rules.account(actor))
        .map(|hold| (actor.to_owned(), hold))
}

/// What to do with one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Resume it now (with this `--actor STAGE=NAME` when a fallback actor takes over).
    Resume {
        actor: Option<(String, String)>,
        why: String,
    },
    /// Due once `until` has passed; `None`: only a person can take it further.
    Wait {
        until: Option<Timestamp>,
        why: String,
    },
    /// Not cycle's to start.
    Skip { why: String },
}

impl Decision {
    fn wait(until: Option<Timestamp>, why: impl Into<String>) -> Decision {
        Decision::Wait {
            until,
            why: why.into(),
        }
    }

    fn skip(why: impl Into<String>) -> Decision {
        Decision::Skip { why: why.into() }
    }
}

/// What cycle does with `run` at `now`, given the holds of every account.
pub fn decide(
    run: &Seen,
    holds: &BTreeMap<String, Hold>,
    rules: &Rules,
    now: Timestamp,
) -> Decision {
    let state = run.state;
    let why = match state.status() {
        RunStatus::Review | RunStatus::Finished => {
            return Decision::skip(format!("{}: nothing to resume", state.status()));
        }
        _ if run.busy => return Decision::skip("it is being driven now"),
        _ if state.cycle().held.is_some() => {
            return Decision::skip(held_words(state));
        }
        RunStatus::Running | RunStatus::Pending if !run.stale => {
            return Decision::skip("it is being driven now");
        }
        RunStatus::Running | RunStatus::Pending => {
            "its driver died (nothing holds its lock)".to_owned()
        }
        RunStatus::Queued => "queued".to_owned(),
        RunStatus::Paused => return Decision::skip("paused by hand"),
        RunStatus::Interrupted if state.stopped_by_hand() => {
            return Decision::skip("stopped by hand");
        }
        RunStatus::Interrupted => match state.latest_attempt().map(|(_, a)| a.cause) {
            Some(Some(Cause::Timeout)) if state.cycle().stopped.is_none() => {
                return Decision::wait(
                    None,
                    "the actor's timeout stopped it: a person decides whether to give it longer",
                );
            }
            _ if state.cycle().stopped.is_some() => "the cycle driving it was stopped".to_owned(),
            _ => "its driver died".to_owned(),
        },
        RunStatus::RateLimited => match rate_limit_due(state, rules, now) {
            Ok(why) => why,
            Err(wait) => {
                // The run's own reset is ahead; a fallback actor not on hold may still take it.
                if let Some(decision) = fallback(state, holds, rules) {
                    return decision;
                }
                return wait;
            }
        },
        RunStatus::Failed | RunStatus::Blocked => {
            return Decision::skip(format!("{}: a person decides", state.status()));
        }
    };
    if state.cycle().resumes >= rules.max_resumes {
        return Decision::wait(
            None,
            format!(
                "cycle resumed it {} times without a stage succeeding (--max-resumes {})",
                state.cycle().resumes,
                rules.max_resumes
            ),
        );
    }
    let Some(primary) = next_actor(state) else {
        return Decision::Resume { actor: None, why };
    };
    match holds.get(rules.account(primary)) {
        None => Decision::Resume { actor: None, why },
        Some(hold) => fallback(state, holds, rules).unwrap_or_else(|| {
            Decision::wait(
                Some(hold.until),
                format!(
                    "{why}, but {primary} is on hold until {} (rate limited in run {}{})",
                    hold.until,
                    hold.run,
                    words(&hold.text)
                ),
            )
        }),
    }
}

/// `Ok(why)` when the run's own rate limit has passed; `Err(wait)` when it has not, or cannot
/// be known.
fn rate_limit_due(state: &RunState, rules: &Rules, now: Timestamp) -> Result<String, Decision> {
    let reset = state
        .latest_attempt()
        .and_then(|(_, a)| a.agent.as_ref())
        .and_then(|agent| agent.rate_limit_reset.as_ref());
    let Some(reset) = reset else {
        return Err(Decision::wait(
            None,
            "rate limited, and the agent said nothing of when the limit resets: resume it by hand",
        ));
    };
    let Some(at) = reset.at else {
        return Err(Decision::wait(
            None,
            format!(
                "rate limited, and its reset `{}` names no instant: resume it by hand",
                reset.text
            ),
        ));
    };
    if at > now {
        let far = now
            .checked_add(rules.max_reset)
            .is_ok_and(|latest| at > latest);
        let warning = if far {
            format!(
                "; that is beyond the {} maximum: check it (--max-reset)",
                format_args!("{:#}", rules.max_reset)
            )
        } else {
            String::new()
        };
        return Err(Decision::wait(
            Some(at),
            format!("rate limited until {at}{}{warning}", words(&reset.text)),
        ));
    }
    Ok(format!("its rate limit reset at {at}"))
}

/// A resume with the first `fallback:` actor of the next stage whose account is not on hold.
fn fallback(state: &RunState, holds: &BTreeMap<String, Hold>, rules: &Rules) -> Option<Decision> {
    let index = state.next_stage()?;
    let stage = &state.stages()[index];
    let free = stage
        .fallback
        .iter()
        .find(|actor| !holds.contains_key(rules.account(actor)))?;
    Some(Decision::Resume {
        actor: Some((stage.name.clone(), free.clone())),
        why: format!(
            "{} is on hold; its fallback {free} is not",
            stage.configured_actor
        ),
    })
}

/// The actor the stage to run next is configured with.
fn next_actor(state: &RunState) -> Option<&str> {
    let stage = &state.stages()[state.next_stage()?];
    Some(stage.configured_actor.as_str())
}

fn held_words(state: &RunState) -> String {
    let held = state.cycle().held.as_ref();
    let since = held.map(|h| h.at.to_string()).unwrap_or_default();
    match held.and_then(|h| h.reason.as_deref()) {
        Some(reason) => format!("held by hand since {since}: {reason}"),
        None => format!("held by hand since {since}"),
    }
}

fn words(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(", \"resets {text}\"")
    }
}

/// When the next run that waits for a time becomes due: the earliest such time.
pub fn next_due(decisions: &[Decision]) -> Option<Timestamp> {
    decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Wait { until, .. } => *until,
            _ => None,
        })
        .min()
}

#[cfg(test)]
mod tests;
