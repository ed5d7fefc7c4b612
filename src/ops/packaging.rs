//! `git baton init --packaging DIR`: the agents' host files of `packaging/` (embedded in the
//! binary, [`crate::agent::packaging`]) written below a directory, for users with no checkout
//! of the repository.
//!
//! Every file is checked before any is written: one whose content differs from git-baton's is
//! refused unless the caller forces it, so a refusal leaves the directory as it was. Each file
//! is then replaced whole or not at all ([`crate::files::write_atomic`]).

use std::path::{Path, PathBuf};

use crate::agent::packaging::PackagedFile;
use crate::files::{AtomicWriteError, io_reason};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file is there with other content, and the caller did not force its replacement.
    #[error("{} exists and differs from git-baton's packaging", .path.display())]
    Differs { path: PathBuf },
    #[error("cannot read {}: {}", .path.display(), io_reason(.source))]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create the directory {}: {}", .path.display(), io_reason(.source))]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Write(#[from] AtomicWriteError),
}

/// Writes `files` below `dir`, each at its path in `packaging/`, creating the directories on
/// the way; returns the paths written, in the order of `files`. A file already there with
/// other content is an [`Error::Differs`] unless `force`, and then nothing is written.
pub fn write(dir: &Path, files: &[&PackagedFile], force: bool) -> Result<Vec<PathBuf>, Error> {
    let targets: Vec<(PathBuf, &PackagedFile)> =
        files.iter().map(|f| (dir.join(f.path), *f)).collect();
    if !force {
        for (path, file) in &targets {
            match std::fs::read(path) {
                Ok(bytes) if bytes == file.bytes => {}
                Ok(_) => return Err(Error::Differs { path: path.clone() }),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => {
                    return Err(Error::Read {
                        path: path.clone(),
                        source,
                    });
                }
            }
        }
    }
    let mut written = Vec::with_capacity(targets.len());
    for (path, file) in targets {
        let parent = path.parent().unwrap_or(dir);
        std::fs::create_dir_all(parent).map_err(|source| Error::CreateDir {
            path: parent.to_path_buf(),
            source,
        })?;
        crate::files::write_atomic(&path, file.bytes)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::packaging::files;

    #[test]
    fn writes_refuses_a_different_file_and_forces_it() {
        let tmp = tempfile::tempdir().unwrap();
        let all = files(None);
        let written = write(tmp.path(), &all, false).unwrap();
        assert_eq!(written.len(), all.len());
        for (path, file) in written.iter().zip(&all) {
            assert_eq!(std::fs::read(path).unwrap(), file.bytes, "{}", file.path);
        }
        // The same bytes again: nothing to refuse.
        write(tmp.path(), &all, false).unwrap();
        let hooks = tmp.path().join("codex/hooks.json");
        std::fs::write(&hooks, "{}\n").unwrap();
        std::fs::remove_file(tmp.path().join("claude-code/hooks/hooks.json")).unwrap();
        match write(tmp.path(), &all, false) {
            Err(Error::Differs { path }) => assert_eq!(path, hooks),
            other => panic!("{other:?}"),
        }
        // Refused before anything was written.
        assert!(!tmp.path().join("claude-code/hooks/hooks.json").exists());
        assert_eq!(std::fs::read(&hooks).unwrap(), b"{}\n");
        write(tmp.path(), &all, true).unwrap();
        assert_eq!(
            std::fs::read(&hooks).unwrap(),
            files(Some("codex"))[0].bytes
        );
    }

    #[test]
    fn a_file_in_the_way_of_a_directory_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("gemini"), "").unwrap();
        let err = write(tmp.path(), &files(Some("gemini")), true).unwrap_err();
        assert!(matches!(err, Error::CreateDir { .. }), "{err:?}");
    }
}
