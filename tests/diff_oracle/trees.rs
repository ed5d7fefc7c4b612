//! The tree-to-tree diff against `git diff --name-only A B`: after every operation sequence of
//! the property test, and over trees that `git gc` stored as deltas.

use super::*;

/// Commits everything and compares the commit-to-commit diff with `git diff --name-only base HEAD`.
pub(super) fn check_tree_vs_tree(repo: &TestRepo, ops: &[Op]) {
    // `--sparse`: outside a sparse checkout's cones too; through the full index for the reason
    // `TestRepo::oracle` gives.
    repo.git(["-c", "index.sparse=false", "add", "-A", "--sparse"]);
    repo.git([
        "-c",
        "index.sparse=false",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "all",
    ]);
    let expected = git_changed(repo, &repo.root, &["base", "HEAD"]);
    let ours = Repo::discover(&repo.root).unwrap();
    let (base, head) = (
        ours.resolve_commit("base").unwrap(),
        ours.resolve_commit("HEAD").unwrap(),
    );
    assert_eq!(
        ours.tree_changes(base, head, &Scope::All).unwrap(),
        expected,
        "tree diff differs after {ops:#?}"
    );
    let single = ["dir", "a.txt", "new/deep", "ünï"].map(|prefix| vec![prefix]);
    let siblings = SIBLING_SCOPES.iter().map(|list| list.to_vec());
    for prefixes in single.into_iter().chain(siblings) {
        let scope = Scope::prefixes(&prefixes);
        let prefix = prefixes.join(", ");
        let want = within(&expected, &scope);
        let got = ours.tree_changes(base, head, &scope).unwrap();
        assert_eq!(
            got, want,
            "scoped tree diff ({prefix}) differs after {ops:#?}"
        );
    }
}

/// After `git gc`, one version of a large tree is stored whole and the others as deltas against
/// it; the tree diff applies such a delta to the whole tree it has just read instead of letting gix
/// inflate that tree again. Every pair of versions, both ways round, must still be git's diff.
#[test]
fn packed_trees_with_deltas_diff_like_git() {
    let repo = TestRepo::new();
    for i in 0..300 {
        repo.write(&format!("big/file{i:03}.txt"), &format!("{i}\n"));
    }
    repo.write("big/sub/inner.txt", "inner\n");
    repo.write("top.txt", "top\n");
    repo.commit_all("base");
    repo.write("big/file007.txt", "changed\n");
    repo.commit_all("one");
    std::fs::remove_file(repo.path("big/file100.txt")).unwrap();
    repo.write("big/file150.txt", "changed too\n");
    repo.write("big/new.txt", "new\n");
    repo.write("big/sub/inner.txt", "changed inner\n");
    repo.commit_all("two");
    repo.write("big/file299.txt", "last\n");
    repo.write("top.txt", "changed top\n");
    repo.commit_all("three");
    repo.git(["gc", "-q"]);
    // What this test is about: trees stored as deltas.
    let idx = std::fs::read_dir(repo.path(".git/objects/pack"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "idx"))
        .expect("git gc writes a pack");
    let listing = repo.git(["verify-pack", "-v", idx.to_str().unwrap()]);
    let tree_deltas = listing
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("tree"))
        .filter(|l| l.split_whitespace().count() >= 7)
        .count();
    assert!(tree_deltas > 0, "no tree stored as a delta:\n{listing}");

    let ours = Repo::discover(&repo.root).unwrap();
    let revs = ["HEAD~3", "HEAD~2", "HEAD~1", "HEAD"];
    for a in revs {
        for b in revs {
            let expected = git_changed(&repo, &repo.root, &[a, b]);
            let (x, y) = (
                ours.resolve_commit(a).unwrap(),
                ours.resolve_commit(b).unwrap(),
            );
            for scope in [Scope::All, Scope::prefixes(["big"])] {
                let want = within(&expected, &scope);
                assert_eq!(
                    ours.tree_changes(x, y, &scope).unwrap(),
                    want,
                    "{a}..{b}, {scope:?}"
                );
            }
        }
    }
}
