//! The differential test over a real history: the project's own repository (the clone the test
//! runs in), or any local repository `GIT_BATON_HISTORY_REPO` names.
//!
//! Range mode: for commit pairs `X`, `Y` drawn from the history (a parent and its child, and
//! pairs far apart), the scoped tree diff of `merge-base(X, Y)..Y` and the coverage of a plan
//! whose targets are the top-level entries must be git's `git diff --no-renames --name-only
//! X...Y`. Worktree mode: a clone checked out at `X` with files of `Y` put in its worktree (some
//! staged, some not), a few files deleted and untracked files added, must be git's cumulative
//! diff, for every engine, whole and scoped to the top-level entries.
//!
//! The choice is seeded (`GIT_BATON_HISTORY_SEED`, a fixed default) and bounded
//! ([`PAIRS`], [`STATES`], [`PATHS_PER_STATE`]), so its cost does not grow with the history.
//! A shallow clone has no history to walk: the test says so and passes.

use std::path::{Path, PathBuf};

use git_baton::coverage::{self, TargetStatus};
use git_baton::git::{Repo, Scope};

use super::{Ours, git_changed, nul_list};
use crate::support::TestRepo;

/// The repository to walk instead of the project's own.
const REPO_VAR: &str = "GIT_BATON_HISTORY_REPO";
/// The seed of the choice of commits and of what happens to each path.
const SEED_VAR: &str = "GIT_BATON_HISTORY_SEED";
const DEFAULT_SEED: u64 = 0x5eed_ba70;
/// Commit pairs checked in range mode (`GIT_BATON_HISTORY_PAIRS` for more, by hand).
const PAIRS: usize = 24;
/// Worktree states rebuilt from the history (`GIT_BATON_HISTORY_STATES` for more, by hand).
const STATES: usize = 4;

pub(super) fn count(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}
/// At most this many paths of `X..Y` are put in a state's worktree.
const PATHS_PER_STATE: usize = 40;

/// A small, seeded generator (xorshift64*): the test must not depend on a crate's stream.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The repository the test walks, or why there is none to walk.
pub(super) fn source(harness: &TestRepo) -> Result<PathBuf, String> {
    let dir = match std::env::var_os(REPO_VAR) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")),
    };
    let bare = harness.git_output(&dir, ["rev-parse", "--is-bare-repository"]);
    if !bare.status.success() {
        return Err(format!("{} is not in a git repository", dir.display()));
    }
    // A bare repository (a mirror) has history to walk too; states are rebuilt in clones.
    let top = if String::from_utf8_lossy(&bare.stdout).trim() == "true" {
        harness.git_output(&dir, ["rev-parse", "--absolute-git-dir"])
    } else {
        harness.git_output(&dir, ["rev-parse", "--show-toplevel"])
    };
    let shallow = harness.git_output(&dir, ["rev-parse", "--is-shallow-repository"]);
    if String::from_utf8_lossy(&shallow.stdout).trim() == "true" {
        return Err(format!(
            "{} is a shallow clone, whose history is cut off (fetch it whole: \
             `git fetch --unshallow`, or `fetch-depth: 0` with actions/checkout)",
            dir.display()
        ));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&top.stdout).trim()))
}

/// Targets for the top-level entries of the given commits' trees, as a plan lists them: each
/// name without a trailing slash, so that it covers the directory's contents as git's pathspec
/// does. Names a plan cannot hold as a plain path (globs, `: `) are left out.
fn top_level_targets(repo: &TestRepo, dir: &Path, commits: &[&str]) -> Vec<String> {
    targets_to_depth(repo, dir, commits, 1)
}

