//! Where run worktrees may go, and the `info/exclude` lines that hide them.
//!
//! `info/exclude` applies to every worktree of the repository, the runs' included: a pattern
//! broader than the worktree root hides an agent's new files from the gate, the snapshot and the
//! `finish` commit, and `git worktree remove` then deletes them. So the line names exactly the
//! root, and a root that would share a directory with tracked content is refused: there, the
//! worktrees would sit among files the branch checks out and users edit. A root that
//! `worktree_root` no longer names keeps its line while it holds run worktrees
//! ([`holds_run_worktrees`]), so that changing the setting never un-ignores them.

use std::path::Path;

use crate::config::Config;
use crate::git::Repo;

use super::RunError;

/// git-baton's own directory: tracked files in it (prompt templates) are its configuration, and
/// the exact exclude line leaves them visible, so the default root may sit beside them.
const OWN_DIR: &str = ".baton";

/// Checks `config.worktree_root` and returns the `info/exclude` pattern for it: `None` when the
/// root is outside the main worktree (nothing there to hide). Refused: the repository root
/// itself, a root inside the git directory, and a root inside a directory that has tracked files
/// at HEAD or in the index (or that is itself tracked).
pub fn check(
    repo: &Repo,
    main_worktree: &Path,
    config: &Config,
) -> Result<Option<String>, RunError> {
    let written = config.worktree_root.as_str();
    let refuse = |why: String, hint: &str| -> RunError {
        config
            .worktree_root_error(format!("`worktree_root: {written}` {why}"), hint.into())
            .into()
    };
    let root = crate::files::resolved(&main_worktree.join(written));
    let main = crate::files::resolved(main_worktree);
    let git_dir = crate::files::resolved(repo.common_dir());
    if root.starts_with(&git_dir) {
        return Err(refuse(
            "is inside the git directory".into(),
            "agents refuse to edit below `.git`; use a directory of its own, e.g. `worktree_root: .baton/worktrees`",
        ));
    }
    let Ok(rel) = root.strip_prefix(&main) else {
        return Ok(None);
    };
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        return Err(refuse(
            "is the repository root".into(),
            "use a directory of its own, e.g. `worktree_root: .baton/worktrees`",
        ));
    }
    if parts.iter().any(|p| p == ".git") {
        return Err(refuse(
            "is inside a git directory".into(),
            "agents refuse to edit below `.git`; use a directory of its own, e.g. `worktree_root: .baton/worktrees`",
        ));
    }
    for end in 1..=parts.len() {
        let dir = parts[..end].join("/");
        if end == 1 && end < parts.len() && dir == OWN_DIR {
            continue;
        }
        if repo.is_tracked(main_worktree, &dir)? {
            return Err(refuse(
                format!("is inside `{dir}`, which has tracked files"),
                "run worktrees must not share a directory with tracked files; use a directory of \
                 its own, e.g. `worktree_root: .baton/worktrees`, or one outside the repository",
            ));
        }
    }
    let escaped: Vec<String> = parts.iter().map(|p| escape(p)).collect();
    Ok(Some(format!("/{}/", escaped.join("/"))))
}

/// Writes `pattern` (what [`check`] returned) into `info/exclude`, keeping the lines of earlier
/// roots that still hold run worktrees.
pub fn exclude(repo: &Repo, main_worktree: &Path, pattern: &str) -> Result<(), RunError> {
    let in_use = |line: &str| holds_run_worktrees(main_worktree, line);
    Ok(repo.ensure_excluded(pattern, &in_use)?)
}

/// Whether the directory an `info/exclude` line of git-baton's names (`/a/b/`, as [`check`]
/// writes it, relative to `main_worktree`) holds a run worktree: an entry named like a run with
/// a `.git` file, as `git worktree add` leaves it.
pub fn holds_run_worktrees(main_worktree: &Path, line: &str) -> bool {
    let Some(rel) = line.strip_prefix('/').and_then(|l| l.strip_suffix('/')) else {
        return false;
    };
    let Ok(entries) = std::fs::read_dir(main_worktree.join(unescape(rel))) else {
        return false;
    };
    entries.filter_map(|e| e.ok()).any(|entry| {
        entry
            .file_name()
            .to_str()
            .is_some_and(super::create::is_run_id)
            && entry.path().join(".git").is_file()
    })
}

/// The path a literal pattern of [`escape`] names.
fn unescape(pattern: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// A path component as a literal gitignore pattern.
fn escape(part: &str) -> String {
    let mut out = String::new();
    for ch in part.chars() {
        if matches!(ch, '*' | '?' | '[' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    if out.ends_with(' ') {
        out.insert(out.len() - 1, '\\');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_literal() {
        for (part, pattern) in [
            ("a*b?[c]", "a\\*b\\?\\[c]"),
            ("x ", "x\\ "),
            (".runs", ".runs"),
            ("back\\slash", "back\\\\slash"),
        ] {
            assert_eq!(escape(part), pattern);
            assert_eq!(unescape(pattern), part);
        }
    }
}
