//! Fuzzing the git index readers through the product. git-baton decodes the index itself for
//! scoped diffs (`src/git/diff/index/`, private) and through gix otherwise, and verifies the
//! checksum on another thread; the only public way in is the binary. So each seed is a
//! repository in which real git wrote an index of one kind (versions 2, 3 and 4, a cache tree,
//! an untracked cache, resolve-undo and conflict entries, a split and a sparse index, no
//! checksum, end-of-index entries); each case writes a mutated copy of it over `.git/index` and
//! runs `git baton verify` with a plan whose targets take the hand-written scoped reader and
//! with one whose globs take gix's.
//!
//! Properties: git-baton never panics, hangs or dies of a signal; it exits 0 or 1 (a verdict)
//! or 2 with an error that names the index file; and an index whose bytes changed while its
//! checksum did not is always refused — a damaged index must never produce a verdict. Each
//! case also rewrites the checksum (or zeroes it, as `index.skipHash` does) in a third of the
//! cases, so that mutations get past the checksum to the decoders.

use std::path::Path;
use std::time::Duration;

use proptest::prelude::*;

use super::mutate::{Case, binary_mutation, case};
use super::{Verdict, cases, fuzz, shown};
use crate::support::{Run, TestRepo};

/// One kind of index, as real git wrote it, in its own repository.
struct Seed {
    name: &'static str,
    repo: TestRepo,
    index: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Checksum {
    /// The trailer the seed had: any change of the bytes before it is damage.
    Stale,
    /// The SHA-1 of the mutated bytes: only the decoders can tell that something is wrong.
    Recomputed,
    /// All zeros, as git writes with `index.skipHash`: nothing to verify.
    Zeroed,
}

const HASH_LEN: usize = 20;

const SCOPED_PLAN: &str = "---\ntargets: [docs/a.md, docs/sub/, src/x/y.rs]\n---\n";
const GLOB_PLAN: &str = "---\ntargets: [\"*.md\", \"**/*.rs\"]\n---\n";

#[test]
fn fuzz_git_index() {
    let seeds = seeds();
    let indexes: Vec<Vec<u8>> = seeds.iter().map(|s| s.index.clone()).collect();
    for seed in &seeds {
        eprintln!(
            "fuzz index: seed {:<22} version {}, {} bytes",
            seed.name,
            seed.index[7],
            seed.index.len()
        );
    }
    let checksum = prop_oneof![
        Just(Checksum::Stale),
        Just(Checksum::Recomputed),
        Just(Checksum::Zeroed)
    ];
    // Every case runs the binary twice: a quarter of the inputs of the text targets.
    let cases = (cases() / 4).max(8);
    fuzz(
        "index",
        seeds.len(),
        (case(binary_mutation(), 4), checksum),
        cases,
        |(case, checksum): &(Case, Checksum)| {
            let seed = &seeds[case.seed_index(seeds.len())];
            let mut bytes = case.apply(&indexes);
            let changed = bytes != seed.index;
            seal(&mut bytes, *checksum);
            check(seed, &bytes, *checksum == Checksum::Stale && changed).map_err(|why| {
                format!(
                    "seed {}, checksum {checksum:?}: {why}\nindex ({} bytes): {}",
                    seed.name,
                    bytes.len(),
                    shown(&bytes)
                )
            })
        },
    );
}

/// Writes the trailer `checksum` asks for.
pub(super) fn seal(bytes: &mut [u8], checksum: Checksum) {
    if bytes.len() < HASH_LEN {
        return;
    }
    let body = bytes.len() - HASH_LEN;
    match checksum {
        Checksum::Stale => {}
        Checksum::Zeroed => bytes[body..].fill(0),
        Checksum::Recomputed => {
            let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
            hasher.update(&bytes[..body]);
            let id = hasher.try_finalize().expect("SHA-1 of a buffer");
            bytes[body..].copy_from_slice(id.as_bytes());
        }
    }
}

fn check(seed: &Seed, bytes: &[u8], damaged: bool) -> Result<Verdict, String> {
    let index = seed.repo.path(".git/index");
    std::fs::write(&index, bytes).map_err(|e| format!("cannot write {}: {e}", index.display()))?;
    // A stale trailer of zeros is no checksum at all: nothing says the bytes are damaged.
    let damaged = damaged && bytes.len() >= HASH_LEN && bytes[bytes.len() - HASH_LEN..] != [0; 20];
    let mut verdict = Verdict::Accepted;
    for plan in ["plans/scoped.md", "plans/glob.md"] {
        let run = verify(&seed.repo, plan);
        let refused = match run.code {
            0 | 1 => false,
            2 => true,
            _ => return Err(format!("`verify {plan}` did not exit 0, 1 or 2:\n{run}")),
        };
        if run.stderr.contains("panicked") {
            return Err(format!("`verify {plan}` panicked:\n{run}"));
        }
        if refused && !names_the_index(&run.stderr) {
            return Err(format!(
                "`verify {plan}` refused the index without naming it:\n{run}"
            ));
        }
        if damaged && !refused {
            return Err(format!(
                "`verify {plan}` gave a verdict on an index whose checksum does not match:\n{run}"
            ));
        }
        if refused {
            verdict = Verdict::Refused;
        }
    }
    Ok(verdict)
}

/// The error line names `.git/index` or the shared index of a split index.
pub(super) fn names_the_index(stderr: &str) -> bool {
    stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .is_some_and(|l| l.contains("/.git/index") || l.contains("/.git/sharedindex."))
}

pub(super) fn verify(repo: &TestRepo, plan: &str) -> Run {
    let child = repo.baton_spawn(&repo.root, ["verify", plan], &[]);
    repo.baton_wait(child, Duration::from_secs(60))
}

/// The index kinds: each repository has the same files and worktree changes, so that every
/// decoder path has entries to keep, skip, compare and walk.
fn seeds() -> Vec<Seed> {
    let mut seeds = Vec::new();
    let mut add = |name: &'static str, repo: TestRepo, expect: &[&[u8]]| {
        let index = std::fs::read(repo.path(".git/index")).unwrap();
        for signature in expect {
            assert!(
                index.windows(signature.len()).any(|w| w == *signature),
                "seed {name}: git wrote no {} extension",
                String::from_utf8_lossy(signature)
            );
        }
        // Unmutated, every seed gets a verdict: what the cases find is the mutations' doing.
        for plan in ["plans/scoped.md", "plans/glob.md"] {
            let run = verify(&repo, plan);
            assert!(
                run.code == 0 || run.code == 1,
                "seed {name}, {plan}:\n{run}"
            );
        }
        seeds.push(Seed { name, repo, index });
    };

