//! `git baton clean`: remove a run, or finish a removal that was cut short.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::args::RunArg;
use super::{CliError, Context, Outcome};
use crate::run::remote;
use crate::run::{RunError, lifecycle};
use crate::state::RunId;
use crate::state::store::{RunLock, StoreError, Unfinished};
use crate::term::errln;

/// Remove a run: its worktree, its attempt snapshots and its record. The branch stays.
///
/// An unfinished run is refused without --force, and so is a worktree holding changes its
/// branch does not have, because they may exist nowhere else. Naming a run whose removal was cut
/// short (`doctor` reports it) finishes that removal.
#[derive(Debug, Args)]
pub struct CleanArgs {
    #[command(flatten)]
    pub run: RunArg,

    /// Remove an unfinished run too, with any uncommitted work in its worktree, and a run whose
    /// state cannot be read or is missing.
    #[arg(long)]
    pub force: bool,

    /// Also delete the run's record and snapshots on a remote (`--remote` alone: where it was
    /// published; `--remote=NAME`: that one); its branch stays there too. Refused while another
    /// machine's lease on it holds, unless --force. A run only the remote has is removed there
    /// alone.
    #[arg(
        long,
        value_name = "NAME",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = ""
    )]
    pub remote: Option<String>,
}

pub fn cmd_clean(cwd: &Path, args: CleanArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let ctx = Context::open(cwd)?;
    let name = &args.run.run;
    let Some(remote) = &args.remote else {
        return clean_here(&ctx, name, args.force, out);
    };
    let (id, tracked_on) = remote::resolve(&ctx.store, &ctx.repo, name)?;
    let remote = match remote.as_str() {
        "" => match &tracked_on {
            Some(remote) => remote.clone(),
            None => match ctx.store.load(&id)?.remote() {
                Some(remote) => remote.to_owned(),
                None => ctx.config()?.remote,
            },
        },
        named => named.to_owned(),
    };
    // What may refuse is asked first — another machine's lease, then everything the local
    // removal checks — so that a refusal leaves both copies; the remote's goes last.
    remote::check_unleased(&ctx.repo, &id, &remote, args.force, ctx.store.now())?;
    if tracked_on.is_none() {
        clean_here(&ctx, &id, args.force, out)?;
    }
    match remote::unpublish(&ctx.repo, &id, &remote)? {
        true => errln!("removed run {id}'s record and snapshots from {remote}"),
        false => errln!("{remote} has no record of run {id}"),
    }
    Ok(Outcome::Done)
}

/// Removes the run `name` names from this clone (or finishes a removal cut short).
fn clean_here(
    ctx: &Context,
    name: &str,
    force: bool,
    out: &mut dyn Write,
) -> Result<Outcome, CliError> {
    let id = match ctx.store.resolve(name) {
        Ok(id) => id,
        Err(StoreError::Unknown(_)) if let Some(id) = removal_named(ctx, name) => {
            return finish_removal(ctx, &id, out);
        }
        Err(StoreError::Unknown(_)) if let Some(id) = headless_named(ctx, name) => {
            return clean_headless(ctx, &id, force, out);
        }
        Err(err) => return Err(err.into()),
    };
    let mut lock = ctx.store.lock(&id, "git baton clean")?;
    let branch = match ctx.store.load(&id) {
        Ok(state) => {
            lifecycle::clean(&ctx.repo, &ctx.store, &mut lock, &state, force)?;
            state.branch
        }
        Err(StoreError::Corrupt { .. } | StoreError::Io { .. }) if force => {
            // Where creation put the worktree, if the configuration still says.
            let worktree = match (ctx.main_worktree(), ctx.config()) {
                (Ok(main), Ok(config)) => Some(main.join(&config.worktree_root).join(&*id)),
                _ => None,
            };
            lifecycle::clean_unreadable(
                &ctx.repo,
                &ctx.store,
                &mut lock,
                &id,
                worktree.as_deref(),
            )?;
            format!("baton/{id}")
        }
        Err(err) => return Err(err.into()),
    };
    drop(lock);
    let _ = writeln!(
        out,
        "removed run {id}; branch {branch} is kept (`git branch -D {branch}` deletes it)"
    );
    Ok(Outcome::Done)
}

/// The run whose removal was cut short that `name` names (its id or a unique prefix).
fn removal_named(ctx: &Context, name: &str) -> Option<RunId> {
    let removals = ctx.store.unfinished().into_iter();
    only_one_named(
        removals
            .filter(|(what, _, _)| *what == Unfinished::Removal)
            .map(|(_, id, _)| id),
        name,
    )
}

/// The run directory without `state.json` that `name` names (its id or a unique prefix).
fn headless_named(ctx: &Context, name: &str) -> Option<RunId> {
    only_one_named(ctx.store.headless().into_iter().map(|(id, _)| id), name)
}

/// The one id of `ids` that `name` is a prefix of, if exactly one; an empty name names none, as
/// in [`crate::state::store::Store::resolve`].
fn only_one_named(ids: impl Iterator<Item = RunId>, name: &str) -> Option<RunId> {
    if name.is_empty() {
        return None;
    }
    let mut found: Vec<RunId> = ids.filter(|id| id.starts_with(name)).collect();
    (found.len() == 1).then(|| found.remove(0))
}

fn clean_headless(
    ctx: &Context,
    id: &RunId,
    force: bool,
    out: &mut dyn Write,
) -> Result<Outcome, CliError> {
    if !force {
        return Err(RunError::Headless {
            run: id.to_string(),
            dir: ctx.store.run_dir(id),
        }
        .into());
    }
    let mut lock = ctx.store.lock(id, "git baton clean")?;
    lifecycle::clean_headless(&ctx.repo, &ctx.store, &mut lock, id)?;
    drop(lock);
    let _ = writeln!(
        out,
        "removed what was left of run {id}; its worktree and branch, if any, are kept (`git baton doctor` reports them)"
    );
    Ok(Outcome::Done)
}

fn finish_removal(ctx: &Context, id: &RunId, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let dir = ctx.store.removal_dir(id);
    let lock = RunLock::acquire_in(&dir, id, "git baton clean", ctx.store.clock())?;
    let worktree = lifecycle::recorded_worktree(&ctx.store, id);
    lifecycle::finish_removal(&ctx.repo, &ctx.store, id, worktree.as_deref())?;
    drop(lock);
    let _ = writeln!(
        out,
        "finished removing run {id}; branch baton/{id} is kept (`git branch -D baton/{id}` deletes it)"
    );
    Ok(Outcome::Done)
}
