//! After the pipeline: finishing a reviewed run, removing a run, and re-creating a lost
//! worktree. Each acts only on an explicit command; nothing here deletes uncommitted work
//! unless the caller was told to (`--force`).

use std::path::{Path, PathBuf};

use crate::coverage::TargetStatus;
use crate::git::{Identity, Repo, Scope};
use crate::run::WorktreeError;
use crate::state::store::{self, RunLock, Store};
use crate::state::transition::{self, Event};
use crate::state::{RunId, RunState, RunStatus};

use super::RunError;
use super::session::Session;

pub struct Finished {
    /// The commit made on the run's branch (always one: it carries the trailers), `None` only
    /// if the branch already had it.
    pub commit: Option<String>,
    pub unchanged_trailers: usize,
    pub worktree_removed: bool,
    /// When the worktree was kept: what in it the branch does not hold (uncommitted, untracked
    /// or ignored paths; empty when they could not be listed).
    pub left: Vec<String>,
}

/// The commit message `finish` writes: trailers that `verify` reads in CI. `Baton-Plan` names
/// the plan for `verify` to check, when its path is one inside the repository.
///
/// Every piece of text in it comes from a plan or an agent, and git refuses a message with a NUL
/// (`finish` would then fail for ever), so each goes through [`message_text`]: the message
/// holds no control character but its own line breaks and whatever tabs the text had.
pub fn finish_message(state: &RunState) -> String {
    use crate::coverage::{PLAN_TRAILER_KEY, RUN_TRAILER_KEY, is_repo_path};
    let title = message_text(state.plan.title.as_deref().unwrap_or(&state.plan.id));
    let (run, plan) = (
        message_text(state.run_id.as_str()),
        message_text(&state.plan.path),
    );
    let mut message = format!(
        "{title}\n\nWork of git-baton run {run} for plan {plan}.\n\n{RUN_TRAILER_KEY}: {run}\n"
    );
    if is_repo_path(&state.plan.path) {
        message.push_str(&format!("{PLAN_TRAILER_KEY}: {}\n", state.plan.path));
    }
    // For the reader only: in CI the merge base's configuration decides whether targets are
    // derived, never a commit of the range.
    if state.plan.targets_source == crate::state::TargetSource::Derived {
        message.push_str(&format!(
            "{}: derived from the plan's body\n",
            crate::coverage::TARGETS_TRAILER_KEY
        ));
    }
    for (target, reason) in unchanged(state) {
        message.push_str(&format!(
            "{}: {}: {}\n",
            crate::coverage::TRAILER_KEY,
            message_text(&target),
            message_text(&reason)
        ));
    }
    message
}

