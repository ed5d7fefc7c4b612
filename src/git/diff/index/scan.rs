//! The scoped index reader: the index streamed through a small buffer, keeping only the entries
//! a diff scoped to a few path prefixes consults, instead of decoding and allocating every entry
//! of a possibly huge index as gix's decoder does.
//!
//! It reads what gix's decoder reads, with the same checks; what it does not model (a split or
//! sparse index, a path of 4095 bytes or more, an unknown version or mandatory extension) it
//! leaves to gix by answering `None`. Damage it finds is an error that says what is damaged.

use std::io::Read;
use std::path::Path;

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::index::entry::{Flags, Mode, Stat, stat::Time};

use super::IndexError;

/// Reads the index at `path` keeping the entries a diff scoped to `prefixes` (sorted, not nested,
/// no trailing `/`) consults: those at or below a prefix, those at each prefix's ancestors, the
/// first entry below each ancestor (so that the ancestor shows as a tracked directory), and every
/// `.gitignore` and `.gitattributes`. Returns the entries and the trailer (`None` for all zeros),
/// or `None` for what is left to gix.
pub(super) fn read(
    path: &Path,
    file: std::fs::File,
    kind: gix::hash::Kind,
    prefixes: &[String],
) -> Result<Option<(gix::index::State, Option<ObjectId>)>, IndexError> {
    let io = |source: std::io::Error| IndexError::Io {
        path: path.to_path_buf(),
        source,
    };
    let corrupt = |problem: &str| IndexError::Corrupt {
        path: path.to_path_buf(),
        problem: problem.to_string(),
    };
    let meta = file.metadata().map_err(io)?;
    let mut input = Chunked::new(file, meta.len());
    let selection = Selection::new(prefixes);
    let Some((mut state, checksum)) = scan(&mut input, kind, &selection, &corrupt, &io)? else {
        return Ok(None);
    };
    // What gix takes as the index's timestamp, for the racy-git check.
    let Ok(modified) = meta.modified() else {
        return Ok(None);
    };
    state.set_timestamp(modified.into());
    Ok(Some((state, checksum)))
}

/// The length from which an entry's path is left to gix: git stores 4095 and more as 0xfff.
const MAX_PATH: usize = 0xfff;

/// Which entries [`read`] keeps. All lists are sorted, and entries arrive sorted, so each is
/// matched by a cursor that only moves forward.
///
/// The ancestors of a prefix are slices of it, not copies: a prefix of `n` components has `n`
/// ancestors, and copying each would cost memory quadratic in its length (a target of 40,000
/// components, 80 KB, would take gigabytes).
struct Selection<'p> {
    /// `p/` for each prefix: every entry starting with one is kept.
    below: Vec<Vec<u8>>,
    /// Each prefix and each ancestor of one: entries at exactly these paths are kept.
    exact: Vec<&'p [u8]>,
    /// `a/` for each ancestor `a`: the first entry starting with one is kept.
    first_below: Vec<&'p [u8]>,
}

impl<'p> Selection<'p> {
    fn new(prefixes: &'p [String]) -> Self {
        let mut below = Vec::new();
        let mut exact = Vec::new();
        let mut first_below = Vec::new();
        let mut previous: &[u8] = &[];
        for prefix in prefixes {
            let prefix = prefix.as_bytes();
            exact.push(prefix);
            let mut dir = prefix.to_vec();
            dir.push(b'/');
            below.push(dir);
            // The ancestors it shares with the prefix before it are listed already: sorted
            // prefixes of one directory (a plan of many file targets) add its ancestors once.
            let shared = prefix
                .iter()
                .zip(previous)
                .take_while(|(a, b)| a == b)
                .count();
            previous = prefix;
            // An ancestor as long as the longest path kept can neither be an entry nor hold
            // one: a target of 200,000 components sorts 2,000 of them, not 200,000.
            for (at, _) in prefix
                .iter()
                .enumerate()
                .take(MAX_PATH - 1)
                .skip(shared)
                .filter(|(_, b)| **b == b'/')
            {
                exact.push(&prefix[..at]);
                first_below.push(&prefix[..=at]);
            }
        }
        below.sort();
        below.dedup();
        // Each prefix's ancestors come in order already (a path sorts before its extensions),
        // which the sort finds as runs.
        for list in [&mut exact, &mut first_below] {
            list.sort();
            list.dedup();
        }
        Selection {
            below,
            exact,
            first_below,
        }
    }
}

