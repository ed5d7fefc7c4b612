//! The index's checksum, verified on a second thread while the caller decodes and diffs.
//!
//! The trailer is the SHA-1 of everything before it. It is a check against damage (a torn write,
//! a flipped bit that could mark a modified file skip-worktree), not against an attacker, who
//! could write anything git reads; so it is computed with plain SHA-1 (SHA-NI where the CPU has
//! it), like git's own checksums of files it wrote, rather than gix's collision-detecting SHA-1,
//! which costs about half as much again (see docs/performance.md).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use gix::ObjectId;
use sha1::Digest;

use super::IndexError;

/// What the verifying thread found.
pub(super) enum Checksum {
    /// No index file.
    Missing,
    /// A trailer of zeros: the index was written with `index.skipHash`; there is nothing to check.
    Unverifiable,
    /// A trailer that matches the file's content.
    Verified(ObjectId),
}

/// The pending check of an index file.
pub(in crate::git) struct IndexVerification {
    thread: JoinHandle<Result<Checksum, IndexError>>,
}

impl IndexVerification {
    /// Starts verifying the index at `path` (of the repository whose git directory is `git_dir`).
    pub(super) fn start(path: PathBuf, kind: gix::hash::Kind, git_dir: &Path) -> IndexVerification {
        // A split index keeps most entries in a shared file the trailer does not cover; there
        // this thread does gix's full, verifying load instead of hashing one file.
        let split = has_shared_index(git_dir);
        let thread = std::thread::spawn(move || {
            if split || kind != gix::hash::Kind::Sha1 {
                verify_with_gix(&path, kind)
            } else {
                verify_trailer(&path)
            }
        });
        IndexVerification { thread }
    }

    /// What the thread found, once it is done.
    pub(super) fn seen(self) -> Result<Checksum, IndexError> {
        self.thread
            .join()
            .unwrap_or_else(|_| Err(IndexError::VerifierPanicked))
    }
}

fn has_shared_index(git_dir: &Path) -> bool {
    std::fs::read_dir(git_dir).is_ok_and(|entries| {
        entries.filter_map(|e| e.ok()).any(|e| {
            e.file_name()
                .as_encoded_bytes()
                .starts_with(b"sharedindex.")
        })
    })
}

/// Hashes everything but the trailer and compares it with the trailer, as `git fsck` would.
fn verify_trailer(path: &Path) -> Result<Checksum, IndexError> {
    let io = |source: std::io::Error| IndexError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = match crate::files::open_regular(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Checksum::Missing),
        Err(err) => return Err(io(err)),
    };
    let len = file.metadata().map_err(io)?.len();
    const TRAILER: u64 = 20;
    if len < TRAILER {
        return Err(IndexError::Corrupt {
            path: path.to_path_buf(),
            problem: "it is shorter than its checksum".into(),
        });
    }
    let mut hasher = sha1::Sha1::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut left = len - TRAILER;
    while left > 0 {
        let chunk = &mut buf[..left.min(1 << 16) as usize];
        file.read_exact(chunk).map_err(io)?;
        hasher.update(&*chunk);
        left -= chunk.len() as u64;
    }
    let mut trailer = [0u8; TRAILER as usize];
    file.read_exact(&mut trailer).map_err(io)?;
    let expected = ObjectId::from_bytes_or_panic(&trailer);
    if expected.is_null() {
        return Ok(Checksum::Unverifiable);
    }
    let actual = ObjectId::from_bytes_or_panic(hasher.finalize().as_slice());
    if actual != expected {
        return Err(IndexError::Checksum {
            path: path.to_path_buf(),
            expected,
            actual,
        });
    }
    Ok(Checksum::Verified(expected))
}

fn verify_with_gix(path: &Path, kind: gix::hash::Kind) -> Result<Checksum, IndexError> {
    if !path.exists() {
        return Ok(Checksum::Missing);
    }
    let file = gix::index::File::at(path, kind, false, Default::default()).map_err(|source| {
        IndexError::Decode {
            path: path.to_path_buf(),
            source: Box::new(source),
        }
    })?;
    Ok(match file.checksum() {
        Some(id) => Checksum::Verified(id),
        None => Checksum::Unverifiable,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_sha1_is_gix_sha1() {
        let data: Vec<u8> = (0..100_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let ours = sha1::Sha1::digest(&data);
        let mut theirs = gix::hash::hasher(gix::hash::Kind::Sha1);
        theirs.update(&data);
        assert_eq!(ours.as_slice(), theirs.try_finalize().unwrap().as_slice());
    }
}
