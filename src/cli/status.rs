//! `git baton status`: one run, for people or scripts.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, Ending, Listed, Workspace};
use crate::run::{remote, session};

/// Show one run (without RUN, the most recent).
///
/// Status, plan, branch, worktree, each stage with its attempts, the last error, coverage, and
/// the next command to type.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The run: its id or any unique prefix.
    #[arg(value_name = "RUN")]
    pub run: Option<String>,

    /// Print the RunState plus derived fields as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_status(cwd: &Path, args: StatusArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let ctx = Workspace::open(cwd)?;
    let (id, tracked_on) = match &args.run {
        Some(name) => {
            let named = session::resolve(&ctx.store, &ctx.repo, name, session::Lookup::Remotes)?;
            (named.id().clone(), named.tracked_on().map(str::to_owned))
        }
        None => (
            ctx.store.list()?.pop().ok_or_else(|| {
                CliError::input("there are no runs in this repository")
                    .hinted("start one with `git baton run <PLAN>`")
            })?,
            None,
        ),
    };
    let run = match tracked_on {
        Some(remote) => match remote::tracked_state(&ctx.repo, &remote, &id)? {
            Some(state) => Listed::on_remote(&ctx.repo, remote, state),
            None => return Err(crate::state::store::StoreError::Unknown(id.to_string()).into()),
        },
        None => Listed::Here(ctx.store.load(&id)?),
    };
    // Holds are read from every run: the attempt that ended last on an account decides.
    let holds = super::Holds::read(&ctx)?;
    if args.json {
        super::write_json(out, &run.json(&ctx, &holds));
        return Ok(Ending::Done);
    }
    let state = run.state();
    let now = ctx.store.now();
    let here = matches!(run, Listed::Here(_));
    let holder = here.then(|| ctx.store.holder(&id).ok().flatten()).flatten();
    let stale = here && ctx.store.is_stale(state);
    let mut text = crate::report::status::render(state, stale, holder.as_ref(), now);
    let sync = run.sync(&ctx.repo);
    let publication = crate::report::status::publication(
        state,
        sync.as_ref()
            .map(|(remote, sync)| (remote.as_str(), sync.name())),
        now,
        state
            .lease()
            .is_some_and(|lease| ctx.store.lease_in_force(lease)),
    );
    let publication = match &run {
        Listed::OnRemote { claim, .. } => publication + &claim_line(claim),
        Listed::Here(_) => publication,
    };
    // After the first line, which names the run and its status.
    if let Some(end) = text.find('\n') {
        text.insert_str(end + 1, &publication);
    }
    if let Some(hold) = holds.view(state) {
        text.push_str(&format!(
            "\n  hold: {} is on hold until {} (rate limited in run {}{}): `git baton cycle` starts \
             this run's next attempt after it\n",
            hold.actor,
            hold.until,
            hold.run,
            if hold.text.is_empty() {
                String::new()
            } else {
                format!(", \"resets {}\"", crate::report::escape::line(&hold.text))
            }
        ));
    }
    if !here {
        text.push_str(&format!(
            "\n  only on the remote: `git baton resume {id}` rebuilds it here\n"
        ));
    }
    let _ = out.write_all(text.as_bytes());
    Ok(Ending::Done)
}

/// What a run only a remote has is: that remote's claim, its coverage verified here or not.
fn claim_line(claim: &remote::RemoteClaim) -> String {
    match &claim.problem {
        Some(problem) if !claim.verified => format!(
            "  claim     the remote's record, not verified here: {}\n",
            crate::report::escape::line(problem)
        ),
        _ => "  claim     the remote's record, its coverage verified here\n".to_owned(),
    }
}
