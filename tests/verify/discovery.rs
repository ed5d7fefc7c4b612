//! Finding the plans and the repository: discovery under `plans_dir`, outside any repository,
//! and repositories owned by someone else.

use super::*;

/// Without PLAN arguments, the plans that the worktree adds or modifies under `plans/` are
/// checked; a deleted plan and other files are not; no changed plan is not a failure. The same
/// range, committed and checked with --head, is a pull request: deleting a plan is then a
/// failure, unless --allow-plan-changes accepts it (and says so).
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
        no plans to verify: none was named, none under plans/ changed in the worktree against main, and no commit there names one in a Baton-Plan trailer
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

    // The same, committed, checked as a pull request: the deleted plan is still checked, against
    // its targets at the merge base, and its deletion fails the gate.
    repo.commit_all("new plans");
    assert_snapshot!(gate(&repo, "--base main --head feature"), @r"
        exit: 1
        --- stdout
        verifying main...feature (merge base <main>)

        plan changes (each fails the gate: the plans at the merge base are the gate):
          deleted  plans/old.md: the range deletes this plan

        plan plans/deep/nested.md (nested): passed: 1 target covered
          changed    docs/nested.md  docs/nested.md

        plan plans/new.md (new): passed: 1 target covered
          changed    docs/new.md  docs/new.md

        plan plans/old.md (old, deleted by the range: its targets at the merge base): failed: 1 of 1 target uncovered
          uncovered  docs/old.md  no change and no reason (plans/old.md:4)

        gate failed: 1 of 3 plan(s) not covered, 1 plan change(s) not allowed
        <the covering hint>
        hint: restore the plans as the merge base has them, or change them on the base branch
        hint: first; where the change is the point of the pull request, rerun with
        hint: --allow-plan-changes (the changes are then reported, not failed)
        ");

    // Allowed, the plans are taken as the head has them, as in the worktree, and the deletion is
    // still reported.
    assert_snapshot!(gate(&repo, "--base main --head feature --allow-plan-changes"), @r"
        exit: 0
        --- stdout
        verifying main...feature (merge base <main>)

        plan changes (allowed by --allow-plan-changes: the plans were checked as the head has them):
          deleted  plans/old.md: the range deletes this plan

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
    let repo = TestRepo::with()
        .config("plans_dir: work/plans/\n")
        .named(&["docs/a.md"])
        .on_feature();

    assert_snapshot!(verify(&repo, "--base main").to_string(), @r"
        exit: 0
        --- stdout
        no plans to verify: none was named, none under work/plans/ changed in the worktree against main, and no commit there names one in a Baton-Plan trailer
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
    let repo = TestRepo::with().one_doc().on_feature();
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
