//! Differential tests of the cumulative diff: git itself is the oracle.
//!
//! Random sequences of repository operations are applied to a real repository with real git, and
//! after each sequence `Repo::worktree_changes` must equal `git diff --no-renames --name-only
//! base` ∪ `git ls-files --others --exclude-standard`, both for the whole repository and scoped
//! to prefixes — once per diff engine, each on its own (the walk, gix's status) and for the
//! product's automatic choice. The operations include the index formats git can write: versions
//! 2 to 4, split, sparse, without a checksum, with an untracked cache.
//! The number of cases is `PROPTEST_CASES` (default below).

use git_baton::git::{CommitId, DiffEngine, GitError, Repo, Scope};
use proptest::prelude::*;

use std::path::Path;

use crate::support::TestRepo;

mod history;
mod index_formats;
mod trivial_history;

/// Paths the operations pick from: spaces, non-ASCII, a newline, nesting, a fresh directory,
/// and siblings whose names sort around `/` (`s`, `s-t`, `s.b`, `s0`; `dir`, `dir-x`, `dir.old`):
/// git's index puts `s-t/main.rs` before `s/lib.rs` (`-` < `/`), while a scope lists `s` first.
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
    "s/lib.rs",
    "s/sub/m.rs",
    "s-t/main.rs",
    "s.b/a.md",
    "s0",
    "dir-x/y.txt",
    "dir.old",
];

/// Paths of [`PATHS`] the base does not have, so that writing one makes a new sibling directory.
const ABSENT_AT_BASE: &[&str] = &["s-t/main.rs", "dir-x/y.txt"];

/// Scopes of several prefixes that sort around `/`, as plans with sibling targets give them.
const SIBLING_SCOPES: &[&[&str]] = &[
    &["s", "s-t", "s.b", "s0"],
    &["dir", "dir-x", "dir.old"],
    &["s-t", "s/sub", "s0"],
    &["dir-x/y.txt", "dir/x.txt", "s-t/main.rs", "s/lib.rs"],
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
    SplitIndex(bool),
    SkipHash(bool),
    UntrackedCache(bool),
    Sparse(usize, bool),
    Dense,
    /// `git write-tree`: a cache-tree valid everywhere, which the engine trusts for the index.
    WriteTree,
    /// A new mtime, content and size unchanged: the stat no longer vouches, the content does.
    Touch(usize),
    /// Other content of the same size with the old mtime put back: only the ctime (and the
    /// content) tell, whatever the cache-tree says about the index.
    SameSizeRewrite(usize),
    /// Both paths of a pair whose directories sort around `/` ([`SIBLING_PAIRS`]) written and
    /// staged, so that one scope meets index entries on both sides of the pair.
    StageSiblings(usize, usize),
}

/// Pairs of [`PATHS`] in sibling directories that sort around `/`: the first's directory sorts
/// before the second's in the index (`s-t/` < `s/`), the second's name before the first's in a
/// list of prefixes (`s` < `s-t`).
const SIBLING_PAIRS: &[(usize, usize)] = &[(12, 11), (12, 10), (15, 4), (13, 10), (15, 5)];

/// The cones a sparse checkout keeps (besides the files at the top).
const CONES: &[&[&str]] = &[&["dir"], &["ünï", "new"], &["dir/sub"]];

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
        1 => any::<bool>().prop_map(Op::SplitIndex),
        1 => any::<bool>().prop_map(Op::SkipHash),
        1 => any::<bool>().prop_map(Op::UntrackedCache),
        1 => (0..CONES.len(), any::<bool>()).prop_map(|(c, s)| Op::Sparse(c, s)),
        1 => Just(Op::Dense),
        1 => Just(Op::WriteTree),
        1 => p.clone().prop_map(Op::Touch),
        1 => p.clone().prop_map(Op::SameSizeRewrite),
        2 => (0..SIBLING_PAIRS.len(), 0..CONTENTS.len()).prop_map(|(i, c)| Op::StageSiblings(i, c)),
    ]
}

