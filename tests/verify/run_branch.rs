//! A run branch names its plan: `git baton finish` commits with `Baton-Run` and `Baton-Plan`
//! trailers, and `verify --head baton/<id>` checks that plan even though the branch never
//! touched it (the README's flow: the plan is committed to main before the run). The trailers
//! are the pull request's own words, so they may only add plans, each read where the gate reads
//! plans: the merge base's targets stay the gate. `--require-plans` fails a gate that checked
//! nothing.

use super::*;

/// `main` with the plan, `feature` checked out with `docs/a.md` changed and committed by a
/// message that ends with `trailers`.
fn run_branch(trailers: &str) -> TestRepo {
    TestRepo::with()
        .two_docs()
        .with_a_edited(&format!("Two docs\n\nWork of a run.\n\n{trailers}"))
}

/// [`verify`] with `main` and `feature` shown by name.
fn shown(repo: &TestRepo, args: &str) -> Run {
    named(
        verify(repo, args),
        repo,
        &[("main", "<main>"), ("feature", "<feature>")],
    )
}

const RANGE: &str = "--base main --head feature";
const NAMED: &str = "Baton-Run: 0abc123xyz\nBaton-Plan: plans/p.md\n";

#[test]
fn the_plan_a_run_branch_names_is_checked() {
    let repo = run_branch(NAMED);
    let failed = shown(&repo, RANGE);
    assert_snapshot!(failed.to_string(), @r"
        exit: 1
        --- stdout
        verifying main...feature (merge base <main>)

        plan plans/p.md (p): failed: 1 of 2 targets uncovered
          named by   commit <feature> (run 0abc123xyz)
          changed    docs/a.md  docs/a.md
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)

        gate failed: 1 of 1 plan(s) not covered
        <the covering hint>
        ");
    let json = verify(&repo, &format!("{RANGE} --json")).json();
    let head = repo.git(["rev-parse", "feature"]);
    assert_eq!(
        json["plans"][0]["named_by"],
        json!([{"commit": head.trim(), "runs": ["0abc123xyz"]}])
    );

    // A reason in the same trailer block covers the other target.
    let repo = run_branch(&format!(
        "{NAMED}Baton-Unchanged: docs/b.md: it already states the rule in its first section\n"
    ));
    let run = verify(&repo, RANGE);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("plan plans/p.md (p): passed"), "{run}");
}

/// Git's trailer-block rule decides what a trailer is: in prose, `Baton-Plan:` names nothing.
#[test]
fn only_a_trailer_block_names_a_plan() {
    let repo = TestRepo::with()
        .two_docs()
        .with_a_edited("Two docs\n\nSee the notes.\nBaton-Plan: plans/p.md\n");
    let run = verify(&repo, RANGE);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.starts_with("no plans to verify"), "{run}");
}

/// What the pull request does to a plan its trailer names is judged as for any plan: its
/// targets at the merge base are kept, also for a plan outside `plans_dir`, which discovery
/// would never look at.
#[test]
fn a_named_plan_keeps_its_targets_at_the_merge_base() {
    let repo = TestRepo::with()
        .plan("work/p.md", "Two docs", &["docs/a.md", "docs/b.md"])
        .named(&["docs/a.md", "docs/b.md"])
        .file("plans/.gitkeep", "")
        .on_feature();
    repo.write("docs/a.md", "a, edited\n");
    repo.write("work/p.md", &plan("Two docs", &["docs/a.md"]));
    repo.commit_all("Two docs\n\nBaton-Run: 0abc123xyz\nBaton-Plan: work/p.md\n");
    let run = shown(&repo, RANGE);
    assert_snapshot!(run.to_string(), @r"
        exit: 1
        --- stdout
        verifying main...feature (merge base <main>)

        plan changes (each fails the gate: the plans at the merge base are the gate):
          target removed  work/p.md: the range removes target `docs/b.md` (line 5 at the merge base) from this plan

        plan work/p.md (p): failed: 1 of 2 targets uncovered
          named by   commit <feature> (run 0abc123xyz)
          changed    docs/a.md  docs/a.md
          uncovered  docs/b.md  no change and no reason (work/p.md:5)

        gate failed: 1 of 1 plan(s) not covered, 1 plan change(s) not allowed
        <the covering hint>
        hint: restore the plans as the merge base has them, or change them on the base branch
        hint: first; where the change is the point of the pull request, rerun with
        hint: --allow-plan-changes (the changes are then reported, not failed)
        ");
}

/// A later commit naming a weaker plan does not replace the plan an earlier one named: every
/// plan any commit names is checked.
#[test]
fn a_later_trailer_cannot_swap_the_plan() {
    let repo = run_branch(NAMED);
    repo.write("plans/weak.md", &plan("Weak", &["docs/a.md"]));
    repo.commit_all("Weak\n\nBaton-Run: 0abc123zzz\nBaton-Plan: plans/weak.md\n");
    let run = verify(&repo, RANGE);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stdout.contains("plan plans/weak.md (weak): passed"),
        "{run}"
    );
    assert!(run.stdout.contains("plan plans/p.md (p): failed"), "{run}");
}

