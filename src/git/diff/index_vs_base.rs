//! The index against a base tree, entry by entry: the first side of the cumulative diff.
//!
//! Both are walked in path order and merged name by name (flattening a tree in git's stored
//! order yields the index's byte order); where the index's cache-tree extension vouches that a
//! directory of the index is exactly a tree, and that tree is the base's, the whole directory is
//! known equal without reading anything below it.

use std::cmp::Ordering;
use std::ops::Range;

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;

use super::Result;
use super::tree::{Leaf, Trees, name_order, next, push_component, read};

/// How the index compares with a base tree, entry by entry, within a scope.
pub(in crate::git) struct IndexVsBase {
    /// Per index entry: its leaf is the base's leaf at its path. Entries outside the scope, and
    /// those that differ, are `false`.
    pub same: Vec<bool>,
    /// The entries in scope that differ (every stage of an unmerged path), in entry order, with
    /// the base's leaf at their path (`None`: the base has none). Sorted once every prefix is
    /// compared: the prefixes come in string order (`a` < `a-b`), their entries in the index's
    /// (`a-b/x` < `a/x`), so the entries of one prefix can sort before another's.
    pub differ: Vec<(usize, Option<Leaf>)>,
    /// Paths only the base has.
    pub base_only: Vec<String>,
}

impl IndexVsBase {
    /// The base's leaf at the path of entry `i`, which is in scope: `Some(leaf)`, or `None`
    /// when the comparison never met the entry, which breaks its invariant (every entry in scope
    /// is either the same or differs) and is for the caller to report, never to guess.
    pub fn base_leaf(&self, index: &gix::index::State, i: usize) -> Option<Option<Leaf>> {
        if self.same[i] {
            return Some(index_leaf(&index.entries()[i]));
        }
        let found = self
            .differ
            .binary_search_by_key(&i, |(entry, _)| *entry)
            .ok()
            .map(|at| self.differ[at].1);
        debug_assert!(found.is_some(), "index entry {i} in scope was not compared");
        found
    }
}

/// The leaf an index entry stands for; `None` for a sparse directory entry (or an unknown mode).
pub(in crate::git) fn index_leaf(entry: &gix::index::Entry) -> Option<Leaf> {
    use gix::index::entry::Mode;
    let kind = match entry.mode {
        Mode::FILE => EntryKind::Blob,
        Mode::FILE_EXECUTABLE => EntryKind::BlobExecutable,
        Mode::SYMLINK => EntryKind::Link,
        Mode::COMMIT => EntryKind::Commit,
        _ => return None,
    };
    Some((kind, entry.id))
}

impl Trees {
    /// Compares the index with the base tree `root` below (or at) each prefix.
    ///
    /// Both are walked in path order and merged name by name; where the index's cache-tree
    /// extension vouches that a directory of the index is exactly a tree, and that tree is the
    /// base's, the directory's entries are known equal without reading anything.
    pub fn compare_index(
        &mut self,
        root: ObjectId,
        index: &gix::index::State,
        prefixes: &[String],
    ) -> Result<IndexVsBase> {
        let mut result = IndexVsBase {
            same: vec![false; index.entries().len()],
            differ: Vec::new(),
            base_only: Vec::new(),
        };
        let mut compare = Compare {
            index,
            result: &mut result,
        };
        for prefix in prefixes {
            let prefix = prefix.trim_end_matches('/');
            let mut path = prefix.as_bytes().to_vec();
            if prefix.is_empty() {
                let all = 0..index.entries().len();
                self.compare_dir(Some(root), index.tree(), &mut path, all, 0, &mut compare)?;
                continue;
            }
            let base = self.lookup(root, prefix)?;
            let cache = prefix
                .split('/')
                .try_fold(index.tree(), |node, name| {
                    Some(
                        node?
                            .children
                            .iter()
                            .find(|c| c.name.as_slice() == name.as_bytes()),
                    )
                })
                .flatten();
            let file = index.entry_range(prefix.as_bytes().as_bstr());
            let mut dir_prefix = path.clone();
            dir_prefix.push(b'/');
            let dir = index.prefixed_entries_range(dir_prefix.as_bstr());
            let (tree, leaf) = match base {
                Some((EntryKind::Tree, id)) => (Some(id), None),
                Some(leaf) => (None, Some(leaf)),
                None => (None, None),
            };
            match (file, leaf) {
                (Some(file), leaf) => compare.entries(file, leaf),
                (None, Some(_)) => compare
                    .result
                    .base_only
                    .push(super::path_string(path.as_bstr())),
                (None, None) => {}
            }
            self.compare_below(tree, cache, &mut path, dir, 0, &mut compare)?;
        }
        // An entry is compared once per prefix it is below; prefixes do not nest, so once.
        result.differ.sort_by_key(|(entry, _)| *entry);
        result.differ.dedup_by_key(|(entry, _)| *entry);
        Ok(result)
    }

    /// The tree `tree` (if the base has one at `path`) against the index entries below `path`.
    fn compare_below(
        &mut self,
        tree: Option<ObjectId>,
        cache: Option<&gix::index::extension::Tree>,
        path: &mut Vec<u8>,
        range: Option<Range<usize>>,
        slot: usize,
        compare: &mut Compare<'_, '_>,
    ) -> Result<()> {
        match (tree, range) {
            (tree, Some(range)) => self.compare_dir(tree, cache, path, range, slot, compare),
            (Some(tree), None) => self.flatten(&tree, slot, path, &mut |path, _, _| {
                compare
                    .result
                    .base_only
                    .push(super::path_string(path.as_bstr()))
            }),
            (None, None) => Ok(()),
        }
    }

