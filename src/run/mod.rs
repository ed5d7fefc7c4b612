//! Runs: creating one (a single transaction) and driving its stages (the pipeline).
//!
//! The pipeline writes the RunState before an actor starts and after it ends, so that whatever
//! is killed when, the state on disk says what happened up to that point. It reads nothing but
//! the RunState and the run directory: everything it needs was recorded at creation.

mod create;
pub mod doctor;
pub mod lifecycle;
pub mod prompt;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub use create::{CreateOptions, Created, create};

use crate::coverage::{self, Report};
use crate::error::{CliError, Exit};
use crate::exec;
use crate::git::{Repo, Scope};
use crate::plan::Target;
use crate::state::store::{self, RunLock, Store};
use crate::state::{AttemptEnd, Cause, CoverageMode, Outcome, RunState};

/// Time between SIGTERM to an actor's process group and SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// Files in the run directory that other processes create to ask the driver to stop or pause.
pub const STOP_REQUEST: &str = "stop.request";
pub const PAUSE_REQUEST: &str = "pause.request";
/// In an attempt's directory: the actor's pid, which is also its process group id.
pub const ACTOR_PID: &str = "actor.pid";

/// What driving a run needs besides its state.
pub struct Driver<'a> {
    pub repo: &'a Repo,
    pub store: &'a Store,
    pub config: &'a crate::config::Config,
    pub lock: &'a RunLock,
    pub interrupted: &'a AtomicBool,
    /// Stream actors' output to the terminal.
    pub echo: bool,
    /// An actor chosen for the next attempt of this stage (`resume --actor`).
    pub actor_override: Option<(String, String)>,
}

