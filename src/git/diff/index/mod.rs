//! Loading the index for a read-only diff, with its checksum verified off the critical path.
//!
//! `gix` verifies the SHA-1 trailer of the whole index before decoding it, which is most of the
//! cost of loading a large index (git itself does not verify on read). Skipping the check would
//! let a damaged index produce wrong results, so the check is kept but moved: the index is
//! decoded without it on the calling thread while a second thread ([`verify`]) reads the file
//! again and hashes it. The caller finishes its work and then asks [`Loaded::finish`], which
//! fails on a damaged index and tells the caller to start over when the file was replaced between
//! the two reads (git replaces the index by renaming a new file over it, so both reads see whole
//! files; their trailers show whether they saw the same one).
//!
//! A diff scoped to a few path prefixes needs a few entries of a possibly huge index:
//! [`load_scoped`] keeps only those ([`scan`]).

mod scan;
mod verify;

use std::path::PathBuf;

use gix::ObjectId;
use gix::bstr::ByteSlice;

use verify::Checksum;
pub(in crate::git) use verify::IndexVerification;

/// What reading the index can fail with; each names the index file.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("cannot read the index {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the index {} is corrupt: {problem}", .path.display())]
    Corrupt { path: PathBuf, problem: String },
    #[error(
        "the index {} is corrupt: its checksum is {expected}, its content hashes to {actual}",
        .path.display()
    )]
    Checksum {
        path: PathBuf,
        expected: ObjectId,
        actual: ObjectId,
    },
    #[error("cannot decode the index {}: {source}", .path.display())]
    Decode {
        path: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("the index {} was replaced by another process three times while being read; try again", .path.display())]
    Unstable { path: PathBuf },
    #[error("the thread verifying the index panicked")]
    VerifierPanicked,
}

/// An index decoded without its checksum, and the pending check of the file it came from.
pub(in crate::git) struct Loaded {
    pub index: gix::index::File,
    /// The trailer the decoder saw; `None` for all zeros or no file.
    checksum: Option<ObjectId>,
    /// The decoder kept no entries (which is all a missing file can give).
    empty: bool,
    verification: IndexVerification,
}

impl Loaded {
    /// `Ok(true)` when the decoded index is the file that was verified, `Ok(false)` when the file
    /// was replaced in between (the caller should start over), an error when it is damaged.
    pub fn finish(self) -> Result<bool, IndexError> {
        Ok(match self.verification.seen()? {
            Checksum::Missing => self.checksum.is_none() && self.empty,
            Checksum::Unverifiable => self.checksum.is_none(),
            Checksum::Verified(id) => self.checksum == Some(id),
        })
    }
}

/// Starts verifying the index of `repo` on another thread, for a [`load`] or [`load_scoped`]
/// to come.
pub(in crate::git) fn start(repo: &gix::Repository) -> IndexVerification {
    IndexVerification::start(repo.index_path(), repo.object_hash(), repo.git_dir())
}

/// Refuses what git never writes and the diff cannot handle: entries out of (path, stage) order,
/// as git does (the diff finds entries by walking directories in order, and one out of place
/// would be skipped, or trip the walk), and a path with a NUL byte, which no file can have.
fn check_entries(index: &gix::index::File) -> Result<(), IndexError> {
    let corrupt = |problem: String| IndexError::Corrupt {
        path: index.path().to_path_buf(),
        problem,
    };
    index
        .verify_entries()
        .map_err(|err| corrupt(err.to_string()))?;
    // Paths share one buffer (which may also hold dropped ones): search it once.
    if index.path_backing().find_byte(0).is_some()
        && let Some(entry) = index.entries().iter().find(|e| e.path(index).contains(&0))
    {
        return Err(corrupt(format!(
            "the path of entry {:?} has a NUL byte",
            entry.path(index)
        )));
    }
    Ok(())
}

/// Why the index of `repo` is damaged, if its checksum says it is: when a diff fails, this is the
/// cause to report rather than whatever the damage tripped first (gix, for one, may read a split
/// index again itself and report a checksum mismatch without naming the file).
pub(in crate::git) fn damage(repo: &gix::Repository) -> Option<IndexError> {
    start(repo).seen().err()
}

/// Decodes the whole index of `repo` (an empty one if there is none) without verifying its
/// checksum, which `started` (or a new thread) verifies.
pub(in crate::git) fn load(
    repo: &gix::Repository,
    started: Option<IndexVerification>,
) -> Result<Loaded, IndexError> {
    let verification = started.unwrap_or_else(|| start(repo));
    let path = repo.index_path();
    // gix would open a named pipe there and wait for ever; this refuses it without opening.
    if let Err(source) = crate::files::open_regular(&path)
        && source.kind() != std::io::ErrorKind::NotFound
    {
        return Err(IndexError::Io { path, source });
    }
    // One thread: gix's parallel decoder trusts the index's entry offset table (IEOT) and
    // panics on offsets outside the file, which a damaged index can hold; the single-threaded
    // decoder does not use the table. Found by `fuzz_git_index`.
    let options = gix::index::decode::Options {
        thread_limit: Some(1),
        ..Default::default()
    };
    let index = gix::index::File::at_or_default(&path, repo.object_hash(), true, options).map_err(
        |source| IndexError::Decode {
            path: path.clone(),
            source: Box::new(source),
        },
    );
    let index = match index.and_then(|index| check_entries(&index).map(|()| index)) {
        Ok(index) => index,
        // The checksum explains damage best: a decoder meets it only by chance.
        Err(err) => {
            verification.seen()?;
            return Err(err);
        }
    };
    Ok(Loaded {
        checksum: index.checksum(),
        empty: index.entries().is_empty(),
        index,
        verification,
    })
}

/// Like [`load`], but keeps only the entries a diff scoped to `prefixes` (sorted, not nested, no
/// trailing `/`) consults (see [`scan::read`]). `None` when the index uses something the scoped
/// reader leaves to gix: then [`load`] decodes it.
pub(in crate::git) fn load_scoped(
    repo: &gix::Repository,
    prefixes: &[String],
    started: Option<IndexVerification>,
) -> Result<Option<Loaded>, IndexError> {
    let path = repo.index_path();
    let kind = repo.object_hash();
    let verification = started.unwrap_or_else(|| start(repo));
    // The worktree's git directory is the agent's to write: its index could be a named pipe.
    let file = match crate::files::open_regular(&path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            let index = gix::index::File::from_state(gix::index::State::new(kind), path);
            return Ok(Some(Loaded {
                index,
                checksum: None,
                empty: true,
                verification,
            }));
        }
        Err(source) => return Err(IndexError::Io { path, source }),
    };
    let read = scan::read(&path, file, kind, prefixes).and_then(|read| match read {
        Some((state, checksum)) => {
            let index = gix::index::File::from_state(state, path);
            check_entries(&index).map(|()| Some((index, checksum)))
        }
        None => Ok(None),
    });
    match read {
        Ok(Some((index, checksum))) => Ok(Some(Loaded {
            empty: index.entries().is_empty(),
            index,
            checksum,
            verification,
        })),
        // The caller's full load verifies again: the verification is dropped with its thread
        // detached, which only costs the time it still runs.
        Ok(None) => Ok(None),
        Err(err) => {
            verification.seen()?;
            Err(err)
        }
    }
}
