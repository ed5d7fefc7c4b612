//! Runs: creating one (a single transaction) and driving its stages (the pipeline).
//!
//! The pipeline writes the RunState before an actor starts and after it ends, so that whatever
//! is killed when, the state on disk says what happened up to that point. It reads nothing but
//! the RunState and the run directory: everything it needs was recorded at creation.
//!
//! Every change of a run goes through its [`session`], which also holds the lease of a published
//! run; what the driver has to say goes to the session's [`note::Sink`]. Around the pipeline:
//! [`resume`] prepares a run to be driven again, [`request`] carries stop
//! and pause requests from other processes to the driver, [`lifecycle`] finishes and removes
//! runs, [`history`] reads the record of attempts back, and [`doctor`] checks every run. Errors
//! are [`RunError`]s; how driving ended is a [`Driven`]. Neither names an exit code: that is the
//! command layer's decision.

pub mod agent_side;
mod attempt_dir;
mod claims;
mod create;
pub mod doctor;
mod ending;
mod error;
mod fallback;
pub mod history;
mod in_the_way;
pub mod lifecycle;
pub mod note;
pub mod prompt;
pub mod record;
pub mod remote;
pub mod request;
pub mod resume;
pub mod session;
mod targets;
pub mod unrecorded;
mod worktree_root;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub use create::{CreateOptions, Created, PlanFile, create, read_plan};
pub use error::RunError;

use crate::coverage::{self, Report};
use crate::exec;
use crate::git::{CommitId, Repo, Scope};
use crate::plan::{Plan, Target};
use crate::state::store::{self, Store};
use crate::state::transition::{AttemptEnd, Event};
use crate::state::{Cause, FallbackFrom, Outcome, RunState, UsageSource};
use note::{Note, Sink};
use session::Session;

/// How driving a run ended; the command layer decides what each means for its exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driven {
    /// Every stage succeeded: the run waits for a person in `review`.
    Review,
    /// Paused at a stage boundary: on request, or after the `--stop-after` stage.
    Paused,
    /// Stopped by request before a stage started.
    Stopped,
    /// git-baton itself was interrupted by a signal, before a stage or during one.
    Interrupted,
    /// A stage ended with this outcome, other than success.
    StageEnded(Outcome),
}

/// The variables that lead to a terminal multiplexer's server already running outside the
/// attempt (tmux, screen). A process that server starts is the server's child, not the
/// attempt's: without them the actor's tools do not take the multiplexer for their own terminal
/// and target its session. (They can still reach a server through its default socket; see
/// docs/resume.md.)
const MULTIPLEXER_VARS: [&str; 3] = ["TMUX", "TMUX_PANE", "STY"];

/// What the actor's environment never holds: git's repository variables (`GIT_DIR`,
/// `GIT_INDEX_FILE`, …), with which its `git commit` would land in the repository and index they
/// name (the user's `main`) instead of the run's worktree, which it must find by discovery; and
/// [`MULTIPLEXER_VARS`].
fn actor_cleared_vars() -> Vec<&'static str> {
    let git = crate::git::local_env_vars().iter().copied();
    git.chain(MULTIPLEXER_VARS).collect()
}

/// The names of [`actor_cleared_vars`] set in our own environment — by `git --git-dir=… baton`,
/// a hook, a tmux pane, or the user. Only the names are recorded; the values may be private
/// paths.
fn inherited_cleared_vars() -> Vec<String> {
    actor_cleared_vars()
        .into_iter()
        .filter(|name| std::env::var_os(name).is_some())
        .map(|name| name.to_string())
        .collect()
}

/// Time between SIGTERM to an attempt's processes and SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// Files in the run directory that other processes create to ask the driver to stop or pause.
pub const STOP_REQUEST: &str = "stop.request";
pub const PAUSE_REQUEST: &str = "pause.request";
/// In an attempt's directory: the actor's pid, which is also its process group id.
pub const ACTOR_PID: &str = "actor.pid";
/// In an attempt's directory, written before the actor starts: the token that marks every
/// process of the attempt (see `exec::kill_leftovers`).
pub const ATTEMPT_TOKEN: &str = "attempt.token";

