//! `git baton demo`: the README's first command. It must work with nothing but git and the
//! binary (the hermetic harness gives it an empty HOME and no git configuration), replay the
//! incident with the real commands, and leave nothing behind unless asked to.

use std::path::{Path, PathBuf};

use crate::support::{Run, TestRepo};

const REASON: &str = "already states the new grading rule in section 3";

/// Runs `git baton demo ARGS` outside any repository, with TMPDIR set to a fresh directory.
fn demo(t: &TestRepo, args: &[&str], tmpdir: &Path) -> Run {
    std::fs::create_dir_all(tmpdir).unwrap();
    let mut argv = vec!["demo"];
    argv.extend_from_slice(args);
    t.baton_env(t.tmp(), argv, &[("TMPDIR", tmpdir.as_os_str())])
}

/// The part of the output from the line starting with `from` to the one starting with
/// `to` (or the end).
fn section<'a>(text: &'a str, from: &str, to: Option<&str>) -> &'a str {
    let start = text
        .find(&format!("\n{from}"))
        .unwrap_or_else(|| panic!("no `{from}` in:\n{text}"));
    let rest = &text[start..];
    match to.and_then(|to| rest.find(&format!("\n{to}"))) {
        Some(end) => &rest[..end],
        None => rest,
    }
}

/// The demo repository, from the line that names it (`$TMP` is the test's temporary directory).
fn demo_repository(t: &TestRepo, stdout: &str) -> PathBuf {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("demo repository: "))
        .unwrap_or_else(|| panic!("the demo does not name its repository:\n{stdout}"));
    let rel = line
        .strip_prefix("$TMP/")
        .unwrap_or_else(|| panic!("the demo repository is not under TMPDIR: {line}"));
    t.tmp().join(rel)
}

#[test]
fn the_demo_replays_the_incident_and_leaves_nothing_behind() {
    let t = TestRepo::new();
    let tmpdir = t.tmp().join("tmpdir");
    let run = demo(&t, &[], &tmpdir);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.stderr, "", "{run}");
    let out = &run.stdout;

    // Demo actors are labelled as such.
    assert!(out.contains("DEMO ACTORS"), "{out}");

    // 1. The first actor edits one document and is rate-limited.
    let first = section(
        out,
        "$ git baton run plans/cdfd-grade-review.md",
        Some("== 2."),
    );
    assert!(first.contains("rate limit"), "{first}");
    assert!(first.contains("rate_limited"), "{first}");
    assert!(first.contains("(exit 1)"), "{first}");

    // 2. The resumed actor changes nothing and exits 0; the gate blocks it and names the two
    // uncovered targets.
    let second = section(out, "$ git baton resume", Some("== 3."));
    assert!(second.contains("--actor executor=lazy"), "{second}");
    assert!(second.contains("the work looks done"), "{second}");
    assert!(second.contains("blocked"), "{second}");
    for target in ["docs/cdfd-check.md", "docs/cdfd-action.md"] {
        assert!(
            second
                .lines()
                .any(|l| l.contains("uncovered") && l.contains(target)),
            "the block does not name {target}:\n{second}"
        );
    }
    assert!(second.contains("(exit 1)"), "{second}");

    // 3. The record: the lazy attempt changed nothing.
    let record = section(out, "== 3.", Some("== 4."));
    assert!(record.contains("$ git baton status "), "{record}");
    assert!(record.contains("$ git baton diff "), "{record}");
    assert!(record.contains("changed nothing"), "{record}");

    // 4. The diligent actor finishes; the run enters review.
    let fourth = section(out, "== 4.", Some("== 5."));
    assert!(fourth.contains("--actor executor=diligent"), "{fourth}");
    assert!(fourth.contains("(exit 0)"), "{fourth}");

    // 5. The final result carries the reason for the unchanged target.
    let last = section(out, "== 5.", Some("== Done"));
    assert!(last.contains(REASON), "{last}");
    assert!(last.contains("docs/cdfd-action.md"), "{last}");

    assert!(out.contains("removed"), "{out}");
    let left: Vec<_> = std::fs::read_dir(&tmpdir).unwrap().collect();
    assert!(left.is_empty(), "the demo left {left:?} in TMPDIR");

    // No absolute path but the temporary directory's (shown as $TMP).
    for token in out.split_whitespace() {
        let token = token.trim_start_matches(['(', '`', '"', '\'']);
        assert!(
            !token.starts_with('/'),
            "absolute path `{token}` in the output:\n{out}"
        );
    }
    assert!(!out.contains(env!("CARGO_MANIFEST_DIR")), "{out}");
}

#[test]
fn keep_leaves_a_repository_whose_run_is_in_review() {
    let t = TestRepo::new();
    let tmpdir = t.tmp().join("tmpdir");
    let run = demo(&t, &["--keep"], &tmpdir);
    assert_eq!(run.code, 0, "{run}");
    let repo = demo_repository(&t, &run.stdout);
    let shown = t.mask(&repo.display().to_string());
    assert!(
        run.stdout
            .contains(&format!("cd {shown} && git baton status")),
        "{run}"
    );

    let status = t.baton_in(&repo, ["status", "--json"]);
    assert_eq!(status.code, 0, "{status}");
    let state = status.json();
    assert_eq!(state["status"], "review", "{status}");
    let action = state["coverage"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["target"] == "docs/cdfd-action.md")
        .unwrap();
    assert_eq!(action["status"], "unchanged");
    assert_eq!(action["reason"], REASON);

    // The demo's own files (actors, configuration) are committed: the main worktree is clean,
    // and the run's changes are the actors' edits and the report only.
    assert_eq!(t.git_in(&repo, ["status", "--porcelain"]), "");
    let worktree = t.tmp().join(
        state["worktree"]
            .as_str()
            .unwrap()
            .strip_prefix("$TMP/")
            .unwrap(),
    );
    assert!(worktree.starts_with(&repo), "{}", worktree.display());
    assert_eq!(
        t.oracle(&worktree, state["base"].as_str().unwrap()),
        [
            "docs/cdfd-check.md",
            "docs/cdfd-overview.md",
            "reports/cdfd-grade-review.md"
        ]
    );
}
