//! Finding the plans and the repository: discovery under `plans_dir`, outside any repository,
//! and repositories owned by someone else.

use super::*;

/// Without PLAN arguments, the plans that the range adds or modifies under `plans/` are
/// checked; a deleted plan and other files are not; no changed plan is not a failure.
#[test]
fn plans_are_discovered_under_plans_dir() {
    let repo = TestRepo::with()
        .plan("plans/old.md", "Old", &["docs/old.md"])
        .plan("plans/kept.md", "Kept", &["docs/never-touched.md"])
        .named(&["docs/old.md"])
        .on_feature();

    assert_snapshot!(verify(&repo, "--base main").to_string(), @r"
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
    let worktree = gate(&repo, "--base main");
    assert_snapshot!(worktree, @r"
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
    assert_same(
        &gate(&repo, "--base main --head feature"),
        &worktree,
        &[("the worktree against main", "main...feature")],
    );
}

/// `plans_dir` in .baton.yml moves discovery; `plans/` is then an ordinary directory, whose
/// (broken) plan is never read.
#[test]
fn plans_are_discovered_under_a_configured_plans_dir() {
    let repo = TestRepo::with()
        .config("plans_dir: work/plans/\n")
        .named(&["docs/a.md"])
        .on_feature();

    assert_snapshot!(verify(&repo, "--base main").to_string(), @r"
        exit: 0
        --- stdout
        no plans to verify: none was named, and none under work/plans/ changed in the worktree against main
        ");

    repo.write("work/plans/a.md", &plan("A", &["docs/a.md"]));
    repo.write("plans/broken.md", "no frontmatter\n");
    repo.write("docs/a.md", "a, edited\n");
    assert_snapshot!(gate(&repo, "--base main"), @r"
        exit: 0
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan work/plans/a.md (a): passed: 1 target covered
          changed    docs/a.md  docs/a.md

        gate passed
        ");
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
    let at_the_ceiling = run.to_string();
    assert_snapshot!(at_the_ceiling, @r#"
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
    assert_same(&run.to_string(), &at_the_ceiling, &[]);
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
    let repo = TestRepo::with()
        .plan("plans/p.md", "Docs", &["docs/a.md"])
        .named(&["docs/a.md"])
        .on_feature();
    repo.write("docs/a.md", "a2\n");
    let args = "plans/p.md --base main";

    match chown_tree(&repo.root, 65534, 65534) {
        Ok(()) => {
            assert_snapshot!(verify(&repo, args).to_string(), @r"
                exit: 2
                --- stderr
                error: detected dubious ownership in repository at '$TMP/repo'
                hint: to add an exception for this directory, call:
                hint:
                hint: 	git config --global --add safe.directory $TMP/repo
                ");
            let root = repo.root.display().to_string();
            let add = [
                "config",
                "--global",
                "--add",
                "safe.directory",
                root.as_str(),
            ];
            repo.git_in(&repo.home, add);
        }
        Err(err) if err.kind() == std::io::ErrorKind::PermissionDenied => {
            eprintln!("not root, so the dubious-ownership part could not run: chown failed: {err}");
        }
        Err(err) => panic!("chown failed: {err}"),
    }

    assert_snapshot!(gate(&repo, args), @r"
        exit: 0
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): passed: 1 target covered
          changed    docs/a.md  docs/a.md

        gate passed
        ");
}
