//! Catching up never overwrites what this clone ignores.
//!
//! A run's worktree takes another machine's newer work by moving its files in place, from this
//! clone's last snapshot to the remote's newest. Snapshots hold what is tracked and untracked,
//! never what is ignored — and ignore rules differ between clones (`.git/info/exclude`,
//! `core.excludesFile`, a `.gitignore` that is itself untracked and ignored). So the newest
//! snapshot may have a file where this worktree holds an ignored one: build output, a local
//! cache, the user's notes. git's `read-tree -u` would replace it without a word, and nothing
//! records what it held. Before any file moves, every ignored entry that a path arriving from
//! the remote would replace is found, and catching up is refused naming them: the files stay.

use std::collections::BTreeSet;
use std::path::Path;

use crate::git::{CommitId, Repo, Scope};
use crate::run::SyncError;

use super::RunError;

/// The ignored files and directories of run `run`'s `worktree` that moving its files from
/// `kept` to `newest` would overwrite or remove; refused, naming them, when there are any.
pub fn check(
    repo: &Repo,
    run: &str,
    worktree: &Path,
    kept: CommitId,
    newest: CommitId,
) -> Result<(), RunError> {
    let ignored = repo.ignored_files(worktree)?;
    if ignored.is_empty() {
        return Ok(());
    }
    let changed = repo.tree_changes(kept, newest, &Scope::All)?;
    let mut arriving = Vec::new();
    for path in candidates(&ignored, &changed) {
        // A path the newest snapshot deletes writes nothing: only those it has arrive.
        if repo.path_kind_at(newest, path)?.is_some() {
            arriving.push(path.to_owned());
        }
    }
    let exists = |path: &str| {
        std::fs::symlink_metadata(worktree.join(path))
            .ok()
            .map(|meta| meta.is_dir())
    };
    let paths = in_the_way(&ignored, &arriving, &exists);
    if paths.is_empty() {
        return Ok(());
    }
    Err(RunError::Sync(SyncError::IgnoredInTheWay {
        run: run.to_owned(),
        worktree: worktree.display().to_string(),
        paths,
    }))
}

/// The ignored entry of `ignored` (`git ls-files --ignored --directory`: a directory ends in
/// `/`) at `path`, and whether it is a directory.
fn entry<'a>(ignored: &'a BTreeSet<&'a str>, path: &str) -> Option<(&'a str, bool)> {
    let dir = format!("{path}/");
    if let Some(found) = ignored.get(dir.as_str()) {
        return Some((found, true));
    }
    ignored.get(path).map(|found| (*found, false))
}

/// The changed paths that touch an ignored entry at all: at it, below it, or above it.
fn candidates<'a>(ignored: &[String], changed: &'a [String]) -> Vec<&'a str> {
    let set: BTreeSet<&str> = ignored.iter().map(String::as_str).collect();
    changed
        .iter()
        .map(String::as_str)
        .filter(|path| {
            ancestors_and_self(path).any(|p| entry(&set, p).is_some()) || has_below(&set, path)
        })
        .collect()
}

/// Whether some ignored entry lies below directory `path`.
fn has_below(set: &BTreeSet<&str>, path: &str) -> bool {
    let prefix = format!("{path}/");
    set.range(prefix.as_str()..)
        .next()
        .is_some_and(|p| p.starts_with(&prefix) && *p != prefix)
}

/// `a/b/c`, then `a/b`, then `a`.
fn ancestors_and_self(path: &str) -> impl Iterator<Item = &str> {
    std::iter::successors(Some(path), |p| p.rfind('/').map(|i| &p[..i]))
}

