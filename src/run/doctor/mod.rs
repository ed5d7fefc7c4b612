//! Health checks of every run in a repository: what is wrong, and the one shell command that
//! fixes each finding, listed in an order in which the commands apply top to bottom.
//!
//! The order is by kind ([`Kind`]): what blocks git itself first (half-written worktree
//! registrations make every worktree operation fail), then the leftovers of killed
//! writes, creations and removals, then the runs themselves, then the worktrees and then the
//! branches that belong to no run — a branch cannot be deleted while a worktree has it checked
//! out — and last a record that lags its state, whose fix is `doctor --fix` itself, which fails
//! while a finding it may not fix remains.
//!
//! A finding is `safe` when its fix cannot lose work: debris of killed creations, temporary
//! files of killed writes, removals cut short, broken registrations, worktrees and branches that
//! hold nothing no other place has. [`fix`] applies those (`doctor --fix`), and with `force` also
//! deletes branches holding commits no other branch has. It never removes a worktree holding
//! anything its HEAD does not. Everything `doctor` looks at and changes is examined while no run
//! is being created (it holds the creation lock), and nothing a live process holds is touched.

mod branches;
mod fix;
mod worktrees;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use fix::{Fixed, fix};

use crate::git::{GitError, Repo};
use crate::run::WorktreeError;
use crate::state::store::{self, Store, TempOwner, Unfinished};
use crate::state::{RunId, RunState, RunStatus};

use super::RunError;

/// What a finding is about, in the order its fix must be applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A lock file a killed git left in the repository (every git command that needs it fails).
    GitLock,
    /// A worktree registration a killed creation left half-written.
    BrokenRegistration,
    /// The temporary file of an atomic write that was killed before its rename.
    TemporaryFile,
    /// The staging directory of a creation that did not complete.
    OrphanedCreation,
    /// A run whose removal (`clean`) was cut short.
    OrphanedRemoval,
    /// A run directory without `state.json`, which no command sees as a run.
    HeadlessRun,
    /// A run directory whose `state.json` cannot be read.
    UnreadableState,
    /// A run's worktree owned by another user.
    DubiousOwnership,
    /// A run's worktree is missing, moved, or on another branch.
    BrokenWorktree,
    /// A run says it is running but nobody drives it.
    StaleRun,
    /// A published run whose record here and on its remote both advanced since they agreed.
    DivergedRecord,
    /// A directory under the worktree root that belongs to no run.
    OrphanedWorktree,
    /// A `baton/` branch that belongs to no run.
    OrphanedBranch,
    /// A run's record in git lags its `state.json` (a kill between the two writes). Last: its
    /// fix is `doctor --fix`, which fails while a finding it may not fix remains, so every
    /// other printed fix must have run before it.
    UnrecordedState,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::GitLock => "git_lock",
            Kind::BrokenRegistration => "broken_registration",
            Kind::TemporaryFile => "temporary_file",
            Kind::OrphanedCreation => "orphaned_creation",
            Kind::OrphanedRemoval => "orphaned_removal",
            Kind::HeadlessRun => "headless_run",
            Kind::UnreadableState => "unreadable_state",
            Kind::DubiousOwnership => "dubious_ownership",
            Kind::BrokenWorktree => "broken_worktree",
            Kind::StaleRun => "stale_run",
            Kind::UnrecordedState => "unrecorded_state",
            Kind::DivergedRecord => "diverged_record",
            Kind::OrphanedWorktree => "orphaned_worktree",
            Kind::OrphanedBranch => "orphaned_branch",
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Finding {
    pub kind: Kind,
    pub run: Option<String>,
    /// What is wrong, and what to weigh before running the fix.
    pub message: String,
    /// One shell command that fixes it, valid after the fixes listed before it ran.
    pub fix: String,
    /// The fix cannot lose work: `doctor --fix` applies it.
    pub safe: bool,
    /// What `--fix` does instead of the command (the same, in process), if it may do it.
    #[serde(skip)]
    action: Option<Action>,
}

/// What `doctor --fix` does for a finding.
#[derive(Debug, Clone)]
enum Action {
    /// A temporary file, removed under the lock its writer held.
    RemoveFile(PathBuf, TempOwner),
    RemoveDir(PathBuf),
    FinishRemoval(RunId),
    /// A run directory without its state, removed with its snapshot refs.
    RemoveHeadless(RunId),
    /// A worktree directory; registered with git, or not (its registration never completed).
    RemoveWorktree {
        path: PathBuf,
        registered: bool,
    },
    DeleteBranch {
        branch: String,
        id: String,
    },
    /// Records the run's `state.json` in git.
    Record(RunId),
}

