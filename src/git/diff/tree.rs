//! Reading trees: the entries below a path prefix, and the paths where two trees differ.
//!
//! Both walk only what they must: a prefix is reached by descending one tree per component, and
//! two trees are compared by object id first so identical subtrees cost nothing.
//!
//! Entries are read in the order git stores them, never collected into maps. Git sorts the entries
//! of a tree by name with a directory `a` compared as `a/`, so flattening a tree in stored order
//! yields full paths in byte order — the order of the index — and two trees are compared by a
//! merge of their entry lists in that same order. Tree objects are decoded into buffers that are
//! reused level by level, and a path is only built for a leaf that is reported.

use std::cmp::Ordering;
use std::collections::HashMap;

use gix::ObjectId;
use gix::bstr::{BStr, ByteSlice};
use gix::objs::TreeRefIter;
use gix::objs::tree::{EntryKind, EntryRef};
use gix::prelude::FindExt;

use super::{GitError, Result};

mod packs;

/// A leaf of a tree: kind and object id.
pub(in crate::git) type Leaf = (EntryKind, ObjectId);

/// Reads tree objects into buffers that live as long as the reader, one per recursion slot.
pub(in crate::git) struct Trees {
    pub(in crate::git) objects: gix::OdbHandle,
    bufs: Vec<Vec<u8>>,
    /// The packs, opened on the first diff of two trees.
    packs: Option<packs::Packs>,
    /// The entries of the trees [`Self::lookup`] went through, by tree: a scope of many prefixes
    /// below the same directories reads each of them once, not once per prefix.
    looked_up: HashMap<ObjectId, HashMap<Vec<u8>, (EntryKind, ObjectId)>>,
}

/// A pair of differing trees at `path`, for the threads of a large diff to share.
type Pair = (ObjectId, ObjectId, Vec<u8>);

/// A diff is shared among threads once this many pairs of differing trees are known.
const PARALLEL_PAIRS: usize = 4;

impl Trees {
    pub fn new(repo: &gix::Repository) -> Self {
        Trees {
            objects: repo.objects.clone(),
            bufs: Vec::new(),
            packs: None,
            looked_up: HashMap::new(),
        }
    }

    pub(in crate::git) fn take(&mut self, slot: usize) -> Vec<u8> {
        if self.bufs.len() <= slot {
            self.bufs.resize_with(slot + 1, Vec::new);
        }
        std::mem::take(&mut self.bufs[slot])
    }

    pub(in crate::git) fn give(&mut self, slot: usize, buf: Vec<u8>) {
        self.bufs[slot] = buf;
    }

    /// The entry at `prefix` in `root`: `Some((kind, id))` for a tree or a leaf, `None` when absent.
    /// The empty prefix is the root tree itself.
    pub fn lookup(
        &mut self,
        root: ObjectId,
        prefix: &str,
    ) -> Result<Option<(EntryKind, ObjectId)>> {
        let mut current = (EntryKind::Tree, root);
        for component in prefix.split('/').filter(|c| !c.is_empty()) {
            if current.0 != EntryKind::Tree {
                return Ok(None);
            }
            let tree = current.1;
            if !self.looked_up.contains_key(&tree) {
                let mut buf = self.take(0);
                let entries = read(&self.objects, &tree, &mut buf).and_then(|entries| {
                    entries
                        .map(|entry| {
                            let entry = entry.map_err(|err| decode_error(&tree, err))?;
                            Ok((
                                entry.filename.to_vec(),
                                (entry.mode.kind(), entry.oid.to_owned()),
                            ))
                        })
                        .collect::<Result<HashMap<_, _>>>()
                });
                self.give(0, buf);
                self.looked_up.insert(tree, entries?);
            }
            match self.looked_up[&tree].get(component.as_bytes()) {
                Some(&entry) => current = entry,
                None => return Ok(None),
            }
        }
        Ok(Some(current))
    }