/// Targets for every path of the given commits cut to its first `depth` components: siblings
/// that sort around `/` (`grep` and `grep-searcher`) meet at every level, not just the top.
fn targets_to_depth(repo: &TestRepo, dir: &Path, commits: &[&str], depth: usize) -> Vec<String> {
    let mut names: Vec<String> = commits
        .iter()
        .flat_map(|c| nul_list(&repo.git_in(dir, ["ls-tree", "-r", "-z", "--name-only", c])))
        .map(|p| p.split('/').take(depth).collect::<Vec<_>>().join("/"))
        .filter(|n| !n.contains(['*', '?', '[', '{', '\\']) && !n.contains(": "))
        .filter(|n| !n.chars().any(char::is_control) && n.trim() == n)
        .collect();
    names.push("baton-untracked-dir".into());
    names.sort();
    names.dedup();
    names
}

/// The coverage of a plan whose targets are `names` over `changed` (the scoped diff) must give
/// each target exactly the paths of git's answer at or below it.
fn assert_coverage(names: &[String], changed: &[String], git: &[String], context: &str) {
    let list = serde_json::to_string(names).unwrap();
    let plan = git_baton::plan::parse("p.md", &format!("---\ntargets: {list}\n---\n"))
        .unwrap_or_else(|err| panic!("{context}: the plan of top-level targets: {err}"));
    let report = coverage::evaluate(&plan.targets, changed, &[], &[]);
    for (name, row) in names.iter().zip(&report.targets) {
        let want: Vec<&String> = git
            .iter()
            .filter(|p| *p == name || p.starts_with(&format!("{name}/")))
            .collect();
        let status = if want.is_empty() {
            TargetStatus::Uncovered
        } else {
            TargetStatus::Changed
        };
        assert_eq!(row.status, status, "{context}: target {name}");
        assert_eq!(
            row.paths.iter().collect::<Vec<_>>(),
            want,
            "{context}: target {name}"
        );
    }
}

#[test]
fn a_real_history_diffs_like_git() {
    let harness = TestRepo::new();
    let src = match source(&harness) {
        Ok(src) => src,
        Err(why) => {
            eprintln!("a_real_history_diffs_like_git: skipped: {why}");
            return;
        }
    };
    let seed = std::env::var(SEED_VAR)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEED);
    let mut rng = Rng(seed | 1);
    // Every commit with its parents, newest first.
    let listing = harness.git_in(&src, ["rev-list", "--parents", "HEAD"]);
    let commits: Vec<Vec<&str>> = listing.lines().map(|l| l.split(' ').collect()).collect();
    if commits.len() < 2 {
        eprintln!(
            "a_real_history_diffs_like_git: skipped: {} has one commit",
            src.display()
        );
        return;
    }
    let pick = |rng: &mut Rng| -> (String, String) {
        let child = &commits[rng.below(commits.len())];
        // A parent and its child, or two commits far apart (either way round).
        let other = if child.len() > 1 && rng.below(2) == 0 {
            child[1 + rng.below(child.len() - 1)]
        } else {
            commits[rng.below(commits.len())][0]
        };
        (other.to_owned(), child[0].to_owned())
    };
    let ours = Repo::discover(&src).unwrap();
    for _ in 0..count("GIT_BATON_HISTORY_PAIRS", PAIRS) {
        let (x, y) = pick(&mut rng);
        let context = format!("{} ({REPO_VAR}), seed {seed}: {x}...{y}", src.display());
        let git = git_changed(&harness, &src, &[&format!("{x}...{y}")]);
        let (cx, cy) = (
            ours.resolve_commit(&x).unwrap(),
            ours.resolve_commit(&y).unwrap(),
        );
        let base = ours.merge_base(cx, cy, (&x, &y)).unwrap();
        assert_eq!(
            ours.tree_changes(base, cy, &Scope::All).unwrap(),
            git,
            "{context}"
        );
        for names in [
            top_level_targets(&harness, &src, &[&x, &y]),
            targets_to_depth(&harness, &src, &[&x, &y], 2),
        ] {
            let scoped = ours
                .tree_changes(base, cy, &Scope::prefixes(&names))
                .unwrap();
            assert_coverage(&names, &scoped, &git, &context);
        }
    }
    for n in 0..count("GIT_BATON_HISTORY_STATES", STATES) {
        let (x, y) = pick(&mut rng);
        worktree_state(&harness, &src, &mut rng, n, (&x, &y), seed);
    }
}