    fn compare_dir(
        &mut self,
        tree: Option<ObjectId>,
        cache: Option<&gix::index::extension::Tree>,
        path: &mut Vec<u8>,
        range: Range<usize>,
        slot: usize,
        compare: &mut Compare<'_, '_>,
    ) -> Result<()> {
        let index = compare.index;
        let entries = &index.entries()[range.clone()];
        let Some(tree) = tree else {
            compare.entries(range, None);
            return Ok(());
        };
        if let Some(cache) = cache
            && cache.id == tree
            && cache.num_entries == u32::try_from(entries.len()).ok()
            && entries.iter().all(|e| {
                e.stage_raw() == 0 && !e.flags.contains(gix::index::entry::Flags::INTENT_TO_ADD)
            })
        {
            compare.result.same[range].fill(true);
            return Ok(());
        }
        // The index entries below `path`, grouped by their next component, in git's order.
        let base = if path.is_empty() { 0 } else { path.len() + 1 };
        let mut groups: Vec<(Range<usize>, bool, Range<usize>)> = Vec::new();
        let mut i = range.start;
        while i < range.end {
            let entry_path = index.entries()[i].path(index);
            let rest = &entry_path[base..];
            let (name_len, is_dir) = match rest.find_byte(b'/') {
                Some(slash) => (slash, true),
                None => (rest.len(), false),
            };
            let end = if is_dir {
                let prefix = &entry_path[..base + name_len + 1];
                i + index.entries()[i..range.end]
                    .partition_point(|e| e.path(index).starts_with(prefix))
            } else {
                let mut end = i + 1;
                while end < range.end && index.entries()[end].path(index) == entry_path {
                    end += 1;
                }
                end
            };
            groups.push((base..base + name_len, is_dir, i..end));
            i = end;
        }
        let mut children: Vec<&gix::index::extension::Tree> = cache
            .map(|c| c.children.iter().collect())
            .unwrap_or_default();
        children.sort_by(|a, b| a.name.cmp(&b.name));

        let mut buf = self.take(slot);
        let result = (|| {
            let mut entries_of_tree = read(&self.objects, &tree, &mut buf)?;
            let mut next_base = next(&mut entries_of_tree, &tree)?;
            let mut groups = groups.into_iter().peekable();
            loop {
                let group_name = |g: &(Range<usize>, bool, Range<usize>)| {
                    &index.entries()[g.2.start].path(index)[g.0.clone()]
                };
                let order = match (&next_base, groups.peek()) {
                    (None, None) => break,
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (Some(b), Some(g)) => {
                        name_order(b.filename, b.mode.is_tree(), group_name(g), g.1)
                    }
                };
                let len = path.len();
                match order {
                    Ordering::Less => {
                        let b = next_base.take().expect("a base entry");
                        push_component(path, b.filename);
                        if b.mode.is_tree() {
                            let id = b.oid.to_owned();
                            self.flatten(&id, slot + 1, path, &mut |path, _, _| {
                                compare
                                    .result
                                    .base_only
                                    .push(super::path_string(path.as_bstr()))
                            })?;
                        } else {
                            compare
                                .result
                                .base_only
                                .push(super::path_string(path.as_bstr()));
                        }
                        next_base = next(&mut entries_of_tree, &tree)?;
                    }
                    Ordering::Greater => {
                        let (_, _, entries) = groups.next().expect("a group");
                        compare.entries(entries, None);
                    }
                    Ordering::Equal => {
                        let b = next_base.take().expect("a base entry");
                        let (_, is_dir, entries) = groups.next().expect("a group");
                        if is_dir {
                            push_component(path, b.filename);
                            let child = children
                                .binary_search_by(|c| c.name.as_slice().cmp(b.filename.as_bytes()))
                                .ok()
                                .map(|at| children[at]);
                            let id = b.oid.to_owned();
                            self.compare_dir(Some(id), child, path, entries, slot + 1, compare)?;
                        } else {
                            compare.entries(entries, Some((b.mode.kind(), b.oid.to_owned())));
                        }
                        next_base = next(&mut entries_of_tree, &tree)?;
                    }
                }
                path.truncate(len);
            }
            Ok(())
        })();
        self.give(slot, buf);
        result
    }
}

/// Where [`Trees::compare_index`] records what it finds.
struct Compare<'i, 'r> {
    index: &'i gix::index::State,
    result: &'r mut IndexVsBase,
}

impl Compare<'_, '_> {
    /// Index entries at one path (all its stages), or all below a path the base has no tree at,
    /// against the base's leaf there.
    fn entries(&mut self, range: Range<usize>, base: Option<Leaf>) {
        let entries = &self.index.entries()[range.clone()];
        let unmerged = entries.iter().any(|e| e.stage_raw() != 0);
        for (i, entry) in range.zip(entries) {
            if !unmerged && base.is_some() && index_leaf(entry) == base {
                self.result.same[i] = true;
            } else {
                self.result.differ.push((i, base));
            }
        }
    }
}