    /// Calls `leaf` for every leaf below the tree `id`, whose own path is `path`, in stored order
    /// (the index's).
    pub fn leaves(
        &mut self,
        id: &gix::oid,
        path: &mut Vec<u8>,
        leaf: &mut dyn FnMut(&[u8], EntryKind, &gix::oid),
    ) -> Result<()> {
        self.flatten(id, 0, path, leaf)
    }

    /// Calls `leaf` for every leaf below the tree `id`, whose own path is `path`, in stored order.
    pub(in crate::git) fn flatten(
        &mut self,
        id: &gix::oid,
        slot: usize,
        path: &mut Vec<u8>,
        leaf: &mut dyn FnMut(&[u8], EntryKind, &gix::oid),
    ) -> Result<()> {
        let mut buf = self.take(slot);
        let result = (|| {
            for entry in read(&self.objects, id, &mut buf)? {
                let entry = entry.map_err(|err| decode_error(id, err))?;
                let len = path.len();
                push_component(path, entry.filename);
                if entry.mode.is_tree() {
                    self.flatten(entry.oid, slot + 1, path, leaf)?;
                } else {
                    leaf(path, entry.mode.kind(), entry.oid);
                }
                path.truncate(len);
            }
            Ok(())
        })();
        self.give(slot, buf);
        result
    }

    /// Appends every path below (or at) `prefix` whose leaf differs between the trees `a` and `b`.
    pub fn diff_at(
        &mut self,
        a: ObjectId,
        b: ObjectId,
        prefix: &str,
        out: &mut Vec<String>,
    ) -> Result<()> {
        let prefix = prefix.trim_end_matches('/');
        let left = self.lookup(a, prefix)?;
        let right = self.lookup(b, prefix)?;
        if left == right {
            return Ok(());
        }
        let mut path = prefix.as_bytes().to_vec();
        let is_tree =
            |e: Option<(EntryKind, ObjectId)>| e.is_some_and(|(k, _)| k == EntryKind::Tree);
        match (left, right) {
            (Some((_, l)), Some((_, r))) if is_tree(left) && is_tree(right) => {
                self.diff_shared(l, r, path, out)
            }
            (Some(_), Some(_)) if !is_tree(left) && !is_tree(right) => {
                out.push(super::path_string(path.as_bstr()));
                Ok(())
            }
            // A leaf replaced by a tree (or the reverse), or present on one side only: every leaf of
            // either side changed.
            _ => {
                for (kind, id) in [left, right].into_iter().flatten() {
                    self.report(kind, &id, 0, &mut path, out)?;
                }
                Ok(())
            }
        }
    }

    /// Reports the entry at `path` and, for a tree, every leaf below it.
    fn report(
        &mut self,
        kind: EntryKind,
        id: &gix::oid,
        slot: usize,
        path: &mut Vec<u8>,
        out: &mut Vec<String>,
    ) -> Result<()> {
        if kind == EntryKind::Tree {
            self.flatten(id, slot, path, &mut |path, _, _| {
                out.push(super::path_string(path.as_bstr()))
            })
        } else {
            out.push(super::path_string(path.as_bstr()));
            Ok(())
        }
    }