/// A [`seeded`] repository with a submodule `vendored` (one commit of `s.txt`), `config` set,
/// committed and tagged `base`; the submodule's own repository is returned first, to be kept.
fn with_submodule(config: &[(&str, &str)]) -> (TestRepo, TestRepo) {
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
    for (key, value) in config {
        repo.git(["config", key, value]);
    }
    repo.commit_all("add submodule");
    repo.git(["tag", "-f", "base"]);
    (sub, repo)
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
        if !ABSENT_AT_BASE.contains(path) {
            repo.write(path, &format!("base content {i}\n"));
        }
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
        // git 2.47 corrupts a split index written without a checksum ("BUG: unpack-trees.c") or
        // sparse ("position for replacement exceeds base index size"), so a split index turns
        // both off, and each of them turns a split index off.
        Op::SplitIndex(on) => {
            if on {
                git(&["config", "index.skipHash", "false"]);
                let sparse = repo.git_output(&root, ["config", "--get", "index.sparse"]);
                if String::from_utf8_lossy(&sparse.stdout).trim() == "true" {
                    git(&["config", "index.sparse", "false"]);
                    git(&["sparse-checkout", "reapply"]);
                }
            }
            git(&[
                "update-index",
                "--force-write-index",
                if on {
                    "--split-index"
                } else {
                    "--no-split-index"
                },
            ]);
        }
        Op::SkipHash(on) => {
            git(&[
                "config",
                "index.skipHash",
                if on { "true" } else { "false" },
            ]);
            git(&["update-index", "--force-write-index", "--no-split-index"]);
        }
        Op::UntrackedCache(on) => {
            git(&[
                "config",
                "core.untrackedCache",
                if on { "true" } else { "false" },
            ]);
            if on {
                git(&["update-index", "--untracked-cache"]);
                // `git status` fills the cache (the UNTR extension) and writes it.
                git(&["status", "--porcelain"]);
            } else {
                git(&["update-index", "--no-untracked-cache"]);
            }
        }
        Op::Sparse(cone, sparse_index) => {
            // git 2.47 writes a corrupt sparse index over an intent-to-add entry (the same
            // entry many times; its own `git status` then stops with "BUG: wt-status.c:584"),
            // which git-baton rightly refuses to read: with one, the index stays full.
            let intent_to_add = !repo
                .git_output(&root, ["diff", "--name-only", "--diff-filter=A"])
                .stdout
                .is_empty();
            let sparse_index = sparse_index && !intent_to_add;
            if sparse_index {
                git(&["update-index", "--no-split-index"]);
            }
            git(&[
                "config",
                "index.sparse",
                if sparse_index { "true" } else { "false" },
            ]);
            let mut args = vec!["sparse-checkout", "set", "--cone"];
            args.extend(CONES[cone]);
            git(&args);
        }
        Op::Dense => git(&["sparse-checkout", "disable"]),
        Op::WriteTree => git(&["write-tree"]),
        Op::Touch(p) => set_mtime(&repo.path(PATHS[p]), |_| {
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000)
        }),
        Op::SameSizeRewrite(p) => same_size_rewrite(&repo.path(PATHS[p])),
        Op::StageSiblings(i, c) => {
            let (before, after) = SIBLING_PAIRS[i];
            put(repo, PATHS[before], CONTENTS[c]);
            put(
                repo,
                PATHS[after],
                &format!("sibling of {}\n", PATHS[before]),
            );
            git(&["add", "-A", "--", PATHS[before], PATHS[after]]);
        }
    }
}

/// Sets the mtime of the regular file at `path` (if there is one) to `to(its mtime)`.
fn set_mtime(path: &Path, to: impl FnOnce(std::time::SystemTime) -> std::time::SystemTime) {
    let Ok(meta) = path.symlink_metadata() else {
        return;
    };
    if !meta.is_file() {
        return;
    }
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_modified(to(meta.modified().unwrap())).unwrap();
}

