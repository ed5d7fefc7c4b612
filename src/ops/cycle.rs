//! `cycle`: resume every run that is due, as `git baton resume` would, until nothing is.
//!
//! Which runs are due is [`crate::run::schedule`]'s rule. Each due run is driven by a `git
//! baton resume RUN --by-cycle N` child process — the same command a person types, so the same
//! session, gate, prompts, provenance and lease — in a process group of its own, at most
//! `jobs` at once. The child checks the run's own facts again under its lock (a run held or
//! stopped by a person since this process looked is refused there) and counts the resume; two
//! machines cycling one remote never drive one run twice because the child takes the run's
//! lease through the remote's compare-and-swap, and the loser exits busy.
//!
//! SIGINT, SIGTERM or SIGHUP stop the cycle: no new run starts, every child is sent SIGTERM —
//! which stops its run at a safe point, as `git baton stop` does — and is waited for; a run
//! left interrupted that way is marked as stopped by its cycle, not by a person, so that the
//! next cycle resumes it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};

use crate::run::note::{CycleNote, Note, Sink};
use crate::run::schedule::{self, Decision, Rules, Seen};
use crate::state::{RunId, RunState};

use super::{Result, Workspace};

/// How often the cycle looks at its resumes and at signals while it waits.
const POLL: Duration = Duration::from_millis(100);
/// The defaults of `git baton cycle`'s options, for every cycle (`run PLAN…` drives one too).
pub const MAX_RESUMES: u32 = 3;
pub const MAX_RESET: SignedDuration = SignedDuration::from_hours(7 * 24);
pub const INTERVAL: Duration = Duration::from_secs(60);
/// How long the stopped children get to stop their runs before they are killed.
const STOP_GRACE: Duration = Duration::from_secs(120);

pub struct CycleOptions {
    /// One pass: resume what is due now, wait for those runs, and return.
    pub once: bool,
    /// Runs driven at once.
    pub jobs: usize,
    /// Start nothing after this; the runs started before are driven to their end.
    pub until: Option<Timestamp>,
    /// Resumes by cycle without a stage succeeding before a run waits for a person.
    pub max_resumes: u32,
    /// A reset further out than this is held but reported.
    pub max_reset: SignedDuration,
    /// Take due runs from this remote too: fetched before every pass.
    pub remote: Option<String>,
    /// Say what would be done, and do nothing.
    pub dry_run: bool,
    /// How often the waiting cycle looks for new work (queued runs, crashes).
    pub interval: Duration,
    /// Only these runs (`run --jobs`): the others are left alone.
    pub only: Option<Vec<RunId>>,
    /// The git-baton to start for each resume.
    pub program: PathBuf,
}

/// What a cycle did.
#[derive(Debug, Default)]
pub struct Cycled {
    /// Each run resumed, with how its resume exited (`None`: killed by a signal).
    pub resumed: Vec<(RunId, Option<i32>)>,
    /// The decisions of the last pass, by run.
    pub decisions: BTreeMap<RunId, Decision>,
    /// A signal stopped the cycle.
    pub interrupted: bool,
}

/// One resume this cycle drives.
struct Driving<'scope> {
    id: RunId,
    child: Child,
    reader: Option<std::thread::ScopedJoinHandle<'scope, ()>>,
}

/// Runs the cycle until it is done (`once`), its time is up, or a signal stops it.
pub fn cycle(ws: &Workspace, options: &CycleOptions, sink: &dyn Sink) -> Result<Cycled> {
    let config = ws.config()?;
    let interrupted = crate::exec::interrupt_flag()?;
    let rules = Rules::of(Some(&config), options.max_resumes, options.max_reset);
    let main_worktree = ws.main_worktree()?;
    std::thread::scope(|scope| {
        let mut driving: Vec<Driving> = Vec::new();
        let passes = Passes {
            ended: std::sync::mpsc::channel(),
            ws,
            options,
            rules: &rules,
            interrupted: &interrupted,
            sink,
        };
        let result = passes.run(scope, &main_worktree, &mut driving);
        if result.is_err() {
            // An error of the cycle itself: what it started is stopped, not orphaned.
            stop_all(&mut driving);
            for d in &mut driving {
                let _ = d.child.wait();
            }
        }
        result
    })
}

struct Passes<'a> {
    /// Each resume's stderr reader says here when the resume closed it (it is ending), so
    /// that the cycle wakes at once instead of at its next poll.
    ended: (Sender<()>, Receiver<()>),
    ws: &'a Workspace,
    options: &'a CycleOptions,
    rules: &'a Rules,
    interrupted: &'a AtomicBool,
    sink: &'a dyn Sink,
}