    /// Diffs two trees, sharing the work among threads when it turns out to be large: the first
    /// levels are compared here, breadth first, and the differing subtrees found there are then
    /// diffed by as many threads as there are cores, each with its own object cache.
    fn diff_shared(
        &mut self,
        a: ObjectId,
        b: ObjectId,
        path: Vec<u8>,
        out: &mut Vec<String>,
    ) -> Result<()> {
        let mut pairs = vec![(a, b, path)];
        for _ in 0..3 {
            if pairs.len() >= 4 * PARALLEL_PAIRS || pairs.is_empty() {
                break;
            }
            let mut next = Vec::new();
            for (a, b, mut path) in pairs {
                self.diff_trees(&a, &b, 0, &mut path, out, Some(&mut next))?;
            }
            pairs = next;
        }
        let threads = if pairs.len() >= PARALLEL_PAIRS {
            parallelism().min(pairs.len())
        } else {
            1
        };
        let taken = std::sync::atomic::AtomicUsize::new(0);
        let work = |trees: &mut Trees| -> Result<Vec<String>> {
            let mut out = Vec::new();
            loop {
                let i = taken.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((a, b, path)) = pairs.get(i) else {
                    return Ok(out);
                };
                trees.diff_trees(a, b, 0, &mut path.clone(), &mut out, None)?;
            }
        };
        let helpers: Vec<Trees> = (1..threads)
            .map(|_| Trees {
                objects: self.objects.clone(),
                bufs: Vec::new(),
                packs: None,
                looked_up: HashMap::new(),
            })
            .collect();
        let results = std::thread::scope(|s| {
            let handles: Vec<_> = helpers
                .into_iter()
                .map(|mut trees| s.spawn(move || work(&mut trees)))
                .collect();
            let mut results = vec![work(self)];
            results.extend(
                handles
                    .into_iter()
                    .map(|h| h.join().expect("a tree diff thread panicked")),
            );
            results
        });
        for result in results {
            out.extend(result?);
        }
        Ok(())
    }

    /// Merges the entries of two trees in git's order: equal entries are skipped without building
    /// their path, differing subtrees are descended into, and everything else is reported.
    ///
    /// Two versions of a tree usually differ in a few entries: the entries both begin with, and
    /// those both end with, are byte for byte the same and are passed over by comparing bytes
    /// rather than decoding and merging them one by one.
    ///
    /// With `defer`, differing subtrees are not descended into but collected there.
    fn diff_trees(
        &mut self,
        a: &gix::oid,
        b: &gix::oid,
        slot: usize,
        path: &mut Vec<u8>,
        out: &mut Vec<String>,
        mut defer: Option<&mut Vec<Pair>>,
    ) -> Result<()> {
        let mut buf_a = self.take(slot);
        let mut buf_b = self.take(slot + 1);
        let result = (|| {
            // The newer side first: packs usually keep it whole and the older one as a delta
            // against it, which can then be applied to it.
            let right = self.read_tree(b, &mut buf_b)?;
            let left = self.read_tree(a, &mut buf_a)?;
            let left = Entries::new(left, a);
            let right = Entries::new(right, b);
            let start = left.same_start(&right);
            let (mut at_l, mut at_r) = (start, start);
            let same_end = left.same_end(&right);
            // Slots above ours belong to the recursion.
            let below = slot + 2;
            loop {
                // Both at an entry boundary with the same bytes left: nothing more differs.
                let rest = left.data.len() - at_l;
                if rest == right.data.len() - at_r && rest <= same_end {
                    break;
                }
                let l = left.at(at_l)?;
                let r = right.at(at_r)?;
                let order = match (&l, &r) {
                    (None, None) => break,
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (Some((x, _)), Some((y, _))) => git_order(x, y),
                };
                let len = path.len();
                match (order, l, r) {
                    (Ordering::Less, Some((x, end)), _) => {
                        push_component(path, x.filename);
                        self.report(x.mode.kind(), x.oid, below, path, out)?;
                        at_l = end;
                    }
                    (Ordering::Greater, _, Some((y, end))) => {
                        push_component(path, y.filename);
                        self.report(y.mode.kind(), y.oid, below, path, out)?;
                        at_r = end;
                    }
                    (Ordering::Equal, Some((x, end_l)), Some((y, end_r))) => {
                        // Same name and both trees or both leaves; modes compare as git's canonical kinds.
                        if x.oid != y.oid || x.mode.kind() != y.mode.kind() {
                            push_component(path, x.filename);
                            if x.mode.is_tree() {
                                match defer.as_deref_mut() {
                                    Some(pairs) => pairs.push((
                                        x.oid.to_owned(),
                                        y.oid.to_owned(),
                                        path.clone(),
                                    )),
                                    None => {
                                        self.diff_trees(x.oid, y.oid, below, path, out, None)?
                                    }
                                }
                            } else {
                                out.push(super::path_string(path.as_bstr()));
                            }
                        }
                        at_l = end_l;
                        at_r = end_r;
                    }
                    _ => unreachable!("the order follows from which entries are there"),
                }
                path.truncate(len);
            }
            Ok(())
        })();
        self.give(slot, buf_a);
        self.give(slot + 1, buf_b);
        result
    }
}