/// `text` fit for one line of a commit message: a line break (CR, LF, or both) becomes a space,
/// as a trailer's continuation line would be folded, and every other control character but the
/// tab becomes a visible `\u{..}` escape. The gate refuses such reasons and the plan parser such
/// targets, so this only ever changes a title, or what a RunState from an older git-baton holds.
fn message_text(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\t') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' | '\n' => out.push(' '),
            '\t' => out.push(c),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

fn unchanged(state: &RunState) -> Vec<(String, String)> {
    state
        .coverage()
        .into_iter()
        .flat_map(|r| &r.targets)
        .filter(|t| t.status == TargetStatus::Unchanged)
        .filter_map(|t| t.reason.clone().map(|r| (t.target.clone(), r)))
        .collect()
}

/// Commits what is left in the worktree onto the run's branch with `Baton-Run` and
/// `Baton-Unchanged` trailers, marks the run finished (as of `at`, when it was asked to) through
/// its session, and removes the worktree when nothing is left uncommitted in it.
pub fn finish(
    repo: &Repo,
    session: &Session,
    state: &mut RunState,
    at: jiff::Timestamp,
) -> Result<Finished, RunError> {
    // Refused before anything is committed: only a run in review may be finished.
    transition::check_finishable(state)?;
    // A status is a claim (a remote's record may say `review`): the gate is judged again.
    super::claims::check_verdict(repo, session.dir(), state)?;
    super::check_worktree(repo, state)?;
    let worktree = PathBuf::from(&state.worktree);
    let worktree = worktree.as_path();
    let tip = repo
        .branch_tip(&state.branch)?
        .ok_or_else(|| RunError::NoBranch {
            run: state.run_id.to_string(),
            branch: state.branch.clone(),
        })?;
    let reasons = unchanged(state).len();
    super::create::fail_at("finish:commit")?;
    // The trailers must reach the branch even when every change is already committed (an empty
    // commit, then): CI reads the reasons, and the plan to check from `Baton-Plan`.
    let commit = repo
        .record_worktree(worktree, tip, &finish_message(state), Identity::User)?
        .whole()?;
    // What the branch will hold is the worktree as it is now, which may have lost work since
    // the last attempt's snapshot: the gate is judged on it before the branch moves.
    super::claims::check_verdict_on(repo, session.dir(), state, Some(commit))?;
    let committed = commit != tip;
    // The commit exists; the branch does not have it yet.
    super::create::fail_at("finish:committed")?;
    if committed {
        repo.advance_branch(worktree, &state.branch, tip, commit)?;
    }
    // The branch has it; the RunState still says `review`.
    super::create::fail_at("finish:save")?;
    session.commit_with(state, Event::Finished, at, super::write_result)?;

    // `git worktree remove` deletes ignored files without asking: a worktree is removed only
    // when nothing at all in it is missing from the branch, and kept when that is unknown.
    let left = left_behind(repo, worktree, commit);
    let worktree_removed = matches!(&left, Ok(paths) if paths.is_empty())
        && repo.remove_worktree(worktree, false).is_ok();
    Ok(Finished {
        commit: committed.then(|| commit.to_string()),
        unchanged_trailers: reasons,
        worktree_removed,
        left: left.unwrap_or_default(),
    })
}

/// What the worktree at `worktree` holds that `commit` does not: changed and untracked paths,
/// then ignored ones (an ignored directory as one entry), then what else its removal would take
/// ([`Repo::held_beyond_files`]: submodule work, a HEAD no ref reaches).
fn left_behind(
    repo: &Repo,
    worktree: &Path,
    commit: crate::git::CommitId,
) -> Result<Vec<String>, RunError> {
    let mut paths = Repo::open_worktree(worktree)?.worktree_changes(commit, &Scope::All)?;
    paths.extend(repo.ignored_files(worktree)?);
    paths.extend(repo.held_beyond_files(worktree)?);
    Ok(paths)
}

/// Removes a run: its worktree, its snapshot refs and its directory. The branch stays: it holds
/// the work. An unfinished run is refused unless `force`, and so is a worktree that holds
/// anything its branch does not, because that may exist nowhere else.
///
/// Everything that may refuse is checked first; then one rename moves the run directory aside
/// (`runs/.clean-<id>`), which is the moment the run is gone; then the rest is removed. A kill
/// before the rename leaves the run whole and listed; a kill after it leaves a removal that
/// `doctor` reports and `clean` finishes ([`finish_removal`]) — never a run directory without
/// its state, which nothing would list.
pub fn clean(
    repo: &Repo,
    store: &Store,
    lock: &mut RunLock,
    state: &RunState,
    force: bool,
) -> Result<Option<PathBuf>, RunError> {
    if state.status() != RunStatus::Finished && !force {
        return Err(RunError::NotFinished {
            run: state.run_id.to_string(),
            status: state.status(),
            worktree: state.worktree.clone(),
        });
    }
    let worktree = Path::new(&state.worktree);
    if !force && worktree.exists() {
        // `finish` keeps the worktree exactly when something in it was left uncommitted.
        // Without its branch, what the worktree holds beyond the base would exist nowhere else.
        let kept = repo.branch_tip(&state.branch)?.unwrap_or(state.base);
        let mut unkept = super::open_run_worktree(repo, state)
            .map_err(|err| RunError::Worktree(WorktreeError::Stale(Box::new(err))))?
            .worktree_changes(kept, &Scope::All)?;
        // Removal deletes ignored files too; they may be an agent's work. So it does a HEAD no
        // ref reaches, and its submodules' work and repositories.
        unkept.extend(repo.ignored_files(worktree)?);
        unkept.extend(repo.held_beyond_files(worktree)?);
        if !unkept.is_empty() {
            return Err(RunError::Worktree(WorktreeError::WorktreeHoldsWork {
                run: state.run_id.to_string(),
                worktree: state.worktree.clone(),
                paths: unkept,
            }));
        }
    }
    remove(repo, store, lock, &state.run_id, Some(worktree))
}

/// Removes a run whose `state.json` cannot be read (`clean --force` of what `doctor` reports as
/// unreadable): its directory, its snapshot refs, and `worktree` when that is a worktree of this
/// repository on the run's branch.
pub fn clean_unreadable(
    repo: &Repo,
    store: &Store,
    lock: &mut RunLock,
    id: &RunId,
    worktree: Option<PathBuf>,
) -> Result<Option<PathBuf>, RunError> {
    let branch = format!("baton/{id}");
    let ours = worktree.filter(|w| {
        super::worktree_at(repo, w)
            .is_some_and(|wt| wt.head_branch().ok().flatten().as_deref() == Some(branch.as_str()))
    });
    remove(repo, store, lock, id, ours.as_deref())
}

/// Removes a run directory that has no `state.json` ([`Store::headless`]): what a removal of an
/// older git-baton killed midway, or a hand, left. With no RunState nothing says what its
/// worktree or branch hold, so both stay, and are not recorded as cleaned: `doctor` reports them
/// on their own, each with its own care. The directory and the run's refs (snapshots, record) go,
/// the same way a removal does (moved aside first, so a kill leaves a removal `clean` finishes).
pub fn clean_headless(
    repo: &Repo,
    store: &Store,
    lock: &mut RunLock,
    id: &RunId,
) -> Result<(), RunError> {
    move_aside(store, lock, id)?;
    finish_removal(repo, store, id, None).map(|_| ())
}

/// The removal itself, once everything that may refuse was checked.
fn remove(
    repo: &Repo,
    store: &Store,
    lock: &mut RunLock,
    id: &RunId,
    worktree: Option<&Path>,
) -> Result<Option<PathBuf>, RunError> {
    // Before the run disappears, so that its kept branch is never taken for debris.
    store.record_cleaned(id)?;
    move_aside(store, lock, id)?;
    finish_removal(repo, store, id, worktree)
}

/// Renames the run directory to its removal directory in one step: from then on the run is gone
/// and a removal is visibly in progress until it is done.
fn move_aside(store: &Store, lock: &mut RunLock, id: &RunId) -> Result<(), RunError> {
    let dir = store.run_dir(id);
    let aside = store.removal_dir(id);
    std::fs::rename(&dir, &aside).map_err(|source| RunError::Remove {
        path: dir.clone(),
        source,
    })?;
    // The lock moved with the directory: the removal is visibly in progress until it is done.
    lock.moved_to(aside);
    super::create::fail_at("clean:renamed")?;
    Ok(())
}

/// Completes the removal of run `id` once its directory was moved aside: the worktree (forced:
/// whether it could go was decided before the move), the snapshot refs, the directory. Every
/// step may be repeated, so a removal killed at any point can be finished by running this again.
/// `worktree` is the run's worktree when known; a removal found later reads it from the
/// RunState in the moved directory ([`recorded_worktree`]). Returns the directory at that path
/// it left in place because it is not the run's worktree ([`is_run_worktree`]), if any.
pub fn finish_removal(
    repo: &Repo,
    store: &Store,
    id: &RunId,
    worktree: Option<&Path>,
) -> Result<Option<PathBuf>, RunError> {
    let mut left = None;
    match worktree {
        // A directory at the worktree's path that git's registration of the run's worktree
        // does not name is someone else's (the run's worktree removed by hand, and another
        // directory made there): it stays, whatever it holds, and the caller says so.
        Some(worktree) if worktree.exists() && !is_run_worktree(repo, worktree, id) => {
            left = Some(worktree.to_path_buf());
            // Only a registration that names this path and whose `.git` is gone: the run's
            // own, when the directory there is not its worktree.
            repo.forget_worktree(worktree)?;
        }
        // git removes only a worktree registered with this repository, also one a killed removal
        // left half-deleted.
        Some(worktree) if worktree.exists() => {
            if let Err(source) = repo.remove_worktree(worktree, true) {
                if super::worktree_at(repo, worktree).is_some() || foreign(repo, worktree) {
                    return Err(RunError::Worktree(WorktreeError::WorktreeNotRemoved {
                        run: id.to_string(),
                        worktree: worktree.display().to_string(),
                        source,
                    }));
                }
                // What a removal killed inside git left: the files without their registration.
                std::fs::remove_dir_all(worktree).map_err(|source| RunError::Remove {
                    path: worktree.to_path_buf(),
                    source,
                })?;
                repo.forget_worktree(worktree)?;
            }
        }
        // Removed by hand: its registration, and no other worktree's.
        Some(worktree) => repo.forget_worktree(worktree)?,
        None => {}
    }
    super::create::fail_at("clean:worktree")?;
    // Nothing else writes a run's refs while its lock is held: a lock file there is a killed
    // git's, and would fail the deletion.
    repo.discard_ref_locks(&format!("baton/runs/{id}"))?;
    repo.delete_refs_under(&super::record::refs_prefix(id))?;
    super::create::fail_at("clean:refs")?;
    let aside = store.removal_dir(id);
    // The lock's heartbeat may write its file while the directory is being emptied: try again.
    let mut tries = 0;
    loop {
        match std::fs::remove_dir_all(&aside) {
            Ok(()) => return Ok(left),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(left),
            Err(_) if tries < 3 => tries += 1,
            Err(source) => {
                return Err(RunError::Remove {
                    path: aside,
                    source,
                });
            }
        }
    }
}

/// Whether the directory `path` is run `id`'s linked worktree, registered or half-deleted by
/// a removal killed inside git: a registration of this repository (`worktrees/<name>` in its
/// common directory) names `path` as its worktree and has the run's branch checked out. git
/// deletes a worktree's files before its registration, so whatever a killed removal left is
/// still named there; a directory nothing names is not the run's to delete.
fn is_run_worktree(repo: &Repo, path: &Path, id: &RunId) -> bool {
    // A registration's files are one line each; anything else is not git's.
    const LIMIT: u64 = 64 << 10;
    let read = |file: PathBuf| {
        crate::files::read_limited_regular(&file, LIMIT)
            .ok()
            .flatten()
            .and_then(|bytes| String::from_utf8(bytes).ok())
    };
    let head = format!("ref: refs/heads/baton/{id}");
    let Ok(entries) = std::fs::read_dir(repo.common_dir().join("worktrees")) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let admin = entry.path();
        let names_path = read(admin.join("gitdir")).is_some_and(|gitdir| {
            Path::new(gitdir.trim_end())
                .parent()
                .is_some_and(|dir| same_dir(dir, path))
        });
        names_path && read(admin.join("HEAD")).is_some_and(|h| h.trim_end() == head)
    })
}

