//! One attempt of a stage, in four steps: it is opened (its directory, its prompt, its start
//! recorded), its actor is invoked, what it left is judged (snapshot, evidence, usage, gate), and
//! its end is recorded. Once the start is recorded, every way out records an end.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::agent::output::LimitReset;
use crate::exec;
use crate::git::Scope;
use crate::plan::Plan;
use crate::state::store;
use crate::state::transition::{AttemptEnd, Event};
use crate::state::{FallbackFrom, Outcome, RunState, UsageSource};

use super::drive::Driver;
use super::gate::{self, Work};
use super::note::Note;
use super::worktree::open_run_worktree;
use super::{
    ACTOR_PID, ATTEMPT_TOKEN, GRACE, RunError, STOP_REQUEST, agent_side, attempt_dir, checks,
    ending, guard, prompt, unrecorded,
};

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
pub(super) fn actor_cleared_vars() -> Vec<&'static str> {
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

/// An attempt whose start is recorded: where its files are, and who acts in it.
struct Opened {
    index: usize,
    stage: String,
    n: u32,
    resumed: bool,
    actor: String,
    /// The attempt's directory, and the same relative to the run directory (as recorded).
    dir: PathBuf,
    rel_dir: String,
    plan_file: PathBuf,
    prompt_file: PathBuf,
    /// Whether the prompt could be written; an attempt without one fails without running.
    prompt_written: Result<(), store::StoreError>,
    started_at: jiff::Timestamp,
    /// What the attempt may not change, as it was before the actor (see `guard`).
    guarded: guard::Before,
}

impl Opened {
    fn evidence_file(&self) -> PathBuf {
        self.dir.join("evidence.json")
    }

    fn evidence_shown(&self) -> String {
        format!("{}/evidence.json", self.rel_dir)
    }
}

/// What invoking the actor gave, besides the attempt's end: the monotonic measurement of the
/// actor when it ran at all, and the reset of a rate limit its output named.
#[derive(Default)]
struct Invoked {
    measured: Option<Duration>,
    reset: Option<LimitReset>,
}

