//! The run's record in git: every save of the RunState is also a commit under
//! `refs/baton/runs/<id>/record` whose tree holds the run directory's record files, so that the
//! refs alone rebuild the run on any machine (with the attempt snapshots beside it, and the
//! branch).
//!
//! `state.json` on disk stays what the local commands read and lock; the record follows it at
//! every save, in the same lock. The record can only lag (a kill between the two writes), never
//! lead, and a lag shows: the record's `state.json` is not the file's ([`Recorded::Behind`]),
//! which `doctor` reports and the next save, or `push`, mends. A run taken from a remote is the
//! one exception by design: its record stays the remote's commit, while its `state.json` names
//! this clone's worktree and remote, until its next save — so that a clone that only looked
//! (refused by a lease, say) never makes a record of its own that the remote lacks.

use std::path::Path;

use crate::git::{CommitId, RecordFile, Repo};
use crate::run::DriveError;
use crate::state::RunState;
use crate::state::store;

use super::RunError;

/// Files of the run directory that belong to the record; everything else there (locks, pids,
/// tokens, requests, temporary files) is about this machine only.
const RUN_FILES: [&str; 4] = ["state.json", "plan.md", "result.json", "result.md"];
/// Files of an attempt's directory that belong to the record.
const ATTEMPT_FILES: [&str; 5] = [
    "prompt.md",
    "evidence.json",
    "stdout.log",
    "stderr.log",
    "stop-hook.json",
];
/// The most of one file a record keeps: logs are already capped by `log_limit`, but a record
/// travels to every clone, so it keeps the head and the tail of anything longer.
pub const FILE_LIMIT: usize = 1 << 20;
/// Files git-baton writes as JSON and reads back: cut, they would not parse, and the record
/// would no longer hold the run. They are recorded whole, up to [`WHOLE_LIMIT`], or not at all.
const WHOLE_FILES: [&str; 2] = ["state.json", "result.json"];
/// The most a whole file may have: far beyond what a run's state grows to (its coverage
/// reports keep a bounded number of paths, see `coverage::Report::bounded`).
pub const WHOLE_LIMIT: usize = crate::state::store::STATE_LIMIT as usize;

/// The most bytes a record's file at `path` may have when read back: a whole file's limit, or
/// a cut file with the marker of its cut.
pub fn read_limit(path: &str) -> u64 {
    let limit = match WHOLE_FILES.contains(&path) {
        true => WHOLE_LIMIT,
        false => FILE_LIMIT + 4096,
    };
    limit as u64
}

/// The ref of run `id`'s record.
pub fn record_ref(id: &str) -> String {
    format!("refs/baton/runs/{id}/record")
}

/// The prefix of every ref of run `id` but its branch.
pub fn refs_prefix(id: &str) -> String {
    format!("refs/baton/runs/{id}/")
}

/// Saves `state` into the run directory `dir`, then records it.
pub fn save(repo: &Repo, dir: &Path, state: &RunState) -> Result<(), RunError> {
    store::save_in(dir, state)?;
    record(repo, dir, state).map(drop)
}

/// Commits the record files of `dir` on top of the run's record and moves its ref there, unless
/// the record already holds exactly them. Returns the record commit, which is dated by the
/// state's `updated_at`: the same files on the same parent always make the same commit.
pub fn record(repo: &Repo, dir: &Path, state: &RunState) -> Result<CommitId, RunError> {
    let refname = record_ref(&state.run_id);
    let parent = repo.ref_target(&refname)?;
    let files = record_files(dir)?;
    let message = format!("baton: run {} is {}", state.run_id, state.status());
    let seconds = state.updated_at().as_second();
    let (commit, new) = repo.write_record(&files, parent, &message, seconds)?;
    if new {
        repo.swap_ref(&refname, commit, parent)?;
    }
    Ok(commit)
}

/// How the record of a run stands against its `state.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// The record holds the state on disk.
    Current(CommitId),
    /// The record lags the state on disk (a kill between the two writes).
    Behind(Option<CommitId>),
}

/// Whether run `id`'s record holds the `state.json` in `dir`.
pub fn recorded(repo: &Repo, dir: &Path, id: &str) -> Result<Recorded, RunError> {
    let Some(commit) = repo.ref_target(&record_ref(id))? else {
        return Ok(Recorded::Behind(None));
    };
    let on_disk = read(&dir.join("state.json"))?;
    let in_record = repo.read_record_file_at(commit, "state.json", read_limit("state.json"))?;
    let current = match in_record {
        Some(bytes) if bytes == on_disk => true,
        // A run taken from a remote keeps the remote's record until its next save, with this
        // clone's worktree and remote name in its state.json.
        Some(bytes) => match (store::parse(&bytes), store::parse(&on_disk)) {
            (Ok(recorded), Ok(here)) => recorded.same_but_local(&here),
            _ => false,
        },
        None => false,
    };
    Ok(match current {
        true => Recorded::Current(commit),
        false => Recorded::Behind(Some(commit)),
    })
}