impl Trees {
    /// The encoded entries of tree `id`, read into `buf`: from the packs where they can do it
    /// without inflating a delta's base again, otherwise through gix.
    fn read_tree<'b>(&mut self, id: &gix::oid, buf: &'b mut Vec<u8>) -> Result<&'b [u8]> {
        if id != gix::ObjectId::empty_tree(id.kind()) {
            let objects = &self.objects;
            let packs = self
                .packs
                .get_or_insert_with(|| packs::Packs::open(objects.store_ref().path(), id.kind()));
            if packs.read_tree(id, buf) {
                return Ok(buf);
            }
        }
        read_raw(&self.objects, id, buf)
    }
}

/// The encoded entries of a tree, decoded one at a time at a byte offset.
struct Entries<'a> {
    data: &'a [u8],
    id: &'a gix::oid,
}

impl<'a> Entries<'a> {
    fn new(data: &'a [u8], id: &'a gix::oid) -> Self {
        Entries { data, id }
    }

    /// The entry starting at byte `at` and the offset of the next one; `None` at the end.
    fn at(&self, at: usize) -> Result<Option<(EntryRef<'a>, usize)>> {
        let Some(rest) = self.data.get(at..).filter(|rest| !rest.is_empty()) else {
            return Ok(None);
        };
        let mut iter = TreeRefIter::from_bytes(rest, self.id.kind());
        let truncated = || decode_error(self.id, "truncated entry");
        let entry = next(&mut iter, self.id)?.ok_or_else(truncated)?;
        let end = self.end_of(at).ok_or_else(truncated)?;
        Ok(Some((entry, end)))
    }

    /// Where the entry starting at byte `at` ends: after its name's NUL and its object id.
    fn end_of(&self, at: usize) -> Option<usize> {
        let nul = self.data.get(at..)?.find_byte(0)?;
        let end = at + nul + 1 + self.id.kind().len_in_bytes();
        (end <= self.data.len()).then_some(end)
    }

    /// The offset of the first entry that is not byte for byte the same in both trees (and at
    /// the same offset), so that everything before it can be passed over.
    fn same_start(&self, other: &Entries<'_>) -> usize {
        let common = common_len(self.data, other.data);
        let mut at = 0;
        while let Some(end) = self.end_of(at)
            && end <= common
        {
            at = end;
        }
        at
    }

    /// How many bytes both trees end with.
    fn same_end(&self, other: &Entries<'_>) -> usize {
        let (a, b) = (self.data, other.data);
        let n = a.len().min(b.len());
        let mut len = 0;
        while len + CHUNK <= n
            && a[a.len() - len - CHUNK..a.len() - len] == b[b.len() - len - CHUNK..b.len() - len]
        {
            len += CHUNK;
        }
        while len < n && a[a.len() - len - 1] == b[b.len() - len - 1] {
            len += 1;
        }
        len
    }
}

/// Bytes compared at once when looking for where two trees start or stop to differ.
const CHUNK: usize = 32;

/// How many bytes `a` and `b` begin with in common.
fn common_len(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut len = 0;
    while len + CHUNK <= n && a[len..len + CHUNK] == b[len..len + CHUNK] {
        len += CHUNK;
    }
    while len < n && a[len] == b[len] {
        len += 1;
    }
    len
}

/// The number of threads worth running, read once.
fn parallelism() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(8)))
}

