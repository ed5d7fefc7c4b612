//! `resume`: continue a run from its RunState, catching up with its remote first.

use crate::run::note::{Note, Sink};
use crate::run::resume::{self, PrepareOptions as Prepare};
use crate::run::session::{self, Lookup, Open, Session};
use crate::state::transition::{self, Event};

use super::{Drove, Result, Workspace};

pub struct ResumeOptions<'a> {
    /// The run: its id or a unique prefix, of this clone or only on a remote.
    pub name: &'a str,
    /// `(stage, actor)`: the actor for the resumed attempt of that stage.
    pub actor: Option<(String, String)>,
    /// Re-create a missing worktree from the run's branch and last snapshot.
    pub recreate_worktree: bool,
    /// `git baton cycle` resumes the run, which it may have resumed this many times without a
    /// stage succeeding: the run's own facts (held, stopped by a person, the count) are checked
    /// again here, under its lock and lease, and the resume is counted.
    pub by_cycle: Option<u32>,
}

/// Resumes the run: catch up, lock, check that there is something to resume, take the lease
/// when it is published (or `sync: push` publishes it), recover a crash, drive.
pub fn resume(ws: &Workspace, options: &ResumeOptions, sink: &dyn Sink) -> Result<Drove> {
    let config = ws.config()?;
    let named = session::resolve(&ws.store, &ws.repo, options.name, Lookup::Remotes)?;
    sink.note(Note::Run {
        run: named.id().to_string(),
    });
    let main_worktree = ws.main_worktree()?;
    let here = ws.here(&config, &main_worktree);
    let open = Open {
        command: "git baton resume",
        catch_up: Some(&here),
        caught_up: session::caught_up_notes,
        check: transition::check_resumable,
    };
    let (mut session, mut state) = Session::open(&ws.repo, &ws.store, sink, &named, &open)?;
    let publish_to = state
        .remote()
        .map(str::to_owned)
        .or_else(|| config.sync_push.then(|| config.remote.clone()));
    if let Some(remote) = publish_to {
        session.take_lease(&mut state, &remote, config.lease, config.sync_push)?;
    }
    if let Some(max_resumes) = options.by_cycle {
        let counted = session.commit(&mut state, Event::CycleResumed { max_resumes });
        if counted.is_err() {
            session.release(&mut state)?;
        }
        counted?;
    }
    let prepare = Prepare {
        actor: options.actor.as_ref(),
        recreate_worktree: options.recreate_worktree,
    };
    let prepared = resume::prepare(&ws.repo, &config, &session, &mut state, &prepare);
    if prepared.is_err() {
        // Nothing will drive the run: the lease goes back at once, not when it expires.
        session.release(&mut state)?;
    }
    prepared?;
    let interrupted = crate::exec::interrupt_flag()?;
    let actor = options.actor.clone();
    let driven = super::drive::drive(ws, &config, &session, &mut state, actor, &interrupted)?;
    drop(session);
    Ok(Drove {
        state: Box::new(state),
        driven,
    })
}
