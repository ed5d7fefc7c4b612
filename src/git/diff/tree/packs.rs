//! Tree objects read straight from the repository's packs, for the tree diff.
//!
//! Two versions of a tree are usually stored as one whole object and one delta against it. gix
//! inflates a delta's base from the pack every time it resolves the delta, even when the same base
//! was read a moment earlier (its cache only holds the results of delta chains), so a diff of two
//! such trees inflated the whole one twice. Here the last whole trees read are kept, and a delta
//! whose base is one of them is applied to it: one inflation of the base and one of the small
//! delta. Everything else — a longer chain, a base not read just before, an object in no pack of
//! the repository's own (loose, in an alternate), a pack that cannot be opened — is left to gix,
//! which answers as it always did.

use gix::odb::pack::data::entry::Header;

/// How many whole trees are kept for the deltas that follow.
const RECENT: usize = 4;

/// Above this many packs, none is opened here.
const MAX_PACKS: usize = 64;

/// The repository's packs, opened once per reader.
pub(in crate::git) struct Packs {
    bundles: Vec<gix::odb::pack::Bundle>,
    inflate: gix::zlib::Inflate,
    /// The last whole trees read: (bundle, pack offset, content), the newest last.
    recent: Vec<(usize, u64, Vec<u8>)>,
    delta: Vec<u8>,
}

impl Packs {
    /// Opens every pack of the object directory at `objects`; packs that cannot be opened are
    /// left to gix.
    pub fn open(objects: &std::path::Path, hash: gix::hash::Kind) -> Packs {
        let mut bundles = Vec::new();
        let indexes: Vec<std::path::PathBuf> = std::fs::read_dir(objects.join("pack"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|e| e == "idx"))
            .collect();
        // Opening a pack costs a few system calls; a repository with very many (never repacked)
        // is left to gix, which opens them as it needs them.
        if indexes.len() <= MAX_PACKS {
            bundles.extend(
                indexes
                    .iter()
                    .filter_map(|path| gix::odb::pack::Bundle::at(path, hash).ok()),
            );
        }
        Packs {
            bundles,
            inflate: gix::zlib::Inflate::default(),
            recent: Vec::new(),
            delta: Vec::new(),
        }
    }

    /// Reads the tree `id` into `out` if it is a whole tree in a pack, or a delta against a tree
    /// read just before; `false` leaves it to gix (`out` is then unspecified).
    pub fn read_tree(&mut self, id: &gix::oid, out: &mut Vec<u8>) -> bool {
        let Some((at, offset)) = self.bundles.iter().enumerate().find_map(|(at, bundle)| {
            let index = bundle.index.lookup(id)?;
            Some((at, bundle.index.pack_offset_at_index(index)))
        }) else {
            return false;
        };
        let pack = &self.bundles[at].pack;
        let Ok(entry) = pack.entry(offset) else {
            return false;
        };
        let Ok(size) = usize::try_from(entry.decompressed_size) else {
            return false;
        };
        match entry.header {
            Header::Tree => {
                out.clear();
                out.resize(size, 0);
                if pack
                    .decompress_entry(&entry, &mut self.inflate, out)
                    .is_err()
                {
                    return false;
                }
                if self.recent.len() == RECENT {
                    self.recent.remove(0);
                }
                self.recent.push((at, offset, out.clone()));
                true
            }
            Header::OfsDelta { base_distance } => {
                let Some(base_offset) = entry.checked_base_pack_offset(base_distance) else {
                    return false;
                };
                let Some((_, _, base)) = self
                    .recent
                    .iter()
                    .find(|(b, o, _)| *b == at && *o == base_offset)
                else {
                    return false;
                };
                self.delta.clear();
                self.delta.resize(size, 0);
                if pack
                    .decompress_entry(&entry, &mut self.inflate, &mut self.delta)
                    .is_err()
                {
                    return false;
                }
                apply(base, &self.delta, out).is_some()
            }
            _ => false,
        }
    }
}

/// The pack's delta format: the base's size and the result's size (little-endian base-128), then
/// instructions that copy a range of the base or insert the bytes that follow them. `None` for a
/// delta that does not fit its base.
fn apply(base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let mut at = 0;
    let mut size = || {
        let mut value = 0u64;
        let mut shift = 0;
        loop {
            let byte = *delta.get(at)?;
            at += 1;
            value |= u64::from(byte & 0x7f).checked_shl(shift)?;
            shift += 7;
            if byte & 0x80 == 0 {
                return usize::try_from(value).ok();
            }
        }
    };
    let base_size = size()?;
    let result_size = size()?;
    if base_size != base.len() {
        return None;
    }
    out.clear();
    out.reserve(result_size);
    while let Some(&op) = delta.get(at) {
        at += 1;
        if op & 0x80 != 0 {
            // Copy: which of 4 offset bytes and 3 size bytes follow is in the op's low bits.
            let mut field = |bits: u8, first: u32| -> Option<usize> {
                let mut value = 0usize;
                for i in 0..bits {
                    if op & (1 << (first + u32::from(i))) != 0 {
                        value |= usize::from(*delta.get(at)?) << (8 * i);
                        at += 1;
                    }
                }
                Some(value)
            };
            let offset = field(4, 0)?;
            let len = match field(3, 4)? {
                0 => 0x10000,
                len => len,
            };
            out.extend_from_slice(base.get(offset..offset.checked_add(len)?)?);
        } else if op != 0 {
            let len = usize::from(op);
            out.extend_from_slice(delta.get(at..at + len)?);
            at += len;
        } else {
            return None;
        }
    }
    (out.len() == result_size).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delta_copies_and_inserts() {
        let base = b"0123456789";
        // base size 10, result size 7; copy offset 2 size 3; insert "ab"; copy offset 8 size 2
        let delta = [
            10,
            7,
            0x80 | 0x01 | 0x10,
            2,
            3,
            2,
            b'a',
            b'b',
            0x80 | 0x01 | 0x10,
            8,
            2,
        ];
        let mut out = Vec::new();
        assert_eq!(apply(base, &delta, &mut out), Some(()));
        assert_eq!(out, b"234ab89");
    }

    #[test]
    fn a_delta_that_does_not_fit_its_base_is_refused() {
        let mut out = Vec::new();
        // wrong base size
        assert_eq!(apply(b"0123", &[5, 1, 1, b'x'], &mut out), None);
        // copy beyond the base
        assert_eq!(
            apply(b"0123", &[4, 3, 0x80 | 0x01 | 0x10, 2, 3], &mut out),
            None
        );
        // result size not reached
        assert_eq!(apply(b"0123", &[4, 3, 1, b'x'], &mut out), None);
        // reserved op 0
        assert_eq!(apply(b"0123", &[4, 1, 0], &mut out), None);
    }
}
