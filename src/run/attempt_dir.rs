//! An attempt's directory starts empty, made by the driver for that attempt alone.
//!
//! The run directory lives under the repository's common git directory, which an agent can
//! reach: it knows the path of its own attempt's directory (`BATON_EVIDENCE_FILE`), and so the
//! path of the next one. Were the driver to take over a directory that already exists, an
//! attempt's agent could write the *next* attempt's `evidence.json` (reasons that attempt never
//! gave) or `stop-hook.json` (a count that disables the Stop hook) before that attempt exists.
//! So the directory is made with one `mkdir`, which fails when anything is at the path, and
//! whatever is there is refused. The one thing replaced is an empty directory (not a symlink):
//! it holds nothing anyone could have planted, and it is what a driver killed between making
//! the directory and recording the attempt leaves behind.

use std::io::ErrorKind;
use std::path::Path;

use super::RunError;
use crate::run::DriveError;

/// Makes the directory `dir` of attempt `attempt` (`<stage>-<n>`) of run `run`, fresh: its
/// parent may have to be made, the directory itself must not exist, unless it is empty.
pub fn create_fresh(run: &str, attempt: &str, dir: &Path) -> Result<(), RunError> {
    let io = |action: &'static str| {
        move |source| RunError::Io {
            action,
            path: dir.to_path_buf(),
            source,
        }
    };
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|source| RunError::CreateDir {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    match std::fs::create_dir(dir) {
        Ok(()) => return Ok(()),
        Err(err) if err.kind() == ErrorKind::AlreadyExists => {}
        Err(err) => return Err(io("create")(err)),
    }
    let planted = || {
        RunError::Drive(DriveError::AttemptDirExists {
            run: run.to_owned(),
            attempt: attempt.to_owned(),
            path: dir.to_path_buf(),
        })
    };
    let meta = std::fs::symlink_metadata(dir).map_err(io("inspect"))?;
    if !meta.is_dir() {
        return Err(planted());
    }
    // `remove_dir` removes an empty directory only: anything inside makes it fail, and then
    // the directory is refused as it is.
    match std::fs::remove_dir(dir) {
        Ok(()) => std::fs::create_dir(dir).map_err(|err| match err.kind() {
            ErrorKind::AlreadyExists => planted(),
            _ => io("create")(err),
        }),
        Err(_) => Err(planted()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(result: Result<(), RunError>) -> bool {
        matches!(
            result,
            Err(RunError::Drive(DriveError::AttemptDirExists { .. }))
        )
    }

    #[test]
    fn a_new_directory_is_made_with_its_parent() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("attempts/executor-1");
        create_fresh("r", "executor-1", &dir).unwrap();
        assert!(dir.is_dir());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    }

    #[test]
    fn an_empty_directory_is_replaced_and_anything_else_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let attempts = tmp.path().join("attempts");
        std::fs::create_dir_all(attempts.join("empty")).unwrap();
        create_fresh("r", "empty", &attempts.join("empty")).unwrap();

        let seeded = attempts.join("seeded");
        std::fs::create_dir_all(&seeded).unwrap();
        std::fs::write(seeded.join("evidence.json"), "{}").unwrap();
        assert!(refused(create_fresh("r", "seeded", &seeded)));
        assert!(seeded.join("evidence.json").exists(), "nothing is deleted");

        let hidden = attempts.join("hidden");
        std::fs::create_dir_all(hidden.join(".x")).unwrap();
        assert!(refused(create_fresh("r", "hidden", &hidden)));

        let file = attempts.join("file");
        std::fs::write(&file, "").unwrap();
        assert!(refused(create_fresh("r", "file", &file)));

        // A symlink to an empty directory elsewhere: the agent would own what it points to.
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let link = attempts.join("link");
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        assert!(refused(create_fresh("r", "link", &link)));
        let dangling = attempts.join("dangling");
        std::os::unix::fs::symlink(tmp.path().join("nowhere"), &dangling).unwrap();
        assert!(refused(create_fresh("r", "dangling", &dangling)));
    }
}