impl Finding {
    fn new(kind: Kind, run: Option<&str>, message: String, fix: String) -> Finding {
        Finding {
            kind,
            run: run.map(String::from),
            message,
            fix,
            safe: false,
            action: None,
        }
    }

    /// `--fix` may apply it: always when `safe`, else only with `--force`.
    fn applied(mut self, action: Action, safe: bool) -> Finding {
        self.action = Some(action);
        self.safe = safe;
        self
    }
}

/// Every finding, in the order their fixes apply. Waits for a run creation in progress to end
/// and keeps new ones from starting meanwhile, so that a creation is never taken for debris.
pub fn check(repo: &Repo, store: &Store, worktree_root: &Path) -> Result<Vec<Finding>, RunError> {
    let _settled = store.creations_settled()?;
    Ok(findings(repo, store, worktree_root))
}

/// The findings as things are now; the caller keeps creations out.
fn findings(repo: &Repo, store: &Store, worktree_root: &Path) -> Vec<Finding> {
    let mut found = Vec::new();
    let ids = store.list().unwrap_or_default();
    runs(repo, store, &ids, &mut found);
    let unfinished = store.unfinished();
    unfinished_dirs(&unfinished, &mut found);
    headless_runs(repo, store, &mut found);
    temporary_files(store, &mut found);
    git_locks(repo, &mut found);
    broken_registrations(repo, &mut found);
    orphans(repo, store, worktree_root, &ids, &unfinished, &mut found);
    found.sort_by_key(|f| f.kind);
    found
}

/// The runs of the store: a state that cannot be read, or what is wrong with a readable one.
fn runs(repo: &Repo, store: &Store, ids: &[RunId], found: &mut Vec<Finding>) {
    let mut states: Vec<RunState> = Vec::new();
    for id in ids {
        match store.load(id) {
            Ok(state) => states.push(state),
            Err(err) => found.push(Finding::new(
                Kind::UnreadableState,
                Some(id),
                format!(
                    "{err}; inspect {} if the run matters, else remove it",
                    store.run_dir(id).display()
                ),
                format!("git baton clean --force {id}"),
            )),
        }
    }
    for state in &states {
        check_run(repo, store, state, found);
    }
}

/// The directories of a creation or a removal that did not complete, and that no live process
/// is working on.
fn unfinished_dirs(unfinished: &[(Unfinished, RunId, PathBuf)], found: &mut Vec<Finding>) {
    for (what, id, dir) in unfinished {
        // A removal or creation in progress holds the directory's lock.
        if !matches!(store::holder_in(dir), Ok(None)) {
            continue;
        }
        found.push(match what {
            Unfinished::Creation => Finding::new(
                Kind::OrphanedCreation,
                None,
                format!(
                    "{} is left over from the creation of run {id}, which did not complete",
                    dir.display()
                ),
                format!("rm -rf {}", quote(dir)),
            )
            .applied(Action::RemoveDir(dir.clone()), true),
            Unfinished::Removal => Finding::new(
                Kind::OrphanedRemoval,
                Some(id),
                format!(
                    "the removal of run {id} was cut short; what is left of it is in {}",
                    dir.display()
                ),
                format!("git baton clean {id}"),
            )
            .applied(Action::FinishRemoval(id.clone()), true),
        });
    }
}

/// The run directories left without their state.json.
fn headless_runs(repo: &Repo, store: &Store, found: &mut Vec<Finding>) {
    for (id, dir) in store.headless() {
        // A live process holding its lock is in the middle of something with it.
        if !matches!(store::holder_in(&dir), Ok(None)) {
            continue;
        }
        let mut message = format!(
            "{} is what is left of run {id} without its state.json (a removal killed midway, or \
             a deletion by hand): no command sees it as a run; it holds no work — its worktree \
             and branch, if any, are reported on their own",
            dir.display()
        );
        // The record in git is the run's history, and may be all that is left of its last
        // state: removing it is for the user to decide (`--fix --force`).
        let record = super::record::record_ref(&id);
        let recorded = !matches!(repo.ref_target(&record), Ok(None));
        if recorded {
            message.push_str(&format!(
                "; but its record {record} still holds its last state, which the fix deletes too \
                 (`git show {record}:state.json > {}` brings the run back instead)",
                quote(&dir.join("state.json"))
            ));
        }
        found.push(
            Finding::new(
                Kind::HeadlessRun,
                Some(&id),
                message,
                format!("git baton clean --force {id}"),
            )
            .applied(Action::RemoveHeadless(id), !recorded),
        );
    }
}