impl Driver<'_> {
    fn run_dir(&self) -> &Path {
        self.lock.dir()
    }

    fn save(&self, state: &RunState) -> Result<(), CliError> {
        store::save_in(self.run_dir(), state).map_err(|e| CliError::input(e.to_string()))
    }

    fn take_request(&self, name: &str) -> bool {
        std::fs::remove_file(self.run_dir().join(name)).is_ok()
    }

    /// Drives the run from its first unfinished stage until it reaches review, stops at a
    /// boundary, or a stage does not succeed. The exit code follows design §6.
    pub fn drive(&self, state: &mut RunState) -> Result<Exit, CliError> {
        // Requests addressed to an earlier driver are stale: `stop` and `pause` only write them
        // while a driver lives, and that driver is gone.
        self.take_request(STOP_REQUEST);
        self.take_request(PAUSE_REQUEST);
        let targets = self.targets(state)?;
        loop {
            let Some(index) = state.next_stage() else {
                state.enter_review(&store::now());
                self.save(state)?;
                write_result(self.run_dir(), state)?;
                return Ok(Exit::Success);
            };
            if self.interrupted.load(std::sync::atomic::Ordering::Acquire) {
                state.halt(
                    "git-baton was interrupted before this stage started",
                    &store::now(),
                );
                self.save(state)?;
                return Ok(Exit::Interrupted);
            }
            if self.take_request(PAUSE_REQUEST) || self.take_request(STOP_REQUEST) {
                state.pause(&store::now());
                self.save(state)?;
                return Ok(Exit::Success);
            }
            let outcome = self.attempt(state, index, &targets)?;
            match outcome {
                Outcome::Succeeded => {
                    let name = &state.stages[index].name;
                    if state.policy.stop_after.as_deref() == Some(name.as_str())
                        && state.next_stage().is_some()
                    {
                        state.pause(&store::now());
                        self.save(state)?;
                        return Ok(Exit::Success);
                    }
                }
                Outcome::Interrupted => {
                    let manual = state.stages[index].attempts.last().and_then(|a| a.cause)
                        == Some(Cause::Manual);
                    return Ok(
                        if manual && self.interrupted.load(std::sync::atomic::Ordering::Acquire) {
                            Exit::Interrupted
                        } else {
                            Exit::Failed
                        },
                    );
                }
                _ => return Ok(Exit::Failed),
            }
        }
    }

    fn targets(&self, state: &RunState) -> Result<Vec<Target>, CliError> {
        let text =
            std::fs::read_to_string(self.run_dir().join(&state.plan.snapshot)).map_err(|e| {
                CliError::input(format!(
                    "cannot read the plan snapshot of run {}: {e}",
                    state.run_id
                ))
            })?;
        Ok(crate::plan::parse(&state.plan.path, &text)?.targets)
    }

    fn attempt(
        &self,
        state: &mut RunState,
        index: usize,
        targets: &[Target],
    ) -> Result<Outcome, CliError> {
        let stage_name = state.stages[index].name.clone();
        let actor_name = match &self.actor_override {
            Some((stage, actor)) if *stage == stage_name => actor.clone(),
            _ => state.policy.pipeline[index].actor.clone(),
        };
        let n = state.stages[index].attempts.len() + 1;
        let rel_dir = format!("attempts/{stage_name}-{n}");
        let dir = self.run_dir().join(&rel_dir);
        std::fs::create_dir_all(&dir)
            .map_err(|e| CliError::input(format!("cannot create {}: {e}", dir.display())))?;
        let worktree = PathBuf::from(&state.worktree);
        let base = self.base(state)?;

        let resumed = n > 1;
        let changed = if resumed {
            self.repo_at_worktree(state)?
                .worktree_changes(base, &Scope::All)?
        } else {
            Vec::new()
        };
        let plan_text =
            std::fs::read_to_string(self.run_dir().join(&state.plan.snapshot)).unwrap_or_default();
        let plan_body = crate::plan::parse(&state.plan.path, &plan_text)
            .map(|p| p.body)
            .unwrap_or_default();
        let prompt_text = prompt::render(
            &prompt::PromptInput {
                state,
                stage: index,
                plan_body: &plan_body,
                changed: &changed,
                coverage: state.coverage.as_ref(),
            },
            self.config.prompts.for_attempt(resumed),
        );
        let prompt_file = dir.join("prompt.md");
        let evidence_file = dir.join("evidence.json");
        store::write_atomic(&prompt_file, prompt_text.as_bytes())
            .map_err(|e| CliError::input(e.to_string()))?;

        let attempt_n = state.start_attempt(index, &actor_name, rel_dir, &store::now());
        self.save(state)?;

        let Some(actor) = self.config.actors.get(&actor_name) else {
            let end = AttemptEnd {
                outcome: Outcome::Failed,
                error: Some(format!(
                    "actor `{actor_name}` is not defined in the configuration"
                )),
                exec_error: true,
                ..AttemptEnd::default()
            };
            state.end_attempt(index, end, &store::now());
            self.save(state)?;
            return Ok(Outcome::Failed);
        };
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
        };
        let plan_file = self.run_dir().join(&state.plan.snapshot);
        let path = |p: &Path| p.display().to_string();
        let env = vec![
            ("BATON_RUN_ID".to_string(), state.run_id.clone()),
            ("BATON_STAGE".into(), stage_name.clone()),
            ("BATON_ATTEMPT".into(), attempt_n.to_string()),
            (
                "BATON_RESUMED".into(),
                if resumed { "1" } else { "0" }.into(),
            ),
            ("BATON_PROMPT_FILE".into(), path(&prompt_file)),
            ("BATON_EVIDENCE_FILE".into(), path(&evidence_file)),
            ("BATON_PLAN_FILE".into(), path(&plan_file)),
            ("BATON_BASE".into(), state.base.clone()),
            ("BATON_WORKTREE".into(), state.worktree.clone()),
        ];
        let placeholders = vec![
            ("prompt_file", path(&prompt_file)),
            ("evidence_file", path(&evidence_file)),
            ("worktree", state.worktree.clone()),
            ("run_id", state.run_id.clone()),
            ("stage", stage_name.clone()),
            ("attempt", attempt_n.to_string()),
        ];
        let stop_file = self.run_dir().join(STOP_REQUEST);
        let stop_requested = || stop_file.exists();
        let invocation = exec::Invocation {
            actor: &spec,
            workdir: &worktree,
            env,
            placeholders,
            prompt_file: &prompt_file,
            stdout_log: &dir.join("stdout.log"),
            stderr_log: &dir.join("stderr.log"),
            echo: self.echo,
            stop_requested: &stop_requested,
            interrupted: self.interrupted,
            grace: GRACE,
            pid_file: Some(&dir.join(ACTOR_PID)),
        };
        let finished = exec::run(&invocation);
        let _ = std::fs::remove_file(&stop_file);

        let mut end = match finished {
            Err(err) => AttemptEnd {
                outcome: Outcome::Failed,
                error: Some(match err.hint() {
                    Some(h) => format!("{err} ({h})"),
                    None => err.to_string(),
                }),
                exec_error: true,
                ..AttemptEnd::default()
            },
            Ok(f) => attempt_end(&f),
        };
        end.snapshot = snapshot_for(self.repo, state, &stage_name, attempt_n);
        let evidence = read_evidence(
            &evidence_file,
            &format!(
                "{}/evidence.json",
                state.stages[index]
                    .attempts
                    .last()
                    .map_or("", |a| a.dir.as_str())
            ),
        );
        if let Ok(Some(e)) = &evidence {
            end.usage = e.usage.clone();
        }
        let stage = &state.stages[index];
        let gate = stage.gated && (state.policy.coverage == CoverageMode::Always || resumed);
        if end.outcome == Outcome::Succeeded && stage.gated && !gate && targets.is_empty() {
            // Not gated this time, but a plan without targets must still say plainly that
            // nothing was verified (`coverage.verified: false`), never leave it unsaid.
            end.coverage = Some(coverage::evaluate(&[], &[], &[], &[]));
        }
        if end.outcome == Outcome::Succeeded && gate {
            let report = match &evidence {
                Err(message) => {
                    end.outcome = Outcome::Blocked;
                    end.error = Some(message.clone());
                    None
                }
                Ok(evidence) => {
                    let entries = evidence
                        .as_ref()
                        .map(|e| e.entries.clone())
                        .unwrap_or_default();
                    let scope = Scope::prefixes(targets.iter().map(Target::scope));
                    let changed = if targets.is_empty() {
                        Vec::new()
                    } else {
                        self.repo_at_worktree(state)?
                            .worktree_changes(base, &scope)?
                    };
                    let report = coverage::evaluate(targets, &changed, &entries, &[]);
                    if !report.passed {
                        end.outcome = Outcome::Blocked;
                        end.error = Some(blocked_message(&report));
                    }
                    Some(report)
                }
            };
            end.coverage = report;
        }
        let outcome = end.outcome;
        state.end_attempt(index, end, &store::now());
        self.save(state)?;
        Ok(outcome)
    }

    fn base(&self, state: &RunState) -> Result<gix::ObjectId, CliError> {
        gix::ObjectId::from_hex(state.base.as_bytes()).map_err(|_| {
            CliError::input(format!(
                "run {}: the RunState's base `{}` is not a commit id",
                state.run_id, state.base
            ))
        })
    }

    fn repo_at_worktree(&self, state: &RunState) -> Result<Repo, CliError> {
        Ok(Repo::discover(Path::new(&state.worktree))?)
    }
}

