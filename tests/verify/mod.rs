//! End-to-end tests of `git baton verify`, the coverage gate: real repositories in temporary
//! directories, the real binary, and one snapshot of exit code, stdout and stderr per run.
//!
//! Commit ids are deterministic (the harness pins names and dates) but change whenever a test's
//! history does, so snapshots show them by name (`<fork>`, `<trailer>`) via [`named`]. A run
//! whose output differs from an earlier snapshot only in a known part is checked against that
//! snapshot with [`assert_same`] instead of repeating it.

use std::path::Path;

use insta::assert_snapshot;
use serde_json::json;

use crate::support::{Run, TestRepo, plan_text as plan};

mod bad_input;
mod bounds;
mod bypass;
mod discovery;
mod evidence;
mod formats;
mod hostile;
mod pathspec;
mod range;
mod rule;
mod run_branch;
mod sarif;
mod targets;
mod trivial;
mod worktree;

/// What a failed gate says on how to cover a target, as [`named`] shows it: in one line, so
/// that the snapshots of failed gates do not each repeat it. The words themselves are checked
/// once, in `rule::the_covering_hint_names_both_ways_to_give_a_reason`.
const COVERING_HINT: (&str, &str) = (
    "hint: change each uncovered target, or record why it needed no change:\n\
     hint:   a commit trailer `Baton-Unchanged: <target>: <specific reason>`, or\n\
     hint:   an `unchanged` entry with a reason in an --evidence file\n",
    "<the covering hint>\n",
);

/// The run with the commit ids of `revs` (full, 12- and 7-character forms) replaced by names,
/// and the [`COVERING_HINT`] by its short form.
fn named(run: Run, repo: &TestRepo, revs: &[(&str, &str)]) -> Run {
    let mut run = run.replace(COVERING_HINT.0, COVERING_HINT.1);
    for (rev, name) in revs {
        let id = repo.git(["rev-parse", &format!("{rev}^{{commit}}")]);
        let id = id.trim();
        for len in [40, 12, 7] {
            run = run.replace(&id[..len], name);
        }
    }
    run
}

/// The GitHub format's stop-commands token shown as `<token>`, once checked to be what it must
/// be: `baton-` and the blob id of the report between the two lines that carry it, the last line.
fn tokenless(run: Run, repo: &TestRepo) -> Run {
    const STOP: &str = "::stop-commands::";
    let Some(start) = run.stdout.find(STOP) else {
        return run;
    };
    let line_end = start + run.stdout[start..].find('\n').expect("a whole line");
    let token = run.stdout[start + STOP.len()..line_end].to_owned();
    let resume = format!("::{token}::\n");
    assert!(run.stdout.ends_with(&resume), "{}", run.stdout);
    let report = &run.stdout[line_end + 1..run.stdout.len() - resume.len()];
    let file = repo.tmp().join("report-to-hash.txt");
    std::fs::write(&file, report).unwrap();
    let id = repo.git(["hash-object", file.to_str().unwrap()]);
    assert_eq!(token, format!("baton-{}", id.trim()));
    run.replace(&token, "<token>")
}

/// The targets of plan `n` of `verify --json`'s document, in its order.
fn targets_of(json: &serde_json::Value, n: usize) -> Vec<&str> {
    json["plans"][n]["coverage"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap())
        .collect()
}

/// `git baton verify ARGS`, with the arguments written as a command line (none has a space).
fn verify(repo: &TestRepo, args: &str) -> Run {
    repo.baton(["verify"].into_iter().chain(args.split_whitespace()))
}

/// [`verify`] shown for a snapshot, with the commit `main` names shown as `<main>`.
fn gate(repo: &TestRepo, args: &str) -> String {
    named(verify(repo, args), repo, &[("main", "<main>")]).to_string()
}

/// Asserts that `actual` is `earlier` (an output already checked against a snapshot) with each
/// `(from, to)` replaced: the same verdict reached another way, without a second copy of it.
#[track_caller]
fn assert_same(actual: &str, earlier: &str, edits: &[(&str, &str)]) {
    let expected = edits.iter().fold(earlier.to_owned(), |text, (from, to)| {
        assert!(text.contains(from), "{from:?} is not in:\n{text}");
        text.replace(from, to)
    });
    assert_eq!(actual, expected);
}