/// What driving a run needs besides its state.
pub struct Driver<'a> {
    pub repo: &'a Repo,
    pub store: &'a Store,
    pub config: &'a crate::config::Config,
    /// The run's session: its lock, its lease when published, and every change of its state.
    pub session: &'a Session<'a>,
    pub interrupted: &'a AtomicBool,
    /// An actor chosen for the next attempt of this stage (`resume --actor`).
    pub actor_override: Option<(String, String)>,
}

impl Driver<'_> {
    fn run_dir(&self) -> &Path {
        self.session.dir()
    }

    fn sink(&self) -> &dyn Sink {
        self.session.sink()
    }

    /// Commits `event`, now, before anything else happens.
    fn record(&self, state: &mut RunState, event: Event) -> Result<(), RunError> {
        self.session.commit(state, event)
    }

    fn record_at(
        &self,
        state: &mut RunState,
        event: Event,
        at: jiff::Timestamp,
    ) -> Result<(), RunError> {
        self.session.commit_at(state, event, at)
    }

    fn take_request(&self, name: &str) -> bool {
        std::fs::remove_file(self.run_dir().join(name)).is_ok()
    }

    /// [`Driver::drive`], with the lease kept beside it when the run is published.
    pub fn drive_published(&self, state: &mut RunState) -> Result<Driven, RunError> {
        self.session
            .keep_lease_while(state, self.interrupted, |state| self.drive(state))
    }

    /// Drives the run from its first unfinished stage until it reaches review, stops at a
    /// boundary, or a stage does not succeed.
    pub fn drive(&self, state: &mut RunState) -> Result<Driven, RunError> {
        // Requests addressed to an earlier driver are stale: `stop` and `pause` only write them
        // while a driver lives, and that driver is gone.
        self.take_request(STOP_REQUEST);
        self.take_request(PAUSE_REQUEST);
        let plan = self.plan(state)?;
        // The actor `fallback:` hands the stage to next, after a rate-limited attempt.
        let mut fallback: Option<(String, FallbackFrom)> = None;
        loop {
            let Some(index) = state.next_stage() else {
                self.record(state, Event::ReviewEntered)?;
                write_result(self.run_dir(), state)?;
                // Once more, so that the record holds the result too.
                self.session.commit_files(state)?;
                return Ok(Driven::Review);
            };
            let halted = |message: &str| Event::Halted {
                message: message.into(),
            };
            if self.interrupted.load(std::sync::atomic::Ordering::Acquire) {
                self.record(
                    state,
                    halted("git-baton was interrupted before this stage started"),
                )?;
                return Ok(Driven::Interrupted);
            }
            if self.take_request(STOP_REQUEST) {
                self.record(
                    state,
                    halted("stopped by request before this stage started"),
                )?;
                return Ok(Driven::Stopped);
            }
            if self.take_request(PAUSE_REQUEST) {
                self.record(state, Event::Paused)?;
                return Ok(Driven::Paused);
            }
            match self.attempt(state, index, &plan, fallback.take())? {
                Outcome::Succeeded => {
                    let name = &state.stages()[index].name;
                    if state.policy.stop_after.as_deref() == Some(name.as_str())
                        && state.next_stage().is_some()
                    {
                        self.record(state, Event::Paused)?;
                        return Ok(Driven::Paused);
                    }
                }
                Outcome::Interrupted => {
                    let manual = state.stages()[index].attempts.last().and_then(|a| a.cause)
                        == Some(Cause::Manual);
                    let signalled = self.interrupted.load(std::sync::atomic::Ordering::Acquire);
                    return Ok(if manual && signalled {
                        Driven::Interrupted
                    } else {
                        Driven::StageEnded(Outcome::Interrupted)
                    });
                }
                Outcome::RateLimited => match fallback::next_fallback(&state.stages()[index]) {
                    Some(next) => {
                        self.sink().note(Note::FallingBack {
                            attempt: next.1.attempt,
                            stage: state.stages()[index].name.clone(),
                            actor: next.0.clone(),
                        });
                        fallback = Some(next);
                    }
                    None => return Ok(Driven::StageEnded(Outcome::RateLimited)),
                },
                outcome => return Ok(Driven::StageEnded(outcome)),
            }
        }
    }

    /// The plan snapshot, read and parsed once per drive: the run follows it, not the plan file.
    fn plan(&self, state: &RunState) -> Result<crate::plan::Plan, RunError> {
        targets::of_run(self.repo, state, self.run_dir())
    }

    fn attempt(
        &self,
        state: &mut RunState,
        index: usize,
        plan: &Plan,
        fallback: Option<(String, FallbackFrom)>,
    ) -> Result<Outcome, RunError> {
        let stage = &state.stages()[index];
        let stage_name = stage.name.clone();
        let (fallback_actor, fallback_from) = fallback.unzip();
        let actor_name = match (&self.actor_override, fallback_actor) {
            (_, Some(actor)) => actor,
            (Some((name, actor)), None) if *name == stage_name => actor.clone(),
            _ => stage.configured_actor.clone(),
        };
        let n = stage.next_attempt();
        let resumed = crate::state::is_resumed(n);
        let rel_dir = crate::state::trust::attempt_dir(&stage_name, n);
        // Before the attempt opens: from then on every way out records its end.
        let plan_file = state.plan_snapshot_in(self.run_dir())?;
        let dir = self.run_dir().join(&rel_dir);
        attempt_dir::create_fresh(state.run_id.as_str(), &format!("{stage_name}-{n}"), &dir)?;
        let worktree = PathBuf::from(&state.worktree);
        let base = state.base;

        let changed = if resumed {
            open_run_worktree(self.repo, state)?.worktree_changes(base, &Scope::All)?
        } else {
            Vec::new()
        };
        let prompt_text = prompt::render(
            &prompt::PromptInput {
                state,
                stage: index,
                plan_body: &plan.body,
                targets: &plan.targets,
                changed: &changed,
                coverage: state.coverage(),
            },
            self.config.prompts.for_attempt(resumed),
        );
        let prompt_file = dir.join("prompt.md");
        let evidence_file = dir.join("evidence.json");
        let evidence_shown = format!("{rel_dir}/evidence.json");

        let started_at = self.store.now();
        self.record_at(
            state,
            Event::AttemptStarted {
                stage: index,
                actor: actor_name.clone(),
                dir: rel_dir,
                cleared_env: inherited_cleared_vars(),
                fallback_from,
            },
            started_at,
        )?;

        // From here on the attempt is open in the RunState: every way out records its end.
        // The prompt is written only now, so that a driver killed before the attempt was
        // recorded leaves its directory empty (see `attempt_dir`).
        let prompt_written = store::write_atomic(&prompt_file, prompt_text.as_bytes());
        // The monotonic measurement of the actor, when it ran at all:
        let mut measured = None;
        let mut reset = None;
        let mut end = match (&prompt_written, self.config.actors.get(&actor_name)) {
            (Err(err), _) => AttemptEnd {
                outcome: Outcome::Failed,
                error: Some(format!("cannot write the prompt: {err}")),
                exec_error: true,
                ..AttemptEnd::default()
            },
            (Ok(()), None) => AttemptEnd {
                outcome: Outcome::Failed,
                error: Some(format!(
                    "actor `{actor_name}` is not defined in the configuration"
                )),
                exec_error: true,
                ..AttemptEnd::default()
            },
            (Ok(()), Some(actor)) => {
                let spec = exec::ActorSpec {
                    name: actor_name.clone(),
                    command: actor.command.clone(),
                    stdin_prompt: actor.stdin_prompt,
                    env: actor.env.clone(),
                    timeout: actor.timeout,
                    rate_limit: exec::RateLimitRules {
                        exit_codes: actor.rate_limit_exit_codes.clone(),
                        patterns: actor.rate_limit_patterns.clone(),
                    },
                    output: actor.output,
                };
                let path = |p: &Path| p.display().to_string();
                let env = vec![
                    ("BATON_RUN_ID".to_string(), state.run_id.to_string()),
                    ("BATON_STAGE".into(), stage_name.clone()),
                    ("BATON_ATTEMPT".into(), n.to_string()),
                    (
                        "BATON_RESUMED".into(),
                        if resumed { "1" } else { "0" }.into(),
                    ),
                    ("BATON_PROMPT_FILE".into(), path(&prompt_file)),
                    ("BATON_EVIDENCE_FILE".into(), path(&evidence_file)),
                    ("BATON_PLAN_FILE".into(), path(&plan_file)),
                    ("BATON_BASE".into(), state.base.to_string()),
                    ("BATON_WORKTREE".into(), state.worktree.clone()),
                ];
                let placeholders = vec![
                    ("prompt_file", path(&prompt_file)),
                    ("evidence_file", path(&evidence_file)),
                    // The attempt's own files (evidence, the agent-side lock, the Stop hook's
                    // count): all a sandboxed agent must be allowed to write for `git baton
                    // unchanged` and `git baton check`.
                    (
                        "attempt_dir",
                        path(&std::path::absolute(&dir).unwrap_or_else(|_| dir.clone())),
                    ),
                    ("worktree", state.worktree.clone()),
                    // Where the run's store, objects and refs live: the whole repository's
                    // .git, config included (granting it lets an agent change what git runs).
                    (
                        "git_common_dir",
                        path(
                            &std::path::absolute(self.repo.common_dir())
                                .unwrap_or_else(|_| self.repo.common_dir().to_path_buf()),
                        ),
                    ),
                    ("run_id", state.run_id.to_string()),
                    ("stage", stage_name.clone()),
                    ("attempt", n.to_string()),
                ];
                let stop_file = self.run_dir().join(STOP_REQUEST);
                let stop_requested = || stop_file.exists();
                let cleared = actor_cleared_vars();
                let invocation = exec::Invocation {
                    actor: &spec,
                    workdir: &worktree,
                    env,
                    clear_env: &cleared,
                    placeholders,
                    prompt_file: &prompt_file,
                    stdout_log: &dir.join("stdout.log"),
                    stderr_log: &dir.join("stderr.log"),
                    echo: &|stream| self.sink().echo(stream),
                    stop_requested: &stop_requested,
                    interrupted: self.interrupted,
                    grace: GRACE,
                    token_file: Some(&dir.join(ATTEMPT_TOKEN)),
                    pid_file: Some(&dir.join(ACTOR_PID)),
                    log_limit: self.config.log_limit,
                };
                // Erased when the attempt ends, whichever way it ends.
                let status_line = self.sink().running(&stage_name, &spec.name, n);
                let ran = exec::run(&invocation);
                drop(status_line);
                match ran {
                    Err(err) => AttemptEnd {
                        outcome: Outcome::Failed,
                        error: Some(match err.hint() {
                            Some(h) => format!("{err} ({h})"),
                            None => err.to_string(),
                        }),
                        exec_error: true,
                        ..AttemptEnd::default()
                    },
                    Ok(f) => {
                        measured = Some(f.duration);
                        if matches!(f.outcome, exec::Outcome::Interrupted { .. }) {
                            // Acted on; a request that arrives after the actor ended stays for
                            // the boundary check.
                            let _ = std::fs::remove_file(&stop_file);
                        }
                        let (end, parsed_reset) = ending::attempt_end(&f, actor.output);
                        reset = parsed_reset;
                        end
                    }
                }
            }
        };
        // Work no snapshot holds would be lost to every other machine: such an attempt never
        // succeeds, and its gate does not run (see `unrecorded`).
        unrecorded::record(
            &mut end,
            unrecorded::snapshot(self.repo, state, &stage_name, n),
        );
        end.hook_blocks = agent_side::stop_hook_blocks(&dir);
        let evidence = read_evidence(&evidence_file, &evidence_shown);
        // The agent's own count first; the evidence file's for actors whose output gave none.
        if end.usage.is_none()
            && let Ok(Some(e)) = &evidence
            && e.usage.is_some()
        {
            end.usage = e.usage.clone();
            end.usage_source = Some(UsageSource::Evidence);
        }
        let stage = &state.stages()[index];
        if end.outcome == Outcome::Succeeded && stage.gated {
            // The gate applies to every attempt, or (`coverage: resume`) to resumed ones; its
            // report is recorded either way, so what was not enforced is still visible.
            let enforce = state.gate_enforced(n);
            match gate(self.repo, state, plan, &evidence) {
                Ok(report) => {
                    if enforce && !report.passed {
                        end.outcome = Outcome::Blocked;
                        end.error = Some(blocked_message(&report));
                    }
                    // Kept bounded: the RunState travels with every save (`coverage::bounded`).
                    end.coverage = Some(report.bounded(coverage::KEPT_PATHS));
                }
                Err(message) if enforce => {
                    end.outcome = Outcome::Blocked;
                    end.error = Some(message);
                }
                Err(message) => {
                    self.sink().note(Note::CoverageMissing { message });
                }
            }
        }
        let outcome = end.outcome;
        let ended_at = self.store.now();
        if let (Some(agent), Some(reset)) = (end.agent.as_mut(), reset) {
            agent.rate_limit_reset = Some(ending::reset_record(reset, ended_at));
        }
        if let Some(measured) = measured {
            end.duration_ms = Some(
                self.store
                    .clock()
                    .duration_ms(measured, started_at, ended_at),
            );
        }
        self.record_at(state, Event::AttemptEnded(end), ended_at)?;
        Ok(outcome)
    }
}