/// The files of atomic writes that did not complete, when no live process owns them.
fn temporary_files(store: &Store, found: &mut Vec<Finding>) {
    for temp in store.temporary_files() {
        if let TempOwner::Run(id) = &temp.owner
            && !matches!(store.holder(id), Ok(None))
        {
            continue;
        }
        // Only files of the exact name an atomic write gives them are listed: a directory, a
        // link or a file of another name there is somebody else's.
        found.push(
            Finding::new(
                Kind::TemporaryFile,
                None,
                format!(
                    "{} is left over from a write that did not complete",
                    temp.path.display()
                ),
                format!("rm -f {}", quote(&temp.path)),
            )
            .applied(Action::RemoveFile(temp.path.clone(), temp.owner), true),
        );
    }
}

/// git's own lock files: doctor names them and leaves their removal to the user.
fn git_locks(repo: &Repo, found: &mut Vec<Finding>) {
    for lock in repo.git_locks() {
        found.push(Finding::new(
            Kind::GitLock,
            None,
            format!(
                "{} exists: a git command is running, or one was killed while it held the lock \
                 (git never removes a lock it did not finish), and git refuses to take it again; \
                 remove it once no git command is running",
                lock.display()
            ),
            format!("rm -f {}", quote(&lock)),
        ));
    }
}

/// The worktree registrations of runs that a killed creation left unusable.
fn broken_registrations(repo: &Repo, found: &mut Vec<Finding>) {
    for broken in repo.broken_worktrees(super::create::is_run_id) {
        found.push(
            Finding::new(
                Kind::BrokenRegistration,
                None,
                format!(
                    "{} is a worktree registration a killed creation left unusable ({}); it holds \
                     no work",
                    broken.path.display(),
                    broken.why
                ),
                format!("rm -rf {}", quote(&broken.path)),
            )
            .applied(Action::RemoveDir(broken.path.clone()), true),
        );
    }
}

/// The worktrees and branches of runs that are gone: no run, no removal to finish, no clean
/// that kept the branch on purpose.
fn orphans(
    repo: &Repo,
    store: &Store,
    worktree_root: &Path,
    ids: &[RunId],
    unfinished: &[(Unfinished, RunId, PathBuf)],
    found: &mut Vec<Finding>,
) {
    let removals: Vec<&RunId> = unfinished
        .iter()
        .filter(|(what, ..)| *what == Unfinished::Removal)
        .map(|(_, id, _)| id)
        .collect();
    // A removal finishes with its worktree; a cleaned run's worktree went with it.
    let worktree_owners: Vec<&str> = ids
        .iter()
        .chain(removals.iter().copied())
        .map(|id| id.as_str())
        .collect();
    // Worktrees that stay until someone looks at them keep their branches checked out.
    let kept_worktrees = worktrees::orphaned(repo, worktree_root, &worktree_owners, found);
    // A cleaned run keeps its branch on purpose.
    let cleaned = store.cleaned();
    let branch_owners: Vec<&str> = worktree_owners
        .iter()
        .copied()
        .chain(cleaned.iter().map(String::as_str))
        .collect();
    found.extend(branches::orphaned(repo, &branch_owners, &kept_worktrees));
}

/// What is wrong with one readable run: stale, or its worktree.
fn check_run(repo: &Repo, store: &Store, state: &RunState, found: &mut Vec<Finding>) {
    let id = &state.run_id;
    let stale = store.is_stale(state);
    let mut resume = format!("git baton resume {id}");
    if state.status() != RunStatus::Finished {
        match Repo::open_worktree(Path::new(&state.worktree)) {
            Err(GitError::DubiousOwnership { path }) => found.push(Finding::new(
                Kind::DubiousOwnership,
                Some(id),
                format!(
                    "the worktree of run {id} is owned by another user: {}; trust it only if you \
                     know who owns it",
                    path.display()
                ),
                format!("git config --global --add safe.directory {}", quote(&path)),
            )),
            _ => {
                if let Err(err) = super::check_worktree(repo, state) {
                    let (repair, why) = repair(&err, state);
                    if stale && repair.starts_with(&resume) {
                        // One command repairs the worktree and resumes the run.
                        resume = repair;
                    } else {
                        found.push(Finding::new(
                            Kind::BrokenWorktree,
                            Some(id),
                            format!("{err}; {why}"),
                            repair,
                        ));
                    }
                }
            }
        }
    }
    if stale {
        found.push(Finding::new(
            Kind::StaleRun,
            Some(id),
            format!(
                "run {id} is {} but no process drives it: it crashed or was killed; resuming \
                 records the crash and runs the stage again{}",
                state.status(),
                orphaned_actor(store, state)
            ),
            resume,
        ));
    }
    check_record(repo, store, state, found);
}