    let repo = base();
    repo.git(["update-index", "--index-version", "2"]);
    add("v2 with cache tree", repo, &[b"DIRC\0\0\0\x02", b"TREE"]);

    let repo = base();
    // Intent-to-add and skip-worktree are extended flags, which need version 3.
    repo.git(["add", "-N", "docs/new.md"]);
    repo.git(["update-index", "--skip-worktree", "top.txt"]);
    repo.git(["update-index", "--index-version", "3"]);
    add("v3 extended flags", repo, &[b"DIRC\0\0\0\x03"]);

    let repo = base();
    repo.git(["update-index", "--index-version", "4"]);
    add("v4 prefix-compressed", repo, &[b"DIRC\0\0\0\x04"]);

    let repo = base();
    repo.git(["config", "core.untrackedCache", "true"]);
    repo.git(["update-index", "--index-version", "4", "--untracked-cache"]);
    repo.git(["status", "--porcelain"]);
    add("v4 untracked cache", repo, &[b"DIRC\0\0\0\x04", b"UNTR"]);

    let repo = base();
    conflict(&repo);
    repo.write("docs/b.md", "# B\n\nresolved\n");
    repo.git(["add", "docs/b.md"]);
    add("resolve-undo", repo, &[b"REUC"]);

    let repo = base();
    conflict(&repo);
    add("unresolved conflict", repo, &[]);

    let repo = base();
    repo.git(["update-index", "--split-index"]);
    repo.write("docs/a.md", "# A\n\nstaged after the split\n");
    repo.git(["add", "docs/a.md"]);
    add("split index", repo, &[b"link"]);

    let repo = base();
    repo.git(SPARSE_INDEX);
    add("sparse index", repo, &[b"sdir"]);

    let repo = base();
    repo.git(["config", "index.skipHash", "true"]);
    repo.git(["update-index", "--force-write-index"]);
    add("skipHash (no checksum)", repo, &[]);

    let repo = base();
    repo.git(["config", "index.recordEndOfIndexEntries", "true"]);
    repo.git(["config", "index.recordOffsetTable", "true"]);
    repo.git(["config", "index.threads", "2"]);
    repo.git(["update-index", "--force-write-index"]);
    add("end of index entries", repo, &[b"EOIE"]);

    let skip = &seeds
        .iter()
        .find(|s| s.name.starts_with("skipHash"))
        .unwrap()
        .index;
    assert_eq!(
        skip[skip.len() - HASH_LEN..],
        [0; HASH_LEN],
        "git ignored index.skipHash"
    );
    seeds
}

/// `git sparse-checkout set` for a sparse index of the cones `docs` and `plans`.
pub(super) const SPARSE_INDEX: [&str; 6] = [
    "sparse-checkout",
    "set",
    "--cone",
    "--sparse-index",
    "docs",
    "plans",
];

/// Files in nested directories, a commit, then changes of every kind in the worktree.
pub(super) fn base() -> TestRepo {
    let repo = TestRepo::new();
    for (path, content) in [
        ("docs/a.md", "# A\n"),
        ("docs/b.md", "# B\n"),
        ("docs/sub/c.md", "# C\n"),
        ("docs/sub/d.md", "# D\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("src/x/y.rs", "// y\n"),
        ("src/x/z.rs", "// z\n"),
        ("top.txt", "top\n"),
        (".gitignore", "*.log\n"),
        ("plans/scoped.md", SCOPED_PLAN),
        ("plans/glob.md", GLOB_PLAN),
    ] {
        repo.write(path, content);
    }
    repo.commit_all("base");
    repo.write("docs/a.md", "# A\n\nchanged\n");
    repo.write("docs/new.md", "new\n");
    repo.write("debug.log", "ignored\n");
    std::fs::remove_file(repo.path("src/x/z.rs")).unwrap();
    repo
}

/// An unresolved merge conflict in `docs/b.md`.
fn conflict(repo: &TestRepo) {
    repo.git(["checkout", "-q", "-b", "side"]);
    repo.write("docs/b.md", "# B\n\nside\n");
    repo.git(["commit", "-q", "-am", "side"]);
    repo.git(["checkout", "-q", "main"]);
    repo.write("docs/b.md", "# B\n\nmain\n");
    repo.git(["commit", "-q", "-am", "main"]);
    let merge = repo.git_output(&repo.root, ["merge", "-q", "side"]);
    assert!(!merge.status.success(), "the merge did not conflict");
    assert!(Path::new(&repo.path(".git/MERGE_HEAD")).exists());
}