/// The coverage report of the run's worktree: the gate after an attempt, and `git baton check`
/// during one. Any failure to compute it is the gate's failure, reported as a message, never a
/// reason to leave the attempt open.
pub(crate) fn gate(
    repo: &Repo,
    state: &RunState,
    plan: &Plan,
    evidence: &Result<Option<coverage::Evidence>, String>,
) -> Result<Report, String> {
    let targets = &plan.targets;
    let entries = match evidence {
        Err(message) => return Err(message.clone()),
        Ok(evidence) => evidence
            .as_ref()
            .map(|e| e.entries.clone())
            .unwrap_or_default(),
    };
    if targets.is_empty() {
        return Ok(coverage::evaluate(targets, &[], &entries, &[]));
    }
    let scope = Scope::prefixes(targets.iter().map(Target::scope));
    let worktree = open_run_worktree(repo, state).map_err(|e| format!("coverage gate: {e}"))?;
    let changed = worktree
        .worktree_changes(state.base, &scope)
        .map_err(|e| format!("coverage gate: cannot compute the diff: {e}"))?;
    let mut report = coverage::evaluate(targets, &changed, &entries, &[]);
    let places = crate::verify::missing::Places {
        commits: &[state.base],
        worktree: Some(Path::new(&state.worktree)),
    };
    crate::verify::missing::mark_missing(&worktree, &mut report, targets, &places)
        .map_err(|e| format!("coverage gate: cannot look up the uncovered targets: {e}"))?;
    let new_side = crate::verify::trivial::NewSide::Worktree(Path::new(&state.worktree));
    crate::verify::trivial::mark_touched(
        &worktree,
        &mut report,
        plan,
        state.base,
        new_side,
        &mut crate::verify::trivial::Verdicts::new(),
    )
    .map_err(|e| format!("coverage gate: cannot compare the changed targets: {e}"))?;
    Ok(report)
}

