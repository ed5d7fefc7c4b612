//! Differential tests of the cumulative diff: git itself is the oracle.
//!
//! Random sequences of repository operations are applied to a real repository with real git, and
//! after each sequence `Repo::worktree_changes` must equal `git diff --no-renames --name-only
//! base` ∪ `git ls-files --others --exclude-standard`, both for the whole repository and scoped
//! to prefixes. The number of cases is `PROPTEST_CASES` (default below).

use git_baton::git::{Repo, Scope};
use proptest::prelude::*;

use crate::support::TestRepo;

/// Paths the operations pick from: spaces, non-ASCII, a newline, nesting, a fresh directory.
const PATHS: &[&str] = &[
    "a.txt",
    "b.sh",
    "sp ace.txt",
    "ünï/cödé.md",
    "dir/x.txt",
    "dir/sub/z.txt",
    "new/deep/n.txt",
    "line\nbreak.txt",
    "crlf.txt",
    "id.txt",
];
const CONTENTS: &[&str] = &["one\n", "two\nlines\n", "one\r\n", "$Id$\nident\n", "", "x"];
const IGNORES: &[&str] = &["*.log\n", "*.log\nnew/\n", "*.log\ndir/sub/\n", ""];
const ATTRIBUTES: &[&str] = &[
    "",
    "*.txt text eol=crlf\n",
    "id.txt ident\n",
    "* text=auto\n",
    "crlf.txt -text\n",
];

#[derive(Debug, Clone)]
enum Op {
    Write(usize, usize),
    Delete(usize),
    Stage(usize),
    StageAll,
    Unstage(usize),
    RmCached(usize),
    Commit,
    Rename(usize, usize),
    Chmod(usize),
    Symlink(usize, usize),
    RestoreFromBase(usize),
    Ignore(usize),
    Attributes(usize),
    IgnoredFile(usize),
    UntrackedDir(usize),
    IndexVersion(u8),
    IntentToAdd(usize),
    SkipWorktree(usize),
    AssumeUnchanged(usize),
    ReplaceWithDir(usize),
    SymlinkDir(usize),
    NestedRepo(usize),
}

/// Directories replaced by a symlink to another directory (target relative to the link).
const SYMLINKED_DIRS: &[(&str, &str)] = &[
    ("dir", "ünï"),
    ("dir/sub", "../new"),
    ("new", "dir"),
    ("ünï", "new/deep"),
];

/// Where a nested repository appears: inside a tracked directory, and as an untracked one.
const NESTED_REPOS: &[&str] = &["dir/nested", "fresh1/repo", "ünï"];

fn op() -> impl Strategy<Value = Op> {
    let p = 0..PATHS.len();
    prop_oneof![
        4 => (p.clone(), 0..CONTENTS.len()).prop_map(|(a, b)| Op::Write(a, b)),
        1 => p.clone().prop_map(Op::Delete),
        2 => p.clone().prop_map(Op::Stage),
        1 => Just(Op::StageAll),
        1 => p.clone().prop_map(Op::Unstage),
        1 => p.clone().prop_map(Op::RmCached),
        2 => Just(Op::Commit),
        1 => (p.clone(), p.clone()).prop_map(|(a, b)| Op::Rename(a, b)),
        1 => p.clone().prop_map(Op::Chmod),
        1 => (p.clone(), p.clone()).prop_map(|(a, b)| Op::Symlink(a, b)),
        2 => p.clone().prop_map(Op::RestoreFromBase),
        1 => (0..IGNORES.len()).prop_map(Op::Ignore),
        1 => (0..ATTRIBUTES.len()).prop_map(Op::Attributes),
        1 => (0..3usize).prop_map(Op::IgnoredFile),
        1 => (0..3usize).prop_map(Op::UntrackedDir),
        1 => (2..=4u8).prop_map(Op::IndexVersion),
        1 => p.clone().prop_map(Op::IntentToAdd),
        1 => p.clone().prop_map(Op::SkipWorktree),
        1 => p.clone().prop_map(Op::AssumeUnchanged),
        1 => p.clone().prop_map(Op::ReplaceWithDir),
        1 => (0..SYMLINKED_DIRS.len()).prop_map(Op::SymlinkDir),
        1 => (0..NESTED_REPOS.len()).prop_map(Op::NestedRepo),
    ]
}

