//! `git baton targets`: the paths a plan's body names, derived against a commit's tree.

use super::*;

const BODY: &str = "# Fix the three CDFD documents\n\
\n\
Apply the grading rule to [the overview](../docs/cdfd-overview.md), `docs/cdfd-check.md`\n\
and docs/cdfd-action.md. Add `docs/CHANGELOG.md` for it.\n\
\n\
```sh\n\
cat docs/never.md\n\
```\n\
See https://example.com/docs/x.md, node.js, and `docs/typo/x.md`.\n";

fn repo_with(plan_text: &str) -> TestRepo {
    let repo = TestRepo::new();
    for doc in ["overview", "check", "action"] {
        repo.write(&format!("docs/cdfd-{doc}.md"), "text\n");
    }
    repo.write("plans/p.md", plan_text);
    repo.commit_all("base");
    repo
}

#[test]
fn a_plan_without_targets_gets_them_from_its_body() {
    let repo = repo_with(&format!("---\ntitle: Grade review\n---\n{BODY}"));
    let run = repo.baton(["targets", "plans/p.md"]);
    assert_snapshot!(named(run, &repo, &[("HEAD", "<base>")]).to_string(), @r"
    exit: 0
    --- stdout
    # derived from the body of plans/p.md at <base>
    targets:
      - docs/cdfd-overview.md  # line 6, link
      - docs/cdfd-check.md     # line 6, code span
      - docs/cdfd-action.md    # line 7, prose
      - docs/CHANGELOG.md      # line 7, code span, new
    # named, but nothing at the base and no directory to create it in:
    #   docs/typo/x.md (line 12, code span)
    ");
}

/// What `targets` prints pastes into the frontmatter as it is, and the gate then checks exactly
/// those targets.
#[test]
fn the_printed_block_is_frontmatter() {
    let repo = repo_with(&format!("---\ntitle: Grade review\n---\n{BODY}"));
    let derived = repo.baton(["targets", "plans/p.md"]);
    assert_eq!(derived.code, 0, "{derived}");
    repo.write(
        "plans/p.md",
        &format!("---\ntitle: Grade review\n{}---\n{BODY}", derived.stdout),
    );
    repo.write("docs/cdfd-check.md", "edited\n");
    let json = verify(&repo, "plans/p.md --base HEAD --json").json();
    let targets = targets_of(&json, 0);
    assert_eq!(
        targets,
        [
            "docs/cdfd-overview.md",
            "docs/cdfd-check.md",
            "docs/cdfd-action.md",
            "docs/CHANGELOG.md"
        ]
    );
    // Declared now, the same paths raise no warning.
    let again = repo.baton(["targets", "plans/p.md"]);
    assert_eq!(again.code, 0, "{again}");
    assert_eq!(again.stderr, "", "{again}");
}

#[test]
fn a_path_the_body_names_beyond_the_targets_is_a_located_warning() {
    let repo = repo_with(
        "---\ntargets: [docs/cdfd-overview.md]\n---\nFix `docs/cdfd-check.md` and docs/cdfd-overview.md.\n",
    );
    let run = repo.baton(["targets", "plans/p.md"]);
    assert_snapshot!(named(run, &repo, &[("HEAD", "<base>")]).to_string(), @r"
    exit: 0
    --- stdout
    # plans/p.md: 1 declared target(s); the body names 2 path(s) at <base>, 1 of them covered by no target:
    targets:
      - docs/cdfd-check.md  # line 4, code span
    --- stderr
    warning: plans/p.md:4:6: the body names `docs/cdfd-check.md`, which no target covers
    ");
}

#[test]
fn json_says_where_each_path_was_found() {
    let repo = repo_with("---\n---\nSee [x](../docs/cdfd-check.md) and `docs/new.md`.\n");
    let run = repo.baton(["targets", "plans/p.md", "--json"]);
    assert_eq!(run.code, 0, "{run}");
    let json = run.json();
    assert_eq!(
        json["derived"],
        json!([
            {"target": "docs/cdfd-check.md", "line": 3, "column": 9, "found_in": "link", "exists": true},
            {"target": "docs/new.md", "line": 3, "column": 37, "found_in": "code_span", "exists": false}
        ])
    );
    assert_eq!(json["declared"], json!([]));
    assert_eq!(json["base"], repo.git(["rev-parse", "HEAD"]).trim());
}

/// The base's tree decides, not the worktree: a file added since is no path of the base.
#[test]
fn the_base_decides_what_exists() {
    let repo = repo_with("---\n---\nEdit `extra/later.md`.\n");
    let before = repo.git(["rev-parse", "HEAD"]);
    repo.write("extra/later.md", "x\n");
    repo.commit_all("later");
    let at_head = repo.baton(["targets", "plans/p.md", "--json"]).json();
    assert_eq!(at_head["derived"][0]["target"], "extra/later.md");
    let at_base = repo
        .baton(["targets", "plans/p.md", "--json", "--base", before.trim()])
        .json();
    assert_eq!(at_base["derived"], json!([]));
    assert_eq!(at_base["not_found"][0]["target"], "extra/later.md");
}

#[test]
fn bad_input_is_one_error_line() {
    let repo = repo_with("---\ntargets: [a.md]\nbogus: 1\n---\nx\n");
    let run = repo.baton(["targets", "plans/p.md"]);
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.stderr
            .starts_with("error: plans/p.md:3:1: unknown key `bogus` in plan frontmatter\n"),
        "{run}"
    );
    let run = repo.baton(["targets", "plans/missing.md"]);
    assert_eq!(run.code, 2, "{run}");
    assert_eq!(
        run.stderr,
        "error: cannot read plan plans/missing.md: no such file\n"
    );
    let run = repo.baton(["targets", "plans/p.md", "--base", "no-such-rev"]);
    assert_eq!(run.code, 2, "{run}");
}

/// `verify` warns, located, about each path the body names beyond the targets, in every
/// format, without failing the gate for it.
#[test]
fn verify_warns_about_paths_the_body_names_beyond_the_targets() {
    let repo = repo_with(
        "---\ntargets: [docs/cdfd-overview.md]\n---\nFix `docs/cdfd-check.md` and docs/cdfd-overview.md.\n",
    );
    repo.write("docs/cdfd-overview.md", "edited\n");
    let run = verify(&repo, "plans/p.md --base HEAD");
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout.contains(
            "warning: plans/p.md:4:6: the body names `docs/cdfd-check.md`, which no target covers\n"
        ),
        "{run}"
    );
    let json = verify(&repo, "plans/p.md --base HEAD --json").json();
    assert_eq!(
        json["plans"][0]["untargeted"],
        json!([{"target": "docs/cdfd-check.md", "line": 4, "column": 6, "found_in": "code_span", "exists": true}])
    );
    let github = verify(&repo, "plans/p.md --base HEAD --format github");
    assert!(
        github.stdout.contains(
            "::warning file=plans/p.md,line=4,col=6,title=path not targeted::the plan's body names `docs/cdfd-check.md`, which no target covers\n"
        ),
        "{github}"
    );
    let markdown = verify(&repo, "plans/p.md --base HEAD --format markdown");
    assert!(
        markdown.stdout.contains(
            "- **warning**: `plans/p.md`:4: the body names `docs/cdfd-check.md`, which no target covers\n"
        ),
        "{markdown}"
    );
}
