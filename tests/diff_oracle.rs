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
}

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
    ]
}

/// A repository with every path committed at `base`, so operations modify as well as add.
fn seeded() -> TestRepo {
    let repo = TestRepo::new();
    for (key, value) in [
        ("core.autocrlf", "false"),
        ("core.fileMode", "true"),
        ("core.symlinks", "true"),
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

fn apply(repo: &TestRepo, op: &Op) {
    let root = repo.root.clone();
    let git = |args: &[&str]| drop(repo.git_output(&root, args));
    match *op {
        Op::Write(p, c) => {
            remove(&repo.path(PATHS[p]));
            repo.write(PATHS[p], CONTENTS[c]);
        }
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
                remove(&repo.path(PATHS[b]));
                std::fs::create_dir_all(repo.path(PATHS[b]).parent().unwrap()).unwrap();
                std::fs::rename(repo.path(PATHS[a]), repo.path(PATHS[b])).unwrap();
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
            remove(&path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(PATHS[target], &path).unwrap();
        }
        Op::RestoreFromBase(p) => {
            remove(&repo.path(PATHS[p]));
            git(&["checkout", "-q", "base", "--", PATHS[p]]);
        }
        Op::Ignore(i) => repo.write(".gitignore", IGNORES[i]),
        Op::Attributes(i) => repo.write(".gitattributes", ATTRIBUTES[i]),
        Op::IgnoredFile(i) => repo.write(&format!("dir/ignored{i}.log"), "ignored\n"),
        Op::UntrackedDir(i) => repo.write(&format!("fresh{i}/inner/file.txt"), "untracked\n"),
    }
}

fn check(repo: &TestRepo, ops: &[Op]) {
    let ours = Repo::discover(&repo.root).unwrap();
    let base = ours.resolve_commit("base").unwrap();
    let expected = repo.oracle(&repo.root, "base");
    let got = ours.worktree_changes(base, &Scope::All).unwrap();
    assert_eq!(got, expected, "full diff differs from git after {ops:#?}");

    // Scoped: each prefix alone must give exactly git's paths within it.
    for prefix in ["dir", "a.txt", "new", "ünï", "fresh0", "line\nbreak.txt"] {
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