/// A clone at `x` with files of `y` put in its worktree, held to git by every engine.
fn worktree_state(
    harness: &TestRepo,
    src: &Path,
    rng: &mut Rng,
    n: usize,
    (x, y): (&str, &str),
    seed: u64,
) {
    let clone = harness.tmp().join(format!("state{n}"));
    let clone_arg = clone.to_str().unwrap();
    harness.git_in(
        harness.tmp(),
        [
            "clone",
            "-q",
            "--shared",
            "--no-checkout",
            src.to_str().unwrap(),
            clone_arg,
        ],
    );
    harness.git_in(&clone, ["checkout", "-q", "--detach", x]);
    let mut paths = git_changed(harness, &clone, &[x, y]);
    while paths.len() > PATHS_PER_STATE {
        paths.swap_remove(rng.below(paths.len()));
    }
    let mut done = Vec::new();
    for path in &paths {
        let at_y = harness
            .git_output(&clone, ["cat-file", "-e", &format!("{y}:{path}")])
            .status
            .success();
        let action = match (at_y, rng.below(4)) {
            (true, 0 | 1) => "staged",
            (true, 2) => "unstaged",
            (false, 0) => "removed, staged",
            (false, 1) => "removed",
            _ => continue,
        };
        match action {
            "staged" => drop(harness.git_output(&clone, ["checkout", y, "--", path])),
            "unstaged" => {
                drop(harness.git_output(&clone, ["checkout", y, "--", path]));
                drop(harness.git_output(&clone, ["reset", "-q", "--", path]));
            }
            "removed, staged" => drop(harness.git_output(&clone, ["rm", "-q", "-r", "--", path])),
            _ => drop(std::fs::remove_file(clone.join(path))),
        }
        done.push(format!("{action}: {path}"));
    }
    // A few tracked files of `x` deleted, and untracked files, in a new directory and beside
    // existing ones.
    let tracked = nul_list(&harness.git_in(&clone, ["ls-files", "-z"]));
    for _ in 0..3.min(tracked.len()) {
        let path = &tracked[rng.below(tracked.len())];
        drop(std::fs::remove_file(clone.join(path)));
        done.push(format!("deleted: {path}"));
    }
    for i in 0..3 {
        let dir = match tracked.get(rng.below(tracked.len().max(1))) {
            Some(path) if i > 0 => Path::new(path)
                .parent()
                .unwrap_or(Path::new(""))
                .to_path_buf(),
            _ => PathBuf::from("baton-untracked-dir"),
        };
        let file = clone.join(&dir).join(format!("baton-untracked-{i}.txt"));
        if std::fs::create_dir_all(file.parent().unwrap()).is_ok() {
            drop(std::fs::write(&file, "untracked\n"));
            done.push(format!("untracked: {}", file.display()));
        }
    }

    let context = format!(
        "{} ({REPO_VAR}), seed {seed}: a worktree at {x} with files of {y}: {done:#?}",
        src.display()
    );
    let names = top_level_targets(harness, &clone, &[x, y]);
    let deeper = targets_to_depth(harness, &clone, &[x, y], 2);
    let ours = Repo::discover(&clone).unwrap();
    let base = ours.resolve_commit(x).unwrap();
    let scopes = [
        Scope::All,
        Scope::prefixes(&names),
        Scope::prefixes(&deeper),
    ];
    // Before git runs: git may refresh the index as it reads it.
    let got = Ours::compute(&ours, base, &scopes);
    let expected = harness.oracle(&clone, x);
    got.assert_git(&expected, &context);
    for (names, scope) in [(&names, &scopes[1]), (&deeper, &scopes[2])] {
        let scoped = ours.worktree_changes(base, scope).unwrap();
        assert_coverage(names, &scoped, &expected, &context);
    }
}
