//! Submodules against git: a new pointer, each state a submodule's worktree can be in under
//! each ignore rule, and `ignore = all`.

use super::*;

/// A [`seeded`] repository with a submodule `vendored` (one commit of `s.txt`), `config` set,
/// committed and tagged `base`; the submodule's own repository is returned first, to be kept.
fn with_submodule(config: &[(&str, &str)]) -> (TestRepo, TestRepo) {
    let sub = TestRepo::new();
    sub.write("s.txt", "1\n");
    sub.commit_all("one");
    let repo = seeded();
    repo.add_submodule(&sub.root, "vendored");
    for (key, value) in config {
        repo.git(["config", key, value]);
    }
    repo.commit_all("add submodule");
    repo.git(["tag", "-f", "base"]);
    (sub, repo)
}

#[test]
fn submodule_pointer_change_matches_git() {
    let (_sub, repo) = with_submodule(&[]);
    let inner = repo.path("vendored");
    std::fs::write(inner.join("s.txt"), "2\n").unwrap();
    repo.git_in(&inner, ["commit", "-q", "-am", "two"]);
    assert_eq!(matches_git(&repo, &repo.root, &["vendored"]), ["vendored"]);
}

/// A submodule in each state its worktree can be in, under each ignore rule git knows (the
/// submodule's own in `.gitmodules`, overridden by `.git/config`, and `diff.ignoreSubmodules`):
/// git lists it for a new commit, and for dirty content as its rule says — untracked files
/// alone count only under `none`. Every engine must list what git lists.
#[test]
fn submodule_states_match_git_under_each_ignore_rule() {
    let (_sub, repo) = with_submodule(&[]);
    let inner = repo.path("vendored");
    let first = repo.git_in(&inner, ["rev-parse", "HEAD"]);
    let first = first.trim();
    // (what the worktree of the submodule holds, how to put it back)
    let states: &[(&str, &str)] = &[
        ("echo u > untracked.txt", "rm untracked.txt"),
        ("echo 2 > s.txt", "git checkout -q s.txt"),
        (
            "echo n > new.txt && git add new.txt",
            "git rm -q -f new.txt",
        ),
        (
            "echo 3 > s.txt && git commit -q -am three",
            "git reset -q --hard HEAD~1",
        ),
        (
            "echo 3 > s.txt && git commit -q -am three && echo u > untracked.txt",
            "rm untracked.txt && git reset -q --hard HEAD~1",
        ),
    ];
    // (the rule, how to set it, how to unset it)
    let rules: &[(&str, &str, &str)] = &[
        ("none set", "true", "true"),
        (
            ".gitmodules none",
            "git config -f .gitmodules submodule.vendored.ignore none",
            "git config -f .gitmodules --unset submodule.vendored.ignore",
        ),
        (
            ".gitmodules untracked",
            "git config -f .gitmodules submodule.vendored.ignore untracked",
            "git config -f .gitmodules --unset submodule.vendored.ignore",
        ),
        (
            ".gitmodules dirty",
            "git config -f .gitmodules submodule.vendored.ignore dirty",
            "git config -f .gitmodules --unset submodule.vendored.ignore",
        ),
        (
            ".git/config untracked over .gitmodules none",
            "git config -f .gitmodules submodule.vendored.ignore none && \
             git config submodule.vendored.ignore untracked",
            "git config -f .gitmodules --unset submodule.vendored.ignore && \
             git config --unset submodule.vendored.ignore",
        ),
        (
            "diff.ignoreSubmodules none",
            "git config diff.ignoreSubmodules none",
            "git config --unset diff.ignoreSubmodules",
        ),
        (
            ".gitmodules none over diff.ignoreSubmodules untracked",
            "git config diff.ignoreSubmodules untracked && \
             git config -f .gitmodules submodule.vendored.ignore none",
            "git config --unset diff.ignoreSubmodules && \
             git config -f .gitmodules --unset submodule.vendored.ignore",
        ),
    ];
    let sh = |dir: &Path, script: &str| {
        let out = std::process::Command::new("sh")
            .args(["-c", script])
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{script}: {out:?}");
    };
    let mut listed = std::collections::BTreeMap::new();
    for (rule, set, unset) in rules {
        sh(&repo.root, set);
        for (state, undo) in states {
            sh(&inner, state);
            let git = matches_git(&repo, &repo.root, &["vendored"]);
            listed.insert((*rule, *state), git.iter().any(|p| p == "vendored"));
            sh(&inner, undo);
            assert_eq!(repo.git_in(&inner, ["rev-parse", "HEAD"]).trim(), first);
        }
        sh(&repo.root, unset);
    }
    // The cases the rules exist for, so that the oracle itself is what this test expects.
    let untracked = states[0].0;
    assert!(!listed[&("none set", untracked)]);
    assert!(listed[&(".gitmodules none", untracked)]);
    assert!(!listed[&(".git/config untracked over .gitmodules none", untracked)]);
    assert!(
        listed[&(
            ".gitmodules none over diff.ignoreSubmodules untracked",
            untracked
        )]
    );
    assert!(listed[&("none set", states[1].0)]);
    assert!(!listed[&(".gitmodules dirty", states[1].0)]);
    assert!(listed[&(".gitmodules dirty", states[3].0)]);
}

