//! End-to-end tests of `git baton verify`, the coverage gate: real repositories in temporary
//! directories, the real binary, and one snapshot of exit code, stdout and stderr per run.
//!
//! Commit ids are deterministic (the harness pins names and dates) but change whenever a test's
//! history does, so snapshots show them by name (`<fork>`, `<trailer>`) via [`named`].

use std::path::Path;

use insta::assert_snapshot;
use serde_json::json;

use crate::support::{Run, TestRepo};

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

// ---------------------------------------------------------------------------------------------
// The coverage rule end to end

/// The incident the gate exists for: a plan promised three documents, the work touched one,
/// and the stage was recorded as finished. The gate names the two it did not touch, at their
/// plan lines; a specific reason for each (one in an evidence file, one in a commit trailer)
/// then lets it pass.
#[test]
fn incident_uncovered_targets_then_reasons() {
    let repo = repo_on_feature(&[
        (
            "plans/docs-refresh.md",
            &plan(
                "Refresh the docs",
                &["docs/install.md", "docs/usage.md", "docs/faq.md"],
            ),
        ),
        ("docs/install.md", "Install it.\n"),
        ("docs/usage.md", "Use it.\n"),
        ("docs/faq.md", "Ask.\n"),
    ]);
    repo.write("docs/install.md", "Install it with cargo.\n");
    repo.commit_all("Update the install docs");

    let run = verify(&repo, &["plans/docs-refresh.md", "--base", "main"]);
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 1
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/docs-refresh.md (docs-refresh): failed: 2 of 3 targets uncovered
          changed    docs/install.md  docs/install.md
          uncovered  docs/usage.md    no change and no reason (plans/docs-refresh.md:5)
          uncovered  docs/faq.md      no change and no reason (plans/docs-refresh.md:6)

        gate failed: 1 of 1 plan(s) not covered
        hint: change each uncovered target, or record why it needed no change:
        hint:   a commit trailer `Baton-Unchanged: <target>: <specific reason>`, or
        hint:   an `unchanged` entry with a reason in an --evidence file
        ");

    repo.write(
        "evidence.json",
        r#"{"target_coverage": [
  {"target": "docs/install.md", "status": "changed", "paths": ["docs/install.md"]},
  {"target": "docs/usage.md", "status": "unchanged", "reason": "the usage page documents flags this change does not touch"}
]}
"#,
    );
    repo.git([
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "Record why the FAQ stays",
        "-m",
        "Baton-Unchanged: docs/faq.md: no FAQ entry mentions the install steps",
    ]);
    let run = verify(
        &repo,
        &[
            "plans/docs-refresh.md",
            "--base",
            "main",
            "--evidence",
            "evidence.json",
        ],
    );
    assert_snapshot!(named(run, &repo, &[("main", "<main>"), ("HEAD", "<trailer>")]).to_string(), @r"
        exit: 0
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/docs-refresh.md (docs-refresh): passed: all 3 targets covered
          changed    docs/install.md  docs/install.md
          unchanged  docs/usage.md    because: the usage page documents flags this change does not touch (evidence.json: entry 1)
          unchanged  docs/faq.md      because: no FAQ entry mentions the install steps (commit <trailer> trailer)

        gate passed
        ");
}

/// Commits that land on the base branch after the fork are not the branch's work, in either
/// mode; with --head, uncommitted changes in the worktree are not either.
#[test]
fn head_mode_diffs_against_the_merge_base() {
    let repo = repo_on_feature(&[
        ("plans/p.md", &plan("Two docs", &["docs/a.md", "docs/b.md"])),
        ("docs/a.md", "a\n"),
        ("docs/b.md", "b\n"),
    ]);
    repo.write("docs/a.md", "a on the branch\n");
    repo.commit_all("feature: a");
    repo.git(["checkout", "-q", "main"]);
    repo.write("docs/b.md", "b on main after the fork\n");
    repo.commit_all("main: b");
    repo.git(["checkout", "-q", "feature"]);
    let names = [
        ("main~1", "<fork>"),
        ("main", "<main>"),
        ("feature", "<feature>"),
    ];

    // The worktree of the branch, against main: b was changed by main, not by this branch.
    let run = verify(&repo, &["plans/p.md", "--base", "main"]);
    assert_snapshot!(named(run, &repo, &names).to_string(), @r"
        exit: 1
        --- stdout
        verifying the worktree against main (merge base <fork>)

        plan plans/p.md (p): failed: 1 of 2 targets uncovered
          changed    docs/a.md  docs/a.md
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)

        gate failed: 1 of 1 plan(s) not covered
        hint: change each uncovered target, or record why it needed no change:
        hint:   a commit trailer `Baton-Unchanged: <target>: <specific reason>`, or
        hint:   an `unchanged` entry with a reason in an --evidence file
        ");

    // The commit, from a worktree that has changed b without committing it.
    repo.write("docs/b.md", "uncommitted\n");
    let run = verify(
        &repo,
        &["plans/p.md", "--base", "main", "--head", "feature"],
    );
    assert_snapshot!(named(run, &repo, &names).to_string(), @r"
        exit: 1
        --- stdout
        verifying main...feature (merge base <fork>)

        plan plans/p.md (p): failed: 1 of 2 targets uncovered
          changed    docs/a.md  docs/a.md
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)

        gate failed: 1 of 1 plan(s) not covered
        hint: change each uncovered target, or record why it needed no change:
        hint:   a commit trailer `Baton-Unchanged: <target>: <specific reason>`, or
        hint:   an `unchanged` entry with a reason in an --evidence file
        ");

    let run = verify(
        &repo,
        &[
            "plans/p.md",
            "--base",
            "main",
            "--head",
            "feature",
            "--json",
        ],
    );
    let json = run.json();
    let fork = repo.git(["merge-base", "main", "feature"]);
    let feature = repo.git(["rev-parse", "feature"]);
    assert_eq!(json["merge_base"], fork.trim());
    assert_eq!(json["head"], "feature");
    assert_eq!(json["head_commit"], feature.trim());
    assert_eq!(
        json["plans"][0]["coverage"]["targets"][1]["status"],
        "uncovered"
    );
}

