//! The index formats git writes, one by one: split, without a checksum, with an untracked
//! cache, sparse; and damaged indexes, which are errors rather than different answers.

use super::*;

/// Changes on both sides of every index format git writes, so that the entries the scoped reader
/// keeps, the shared index and the extensions all matter.
fn changes_everywhere(repo: &TestRepo) {
    repo.write("a.txt", "changed, unstaged\n");
    repo.write("dir/x.txt", "changed, staged\n");
    repo.git(["add", "dir/x.txt"]);
    repo.write("dir/sub/new.txt", "untracked\n");
    repo.write("fresh0/inner/file.txt", "untracked directory\n");
    repo.write("dir/ignored.log", "ignored\n");
    std::fs::remove_file(repo.path("new/deep/n.txt")).unwrap();
    // Siblings that sort around `/`: a new staged directory beside `s`, whose entries the index
    // puts before those of `s`, a staged change in `s`, an untracked directory beside `dir`.
    repo.write("s-t/main.rs", "new, staged\n");
    repo.write("s/sub/m.rs", "changed, staged\n");
    repo.git(["add", "s-t/main.rs", "s/sub/m.rs"]);
    repo.write("dir-x/y.txt", "untracked beside dir\n");
}

const FORMAT_PREFIXES: &[&str] = &[
    "a.txt", "dir", "dir/sub", "fresh0", "new", "ünï", "s", "s-t", "s.b", "s0", "dir-x", "dir.old",
];

#[test]
fn a_split_index_matches_git() {
    let repo = seeded();
    repo.write("b.sh", "staged before the split\n");
    repo.git(["add", "b.sh"]);
    repo.git(["update-index", "--split-index"]);
    changes_everywhere(&repo);
    assert!(std::fs::read_dir(repo.path(".git")).unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("sharedindex.")
    }));
    let got = matches_git(&repo, &repo.root, FORMAT_PREFIXES);
    assert_eq!(
        got,
        [
            "a.txt",
            "b.sh",
            "dir-x/y.txt",
            "dir/sub/new.txt",
            "dir/x.txt",
            "fresh0/inner/file.txt",
            "new/deep/n.txt",
            "s-t/main.rs",
            "s/sub/m.rs"
        ]
    );
}

#[test]
fn an_index_without_a_checksum_matches_git() {
    let repo = seeded();
    repo.git(["config", "index.skipHash", "true"]);
    changes_everywhere(&repo);
    repo.git(["update-index", "--force-write-index"]);
    let index = std::fs::read(repo.path(".git/index")).unwrap();
    assert!(index[index.len() - 20..].iter().all(|b| *b == 0));
    assert_eq!(matches_git(&repo, &repo.root, FORMAT_PREFIXES).len(), 8);
}

/// The untracked cache records directories' untracked names; git-baton must not be fooled by a
/// cache that no longer matches the worktree.
#[test]
fn an_untracked_cache_matches_git() {
    let repo = seeded();
    repo.git(["config", "core.untrackedCache", "true"]);
    repo.git(["update-index", "--untracked-cache"]);
    changes_everywhere(&repo);
    repo.git(["status", "--porcelain"]);
    // After the cache was written: a new untracked file, and one the cache lists removed.
    repo.write("dir/sub/later.txt", "untracked after the cache\n");
    std::fs::remove_file(repo.path("fresh0/inner/file.txt")).unwrap();
    let got = matches_git(&repo, &repo.root, FORMAT_PREFIXES);
    assert!(got.contains(&"dir/sub/later.txt".to_string()), "{got:?}");
    assert!(!got.iter().any(|p| p.starts_with("fresh0")), "{got:?}");
}