/// A named plan is read from commits only, never from the pull request's checkout, and a plan
/// that is nowhere, or a path out of the tree, stops the gate (exit 2) rather than pass it.
#[test]
fn a_named_plan_must_be_committed() {
    let repo = run_branch("Baton-Run: 0abc123xyz\nBaton-Plan: plans/q.md\n");
    repo.write("plans/q.md", &plan("Q", &["docs/a.md"]));
    let run = shown(&repo, RANGE);
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: commit <feature> names plan `plans/q.md` (Baton-Plan), which neither the merge base, the head commit nor that commit has
        hint: commit the plan to the base branch before the run, or correct the trailer; the gate checks the plan a run branch names and never skips it
        ");
    // The worktree mode reads it from the worktree, the user's own.
    let run = verify(&repo, "--base main");
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("plan plans/q.md (q): passed"), "{run}");

    for path in ["../outside.md", "/etc/passwd", "plans/../p.md"] {
        let repo = run_branch(&format!("Baton-Plan: {path}\n"));
        let run = verify(&repo, RANGE);
        assert_eq!(run.code, 2, "{run}");
        assert!(
            run.stderr
                .contains(&format!("`Baton-Plan: {path}` does not name a path inside")),
            "{run}"
        );
        // Plans named on the command line are the ones checked; trailers then name none.
        let run = verify(&repo, &format!("plans/p.md {RANGE}"));
        assert_eq!(run.code, 1, "{run}");
    }
}

/// A plan the pull request adds, runs on and then retires is read from the commit that names
/// it: its targets stay the gate, with or without `--allow-plan-changes`.
#[test]
fn a_plan_added_and_retired_in_the_range_is_read_where_it_was_named() {
    let repo = TestRepo::with().two_docs().on_feature();
    repo.write("plans/n.md", &plan("New docs", &["docs/a.md", "docs/b.md"]));
    repo.commit_all("a plan for the run");
    repo.write("docs/a.md", "a, edited\n");
    repo.commit_all("N\n\nWork of a run.\n\nBaton-Run: 0abc123xyz\nBaton-Plan: plans/n.md\n");
    repo.git(["rm", "-q", "plans/n.md"]);
    repo.commit_all("retire the finished plan");
    for extra in ["", " --allow-plan-changes"] {
        let run = verify(&repo, &format!("{RANGE}{extra}"));
        assert_eq!(run.code, 1, "{run}");
        assert!(run.stdout.contains("plan plans/n.md (n): failed"), "{run}");
        assert!(run.stdout.contains("uncovered  docs/b.md"), "{run}");
    }
    repo.write("docs/b.md", "b, edited\n");
    repo.commit_all("the other target");
    let run = verify(&repo, RANGE);
    assert_eq!(run.code, 0, "{run}");
}

/// A run named without its plan is a note; with `--require-plans`, a gate that checked nothing
/// fails in every format.
#[test]
fn require_plans_fails_a_gate_that_checked_nothing() {
    let repo = run_branch("Baton-Run: 0abc123xyz\n");
    let run = shown(&repo, RANGE);
    assert_snapshot!(run.to_string(), @r"
        exit: 0
        --- stdout
        no plans to verify: none was named, none under plans/ changed in main...feature, and no commit there names one in a Baton-Plan trailer
        note: commit <feature> names run 0abc123xyz (Baton-Run) but no plan (Baton-Plan), so no plan was checked for it; name the plan to check it
        ");
    let run = shown(&repo, &format!("{RANGE} --require-plans"));
    assert_snapshot!(run.to_string(), @r"
        exit: 1
        --- stdout
        error: no plan was checked and --require-plans was given: none was named, none under plans/ changed in main...feature, and no commit there names one in a Baton-Plan trailer
        hint: run the work with `git baton run <plan>` and `git baton finish`, whose commit names the plan in a Baton-Plan trailer; or name the plan to check: `git baton verify <plan> ...`
        note: commit <feature> names run 0abc123xyz (Baton-Run) but no plan (Baton-Plan), so no plan was checked for it; name the plan to check it
        ");
    let json = verify(&repo, &format!("{RANGE} --require-plans --json"));
    assert_eq!(json.code, 1);
    let json = json.json();
    assert_eq!(json["passed"], false);
    assert_eq!(json["require_plans"], true);
    assert_eq!(json["plans"], json!([]));
    let github = verify(&repo, &format!("{RANGE} --require-plans --format github"));
    assert_eq!(github.code, 1);
    assert!(
        github
            .stdout
            .starts_with("::error title=no plan checked::--require-plans was given"),
        "{github}"
    );
    let markdown = verify(&repo, &format!("{RANGE} --require-plans --format markdown"));
    assert_eq!(markdown.code, 1);
    assert!(
        markdown
            .stdout
            .contains("**No plan was checked, and `--require-plans` was given**"),
        "{markdown}"
    );

    // Once a plan is checked, --require-plans changes nothing.
    let repo = run_branch(NAMED);
    let with = verify(&repo, &format!("{RANGE} --require-plans"));
    let without = verify(&repo, RANGE);
    assert_eq!(with.to_string(), without.to_string());
}

/// A run branch finished before `finish` wrote `Baton-Plan` names its plan in the body line of
/// the same run, and that plan is checked.
#[test]
fn an_older_finish_commit_names_its_plan_in_the_body() {
    let repo = run_branch("Baton-Run: 0abc123xyz\n");
    repo.git(["commit", "-q", "--amend", "-m",
        "Two docs\n\nWork of git-baton run 0abc123xyz for plan plans/p.md.\n\nBaton-Run: 0abc123xyz\n"]);
    let run = verify(&repo, RANGE);
    assert_eq!(run.code, 1, "{run}");
    assert!(run.stdout.contains("plan plans/p.md (p): failed"), "{run}");
    assert!(run.stdout.contains("named by   commit"), "{run}");
}