#[derive(Default)]
struct Cursors<'s> {
    below: usize,
    exact: usize,
    first_below: usize,
    /// The smallest key the cursors point at: a path below it is kept only for its name.
    /// `None` until computed, and once every key is passed.
    horizon: Option<&'s [u8]>,
    done: bool,
}

impl<'p> Selection<'p> {
    /// Called for every entry; most are before the next key, and cost one comparison.
    #[inline]
    fn keeps<'s>(&'s self, at: &mut Cursors<'s>, path: &[u8]) -> bool {
        let keep = is_attribute_or_ignore_file(path);
        if at.done || at.horizon.is_some_and(|h| compare(path, h).is_lt()) {
            return keep;
        }
        self.keeps_at_key(at, path) || keep
    }

    /// [`Self::keeps`] for an entry at or past the next key: moves the cursors.
    #[inline(never)]
    fn keeps_at_key<'s>(&'s self, at: &mut Cursors<'s>, path: &[u8]) -> bool {
        let mut keep = false;
        // Blocks of entries below `p/` are contiguous and, prefixes not being nested, disjoint.
        while let Some(dir) = self.below.get(at.below)
            && dir.as_slice() < path
            && !path.starts_with(dir)
        {
            at.below += 1;
        }
        keep |= self
            .below
            .get(at.below)
            .is_some_and(|dir| path.starts_with(dir));
        while self.exact.get(at.exact).is_some_and(|p| *p < path) {
            at.exact += 1;
        }
        keep |= self.exact.get(at.exact).is_some_and(|p| *p == path);
        // The first entry at or after `a/` is below `a/` if anything is.
        while let Some(dir) = self.first_below.get(at.first_below)
            && *dir <= path
        {
            keep |= path.starts_with(dir);
            at.first_below += 1;
        }
        let horizon = [
            self.below.get(at.below).map(Vec::as_slice),
            self.exact.get(at.exact).copied(),
            self.first_below.get(at.first_below).copied(),
        ]
        .into_iter()
        .flatten()
        .min();
        match horizon {
            Some(key) => at.horizon = Some(key),
            None => at.done = true,
        }
        keep
    }
}

#[inline]
fn is_attribute_or_ignore_file(path: &[u8]) -> bool {
    let named = |name: &[u8]| {
        path.ends_with(name)
            && (path.len() == name.len() || path[path.len() - name.len() - 1] == b'/')
    };
    // Every entry of the index asks: the last byte answers for most of them.
    match path.last() {
        Some(b'e') => named(b".gitignore"),
        Some(b's') => named(b".gitattributes"),
        _ => false,
    }
}

