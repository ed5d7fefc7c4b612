//! The coverage rule end to end: uncovered targets and reasons, directory and glob targets,
//! deletions and renames, plans without targets.

use super::*;

/// A failed gate ends by saying both ways to give a reason (the other snapshots show these
/// lines as `<the covering hint>`, through `named`).
#[test]
fn the_covering_hint_names_both_ways_to_give_a_reason() {
    let repo = TestRepo::with().one_doc().on_feature();
    let run = verify(&repo, "plans/p.md --base main");
    assert_eq!(run.code, 1, "{run}");
    let end = &run.stdout[run.stdout.find("gate failed").expect("a verdict")..];
    assert_snapshot!(end, @r"
        gate failed: 1 of 1 plan(s) not covered
        hint: change each uncovered target, or record why it needed no change:
        hint:   a commit trailer `Baton-Unchanged: <target>: <specific reason>`, or
        hint:   an `unchanged` entry with a reason in an --evidence file
        ");
    assert!(run.stdout.ends_with(COVERING_HINT.0), "{run}");
}

/// The incident the gate exists for: a plan promised three documents, the work touched one,
/// and the stage was recorded as finished. The gate names the two it did not touch, at their
/// plan lines; a specific reason for each (one in an evidence file, one in a commit trailer)
/// then lets it pass.
#[test]
fn incident_uncovered_targets_then_reasons() {
    let docs = ["docs/install.md", "docs/usage.md", "docs/faq.md"];
    let repo = TestRepo::with()
        .plan("plans/docs-refresh.md", "Refresh the docs", &docs)
        .files(&[
            (docs[0], "Install it.\n"),
            (docs[1], "Use it.\n"),
            (docs[2], "Ask.\n"),
        ])
        .on_feature();
    repo.write("docs/install.md", "Install it with cargo.\n");
    repo.commit_all("Update the install docs");

    assert_snapshot!(gate(&repo, "plans/docs-refresh.md --base main"), @r"
        exit: 1
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/docs-refresh.md (docs-refresh): failed: 2 of 3 targets uncovered
          changed    docs/install.md  docs/install.md
          uncovered  docs/usage.md    no change and no reason (plans/docs-refresh.md:5)
          uncovered  docs/faq.md      no change and no reason (plans/docs-refresh.md:6)

        gate failed: 1 of 1 plan(s) not covered
        <the covering hint>
        ");

    repo.write(
        "evidence.json",
        r#"{"target_coverage": [
  {"target": "docs/install.md", "status": "changed", "paths": ["docs/install.md"]},
  {"target": "docs/usage.md", "status": "unchanged", "reason": "the usage page documents flags this change does not touch"}
]}
"#,
    );
    repo.commit_message(
        "Record why the FAQ stays",
        "Baton-Unchanged: docs/faq.md: no FAQ entry mentions the install steps",
    );
    let run = verify(
        &repo,
        "plans/docs-refresh.md --base main --evidence evidence.json",
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

#[test]
fn directory_and_glob_targets() {
    let targets = [
        "src/parser/",
        "src/lexer/",
        "tests/**/*_golden.txt",
        "docs/*.md",
        "pages/[id].tsx",
    ];
    let repo = TestRepo::with()
        .plan("plans/p.md", "Parser", &targets)
        .files(&[
            ("src/parser/mod.rs", "mod deep;\n"),
            ("src/parser/deep/mod.rs", "\n"),
        ])
        .files(&[("src/lexer/mod.rs", "\n"), ("src/lexer-old.rs", "\n")])
        .files(&[("tests/x/y_golden.txt", "y\n"), ("tests/golden.txt", "g\n")])
        .files(&[
            ("docs/guide.md", "guide\n"),
            ("docs/deep/page.md", "page\n"),
        ])
        .file("pages/[id].tsx", "page\n")
        .on_feature();
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
    assert_snapshot!(gate(&repo, "plans/p.md --base main"), @r"
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
        <the covering hint>
        ");
}

/// A deletion is a change; a rename changes both its old and its new path (git's rename
/// detection must not hide the old one), in the worktree and between commits.
#[test]
fn deleted_and_renamed_paths_count_as_changed() {
    let targets = ["docs/removed.md", "docs/old-name.md", "docs/new-name.md"];
    let repo = TestRepo::with()
        .plan("plans/p.md", "Move docs", &targets)
        .file("docs/removed.md", "going away\n")
        .file(
            "docs/old-name.md",
            "a page long enough for rename detection\nwith a second line\n",
        )
        .on_feature();
    repo.git(["rm", "-q", "docs/removed.md"]);
    repo.git(["mv", "docs/old-name.md", "docs/new-name.md"]);
    let worktree = gate(&repo, "plans/p.md --base main");
    assert_snapshot!(worktree, @r"
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
    assert_same(
        &gate(&repo, "plans/p.md --base main --head HEAD"),
        &worktree,
        &[("the worktree against main", "main...HEAD")],
    );
}

#[test]
fn plan_without_targets_is_unverified() {
    let repo = TestRepo::with()
        .file("plans/notes.md", "---\ntitle: Just notes\n---\n# Notes\n")
        .on_feature();
    repo.write("docs/a.md", "anything\n");

    let unverified = gate(&repo, "plans/notes.md --base main");
    assert_snapshot!(unverified, @r"
        exit: 0
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/notes.md (notes): unverified: the plan declares no targets, so nothing was checked

        gate passed
        ");

    let json = verify(&repo, "plans/notes.md --base main --json").json();
    assert_eq!(json["passed"], true);
    assert_eq!(json["plans"][0]["coverage"]["verified"], false);
    assert_eq!(json["plans"][0]["coverage"]["passed"], true);
    assert_eq!(json["plans"][0]["coverage"]["targets"], json!([]));

    assert_snapshot!(gate(&repo, "plans/notes.md --base main --require-targets"), @r"
        exit: 1
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/notes.md (notes): failed: the plan declares no targets, so nothing was checked

        gate failed: 1 of 1 plan(s) not covered
        ");

    let warning = "::warning file=plans/notes.md,line=1::the plan declares no targets, so the coverage gate verified nothing";
    let run = verify(&repo, "plans/notes.md --base main --format github");
    assert_same(
        &named(tokenless(run, &repo), &repo, &[("main", "<main>")]).to_string(),
        &unverified,
        &[
            (
                "--- stdout\n",
                &format!("--- stdout\n{warning}\n::stop-commands::<token>\n"),
            ),
            ("gate passed", "gate passed\n::<token>::"),
        ],
    );
}