/// Rewrites the regular file at `path` (if there is a non-empty one) with content of the same
/// size, its first byte changed, and puts its old mtime back.
fn same_size_rewrite(path: &Path) {
    let Ok(meta) = path.symlink_metadata() else {
        return;
    };
    if !meta.is_file() {
        return;
    }
    let mut content = std::fs::read(path).unwrap();
    let Some(first) = content.first_mut() else {
        return;
    };
    *first = if *first == b'#' { b'%' } else { b'#' };
    let mtime = meta.modified().unwrap();
    std::fs::write(path, &content).unwrap();
    set_mtime(path, |_| mtime);
}

/// The engines held to git on their own, and the automatic choice between them.
const ENGINES: [DiffEngine; 3] = [DiffEngine::Walk, DiffEngine::Status, DiffEngine::Auto];

/// Every engine's cumulative diff within each scope, computed before git runs: git may rewrite
/// the index as it reads it (refreshed stat data, skip-worktree bits cleared), and git-baton must
/// get git's answer from the index as git left it, not as the oracle fixed it up.
struct Ours {
    results: Vec<(Scope, DiffEngine, Vec<String>)>,
}

impl Ours {
    fn compute(ours: &Repo, base: CommitId, scopes: &[Scope]) -> Ours {
        let mut results = Vec::new();
        for scope in scopes {
            for engine in ENGINES {
                let got = ours
                    .worktree_changes_with(base, scope, engine)
                    .unwrap_or_else(|err| panic!("{engine} engine, {scope:?}: {err}"));
                results.push((scope.clone(), engine, got));
            }
        }
        Ours { results }
    }

    /// Each result must be git's answer (`expected`, the whole repository) within its scope.
    fn assert_git(&self, expected: &[String], context: &dyn std::fmt::Debug) {
        for (scope, engine, got) in &self.results {
            let want = within(expected, scope);
            assert_eq!(
                got, &want,
                "{engine} engine, {scope:?}: differs from git after {context:#?}"
            );
        }
    }
}

fn check(repo: &TestRepo, ops: &[Op]) {
    let ours = Repo::discover(&repo.root).unwrap();
    let base = ours.resolve_commit("base").unwrap();
    // The whole repository, each prefix alone, and several at once.
    let mut scopes = vec![Scope::All];
    scopes.extend(
        [
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
        ]
        .map(|prefix| Scope::prefixes([prefix])),
    );
    scopes.push(Scope::prefixes([
        "b.sh",
        "dir/x.txt",
        "id.txt",
        "new/deep",
        "sp ace.txt",
    ]));
    scopes.extend(SIBLING_SCOPES.iter().map(|list| Scope::prefixes(*list)));
    let got = Ours::compute(&ours, base, &scopes);
    got.assert_git(&repo.oracle(&repo.root, "base"), &ops);
}

/// `ops` applied to a fresh seeded repository, then every comparison with git: the worktree
/// against the base in each scope, and the base against the commits the ops made.
fn replay(ops: &[Op]) {
    let repo = seeded();
    for op in ops {
        apply(&repo, op);
    }
    check(&repo, ops);
    check_tree_vs_tree(&repo, ops);
}

fn cases() -> u32 {
    crate::support::env_number("PROPTEST_CASES", 300)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn cumulative_diff_equals_git(ops in proptest::collection::vec(op(), 1..14)) {
        replay(&ops);
    }
}

/// A case the property found: a file replaced by a staged directory that a sparse index then
/// folds into one sparse directory entry, where the base holds a file of the same name.
#[test]
fn staged_directory_folded_by_a_sparse_index_over_a_base_file() {
    let ops = [Op::ReplaceWithDir(0), Op::Stage(0), Op::Sparse(0, true)];
    replay(&ops);
}

/// Sibling directories whose names sort around `/` in one scope (`s` and `s-t`, as `grep` and
/// `grep-searcher`): the index holds `s-t/main.rs` before `s/sub/m.rs`, the scope lists `s` first,
/// and both differ from the base. The comparison once met them out of order and panicked.
#[test]
fn sibling_directories_that_sort_around_a_slash() {
    let ops = [
        Op::Write(12, 0),
        Op::Stage(12),
        Op::Write(11, 1),
        Op::Stage(11),
        Op::Write(15, 2),
        Op::Stage(15),
        Op::Write(4, 1),
        Op::Stage(4),
    ];
    replay(&ops);
}

