//! What git operations fail with: one error type for the module, each variant naming what it
//! was working on, with git's own hint where git has one.

use std::path::{Path, PathBuf};

use super::DiffEngine;
use super::diff::index::IndexError;

/// Failures of git operations, each naming what it was working on.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("not a git repository (or any of the parent directories): {}", .path.display())]
    NotARepository { path: PathBuf },
    #[error("detected dubious ownership in repository at '{}'", .path.display())]
    DubiousOwnership { path: PathBuf },
    #[error("cannot open the repository at '{}': {message}", .path.display())]
    Open { path: PathBuf, message: String },
    #[error(
        "the repository at '{}' uses the {format} object format, which git-baton does not support",
        .path.display()
    )]
    UnsupportedObjectFormat { path: PathBuf, format: String },
    #[error(
        "the repository at '{}' {what}, which git-baton does not support",
        .path.display()
    )]
    UnsupportedRepository {
        path: PathBuf,
        what: Box<super::UnsupportedFormat>,
    },
    #[error("`{path}` is a bare repository; git-baton needs a worktree")]
    Bare { path: String },
    #[error("unknown revision `{rev}`")]
    UnknownRevision { rev: String },
    #[error("`{rev}` does not name a commit")]
    NotACommit { rev: String },
    #[error("`{base}` and `{head}` have no common history visible in this repository")]
    NoMergeBase {
        base: String,
        head: String,
        shallow: bool,
    },
    #[error("no remote named `{remote}` in this repository")]
    UnknownRemote { remote: String },
    #[error("cannot {action}: {message}")]
    Operation { action: String, message: String },
    #[error("cannot run `{command}`: {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Command(Box<CommandFailed>),
    #[error("`{command}` did not finish in time and was stopped")]
    TimedOut { command: String },
    /// git-baton got a signal while it waited on the command: the command was given the same
    /// signal (with what it started), waited for and stopped, or was not started at all.
    #[error("`{command}` was interrupted by {signal}")]
    Interrupted {
        command: String,
        signal: &'static str,
    },
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error("the {engine} diff engine cannot diff this repository: {why}")]
    EngineUnsupported { engine: DiffEngine, why: String },
    /// A broken invariant of git-baton's own code, met in a release build: reported with the
    /// repository state it met, never as a panic.
    #[error("internal error: {what} ({state})")]
    Internal { what: String, state: String },
}

/// A git child process that ran and failed.
#[derive(Debug, thiserror::Error)]
#[error("`{command}` failed in {} ({status}){}", .at.display(), stderr_suffix(.stderr))]
pub struct CommandFailed {
    /// `git` and its arguments after the repository options.
    pub command: String,
    /// The worktree or git directory it ran on.
    pub at: PathBuf,
    pub status: String,
    /// The start of what it wrote to stderr.
    pub stderr: String,
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!(": {stderr}")
    }
}

impl GitError {
    /// What the user can do next, in git's words where git has them. (An internal error's hint
    /// names a git-baton command, so the CLI chooses it.)
    pub fn hint(&self) -> Option<String> {
        match self {
            GitError::NotARepository { .. } => {
                Some("run git-baton inside a git repository or one of its linked worktrees".into())
            }
            GitError::DubiousOwnership { path } => Some(format!(
                "to add an exception for this directory, call:\n\n\tgit config --global --add safe.directory {}",
                path.display()
            )),
            GitError::NoMergeBase { shallow: true, .. } => Some(
                "this is a shallow clone: fetch more history (`git fetch --unshallow`, or `fetch-depth: 0` \
                 with actions/checkout) so the merge base is reachable"
                    .into(),
            ),
            GitError::UnsupportedObjectFormat { .. } => Some(
                "git-baton reads SHA-1 repositories, git's default; `git rev-parse \
                 --show-object-format` says which one a repository uses"
                    .into(),
            ),
            GitError::UnsupportedRepository { what, .. } => Some(what.hint()),
            GitError::UnknownRevision { .. } => {
                Some("name a branch, tag or commit that exists here; in CI, fetch it first".into())
            }
            _ => None,
        }
    }

    pub(super) fn op(action: impl Into<String>, err: impl std::fmt::Display) -> Self {
        GitError::Operation {
            action: action.into(),
            message: err.to_string(),
        }
    }
}

pub type Result<T, E = GitError> = std::result::Result<T, E>;

