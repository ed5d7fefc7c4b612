//! What the work is diffed against: the merge base in `--head` mode, revisions that do not
//! resolve, and shallow clones that lack the base.

use super::*;

/// Commits that land on the base branch after the fork are not the branch's work, in either
/// mode; with --head, uncommitted changes in the worktree are not either.
#[test]
fn head_mode_diffs_against_the_merge_base() {
    let repo = TestRepo::with().two_docs().on_feature();
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
    let run = verify(&repo, "plans/p.md --base main");
    let worktree = named(run, &repo, &names).to_string();
    assert_snapshot!(worktree, @r"
        exit: 1
        --- stdout
        verifying the worktree against main (merge base <fork>)

        plan plans/p.md (p): failed: 1 of 2 targets uncovered
          changed    docs/a.md  docs/a.md
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)

        gate failed: 1 of 1 plan(s) not covered
        <the covering hint>
        ");

    // The commit, from a worktree that has changed b without committing it.
    repo.write("docs/b.md", "uncommitted\n");
    let run = verify(&repo, "plans/p.md --base main --head feature");
    assert_same(
        &named(run, &repo, &names).to_string(),
        &worktree,
        &[("the worktree against main", "main...feature")],
    );

    let json = verify(&repo, "plans/p.md --base main --head feature --json").json();
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

#[test]
fn bad_revisions_and_usage() {
    let repo = TestRepo::with()
        .plan("plans/p.md", "Docs", &["docs/a.md"])
        .on_feature();

    let unknown_base = verify(&repo, "plans/p.md --base origin/main").to_string();
    assert_snapshot!(unknown_base, @r"
        exit: 2
        --- stderr
        error: unknown revision `origin/main`
        hint: name a branch, tag or commit that exists here; in CI, fetch it first
        ");
    assert_same(
        &verify(&repo, "plans/p.md --base main --head no-such-branch").to_string(),
        &unknown_base,
        &[("`origin/main`", "`no-such-branch`")],
    );

    let run = verify(&repo, "plans/p.md");
    assert_snapshot!(run.to_string(), @r#"
        exit: 1
        --- stdout
        verifying the worktree against HEAD (merge base 89e13893e3fb)

        plan plans/p.md (p): failed: 1 of 1 target missing
          missing    docs/a.md  names no path (plans/p.md:4)

        gate failed: 1 of 1 plan(s) not covered
        hint: a missing target names no path at the merge base, the head or in the worktree:
        hint: correct it in the plan, or create the path it names
        "#);
}

/// In a shallow clone the merge base of diverged branches may be missing: that is an error with
/// a hint to fetch more history, never a guessed base. Once the history is there, it works.
#[test]
fn shallow_clone_never_guesses_a_base() {
    let repo = TestRepo::with()
        .plan("plans/p.md", "Docs", &["docs/a.md", "docs/b.md"])
        .named(&["docs/a.md", "docs/b.md"])
        .on_feature();
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
    let shallow = repo.baton_in(&clone, args).to_string();
    assert_snapshot!(shallow, @r"
        exit: 2
        --- stderr
        error: `origin/main` and `origin/feature` have no common history visible in this repository
        hint: this is a shallow clone: fetch more history (`git fetch --unshallow`, or `fetch-depth: 0` with actions/checkout) so the merge base is reachable
        ");

    // The worktree mode needs the same merge base.
    let run = repo.baton_in(&clone, ["verify", "plans/p.md", "--base", "origin/feature"]);
    assert_same(
        &run.to_string(),
        &shallow,
        &[(
            "`origin/main` and `origin/feature`",
            "`origin/feature` and `HEAD`",
        )],
    );

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
        <the covering hint>
        ");
}
