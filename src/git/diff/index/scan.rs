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
    let scan = Scan {
        hash_len,
        fixed: 40 + hash_len + 2,
        corrupt,
        io,
    };
    let Some((version, num_entries)) = header(input, scan)? else {
        return Ok(None);
    };
    let mut state = gix::index::State::new(kind);
    let mut walk = Walk {
        selection,
        cursors: Cursors::default(),
        path: Vec::new(),
        previous_stage: None,
    };
    for _ in 0..num_entries {
        if entry(input, scan, version, &mut walk, &mut state)?.is_none() {
            return Ok(None);
        }
    }
    if extensions(input, scan)?.is_none() {
        return Ok(None);
    }
    let checksum = trailer(input, scan)?;
    Ok(Some((state, (!checksum.is_null()).then_some(checksum))))
}

/// What each step of [`scan`] reads with: the length of an object id, the length of an entry's
/// fixed fields, and how a failure is worded.
#[derive(Clone, Copy)]
struct Scan<'e> {
    hash_len: usize,
    /// The fields of an entry up to its flags, included.
    fixed: usize,
    corrupt: &'e dyn Fn(&str) -> IndexError,
    io: &'e dyn Fn(std::io::Error) -> IndexError,
}

/// Where the scan of the entries is: the selection's cursors, the path of the entry before
/// (which version 4 compresses each path against, and which each path must sort after), and
/// its stage.
struct Walk<'s, 'p> {
    selection: &'s Selection<'p>,
    cursors: Cursors<'s>,
    path: Vec<u8>,
    previous_stage: Option<u16>,
}

/// One entry in place, in its window of the buffer: its bytes, how many of them to consume, how
/// its path compares with the one before, and whether the selection keeps it.
struct Window<'i> {
    entry: &'i [u8],
    len: usize,
    order: std::cmp::Ordering,
    kept: bool,
}

/// The header: the index's version and its number of entries; `None` for a version gix reads.
#[inline]
fn header(input: &mut Chunked, scan: Scan) -> Result<Option<(u32, u32)>, IndexError> {
    let corrupt = scan.corrupt;
    if input.len < (3 * 4 + scan.hash_len) as u64 {
        return Err(corrupt("too small for a header"));
    }
    let header = input
        .take(12)
        .map_err(scan.io)?
        .ok_or_else(|| corrupt("truncated header"))?;
    if &header[..4] != b"DIRC" {
        return Err(corrupt("not an index file"));
    }
    let version = be32(&header[4..8]);
    let num_entries = be32(&header[8..12]);
    if !(2..=4).contains(&version) {
        return Ok(None);
    }
    Ok(Some((version, num_entries)))
}

/// One entry: its path, its order after the one before, its mode and flags, pushed onto `state`
/// when the selection keeps it, then consumed.
#[inline]
fn entry(
    input: &mut Chunked,
    scan: Scan,
    version: u32,
    walk: &mut Walk,
    state: &mut gix::index::State,
) -> Result<Option<()>, IndexError> {
    let (stored, header_len) = entry_header(input, scan)?;
    // Each entry is looked at in place, in one window of the buffer, and consumed at the
    // end: only the entries kept are copied out. The selection's cursors rely on git's
    // order (by path, then stage), so each path is compared with the one before it. An
    // entry out of order, or a path with a NUL byte, is damage: it is left to gix's
    // decoder, after which `check_entries` reports it.
    let window = if version == 4 {
        compressed_path(input, scan, walk, header_len)?
    } else {
        stored_path(input, scan, walk, header_len, stored)?
    };
    let Some(Window {
        entry,
        len,
        order,
        kept,
    }) = window
    else {
        return Ok(None);
    };
    let stage = (stored >> 12) & 3;
    if let Some(before) = walk.previous_stage
        && (order, stage) <= (std::cmp::Ordering::Equal, before)
    {
        return Ok(None);
    }
    walk.previous_stage = Some(stage);
    let mode = Mode::from_bits_truncate(be32(&entry[24..28]));
    if mode.is_sparse() {
        return Ok(None);
    }
    let flags = flags(entry, stored, header_len, scan)?;
    if kept {
        push(state, entry, scan.hash_len, flags, mode, &walk.path);
    }
    input.consume(len);
    Ok(Some(()))
}

/// An entry's stored flags, and the length of its fields before the path (with the extended
/// flags, when it has them).
#[inline]
fn entry_header(input: &mut Chunked, scan: Scan) -> Result<(u16, usize), IndexError> {
    let (hash_len, fixed) = (scan.hash_len, scan.fixed);
    let truncated = || (scan.corrupt)("truncated entry");
    let head = input.peek(fixed + 2).map_err(scan.io)?;
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
    Ok((stored, header_len))
}