/// The record files of the run directory `dir`, paths relative to it, sorted.
pub fn record_files(dir: &Path) -> Result<Vec<RecordFile>, RunError> {
    let mut files = Vec::new();
    for name in RUN_FILES {
        let path = dir.join(name);
        if let Some(bytes) = read_if_present(&path)? {
            files.push((name.to_owned(), bounded(&path, name, bytes)?));
        }
    }
    let attempts = dir.join("attempts");
    if attempts.is_dir() {
        let entries = std::fs::read_dir(&attempts).map_err(|source| RunError::Io {
            action: "list",
            path: attempts.clone(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| RunError::Io {
                action: "list",
                path: attempts.clone(),
                source,
            })?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            if !entry.path().is_dir() || name.starts_with('.') {
                continue;
            }
            for file in ATTEMPT_FILES {
                if let Some(bytes) = read_if_present(&entry.path().join(file))? {
                    files.push((format!("attempts/{name}/{file}"), cap(bytes)));
                }
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Writes the record files `files` into the directory `dir` (which exists), each atomically.
pub fn write_files(dir: &Path, files: &[RecordFile]) -> Result<(), RunError> {
    for (path, bytes) in files {
        if !is_record_path(path) {
            return Err(RunError::Drive(DriveError::BadRecord {
                path: path.clone(),
            }));
        }
        let target = dir.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|source| RunError::CreateDir {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        store::write_atomic(&target, bytes)?;
    }
    Ok(())
}

/// Whether `path` names a file a record may hold: what [`record_files`] collects, and nothing
/// that could land outside the run directory.
fn is_record_path(path: &str) -> bool {
    if RUN_FILES.contains(&path) {
        return true;
    }
    let mut parts = path.split('/');
    matches!(
        (parts.next(), parts.next(), parts.next(), parts.next()),
        (Some("attempts"), Some(dir), Some(file), None)
            if !dir.is_empty() && !dir.starts_with('.') && ATTEMPT_FILES.contains(&file)
    )
}

/// The bytes of the record file `name` (read from `path`): a whole file, refused above
/// [`WHOLE_LIMIT`]; any other file cut to [`FILE_LIMIT`].
pub fn bounded(path: &Path, name: &str, bytes: Vec<u8>) -> Result<Vec<u8>, RunError> {
    if !WHOLE_FILES.contains(&name) {
        return Ok(cap(bytes));
    }
    if bytes.len() > WHOLE_LIMIT {
        return Err(RunError::Drive(DriveError::RecordFileTooLarge {
            path: path.to_path_buf(),
            size: bytes.len(),
            limit: WHOLE_LIMIT,
        }));
    }
    Ok(bytes)
}

/// The record file `state.json` for `state`, to be saved in the run directory `dir`.
pub fn state_file(dir: &Path, state: &RunState) -> Result<RecordFile, RunError> {
    let bytes = store::to_json(state);
    let bytes = bounded(&dir.join("state.json"), "state.json", bytes)?;
    Ok(("state.json".to_owned(), bytes))
}

fn cap(bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() <= FILE_LIMIT {
        return bytes;
    }
    let half = FILE_LIMIT / 2;
    let cut = bytes.len() - 2 * half;
    let mut out = bytes[..half].to_vec();
    out.extend_from_slice(format!("\n[git-baton: {cut} bytes cut from the record]\n").as_bytes());
    out.extend_from_slice(&bytes[bytes.len() - half..]);
    out
}

fn read(path: &Path) -> Result<Vec<u8>, RunError> {
    crate::files::read_regular(path).map_err(read_error(path))
}

fn read_if_present(path: &Path) -> Result<Option<Vec<u8>>, RunError> {
    crate::files::if_present(crate::files::read_regular(path)).map_err(read_error(path))
}

fn read_error(path: &Path) -> impl FnOnce(std::io::Error) -> RunError + '_ {
    move |source| RunError::Io {
        action: "read",
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_files_of_a_record_may_come_from_one() {
        for good in ["state.json", "plan.md", "attempts/executor-1/stdout.log"] {
            assert!(is_record_path(good), "{good}");
        }
        for bad in [
            "lock",
            "../state.json",
            "attempts/../../config",
            "attempts/executor-1/actor.pid",
            "attempts/.x/prompt.md",
            "attempts/executor-1/sub/prompt.md",
            "attempts//prompt.md",
        ] {
            assert!(!is_record_path(bad), "{bad}");
        }
    }

    #[test]
    fn a_state_is_recorded_whole_or_refused_never_cut() {
        let path = Path::new("runs/x/state.json");
        let big = vec![b' '; FILE_LIMIT * 3];
        assert_eq!(bounded(path, "state.json", big.clone()).unwrap(), big);
        assert_eq!(bounded(path, "result.json", big.clone()).unwrap(), big);
        assert!(bounded(path, "stdout.log", big).unwrap().len() < FILE_LIMIT + 100);
        let huge = vec![b' '; WHOLE_LIMIT + 1];
        assert!(matches!(
            bounded(path, "state.json", huge),
            Err(RunError::Drive(DriveError::RecordFileTooLarge { .. }))
        ));
        assert_eq!(read_limit("state.json"), WHOLE_LIMIT as u64);
        assert_eq!(
            read_limit("attempts/executor-1/evidence.json"),
            FILE_LIMIT as u64 + 4096
        );
    }

    #[test]
    fn a_long_file_keeps_its_head_and_tail() {
        let mut bytes = vec![b'h'; FILE_LIMIT];
        bytes.extend(vec![b't'; FILE_LIMIT]);
        let capped = cap(bytes);
        assert!(capped.len() < FILE_LIMIT + 100);
        assert!(capped.starts_with(b"hhh") && capped.ends_with(b"ttt"));
        let text = String::from_utf8_lossy(&capped);
        assert!(text.contains(&format!(
            "[git-baton: {FILE_LIMIT} bytes cut from the record]"
        )));
    }
}