/// Without PLAN arguments, the plans that the range adds or modifies under `plans/` are
/// checked; a deleted plan and other files are not; no changed plan is not a failure.
#[test]
fn plans_are_discovered_under_plans_dir() {
    let repo = repo_on_feature(&[
        ("plans/old.md", &plan("Old", &["docs/old.md"])),
        ("plans/kept.md", &plan("Kept", &["docs/never-touched.md"])),
        ("docs/old.md", "old\n"),
    ]);

    let run = verify(&repo, &["--base", "main"]);
    assert_snapshot!(run.to_string(), @r"
        exit: 0
        --- stdout
        no plans to verify: none was named, and none under plans/ changed in the worktree against main
        ");

    std::fs::remove_file(repo.path("plans/old.md")).unwrap();
    repo.write("plans/new.md", &plan("New", &["docs/new.md"]));
    repo.write("plans/deep/nested.md", &plan("Nested", &["docs/nested.md"]));
    repo.write("plans/notes.txt", "not a plan\n");
    repo.write("docs/new.md", "new\n");
    repo.write("docs/nested.md", "nested\n");
    let run = verify(&repo, &["--base", "main"]);
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 0
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/deep/nested.md (nested): passed: 1 target covered
          changed    docs/nested.md  docs/nested.md

        plan plans/new.md (new): passed: 1 target covered
          changed    docs/new.md  docs/new.md

        gate passed
        ");

    // The same, committed, checked as a commit.
    repo.commit_all("new plans");
    let run = verify(&repo, &["--base", "main", "--head", "feature"]);
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 0
        --- stdout
        verifying main...feature (merge base <main>)

        plan plans/deep/nested.md (nested): passed: 1 target covered
          changed    docs/nested.md  docs/nested.md

        plan plans/new.md (new): passed: 1 target covered
          changed    docs/new.md  docs/new.md

        gate passed
        ");
}

/// `plans_dir` in .baton.yml moves discovery; `plans/` is then an ordinary directory, whose
/// (broken) plan is never read.
#[test]
fn plans_are_discovered_under_a_configured_plans_dir() {
    let repo = repo_on_feature(&[
        (".baton.yml", "plans_dir: work/plans/\n"),
        ("docs/a.md", "a\n"),
    ]);

    let run = verify(&repo, &["--base", "main"]);
    assert_snapshot!(run.to_string(), @r"
        exit: 0
        --- stdout
        no plans to verify: none was named, and none under work/plans/ changed in the worktree against main
        ");

    repo.write("work/plans/a.md", &plan("A", &["docs/a.md"]));
    repo.write("plans/broken.md", "no frontmatter\n");
    repo.write("docs/a.md", "a, edited\n");
    let run = verify(&repo, &["--base", "main"]);
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 0
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan work/plans/a.md (a): passed: 1 target covered
          changed    docs/a.md  docs/a.md

        gate passed
        ");
}

#[test]
fn directory_and_glob_targets() {
    let repo = repo_on_feature(&[
        (
            "plans/p.md",
            &plan(
                "Parser",
                &[
                    "src/parser/",
                    "src/lexer/",
                    "tests/**/*_golden.txt",
                    "docs/*.md",
                    "pages/[id].tsx",
                ],
            ),
        ),
        ("src/parser/mod.rs", "mod deep;\n"),
        ("src/parser/deep/mod.rs", "\n"),
        ("src/lexer/mod.rs", "\n"),
        ("src/lexer-old.rs", "\n"),
        ("tests/x/y_golden.txt", "y\n"),
        ("tests/golden.txt", "g\n"),
        ("docs/guide.md", "guide\n"),
        ("docs/deep/page.md", "page\n"),
        ("pages/[id].tsx", "page\n"),
    ]);
    repo.write("src/parser/deep/mod.rs", "// deeper\n");
    repo.write("src/lexer-old.rs", "// not under src/lexer/\n");
    repo.write("tests/x/y_golden.txt", "y2\n");
    repo.write("tests/golden.txt", "not *_golden\n");
    repo.write("docs/guide.md", "guide 2\n");
    repo.write("docs/deep/page.md", "`*` stays within a directory\n");
    repo.write(
        "pages/[id].tsx",
        "a literal file name that reads as a glob\n",
    );
    let run = verify(&repo, &["plans/p.md", "--base", "main"]);
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 1
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): failed: 1 of 5 targets uncovered
          changed    src/parser/            src/parser/deep/mod.rs
          uncovered  src/lexer/             no change and no reason (plans/p.md:5)
          changed    tests/**/*_golden.txt  tests/x/y_golden.txt
          changed    docs/*.md              docs/guide.md
          changed    pages/[id].tsx         pages/[id].tsx

        gate failed: 1 of 1 plan(s) not covered
        hint: change each uncovered target, or record why it needed no change:
        hint:   a commit trailer `Baton-Unchanged: <target>: <specific reason>`, or
        hint:   an `unchanged` entry with a reason in an --evidence file
        ");
}

/// A deletion is a change; a rename changes both its old and its new path (git's rename
/// detection must not hide the old one), in the worktree and between commits.
#[test]
fn deleted_and_renamed_paths_count_as_changed() {
    let repo = repo_on_feature(&[
        (
            "plans/p.md",
            &plan(
                "Move docs",
                &["docs/removed.md", "docs/old-name.md", "docs/new-name.md"],
            ),
        ),
        ("docs/removed.md", "going away\n"),
        (
            "docs/old-name.md",
            "a page long enough for rename detection\nwith a second line\n",
        ),
    ]);
    repo.git(["rm", "-q", "docs/removed.md"]);
    repo.git(["mv", "docs/old-name.md", "docs/new-name.md"]);
    let run = verify(&repo, &["plans/p.md", "--base", "main"]);
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 0
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): passed: all 3 targets covered
          changed    docs/removed.md   docs/removed.md
          changed    docs/old-name.md  docs/old-name.md
          changed    docs/new-name.md  docs/new-name.md

        gate passed
        ");

    repo.commit_all("remove and rename");
    let status = repo.git(["show", "--name-status", "--format=", "-M", "HEAD"]);
    assert!(
        status.contains("R100\tdocs/old-name.md\tdocs/new-name.md"),
        "{status}"
    );
    let run = verify(&repo, &["plans/p.md", "--base", "main", "--head", "HEAD"]);
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 0
        --- stdout
        verifying main...HEAD (merge base <main>)

        plan plans/p.md (p): passed: all 3 targets covered
          changed    docs/removed.md   docs/removed.md
          changed    docs/old-name.md  docs/old-name.md
          changed    docs/new-name.md  docs/new-name.md

        gate passed
        ");
}

/// Several named plans: each gets the evidence for its own targets.
#[test]
fn several_plans_share_one_evidence_file() {
    let repo = repo_on_feature(&[
        ("plans/one.md", &plan("One", &["docs/a.md"])),
        ("plans/two.md", &plan("Two", &["docs/b.md", "docs/c.md"])),
        ("docs/a.md", "a\n"),
        ("docs/b.md", "b\n"),
        ("docs/c.md", "c\n"),
    ]);
    repo.write("docs/a.md", "a2\n");
    repo.write(
        "evidence.json",
        r#"{"target_coverage": [
  {"target": "docs/b.md", "status": "unchanged", "reason": "page b describes the old API, which stays"}
]}"#,
    );
    let run = verify(
        &repo,
        &[
            "plans/one.md",
            "plans/two.md",
            "--base",
            "main",
            "--evidence",
            "evidence.json",
        ],
    );
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 1
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/one.md (one): passed: 1 target covered
          changed    docs/a.md  docs/a.md

        plan plans/two.md (two): failed: 1 of 2 targets uncovered
          unchanged  docs/b.md  because: page b describes the old API, which stays (evidence.json: entry 0)
          uncovered  docs/c.md  no change and no reason (plans/two.md:5)

        gate failed: 1 of 2 plan(s) not covered
        hint: change each uncovered target, or record why it needed no change:
        hint:   a commit trailer `Baton-Unchanged: <target>: <specific reason>`, or
        hint:   an `unchanged` entry with a reason in an --evidence file
        ");
}

// ---------------------------------------------------------------------------------------------
// Evidence

/// Every kind of bad evidence fails the gate, each named with its entry.
#[test]
fn evidence_problems_fail_the_gate() {
    let repo = repo_on_feature(&[
        (
            "plans/p.md",
            &plan(
                "Docs",
                &["docs/a.md", "docs/b.md", "docs/c.md", "docs/d.md"],
            ),
        ),
        ("docs/a.md", "a\n"),
        ("docs/b.md", "b\n"),
        ("docs/c.md", "c\n"),
        ("docs/d.md", "d\n"),
    ]);
    repo.write("docs/a.md", "a2\n");
    repo.write(
        "evidence.json",
        r#"{"target_coverage": [
  {"target": "docs/b.md", "status": "unchanged", "reason": "n/a"},
  {"target": "docs/c.md", "status": "unchanged", "reason": "Done."},
  {"target": "docs/d.md", "status": "unchanged", "reason": "no impact"},
  {"target": "docs/e.md", "status": "unchanged", "reason": "a page this plan never declared"},
  {"target": "docs/b.md", "status": "unchanged", "reason": "the second word on b, however good it is"},
  {"target": "docs/a.md", "status": "changed", "paths": ["docs/a.md", "docs/z.md"]}
]}"#,
    );
    let run = verify(
        &repo,
        &[
            "plans/p.md",
            "--base",
            "main",
            "--evidence",
            "evidence.json",
        ],
    );
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r#"
        exit: 1
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): failed: 3 of 4 targets uncovered, 6 evidence problem(s)
          changed    docs/a.md  docs/a.md
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)
          uncovered  docs/c.md  no change and no reason (plans/p.md:6)
          uncovered  docs/d.md  no change and no reason (plans/p.md:7)
          problem    evidence.json: entry 0: reason "n/a" for target "docs/b.md" is a placeholder: give a specific reason why it needed no change
          problem    evidence.json: entry 1: reason "Done." for target "docs/c.md" is a placeholder: give a specific reason why it needed no change
          problem    evidence.json: entry 2: reason "no impact" for target "docs/d.md" is too short: give a specific reason (at least 3 words)
          problem    evidence.json: entry 3: target "docs/e.md" is not declared by the plan; did you mean "docs/a.md"?
          problem    evidence.json: entry 4: second entry for target "docs/b.md" (the first is evidence.json: entry 0); give one entry per target
          problem    evidence.json: entry 5: claims "docs/z.md" changed for target "docs/a.md", but the diff does not change it

        gate failed: 1 of 1 plan(s) not covered
        hint: change each uncovered target, or record why it needed no change:
        hint:   a commit trailer `Baton-Unchanged: <target>: <specific reason>`, or
        hint:   an `unchanged` entry with a reason in an --evidence file
        "#);
}

/// An `unchanged` entry for a target the diff changed: the diff wins, the gate passes, and the
/// contradiction is on the record.
#[test]
fn contradicting_evidence_is_noted_but_passes() {
    let repo = repo_on_feature(&[
        ("plans/p.md", &plan("Docs", &["docs/a.md"])),
        ("docs/a.md", "a\n"),
    ]);
    repo.write("docs/a.md", "a2\n");
    repo.write(
        "evidence.json",
        r#"{"target_coverage": [{"target": "docs/a.md", "status": "unchanged", "reason": "the agent believed it needed no edit"}]}"#,
    );
    let run = verify(
        &repo,
        &[
            "plans/p.md",
            "--base",
            "main",
            "--evidence",
            "evidence.json",
        ],
    );
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 0
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): passed: 1 target covered
          changed    docs/a.md  docs/a.md
          note       evidence.json: entry 0 says `docs/a.md` is unchanged, but the diff changed docs/a.md; the diff wins

        gate passed
        ");
    let json = verify(
        &repo,
        &[
            "plans/p.md",
            "--base",
            "main",
            "--evidence",
            "evidence.json",
            "--json",
        ],
    )
    .json();
    assert_eq!(json["passed"], true);
    assert_eq!(
        json["plans"][0]["coverage"]["contradictions"],
        json!([{
            "target": "docs/a.md",
            "source": {"kind": "file", "path": "evidence.json", "index": 0},
            "reason": "the agent believed it needed no edit",
            "paths": ["docs/a.md"],
        }])
    );
}

/// An evidence file that is not shaped like one is bad input (exit 2), located in the file.
#[test]
fn evidence_shape_errors_are_located() {
    let repo = repo_on_feature(&[
        ("plans/p.md", &plan("Docs", &["docs/a.md"])),
        ("docs/a.md", "a\n"),
    ]);
    let check = |text: &str| {
        repo.write("evidence.json", text);
        verify(
            &repo,
            &[
                "plans/p.md",
                "--base",
                "main",
                "--evidence",
                "evidence.json",
            ],
        )
    };

    let run = check(
        "{\"target_coverage\": [\n  {\"target\": \"docs/a.md\", \"status\": \"unchanged\",}\n]}\n",
    );
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: evidence.json:2:49: entry 0: trailing comma
        hint: see docs/plan-format.md#evidence for the evidence format
        ");

    let run = check("{\"target_coverage\": [],\n \"notes\": \"hi\"}\n");
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: evidence.json:2:8: unknown field `notes`, expected `target_coverage` or `usage`
        hint: see docs/plan-format.md#evidence for the evidence format
        ");

    let run = check(
        "{\"target_coverage\": [\n  {\"target\": \"docs/a.md\", \"status\": \"skipped\", \"reason\": \"the page is fine as it is\"}\n]}\n",
    );
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: evidence.json:2:45: entry 0: unknown variant `skipped`, expected `changed` or `unchanged`
        hint: see docs/plan-format.md#evidence for the evidence format
        ");

    // An entry that breaks a rule of its own is located at its closing brace, as serde's
    // "missing field" is, whether or not another entry follows it on the next line.
    let run = check(
        "{\"target_coverage\": [\n  {\"status\": \"unchanged\", \"reason\": \"a reason for nothing\"}\n]}\n",
    );
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: evidence.json:2:59: entry 0: missing field `target`
        hint: see docs/plan-format.md#evidence for the evidence format
        ");

    let run = check(
        "{\"target_coverage\": [\n  {\"target\": \"docs/a.md\", \"status\": \"unchanged\"}\n]}\n",
    );
    assert_snapshot!(run.to_string(), @r#"
        exit: 2
        --- stderr
        error: evidence.json:2:48: entry 0: target "docs/a.md": status "unchanged" requires "reason": why the target needed no change
        hint: see docs/plan-format.md#evidence for the evidence format
        "#);

    let run = check(
        "{\"target_coverage\": [\n  {\"target\": \"docs/a.md\", \"status\": \"unchanged\"},\n  {\"target\": \"docs/b.md\", \"status\": \"changed\", \"paths\": [\"docs/b.md\"]}\n]}\n",
    );
    assert_snapshot!(run.to_string(), @r#"
        exit: 2
        --- stderr
        error: evidence.json:2:48: entry 0: target "docs/a.md": status "unchanged" requires "reason": why the target needed no change
        hint: see docs/plan-format.md#evidence for the evidence format
        "#);

    let run = verify(
        &repo,
        &["plans/p.md", "--base", "main", "--evidence", "missing.json"],
    );
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: cannot read evidence missing.json: no such file
        ");
}

// ---------------------------------------------------------------------------------------------
// Bad plans, configuration, revisions and environments: exit 2 with `error:` and `hint:`

/// Writes `plans/bad.md` and verifies it.
fn check_plan(repo: &TestRepo, bytes: &[u8]) -> Run {
    std::fs::write(repo.path("plans/bad.md"), bytes).unwrap();
    verify(repo, &["plans/bad.md", "--base", "main"])
}

#[test]
fn bad_plans_are_located() {
    let repo = repo_on_feature(&[("plans/.keep", ""), ("docs/a.md", "a\n")]);

    let run = check_plan(&repo, b"---\ntitle: Typo\ntaregts:\n  - docs/a.md\n---\n");
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: plans/bad.md:3:1: unknown key `taregts` in plan frontmatter
        hint: did you mean `targets`?
        ");

    let run = check_plan(
        &repo,
        b"---\ntargets:\n  - docs/a.md\n  - /docs/b.md\n---\n",
    );
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: plans/bad.md:4:5: target `/docs/b.md` is an absolute path
        hint: targets are relative to the repository root: `docs/b.md`
        ");

    let run = check_plan(&repo, b"---\ntargets:\n  - docs/../../outside.md\n---\n");
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: plans/bad.md:3:5: target `docs/../../outside.md` contains a `..` component
        hint: targets name paths inside the repository, relative to its root
        ");

    let run = check_plan(&repo, b"---\ntargets:\n  - .git/hooks/pre-commit\n---\n");
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: plans/bad.md:3:5: target `.git/hooks/pre-commit` points into the `.git` directory
        hint: git's own files are never part of a change; remove this target
        ");

    let run = check_plan(
        &repo,
        b"---\ntargets:\n  - docs/a.md\n  - docs/b.md\n  - ./docs/a.md\n---\n",
    );
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: plans/bad.md:5:5: duplicate target `./docs/a.md`: line 3 already lists it as `docs/a.md`
        hint: list each path once
        ");

    let run = check_plan(&repo, b"---\ntargets:\n  - docs/[a.md\n---\n");
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: plans/bad.md:3:5: invalid glob `docs/[a.md`: unclosed character class; missing ']'
        hint: to match `[`, `{`, `*` or `?` literally, wrap it in brackets, e.g. `[[]`
        ");

    let run = check_plan(
        &repo,
        b"# A plan without frontmatter\n\ntargets: docs/a.md\n",
    );
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: plans/bad.md:1:1: plan must start with a `---` frontmatter line, found `# A plan without frontmatter`
        hint: a plan starts with a frontmatter block, e.g.
        hint: ---
        hint: targets:
        hint:   - docs/a.md
        hint: ---
        ");

    // Located like every other plan error: at the first byte that is not UTF-8.
    let run = check_plan(&repo, b"---\ntargets:\n  - docs/caf\xe9.md\n---\n");
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: plans/bad.md:3:13: plan is not valid UTF-8
        ");

    let run = verify(&repo, &["plans/missing.md", "--base", "main"]);
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: cannot read plan plans/missing.md: no such file
        ");
}

#[test]
fn bad_config_is_located() {
    let repo = repo_on_feature(&[
        (".baton.yml", "# gate settings\nplan_dir: work/plans\n"),
        ("plans/p.md", &plan("Docs", &["docs/a.md"])),
    ]);
    let run = verify(&repo, &["plans/p.md", "--base", "main"]);
    assert_snapshot!(run.to_string(), @r#"
        exit: 2
        --- stderr
        error: .baton.yml:2:1: unknown field `plan_dir`, expected one of plans_dir, actors, pipeline, coverage, worktree_root, prompts, require_targets, log_limit
        hint: did you mean `plans_dir`?
        "#);
}

#[test]
fn bad_revisions_and_usage() {
    let repo = repo_on_feature(&[("plans/p.md", &plan("Docs", &["docs/a.md"]))]);

    let run = verify(&repo, &["plans/p.md", "--base", "origin/main"]);
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: unknown revision `origin/main`
        hint: name a branch, tag or commit that exists here; in CI, fetch it first
        ");

    let run = verify(
        &repo,
        &["plans/p.md", "--base", "main", "--head", "no-such-branch"],
    );
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: unknown revision `no-such-branch`
        hint: name a branch, tag or commit that exists here; in CI, fetch it first
        ");

    let run = verify(&repo, &["plans/p.md"]);
    assert_snapshot!(run.to_string(), @r#"
        exit: 1
        --- stdout
        verifying the worktree against HEAD (merge base 89e13893e3fb)

        plan plans/p.md (p): failed: 1 of 1 target uncovered
          uncovered  docs/a.md  no change and no reason (plans/p.md:4)

        gate failed: 1 of 1 plan(s) not covered
        hint: change each uncovered target, or record why it needed no change:
        hint:   a commit trailer `Baton-Unchanged: <target>: <specific reason>`, or
        hint:   an `unchanged` entry with a reason in an --evidence file
        "#);
}

/// Outside any repository: git's wording and a hint, whether discovery stopped at the root or
/// at a `GIT_CEILING_DIRECTORIES` entry.
#[test]
fn outside_a_repository() {
    let repo = TestRepo::new();
    let outside = repo.tmp().join("outside/sub");
    std::fs::create_dir_all(&outside).unwrap();
    let run = repo.baton_env(
        &outside,
        ["verify", "--base", "main"],
        &[("GIT_CEILING_DIRECTORIES", repo.tmp().as_os_str())],
    );
    assert_snapshot!(run.to_string(), @r#"
        exit: 2
        --- stderr
        error: not a git repository (or any of the parent directories): $TMP/outside/sub
        hint: run git-baton inside a git repository or one of its linked worktrees
        "#);

    // Without a ceiling, discovery walks up to `/`; that needs a machine whose temporary
    // directory is not itself inside a repository.
    if repo
        .git_output(&outside, ["rev-parse", "--git-dir"])
        .status
        .success()
    {
        eprintln!(
            "{} is inside a git repository; skipped the run without a ceiling",
            outside.display()
        );
        return;
    }
    let run = repo.baton_in(&outside, ["verify", "--base", "main"]);
    assert_snapshot!(run.to_string(), @r#"
        exit: 2
        --- stderr
        error: not a git repository (or any of the parent directories): $TMP/outside/sub
        hint: run git-baton inside a git repository or one of its linked worktrees
        "#);
}

// ---------------------------------------------------------------------------------------------
// Plans without targets

#[test]
fn plan_without_targets_is_unverified() {
    let repo = repo_on_feature(&[("plans/notes.md", "---\ntitle: Just notes\n---\n# Notes\n")]);
    repo.write("docs/a.md", "anything\n");

    let run = verify(&repo, &["plans/notes.md", "--base", "main"]);
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 0
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/notes.md (notes): unverified: the plan declares no targets, so nothing was checked

        gate passed
        ");

    let run = verify(&repo, &["plans/notes.md", "--base", "main", "--json"]);
    let json = run.json();
    assert_eq!(json["passed"], true);
    assert_eq!(json["plans"][0]["coverage"]["verified"], false);
    assert_eq!(json["plans"][0]["coverage"]["passed"], true);
    assert_eq!(json["plans"][0]["coverage"]["targets"], json!([]));

    let run = verify(
        &repo,
        &["plans/notes.md", "--base", "main", "--require-targets"],
    );
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 1
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/notes.md (notes): failed: the plan declares no targets, so nothing was checked

        gate failed: 1 of 1 plan(s) not covered
        ");

    let run = verify(
        &repo,
        &["plans/notes.md", "--base", "main", "--format", "github"],
    );
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 0
        --- stdout
        ::warning file=plans/notes.md,line=1::the plan declares no targets, so the coverage gate verified nothing
        verifying the worktree against main (merge base <main>)

        plan plans/notes.md (notes): unverified: the plan declares no targets, so nothing was checked

        gate passed
        ");
}

// ---------------------------------------------------------------------------------------------
// Output formats

/// GitHub shows 10 error annotations per step: the rest are counted in a notice, and the full
/// table goes to the job summary, appended after what earlier steps wrote.
#[test]
fn github_format_annotations_and_step_summary() {
    let targets: Vec<String> = (1..=12).map(|i| format!("docs/page-{i:02}.md")).collect();
    let mut targets: Vec<&str> = targets.iter().map(String::as_str).collect();
    targets[1] = "docs/a,b: c.md";
    let repo = repo_on_feature(&[("plans/x.md", &plan("Many pages", &targets))]);
    let summary = repo.tmp().join("summary.md");
    std::fs::write(&summary, "# Earlier step\n\n").unwrap();

    let run = repo.baton_env(
        &repo.root,
        [
            "verify",
            "plans/x.md",
            "--base",
            "main",
            "--format",
            "github",
        ],
        &[("GITHUB_STEP_SUMMARY", summary.as_os_str())],
    );
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 1
        --- stdout
        ::error file=plans/x.md,line=4,title=uncovered target docs/page-01.md::`docs/page-01.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=5,title=uncovered target docs/a%2Cb%3A c.md::`docs/a,b: c.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=6,title=uncovered target docs/page-03.md::`docs/page-03.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=7,title=uncovered target docs/page-04.md::`docs/page-04.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=8,title=uncovered target docs/page-05.md::`docs/page-05.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=9,title=uncovered target docs/page-06.md::`docs/page-06.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=10,title=uncovered target docs/page-07.md::`docs/page-07.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=11,title=uncovered target docs/page-08.md::`docs/page-08.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=12,title=uncovered target docs/page-09.md::`docs/page-09.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=13,title=uncovered target docs/page-10.md::`docs/page-10.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::notice::2 more annotation(s) left out (GitHub shows 10 per step); see the job summary
        verifying the worktree against main (merge base <main>)

        plan plans/x.md (x): failed: 12 of 12 targets uncovered
          uncovered  docs/page-01.md  no change and no reason (plans/x.md:4)
          uncovered  docs/a,b: c.md   no change and no reason (plans/x.md:5)
          uncovered  docs/page-03.md  no change and no reason (plans/x.md:6)
          uncovered  docs/page-04.md  no change and no reason (plans/x.md:7)
          uncovered  docs/page-05.md  no change and no reason (plans/x.md:8)
          uncovered  docs/page-06.md  no change and no reason (plans/x.md:9)
          uncovered  docs/page-07.md  no change and no reason (plans/x.md:10)
          uncovered  docs/page-08.md  no change and no reason (plans/x.md:11)
          uncovered  docs/page-09.md  no change and no reason (plans/x.md:12)
          uncovered  docs/page-10.md  no change and no reason (plans/x.md:13)
          uncovered  docs/page-11.md  no change and no reason (plans/x.md:14)
          uncovered  docs/page-12.md  no change and no reason (plans/x.md:15)

        gate failed: 1 of 1 plan(s) not covered
        hint: change each uncovered target, or record why it needed no change:
        hint:   a commit trailer `Baton-Unchanged: <target>: <specific reason>`, or
        hint:   an `unchanged` entry with a reason in an --evidence file
        ");

    let head = repo.git(["rev-parse", "--short=12", "main"]);
    let written = std::fs::read_to_string(&summary)
        .unwrap()
        .replace(head.trim(), "<main>");
    assert_snapshot!(written, @r"
        # Earlier step

        ## git-baton coverage: failed

        Checked the worktree against main (merge base `<main>`).

        ### `plans/x.md` (x): failed: 12 of 12 targets uncovered

        | target | status | paths or reason |
        |---|---|---|
        | `docs/page-01.md` | uncovered | **no change and no reason** |
        | `docs/a,b: c.md` | uncovered | **no change and no reason** |
        | `docs/page-03.md` | uncovered | **no change and no reason** |
        | `docs/page-04.md` | uncovered | **no change and no reason** |
        | `docs/page-05.md` | uncovered | **no change and no reason** |
        | `docs/page-06.md` | uncovered | **no change and no reason** |
        | `docs/page-07.md` | uncovered | **no change and no reason** |
        | `docs/page-08.md` | uncovered | **no change and no reason** |
        | `docs/page-09.md` | uncovered | **no change and no reason** |
        | `docs/page-10.md` | uncovered | **no change and no reason** |
        | `docs/page-11.md` | uncovered | **no change and no reason** |
        | `docs/page-12.md` | uncovered | **no change and no reason** |
        ");
}

/// A $GITHUB_STEP_SUMMARY that cannot be appended to is an error of the environment (exit 2).
#[test]
fn github_format_with_an_unwritable_step_summary() {
    let repo = repo_on_feature(&[
        ("plans/x.md", &plan("One", &["docs/a.md"])),
        ("docs/a.md", "a\n"),
    ]);
    repo.write("docs/a.md", "a2\n");
    let dir = repo.tmp().join("no/such/dir/summary.md");
    let run = repo.baton_env(
        &repo.root,
        [
            "verify",
            "plans/x.md",
            "--base",
            "main",
            "--format",
            "github",
        ],
        &[("GITHUB_STEP_SUMMARY", dir.as_os_str())],
    );
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r#"
        exit: 2
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/x.md (x): passed: 1 target covered
          changed    docs/a.md  docs/a.md

        gate passed
        --- stderr
        error: cannot append to $GITHUB_STEP_SUMMARY ($TMP/no/such/dir/summary.md): no such file
        "#);
}

/// One plan with a changed, an unchanged and an uncovered target, in Markdown and JSON.
#[test]
fn markdown_and_json_formats() {
    let repo = repo_on_feature(&[
        (
            "plans/p.md",
            &plan("Docs | pipes", &["docs/a.md", "docs/b.md", "docs/c.md"]),
        ),
        ("docs/a.md", "a\n"),
        ("docs/b.md", "b\n"),
        ("docs/c.md", "c\n"),
    ]);
    repo.write("docs/a.md", "a2\n");
    repo.write(
        "evidence.json",
        r#"{"target_coverage": [{"target": "docs/b.md", "status": "unchanged", "reason": "page b | the table cell must escape this pipe"}]}"#,
    );
    let args = [
        "plans/p.md",
        "--base",
        "main",
        "--evidence",
        "evidence.json",
    ];

    let run = verify(&repo, &[&args[..], &["--format", "markdown"]].concat());
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 1
        --- stdout
        ## git-baton coverage: failed

        Checked the worktree against main (merge base `<main>`).

        ### `plans/p.md` (p): failed: 1 of 3 targets uncovered

        | target | status | paths or reason |
        |---|---|---|
        | `docs/a.md` | changed | `docs/a.md` |
        | `docs/b.md` | unchanged | page b \| the table cell must escape this pipe |
        | `docs/c.md` | uncovered | **no change and no reason** |
        ");

    let run = verify(&repo, &[&args[..], &["--json"]].concat());
    let json = run.json();
    assert_eq!(json["passed"], false);
    assert_eq!(json["base"], "main");
    assert_eq!(json["head"], serde_json::Value::Null);
    assert_eq!(json["plans"][0]["path"], "plans/p.md");
    assert_eq!(json["plans"][0]["id"], "p");
    assert_eq!(json["plans"][0]["title"], "Docs | pipes");
    let coverage = &json["plans"][0]["coverage"];
    assert_eq!(coverage["verified"], true);
    assert_eq!(coverage["passed"], false);
    let rows: Vec<serde_json::Value> = coverage["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| json!([t["target"], t["status"], t["paths"], t["reason"], t["line"]]))
        .collect();
    assert_eq!(
        rows,
        [
            json!(["docs/a.md", "changed", ["docs/a.md"], null, 4]),
            json!([
                "docs/b.md",
                "unchanged",
                [],
                "page b | the table cell must escape this pipe",
                5
            ]),
            json!(["docs/c.md", "uncovered", [], null, 6]),
        ]
    );
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r#"
        exit: 1
        --- stdout
        {
          "passed": false,
          "base": "main",
          "merge_base": "<main>",
          "head": null,
          "head_commit": null,
          "require_targets": false,
          "plans": [
            {
              "path": "plans/p.md",
              "id": "p",
              "title": "Docs | pipes",
              "coverage": {
                "verified": true,
                "passed": false,
                "targets": [
                  {
                    "target": "docs/a.md",
                    "status": "changed",
                    "paths": [
                      "docs/a.md"
                    ],
                    "reason": null,
                    "reason_source": null,
                    "line": 4
                  },
                  {
                    "target": "docs/b.md",
                    "status": "unchanged",
                    "paths": [],
                    "reason": "page b | the table cell must escape this pipe",
                    "reason_source": {
                      "kind": "file",
                      "path": "evidence.json",
                      "index": 0
                    },
                    "line": 5
                  },
                  {
                    "target": "docs/c.md",
                    "status": "uncovered",
                    "paths": [],
                    "reason": null,
                    "reason_source": null,
                    "line": 6
                  }
                ],
                "problems": [],
                "contradictions": []
              }
            }
          ],
          "plans_dir": null
        }
        "#);

    // --json is --format json, and the two do not combine.
    let run = verify(
        &repo,
        &[&args[..], &["--json", "--format", "text"]].concat(),
    );
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: the argument '--json' cannot be used with '--format <FORMAT>'

        Usage: git baton verify --base <REV> --evidence <FILE> --json <PLAN>...

        For more information, try '--help'.
        ");
}

// ---------------------------------------------------------------------------------------------
// Where git-baton runs

/// In a linked worktree, its own changes count and those of the main worktree do not; from a
/// subdirectory, with a plan path relative to it, exactly as from its top.
#[test]
fn linked_worktree_from_a_subdirectory() {
    let repo = TestRepo::new();
    repo.write("plans/p.md", &plan("Two docs", &["docs/a.md", "docs/b.md"]));
    repo.write("docs/a.md", "a\n");
    repo.write("docs/b.md", "b\n");
    repo.commit_all("base");
    repo.git(["worktree", "add", "-q", "-b", "feature", "../linked"]);
    let linked = repo.tmp().join("linked");
    std::fs::write(
        linked.join("docs/a.md"),
        "a, edited in the linked worktree\n",
    )
    .unwrap();
    repo.write("docs/b.md", "b, edited in the main worktree\n");

    let run = repo.baton_in(&linked, ["verify", "plans/p.md", "--base", "main"]);
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 1
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): failed: 1 of 2 targets uncovered
          changed    docs/a.md  docs/a.md
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)

        gate failed: 1 of 1 plan(s) not covered
        hint: change each uncovered target, or record why it needed no change:
        hint:   a commit trailer `Baton-Unchanged: <target>: <specific reason>`, or
        hint:   an `unchanged` entry with a reason in an --evidence file
        ");

    let run = repo.baton_in(
        &linked.join("docs"),
        ["verify", "../plans/p.md", "--base", "main"],
    );
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 1
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): failed: 1 of 2 targets uncovered
          changed    docs/a.md  docs/a.md
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)

        gate failed: 1 of 1 plan(s) not covered
        hint: change each uncovered target, or record why it needed no change:
        hint:   a commit trailer `Baton-Unchanged: <target>: <specific reason>`, or
        hint:   an `unchanged` entry with a reason in an --evidence file
        ");

    // Discovery from the subdirectory finds the linked worktree's new plan, by its repo path.
    std::fs::write(linked.join("plans/q.md"), plan("One doc", &["docs/a.md"])).unwrap();
    let run = repo.baton_in(&linked.join("docs"), ["verify", "--base", "main"]);
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 0
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/q.md (q): passed: 1 target covered
          changed    docs/a.md  docs/a.md

        gate passed
        ");
}

/// The worktree mode sees the same changes from any directory of the worktree: committed,
/// unstaged and untracked ones.
#[test]
fn worktree_mode_from_a_subdirectory() {
    let repo = repo_on_feature(&[
        (
            "plans/p.md",
            &plan("Three docs", &["docs/a.md", "docs/b.md", "docs/new.md"]),
        ),
        ("docs/a.md", "a\n"),
        ("docs/b.md", "b\n"),
    ]);
    repo.write("docs/a.md", "a, committed\n");
    repo.commit_all("a");
    repo.write("docs/b.md", "b, not staged\n");
    repo.write("docs/new.md", "untracked\n");

    let run = verify(&repo, &["plans/p.md", "--base", "main"]);
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 0
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): passed: all 3 targets covered
          changed    docs/a.md    docs/a.md
          changed    docs/b.md    docs/b.md
          changed    docs/new.md  docs/new.md

        gate passed
        ");

    let run = repo.baton_in(
        &repo.path("docs"),
        ["verify", "../plans/p.md", "--base", "main"],
    );
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 0
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): passed: all 3 targets covered
          changed    docs/a.md    docs/a.md
          changed    docs/b.md    docs/b.md
          changed    docs/new.md  docs/new.md

        gate passed
        ");
}

/// In a shallow clone the merge base of diverged branches may be missing: that is an error with
/// a hint to fetch more history, never a guessed base. Once the history is there, it works.
#[test]
fn shallow_clone_never_guesses_a_base() {
    let repo = TestRepo::new();
    repo.write("plans/p.md", &plan("Docs", &["docs/a.md", "docs/b.md"]));
    repo.write("docs/a.md", "a\n");
    repo.write("docs/b.md", "b\n");
    repo.commit_all("base");
    repo.git(["checkout", "-q", "-b", "feature"]);
    for i in 1..=2 {
        repo.write("docs/a.md", &format!("a{i}\n"));
        repo.commit_all(&format!("feature {i}"));
    }
    repo.git(["checkout", "-q", "main"]);
    for i in 1..=2 {
        repo.write("docs/b.md", &format!("b{i}\n"));
        repo.commit_all(&format!("main {i}"));
    }

    let url = format!("file://{}", repo.root.display());
    repo.git_in(
        repo.tmp(),
        [
            "clone", "-q", "--depth", "1", "--branch", "main", &url, "clone",
        ],
    );
    let clone = repo.tmp().join("clone");
    repo.git_in(
        &clone,
        [
            "fetch",
            "-q",
            "--depth",
            "1",
            "origin",
            "feature:refs/remotes/origin/feature",
        ],
    );
    assert_eq!(
        repo.git_in(&clone, ["rev-parse", "--is-shallow-repository"])
            .trim(),
        "true"
    );

    let args = [
        "verify",
        "plans/p.md",
        "--base",
        "origin/main",
        "--head",
        "origin/feature",
    ];
    let run = repo.baton_in(&clone, args);
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: `origin/main` and `origin/feature` have no common history visible in this repository
        hint: this is a shallow clone: fetch more history (`git fetch --unshallow`, or `fetch-depth: 0` with actions/checkout) so the merge base is reachable
        ");

    // The worktree mode needs the same merge base.
    let run = repo.baton_in(&clone, ["verify", "plans/p.md", "--base", "origin/feature"]);
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: `origin/feature` and `HEAD` have no common history visible in this repository
        hint: this is a shallow clone: fetch more history (`git fetch --unshallow`, or `fetch-depth: 0` with actions/checkout) so the merge base is reachable
        ");

    repo.git_in(
        &clone,
        [
            "fetch",
            "-q",
            "--unshallow",
            "origin",
            "feature:refs/remotes/origin/feature",
        ],
    );
    let run = repo.baton_in(&clone, args);
    assert_snapshot!(named(run, &repo, &[("main~2", "<fork>")]).to_string(), @r"
        exit: 1
        --- stdout
        verifying origin/main...origin/feature (merge base <fork>)

        plan plans/p.md (p): failed: 1 of 2 targets uncovered
          changed    docs/a.md  docs/a.md
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)

        gate failed: 1 of 1 plan(s) not covered
        hint: change each uncovered target, or record why it needed no change:
        hint:   a commit trailer `Baton-Unchanged: <target>: <specific reason>`, or
        hint:   an `unchanged` entry with a reason in an --evidence file
        ");
}

/// `chown -R` for a test tree, symlinks included.
fn chown_tree(path: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
    std::os::unix::fs::lchown(path, Some(uid), Some(gid))?;
    if path.symlink_metadata()?.is_dir() {
        for entry in std::fs::read_dir(path)? {
            chown_tree(&entry?.path(), uid, gid)?;
        }
    }
    Ok(())
}

/// A repository owned by someone else is refused the way git refuses it, with git's hint,
/// until `safe.directory` allows it. CI runs as root, so the ownership part runs there.
#[test]
fn dubious_ownership_until_safe_directory() {
    let repo = repo_on_feature(&[
        ("plans/p.md", &plan("Docs", &["docs/a.md"])),
        ("docs/a.md", "a\n"),
    ]);
    repo.write("docs/a.md", "a2\n");
    let args = ["verify", "plans/p.md", "--base", "main"];
    let main = repo.git(["rev-parse", "--short=12", "main"]);

    match chown_tree(&repo.root, 65534, 65534) {
        Ok(()) => {
            let run = repo.baton(args);
            assert_snapshot!(run.to_string(), @r"
                exit: 2
                --- stderr
                error: detected dubious ownership in repository at '$TMP/repo'
                hint: to add an exception for this directory, call:
                hint:
                hint: 	git config --global --add safe.directory $TMP/repo
                ");
            let root = repo.root.display().to_string();
            repo.git_in(
                &repo.home,
                [
                    "config",
                    "--global",
                    "--add",
                    "safe.directory",
                    root.as_str(),
                ],
            );
        }
        Err(err) if err.kind() == std::io::ErrorKind::PermissionDenied => {
            eprintln!("not root, so the dubious-ownership part could not run: chown failed: {err}");
        }
        Err(err) => panic!("chown failed: {err}"),
    }

    let run = repo.baton(args).replace(main.trim(), "<main>");
    assert_snapshot!(run.to_string(), @r"
        exit: 0
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): passed: 1 target covered
          changed    docs/a.md  docs/a.md

        gate passed
        ");
}

#[test]
fn paths_with_spaces_and_non_ascii() {
    let repo = repo_on_feature(&[
        (
            "plans/p.md",
            &plan(
                "Names",
                &[
                    "docs/my notes.md",
                    "docs/ünïcödé.md",
                    "docs/日本語/",
                    "docs/with space/",
                ],
            ),
        ),
        ("docs/my notes.md", "notes\n"),
        ("docs/ünïcödé.md", "u\n"),
        ("docs/日本語/a.md", "j\n"),
        ("docs/with space/a b.md", "s\n"),
    ]);
    repo.write("docs/my notes.md", "notes, edited\n");
    repo.write("docs/日本語/新しい.md", "new\n");
    repo.write("docs/with space/a b.md", "s2\n");
    repo.commit_all("edit");
    repo.git([
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "Explain",
        "-m",
        "Baton-Unchanged: docs/ünïcödé.md: the Unicode sample text did not change",
    ]);
    let names = [("main", "<main>"), ("HEAD", "<trailer>")];

    let run = verify(&repo, &["plans/p.md", "--base", "main"]);
    assert_snapshot!(named(run, &repo, &names).to_string(), @r"
        exit: 0
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): passed: all 4 targets covered
          changed    docs/my notes.md  docs/my notes.md
          unchanged  docs/ünïcödé.md   because: the Unicode sample text did not change (commit <trailer> trailer)
          changed    docs/日本語/         docs/日本語/新しい.md
          changed    docs/with space/  docs/with space/a b.md

        gate passed
        ");

    let run = verify(&repo, &["plans/p.md", "--base", "main", "--head", "HEAD"]);
    assert_snapshot!(named(run, &repo, &names).to_string(), @r"
        exit: 0
        --- stdout
        verifying main...HEAD (merge base <main>)

        plan plans/p.md (p): passed: all 4 targets covered
          changed    docs/my notes.md  docs/my notes.md
          unchanged  docs/ünïcödé.md   because: the Unicode sample text did not change (commit <trailer> trailer)
          changed    docs/日本語/         docs/日本語/新しい.md
          changed    docs/with space/  docs/with space/a b.md

        gate passed
        ");
}
