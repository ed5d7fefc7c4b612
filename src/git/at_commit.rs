//! Questions about one commit that the gate asks of its trusted side, the merge base: what a
//! path is there, what a directory holds, and whether a commit is a merge.
//!
//! Everything reads objects only; nothing looks at the worktree, the index or any configuration
//! of the repository that a pull request could change.

use gix::ObjectId;
use gix::objs::tree::EntryKind;

use super::{CommitId, GitError, Repo, Result, path_string};

/// What a path is in a commit's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    /// A regular file, executable or not.
    File,
    Symlink,
    Dir,
    /// A gitlink: a commit of another repository.
    Submodule,
}

impl PathKind {
    pub(super) fn of(kind: EntryKind) -> PathKind {
        match kind {
            EntryKind::Blob | EntryKind::BlobExecutable => PathKind::File,
            EntryKind::Link => PathKind::Symlink,
            EntryKind::Tree => PathKind::Dir,
            EntryKind::Commit => PathKind::Submodule,
        }
    }
}

impl Repo {
    /// What `path` is in `commit`, or `None` when the tree has nothing there. The empty path is
    /// the root directory.
    pub fn path_kind_at(&self, commit: CommitId, path: &str) -> Result<Option<PathKind>> {
        if path.is_empty() {
            return Ok(Some(PathKind::Dir));
        }
        let tree = self.commit_tree(commit)?;
        let entry = tree
            .lookup_entry_by_path(path)
            .map_err(|err| GitError::op(format!("look up `{path}` in commit {commit}"), err))?;
        Ok(entry.map(|e| PathKind::of(e.mode().kind())))
    }

    /// The names and kinds of the entries of directory `dir` in `commit`, in git's order; empty
    /// when `dir` is not a directory there.
    pub fn dir_entries_at(&self, commit: CommitId, dir: &str) -> Result<Vec<(String, PathKind)>> {
        let Some(tree) = self.dir_tree(commit, dir)? else {
            return Ok(Vec::new());
        };
        let tree = self.find_tree(tree)?;
        let mut out = Vec::new();
        for entry in tree.iter() {
            let entry = entry.map_err(|err| GitError::op(format!("read tree {}", tree.id), err))?;
            out.push((path_string(entry.filename()), PathKind::of(entry.kind())));
        }
        Ok(out)
    }

    /// Whether `commit` has more than one parent.
    pub fn is_merge(&self, commit: CommitId) -> Result<bool> {
        let found = self
            .repo
            .find_commit(commit.gix())
            .map_err(|err| GitError::op(format!("read commit {commit}"), err))?;
        Ok(found.parent_ids().nth(1).is_some())
    }

    fn commit_tree(&self, commit: CommitId) -> Result<gix::Tree<'_>> {
        let tree = self.tree_of(commit)?;
        self.find_tree(tree)
    }

    fn find_tree(&self, id: ObjectId) -> Result<gix::Tree<'_>> {
        self.repo
            .find_tree(id)
            .map_err(|err| GitError::op(format!("read tree {id}"), err))
    }

    /// The tree of directory `dir` in `commit`, when it is one.
    fn dir_tree(&self, commit: CommitId, dir: &str) -> Result<Option<ObjectId>> {
        let dir = dir.trim_matches('/');
        if dir.is_empty() {
            return self.tree_of(commit).map(Some);
        }
        let tree = self.commit_tree(commit)?;
        let entry = tree
            .lookup_entry_by_path(dir)
            .map_err(|err| GitError::op(format!("look up `{dir}` in commit {commit}"), err))?;
        Ok(entry
            .filter(|e| e.mode().kind() == EntryKind::Tree)
            .map(|e| e.object_id()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hermetic::Hermetic;

    fn git(home: &std::path::Path, dir: &std::path::Path, args: &[&str]) {
        let status = Hermetic::new(home)
            .command("git")
            .args(args)
            .current_dir(dir)
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn kinds_files_entries_and_merges() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let dir = &tmp.path().join("repo");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(dir).unwrap();
        let git = |args: &[&str]| git(&home, dir, args);
        git(&["init", "-q", "-b", "main"]);
        for (path, text) in [
            ("plans/a.md", "a"),
            ("plans/deep/b.md", "b"),
            ("plans/c.txt", "c"),
            ("top.md", "t"),
        ] {
            let full = dir.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink("a.md", dir.join("plans/link.md")).unwrap();
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "one"]);
        git(&["checkout", "-q", "-b", "side"]);
        git(&["commit", "-q", "--allow-empty", "-m", "side"]);
        git(&["checkout", "-q", "main"]);
        git(&["commit", "-q", "--allow-empty", "-m", "main"]);
        git(&["merge", "-q", "--no-ff", "-m", "merge", "side"]);

        let repo = Repo::discover(dir).unwrap();
        let head = repo.resolve_commit("HEAD").unwrap();
        let first = repo.resolve_commit("HEAD^1").unwrap();
        assert!(repo.is_merge(head).unwrap());
        assert!(!repo.is_merge(first).unwrap());

        let kind = |p: &str| repo.path_kind_at(head, p).unwrap();
        assert_eq!(kind(""), Some(PathKind::Dir));
        assert_eq!(kind("plans"), Some(PathKind::Dir));
        assert_eq!(kind("plans/a.md"), Some(PathKind::File));
        assert_eq!(kind("Plans"), None);
        #[cfg(unix)]
        assert_eq!(kind("plans/link.md"), Some(PathKind::Symlink));

        let names =
            |dir: &str| -> Vec<(String, PathKind)> { repo.dir_entries_at(head, dir).unwrap() };
        let plans = names("plans");
        assert!(plans.contains(&("deep".into(), PathKind::Dir)), "{plans:?}");
        assert!(
            plans.contains(&("c.txt".into(), PathKind::File)),
            "{plans:?}"
        );
        assert!(names("top.md").is_empty());
        assert!(names("nowhere").is_empty());
        let root: Vec<String> = repo
            .dir_entries_at(head, "")
            .unwrap()
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(root, ["plans", "top.md"]);
    }
}