/// A sparse checkout, with a full and with a sparse index: files outside the cones are
/// skip-worktree and absent, and one written there anyway counts like any file (git clears its
/// skip-worktree bit when it reads the index, which the oracle runs after git-baton to catch).
#[test]
fn sparse_checkouts_match_git() {
    for sparse_index in [false, true] {
        let repo = seeded();
        repo.git([
            "config",
            "index.sparse",
            if sparse_index { "true" } else { "false" },
        ]);
        repo.git(["sparse-checkout", "set", "--cone", "dir"]);
        let listed = repo.git(["ls-files", "--sparse"]);
        assert_eq!(listed.contains("new/\n"), sparse_index, "{listed}");
        assert!(!repo.path("new/deep/n.txt").exists());
        repo.write("dir/x.txt", "changed in the cone\n");
        repo.write("dir/sub/new.txt", "untracked in the cone\n");
        repo.write("a.txt", "changed at the top\n");
        repo.write("ünï/cödé.md", "written outside the cones\n");
        // Beside the cone `dir`, and a new directory staged beside `s` outside the cones.
        repo.write("dir-x/y.txt", "untracked beside the cone\n");
        repo.write("s-t/main.rs", "staged outside the cones\n");
        repo.git(["add", "--sparse", "s-t/main.rs"]);
        let got = matches_git(&repo, &repo.root, FORMAT_PREFIXES);
        assert_eq!(
            got,
            [
                "a.txt",
                "dir-x/y.txt",
                "dir/sub/new.txt",
                "dir/x.txt",
                "s-t/main.rs",
                "ünï/cödé.md"
            ],
            "sparse index: {sparse_index}"
        );
    }
}

/// A damaged index is an error, not a different answer, whichever engine reads it: here one byte
/// of an entry's object id, which leaves the file well-formed.
#[test]
fn a_corrupt_index_is_an_error() {
    let repo = seeded();
    let index = repo.path(".git/index");
    let mut bytes = std::fs::read(&index).unwrap();
    // The first entry's object id starts after the 12-byte header and 40 bytes of stat data.
    bytes[12 + 40] ^= 0x01;
    std::fs::write(&index, bytes).unwrap();
    let ours = Repo::discover(&repo.root).unwrap();
    let base = ours.resolve_commit("base").unwrap();
    for scope in [
        Scope::All,
        Scope::prefixes(["a.txt"]),
        Scope::prefixes(["dir"]),
    ] {
        for engine in ENGINES {
            let err = ours
                .worktree_changes_with(base, &scope, engine)
                .unwrap_err();
            assert!(err.to_string().contains("checksum"), "{engine}: {err}");
        }
    }
}

/// Forcing the walk on a repository it does not model is a typed error, never a panic or a
/// silent fallback; the other engines still give git's answer there.
#[test]
fn forcing_the_walk_where_it_does_not_apply_is_an_error() {
    let repo = seeded();
    repo.git(["config", "core.ignoreCase", "true"]);
    repo.write("a.txt", "changed\n");
    let ours = Repo::discover(&repo.root).unwrap();
    let base = ours.resolve_commit("base").unwrap();
    let err = ours
        .worktree_changes_with(base, &Scope::All, DiffEngine::Walk)
        .unwrap_err();
    assert!(
        matches!(
            &err,
            GitError::EngineUnsupported { engine: DiffEngine::Walk, why } if why.contains("core.ignoreCase")
        ),
        "{err:?}"
    );
    let expected = repo.oracle(&repo.root, "base");
    assert_eq!(expected, ["a.txt"]);
    for engine in [DiffEngine::Status, DiffEngine::Auto] {
        assert_eq!(
            ours.worktree_changes_with(base, &Scope::All, engine)
                .unwrap(),
            expected,
            "{engine}"
        );
    }
}

/// Damage the checksum cannot show (an index written without one) is reported as what it is,
/// by the scoped reader as by gix's decoder, naming the index.
#[test]
fn a_damaged_index_says_what_is_damaged() {
    for version in ["2", "4"] {
        let repo = seeded();
        repo.git(["config", "index.skipHash", "true"]);
        repo.git([
            "update-index",
            "--force-write-index",
            "--index-version",
            version,
        ]);
        let index = repo.path(".git/index");
        let mut bytes = std::fs::read(&index).unwrap();
        // The header's entry count, raised past what the file holds.
        let count = u32::from_be_bytes(bytes[8..12].try_into().unwrap()) + 1000;
        bytes[8..12].copy_from_slice(&count.to_be_bytes());
        std::fs::write(&index, bytes).unwrap();
        let ours = Repo::discover(&repo.root).unwrap();
        let base = ours.resolve_commit("base").unwrap();
        let scoped = ours
            .worktree_changes(base, &Scope::prefixes(["dir"]))
            .unwrap_err()
            .to_string();
        let what = if version == "2" {
            "truncated entry"
        } else {
            "bad path compression"
        };
        let said = format!("the index {} is corrupt: {what}", index.display());
        assert_eq!(scoped, said, "version {version}");
        let full = ours
            .worktree_changes(base, &Scope::All)
            .unwrap_err()
            .to_string();
        let said = format!("cannot decode the index {}", index.display());
        assert!(full.starts_with(&said), "version {version}: {full}");
    }
}
