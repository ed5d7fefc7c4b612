//! Files kept as git objects: a set of `(path, bytes)` written as a tree in a commit whose
//! parent is the previous set, behind a ref that only moves by compare-and-swap.
//!
//! This is how a run's record travels with the repository: the refs alone are enough to rebuild
//! it anywhere. Objects are written in process (gix); the ref is moved by `git update-ref` with
//! the old value, so that two writers cannot both think they advanced it.

use std::collections::BTreeMap;

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};
use gix::objs::tree::{Entry, EntryKind};

use super::command::Git;
use super::{CommitId, GitError, Repo, Result};

/// One file of a record: its `/`-separated path and its bytes.
pub type RecordFile = (String, Vec<u8>);

/// A record this clone will not read, and why.
fn refuse(why: String) -> GitError {
    GitError::op("read a run record", why)
}

/// How much of a record [`Repo::read_record`] reads at most.
struct Bounds {
    /// The most bytes the file at a path may have.
    limit: fn(&str) -> u64,
    max_files: usize,
}

/// A directory being assembled: files and subdirectories by name.
#[derive(Default)]
struct Dir {
    files: BTreeMap<String, Vec<u8>>,
    dirs: BTreeMap<String, Dir>,
}

impl Dir {
    fn insert(&mut self, path: &str, bytes: Vec<u8>) {
        match path.split_once('/') {
            Some((dir, rest)) => self
                .dirs
                .entry(dir.to_owned())
                .or_default()
                .insert(rest, bytes),
            None => {
                self.files.insert(path.to_owned(), bytes);
            }
        }
    }
}

impl Repo {
    /// Writes `files` as a commit on top of `parent` (dated `seconds` since the epoch, by
    /// git-baton) and returns its id and `true`, or `parent` and `false` when `parent` already
    /// holds exactly these files; no ref moves.
    pub fn write_record(
        &self,
        files: &[RecordFile],
        parent: Option<CommitId>,
        message: &str,
        seconds: i64,
    ) -> Result<(CommitId, bool)> {
        let mut root = Dir::default();
        for (path, bytes) in files {
            root.insert(path, bytes.clone());
        }
        let tree = self.write_dir(&root)?;
        if let Some(parent) = parent
            && self.tree_of(parent)? == tree
        {
            return Ok((parent, false));
        }
        let signature = gix::actor::Signature {
            name: "git-baton".into(),
            email: "git-baton@localhost".into(),
            time: gix::date::Time::new(seconds, 0),
        };
        let commit = gix::objs::Commit {
            tree,
            parents: parent.map(CommitId::gix).into_iter().collect(),
            author: signature.clone(),
            committer: signature,
            encoding: None,
            message: BString::from(message),
            extra_headers: Vec::new(),
        };
        let id = self
            .repo
            .write_object(&commit)
            .map_err(|err| GitError::op("write a record commit", err))?;
        Ok((CommitId::from_gix(id.detach()), true))
    }

    fn write_dir(&self, dir: &Dir) -> Result<ObjectId> {
        let mut entries = Vec::with_capacity(dir.files.len() + dir.dirs.len());
        for (name, bytes) in &dir.files {
            let oid = self
                .repo
                .write_blob(bytes)
                .map_err(|err| GitError::op(format!("write the record file `{name}`"), err))?;
            entries.push(Entry {
                mode: EntryKind::Blob.into(),
                filename: name.as_str().into(),
                oid: oid.detach(),
            });
        }
        for (name, sub) in &dir.dirs {
            entries.push(Entry {
                mode: EntryKind::Tree.into(),
                filename: name.as_str().into(),
                oid: self.write_dir(sub)?,
            });
        }
        // git orders a tree's entries by name, a directory's as if it ended in `/`.
        entries.sort();
        let tree = gix::objs::Tree { entries };
        self.repo
            .write_object(&tree)
            .map(|id| id.detach())
            .map_err(|err| GitError::op("write a record tree", err))
    }

