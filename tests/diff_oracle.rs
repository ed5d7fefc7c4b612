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

mod cases;
mod history;
mod index_formats;
mod submodules;
mod trees;
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
    trees::check_tree_vs_tree(&repo, ops);
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