/// The run's own worktree as a repository, refusing anything else: an actor that deleted the
/// worktree's `.git` file would otherwise make discovery walk up to the main worktree, and the
/// gate would read the wrong repository's changes.
pub fn open_run_worktree(repo: &Repo, state: &RunState) -> Result<Repo, RunError> {
    let path = Path::new(&state.worktree);
    let theirs = Repo::open_worktree(path).map_err(|source| RunError::NotAWorktree {
        run: state.run_id.to_string(),
        worktree: state.worktree.clone(),
        source,
    })?;
    let same_root = theirs
        .workdir()
        .ok()
        .and_then(|w| w.canonicalize().ok())
        .zip(path.canonicalize().ok())
        .is_some_and(|(a, b)| a == b);
    let same_repo =
        theirs.common_dir().canonicalize().ok() == repo.common_dir().canonicalize().ok();
    if !same_root || !same_repo {
        return Err(RunError::NotRegistered {
            run: state.run_id.to_string(),
            worktree: state.worktree.clone(),
        });
    }
    Ok(theirs)
}

/// The linked worktree of `repo` whose root is `path`, if that is what `path` is: not another
/// repository's, and not a plain directory inside one of this repository's worktrees.
pub(crate) fn worktree_at(repo: &Repo, path: &Path) -> Option<Repo> {
    let same = |a: &Path, b: &Path| {
        a.canonicalize()
            .ok()
            .is_some_and(|a| b.canonicalize().ok() == Some(a))
    };
    Repo::open_worktree(path).ok().filter(|wt| {
        same(wt.common_dir(), repo.common_dir()) && wt.workdir().is_ok_and(|dir| same(dir, path))
    })
}

