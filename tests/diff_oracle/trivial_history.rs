//! The trivial-change rule over a real history: every commit of the project's own repository (or
//! of the one `GIT_BATON_HISTORY_REPO` names) against its first parent, each changed path put to
//! `verify::trivial::Sides::trivial`, as the gate of a plan whose targets are every path the commit
//! changes would put it.
//!
//! The oracle is git: a path the rule calls trivial is an added file whose contents are only
//! whitespace, a mode change with the same blob, or a change in which git's word diff, with words
//! as runs of non-space characters (`--word-diff=porcelain --word-diff-regex='[^[:space:]]+'`),
//! finds no word added or removed. (Line-based `git diff -w` is no oracle: re-wrapping a
//! paragraph changes its lines and none of its words.) Only that direction is checked: a path
//! the rule calls real may still be one git finds no word of (a binary file, a file over the
//! bound).
//!
//! The figures — how many commits would have had a target flagged `touched` — are printed for
//! docs/coverage.md; run `cargo test --test tests trivial_history -- --nocapture` to see them, with
//! `GIT_BATON_HISTORY_COMMITS` for more than the bounded default.

use std::path::Path;

use git_baton::git::{Repo, Scope};
use git_baton::verify::trivial::{NewSide, Sides};

use super::history::{count, source};
use crate::support::TestRepo;

/// Commits walked, newest first (`GIT_BATON_HISTORY_COMMITS` for more, by hand).
const COMMITS: usize = 150;

#[derive(Default, Debug)]
struct Figures {
    commits: usize,
    /// Commits with at least one trivially changed path: a plan targeting each changed file
    /// would have failed them.
    flagged: usize,
    /// Commits whose every change is trivial.
    all_trivial: usize,
    paths: usize,
    trivial_paths: usize,
}

#[test]
fn the_trivial_change_rule_over_a_real_history() {
    let harness = TestRepo::new();
    let src = match source(&harness) {
        Ok(src) => src,
        Err(why) => {
            eprintln!("the_trivial_change_rule_over_a_real_history: skipped: {why}");
            return;
        }
    };
    let limit = count("GIT_BATON_HISTORY_COMMITS", COMMITS).to_string();
    let listing = harness.git_in(
        &src,
        ["rev-list", "--no-merges", "--parents", "-n", &limit, "HEAD"],
    );
    let ours = Repo::discover(&src).unwrap();
    let mut figures = Figures::default();
    let mut examples = Vec::new();
    for line in listing.lines() {
        let ids: Vec<&str> = line.split(' ').collect();
        let [commit, parent, ..] = ids[..] else {
            continue; // a root commit: no parent to compare with
        };
        let (c, p) = (
            ours.resolve_commit(commit).unwrap(),
            ours.resolve_commit(parent).unwrap(),
        );
        let changed = ours.tree_changes(p, c, &Scope::prefixes([""])).unwrap();
        let mut sides = Sides::new(&ours, p, NewSide::Commit(c));
        let mut trivial_here = 0;
        for path in &changed {
            if sides.trivial(path).unwrap() {
                trivial_here += 1;
                check_with_git(&harness, &src, parent, commit, path);
                if examples.len() < 20 {
                    examples.push(format!("{} {path}", &commit[..10]));
                }
            }
        }
        figures.commits += 1;
        figures.paths += changed.len();
        figures.trivial_paths += trivial_here;
        figures.flagged += usize::from(trivial_here > 0);
        figures.all_trivial += usize::from(trivial_here > 0 && trivial_here == changed.len());
    }
    eprintln!(
        "trivial-change rule over {} ({} non-merge commits): {} flagged ({:.1}%), {} all trivial; \
         {} of {} changed paths trivial\n  {}",
        src.display(),
        figures.commits,
        figures.flagged,
        100.0 * figures.flagged as f64 / figures.commits.max(1) as f64,
        figures.all_trivial,
        figures.trivial_paths,
        figures.paths,
        examples.join("\n  ")
    );
}

/// What git says of a path the rule called trivial: see the module documentation.
fn check_with_git(harness: &TestRepo, dir: &Path, parent: &str, commit: &str, path: &str) {
    let entry = |rev: &str| {
        let out = harness.git_in(dir, ["ls-tree", "-z", rev, "--", path]);
        let meta = out.split('\t').next().unwrap_or_default().to_owned();
        let parts: Vec<String> = meta.split(' ').map(String::from).collect();
        (!out.is_empty()).then(|| (parts[0].clone(), parts[2].clone()))
    };
    let context = format!("{parent}..{commit} -- {path}");
    match (entry(parent), entry(commit)) {
        (None, Some(_)) => {
            let text = harness.git_in(dir, ["cat-file", "-p", &format!("{commit}:{path}")]);
            assert!(
                text.bytes().all(|b| b" \t\n\r\x0b\x0c".contains(&b)),
                "{context}: an added file called trivial holds more than whitespace"
            );
        }
        (Some((_, old_blob)), Some((_, new_blob))) if old_blob == new_blob => {}
        (Some(_), Some(_)) => {
            let diff = harness.git_in(
                dir,
                [
                    "diff",
                    "--no-renames",
                    "--no-color",
                    "--word-diff=porcelain",
                    "--word-diff-regex=[^[:space:]]+",
                    parent,
                    commit,
                    "--",
                    path,
                ],
            );
            let changed_lines: Vec<&str> = diff
                .lines()
                .filter(|l| {
                    (l.starts_with('+') || l.starts_with('-'))
                        && !l.starts_with("+++")
                        && !l.starts_with("---")
                })
                .collect();
            assert!(
                changed_lines.is_empty(),
                "{context}: called trivial, but git's word diff shows {changed_lines:?}"
            );
        }
        other => panic!("{context}: called trivial with sides {other:?}"),
    }
}