    /// Every file of the record commit `commit`, paths `/`-separated, sorted. A record may come
    /// from another machine: a file larger than `limit(path)` bytes, or more than `max_files` files,
    /// or a tree deeper than a run directory is, is refused before anything more is read.
    pub fn read_record(
        &self,
        commit: CommitId,
        limit: fn(&str) -> u64,
        max_files: usize,
    ) -> Result<Vec<RecordFile>> {
        let tree = self.tree_of(commit)?;
        let mut out = Vec::new();
        let bounds = Bounds { limit, max_files };
        self.read_dir(tree, "", 0, &bounds, &mut out)?;
        Ok(out)
    }

    fn read_dir(
        &self,
        tree: ObjectId,
        prefix: &str,
        depth: usize,
        bounds: &Bounds,
        out: &mut Vec<RecordFile>,
    ) -> Result<()> {
        // `attempts/<stage>-<n>/<file>`: two directories deep at most.
        if depth > 2 {
            return Err(refuse(format!(
                "`{prefix}` is nested deeper than a run directory"
            )));
        }
        let tree = self
            .repo
            .find_tree(tree)
            .map_err(|err| GitError::op(format!("read record tree {tree}"), err))?;
        let entries: Vec<_> = tree
            .iter()
            .map(|entry| entry.map(|e| (e.mode(), e.filename().to_owned(), e.oid().to_owned())))
            .collect::<std::result::Result<_, _>>()
            .map_err(|err| GitError::op("read a record tree entry", err))?;
        for (mode, name, oid) in entries {
            let path = format!("{prefix}{}", name.to_str_lossy());
            if mode.is_tree() {
                self.read_dir(oid, &format!("{path}/"), depth + 1, bounds, out)?;
            } else if mode.is_blob() {
                if out.len() >= bounds.max_files {
                    return Err(refuse(format!(
                        "it holds more than {} files",
                        bounds.max_files
                    )));
                }
                let data = self.record_file(oid, &path, (bounds.limit)(&path))?;
                out.push((path, data));
            }
        }
        Ok(())
    }