impl<'a> Passes<'a> {
    fn run<'scope>(
        &self,
        scope: &'scope std::thread::Scope<'scope, 'a>,
        main_worktree: &std::path::Path,
        driving: &mut Vec<Driving<'scope>>,
    ) -> Result<Cycled> {
        let (ws, options, sink) = (self.ws, self.options, self.sink);
        let mut cycled = Cycled::default();
        let mut said: BTreeMap<RunId, Decision> = BTreeMap::new();
        // The runs this pass already resumed: each at most once per pass.
        let mut started: BTreeSet<RunId> = BTreeSet::new();
        // The runs whose resume refused them (exit 2: bad input or environment, or the run's
        // own facts under its lock): not retried by this cycle, which would only repeat it.
        let mut refused: BTreeSet<RunId> = BTreeSet::new();
        let mut stopping: Option<Instant> = None;
        let mut loaded = Loaded::default();
        loop {
            if self.interrupted.load(Ordering::Acquire) && stopping.is_none() {
                stopping = Some(Instant::now());
                cycled.interrupted = true;
                sink.note(Note::Cycle(CycleNote::Stopping {
                    driving: driving.len(),
                }));
                stop_all(driving);
            }
            reap(ws, driving, &mut cycled, stopping, sink);
            refused.extend(
                cycled
                    .resumed
                    .iter()
                    .filter(|(_, code)| *code == Some(2))
                    .map(|(id, _)| id.clone()),
            );
            if stopping.is_none() && driving.len() >= options.jobs.max(1) {
                // Every slot is taken: nothing to decide until one frees.
                self.wait_for_an_end();
                continue;
            }
            let now = ws.store.now();
            let time_up = options.until.is_some_and(|until| now >= until);
            if stopping.is_some() || time_up {
                if driving.is_empty() {
                    break;
                }
                self.wait_for_an_end();
                continue;
            }
            if let Some(remote) = &options.remote
                && driving.is_empty()
                && started.is_empty()
            {
                crate::run::remote::fetch(&ws.repo, remote)?;
            }
            let decisions = decide_all(ws, self.rules, options, now, &mut loaded)?;
            for (id, decision) in &decisions {
                if said.get(id) != Some(decision) && !started.contains(id) {
                    sink.note(Note::Cycle(CycleNote::Decided {
                        run: id.to_string(),
                        decision: decision.clone(),
                    }));
                    said.insert(id.clone(), decision.clone());
                }
            }
            let next = decisions
                .iter()
                .filter(|(id, _)| !started.contains(*id) && !refused.contains(*id))
                .find_map(|(id, d)| match d {
                    Decision::Resume { actor, .. } => Some((id.clone(), actor.clone())),
                    _ => None,
                });
            cycled.decisions = decisions;
            if options.dry_run {
                break;
            }
            if let Some((id, actor)) = next
                && driving.len() < options.jobs.max(1)
            {
                driving.push(spawn(
                    scope,
                    options,
                    main_worktree,
                    (&id, actor.as_ref()),
                    self.ended.0.clone(),
                    sink,
                )?);
                started.insert(id);
                if driving.len() < options.jobs.max(1) {
                    // Decide again at once: the next due run may fit too.
                    continue;
                }
            }
            if !driving.is_empty() {
                self.wait_for_an_end();
                continue;
            }
            // Nothing runs and nothing more is due: the pass is over.
            if options.once || options.only.is_some() {
                break;
            }
            let wake = next_wake(&cycled.decisions, options, now);
            sink.note(Note::Cycle(CycleNote::Sleeping { until: wake }));
            started.clear();
            while ws.store.now() < wake && !self.interrupted.load(Ordering::Acquire) {
                std::thread::sleep(POLL);
            }
        }
        Ok(cycled)
    }

    /// Until a resume closes its stderr (it is ending) or a poll interval passes (for signals).
    fn wait_for_an_end(&self) {
        let _ = self.ended.1.recv_timeout(POLL);
    }
}

