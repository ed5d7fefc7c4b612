//! Creating a run: one transaction.
//!
//! validate → allocate an id → run directory (staged under a hidden name) with the plan
//! snapshot → branch `baton/<id>` → linked worktree → RunState → publish (rename the staged
//! directory to `runs/<id>`). A failure at any step undoes the earlier ones, so no half-made run
//! is ever listed. The run's lock is taken before it is published: the moment it is visible, it
//! is visibly driven.
//!
//! Debug builds honour `GIT_BATON_FAIL_AT=<step>` (`snapshot`, `branch`, `worktree`, `state`,
//! `publish`) to inject a failure at that step, and `GIT_BATON_FAIL_AT=<step>:kill` to die there
//! of SIGKILL; the tests use them to prove the rollback and what a crash leaves.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::git::Repo;
use crate::plan::Plan;
use crate::run::CreateError;
use crate::state::store::{self, RunLock, Store};
use crate::state::{NewRun, PlanRef, Policy, RunState, StagePolicy};

use super::RunError;

/// A plan file as a run records it.
pub struct PlanFile {
    pub plan: Plan,
    /// The file's text, snapshotted into the run.
    pub text: String,
    /// Repo-relative when the file is inside the worktree, else as the user named it.
    pub path: String,
}

/// Reads and parses the plan file `named` (relative to `cwd`, as the user named it).
pub fn read_plan(workdir: &Path, cwd: &Path, named: &Path) -> Result<PlanFile, RunError> {
    let full = cwd.join(named);
    let bytes = crate::files::read_regular(&full).map_err(|source| {
        RunError::Create(CreateError::ReadPlan {
            path: named.to_path_buf(),
            source,
        })
    })?;
    let text = String::from_utf8(bytes).map_err(|_| {
        RunError::Create(CreateError::PlanNotUtf8 {
            path: named.to_path_buf(),
        })
    })?;
    let path =
        crate::files::repo_relative(workdir, &full).unwrap_or_else(|| named.display().to_string());
    let plan = crate::plan::parse(&path, &text)?;
    Ok(PlanFile { plan, text, path })
}

pub struct CreateOptions<'a> {
    pub plan: &'a Plan,
    /// The plan file's text, snapshotted into the run.
    pub plan_text: &'a str,
    /// Repo-relative path of the plan.
    pub plan_path: String,
    pub base_rev: &'a str,
    pub base: crate::git::CommitId,
    pub key: Option<&'a str>,
    pub stop_after: Option<&'a str>,
    pub actors: &'a [(String, String)],
    /// The main worktree, which a relative `worktree_root` is resolved against.
    pub main_worktree: &'a Path,
    pub command: &'a str,
    /// `run --queue`: the run is born `queued` and not driven.
    pub queued: bool,
}

pub enum Created {
    /// A new run, locked by this process.
    New(Box<RunState>, RunLock),
    /// `--key` named a run that already exists.
    Existing(Box<RunState>),
}

/// Checks the plan and configuration against each other and returns the run's pipeline and
/// policy.
pub fn policy(
    config: &Config,
    plan: &Plan,
    plan_path: &str,
    stop_after: Option<&str>,
    actors: &[(String, String)],
) -> Result<(Vec<StagePolicy>, Policy), RunError> {
    if config.pipeline.is_empty() {
        return Err(RunError::Create(CreateError::NoPipeline));
    }
    let mut pipeline: Vec<StagePolicy> = match &plan.stages {
        None => config.pipeline.clone(),
        Some(names) => {
            let mut stages = Vec::new();
            for (i, name) in names.iter().enumerate() {
                let Some(stage) = config.pipeline.iter().find(|s| &s.stage == name) else {
                    let (line, column) = plan.stage_positions.get(i).copied().unwrap_or((1, 1));
                    return Err(RunError::Create(CreateError::UnknownPlanStage {
                        plan: plan_path.into(),
                        line,
                        column,
                        stage: name.clone(),
                        known: stage_names(&config.pipeline),
                    }));
                };
                stages.push(stage.clone());
            }
            stages
        }
    };
    // A plan adds checks; one named like the repository's would replace it.
    if let Some(err) = config.plan_check_conflict(plan, plan_path) {
        return Err(RunError::Plan(err));
    }
    if plan.targets.is_empty() && config.require_targets {
        return Err(RunError::Create(CreateError::NoTargets {
            plan: plan_path.into(),
        }));
    }
    if !plan.targets.is_empty() && !pipeline.iter().any(|s| s.gated) {
        return Err(RunError::Create(CreateError::Ungated {
            plan: plan_path.into(),
        }));
    }
    for (stage, actor) in actors {
        let known = stage_names(&pipeline);
        let Some(entry) = pipeline.iter_mut().find(|s| &s.stage == stage) else {
            return Err(RunError::Create(CreateError::UnknownRunStage {
                option: "--actor",
                stage: stage.clone(),
                known,
            }));
        };
        require_configured_actor(config, actor)?;
        entry.actor = actor.clone();
    }
    if let Some(stop) = stop_after
        && !pipeline.iter().any(|s| s.stage == stop)
    {
        return Err(RunError::Create(CreateError::UnknownRunStage {
            option: "--stop-after",
            stage: stop.into(),
            known: stage_names(&pipeline),
        }));
    }
    Ok((
        pipeline,
        Policy {
            coverage: config.coverage,
            stop_after: stop_after.map(String::from),
        },
    ))
}