/// The run's record in git against its `state.json`, and against its remote's.
fn check_record(repo: &Repo, store: &Store, state: &RunState, found: &mut Vec<Finding>) {
    let id = &state.run_id;
    // A live driver may be between its two writes; only a run nobody holds can lag. A stale
    // run's fix, `resume`, records it anyway.
    if matches!(store.holder(id), Ok(None))
        && !store.is_stale(state)
        && let Ok(super::record::Recorded::Behind(_)) =
            super::record::recorded(repo, &store.run_dir(id), id)
    {
        found.push(
            Finding::new(
                Kind::UnrecordedState,
                Some(id),
                format!(
                    "the record of run {id} in git ({}) lags its state.json: a save was cut \
                     short; the next save records it, and so does `doctor --fix`",
                    super::record::record_ref(id)
                ),
                "git baton doctor --fix".into(),
            )
            .applied(Action::Record(id.clone()), true),
        );
    }
    if let Some(remote) = state.remote()
        && let Ok(super::remote::Standing::Diverged) = super::remote::sync_of(repo, id, remote)
    {
        found.push(Finding::new(
            Kind::DivergedRecord,
            Some(id),
            format!(
                "the records of run {id} here and on {remote} have diverged: both advanced since \
                 they last agreed (two machines drove it); removing it here keeps {remote}'s, \
                 which `git baton resume {id}` rebuilds, and loses what only this clone recorded"
            ),
            format!("git baton clean --force {id}"),
        ));
    }
}

/// What a stale run's open attempt left running, as a clause of the stale-run message: an
/// actor whose driver died keeps editing the worktree, and `resume` stops it first.
fn orphaned_actor(store: &Store, state: &RunState) -> String {
    let Some((i, attempt)) = state.open_attempt() else {
        return String::new();
    };
    let Ok(dir) = state.attempt_dir_in(
        &store.run_dir(&state.run_id),
        &state.stages()[i].name,
        attempt,
    ) else {
        return String::new();
    };
    let pids = crate::exec::live_leftovers(
        &dir.join(super::ATTEMPT_TOKEN),
        &dir.join(super::ACTOR_PID),
        Path::new(&state.worktree),
    );
    if pids.is_empty() {
        return String::new();
    }
    let list: Vec<String> = pids.iter().map(i32::to_string).collect();
    format!(
        "; its actor is still running and may still be changing the worktree: {} process(es) \
         of attempt {} {} (pid {}), which resuming stops first",
        pids.len(),
        state.stages()[i].name,
        attempt.n,
        list.join(", ")
    )
}

/// The one command that repairs a run's worktree mapping, and what to know before running it.
fn repair(err: &RunError, state: &RunState) -> (String, String) {
    let (id, worktree) = (&state.run_id, Path::new(&state.worktree));
    match err {
        RunError::Worktree(WorktreeError::Stale(inner)) => repair(inner, state),
        RunError::Worktree(WorktreeError::WorktreeMissing { branch, .. }) => (
            format!("git baton resume {id} --recreate-worktree"),
            format!(
                "this rebuilds it from branch {branch} and the last attempt's snapshot, then \
                 resumes the run"
            ),
        ),
        RunError::Worktree(WorktreeError::WrongBranch { branch, .. }) => (
            format!("git -C {} switch {branch}", quote(worktree)),
            "this puts the worktree back on the run's branch".into(),
        ),
        RunError::Worktree(WorktreeError::BaseNotInHistory { branch, .. }) => (
            format!("git baton clean --force {id}"),
            format!(
                "the branch was rewritten: restore it from `git reflog {branch}` instead if its \
                 work matters, since this removes the run and its worktree"
            ),
        ),
        _ => (
            format!("git worktree repair {}", quote(worktree)),
            format!(
                "this re-links a moved worktree; if it was not moved, move it away and run `git \
                 baton resume {id} --recreate-worktree` instead"
            ),
        ),
    }
}

/// A path as one shell word.
fn quote(path: &Path) -> String {
    let text = path.to_string_lossy();
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_quoted_as_one_shell_word() {
        assert_eq!(quote(Path::new("/a b/c")), "'/a b/c'");
        assert_eq!(quote(Path::new("/it's")), r"'/it'\''s'");
    }

    #[test]
    fn kinds_sort_in_the_order_their_fixes_apply() {
        let mut kinds = [
            Kind::OrphanedBranch,
            Kind::GitLock,
            Kind::OrphanedWorktree,
            Kind::StaleRun,
            Kind::HeadlessRun,
            Kind::UnrecordedState,
            Kind::TemporaryFile,
            Kind::BrokenRegistration,
        ];
        kinds.sort();
        let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
        assert_eq!(
            names,
            [
                "git_lock",
                "broken_registration",
                "temporary_file",
                "headless_run",
                "stale_run",
                "orphaned_worktree",
                "orphaned_branch",
                "unrecorded_state"
            ]
        );
        assert_eq!(
            serde_json::to_value(Kind::OrphanedRemoval).unwrap(),
            "orphaned_removal"
        );
    }
}