/// A repository with every path committed at `base`, so operations modify as well as add.
fn seeded() -> TestRepo {
    // Every other repository writes index version 4 (prefix-compressed paths), which the scoped
    // index reader parses itself.
    static SEEDED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let index_version = if SEEDED
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        .is_multiple_of(2)
    {
        "2"
    } else {
        "4"
    };
    let repo = TestRepo::new();
    for (key, value) in [
        ("core.autocrlf", "false"),
        ("core.fileMode", "true"),
        ("core.symlinks", "true"),
        ("index.version", index_version),
    ] {
        repo.git(["config", key, value]);
    }
    for (i, path) in PATHS.iter().enumerate() {
        repo.write(path, &format!("base content {i}\n"));
    }
    repo.write(".gitignore", IGNORES[0]);
    repo.commit_all("base");
    repo.git(["tag", "base"]);
    repo
}

fn remove(path: &std::path::Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => drop(std::fs::remove_dir_all(path)),
        Ok(_) => drop(std::fs::remove_file(path)),
        Err(_) => {}
    }
}

/// Makes every ancestor of `rel` a real directory, removing a file or symlink in the way.
fn parents(repo: &TestRepo, rel: &str) {
    let mut at = repo.root.clone();
    let components: Vec<&str> = rel.split('/').collect();
    for component in &components[..components.len() - 1] {
        at.push(component);
        if at.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
            remove(&at);
        }
    }
    std::fs::create_dir_all(at).unwrap();
}

/// Writes `rel`, whatever stood in the way.
fn put(repo: &TestRepo, rel: &str, content: &str) {
    parents(repo, rel);
    remove(&repo.path(rel));
    std::fs::write(repo.path(rel), content).unwrap();
}

fn apply(repo: &TestRepo, op: &Op) {
    let root = repo.root.clone();
    let git = |args: &[&str]| drop(repo.git_output(&root, args));
    match *op {
        Op::Write(p, c) => put(repo, PATHS[p], CONTENTS[c]),
        Op::Delete(p) => remove(&repo.path(PATHS[p])),
        Op::Stage(p) => git(&["add", "-A", "--", PATHS[p]]),
        Op::StageAll => git(&["add", "-A"]),
        Op::Unstage(p) => git(&["reset", "-q", "--", PATHS[p]]),
        Op::RmCached(p) => git(&[
            "rm",
            "-q",
            "-r",
            "--cached",
            "--ignore-unmatch",
            "--",
            PATHS[p],
        ]),
        Op::Commit => git(&["commit", "-q", "--allow-empty", "-m", "step"]),
        Op::Rename(a, b) if a != b => {
            if repo.path(PATHS[a]).symlink_metadata().is_ok() {
                parents(repo, PATHS[b]);
                remove(&repo.path(PATHS[b]));
                drop(std::fs::rename(repo.path(PATHS[a]), repo.path(PATHS[b])));
            }
        }
        Op::Rename(..) => {}
        Op::Chmod(p) => {
            use std::os::unix::fs::PermissionsExt;
            let path = repo.path(PATHS[p]);
            if let Ok(meta) = path.symlink_metadata()
                && meta.is_file()
            {
                let mode = meta.permissions().mode() ^ 0o111;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            }
        }
        Op::Symlink(p, target) => {
            let path = repo.path(PATHS[p]);
            parents(repo, PATHS[p]);
            remove(&path);
            std::os::unix::fs::symlink(PATHS[target], &path).unwrap();
        }
        Op::RestoreFromBase(p) => {
            remove(&repo.path(PATHS[p]));
            git(&["checkout", "-q", "base", "--", PATHS[p]]);
        }
        Op::Ignore(i) => put(repo, ".gitignore", IGNORES[i]),
        Op::Attributes(i) => put(repo, ".gitattributes", ATTRIBUTES[i]),
        Op::IgnoredFile(i) => put(repo, &format!("dir/ignored{i}.log"), "ignored\n"),
        Op::UntrackedDir(i) => put(repo, &format!("fresh{i}/inner/file.txt"), "untracked\n"),
        Op::IndexVersion(v) => git(&["update-index", "--index-version", &v.to_string()]),
        Op::IntentToAdd(p) => git(&["add", "-N", "--", PATHS[p]]),
        Op::SkipWorktree(p) => git(&["update-index", "--skip-worktree", "--", PATHS[p]]),
        Op::AssumeUnchanged(p) => git(&["update-index", "--assume-unchanged", "--", PATHS[p]]),
        Op::ReplaceWithDir(p) => {
            if repo
                .path(PATHS[p])
                .symlink_metadata()
                .is_ok_and(|m| !m.is_dir())
            {
                remove(&repo.path(PATHS[p]));
            }
            put(
                repo,
                &format!("{}/inner.txt", PATHS[p]),
                "now a directory\n",
            );
        }
        Op::SymlinkDir(i) => {
            let (link, target) = SYMLINKED_DIRS[i];
            let path = repo.path(link);
            parents(repo, link);
            remove(&path);
            std::os::unix::fs::symlink(target, &path).unwrap();
        }
        Op::NestedRepo(i) => {
            let dir = repo.path(NESTED_REPOS[i]);
            if dir.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
                remove(&dir);
            }
            put(repo, &format!("{}/inside.txt", NESTED_REPOS[i]), "nested\n");
            // With a commit, so that `git add -A` can record it as a gitlink.
            for args in [
                &["init", "-q"][..],
                &["add", "inside.txt"],
                &["commit", "-q", "-m", "nested"],
            ] {
                drop(repo.git_output(&dir, args));
            }
        }
    }
}