impl Driver<'_> {
    /// Runs attempt `next_attempt()` of stage `index` and records how it ended.
    pub(super) fn attempt(
        &self,
        state: &mut RunState,
        index: usize,
        plan: &Plan,
        fallback: Option<(String, FallbackFrom)>,
    ) -> Result<Outcome, RunError> {
        let opened = self.open(state, index, plan, fallback)?;
        let (mut end, invoked) = self.invoke(state, &opened);
        self.judge(state, &opened, plan, &mut end);
        self.close(state, &opened, end, invoked)
    }

    /// Creates the attempt's directory, renders its prompt and records its start; the prompt is
    /// written only then, so that a driver killed before the start was recorded leaves the
    /// directory empty (see `attempt_dir`).
    fn open(
        &self,
        state: &mut RunState,
        index: usize,
        plan: &Plan,
        fallback: Option<(String, FallbackFrom)>,
    ) -> Result<Opened, RunError> {
        let stage = &state.stages()[index];
        let stage_name = stage.name.clone();
        let (fallback_actor, fallback_from) = fallback.unzip();
        let actor = match (&self.actor_override, fallback_actor) {
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

        let changed = if resumed {
            open_run_worktree(self.repo, state)?.worktree_changes(state.base, &Scope::All)?
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
        let started_at = self.store.now();
        self.commit_at(
            state,
            Event::AttemptStarted {
                stage: index,
                actor: actor.clone(),
                dir: rel_dir.clone(),
                cleared_env: inherited_cleared_vars(),
                fallback_from,
            },
            started_at,
        )?;
        let prompt_file = dir.join("prompt.md");
        let prompt_written = store::write_atomic(&prompt_file, prompt_text.as_bytes());
        let guarded = guard::before(self.repo, state, &plan_file);
        Ok(Opened {
            index,
            stage: stage_name,
            n,
            resumed,
            actor,
            dir,
            rel_dir,
            plan_file,
            prompt_file,
            prompt_written,
            started_at,
            guarded,
        })
    }

    /// Runs the attempt's actor, when it has a prompt and is defined, and says how it ended.
    fn invoke(&self, state: &RunState, a: &Opened) -> (AttemptEnd, Invoked) {
        let failed = |error: String| AttemptEnd {
            outcome: Outcome::Failed,
            error: Some(error),
            exec_error: true,
            ..AttemptEnd::default()
        };
        let actor = match (&a.prompt_written, self.config.actors.get(&a.actor)) {
            (Err(err), _) => {
                return (
                    failed(format!("cannot write the prompt: {err}")),
                    Invoked::default(),
                );
            }
            (Ok(()), None) => {
                return (
                    failed(format!(
                        "actor `{}` is not defined in the configuration",
                        a.actor
                    )),
                    Invoked::default(),
                );
            }
            (Ok(()), Some(actor)) => actor,
        };
        let spec = actor.spec(&a.actor);
        let stop_file = self.run_dir().join(STOP_REQUEST);
        let stop_requested = || stop_file.exists();
        let cleared = actor_cleared_vars();
        let invocation = exec::Invocation {
            actor: &spec,
            workdir: Path::new(&state.worktree),
            env: self.actor_env(state, a),
            clear_env: &cleared,
            placeholders: Some(self.placeholders(state, a)),
            prompt_file: &a.prompt_file,
            stdout_log: &a.dir.join("stdout.log"),
            stderr_log: &a.dir.join("stderr.log"),
            echo: &|stream| self.sink().echo(stream),
            stop_requested: &stop_requested,
            interrupted: self.interrupted,
            grace: GRACE,
            token_file: Some(&a.dir.join(ATTEMPT_TOKEN)),
            pid_file: Some(&a.dir.join(ACTOR_PID)),
            log_limit: self.config.log_limit,
        };
        // Erased when the attempt ends, whichever way it ends.
        let status_line = self.sink().running(&a.stage, &spec.name, a.n);
        let ran = exec::run(&invocation);
        drop(status_line);
        match ran {
            Err(err) => (
                failed(match err.hint() {
                    Some(h) => format!("{err} ({h})"),
                    None => err.to_string(),
                }),
                Invoked::default(),
            ),
            Ok(f) => {
                if matches!(f.outcome, exec::Ended::Interrupted { .. }) {
                    // Acted on; a request that arrives after the actor ended stays for the
                    // boundary check.
                    let _ = std::fs::remove_file(&stop_file);
                }
                let (end, reset) = ending::attempt_end(&f, actor.output);
                let invoked = Invoked {
                    measured: Some(f.duration),
                    reset,
                };
                (end, invoked)
            }
        }
    }

    /// The `BATON_*` variables of the actor's environment.
    fn actor_env(&self, state: &RunState, a: &Opened) -> Vec<(String, String)> {
        let path = |p: &Path| p.display().to_string();
        vec![
            ("BATON_RUN_ID".to_string(), state.run_id.to_string()),
            ("BATON_STAGE".into(), a.stage.clone()),
            ("BATON_ATTEMPT".into(), a.n.to_string()),
            (
                "BATON_RESUMED".into(),
                if a.resumed { "1" } else { "0" }.into(),
            ),
            ("BATON_PROMPT_FILE".into(), path(&a.prompt_file)),
            ("BATON_EVIDENCE_FILE".into(), path(&a.evidence_file())),
            ("BATON_PLAN_FILE".into(), path(&a.plan_file)),
            ("BATON_BASE".into(), state.base.to_string()),
            ("BATON_WORKTREE".into(), state.worktree.clone()),
        ]
    }

    /// The values of the placeholders an actor's command may name (`exec::PLACEHOLDERS`).
    fn placeholders(&self, state: &RunState, a: &Opened) -> Vec<(&'static str, String)> {
        let absolute = |p: &Path| {
            std::path::absolute(p)
                .unwrap_or_else(|_| p.to_path_buf())
                .display()
                .to_string()
        };
        vec![
            ("prompt_file", a.prompt_file.display().to_string()),
            ("evidence_file", a.evidence_file().display().to_string()),
            // The attempt's own files (evidence, the agent-side lock, the Stop hook's count):
            // all a sandboxed agent must be allowed to write for `git baton unchanged` and
            // `git baton check`.
            ("attempt_dir", absolute(&a.dir)),
            ("worktree", state.worktree.clone()),
            // Where the run's store, objects and refs live: the whole repository's .git, config
            // included (granting it lets an agent change what git runs).
            ("git_common_dir", absolute(self.repo.common_dir())),
            ("run_id", state.run_id.to_string()),
            ("stage", a.stage.clone()),
            ("attempt", a.n.to_string()),
        ]
    }

    /// What the attempt left, judged: its snapshot (work no snapshot holds fails the attempt,
    /// see `unrecorded`), the Stop hook's count, the usage its evidence gives, and — when it
    /// succeeded so far — the gate on that snapshot.
    fn judge(&self, state: &RunState, a: &Opened, plan: &Plan, end: &mut AttemptEnd) {
        unrecorded::apply(end, unrecorded::snapshot(self.repo, state, &a.stage, a.n));
        if !end.exec_error {
            let protected = guard::Protected::new(&self.config.protect, plan, &state.plan.path);
            guard::judge(end, self.repo, state, &a.guarded, &protected, &a.plan_file);
        }
        end.hook_blocks = agent_side::stop_hook_blocks(&a.dir);
        let evidence = gate::read_evidence(&a.evidence_file(), &a.evidence_shown());
        // The agent's own count first; the evidence file's for actors whose output gave none.
        if end.usage.is_none()
            && let Ok(Some(e)) = &evidence
            && e.usage.is_some()
        {
            end.usage = e.usage.clone();
            end.usage_source = Some(UsageSource::Evidence);
        }
        // A success has a snapshot: `unrecorded::apply` fails an attempt without one.
        let (Outcome::Succeeded, Some(snapshot)) = (end.outcome, end.snapshot) else {
            return;
        };
        self.run_checks(state, a, plan, end);
        if !state.stages()[a.index].gated {
            if end.outcome != Outcome::Succeeded {
                return;
            }
            // The gated verdicts before this stage must still hold on its work.
            match gate::undone(self.repo, state, plan, snapshot) {
                Ok(None) => {}
                Ok(Some(message)) | Err(message) => {
                    end.outcome = Outcome::Blocked;
                    end.error = Some(message);
                }
            }
            return;
        }
        // The gate applies to every attempt, or (`coverage: resume`) to resumed ones; its report
        // is recorded either way, so what was not enforced is still visible.
        let enforce = state.gate_enforced(a.n);
        match gate::gate(self.repo, state, plan, &evidence, Work::Snapshot(snapshot)) {
            Ok(report) => {
                if enforce && !report.passed {
                    block(end, gate::blocked_message(&report));
                }
                // Kept bounded: the RunState travels with every save (`coverage::bounded`).
                end.coverage = Some(report.bounded(crate::coverage::KEPT_PATHS));
            }
            Err(message) if enforce => block(end, message),
            Err(message) => self.sink().note(Note::CoverageMissing { message }),
        }
    }

    /// Runs the runner's checks of the attempt's stage on its work (`checks`) and records them;
    /// one that did not pass blocks the attempt where the gate is enforced, and an interrupted
    /// one interrupts it.
    fn run_checks(&self, state: &RunState, a: &Opened, plan: &Plan, end: &mut AttemptEnd) {
        let gated = state.stages()[a.index].gated;
        let wanted = self
            .config
            .checks_for(&a.stage, gated, plan, &state.plan.path);
        if wanted.is_empty() {
            return;
        }
        let stop_file = self.run_dir().join(STOP_REQUEST);
        let stop_requested = || stop_file.exists();
        let cleared = actor_cleared_vars();
        let running = |name: &str| self.sink().running(&a.stage, &format!("check {name}"), a.n);
        let cx = checks::Context {
            worktree: Path::new(&state.worktree),
            attempt_dir: &a.dir,
            log_dir: checks::RUNNER_LOGS,
            token_file: &a.dir.join(ATTEMPT_TOKEN),
            env: self.actor_env(state, a),
            clear_env: &cleared,
            stop_requested: &stop_requested,
            interrupted: self.interrupted,
            grace: GRACE,
            log_limit: self.config.log_limit,
            clock: self.store.clock(),
            running: &running,
        };
        end.checks = checks::run_all(&wanted, &cx);
        let Some(failed) = crate::state::checks::first_failed(&end.checks) else {
            return;
        };
        if failed.outcome == crate::state::CheckOutcome::Interrupted {
            let _ = std::fs::remove_file(&stop_file);
            end.outcome = Outcome::Interrupted;
            end.cause = Some(crate::state::Cause::Manual);
            end.error = Some(crate::state::checks::failed_message(failed));
        } else if state.gate_enforced(a.n) {
            end.outcome = Outcome::Blocked;
            end.error = Some(crate::state::checks::failed_message(failed));
        }
    }

    /// Records the attempt's end, dated now, with its measured duration and reset.
    fn close(
        &self,
        state: &mut RunState,
        a: &Opened,
        mut end: AttemptEnd,
        invoked: Invoked,
    ) -> Result<Outcome, RunError> {
        let outcome = end.outcome;
        let ended_at = self.store.now();
        if let (Some(agent), Some(reset)) = (end.agent.as_mut(), invoked.reset) {
            agent.rate_limit_reset = Some(ending::reset_record(reset, ended_at));
        }
        if let Some(measured) = invoked.measured {
            end.duration_ms = Some(self.store.clock().duration_ms(
                measured,
                a.started_at,
                ended_at,
            ));
        }
        self.commit_at(state, Event::attempt_ended(end), ended_at)?;
        Ok(outcome)
    }
}

/// Blocks the attempt for `message`, before the error a failed runner check already gave it:
/// both are the reason.
fn block(end: &mut AttemptEnd, message: String) {
    end.outcome = Outcome::Blocked;
    end.error = Some(match end.error.take() {
        Some(check) => format!("{message}\n{check}"),
        None => message,
    });
}