/// What creation checked before anything exists: the plan with its targets, the run's
/// pipeline and policy, and the pattern that keeps a worktree root out of `git status`.
struct Checked {
    plan: Plan,
    targets_source: crate::state::TargetSource,
    pipeline: Vec<StagePolicy>,
    policy: Policy,
    exclude: Option<String>,
}

/// Every check a new run of `options` must pass before anything is created, without creating
/// it: `run` with several plans checks them all first, so that a bad one creates none.
pub fn check(repo: &Repo, config: &Config, options: &CreateOptions) -> Result<(), RunError> {
    checked(repo, config, options).map(drop)
}

fn checked(repo: &Repo, config: &Config, options: &CreateOptions) -> Result<Checked, RunError> {
    // Before anything is written: git would leave a branch's reflog begun and not finished.
    if !repo.has_committer() {
        return Err(RunError::Create(CreateError::NoIdentity));
    }
    let (plan, targets_source) = super::targets::for_new_run(
        repo,
        options.base,
        &options.plan_path,
        options.plan,
        config.derive_targets,
    )?;
    let (pipeline, policy) = policy(
        config,
        &plan,
        &options.plan_path,
        options.stop_after,
        options.actors,
    )?;
    // Before anything is created: a refused root leaves no trace.
    let exclude = super::worktree_root::check(repo, options.main_worktree, config)?;
    // The run's worktree has the base's files and this repository's ignore rules; a target they
    // exclude could only end uncovered, after the agent worked for nothing.
    let ignored = crate::verify::ignored::ignored_targets(
        repo,
        options.main_worktree,
        options.base,
        &options.plan_path,
        options.plan,
    )?;
    if let Some(first) = ignored.into_iter().next() {
        return Err(RunError::Create(CreateError::IgnoredTarget(Box::new(
            first,
        ))));
    }
    Ok(Checked {
        plan,
        targets_source,
        pipeline,
        policy,
        exclude,
    })
}

/// Creates the run `options` describe, or finds the one its key names. What is worth telling on
/// the way goes to `sink`.
pub fn create(
    repo: &Repo,
    store: &Store,
    config: &Config,
    options: &CreateOptions,
    sink: &dyn super::note::Sink,
) -> Result<Created, RunError> {
    let Checked {
        plan,
        targets_source,
        pipeline,
        policy,
        exclude,
    } = checked(repo, config, options)?;
    let _creating = store.creation_lock()?;
    if let Some(key) = options.key
        && let Some(existing) = find_by_key(store, key)?
    {
        let snapshot = existing
            .plan_snapshot_in(&store.run_dir(&existing.run_id))
            .ok()
            .and_then(|path| crate::files::read_regular_string(&path).ok())
            .unwrap_or_default();
        if snapshot != options.plan_text || existing.plan.path != options.plan_path {
            return Err(RunError::Create(CreateError::KeyConflict {
                key: key.into(),
                run: existing.run_id.to_string(),
                plan: existing.plan.path,
            }));
        }
        return Ok(Created::Existing(Box::new(existing)));
    }

    let id = store.allocate_id()?;
    let branch = format!("baton/{id}");
    let worktree = worktree_path(options.main_worktree, &config.worktree_root, &id);
    let mut undo = Undo {
        repo,
        staging: None,
        branch: None,
        worktree: None,
    };

    let staging = store.staging_dir(&id);
    std::fs::create_dir_all(&staging).map_err(io_err("create", &staging))?;
    undo.staging = Some(staging.clone());
    fail_at("snapshot")?;
    store::write_atomic(
        &staging.join(crate::state::trust::PLAN_SNAPSHOT),
        options.plan_text.as_bytes(),
    )?;

    fail_at("branch")?;
    repo.create_branch(&branch, options.base)?;
    undo.branch = Some(branch.clone());

    fail_at("worktree")?;
    if let Some(pattern) = &exclude {
        // A root inside the main worktree must not show up there as untracked files.
        super::worktree_root::exclude(repo, options.main_worktree, pattern)?;
    }
    if let Some(parent) = worktree.parent() {
        std::fs::create_dir_all(parent).map_err(io_err("create", parent))?;
    }
    // A creation killed while git registered its worktree leaves an entry that makes every
    // later worktree operation fail; it holds no work.
    // No other creation is under way: this one holds the creation lock.
    repo.discard_broken_worktrees(is_run_id)?;
    undo.worktree = Some(worktree.clone());
    repo.add_worktree(&worktree, &branch)?;

    fail_at("state")?;
    let state = RunState::new(
        NewRun {
            run_id: id.clone(),
            key: options.key.map(String::from),
            plan: PlanRef {
                id: options.plan.id.clone(),
                title: options.plan.title.clone(),
                path: options.plan_path.clone(),
                snapshot: crate::state::trust::PLAN_SNAPSHOT.into(),
                targets: plan.targets.iter().map(|t| t.spec.clone()).collect(),
                targets_source,
            },
            base: options.base,
            base_rev: options.base_rev.into(),
            branch: branch.clone(),
            queued: options.queued,
            worktree: worktree.display().to_string(),
            pipeline,
            policy,
        },
        store.now(),
    )?;
    store::save_in(&staging, &state)?;
    let mut lock = RunLock::acquire_in(&staging, &id, options.command, store.clock())?;

    fail_at("publish")?;
    let final_dir = store.run_dir(&id);
    std::fs::rename(&staging, &final_dir).map_err(io_err("publish", &final_dir))?;
    lock.moved_to(final_dir.clone());
    undo.disarm();
    // The run exists from the rename on; a record that fails here is written by the next save.
    if let Err(err) = super::record::record(repo, &final_dir, &state) {
        sink.note(super::note::Note::NotRecordedYet {
            run: id.to_string(),
            reason: err.to_string(),
        });
    }
    Ok(Created::New(Box::new(state), lock))
}