fn check(repo: &TestRepo, ops: &[Op]) {
    let ours = Repo::discover(&repo.root).unwrap();
    let base = ours.resolve_commit("base").unwrap();
    let expected = repo.oracle(&repo.root, "base");
    let got = ours.worktree_changes(base, &Scope::All).unwrap();
    assert_eq!(got, expected, "full diff differs from git after {ops:#?}");

    // Scoped: each prefix alone must give exactly git's paths within it.
    for prefix in [
        "dir",
        "a.txt",
        "new",
        "ünï",
        "fresh0",
        "line\nbreak.txt",
        "dir/sub/z.txt",
        "fresh0/inner",
        "fresh1/repo/inside.txt",
        "a.txt/inner.txt",
        "dir/nested",
        "new/deep/n.txt",
    ] {
        let scope = Scope::prefixes([prefix]);
        let want: Vec<String> = expected
            .iter()
            .filter(|p| scope.contains(p))
            .cloned()
            .collect();
        let got = ours.worktree_changes(base, &scope).unwrap();
        assert_eq!(
            got, want,
            "scoped diff ({prefix}) differs from git after {ops:#?}"
        );
    }
    let scope = Scope::prefixes(["b.sh", "dir/x.txt", "id.txt", "new/deep", "sp ace.txt"]);
    let want: Vec<String> = expected
        .iter()
        .filter(|p| scope.contains(p))
        .cloned()
        .collect();
    assert_eq!(
        ours.worktree_changes(base, &scope).unwrap(),
        want,
        "scoped diff ({scope:?}) differs from git after {ops:#?}"
    );
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn cumulative_diff_equals_git(ops in proptest::collection::vec(op(), 1..14)) {
        let repo = seeded();
        for op in &ops {
            apply(&repo, op);
        }
        check(&repo, &ops);
        check_tree_vs_tree(&repo, &ops);
    }
}

/// Commits everything and compares the commit-to-commit diff with `git diff --name-only base HEAD`.
fn check_tree_vs_tree(repo: &TestRepo, ops: &[Op]) {
    repo.git(["add", "-A"]);
    repo.git(["commit", "-q", "--allow-empty", "-m", "all"]);
    let out = repo.git([
        "-c",
        "core.quotePath=false",
        "diff",
        "--no-renames",
        "--name-only",
        "-z",
        "base",
        "HEAD",
    ]);
    let expected: Vec<String> = out
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect();
    let ours = Repo::discover(&repo.root).unwrap();
    let (base, head) = (
        ours.resolve_commit("base").unwrap(),
        ours.resolve_commit("HEAD").unwrap(),
    );
    assert_eq!(
        ours.tree_changes(base, head, &Scope::All).unwrap(),
        expected,
        "tree diff differs after {ops:#?}"
    );
    for prefix in ["dir", "a.txt", "new/deep", "ünï"] {
        let scope = Scope::prefixes([prefix]);
        let want: Vec<String> = expected
            .iter()
            .filter(|p| scope.contains(p))
            .cloned()
            .collect();
        let got = ours.tree_changes(base, head, &scope).unwrap();
        assert_eq!(
            got, want,
            "scoped tree diff ({prefix}) differs after {ops:#?}"
        );
    }
}