    /// The record file `path` of the record commit `commit` (`None` when it is no file there),
    /// refused unread when it is larger than `limit`: a record may come from another machine.
    pub fn read_record_file_at(
        &self,
        commit: CommitId,
        path: &str,
        limit: u64,
    ) -> Result<Option<Vec<u8>>> {
        match self.entry_at(commit, path)? {
            Some(entry) if entry.mode().is_blob() => {
                self.record_file(entry.object_id(), path, limit).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// The bytes of the record file `path`, refused unread when its header says it is larger
    /// than `limit`.
    fn record_file(&self, oid: ObjectId, path: &str, limit: u64) -> Result<Vec<u8>> {
        let failed = |err: &dyn std::fmt::Display| {
            GitError::op(format!("read the record file `{path}`"), err.to_string())
        };
        let size = self.repo.find_header(oid).map_err(|e| failed(&e))?.size();
        if size > limit {
            return Err(refuse(format!(
                "`{path}` is {size} bytes, more than a record file may be ({limit})"
            )));
        }
        let blob = self.repo.find_blob(oid).map_err(|e| failed(&e))?;
        Ok(blob.detach().data)
    }

    /// Where `refname` points, if it exists.
    pub fn ref_target(&self, refname: &str) -> Result<Option<CommitId>> {
        match self.repo.try_find_reference(refname) {
            Ok(Some(mut reference)) => reference
                .peel_to_id()
                .map(|id| Some(CommitId::from_gix(id.detach())))
                .map_err(|err| GitError::op(format!("resolve `{refname}`"), err)),
            Ok(None) => Ok(None),
            Err(err) => Err(GitError::op(format!("look up `{refname}`"), err)),
        }
    }

    /// Every ref under `prefix` (which ends in `/`), with its target, sorted by name.
    pub fn refs_under(&self, prefix: &str) -> Result<Vec<(String, CommitId)>> {
        let listed = Git::at_git_dir(self.common_dir())
            .args(["for-each-ref", "--format=%(objectname) %(refname)", prefix])
            .output()?;
        let mut refs = Vec::new();
        for line in listed.lines().filter(|l| !l.is_empty()) {
            let (id, name) = line.split_once(' ').unwrap_or((line, ""));
            let id = id
                .parse()
                .map_err(|err| GitError::op(format!("read the id of `{name}`"), err))?;
            refs.push((name.to_owned(), id));
        }
        Ok(refs)
    }

    /// Points `refname` at `new` only if it still points at `expected` (`None`: does not exist
    /// yet), in one step; a ref that moved meanwhile is an error and stays as it is.
    pub fn swap_ref(&self, refname: &str, new: CommitId, expected: Option<CommitId>) -> Result<()> {
        let old = expected.map_or_else(|| "0".repeat(40), |id| id.to_string());
        Git::at_git_dir(self.common_dir())
            .args(["update-ref", refname, &new.to_string(), &old])
            .run()
    }

    /// Applies ref updates in one transaction (`git update-ref --stdin`): each `(name,
    /// Some(id))` is set, each `(name, None)` deleted; all or none.
    pub fn set_refs(&self, updates: &[(String, Option<CommitId>)]) -> Result<()> {
        if updates.is_empty() {
            return Ok(());
        }
        let mut script = String::from("start\n");
        for (name, id) in updates {
            match id {
                Some(id) => script.push_str(&format!("update {name} {id}\n")),
                None => script.push_str(&format!("delete {name}\n")),
            }
        }
        script.push_str("prepare\ncommit\n");
        Git::at_git_dir(self.common_dir())
            .args(["update-ref", "--stdin"])
            .input(script.into_bytes())
            .run()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_it_was_written() {
        let dir = crate::testing::git_init(&[]);
        let repo = Repo::discover(dir.path()).unwrap();
        let files = vec![
            (
                "attempts/executor-1/prompt.md".to_owned(),
                b"do it".to_vec(),
            ),
            (
                "attempts/executor-10/prompt.md".to_owned(),
                b"again".to_vec(),
            ),
            ("attempts.json".to_owned(), b"{}".to_vec()),
            ("state.json".to_owned(), b"{\"a\":1}".to_vec()),
        ];
        let (first, _) = repo
            .write_record(&files, None, "one", 1_700_000_000)
            .unwrap();
        let mut expected = files.clone();
        expected.sort();
        assert_eq!(repo.read_record(first, |_| 1 << 20, 100).unwrap(), expected);
        assert!(
            repo.read_record(first, |_| 3, 100).is_err(),
            "a file over the limit"
        );
        assert!(
            repo.read_record(first, |_| 1 << 20, 3).is_err(),
            "more files than allowed"
        );
        let same = repo.write_record(&expected, Some(first), "again", 1_700_000_001);
        assert_eq!(
            same.unwrap(),
            (first, false),
            "the same files make no new commit"
        );
        let (second, new) = repo
            .write_record(&files[..1], Some(first), "two", 1_700_000_001)
            .unwrap();
        assert!(new);
        assert!(repo.is_ancestor(first, second));

        // git itself agrees on the tree (its fsck rejects a misordered one).
        crate::testing::git(dir.path(), &["fsck", "--strict", "--no-dangling"]);

        repo.swap_ref("refs/baton/test", first, None).unwrap();
        assert!(repo.swap_ref("refs/baton/test", second, None).is_err());
        repo.swap_ref("refs/baton/test", second, Some(first))
            .unwrap();
        assert!(
            repo.swap_ref("refs/baton/test", first, Some(first))
                .is_err()
        );
        assert_eq!(repo.ref_target("refs/baton/test").unwrap(), Some(second));
        assert_eq!(
            repo.refs_under("refs/baton/").unwrap(),
            vec![("refs/baton/test".to_owned(), second)]
        );
        repo.set_refs(&[
            ("refs/baton/test".to_owned(), None),
            ("refs/baton/other".to_owned(), Some(first)),
        ])
        .unwrap();
        assert_eq!(repo.ref_target("refs/baton/test").unwrap(), None);
        assert_eq!(repo.ref_target("refs/baton/other").unwrap(), Some(first));
    }
}