/// Reads the entries and extensions like gix's decoder (same fields, flags and checks), keeping
/// only the selected entries. `None` for what [`read`] leaves to gix.
fn scan(
    input: &mut Chunked,
    kind: gix::hash::Kind,
    selection: &Selection,
    corrupt: &dyn Fn(&str) -> IndexError,
    io: &dyn Fn(std::io::Error) -> IndexError,
) -> Result<Option<(gix::index::State, Option<ObjectId>)>, IndexError> {
    let hash_len = kind.len_in_bytes();
    if input.len < (3 * 4 + hash_len) as u64 {
        return Err(corrupt("too small for a header"));
    }
    let header = input
        .take(12)
        .map_err(io)?
        .ok_or_else(|| corrupt("truncated header"))?;
    if &header[..4] != b"DIRC" {
        return Err(corrupt("not an index file"));
    }
    let version = be32(&header[4..8]);
    let num_entries = be32(&header[8..12]);
    if !(2..=4).contains(&version) {
        return Ok(None);
    }
    let mut state = gix::index::State::new(kind);
    let mut cursors = Cursors::default();
    let mut path = Vec::new();
    let mut previous_stage = None;
    let fixed = 40 + hash_len + 2;
    for _ in 0..num_entries {
        let truncated = || corrupt("truncated entry");
        let head = input.peek(fixed + 2).map_err(io)?;
        if head.len() < fixed {
            return Err(truncated());
        }
        let stored = u16::from_be_bytes([head[40 + hash_len], head[41 + hash_len]]);
        let header_len = if stored & 0x4000 != 0 {
            fixed + 2
        } else {
            fixed
        };
        if head.len() < header_len {
            return Err(truncated());
        }
        // Each entry is looked at in place, in one window of the buffer, and consumed at the
        // end: only the entries kept are copied out. The selection's cursors rely on git's
        // order (by path, then stage), so each path is compared with the one before it. An
        // entry out of order, or a path with a NUL byte, is damage: it is left to gix's
        // decoder, after which `check_entries` reports it.
        let (entry, len, order, kept) = if version == 4 {
            let (strip, used) = varint(
                input
                    .peek(header_len + 16)
                    .map_err(io)?
                    .get(header_len..)
                    .unwrap_or_default(),
            )
            .ok_or_else(truncated)?;
            let keep = path
                .len()
                .checked_sub(usize::try_from(strip).map_err(|_| truncated())?)
                .ok_or_else(|| corrupt("bad path compression"))?;
            let start = header_len + used;
            let mut want = start + 256;
            let end = loop {
                let window = input.peek(want).map_err(io)?;
                if let Some(at) = window.get(start..).and_then(|rest| rest.find_byte(0)) {
                    break start + at;
                }
                if window.len() < want {
                    return Err(truncated());
                }
                want *= 2;
            };
            let entry = input.peek(end + 1).map_err(io)?;
            let suffix = &entry[start..end];
            // The first `keep` bytes are the previous path's.
            let order = compare(suffix, &path[keep..]);
            path.truncate(keep);
            path.extend_from_slice(suffix);
            if path.len() >= MAX_PATH {
                // As in versions 2 and 3, which cannot say how long it is.
                return Ok(None);
            }
            let kept = selection.keeps(&mut cursors, &path);
            (entry, end + 1, order, kept)
        } else {
            let path_len = usize::from(stored & 0x0fff);
            if path_len == MAX_PATH {
                // gix reads such long paths without the padding git writes; leave them to gix.
                return Ok(None);
            }
            let padded = (header_len + path_len + 8) & !7;
            let entry = input.peek(padded).map_err(io)?;
            if entry.len() < padded {
                return Err(truncated());
            }
            let name = &entry[header_len..header_len + path_len];
            if has_nul(name) {
                return Ok(None);
            }
            let order = compare(name, &path);
            let kept = selection.keeps(&mut cursors, name);
            path.clear();
            path.extend_from_slice(name);
            (entry, padded, order, kept)
        };
        let stage = (stored >> 12) & 3;
        if let Some(before) = previous_stage
            && (order, stage) <= (std::cmp::Ordering::Equal, before)
        {
            return Ok(None);
        }
        previous_stage = Some(stage);
        let mode = Mode::from_bits_truncate(be32(&entry[24..28]));
        if mode.is_sparse() {
            return Ok(None);
        }
        let mut flags = Flags::from_bits_retain(u32::from(stored));
        if header_len > fixed {
            let extended = u16::from_be_bytes([entry[fixed], entry[fixed + 1]]);
            // Only intent-to-add and skip-worktree may be set, as gix requires.
            if extended & !0x6000 != 0 {
                return Err(corrupt("unknown extended entry flags"));
            }
            flags |= Flags::from_bits_retain(u32::from(extended) << 16);
        }
        if kept {
            let field = |i: usize| be32(&entry[i * 4..i * 4 + 4]);
            let stat = Stat {
                ctime: Time {
                    secs: field(0),
                    nsecs: field(1),
                },
                mtime: Time {
                    secs: field(2),
                    nsecs: field(3),
                },
                dev: field(4),
                ino: field(5),
                uid: field(7),
                gid: field(8),
                size: field(9),
            };
            let id = ObjectId::from_bytes_or_panic(&entry[40..40 + hash_len]);
            state.dangerously_push_entry(stat, id, flags & !Flags::PATH_LEN, mode, path.as_bstr());
        }
        input.consume(len);
    }
    // Extensions up to the trailer, as gix walks them: the mandatory (lowercase) ones this reader
    // does not model are left to gix.
    loop {
        let left = input.remaining().saturating_sub(hash_len as u64);
        if left < 8 {
            break;
        }
        let head = input
            .take(8)
            .map_err(io)?
            .ok_or_else(|| corrupt("truncated extension"))?;
        let signature = [head[0], head[1], head[2], head[3]];
        let size = u64::from(be32(&head[4..8]));
        if signature[0].is_ascii_lowercase() {
            return Ok(None);
        }
        if size > left - 8 {
            // gix stops here and then finds the trailer misplaced.
            return Err(corrupt("an extension runs past the end"));
        }
        input.skip(size).map_err(io)?;
    }
    if input.remaining() != hash_len as u64 {
        return Err(corrupt("the trailer is misplaced"));
    }
    let trailer = input
        .take(hash_len)
        .map_err(io)?
        .ok_or_else(|| corrupt("truncated trailer"))?;
    let checksum = ObjectId::from_bytes_or_panic(trailer);
    Ok(Some((state, (!checksum.is_null()).then_some(checksum))))
}