/// The default keeps worktrees inside the main worktree (`.baton/worktrees/<id>`): agents such
/// as Claude Code refuse to edit under `.git/`, and CI runners own the checkout but not always
/// its parent directory. `worktree_root` may point elsewhere.
pub(super) fn worktree_path(main_worktree: &Path, root: &str, id: &str) -> PathBuf {
    let root = Path::new(root);
    let root = if root.is_absolute() {
        root.to_path_buf()
    } else {
        main_worktree.join(root)
    };
    root.join(id)
}

fn find_by_key(store: &Store, key: &str) -> Result<Option<RunState>, RunError> {
    for id in store.list()? {
        if let Ok(state) = store.load(&id)
            && state.key.as_deref() == Some(key)
        {
            return Ok(Some(state));
        }
    }
    Ok(None)
}

/// An injected failure at `step` (see [`crate::files::fail_point`]).
pub(super) fn fail_at(step: &str) -> Result<(), RunError> {
    if crate::files::fail_point(step) {
        return Err(RunError::Create(CreateError::Injected {
            step: step.into(),
        }));
    }
    Ok(())
}

fn stage_names(pipeline: &[StagePolicy]) -> Vec<String> {
    pipeline.iter().map(|s| s.stage.clone()).collect()
}

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> RunError {
    let path = path.to_path_buf();
    move |source| RunError::Io {
        action,
        path,
        source,
    }
}

/// Undoes the steps made so far unless disarmed: worktree, then branch, then the staged directory.
struct Undo<'a> {
    repo: &'a Repo,
    staging: Option<PathBuf>,
    branch: Option<String>,
    worktree: Option<PathBuf>,
}

impl Undo<'_> {
    fn disarm(&mut self) {
        self.staging = None;
        self.branch = None;
        self.worktree = None;
    }
}

impl Drop for Undo<'_> {
    fn drop(&mut self) {
        if let Some(worktree) = self.worktree.take()
            && worktree.exists()
        {
            let _ = self.repo.remove_worktree(&worktree, true);
        }
        if let Some(branch) = self.branch.take() {
            let _ = self.repo.delete_branch(&branch);
        }
        if let Some(staging) = self.staging.take() {
            let _ = std::fs::remove_dir_all(staging);
        }
    }
}

/// Worktree registrations named like a run id are git-baton's own.
pub(super) fn is_run_id(name: &str) -> bool {
    name.parse::<crate::state::RunId>().is_ok()
}

/// An actor `--actor` names must be configured: what `run` and `resume` check before they use it.
pub(super) fn require_configured_actor(config: &Config, actor: &str) -> Result<(), RunError> {
    if config.actors.contains_key(actor) {
        return Ok(());
    }
    Err(RunError::Create(CreateError::UnknownActor {
        actor: actor.to_owned(),
        known: config.actors.keys().cloned().collect(),
    }))
}