/// Git's order of tree entries: by name, a tree's name followed by `/`. Equal only for the same
/// name on the same side of the tree/leaf divide.
fn git_order(a: &EntryRef<'_>, b: &EntryRef<'_>) -> Ordering {
    name_order(a.filename, a.mode.is_tree(), b.filename, b.mode.is_tree())
}

pub(in crate::git) fn name_order(x: &[u8], x_tree: bool, y: &[u8], y_tree: bool) -> Ordering {
    let common = x.len().min(y.len());
    x[..common].cmp(&y[..common]).then_with(|| {
        let end = |name: &[u8], tree: bool| {
            name.get(common)
                .copied()
                .unwrap_or(if tree { b'/' } else { 0 })
        };
        end(x, x_tree).cmp(&end(y, y_tree))
    })
}

pub(in crate::git) fn next<'a>(
    iter: &mut TreeRefIter<'a>,
    id: &gix::oid,
) -> Result<Option<EntryRef<'a>>> {
    iter.next().transpose().map_err(|err| decode_error(id, err))
}

pub(in crate::git) fn push_component(path: &mut Vec<u8>, name: &BStr) {
    if !path.is_empty() {
        path.push(b'/');
    }
    path.extend_from_slice(name);
}

/// The entries of tree `id`, decoded lazily from `buf`.
pub(in crate::git) fn read<'b>(
    objects: &gix::OdbHandle,
    id: &gix::oid,
    buf: &'b mut Vec<u8>,
) -> Result<TreeRefIter<'b>> {
    if id == gix::ObjectId::empty_tree(id.kind()) {
        buf.clear();
        return Ok(TreeRefIter::from_bytes(buf, id.kind()));
    }
    objects
        .find_tree_iter(id, buf)
        .map_err(|err| GitError::op(format!("read tree {id}"), err))
}

/// The encoded entries of tree `id`, read into `buf`.
fn read_raw<'b>(objects: &gix::OdbHandle, id: &gix::oid, buf: &'b mut Vec<u8>) -> Result<&'b [u8]> {
    if id == gix::ObjectId::empty_tree(id.kind()) {
        buf.clear();
        return Ok(buf);
    }
    let read_err = |err: &dyn std::fmt::Display| GitError::op(format!("read tree {id}"), err);
    let data = objects.find(id, buf).map_err(|err| read_err(&err))?;
    if data.kind != gix::objs::Kind::Tree {
        return Err(read_err(&format!(
            "Expected object of kind tree but got {}",
            data.kind
        )));
    }
    Ok(data.data)
}

fn decode_error(id: &gix::oid, err: impl std::fmt::Display) -> GitError {
    GitError::op(format!("decode tree {id}"), err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry<'a>(name: &'a str, tree: bool, oid: &'a gix::oid) -> EntryRef<'a> {
        EntryRef {
            mode: if tree {
                EntryKind::Tree.into()
            } else {
                EntryKind::Blob.into()
            },
            filename: name.into(),
            oid,
        }
    }

    #[test]
    fn git_order_sorts_trees_as_if_followed_by_a_slash() {
        let id = gix::ObjectId::null(gix::hash::Kind::Sha1);
        let cmp = |a: (&str, bool), b: (&str, bool)| {
            git_order(&entry(a.0, a.1, &id), &entry(b.0, b.1, &id))
        };
        assert_eq!(cmp(("a", false), ("a", true)), Ordering::Less);
        assert_eq!(cmp(("a.txt", false), ("a", true)), Ordering::Less);
        assert_eq!(cmp(("a0", false), ("a", true)), Ordering::Greater);
        assert_eq!(cmp(("a", true), ("a", true)), Ordering::Equal);
        assert_eq!(cmp(("a", false), ("a.txt", false)), Ordering::Less);
        assert_eq!(cmp(("b", false), ("a", true)), Ordering::Greater);
    }
}