/// Records the worktree as attempt `n` of `stage` left it, for an attempt that ended otherwise
/// (a crash found on resume), with the paths it does not hold. A failure is reported to `sink`;
/// the attempt is then recorded without a snapshot, which [`unrecorded`] makes the run refuse
/// to hand on.
pub fn snapshot_for(
    repo: &Repo,
    state: &RunState,
    stage: &str,
    n: u32,
    sink: &dyn Sink,
) -> Option<(CommitId, Vec<crate::state::UnrecordedPath>)> {
    unrecorded::snapshot(repo, state, stage, n)
        .map_err(|err| {
            sink.note(Note::SnapshotFailed {
                stage: stage.to_owned(),
                n,
                reason: err.to_string(),
            })
        })
        .ok()
}

/// The ref that records the worktree as attempt `n` of `stage` left it.
pub fn snapshot_ref(run_id: &str, stage: &str, n: u32) -> String {
    format!("refs/baton/runs/{run_id}/attempts/{stage}-{n}")
}

/// Before anything runs on resume: the run's worktree must exist, be registered with this
/// repository, be on the run's branch, and contain the base in its history. Anything else is a
/// stale mapping, diagnosed with the command that repairs it, and never silently re-created.
pub fn check_worktree(repo: &Repo, state: &RunState) -> Result<(), RunError> {
    let (run, worktree, branch) = (&state.run_id.to_string(), &state.worktree, &state.branch);
    if !Path::new(worktree).is_dir() {
        return Err(RunError::WorktreeMissing {
            run: run.clone(),
            worktree: worktree.clone(),
            branch: branch.clone(),
        });
    }
    let theirs = open_run_worktree(repo, state).map_err(|e| RunError::Stale(Box::new(e)))?;
    let found = theirs.head_branch()?;
    if found.as_deref() != Some(branch.as_str()) {
        return Err(RunError::WrongBranch {
            run: run.clone(),
            worktree: worktree.clone(),
            found,
            branch: branch.clone(),
        });
    }
    let base = state.base;
    let contains_base = theirs
        .head_commit()
        .is_some_and(|head| theirs.is_ancestor(base, head));
    if !contains_base {
        return Err(RunError::BaseNotInHistory {
            run: run.clone(),
            branch: branch.clone(),
            base: state.base.to_string(),
        });
    }
    Ok(())
}

