//! Reading trees: the entries below a path prefix, and the paths where two trees differ.
//!
//! Both walk only what they must: a prefix is reached by descending one tree per component, and
//! two trees are compared by object id first so identical subtrees cost nothing. That is what
//! makes a gate over a few targets independent of the repository's size.

use std::collections::BTreeMap;

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice, ByteVec};
use gix::objs::tree::EntryKind;

use super::{GitError, Result};

/// A non-tree entry of a tree: a blob, a symlink or a submodule commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entry {
    pub path: BString,
    pub kind: EntryKind,
    pub id: ObjectId,
}

type Children = BTreeMap<BString, (EntryKind, ObjectId)>;

fn children(repo: &gix::Repository, tree: ObjectId) -> Result<Children> {
    let tree = repo
        .find_tree(tree)
        .map_err(|err| GitError::op(format!("read tree {tree}"), err))?;
    let decoded = tree
        .decode()
        .map_err(|err| GitError::op(format!("decode tree {}", tree.id), err))?;
    Ok(decoded
        .entries
        .iter()
        .map(|e| (e.filename.to_owned(), (e.mode.kind(), e.oid.to_owned())))
        .collect())
}

fn join(prefix: &[u8], name: &[u8]) -> BString {
    let mut path = BString::from(prefix);
    if !path.is_empty() {
        path.push_byte(b'/');
    }
    path.push_str(name);
    path
}

/// The entry at `prefix` in `root`: `Some((kind, id))` for a tree or a leaf, `None` when absent.
/// The empty prefix is the root tree itself.
fn lookup(
    repo: &gix::Repository,
    root: ObjectId,
    prefix: &str,
) -> Result<Option<(EntryKind, ObjectId)>> {
    let mut current = (EntryKind::Tree, root);
    for component in prefix.split('/').filter(|c| !c.is_empty()) {
        if current.0 != EntryKind::Tree {
            return Ok(None);
        }
        match children(repo, current.1)?.remove(component.as_bytes().as_bstr()) {
            Some(found) => current = found,
            None => return Ok(None),
        }
    }
    Ok(Some(current))
}

/// Appends every leaf below (or at) `prefix` of the tree `root`.
pub(super) fn flatten_at(
    repo: &gix::Repository,
    root: ObjectId,
    prefix: &str,
    out: &mut Vec<Entry>,
) -> Result<()> {
    match lookup(repo, root, prefix)? {
        Some((EntryKind::Tree, id)) => {
            flatten(repo, id, prefix.trim_end_matches('/').as_bytes(), out)
        }
        Some((kind, id)) => {
            out.push(Entry {
                path: prefix.into(),
                kind,
                id,
            });
            Ok(())
        }
        None => Ok(()),
    }
}

fn flatten(
    repo: &gix::Repository,
    tree: ObjectId,
    base: &[u8],
    out: &mut Vec<Entry>,
) -> Result<()> {
    for (name, (kind, id)) in children(repo, tree)? {
        let path = join(base, &name);
        if kind == EntryKind::Tree {
            flatten(repo, id, &path, out)?;
        } else {
            out.push(Entry { path, kind, id });
        }
    }
    Ok(())
}

/// Appends every path below (or at) `prefix` whose leaf differs between the trees `a` and `b`.
pub(super) fn diff_at(
    repo: &gix::Repository,
    a: ObjectId,
    b: ObjectId,
    prefix: &str,
    out: &mut Vec<String>,
) -> Result<()> {
    let left = lookup(repo, a, prefix)?;
    let right = lookup(repo, b, prefix)?;
    diff_entries(
        repo,
        prefix.trim_end_matches('/').as_bytes(),
        left,
        right,
        out,
    )
}

fn diff_entries(
    repo: &gix::Repository,
    path: &[u8],
    left: Option<(EntryKind, ObjectId)>,
    right: Option<(EntryKind, ObjectId)>,
    out: &mut Vec<String>,
) -> Result<()> {
    if left == right {
        return Ok(());
    }
    let is_tree = |e: Option<(EntryKind, ObjectId)>| e.is_some_and(|(k, _)| k == EntryKind::Tree);
    match (is_tree(left), is_tree(right)) {
        (true, true) => {
            let (l, r) = (
                children(repo, left.unwrap().1)?,
                children(repo, right.unwrap().1)?,
            );
            let mut names: Vec<&BString> = l.keys().chain(r.keys()).collect();
            names.sort();
            names.dedup();
            for name in names {
                diff_entries(
                    repo,
                    &join(path, name),
                    l.get(name).copied(),
                    r.get(name).copied(),
                    out,
                )?;
            }
        }
        (left_tree, right_tree) => {
            // A leaf replaced by a tree (or the reverse) changes the leaf and everything below the tree.
            for (side, side_is_tree) in [(left, left_tree), (right, right_tree)] {
                match side {
                    Some((_, id)) if side_is_tree => {
                        let mut leaves = Vec::new();
                        flatten(repo, id, path, &mut leaves)?;
                        out.extend(leaves.iter().map(|e| super::path_string(e.path.as_bstr())));
                    }
                    Some(_) => out.push(super::path_string(path.as_bstr())),
                    None => {}
                }
            }
        }
    }
    Ok(())
}
