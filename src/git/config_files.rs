//! The files of a worktree's git configuration an agent in it could write, read as digests so
//! that what they were before an attempt can be compared with what they are after: the
//! repository's `config` and `config.worktree`, this worktree's own `config.worktree`, `info/`
//! (`exclude` hides untracked work from the snapshot, `attributes` changes what a diff sees)
//! and the hooks directory (`hooks/`, run by git on the agent's and git-baton's behalf).
//!
//! A value that `core.hooksPath` points elsewhere is caught by `config` itself. Files outside
//! the repository (`~/.gitconfig`, `include.path` targets) are not read.

use std::collections::BTreeMap;
use std::path::Path;

use super::{Repo, blob_id};

/// How many entries of a directory are read before the rest are summed up as one: a hooks
/// directory holds a few dozen files, and the walk stays bounded whatever it holds.
const MAX_ENTRIES: usize = 4096;
/// How deep a directory is walked.
const MAX_DEPTH: usize = 8;

impl Repo {
    /// Each configuration file named by its path relative to the common directory (`config`,
    /// `hooks/pre-commit`, `worktrees/<name>/config.worktree`), with a digest of what it is:
    /// `absent`, `blob <id>`, `link <target>`, `dir`, `special <kind>` (a named pipe, a socket, a
    /// device: never opened), or `unreadable: <reason>`.
    pub fn git_config_digest(&self) -> BTreeMap<String, String> {
        let common = self.common_dir();
        let mut out = BTreeMap::new();
        for file in ["config", "config.worktree"] {
            out.insert(file.to_string(), digest(&common.join(file)));
        }
        let own = self.git_dir();
        let (own_real, common_real) = (own.canonicalize().ok(), common.canonicalize().ok());
        if own_real != common_real {
            // A linked worktree's directory is `worktrees/<name>` in the common one; named
            // relative to it so that no path of this machine is recorded.
            let rel = own_real
                .zip(common_real)
                .and_then(|(o, c)| o.strip_prefix(c).ok().map(slashed));
            let shown = match rel {
                Some(rel) => format!("{rel}/config.worktree"),
                None => "the worktree's config.worktree".to_string(),
            };
            out.insert(shown, digest(&own.join("config.worktree")));
        }
        let mut budget = MAX_ENTRIES;
        for dir in ["hooks", "info"] {
            walk(common, Path::new(dir), 0, &mut budget, &mut out);
        }
        out
    }
}

fn slashed(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

fn digest(path: &Path) -> String {
    match std::fs::symlink_metadata(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => "absent".into(),
        Err(err) => format!("unreadable: {err}"),
        Ok(meta) if meta.file_type().is_symlink() => match std::fs::read_link(path) {
            Ok(target) => format!("link {}", target.display()),
            Err(err) => format!("unreadable: {err}"),
        },
        Ok(meta) if meta.is_dir() => "dir".into(),
        // An agent can leave a named pipe or a socket in `hooks/` or `info/`: named by its kind,
        // never opened (opening a pipe waits for a writer for ever).
        Ok(meta) if !meta.is_file() => {
            format!("special {}", crate::files::kind_name(&meta.file_type()))
        }
        Ok(meta) => match crate::files::read_regular(path) {
            Ok(bytes) => format!(
                "blob {}{}",
                blob_id(&bytes).unwrap_or_default(),
                if crate::files::anyone_may_execute(&meta) {
                    " executable"
                } else {
                    ""
                }
            ),
            Err(err) => format!("unreadable: {err}"),
        },
    }
}

/// Records `rel` (relative to `root`) and, for a directory, what is below it.
fn walk(
    root: &Path,
    rel: &Path,
    depth: usize,
    budget: &mut usize,
    out: &mut BTreeMap<String, String>,
) {
    let path = root.join(rel);
    let shown = slashed(rel);
    let found = digest(&path);
    let is_dir = found == "dir";
    out.insert(shown.clone(), found);
    if !is_dir || depth >= MAX_DEPTH {
        return;
    }
    let mut names: Vec<_> = match std::fs::read_dir(&path) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.file_name()))
            .collect(),
        Err(err) => {
            out.insert(shown, format!("unreadable: {err}"));
            return;
        }
    };
    names.sort();
    let count = names.len();
    for name in names {
        if *budget == 0 {
            out.insert(format!("{shown}/…"), format!("{count} entries"));
            return;
        }
        *budget -= 1;
        walk(root, &rel.join(name), depth + 1, budget, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A named pipe in `hooks/`, `info/` or as `config` is named by its kind and never opened:
    /// the digest is taken at once (bounded by a deadline, so that a regression fails, not hangs).
    #[cfg(unix)]
    #[test]
    fn a_named_pipe_among_the_config_files_is_named_not_opened() {
        let dir = crate::testing::git_init(&[]);
        let git_dir = dir.path().join(".git");
        std::fs::create_dir_all(git_dir.join("hooks")).unwrap();
        std::fs::create_dir_all(git_dir.join("info")).unwrap();
        for rel in ["hooks/pre-commit", "info/attributes", "config.worktree"] {
            crate::testing::fifo(git_dir.join(rel));
        }
        let root = dir.path().to_path_buf();
        let digest = crate::testing::without_waiting(move || {
            Repo::discover(&root).unwrap().git_config_digest()
        });
        for rel in ["hooks/pre-commit", "info/attributes", "config.worktree"] {
            assert_eq!(
                digest[rel], "special named pipe (FIFO)",
                "{rel}: {digest:?}"
            );
        }
    }

    #[test]
    fn a_changed_hook_or_config_changes_its_digest_and_only_its_own() {
        let dir = crate::testing::git_init(&[]);
        let git = |args: &[&str]| crate::testing::git(dir.path(), args);
        let repo = Repo::discover(dir.path()).unwrap();
        let before = repo.git_config_digest();
        assert!(before["config"].starts_with("blob "), "{before:?}");
        assert_eq!(before["config.worktree"], "absent");
        git(&["config", "core.hooksPath", "/tmp/x"]);
        let hooks = dir.path().join(".git/hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        std::fs::write(hooks.join("pre-commit"), "#!/bin/sh\n").unwrap();
        let after = repo.git_config_digest();
        let changed: Vec<&String> = after
            .keys()
            .chain(before.keys())
            .filter(|k| before.get(*k) != after.get(*k))
            .collect();
        assert!(changed.contains(&&"config".to_string()), "{changed:?}");
        assert!(
            changed.contains(&&"hooks/pre-commit".to_string()),
            "{changed:?}"
        );
        assert!(
            !changed.iter().any(|k| k.starts_with("info")),
            "{changed:?}"
        );

        // A linked worktree's own config.worktree is named relative to the common directory.
        git(&[
            "-c",
            "user.name=a",
            "-c",
            "user.email=a@b",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "c",
        ]);
        git(&["worktree", "add", "-q", "linked"]);
        let linked = Repo::open_worktree(&dir.path().join("linked")).unwrap();
        let digest = linked.git_config_digest();
        assert_eq!(
            digest["worktrees/linked/config.worktree"], "absent",
            "{digest:?}"
        );
    }
}
