//! `git baton push`: publish runs to a remote, as one compare-and-swap.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, Context, Outcome};
use crate::run::remote::{self, Publication, Sync};
use crate::state::transition::{self, Event};
use crate::term::errln;

/// Publish runs to a remote: their branch, record and attempt snapshots.
///
/// One atomic push, which the remote accepts only if every ref still holds what this clone last
/// saw there (fetched or pushed): of two clones that saw the same record, one wins and the other
/// exits 3, changing nothing. A published run is driven under a lease from then on, so that no
/// two machines drive it at once. The branch is published, never merged.
#[derive(Debug, Args)]
pub struct PushArgs {
    /// The runs (ids or unique prefixes); when none is named, every run of this clone that is
    /// published already.
    #[arg(value_name = "RUN")]
    pub runs: Vec<String>,

    /// The remote (default: where each run was published, else `remote:` of .baton.yml, else
    /// origin).
    #[arg(long, value_name = "NAME")]
    pub remote: Option<String>,
}

pub fn cmd_push(cwd: &Path, args: PushArgs, _out: &mut dyn Write) -> Result<Outcome, CliError> {
    let ctx = Context::open(cwd)?;
    let config = ctx.config()?;
    let named = !args.runs.is_empty();
    let ids: Vec<_> = match named {
        // Publishing is a choice made per run: without names, only what is published already.
        false => ctx
            .store
            .list()?
            .into_iter()
            .filter(|id| ctx.store.load(id).is_ok_and(|s| s.remote().is_some()))
            .collect(),
        true => args
            .runs
            .iter()
            .map(|name| ctx.resolve(name))
            .collect::<Result<_, _>>()?,
    };
    // Every run is locked, so that no save here slips between the record pushed and the one
    // kept; a run driven here right now is busy (its driver publishes it itself).
    // How each record stands against its remote, asked once, under the lock.
    let mut held = Vec::new();
    for id in &ids {
        let lock = ctx.store.lock(id, "git baton push")?;
        let state = ctx.store.load(id)?;
        let remote = args
            .remote
            .clone()
            .or_else(|| state.remote().map(str::to_owned))
            .unwrap_or_else(|| config.remote.clone());
        let sync = remote::sync_of(&ctx.repo, &state.run_id, &remote)?;
        // Gone from the remote since (`clean --remote` elsewhere): not brought back unless
        // named.
        if !named && sync == Sync::LocalOnly {
            errln!("note: {id} is no longer on {remote}; name it to publish it again");
            continue;
        }
        // A run whose latest attempt's work no snapshot holds would be rebuilt elsewhere
        // without it.
        crate::run::unrecorded::refuse_handoff(&state, None)?;
        held.push((lock, state, remote, sync));
    }
    if held.is_empty() {
        return Err(CliError::input("no run of this clone is published yet")
            .hinted("name the runs to publish: `git baton push <RUN>…`"));
    }
    let mut by_remote: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    for (i, (_, _, remote, _)) in held.iter().enumerate() {
        by_remote.entry(remote.clone()).or_default().push(i);
    }
    for (remote, indexes) in by_remote {
        let now = ctx.store.now();
        let mut states = Vec::new();
        let mut before = Vec::new();
        for &i in &indexes {
            let (_, state, _, sync) = &held[i];
            let run = state.run_id.to_string();
            match *sync {
                Sync::Behind | Sync::RemoteOnly => {
                    return Err(crate::run::RunError::Behind { run, remote }.into());
                }
                Sync::Diverged => {
                    return Err(crate::run::RunError::Diverged { run, remote }.into());
                }
                sync => before.push(sync),
            }
            let state = match state.remote() == Some(remote.as_str()) {
                true => state.clone(),
                false => transition::apply(
                    state,
                    Event::Published {
                        remote: remote.clone(),
                    },
                    now,
                )
                .map_err(crate::run::RunError::from)?,
            };
            states.push(state);
        }
        let publications: Vec<Publication> = indexes
            .iter()
            .zip(&states)
            .map(|(&i, state)| Publication {
                dir: held[i].0.dir(),
                state,
            })
            .collect();
        remote::publish(&ctx.repo, &remote, &publications)?;
        for (state, before) in states.iter().zip(before) {
            match before {
                Sync::UpToDate => errln!("{} is up to date on {remote}", state.run_id),
                _ => errln!("pushed {} to {remote} ({})", state.run_id, state.status()),
            }
        }
    }
    Ok(Outcome::Done)
}
