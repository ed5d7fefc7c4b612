//! Bad plans and bad configuration: exit 2 with a located `error:` and a `hint:`.

use super::*;

#[test]
fn bad_plans_are_located() {
    let repo = TestRepo::with()
        .files(&[("plans/.keep", ""), ("docs/a.md", "a\n")])
        .on_feature();
    let plans: [&[u8]; 8] = [
        b"---\ntitle: Typo\ntaregts:\n  - docs/a.md\n---\n",
        b"---\ntargets:\n  - docs/a.md\n  - /docs/b.md\n---\n",
        b"---\ntargets:\n  - docs/../../outside.md\n---\n",
        b"---\ntargets:\n  - .git/hooks/pre-commit\n---\n",
        b"---\ntargets:\n  - docs/a.md\n  - docs/b.md\n  - ./docs/a.md\n---\n",
        b"---\ntargets:\n  - docs/[a.md\n---\n",
        b"# A plan without frontmatter\n\ntargets: docs/a.md\n",
        // Located like every other plan error: at the first byte that is not UTF-8.
        b"---\ntargets:\n  - docs/caf\xe9.md\n---\n",
    ];
    let mut runs = String::new();
    for bytes in plans {
        std::fs::write(repo.path("plans/bad.md"), bytes).unwrap();
        runs.push_str(&verify(&repo, "plans/bad.md --base main").to_string());
    }
    runs.push_str(&verify(&repo, "plans/missing.md --base main").to_string());
    assert_snapshot!(runs, @r"
        exit: 2
        --- stderr
        error: plans/bad.md:3:1: unknown key `taregts` in plan frontmatter
        hint: did you mean `targets`?
        exit: 2
        --- stderr
        error: plans/bad.md:4:5: target `/docs/b.md` is an absolute path
        hint: targets are relative to the repository root: `docs/b.md`
        exit: 2
        --- stderr
        error: plans/bad.md:3:5: target `docs/../../outside.md` contains a `..` component
        hint: targets name paths inside the repository, relative to its root
        exit: 2
        --- stderr
        error: plans/bad.md:3:5: target `.git/hooks/pre-commit` points into the `.git` directory
        hint: git's own files are never part of a change; remove this target
        exit: 2
        --- stderr
        error: plans/bad.md:5:5: duplicate target `./docs/a.md`: line 3 already lists it as `docs/a.md`
        hint: list each path once
        exit: 2
        --- stderr
        error: plans/bad.md:3:5: invalid glob `docs/[a.md`: unclosed character class; missing ']'
        hint: to match `[`, `{`, `*` or `?` literally, wrap it in brackets, e.g. `[[]`
        exit: 2
        --- stderr
        error: plans/bad.md:1:1: plan must start with a `---` frontmatter line, found `# A plan without frontmatter`
        hint: a plan starts with a frontmatter block, e.g.
        hint: ---
        hint: targets:
        hint:   - docs/a.md
        hint: ---
        exit: 2
        --- stderr
        error: plans/bad.md:3:13: plan is not valid UTF-8
        exit: 2
        --- stderr
        error: cannot read plan plans/missing.md: no such file
        ");
}

#[test]
fn bad_config_is_located() {
    let repo = TestRepo::with()
        .config("# gate settings\nplan_dir: work/plans\n")
        .plan("plans/p.md", "Docs", &["docs/a.md"])
        .on_feature();
    assert_snapshot!(verify(&repo, "plans/p.md --base main").to_string(), @r#"
        exit: 2
        --- stderr
        error: .baton.yml:2:1: unknown field `plan_dir`, expected one of plans_dir, actors, pipeline, coverage, worktree_root, prompts, require_targets, derive_targets, log_limit, lease, sync, remote, checks, protect, notify
        hint: did you mean `plans_dir`?
        "#);
}

/// A SHA-256 repository, valid for git, is refused as one for every command, with the
/// repository named and a hint, not as a configuration git-baton "could not load".
#[test]
fn a_sha256_repository_is_refused_as_an_unsupported_object_format() {
    let repo = TestRepo::new();
    repo.git(["init", "-q", "--object-format=sha256", "sha256"]);
    let sha256 = repo.path("sha256");
    std::fs::create_dir_all(sha256.join("docs")).unwrap();
    std::fs::write(sha256.join("docs/a.md"), "a\n").unwrap();
    repo.git_in(&sha256, ["add", "-A"]);
    repo.git_in(&sha256, ["commit", "-q", "-m", "a"]);
    let verify = repo.baton_in(
        &sha256.join("docs"),
        ["verify", "plans/p.md", "--base", "main", "--head", "main"],
    );
    assert_snapshot!(verify.to_string(), @r"
        exit: 2
        --- stderr
        error: the repository at '$TMP/repo/sha256' uses the SHA-256 object format, which git-baton does not support
        hint: git-baton reads SHA-1 repositories, git's default; `git rev-parse --show-object-format` says which one a repository uses
        ");
    for args in [
        &["list"][..],
        &["run", "plans/p.md"],
        &["doctor"],
        &["init"],
    ] {
        let other = repo.baton_in(&sha256, args);
        assert_eq!(
            other.to_string(),
            verify.to_string(),
            "{args:?} says the same"
        );
    }
}