/// Whether `path` is the worktree of another repository, which took the place of the run's.
fn foreign(repo: &Repo, path: &Path) -> bool {
    Repo::open_worktree(path).is_ok_and(|other| {
        other.workdir().is_ok_and(|dir| same_dir(dir, path))
            && !same_dir(other.common_dir(), repo.common_dir())
    })
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a.canonicalize()
        .ok()
        .is_some_and(|a| b.canonicalize().ok() == Some(a))
}

/// The worktree the RunState in a removal's directory names, when it is still readable (the
/// directory is deleted last, after the worktree).
pub fn recorded_worktree(store: &Store, id: &RunId) -> Option<PathBuf> {
    store::load(&store.removal_dir(id).join("state.json"))
        .ok()
        .map(|state| PathBuf::from(state.worktree))
}

/// Re-creates a run's missing worktree from its branch, then puts back the files of the last
/// attempt's snapshot (uncommitted work included), leaving branch and index at the branch tip.
pub fn recreate_worktree(repo: &Repo, state: &RunState) -> Result<(), RunError> {
    let worktree = Path::new(&state.worktree);
    if worktree.exists() {
        return Err(RunError::Worktree(WorktreeError::WorktreeExists {
            run: state.run_id.to_string(),
            worktree: state.worktree.clone(),
        }));
    }
    if repo.branch_tip(&state.branch)?.is_none() {
        return Err(RunError::Worktree(WorktreeError::BranchGone {
            run: state.run_id.to_string(),
            branch: state.branch.clone(),
        }));
    }
    // The registration the missing worktree left, and no other worktree's.
    repo.forget_worktree(worktree)?;
    if let Some(parent) = worktree.parent() {
        std::fs::create_dir_all(parent).map_err(|source| RunError::CreateDir {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    // Only this run's own registration: the caller holds the run's lock, so nothing else is
    // creating it, while other runs may be creating theirs.
    repo.discard_broken_worktrees(|name| name == state.run_id.as_str())?;
    repo.add_worktree(worktree, &state.branch)?;
    if let Some(id) = state.attempts().filter_map(|a| a.snapshot).next_back() {
        repo.restore_files(worktree, id)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::message_text;

    #[test]
    fn message_text_holds_no_control_character_git_or_a_terminal_would_mind() {
        assert!(matches!(
            message_text("Fix the grading"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(
            message_text("nul \u{0} bell \u{7} esc \u{1b}[2J\ttab"),
            "nul \\u{0} bell \\u{7} esc \\u{1b}[2J\ttab"
        );
        assert_eq!(
            message_text("two\nlines\r\nthree\rfour"),
            "two lines three four"
        );
        assert_eq!(message_text("c1 \u{9b}"), "c1 \\u{9b}");
    }
}