/// Found by the CI seed: a symlink to a directory that became a nested repository is an untracked
/// file to git, which never follows symlinks; gix's walk followed it and called it a repository.
#[test]
fn a_symlink_to_a_nested_repository_is_an_untracked_file() {
    let ops = [
        Op::IntentToAdd(8),
        Op::Commit,
        Op::RmCached(4),
        Op::Ignore(0),
        Op::SymlinkDir(3),
        Op::Delete(3),
        Op::AssumeUnchanged(9),
        Op::IntentToAdd(1),
        Op::StageAll,
        Op::UntrackedDir(1),
        Op::IndexVersion(4),
        Op::NestedRepo(2),
        Op::SplitIndex(true),
    ];
    replay(&ops);
}

/// The paths of git's NUL-separated list `out`.
fn nul_list(out: &str) -> Vec<String> {
    out.split('\0')
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect()
}

/// The paths of `paths` that `scope` holds: git's whole-repository answer, scoped.
fn within(paths: &[String], scope: &Scope) -> Vec<String> {
    paths
        .iter()
        .filter(|p| scope.contains(p))
        .cloned()
        .collect()
}

/// `git diff --no-renames --name-only -z REVS…` in `dir`: the oracle of the tree and history
/// diffs.
fn git_changed(harness: &TestRepo, dir: &Path, revs: &[&str]) -> Vec<String> {
    let mut args = vec![
        "-c",
        "core.quotePath=false",
        "diff",
        "--no-renames",
        "--name-only",
        "-z",
    ];
    args.extend_from_slice(revs);
    nul_list(&harness.git_in(dir, args))
}

/// Commits everything and compares the commit-to-commit diff with `git diff --name-only base HEAD`.
fn check_tree_vs_tree(repo: &TestRepo, ops: &[Op]) {
    // `--sparse`: outside a sparse checkout's cones too; through the full index for the reason
    // `TestRepo::oracle` gives.
    repo.git(["-c", "index.sparse=false", "add", "-A", "--sparse"]);
    repo.git([
        "-c",
        "index.sparse=false",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "all",
    ]);
    let expected = git_changed(repo, &repo.root, &["base", "HEAD"]);
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
    let single = ["dir", "a.txt", "new/deep", "ünï"].map(|prefix| vec![prefix]);
    let siblings = SIBLING_SCOPES.iter().map(|list| list.to_vec());
    for prefixes in single.into_iter().chain(siblings) {
        let scope = Scope::prefixes(&prefixes);
        let prefix = prefixes.join(", ");
        let want = within(&expected, &scope);
        let got = ours.tree_changes(base, head, &scope).unwrap();
        assert_eq!(
            got, want,
            "scoped tree diff ({prefix}) differs after {ops:#?}"
        );
    }
}