/// Which ignored entries the `arriving` paths (files of the newest snapshot, absent or different
/// in the last one) would overwrite: one at the path itself; an ignored file where the path
/// needs a directory; an ignored directory's file or non-directory at or above the path;
/// anything ignored below the path, which must become a file. `exists` says what the worktree
/// holds at a path: `None` nothing, else whether it is a directory (symlinks are not).
pub(crate) fn in_the_way(
    ignored: &[String],
    arriving: &[String],
    exists: &dyn Fn(&str) -> Option<bool>,
) -> Vec<String> {
    let set: BTreeSet<&str> = ignored.iter().map(String::as_str).collect();
    let mut found = BTreeSet::new();
    for path in arriving {
        if let Some((name, _)) = entry(&set, path) {
            found.insert(name.to_owned());
        }
        // The nearest ignored ancestor: a file there is in the way; inside a directory, what
        // exists on the way down to the path is.
        let ancestors: Vec<&str> = ancestors_and_self(path).skip(1).collect();
        if let Some(at) = ancestors.iter().position(|a| entry(&set, a).is_some()) {
            let (name, is_dir) = entry(&set, ancestors[at]).expect("found above");
            if !is_dir {
                found.insert(name.to_owned());
            } else {
                let below = ancestors[..at].iter().rev().copied();
                for step in below.chain(std::iter::once(path.as_str())) {
                    match exists(step) {
                        None => break,
                        Some(true) if step != path => continue,
                        Some(_) => {
                            found.insert(step.to_owned());
                            break;
                        }
                    }
                }
            }
        }
        let prefix = format!("{path}/");
        for inside in set.range(prefix.as_str()..) {
            if !inside.starts_with(&prefix) {
                break;
            }
            found.insert((*inside).to_owned());
        }
    }
    found.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    /// What a worktree holds: directories end in `/`.
    fn worktree(held: &'static [&'static str]) -> impl Fn(&str) -> Option<bool> {
        move |path: &str| {
            if held.contains(&path) {
                Some(false)
            } else if held.contains(&format!("{path}/").as_str()) {
                Some(true)
            } else {
                None
            }
        }
    }

    #[test]
    fn an_ignored_file_or_directory_at_an_arriving_path_is_in_the_way() {
        let held = worktree(&["build/", "build/result.txt", "notes.md", "out/"]);
        let cases: [(&[&str], &[&str], &[&str]); 6] = [
            // The ignored directory collapses to one entry; its file is what arrives.
            (&["build/"], &["build/result.txt"], &["build/result.txt"]),
            (&["notes.md"], &["notes.md"], &["notes.md"]),
            // A file arrives where an ignored directory is.
            (&["out/"], &["out"], &["out/"]),
            // A new file in an ignored directory, where nothing is: nothing is overwritten.
            (&["build/"], &["build/new.txt"], &[]),
            // A file the remote changed, nowhere near anything ignored.
            (&["build/"], &["docs/a.md"], &[]),
            // A directory arrives where an ignored file is.
            (&["notes.md"], &["notes.md/x"], &["notes.md"]),
        ];
        for (ignored, arriving, expected) in cases {
            assert_eq!(
                in_the_way(&strings(ignored), &strings(arriving), &held),
                strings(expected),
                "{ignored:?} {arriving:?}"
            );
        }
    }

    #[test]
    fn inside_an_ignored_directory_a_file_on_the_way_down_is_in_the_way() {
        let held = worktree(&["cache/", "cache/sub", "keep/", "keep/a/", "keep/a/b"]);
        assert_eq!(
            in_the_way(&strings(&["cache/"]), &strings(&["cache/sub/x"]), &held),
            strings(&["cache/sub"])
        );
        assert_eq!(
            in_the_way(&strings(&["keep/"]), &strings(&["keep/a/b"]), &held),
            strings(&["keep/a/b"])
        );
        assert!(in_the_way(&strings(&["keep/"]), &strings(&["keep/a/c"]), &held).is_empty());
    }

    #[test]
    fn ignored_entries_below_an_arriving_file_are_in_the_way() {
        let held = worktree(&["gen/", "gen/a.o", "gen/deep/"]);
        assert_eq!(
            in_the_way(
                &strings(&["gen/a.o", "gen/deep/"]),
                &strings(&["gen"]),
                &held
            ),
            strings(&["gen/a.o", "gen/deep/"])
        );
        // `gen-x` sorts between `gen/` entries' neighbours but is not below `gen`.
        assert!(in_the_way(&strings(&["gen-x"]), &strings(&["gen"]), &held).is_empty());
    }

    #[test]
    fn only_changed_paths_near_an_ignored_entry_are_candidates() {
        let ignored = strings(&["build/", "notes.md", "gen/a.o"]);
        let changed = strings(&["build/x", "docs/a.md", "gen", "notes.md", "z"]);
        assert_eq!(
            candidates(&ignored, &changed),
            vec!["build/x", "gen", "notes.md"]
        );
    }
}