/// The hard cases named in the design, one by one, so a regression names itself.
#[test]
fn hard_cases_match_git() {
    let repo = seeded();
    // staged, then reverted in the worktree: cancels out
    repo.write("a.txt", "changed\n");
    repo.git(["add", "a.txt"]);
    repo.write("a.txt", "base content 0\n");
    // added, then deleted before commit: nothing
    repo.write("gone.txt", "x\n");
    repo.git(["add", "gone.txt"]);
    std::fs::remove_file(repo.path("gone.txt")).unwrap();
    // mode-only change
    apply(&repo, &Op::Chmod(1));
    // a symlink replacing a file
    apply(&repo, &Op::Symlink(4, 0));
    // a file in a new untracked directory, and an ignored one
    repo.write("brand/new/dir/file.txt", "u\n");
    repo.write("dir/debug.log", "ignored\n");
    // a committed change
    repo.write("id.txt", "committed\n");
    repo.git(["commit", "-q", "-am", "c"]);
    let ours = Repo::discover(&repo.root).unwrap();
    let base = ours.resolve_commit("base").unwrap();
    let got = ours.worktree_changes(base, &Scope::All).unwrap();
    assert_eq!(got, repo.oracle(&repo.root, "base"));
    assert_eq!(
        got,
        ["b.sh", "brand/new/dir/file.txt", "dir/x.txt", "id.txt"]
    );
}

#[test]
fn gitattributes_filters_are_honoured() {
    let repo = seeded();
    repo.write(".gitattributes", "id.txt ident\ncrlf.txt text eol=crlf\n");
    repo.write("id.txt", "$Id$\n");
    repo.write("crlf.txt", "a\nb\n");
    repo.commit_all("attrs");
    repo.git(["tag", "-f", "base"]);
    // Re-checkout expands $Id$ and converts to CRLF; git still sees no change.
    std::fs::remove_file(repo.path("id.txt")).unwrap();
    std::fs::remove_file(repo.path("crlf.txt")).unwrap();
    repo.git(["checkout", "--", "id.txt", "crlf.txt"]);
    assert_ne!(
        std::fs::read_to_string(repo.path("id.txt")).unwrap(),
        "$Id$\n"
    );
    // A staged edit reverted by hand, to force reading through the filters.
    repo.write("crlf.txt", "changed\n");
    repo.git(["add", "crlf.txt"]);
    repo.write("crlf.txt", "a\r\nb\r\n");
    let ours = Repo::discover(&repo.root).unwrap();
    let base = ours.resolve_commit("base").unwrap();
    assert_eq!(
        ours.worktree_changes(base, &Scope::All).unwrap(),
        repo.oracle(&repo.root, "base")
    );
}

#[test]
fn submodule_pointer_change_matches_git() {
    let sub = TestRepo::new();
    sub.write("s.txt", "1\n");
    sub.commit_all("one");
    let repo = seeded();
    repo.git([
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        sub.root.to_str().unwrap(),
        "vendored",
    ]);
    repo.commit_all("add submodule");
    repo.git(["tag", "-f", "base"]);
    let inner = repo.path("vendored");
    std::fs::write(inner.join("s.txt"), "2\n").unwrap();
    repo.git_in(&inner, ["commit", "-q", "-am", "two"]);
    let ours = Repo::discover(&repo.root).unwrap();
    let base = ours.resolve_commit("base").unwrap();
    let got = ours.worktree_changes(base, &Scope::All).unwrap();
    assert_eq!(got, repo.oracle(&repo.root, "base"));
    assert_eq!(got, ["vendored"]);
}

#[test]
fn linked_worktree_sees_its_own_changes() {
    let repo = seeded();
    let wt = repo.tmp().join("linked");
    repo.git([
        "worktree",
        "add",
        "-q",
        "-b",
        "side",
        wt.to_str().unwrap(),
        "base",
    ]);
    std::fs::write(wt.join("a.txt"), "in linked worktree\n").unwrap();
    std::fs::write(wt.join("extra.txt"), "new\n").unwrap();
    repo.write("b.sh", "main worktree only\n");
    let ours = Repo::discover(&wt.join("dir")).unwrap();
    assert_eq!(ours.common_dir().canonicalize().unwrap(), repo.path(".git"));
    let base = ours.resolve_commit("base").unwrap();
    let got = ours.worktree_changes(base, &Scope::All).unwrap();
    assert_eq!(got, repo.oracle(&wt, "base"));
    assert_eq!(got, ["a.txt", "extra.txt"]);
}