/// When the waiting cycle next looks: the next run's due time, or the interval, whichever is
/// first, and never after `until`.
fn next_wake(
    decisions: &BTreeMap<RunId, Decision>,
    options: &CycleOptions,
    now: Timestamp,
) -> Timestamp {
    let interval = SignedDuration::try_from(options.interval).unwrap_or(SignedDuration::MAX);
    let mut wake = now.checked_add(interval).unwrap_or(Timestamp::MAX);
    let waits: Vec<Decision> = decisions.values().cloned().collect();
    if let Some(due) = schedule::next_due(&waits) {
        wake = wake.min(due);
    }
    if let Some(until) = options.until {
        wake = wake.min(until);
    }
    wake
}

/// Every run of this clone, and (as last fetched) of its remotes, with a decision each, oldest
/// first. Runs in review or finished are left out: there is nothing to say of them.
fn decide_all(
    ws: &Workspace,
    rules: &Rules,
    options: &CycleOptions,
    now: Timestamp,
    cache: &mut Loaded,
) -> Result<BTreeMap<RunId, Decision>> {
    let mut states: Vec<(RunState, bool, bool)> = Vec::new();
    let mut seen_ids: BTreeSet<RunId> = BTreeSet::new();
    for id in ws.store.list()? {
        // A run whose state cannot be read is for `doctor`, not for cycle.
        let Some(state) = cache.load(ws, &id) else {
            continue;
        };
        // Settled: only its attempts count, for the holds; nothing drives it to ask about.
        if settled(&state) && options.remote.is_none() {
            seen_ids.insert(id);
            states.push((state, false, false));
            continue;
        }
        // A copy the remote has moved past (another machine drove the run since) is judged as
        // the remote has it: else a run finished elsewhere looks due here, and a rate limit met
        // elsewhere holds nothing here.
        if let Some(remote) = &options.remote
            && let Ok(crate::run::remote::Standing::Behind) =
                crate::run::remote::sync_of(&ws.repo, id.as_str(), remote)
            && let Ok(Some(theirs)) = crate::run::remote::tracked_state(&ws.repo, remote, &id)
        {
            let busy =
                matches!(ws.store.holder(&id), Ok(Some(_))) || ws.store.driven_elsewhere(&theirs);
            let stale = !busy && running(&theirs);
            seen_ids.insert(id);
            states.push((theirs, stale, busy));
            continue;
        }
        let busy = matches!(ws.store.holder(&id), Ok(Some(_))) || ws.store.driven_elsewhere(&state);
        let stale = ws.store.is_stale(&state);
        seen_ids.insert(id);
        states.push((state, stale, busy));
    }
    if options.remote.is_some() {
        for (remote, id) in crate::run::remote::tracked_runs(&ws.repo)? {
            if Some(&remote) != options.remote.as_ref() || seen_ids.contains(&id) {
                continue;
            }
            let Ok(Some(state)) = crate::run::remote::tracked_state(&ws.repo, &remote, &id) else {
                continue;
            };
            let busy = ws.store.driven_elsewhere(&state);
            // Only there, `running` and under no lease in force: its driver died.
            let stale = !busy && running(&state);
            seen_ids.insert(id);
            states.push((state, stale, busy));
        }
    }
    states.sort_by_key(|(s, _, _)| (s.created_at, s.run_id.clone()));
    let seen: Vec<Seen> = states
        .iter()
        .map(|(state, stale, busy)| Seen {
            state,
            stale: *stale,
            busy: *busy,
        })
        .collect();
    let holds = schedule::holds(&seen, rules, now);
    Ok(seen
        .iter()
        .filter(|s| !settled(s.state))
        .filter(|s| {
            options
                .only
                .as_ref()
                .is_none_or(|only| only.contains(&s.state.run_id))
        })
        .map(|s| {
            (
                s.state.run_id.clone(),
                schedule::decide(s, &holds, rules, now),
            )
        })
        .collect())
}

/// It says `running` or `pending`: driven now, or its driver died.
fn running(state: &RunState) -> bool {
    matches!(
        state.status(),
        crate::state::RunStatus::Running | crate::state::RunStatus::Pending
    )
}

fn settled(state: &RunState) -> bool {
    matches!(
        state.status(),
        crate::state::RunStatus::Review | crate::state::RunStatus::Finished
    )
}

/// The runs' states as last read, read again only when `state.json` changed (every save
/// replaces it: a new inode, size or modification time). A pass decides again each time a
/// resume ends, over every run of the clone: without this, each decision parsed every
/// `state.json` anew, a cost per resume that grew with the runs kept.
#[derive(Default)]
struct Loaded {
    states: BTreeMap<RunId, ((u64, u64, i128), RunState)>,
}