/// `ignore = all` hides a submodule from `git diff` altogether; the gate still counts a new
/// commit in it (work is work whatever the configuration says), and nothing else.
#[test]
fn a_submodule_ignored_entirely_still_counts_its_new_commit() {
    let (_sub, repo) = with_submodule(&[("submodule.vendored.ignore", "all")]);
    let inner = repo.path("vendored");
    let ours = Repo::discover(&repo.root).unwrap();
    let base = ours.resolve_commit("base").unwrap();
    std::fs::write(inner.join("s.txt"), "2\n").unwrap();
    std::fs::write(inner.join("untracked.txt"), "u\n").unwrap();
    let dirty = Ours::compute(&ours, base, &[Scope::All]);
    dirty.assert_git(&[], &"dirty content under ignore = all");
    repo.git_in(&inner, ["commit", "-q", "-am", "two"]);
    assert_eq!(repo.oracle(&repo.root, "base"), Vec::<String>::new());
    let committed = Ours::compute(&ours, base, &[Scope::All]);
    committed.assert_git(
        &["vendored".to_string()],
        &"a new commit under ignore = all",
    );
}

/// A gitlink that no `.gitmodules` declares — an embedded repository `git add`ed, as vendoring
/// scripts and agents do — is compared as git compares it: a moved checkout and modified
/// tracked content count, untracked content alone does not, and `diff.ignoreSubmodules=dirty`
/// leaves only the checkout.
#[test]
fn a_gitlink_without_gitmodules_matches_git() {
    let repo = seeded();
    let embedded = repo.path("emb");
    std::fs::create_dir_all(&embedded).unwrap();
    repo.git_in(&embedded, ["init", "-q", "-b", "main"]);
    std::fs::write(embedded.join("e.txt"), "1\n").unwrap();
    repo.git_in(&embedded, ["add", "e.txt"]);
    repo.git_in(&embedded, ["commit", "-q", "-m", "one"]);
    // git warns of the embedded repository, and records it as a gitlink all the same.
    repo.git(["add", "emb"]);
    repo.commit_all("embed");
    repo.git(["tag", "-f", "base"]);
    assert!(!repo.git(["ls-files", "-s", "emb"]).is_empty());
    assert_eq!(
        matches_git(&repo, &repo.root, &["emb"]),
        Vec::<String>::new()
    );

    std::fs::write(embedded.join("new.txt"), "untracked\n").unwrap();
    assert_eq!(
        matches_git(&repo, &repo.root, &["emb"]),
        Vec::<String>::new()
    );
    std::fs::write(embedded.join("e.txt"), "2\n").unwrap();
    assert_eq!(matches_git(&repo, &repo.root, &["emb"]), ["emb"]);
    repo.git(["config", "diff.ignoreSubmodules", "dirty"]);
    assert_eq!(
        matches_git(&repo, &repo.root, &["emb"]),
        Vec::<String>::new()
    );
    repo.git_in(&embedded, ["commit", "-q", "-am", "two"]);
    assert_eq!(matches_git(&repo, &repo.root, &["emb"]), ["emb"]);
}
