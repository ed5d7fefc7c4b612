//! What `git add` leaves out of a snapshot, each path named with git's reason.
//!
//! `git add -A --ignore-errors` records every path it can and goes on past the others, but it
//! does not name all of them: a FIFO at a tracked path keeps its old index entry without a word,
//! and an untracked FIFO or socket is not even seen. So what was left out is read back from git
//! itself, `-z`-separated: tracked paths whose index entry still differs from the file
//! (`diff-files`), untracked paths still untracked (`ls-files -o`), and — from a walk of the
//! worktree — every file that is neither regular, symlink nor directory and not ignored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::command::Git;
use super::{GitError, Result};

/// A path of the worktree that a snapshot does not hold, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unrecorded {
    /// Relative to the worktree's root, `/`-separated; a directory ends with `/`.
    pub path: String,
    /// git's reason, or what the file is when git says nothing.
    pub reason: String,
}

/// The paths a `git add -A --ignore-errors` into the index `scratch` left out, given what it
/// printed on stderr.
pub(super) fn left_out(
    git_dir: &Path,
    worktree: &Path,
    scratch: &Path,
    stderr: &str,
) -> Result<Vec<Unrecorded>> {
    let git = |args: &[&str]| {
        Git::at_worktree(git_dir, worktree)
            .env("GIT_INDEX_FILE", scratch)
            .args(args)
    };
    // Ignored directories (build output) are many files and none of them is recorded anyway:
    // the walk skips what git lists, collapsed, as ignored.
    let ignored = raw(git(&super::ignored::LS_IGNORED))?;
    let skip: std::collections::BTreeSet<&str> = split_z(&ignored)
        .filter_map(|dir| dir.strip_suffix('/'))
        .collect();
    let mut found: BTreeMap<String, String> = BTreeMap::new();
    let specials = special_files(worktree, &skip)?;
    for (path, kind) in not_ignored(git_dir, worktree, scratch, specials)? {
        found.insert(
            path,
            format!("a {kind}: git records only regular files, symbolic links and directories"),
        );
    }
    let tracked = raw(git(&["diff-files", "-z", "--name-only"]))?;
    let untracked = raw(git(&[
        "ls-files",
        "-z",
        "--others",
        "--exclude-standard",
        "--directory",
        "--no-empty-directory",
    ]))?;
    for path in split_z(&tracked).chain(split_z(&untracked)) {
        found
            .entry(path.to_string())
            .or_insert_with(|| reason_in(stderr, path));
    }
    Ok(found
        .into_iter()
        .map(|(path, reason)| Unrecorded { path, reason })
        .collect())
}