/// After `git gc`, one version of a large tree is stored whole and the others as deltas against
/// it; the tree diff applies such a delta to the whole tree it has just read instead of letting gix
/// inflate that tree again. Every pair of versions, both ways round, must still be git's diff.
#[test]
fn packed_trees_with_deltas_diff_like_git() {
    let repo = TestRepo::new();
    for i in 0..300 {
        repo.write(&format!("big/file{i:03}.txt"), &format!("{i}\n"));
    }
    repo.write("big/sub/inner.txt", "inner\n");
    repo.write("top.txt", "top\n");
    repo.commit_all("base");
    repo.write("big/file007.txt", "changed\n");
    repo.commit_all("one");
    std::fs::remove_file(repo.path("big/file100.txt")).unwrap();
    repo.write("big/file150.txt", "changed too\n");
    repo.write("big/new.txt", "new\n");
    repo.write("big/sub/inner.txt", "changed inner\n");
    repo.commit_all("two");
    repo.write("big/file299.txt", "last\n");
    repo.write("top.txt", "changed top\n");
    repo.commit_all("three");
    repo.git(["gc", "-q"]);
    // What this test is about: trees stored as deltas.
    let idx = std::fs::read_dir(repo.path(".git/objects/pack"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "idx"))
        .expect("git gc writes a pack");
    let listing = repo.git(["verify-pack", "-v", idx.to_str().unwrap()]);
    let tree_deltas = listing
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("tree"))
        .filter(|l| l.split_whitespace().count() >= 7)
        .count();
    assert!(tree_deltas > 0, "no tree stored as a delta:\n{listing}");

    let ours = Repo::discover(&repo.root).unwrap();
    let revs = ["HEAD~3", "HEAD~2", "HEAD~1", "HEAD"];
    for a in revs {
        for b in revs {
            let expected = git_changed(&repo, &repo.root, &[a, b]);
            let (x, y) = (
                ours.resolve_commit(a).unwrap(),
                ours.resolve_commit(b).unwrap(),
            );
            for scope in [Scope::All, Scope::prefixes(["big"])] {
                let want = within(&expected, &scope);
                assert_eq!(
                    ours.tree_changes(x, y, &scope).unwrap(),
                    want,
                    "{a}..{b}, {scope:?}"
                );
            }
        }
    }
}

