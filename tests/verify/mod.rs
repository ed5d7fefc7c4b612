//! End-to-end tests of `git baton verify`, the coverage gate: real repositories in temporary
//! directories, the real binary, and one snapshot of exit code, stdout and stderr per run.
//!
//! Commit ids are deterministic (the harness pins names and dates) but change whenever a test's
//! history does, so snapshots show them by name (`<fork>`, `<trailer>`) via [`named`].

use std::path::Path;

use insta::assert_snapshot;
use serde_json::json;

use crate::support::{Run, TestRepo};

mod bad_input;
mod discovery;
mod evidence;
mod formats;
mod range;
mod rule;
mod worktree;

/// Plan text with a title on line 2 and one target per line from line 4 on.
fn plan(title: &str, targets: &[&str]) -> String {
    let mut text = format!("---\ntitle: {title}\ntargets:\n");
    for target in targets {
        text.push_str(&format!("  - \"{target}\"\n"));
    }
    text.push_str("---\n# The work\n\nDo it.\n");
    text
}

/// A repository with `files` committed on `main`, and a new branch `feature` checked out.
fn repo_on_feature(files: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    for (path, content) in files {
        repo.write(path, content);
    }
    repo.commit_all("base");
    repo.git(["checkout", "-q", "-b", "feature"]);
    repo
}

/// The run with the commit ids of `revs` (full, 12- and 7-character forms) replaced by names.
fn named(run: Run, repo: &TestRepo, revs: &[(&str, &str)]) -> Run {
    let mut run = run;
    for (rev, name) in revs {
        let id = repo.git(["rev-parse", &format!("{rev}^{{commit}}")]);
        let id = id.trim();
        for len in [40, 12, 7] {
            run = run.replace(&id[..len], name);
        }
    }
    run
}

fn verify(repo: &TestRepo, args: &[&str]) -> Run {
    repo.baton(["verify"].iter().chain(args))
}