/// Runs `git`, which must exit 0, for its raw stdout.
fn raw(git: Git) -> Result<String> {
    let (command, at, out) = git.finish()?;
    if !out.status.success() {
        return Err(super::command::failed(command, at, &out));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn split_z(text: &str) -> impl Iterator<Item = &str> {
    text.split('\0').filter(|path| !path.is_empty())
}

/// The line of git's stderr that names `path`, without its `error: `; git prints the path
/// quoted (`'docs/.GIT'`) or before a colon (`docs/a.md: can only add …`).
fn reason_in(stderr: &str, path: &str) -> String {
    let quoted = format!("'{path}'");
    let leading = format!("{path}: ");
    stderr
        .lines()
        .map(|line| line.strip_prefix("error: ").unwrap_or(line).trim())
        .find(|line| line.contains(&quoted) || line.starts_with(&leading))
        .map_or_else(|| "git did not add it".to_string(), str::to_string)
}

/// The files git opens as it walks a worktree: its ignore and attributes files, wherever they
/// are, and the submodules' list at the top.
const CONTROL_FILES: [&str; 3] = [".gitignore", ".gitattributes", ".gitmodules"];

/// Refuses a worktree where one of git's [`CONTROL_FILES`] is a FIFO, socket or device file:
/// git opens each one it meets to read it, and a FIFO keeps it (and whatever waits on it: the
/// snapshot at an attempt's end, `clean`, `finish`) waiting for ever. Nothing else reads the
/// worktree this way before git does.
pub(super) fn refuse_unreadable_control_files(worktree: &Path) -> Result<()> {
    let found = special_files(worktree, &Default::default())?;
    let Some((path, kind)) = found.into_iter().find(|(path, _)| {
        path.file_name()
            .is_some_and(|name| CONTROL_FILES.iter().any(|c| name == *c))
    }) else {
        return Ok(());
    };
    Err(GitError::op(
        format!("run git in the worktree {}", worktree.display()),
        format!(
            "`{}` is a {kind}, which git would open as one of its own files and wait on for ever; \
             remove it",
            slashed(&path)
        ),
    ))
}

/// Every FIFO, socket or device file under `worktree`, relative to it, with what it is. Nested
/// repositories are not entered (git records them as a whole, or names them itself), nor is
/// any `.git`, nor a directory in `skip` (relative, `/`-separated); symlinks are not followed.
fn special_files(
    worktree: &Path,
    skip: &std::collections::BTreeSet<&str>,
) -> Result<Vec<(PathBuf, &'static str)>> {
    let mut found = Vec::new();
    let mut dirs = vec![PathBuf::new()];
    while let Some(rel) = dirs.pop() {
        let dir = worktree.join(&rel);
        let entries = std::fs::read_dir(&dir)
            .map_err(|err| GitError::op(format!("read the directory {}", dir.display()), err))?;
        for entry in entries {
            let entry = entry.map_err(|err| {
                GitError::op(format!("read the directory {}", dir.display()), err)
            })?;
            if entry.file_name() == ".git" {
                continue;
            }
            let path = rel.join(entry.file_name());
            let kind = entry
                .file_type()
                .map_err(|err| GitError::op(format!("read {}", path.display()), err))?;
            if kind.is_dir() {
                if !entry.path().join(".git").exists() && !skip.contains(slashed(&path).as_str()) {
                    dirs.push(path);
                }
            } else if let Some(what) = special_kind(&kind) {
                found.push((path, what));
            }
        }
    }
    Ok(found)
}

/// A relative path as git prints it, `/`-separated.
fn slashed(path: &Path) -> String {
    let parts: Vec<_> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

#[cfg(unix)]
fn special_kind(kind: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        Some("FIFO")
    } else if kind.is_socket() {
        Some("socket")
    } else if kind.is_block_device() || kind.is_char_device() {
        Some("device file")
    } else {
        None
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::FileType) -> Option<&'static str> {
    None
}

/// `files` less those git ignores (a tracked path is never ignored), as `/`-separated strings.
fn not_ignored(
    git_dir: &Path,
    worktree: &Path,
    scratch: &Path,
    files: Vec<(PathBuf, &'static str)>,
) -> Result<Vec<(String, &'static str)>> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let files: Vec<(String, &str)> = files
        .into_iter()
        .map(|(path, kind)| (slashed(&path), kind))
        .collect();
    let mut input = Vec::new();
    for (path, _) in &files {
        input.extend_from_slice(path.as_bytes());
        input.push(0);
    }
    let (command, at, out) = Git::at_worktree(git_dir, worktree)
        .env("GIT_INDEX_FILE", scratch)
        .args(["check-ignore", "--stdin", "-z"])
        .input(input)
        .finish()?;
    // 1: none of them is ignored.
    if !matches!(out.status.code(), Some(0 | 1)) {
        return Err(super::command::failed(command, at, &out));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ignored: std::collections::BTreeSet<&str> = split_z(&stdout).collect();
    Ok(files
        .into_iter()
        .filter(|(path, _)| !ignored.contains(path.as_str()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_is_the_line_of_stderr_that_names_the_path() {
        let stderr = "error: invalid path 'docs/.GIT'\nerror: unable to add 'docs/.GIT' to index\n\
                      error: 'nested/' does not have a commit checked out\n";
        assert_eq!(reason_in(stderr, "docs/.GIT"), "invalid path 'docs/.GIT'");
        assert_eq!(
            reason_in(stderr, "nested/"),
            "'nested/' does not have a commit checked out"
        );
        assert_eq!(reason_in(stderr, "docs"), "git did not add it");
    }
}