/// Holds every engine to git's answer in the worktree `dir` of `repo`, for the whole repository
/// and scoped to each of `prefixes`, and returns git's answer for the test to pin.
fn matches_git(repo: &TestRepo, dir: &Path, prefixes: &[&str]) -> Vec<String> {
    let ours = Repo::discover(dir).unwrap();
    let base = ours.resolve_commit("base").unwrap();
    let mut scopes = vec![Scope::All];
    scopes.extend(prefixes.iter().map(|prefix| Scope::prefixes([prefix])));
    // And all at once, as one plan's targets: siblings among them then share a scope.
    scopes.push(Scope::prefixes(prefixes));
    let got = Ours::compute(&ours, base, &scopes);
    let expected = repo.oracle(dir, "base");
    got.assert_git(&expected, &prefixes);
    expected
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
    assert_eq!(
        matches_git(&repo, &repo.root, &["brand", "dir"]),
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
    assert_eq!(
        matches_git(&repo, &repo.root, &["crlf.txt", "id.txt"]),
        Vec::<String>::new()
    );
}

#[test]
fn submodule_pointer_change_matches_git() {
    let (_sub, repo) = with_submodule(&[]);
    let inner = repo.path("vendored");
    std::fs::write(inner.join("s.txt"), "2\n").unwrap();
    repo.git_in(&inner, ["commit", "-q", "-am", "two"]);
    assert_eq!(matches_git(&repo, &repo.root, &["vendored"]), ["vendored"]);
}

/// A submodule in each state its worktree can be in, under each ignore rule git knows (the
/// submodule's own in `.gitmodules`, overridden by `.git/config`, and `diff.ignoreSubmodules`):
/// git lists it for a new commit, and for dirty content as its rule says — untracked files
/// alone count only under `none`. Every engine must list what git lists.
#[test]
fn submodule_states_match_git_under_each_ignore_rule() {
    let (_sub, repo) = with_submodule(&[]);
    let inner = repo.path("vendored");
    let first = repo.git_in(&inner, ["rev-parse", "HEAD"]);
    let first = first.trim();
    // (what the worktree of the submodule holds, how to put it back)
    let states: &[(&str, &str)] = &[
        ("echo u > untracked.txt", "rm untracked.txt"),
        ("echo 2 > s.txt", "git checkout -q s.txt"),
        (
            "echo n > new.txt && git add new.txt",
            "git rm -q -f new.txt",
        ),
        (
            "echo 3 > s.txt && git commit -q -am three",
            "git reset -q --hard HEAD~1",
        ),
        (
            "echo 3 > s.txt && git commit -q -am three && echo u > untracked.txt",
            "rm untracked.txt && git reset -q --hard HEAD~1",
        ),
    ];
    // (the rule, how to set it, how to unset it)
    let rules: &[(&str, &str, &str)] = &[
        ("none set", "true", "true"),
        (
            ".gitmodules none",
            "git config -f .gitmodules submodule.vendored.ignore none",
            "git config -f .gitmodules --unset submodule.vendored.ignore",
        ),
        (
            ".gitmodules untracked",
            "git config -f .gitmodules submodule.vendored.ignore untracked",
            "git config -f .gitmodules --unset submodule.vendored.ignore",
        ),
        (
            ".gitmodules dirty",
            "git config -f .gitmodules submodule.vendored.ignore dirty",
            "git config -f .gitmodules --unset submodule.vendored.ignore",
        ),
        (
            ".git/config untracked over .gitmodules none",
            "git config -f .gitmodules submodule.vendored.ignore none && \
             git config submodule.vendored.ignore untracked",
            "git config -f .gitmodules --unset submodule.vendored.ignore && \
             git config --unset submodule.vendored.ignore",
        ),
        (
            "diff.ignoreSubmodules none",
            "git config diff.ignoreSubmodules none",
            "git config --unset diff.ignoreSubmodules",
        ),
        (
            ".gitmodules none over diff.ignoreSubmodules untracked",
            "git config diff.ignoreSubmodules untracked && \
             git config -f .gitmodules submodule.vendored.ignore none",
            "git config --unset diff.ignoreSubmodules && \
             git config -f .gitmodules --unset submodule.vendored.ignore",
        ),
    ];
    let sh = |dir: &Path, script: &str| {
        let out = std::process::Command::new("sh")
            .args(["-c", script])
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{script}: {out:?}");
    };
    let mut listed = std::collections::BTreeMap::new();
    for (rule, set, unset) in rules {
        sh(&repo.root, set);
        for (state, undo) in states {
            sh(&inner, state);
            let git = matches_git(&repo, &repo.root, &["vendored"]);
            listed.insert((*rule, *state), git.iter().any(|p| p == "vendored"));
            sh(&inner, undo);
            assert_eq!(repo.git_in(&inner, ["rev-parse", "HEAD"]).trim(), first);
        }
        sh(&repo.root, unset);
    }
    // The cases the rules exist for, so that the oracle itself is what this test expects.
    let untracked = states[0].0;
    assert!(!listed[&("none set", untracked)]);
    assert!(listed[&(".gitmodules none", untracked)]);
    assert!(!listed[&(".git/config untracked over .gitmodules none", untracked)]);
    assert!(
        listed[&(
            ".gitmodules none over diff.ignoreSubmodules untracked",
            untracked
        )]
    );
    assert!(listed[&("none set", states[1].0)]);
    assert!(!listed[&(".gitmodules dirty", states[1].0)]);
    assert!(listed[&(".gitmodules dirty", states[3].0)]);
}

/// `ignore = all` hides a submodule from `git diff` altogether; the gate still counts a new
/// commit in it (work is work whatever the configuration says), and nothing else.
#[test]
fn a_submodule_ignored_entirely_still_counts_its_new_commit() {
    let (_sub, repo) = with_submodule(&[("submodule.vendored.ignore", "all")]);
    let inner = repo.path("vendored");
    let ours = Repo::discover(&repo.root).unwrap();
    let base = ours.resolve_commit("base").unwrap();
    std::fs::write(inner.join("s.txt"), "2\n").unwrap();
    std::fs::write(inner.join("untracked.txt"), "u\n").unwrap();
    let dirty = Ours::compute(&ours, base, &[Scope::All]);
    dirty.assert_git(&[], &"dirty content under ignore = all");
    repo.git_in(&inner, ["commit", "-q", "-am", "two"]);
    assert_eq!(repo.oracle(&repo.root, "base"), Vec::<String>::new());
    let committed = Ours::compute(&ours, base, &[Scope::All]);
    committed.assert_git(
        &["vendored".to_string()],
        &"a new commit under ignore = all",
    );
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
    assert_eq!(ours.workdir().unwrap(), wt);
    assert_eq!(matches_git(&repo, &wt, &["a.txt"]), ["a.txt", "extra.txt"]);
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
    assert_eq!(
        matches_git(&repo, &repo.root, &["a.txt", "b.sh"]),
        ["a.txt"]
    );
}

/// The cache-tree vouches that a directory of the index is exactly a tree; where that tree is
/// the base's, the engine takes the index's entries there as the base's without reading the base.
/// It vouches for nothing in the worktree: files below such a directory that changed behind the
/// index's back are still found, and a directory whose cache-tree entry `git add` invalidated is
/// compared entry by entry.
#[test]
fn a_valid_cache_tree_vouches_for_the_index_only() {
    let repo = seeded();
    // `dir` holds x.txt and sub/z.txt; `new/deep` holds n.txt.
    repo.write("dir/y.txt", "base content y\n");
    repo.write("new/deep/m.txt", "base content m\n");
    repo.commit_all("base");
    repo.git(["tag", "-f", "base"]);
    let tree_at = |rev: &str| {
        gix::ObjectId::from_hex(repo.git(["rev-parse", rev]).trim().as_bytes()).unwrap()
    };

    // Touched: a new mtime, the same content and size.
    set_mtime(&repo.path("dir/sub/z.txt"), |_| {
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000)
    });
    // Rewritten with the same size, the old mtime put back: only the ctime tells.
    same_size_rewrite(&repo.path("dir/x.txt"));
    // Racily clean: rewritten with the same size, the index written in the same second as the
    // file (pinned in the future, so however fast the machine is).
    let future = std::time::SystemTime::now() + std::time::Duration::from_secs(100);
    set_mtime(&repo.path("new/deep/n.txt"), |_| future);
    repo.git(["add", "new/deep/n.txt"]);
    // `git add` invalidated the cache-tree above n.txt; valid again everywhere, as the base.
    repo.git(["write-tree"]);
    same_size_rewrite(&repo.path("new/deep/n.txt"));
    set_mtime(&repo.path("new/deep/n.txt"), |_| future);
    // Staged, which invalidates the cache-tree of `ünï` (and of the top).
    repo.write("ünï/cödé.md", "staged\n");
    repo.git(["add", "ünï/cödé.md"]);
    // Put back to the base through the index, still invalid in the cache-tree.
    repo.write("b.sh", "staged then unstaged\n");
    repo.git(["add", "b.sh"]);
    repo.git(["reset", "-q", "--", "b.sh"]);
    repo.write("b.sh", "base content 1\n");

    // The cache-tree as the engine finds it: `dir` valid and the base's, `ünï` invalidated.
    let index = gix::open(&repo.root).unwrap().index().unwrap();
    let top = index.tree().expect("git commit writes a cache-tree");
    let child = |name: &str| {
        top.children
            .iter()
            .find(|c| c.name.as_slice() == name.as_bytes())
            .unwrap_or_else(|| panic!("no cache-tree entry for {name}"))
    };
    assert!(child("dir").num_entries.is_some());
    assert_eq!(child("dir").id, tree_at("base:dir"));
    assert!(child("new").num_entries.is_some());
    assert_eq!(child("new").id, tree_at("base:new"));
    assert!(child("ünï").num_entries.is_none());

    assert_eq!(
        matches_git(&repo, &repo.root, &["dir", "dir/sub", "new", "ünï", "b.sh"]),
        ["dir/x.txt", "new/deep/n.txt", "ünï/cödé.md"]
    );
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
    assert_eq!(matches_git(&repo, &repo.root, &["a.txt", "b.sh"]), ["b.sh"]);
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
    let prefixes = [
        "a.txt",
        "a.txt/inner.txt",
        "dir/sub",
        "dir/sub/z.txt",
        "dir/sub/deep/n.txt",
        "nest",
        "nest/file.txt",
    ];
    assert_eq!(
        matches_git(&repo, &repo.root, &prefixes),
        [
            "a.txt",
            "a.txt/inner.txt",
            "dir/sub",
            "dir/sub/z.txt",
            "nest/"
        ]
    );
}