/// Version 4: the path is the previous one's first bytes and a NUL-terminated suffix.
#[inline]
fn compressed_path<'i>(
    input: &'i mut Chunked,
    scan: Scan,
    walk: &mut Walk,
    header_len: usize,
) -> Result<Option<Window<'i>>, IndexError> {
    let truncated = || (scan.corrupt)("truncated entry");
    let path = &mut walk.path;
    let (strip, used) = varint(
        input
            .peek(header_len + 16)
            .map_err(scan.io)?
            .get(header_len..)
            .unwrap_or_default(),
    )
    .ok_or_else(truncated)?;
    let keep = path
        .len()
        .checked_sub(usize::try_from(strip).map_err(|_| truncated())?)
        .ok_or_else(|| (scan.corrupt)("bad path compression"))?;
    let start = header_len + used;
    let mut want = start + 256;
    let end = loop {
        let window = input.peek(want).map_err(scan.io)?;
        if let Some(nul) = window.get(start..).and_then(|rest| rest.find_byte(0)) {
            break start + nul;
        }
        if window.len() < want {
            return Err(truncated());
        }
        want *= 2;
    };
    let entry = input.peek(end + 1).map_err(scan.io)?;
    let suffix = &entry[start..end];
    // The first `keep` bytes are the previous path's.
    let order = compare(suffix, &path[keep..]);
    path.truncate(keep);
    path.extend_from_slice(suffix);
    if path.len() >= MAX_PATH {
        // As in versions 2 and 3, which cannot say how long it is.
        return Ok(None);
    }
    let kept = walk.selection.keeps(&mut walk.cursors, path);
    Ok(Some(Window {
        entry,
        len: end + 1,
        order,
        kept,
    }))
}

/// Versions 2 and 3: the path whole, its length in the flags, the entry padded to eight bytes.
#[inline]
fn stored_path<'i>(
    input: &'i mut Chunked,
    scan: Scan,
    walk: &mut Walk,
    header_len: usize,
    stored: u16,
) -> Result<Option<Window<'i>>, IndexError> {
    let path_len = usize::from(stored & 0x0fff);
    if path_len == MAX_PATH {
        // gix reads such long paths without the padding git writes; leave them to gix.
        return Ok(None);
    }
    let padded = (header_len + path_len + 8) & !7;
    let entry = input.peek(padded).map_err(scan.io)?;
    if entry.len() < padded {
        return Err((scan.corrupt)("truncated entry"));
    }
    let name = &entry[header_len..header_len + path_len];
    if has_nul(name) {
        return Ok(None);
    }
    let order = compare(name, &walk.path);
    let kept = walk.selection.keeps(&mut walk.cursors, name);
    walk.path.clear();
    walk.path.extend_from_slice(name);
    Ok(Some(Window {
        entry,
        len: padded,
        order,
        kept,
    }))
}

/// The entry's flags, with its extended ones: only intent-to-add and skip-worktree may be set,
/// as gix requires.
#[inline]
fn flags(entry: &[u8], stored: u16, header_len: usize, scan: Scan) -> Result<Flags, IndexError> {
    let mut flags = Flags::from_bits_retain(u32::from(stored));
    if header_len > scan.fixed {
        let extended = u16::from_be_bytes([entry[scan.fixed], entry[scan.fixed + 1]]);
        if extended & !0x6000 != 0 {
            return Err((scan.corrupt)("unknown extended entry flags"));
        }
        flags |= Flags::from_bits_retain(u32::from(extended) << 16);
    }
    Ok(flags)
}

/// Copies a kept entry out of the buffer onto `state`.
#[inline]
fn push(
    state: &mut gix::index::State,
    entry: &[u8],
    hash_len: usize,
    flags: Flags,
    mode: Mode,
    path: &[u8],
) {
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

/// Extensions up to the trailer, as gix walks them: the mandatory (lowercase) ones this reader
/// does not model are left to gix (`None`).
#[inline]
fn extensions(input: &mut Chunked, scan: Scan) -> Result<Option<()>, IndexError> {
    loop {
        let left = input.remaining().saturating_sub(scan.hash_len as u64);
        if left < 8 {
            return Ok(Some(()));
        }
        let head = input
            .take(8)
            .map_err(scan.io)?
            .ok_or_else(|| (scan.corrupt)("truncated extension"))?;
        let signature = [head[0], head[1], head[2], head[3]];
        let size = u64::from(be32(&head[4..8]));
        if signature[0].is_ascii_lowercase() {
            return Ok(None);
        }
        if size > left - 8 {
            // gix stops here and then finds the trailer misplaced.
            return Err((scan.corrupt)("an extension runs past the end"));
        }
        input.skip(size).map_err(scan.io)?;
    }
}

/// The trailer: the checksum of the whole file, which must end right after it.
#[inline]
fn trailer(input: &mut Chunked, scan: Scan) -> Result<ObjectId, IndexError> {
    if input.remaining() != scan.hash_len as u64 {
        return Err((scan.corrupt)("the trailer is misplaced"));
    }
    let trailer = input
        .take(scan.hash_len)
        .map_err(scan.io)?
        .ok_or_else(|| (scan.corrupt)("truncated trailer"))?;
    Ok(ObjectId::from_bytes_or_panic(trailer))
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
mod tests;