/// A file rewritten with content of the same size in the same second as `git add` has a stat
/// that matches its index entry; only the racy-git rule (mtime not older than the index) makes it
/// read. Here its mtime is pinned in the future, so the entry is racy however fast the machine is.
#[test]
fn racily_clean_files_are_read() {
    let repo = seeded();
    let future = (std::time::SystemTime::now() + std::time::Duration::from_secs(100))
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let touch = |path: &str| {
        let status = std::process::Command::new("touch")
            .args(["-m", "-d", &format!("@{future}")])
            .arg(repo.path(path))
            .status()
            .unwrap();
        assert!(status.success());
    };
    // a.txt: same size, different content; b.sh: rewritten with the same content.
    for path in ["a.txt", "b.sh"] {
        touch(path);
    }
    repo.git(["add", "a.txt", "b.sh"]);
    repo.write("a.txt", "base content X\n");
    repo.write("b.sh", "base content 1\n");
    for path in ["a.txt", "b.sh"] {
        touch(path);
    }
    let ours = Repo::discover(&repo.root).unwrap();
    let base = ours.resolve_commit("base").unwrap();
    let expected = repo.oracle(&repo.root, "base");
    assert_eq!(expected, ["a.txt"]);
    assert_eq!(ours.worktree_changes(base, &Scope::All).unwrap(), expected);
    for prefix in ["a.txt", "b.sh"] {
        let scope = Scope::prefixes([prefix]);
        let want: Vec<String> = expected
            .iter()
            .filter(|p| scope.contains(p))
            .cloned()
            .collect();
        assert_eq!(ours.worktree_changes(base, &scope).unwrap(), want);
    }
}

/// An unmerged path is listed when its worktree file differs from the base, as `git diff` does.
#[test]
fn unmerged_paths_compare_the_worktree_with_the_base() {
    let repo = seeded();
    repo.git(["checkout", "-q", "-b", "other"]);
    repo.write("a.txt", "theirs\n");
    repo.write("b.sh", "theirs\n");
    repo.commit_all("other");
    repo.git(["checkout", "-q", "main"]);
    repo.write("a.txt", "ours\n");
    repo.write("b.sh", "ours\n");
    repo.commit_all("ours");
    drop(repo.git_output(&repo.root, ["merge", "-q", "other"]));
    // a.txt back to the base's content, b.sh left with conflict markers.
    repo.write("a.txt", "base content 0\n");
    let ours = Repo::discover(&repo.root).unwrap();
    let base = ours.resolve_commit("base").unwrap();
    let expected = repo.oracle(&repo.root, "base");
    assert_eq!(expected, ["b.sh"]);
    assert_eq!(ours.worktree_changes(base, &Scope::All).unwrap(), expected);
    for prefix in ["a.txt", "b.sh"] {
        let scope = Scope::prefixes([prefix]);
        let want: Vec<String> = expected
            .iter()
            .filter(|p| scope.contains(p))
            .cloned()
            .collect();
        assert_eq!(ours.worktree_changes(base, &scope).unwrap(), want);
    }
}

/// A scope prefix that is a file in the base and a directory now, one behind a symlinked
/// directory, and one inside an untracked nested repository.
#[test]
fn prefixes_whose_path_changed_kind() {
    let repo = seeded();
    std::fs::remove_file(repo.path("a.txt")).unwrap();
    repo.write("a.txt/inner.txt", "directory now\n");
    std::fs::remove_dir_all(repo.path("dir/sub")).unwrap();
    std::os::unix::fs::symlink("../new", repo.path("dir/sub")).unwrap();
    repo.write("nest/file.txt", "in a nested repository\n");
    repo.git_in(&repo.path("nest"), ["init", "-q"]);
    let ours = Repo::discover(&repo.root).unwrap();
    let base = ours.resolve_commit("base").unwrap();
    let expected = repo.oracle(&repo.root, "base");
    assert_eq!(
        expected,
        [
            "a.txt",
            "a.txt/inner.txt",
            "dir/sub",
            "dir/sub/z.txt",
            "nest/"
        ]
    );
    assert_eq!(ours.worktree_changes(base, &Scope::All).unwrap(), expected);
    for prefix in [
        "a.txt",
        "a.txt/inner.txt",
        "dir/sub",
        "dir/sub/z.txt",
        "dir/sub/deep/n.txt",
        "nest",
        "nest/file.txt",
    ] {
        let scope = Scope::prefixes([prefix]);
        let want: Vec<String> = expected
            .iter()
            .filter(|p| scope.contains(p))
            .cloned()
            .collect();
        assert_eq!(
            ours.worktree_changes(base, &scope).unwrap(),
            want,
            "scoped to {prefix}"
        );
    }
}

/// A damaged index is an error, not a different answer: here one byte of an entry's object id,
/// which leaves the file well-formed.
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
        let err = ours.worktree_changes(base, &scope).unwrap_err();
        assert!(err.to_string().contains("checksum"), "{err}");
    }
}