pub(super) fn classify_open_error(dir: &Path, err: gix::Error) -> GitError {
    if !dir.exists() {
        return GitError::Open {
            path: dir.to_path_buf(),
            message: "no such directory".into(),
        };
    }
    let rendered = format!("{err:#}");
    // gix reports discovery failures by variant name, not prose.
    if rendered.contains("NoGitRepository") {
        return GitError::NotARepository {
            path: dir.to_path_buf(),
        };
    }
    if let Some(format) = unsupported_object_format(&err) {
        // The repository by its top, as git names it, rather than where the command started.
        let path = gix::discover::upwards(dir)
            .ok()
            .and_then(|(path, _)| {
                let (git_dir, workdir) = path.into_repository_and_work_tree_directories();
                workdir.or(Some(git_dir))
            })
            .unwrap_or_else(|| dir.to_path_buf());
        return GitError::UnsupportedObjectFormat { path, format };
    }
    // One line for the `error:` line: gix's own first line, without its cause chain.
    let message = err
        .to_string()
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .to_string();
    GitError::Open {
        path: dir.to_path_buf(),
        message,
    }
}

/// The object format a repository's `extensions.objectFormat` names when gix refused to open it
/// for that (this build knows SHA-1 only): gix says "Repository configuration could not be
/// loaded", and only its cause names the key and the value.
fn unsupported_object_format(err: &gix::Error) -> Option<String> {
    let mut cause: Option<&dyn std::error::Error> = Some(err);
    while let Some(error) = cause {
        let text = error.to_string();
        if text
            .to_ascii_lowercase()
            .contains("extensions.objectformat")
        {
            let format = text
                .split_once("input=\"")
                .and_then(|(_, rest)| rest.split_once('"'))
                .map(|(value, _)| value.to_ascii_uppercase().replace("SHA", "SHA-"))
                .unwrap_or_else(|| "configured".into());
            return Some(format);
        }
        cause = error.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SHA-256 repository (valid for git) is refused as what it is, with a hint, for every
    /// way git-baton opens a repository.
    #[test]
    fn a_sha256_repository_is_named_as_unsupported() {
        let dir = crate::testing::git_init(&["--object-format=sha256"]);
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let top = gix::path::realpath(dir.path()).unwrap();
        for err in [
            crate::git::Repo::discover(&dir.path().join("sub"))
                .err()
                .unwrap(),
            crate::git::Repo::open_worktree(dir.path()).err().unwrap(),
        ] {
            assert!(
                matches!(&err, GitError::UnsupportedObjectFormat { format, path }
                    if format == "SHA-256" && gix::path::realpath(path).unwrap() == top),
                "{err:?}"
            );
            assert!(err.hint().unwrap().contains("SHA-1"));
        }
        let err = crate::git::Repo::discover(&top).err().unwrap();
        assert_eq!(
            err.to_string(),
            format!(
                "the repository at '{}' uses the SHA-256 object format, which git-baton does not \
                 support",
                top.display()
            )
        );
    }

    /// A repository whose refs are in the reftable format, or that declares an extension git
    /// does not know, is refused as what it is, for either way git-baton opens one: gix would
    /// open it and find no ref in it. The config is written by hand, so that the test does not
    /// depend on the git in use knowing reftable.
    #[test]
    fn a_repository_extension_that_cannot_be_honoured_is_named() {
        for (key, value, says, hint) in [
            (
                "extensions.refStorage",
                "reftable",
                "stores its refs in the reftable format",
                "git refs migrate",
            ),
            (
                "extensions.somethingNew",
                "true",
                "declares the extension `extensions.somethingNew = true`",
                "--get-regexp",
            ),
        ] {
            let dir = crate::testing::git_init(&[]);
            let top = gix::path::realpath(dir.path()).unwrap();
            crate::testing::git(&top, &["config", "core.repositoryformatversion", "1"]);
            crate::testing::git(&top, &["config", key, value]);
            for err in [
                crate::git::Repo::discover(&top).err().unwrap(),
                crate::git::Repo::open_worktree(&top).err().unwrap(),
            ] {
                assert_eq!(
                    err.to_string(),
                    format!(
                        "the repository at '{}' {says}, which git-baton does not support",
                        top.display()
                    )
                );
                assert!(err.hint().unwrap().contains(hint), "{:?}", err.hint());
            }
        }
    }
}
