//! Where git-baton runs: linked worktrees, subdirectories, and paths with spaces or non-ASCII
//! characters.

use super::*;

/// In a linked worktree, its own changes count and those of the main worktree do not; from a
/// subdirectory, with a plan path relative to it, exactly as from its top.
#[test]
fn linked_worktree_from_a_subdirectory() {
    let repo = TestRepo::with().two_docs().commit();
    repo.git(["worktree", "add", "-q", "-b", "feature", "../linked"]);
    let linked = repo.tmp().join("linked");
    std::fs::write(
        linked.join("docs/a.md"),
        "a, edited in the linked worktree\n",
    )
    .unwrap();
    repo.write("docs/b.md", "b, edited in the main worktree\n");

    let run = repo.baton_in(&linked, ["verify", "plans/p.md", "--base", "main"]);
    let from_the_top = named(run, &repo, &[("main", "<main>")]).to_string();
    assert_snapshot!(from_the_top, @r"
        exit: 1
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): failed: 1 of 2 targets uncovered
          changed    docs/a.md  docs/a.md
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)

        gate failed: 1 of 1 plan(s) not covered
        <the covering hint>
        ");

    let run = repo.baton_in(
        &linked.join("docs"),
        ["verify", "../plans/p.md", "--base", "main"],
    );
    let from_docs = named(run, &repo, &[("main", "<main>")]).to_string();
    assert_same(&from_docs, &from_the_top, &[]);

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
    let repo = TestRepo::with()
        .plan(
            "plans/p.md",
            "Three docs",
            &["docs/a.md", "docs/b.md", "docs/new.md"],
        )
        .named(&["docs/a.md", "docs/b.md"])
        .on_feature();
    repo.write("docs/a.md", "a, committed\n");
    repo.commit_all("a");
    repo.write("docs/b.md", "b, not staged\n");
    repo.write("docs/new.md", "untracked\n");

    let from_the_top = gate(&repo, "plans/p.md --base main");
    assert_snapshot!(from_the_top, @r"
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
    let from_docs = named(run, &repo, &[("main", "<main>")]).to_string();
    assert_same(&from_docs, &from_the_top, &[]);
}

#[test]
fn paths_with_spaces_and_non_ascii() {
    let targets = [
        "docs/my notes.md",
        "docs/ünïcödé.md",
        "docs/日本語/",
        "docs/with space/",
    ];
    let repo = TestRepo::with()
        .plan("plans/p.md", "Names", &targets)
        .files(&[("docs/my notes.md", "notes\n"), ("docs/ünïcödé.md", "u\n")])
        .files(&[
            ("docs/日本語/a.md", "j\n"),
            ("docs/with space/a b.md", "s\n"),
        ])
        .on_feature();
    repo.write("docs/my notes.md", "notes, edited\n");
    repo.write("docs/日本語/新しい.md", "new\n");
    repo.write("docs/with space/a b.md", "s2\n");
    repo.commit_all("edit");
    repo.commit_message(
        "Explain",
        "Baton-Unchanged: docs/ünïcödé.md: the Unicode sample text did not change",
    );
    let names = [("main", "<main>"), ("HEAD", "<trailer>")];

    let run = verify(&repo, "plans/p.md --base main");
    let worktree = named(run, &repo, &names).to_string();
    assert_snapshot!(worktree, @r"
        exit: 0
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): passed: all 4 targets covered
          changed    docs/my notes.md  docs/my notes.md
          unchanged  docs/ünïcödé.md   because: the Unicode sample text did not change (commit <trailer> trailer)
          changed    docs/日本語/      docs/日本語/新しい.md
          changed    docs/with space/  docs/with space/a b.md

        gate passed
        ");

    let run = verify(&repo, "plans/p.md --base main --head HEAD");
    assert_same(
        &named(run, &repo, &names).to_string(),
        &worktree,
        &[("the worktree against main", "main...HEAD")],
    );
}

/// A target inside a submodule names the submodule's file, which no change of this repository
/// holds: the gate says it is not covered (git refuses to be asked whether such a path is
/// ignored, which must not end the command).
#[test]
fn a_target_inside_a_submodule_is_judged_not_a_git_error() {
    let sub = TestRepo::new();
    sub.write("i.txt", "i\n");
    sub.commit_all("i");
    let repo = TestRepo::new();
    repo.write("r.txt", "r\n");
    repo.add_submodule(&sub.root, "sub");
    repo.write(
        "plans/p.md",
        &plan("In the submodule", &["sub/i.txt", "r.txt"]),
    );
    repo.commit_all("init");
    repo.write("r.txt", "r changed\n");
    let run = verify(&repo, "plans/p.md --base main --json");
    assert_eq!(run.code, 1, "{run}");
    let targets = &run.json()["plans"][0]["coverage"]["targets"];
    assert_eq!(targets[0]["target"], "sub/i.txt");
    assert_ne!(targets[0]["status"], "changed", "{targets:#}");
    assert_eq!(targets[1]["status"], "changed", "{targets:#}");
}