/// The evidence an actor wrote: `Ok(None)` when it wrote none, `Err` when it is not evidence.
pub(crate) fn read_evidence(
    path: &Path,
    shown: &str,
) -> Result<Option<coverage::Evidence>, String> {
    read_evidence_text(path, shown)?
        .map(|text| parse_evidence(shown, &text))
        .transpose()
}

/// The text of an evidence file, bounded, as an agent could write any amount (see
/// coverage::MAX_EVIDENCE_BYTES): `Ok(None)` when there is none.
pub(crate) fn read_evidence_text(path: &Path, shown: &str) -> Result<Option<String>, String> {
    // An agent could make it a named pipe or a link to a device: regular files only.
    match crate::files::read_limited_regular(path, coverage::MAX_EVIDENCE_BYTES) {
        Ok(None) => Err(format!(
            "invalid evidence: {shown}: {}",
            coverage::too_large_message()
        )),
        Ok(Some(bytes)) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| format!("invalid evidence: {shown}: the file is not UTF-8")),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(format!("cannot read the evidence file: {err}")),
    }
}

/// Evidence text read with [`read_evidence_text`], checked as the gate checks it.
pub(crate) fn parse_evidence(shown: &str, text: &str) -> Result<coverage::Evidence, String> {
    coverage::parse_evidence(shown, text).map_err(|e| format!("invalid evidence: {e}"))
}