impl Loaded {
    fn load(&mut self, ws: &Workspace, id: &RunId) -> Option<RunState> {
        use std::os::unix::fs::MetadataExt;
        let path = ws.store.run_dir(id).join("state.json");
        let meta = std::fs::metadata(&path).ok()?;
        let stamp = (
            meta.ino(),
            meta.len(),
            i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        );
        if let Some((seen, state)) = self.states.get(id)
            && *seen == stamp
        {
            return Some(state.clone());
        }
        let state = ws.store.load(id).ok()?;
        self.states.insert(id.clone(), (stamp, state.clone()));
        Some(state)
    }
}

/// Starts `git baton resume ID --by-cycle N` in a process group of its own, its stderr handed
/// to the sink line by line, tagged with the run, from a thread of `scope`.
fn spawn<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    options: &CycleOptions,
    main_worktree: &std::path::Path,
    (id, actor): (&RunId, Option<&(String, String)>),
    ended: Sender<()>,
    sink: &'env dyn Sink,
) -> Result<Driving<'scope>> {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(&options.program);
    command
        .arg("resume")
        .arg(id.as_str())
        .arg("--by-cycle")
        .arg(options.max_resumes.to_string())
        .current_dir(main_worktree)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        // Its own group: a terminal's ^C reaches the cycle, which stops its children in order.
        .process_group(0);
    if let Some((stage, actor)) = actor {
        command.arg("--actor").arg(format!("{stage}={actor}"));
    }
    sink.note(Note::Cycle(CycleNote::Resuming {
        run: id.to_string(),
        actor: actor.map(|(_, a)| a.clone()),
    }));
    let mut child = command.spawn().map_err(|source| Error::Spawn {
        program: options.program.clone(),
        source,
    })?;
    let reader = child.stderr.take().map(|stderr| {
        let run = id.to_string();
        scope.spawn(move || {
            for line in BufReader::new(stderr)
                .lines()
                .map_while(std::io::Result::ok)
            {
                sink.note(Note::Cycle(CycleNote::Said {
                    run: run.clone(),
                    line,
                }));
            }
            let _ = ended.send(());
        })
    });
    Ok(Driving {
        id: id.clone(),
        child,
        reader,
    })
}

/// Sends SIGTERM to every child's process group: each stops its run at a safe point.
fn stop_all(driving: &mut [Driving]) {
    for d in driving.iter() {
        if let Some(pid) = rustix::process::Pid::from_raw(d.child.id() as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::TERM);
        }
    }
}

/// Collects the children that ended: says how, and marks a run its cycle's stop interrupted.
/// Children that outlive [`STOP_GRACE`] after a stop are killed (their runs are then crashed,
/// which the next cycle recovers).
fn reap(
    ws: &Workspace,
    driving: &mut Vec<Driving>,
    cycled: &mut Cycled,
    stopping: Option<Instant>,
    sink: &dyn Sink,
) {
    let mut i = 0;
    while i < driving.len() {
        let ended = match driving[i].child.try_wait() {
            Ok(Some(status)) => Some(status.code()),
            // Its stderr is closed: the resume is exiting, and is waited for.
            Ok(None) if driving[i].reader.as_ref().is_some_and(|r| r.is_finished()) => {
                Some(driving[i].child.wait().ok().and_then(|s| s.code()))
            }
            Ok(None) => {
                if stopping.is_some_and(|at| at.elapsed() > STOP_GRACE) {
                    let _ = driving[i].child.kill();
                }
                None
            }
            Err(_) => Some(None),
        };
        let Some(code) = ended else {
            i += 1;
            continue;
        };
        let mut done = driving.swap_remove(i);
        let _ = done.child.wait();
        if let Some(reader) = done.reader.take() {
            let _ = reader.join();
        }
        let status = ws.store.load(&done.id).ok().map(|s| s.status());
        if stopping.is_some()
            && status == Some(crate::state::RunStatus::Interrupted)
            // The cycle's own stop, not a person's: the next cycle resumes the run.
            && let Err(err) = super::hold::mark(
                ws,
                done.id.as_str(),
                crate::state::Event::CycleStopped,
                "git baton cycle",
                sink,
            )
        {
            sink.note(Note::Cycle(CycleNote::NotMarked {
                run: done.id.to_string(),
                reason: err.to_string(),
            }));
        }
        sink.note(Note::Cycle(CycleNote::Ended {
            run: done.id.to_string(),
            code,
            status,
        }));
        cycled.resumed.push((done.id, code));
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot start {}: {source}", .program.display())]
    Spawn {
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