/// Records the worktree as attempt `n` of `stage` left it. A failure is reported but changes
/// no outcome: the work itself is still in the worktree.
pub fn snapshot_for(repo: &Repo, state: &RunState, stage: &str, n: u32) -> Option<String> {
    let refname = snapshot_ref(&state.run_id, stage, n);
    let parent = match repo.branch_tip(&state.branch) {
        Ok(Some(tip)) => tip,
        _ => gix::ObjectId::from_hex(state.base.as_bytes()).ok()?,
    };
    let message = format!("baton: run {}, stage {stage}, attempt {n}", state.run_id);
    match repo.snapshot_worktree(Path::new(&state.worktree), &refname, parent, &message) {
        Ok(id) => Some(id.to_string()),
        Err(err) => {
            eprintln!("warning: could not snapshot attempt {n} of stage {stage}: {err}");
            None
        }
    }
}

/// The ref that records the worktree as attempt `n` of `stage` left it.
pub fn snapshot_ref(run_id: &str, stage: &str, n: u32) -> String {
    format!("refs/baton/runs/{run_id}/attempts/{stage}-{n}")
}

/// Before anything runs on resume: the run's worktree must exist, be registered with this
/// repository, be on the run's branch, and contain the base in its history. Anything else is a
/// stale mapping, diagnosed and never silently re-created.
pub fn check_worktree(repo: &Repo, state: &RunState) -> Result<(), CliError> {
    let path = Path::new(&state.worktree);
    let stale = |problem: String| {
        let hint = if path.exists() {
            format!(
                "the run's work is on branch {}; put {} back on it (`git -C {} switch {}`), or remove the run with `git baton clean --force {}`",
                state.branch, state.worktree, state.worktree, state.branch, state.run_id
            )
        } else {
            format!(
                "`git baton resume {} --recreate-worktree` rebuilds it from branch {} and the last attempt's snapshot",
                state.run_id, state.branch
            )
        };
        CliError::input(format!(
            "stale worktree mapping: run {}: {problem}",
            state.run_id
        ))
        .hinted(hint)
    };
    if !path.is_dir() {
        return Err(stale(format!(
            "its worktree {} does not exist",
            state.worktree
        )));
    }
    let theirs = Repo::discover(path).map_err(|e| {
        stale(format!(
            "its worktree {} is not a git worktree ({e})",
            state.worktree
        ))
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
        return Err(stale(format!(
            "{} is not a worktree registered with this repository",
            state.worktree
        )));
    }
    let branch = theirs.head_branch()?;
    if branch.as_deref() != Some(state.branch.as_str()) {
        return Err(stale(format!(
            "its worktree {} is on {} instead of {}",
            state.worktree,
            branch.map_or("a detached HEAD".to_string(), |b| format!("branch {b}")),
            state.branch
        )));
    }
    let base = gix::ObjectId::from_hex(state.base.as_bytes()).map_err(|_| {
        stale(format!(
            "the RunState's base `{}` is not a commit id",
            state.base
        ))
    })?;
    match theirs.head_commit() {
        Some(head) if theirs.is_ancestor(base, head) => Ok(()),
        _ => Err(stale(format!(
            "the history of {} does not contain the base {}",
            state.branch, state.base
        ))),
    }
}

fn attempt_end(f: &exec::Finished) -> AttemptEnd {
    let duration_ms = Some(f.duration.as_millis() as u64);
    let tail = |prefix: String| {
        if f.stderr_tail.trim().is_empty() {
            prefix
        } else {
            format!("{prefix}; stderr ends with:\n{}", f.stderr_tail.trim_end())
        }
    };
    let (outcome, cause, error) = match &f.outcome {
        exec::Outcome::Succeeded => (Outcome::Succeeded, None, None),
        exec::Outcome::Failed { exit_code, signal } => {
            let what = match (exit_code, signal) {
                (Some(code), _) => format!("the actor exited with code {code}"),
                (None, Some(sig)) => format!("the actor was killed by signal {sig}"),
                _ => "the actor failed".into(),
            };
            (Outcome::Failed, None, Some(tail(what)))
        }
        exec::Outcome::RateLimited { matched, .. } => (
            Outcome::RateLimited,
            None,
            Some(format!("rate limited ({matched})")),
        ),
        exec::Outcome::Interrupted { cause } => {
            let (cause, what) = match cause {
                exec::Cause::Manual => (Cause::Manual, "stopped by request"),
                exec::Cause::Timeout => (Cause::Timeout, "stopped: the actor's timeout elapsed"),
            };
            (Outcome::Interrupted, Some(cause), Some(what.to_string()))
        }
    };
    AttemptEnd {
        outcome,
        cause,
        duration_ms,
        exit_code: f.exit_code,
        signal: f.signal,
        usage: None,
        error,
        coverage: None,
        exec_error: false,
        snapshot: None,
    }
}

/// The evidence an actor wrote: `Ok(None)` when it wrote none, `Err` when it is not evidence.
fn read_evidence(path: &Path, shown: &str) -> Result<Option<coverage::Evidence>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => coverage::parse_evidence(shown, &text)
            .map(Some)
            .map_err(|e| format!("invalid evidence: {e}")),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(format!("cannot read the evidence file: {err}")),
    }
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
    for p in &report.problems {
        parts.push(format!("{}: {}", p.source, p.message));
    }
    parts.join("; ")
}