/// `a.cmp(b)`, eight bytes at a time: every entry of the index is compared with the one before
/// it, with which it shares most of its bytes, and with the selection's next key, and a call to
/// `memcmp` for some twenty bytes costs more than this loop.
#[inline]
fn compare(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let mut a_words = a.chunks_exact(8);
    let mut b_words = b.chunks_exact(8);
    for (x, y) in (&mut a_words).zip(&mut b_words) {
        let x = u64::from_be_bytes(x.try_into().expect("eight bytes"));
        let y = u64::from_be_bytes(y.try_into().expect("eight bytes"));
        if x != y {
            return x.cmp(&y);
        }
    }
    // The shorter has fewer than eight bytes left.
    let done = a.len().min(b.len()) / 8 * 8;
    let (a, b) = (&a[done..], &b[done..]);
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// Whether `bytes` holds a NUL, eight bytes at a time (see [`compare`] for why not `memchr`).
fn has_nul(bytes: &[u8]) -> bool {
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    words
        .map(|w| u64::from_ne_bytes(w.try_into().expect("eight bytes")))
        .any(|w| w.wrapping_sub(0x0101_0101_0101_0101) & !w & 0x8080_8080_8080_8080 != 0)
        || tail.contains(&0)
}

fn be32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// Git's offset varint, as gix's `leb64_from_read` decodes it: value and bytes used.
fn varint(data: &[u8]) -> Option<(u64, usize)> {
    let mut bytes = data.iter().copied();
    let mut c = bytes.next()?;
    let mut used = 1;
    let mut value = u64::from(c & 0x7f);
    while c & 0x80 != 0 {
        c = bytes.next()?;
        used += 1;
        value = value
            .checked_add(1)?
            .checked_shl(7)?
            .checked_add(u64::from(c & 0x7f))?;
    }
    Some((value, used))
}

/// A file read front to back through a buffer that holds a window of it.
struct Chunked {
    file: std::fs::File,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Bytes of the file not yet consumed.
    len: u64,
    consumed: u64,
}

impl Chunked {
    fn new(file: std::fs::File, len: u64) -> Self {
        Chunked {
            file,
            buf: vec![0; 1 << 18],
            start: 0,
            end: 0,
            len,
            consumed: 0,
        }
    }

    fn remaining(&self) -> u64 {
        self.len - self.consumed
    }

    /// At least `n` bytes from the current position, fewer only at the end of the file.
    fn peek(&mut self, n: usize) -> std::io::Result<&[u8]> {
        if self.end - self.start < n {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.buf.len() < n {
                self.buf.resize(n.next_power_of_two(), 0);
            }
            while self.end < n {
                let read = self.file.read(&mut self.buf[self.end..])?;
                if read == 0 {
                    break;
                }
                self.end += read;
            }
        }
        Ok(&self.buf[self.start..self.end])
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        self.consumed += n as u64;
    }

    /// Exactly `n` bytes, consumed; `None` at the end of the file.
    fn take(&mut self, n: usize) -> std::io::Result<Option<&[u8]>> {
        if self.peek(n)?.len() < n {
            return Ok(None);
        }
        let at = self.start;
        self.consume(n);
        Ok(Some(&self.buf[at..at + n]))
    }

    fn skip(&mut self, mut n: u64) -> std::io::Result<()> {
        while n > 0 {
            let window = self.peek((n.min(1 << 18)) as usize)?.len();
            if window == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            let step = (window as u64).min(n) as usize;
            self.consume(step);
            n -= step as u64;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_keeps_what_the_scoped_diff_consults() {
        let prefixes = ["a/b/c".to_string(), "d".to_string()];
        let selection = Selection::new(&prefixes);
        let paths: &[&str] = &[
            ".gitignore",
            "a/0",
            "a/b",
            "a/b/a",
            "a/b/c",
            "a/b/c.txt",
            "a/b/c/x",
            "a/b/c/y",
            "a/b/d",
            "b/.gitattributes",
            "c",
            "d",
            "d.txt",
            "d/e/f",
            "e",
        ];
        let mut at = Cursors::default();
        let kept: Vec<&str> = paths
            .iter()
            .copied()
            .filter(|p| selection.keeps(&mut at, p.as_bytes()))
            .collect();
        assert_eq!(
            kept,
            [
                ".gitignore",
                "a/0",
                "a/b",
                "a/b/a",
                "a/b/c",
                "a/b/c/x",
                "a/b/c/y",
                "b/.gitattributes",
                "d",
                "d/e/f",
            ]
        );
    }

    /// A prefix of 100,000 components: its ancestors are slices of it (no copy each), and only
    /// those short enough to be or hold an entry are kept, which are still found.
    #[test]
    fn a_deep_prefix_costs_its_length() {
        let prefixes = [format!("{}x", "a/".repeat(100_000))];
        let selection = Selection::new(&prefixes);
        assert!(
            selection.exact.len() <= MAX_PATH / 2 + 1,
            "{}",
            selection.exact.len()
        );
        assert!(selection.first_below.len() <= MAX_PATH / 2);
        let mut at = Cursors::default();
        let kept: Vec<&str> = ["a/a", "a/a/a/b", "b"]
            .into_iter()
            .filter(|p| selection.keeps(&mut at, p.as_bytes()))
            .collect();
        assert_eq!(kept, ["a/a", "a/a/a/b"]);
    }

    #[test]
    fn compare_and_has_nul_agree_with_the_slice_methods() {
        let words: Vec<Vec<u8>> = [
            &b""[..],
            b"a",
            b"abcdefgh",
            b"abcdefghi",
            b"abcdefgh\0",
            b"abcdefgg",
            b"d0/e0/f0/file007.txt",
            b"d0/e0/f0/file007.txu",
            b"d0/e0/f0/file007",
            b"d0/e0/f0/file0070",
            b"\xff\xfe",
            b"\0",
            b"x\0yyyyyyyyyyyyyy",
        ]
        .iter()
        .map(|w| w.to_vec())
        .collect();
        for a in &words {
            assert_eq!(has_nul(a), a.contains(&0), "{a:?}");
            for b in &words {
                assert_eq!(compare(a, b), a.cmp(b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn varint_matches_gix() {
        for value in [0u64, 1, 127, 128, 300, 16_511, 16_512, 1 << 40] {
            // Encode as git does (offset encoding), then decode with both.
            let mut bytes = vec![(value & 0x7f) as u8];
            let mut v = value >> 7;
            while v > 0 {
                v -= 1;
                bytes.push(0x80 | (v & 0x7f) as u8);
                v >>= 7;
            }
            bytes.reverse();
            let ours = varint(&bytes).expect("decodes");
            let theirs = gix::utils::decode::leb64_from_read(bytes.as_slice()).expect("decodes");
            assert_eq!(ours, (theirs.0, theirs.1));
            assert_eq!(ours.0, value);
        }
    }
}