/// One line for `error.message`: what blocked the stage.
pub fn blocked_message(report: &Report) -> String {
    let uncovered: Vec<&str> = report.uncovered().map(|t| t.target.as_str()).collect();
    let mut parts = Vec::new();
    if !uncovered.is_empty() {
        parts.push(format!(
            "coverage gate: {} of {} targets uncovered: {}",
            uncovered.len(),
            report.targets.len(),
            uncovered.join(", ")
        ));
    }
    let missing: Vec<&str> = report.missing().map(|t| t.target.as_str()).collect();
    if !missing.is_empty() {
        parts.push(format!(
            "coverage gate: {} of {} targets name no path: {}",
            missing.len(),
            report.targets.len(),
            missing.join(", ")
        ));
    }
    let touched: Vec<&str> = report.touched().map(|t| t.target.as_str()).collect();
    if !touched.is_empty() {
        parts.push(format!(
            "coverage gate: {} of {} targets touched only in whitespace, line endings or mode: {}",
            touched.len(),
            report.targets.len(),
            touched.join(", ")
        ));
    }
    for p in &report.problems {
        parts.push(format!("{}: {}", p.source, p.message));
    }
    parts.join("; ")
}

/// `result.json` and `result.md` in the run directory: the coverage of the run and every
/// "needed no change, because …", for the reviewer.
pub fn write_result(run_dir: &Path, state: &RunState) -> Result<(), RunError> {
    #[derive(serde::Serialize)]
    struct ResultFile<'a> {
        run_id: &'a str,
        status: crate::state::RunStatus,
        plan: &'a crate::state::PlanRef,
        base: CommitId,
        branch: &'a str,
        coverage: Option<&'a Report>,
    }
    let result = ResultFile {
        run_id: &state.run_id,
        status: state.status(),
        plan: &state.plan,
        base: state.base,
        branch: &state.branch,
        coverage: state.coverage(),
    };
    let mut json = serde_json::to_vec_pretty(&result).expect("serializes");
    json.push(b'\n');
    store::write_atomic(&run_dir.join("result.json"), &json)?;
    let mut md = format!(
        "# Result of run {}\n\nPlan `{}` ({}), branch `{}`.\n\n",
        state.run_id, state.plan.path, state.plan.id, state.branch
    );
    match state.coverage() {
        None if state.plan.targets.is_empty() => {
            md.push_str("The plan declares no targets: coverage was not verified.\n")
        }
        None => md.push_str("No coverage gate ran in this run.\n"),
        Some(report) => {
            md.push_str("| target | status | paths or reason |\n|---|---|---|\n");
            // Paths and reasons are the agent's: escaped so that none leaves its cell.
            use crate::report::markdown::{code, text};
            for t in &report.targets {
                let detail = match t.status {
                    coverage::TargetStatus::Changed => t
                        .paths
                        .iter()
                        .map(|p| code(p))
                        .collect::<Vec<_>>()
                        .join(", "),
                    coverage::TargetStatus::Unchanged => format!(
                        "needed no change, because: {}",
                        text(t.reason.as_deref().unwrap_or(""))
                    ),
                    coverage::TargetStatus::Uncovered => "uncovered".into(),
                    coverage::TargetStatus::Missing => "names no path".into(),
                    coverage::TargetStatus::Touched => {
                        "only whitespace, line endings or mode changed".into()
                    }
                };
                let status = crate::report::status::word(t.status);
                md.push_str(&format!("| {} | {status} | {detail} |\n", code(&t.target)));
            }
        }
    }
    Ok(store::write_atomic(
        &run_dir.join("result.md"),
        md.as_bytes(),
    )?)
}