/// `result.json` and `result.md` in the run directory: the coverage of the run and every
/// "needed no change, because …", for the reviewer.
pub fn write_result(run_dir: &Path, state: &RunState) -> Result<(), CliError> {
    #[derive(serde::Serialize)]
    struct ResultFile<'a> {
        run_id: &'a str,
        status: crate::state::RunStatus,
        plan: &'a crate::state::PlanRef,
        base: &'a str,
        branch: &'a str,
        coverage: Option<&'a Report>,
    }
    let result = ResultFile {
        run_id: &state.run_id,
        status: state.status,
        plan: &state.plan,
        base: &state.base,
        branch: &state.branch,
        coverage: state.coverage.as_ref(),
    };
    let mut json = serde_json::to_vec_pretty(&result).expect("serializes");
    json.push(b'\n');
    store::write_atomic(&run_dir.join("result.json"), &json)
        .map_err(|e| CliError::input(e.to_string()))?;
    let mut md = format!(
        "# Result of run {}\n\nPlan `{}` ({}), branch `{}`.\n\n",
        state.run_id, state.plan.path, state.plan.id, state.branch
    );
    match &state.coverage {
        None if state.plan.targets.is_empty() => {
            md.push_str("The plan declares no targets: coverage was not verified.\n")
        }
        None => md.push_str("No coverage gate ran in this run.\n"),
        Some(report) => {
            md.push_str("| target | status | paths or reason |\n|---|---|---|\n");
            for t in &report.targets {
                let detail = match t.status {
                    coverage::TargetStatus::Changed => t.paths.join(", "),
                    coverage::TargetStatus::Unchanged => format!(
                        "needed no change, because: {}",
                        t.reason.as_deref().unwrap_or("")
                    ),
                    coverage::TargetStatus::Uncovered => "uncovered".into(),
                };
                let status = format!("{:?}", t.status).to_lowercase();
                md.push_str(&format!(
                    "| `{}` | {status} | {} |\n",
                    t.target,
                    detail.replace('|', "\\|")
                ));
            }
        }
    }
    store::write_atomic(&run_dir.join("result.md"), md.as_bytes())
        .map_err(|e| CliError::input(e.to_string()))
}
