//! A pull request cannot change its own gate (docs/ci.md, "What a pull request can change"):
//! every way issue 9 found to make `verify --base main --head feature` pass with a target
//! untouched and no reason, each tried as a class, with the merge base as the gate.
//!
//! Every repository starts the same: on `main`, the plan `plans/p.md` with the targets
//! `docs/a.md` and `docs/b.md`; on `feature`, the work changed `docs/a.md` only. Untouched, the
//! plan is not this pull request's (see `untouched_plans_are_not_this_pull_requests`); touched in
//! any way, the gate must fail, naming `docs/b.md`.

use super::*;

/// `main` with the plan, `feature` checked out with `docs/a.md` changed and committed.
fn pull_request() -> TestRepo {
    TestRepo::with().two_docs().with_a_edited("edit a")
}

const RANGE: &str = "--base main --head feature";

/// The lines that say what was checked and why it failed, for one compact snapshot of many runs.
fn verdict(run: &Run) -> String {
    let mut lines = vec![format!("exit {}", run.code)];
    lines.extend(
        run.stdout
            .lines()
            .filter(|l| {
                [
                    "plan ",
                    "  deleted",
                    "  moved",
                    "  target removed",
                    "  undiscoverable",
                ]
                .iter()
                .any(|p| l.starts_with(p))
                    || l.starts_with("  uncovered")
                    || l.starts_with("gate ")
                    || l.starts_with("note: ")
            })
            .map(str::to_owned),
    );
    lines.extend(run.stderr.lines().map(str::to_owned));
    lines.join("\n")
}

/// A scenario: its name, and what the pull request does besides the work.
type Case<'a> = (&'a str, &'a dyn Fn(&TestRepo));

/// Each scenario on a fresh pull request, committed, then the gate.
fn scenarios(cases: &[Case<'_>], args: &str) -> String {
    let mut out = String::new();
    for (name, change) in cases {
        let repo = pull_request();
        change(&repo);
        repo.commit_all(name);
        let run = verify(&repo, args);
        out.push_str(&format!("== {name}\n{}\n", verdict(&run)));
    }
    out
}

/// A plan the range does not touch is not this pull request's plan: nothing the pull request
/// did changed it, and discovery cannot know which plan a pull request works on (name it for
/// that). Touched even in its body only, it is checked — the baseline every bypass below must
/// not escape.
#[test]
fn untouched_plans_are_not_this_pull_requests() {
    let repo = pull_request();
    assert_snapshot!(gate(&repo, RANGE), @r"
        exit: 0
        --- stdout
        no plans to verify: none was named, none under plans/ changed in main...feature, and no commit there names one in a Baton-Plan trailer
        ");
    let named = gate(&repo, &format!("plans/p.md {RANGE}"));
    assert_snapshot!(named, @r"
        exit: 1
        --- stdout
        verifying main...feature (merge base <main>)

        plan plans/p.md (p): failed: 1 of 2 targets uncovered
          changed    docs/a.md  docs/a.md
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)

        gate failed: 1 of 1 plan(s) not covered
        <the covering hint>
        ");

    let body = plan("Two docs", &["docs/a.md", "docs/b.md"]).replace("Do it.", "Do it well.");
    repo.write("plans/p.md", &body);
    repo.commit_all("reword the plan");
    assert_same(&gate(&repo, RANGE), &named, &[]);
}

/// The pull request's own `.baton.yml` does not move discovery: the merge base's does. Here
/// the pull request adds a plan for its work and points `plans_dir` elsewhere, in every way that
/// used to find nothing.
#[test]
fn the_pull_requests_configuration_is_not_the_gates() {
    let add_plan = |repo: &TestRepo, config: &str| {
        repo.write("plans/new.md", &plan("New", &["docs/a.md", "docs/b.md"]));
        repo.write(".baton.yml", config);
    };
    let cases: [Case<'_>; 4] = [
        ("plans_dir elsewhere", &|r| add_plan(r, "plans_dir: docs\n")),
        ("plans_dir in another case", &|r| {
            add_plan(r, "plans_dir: Plans\n")
        }),
        ("plans_dir as ./plans", &|r| {
            add_plan(r, "plans_dir: ./plans/\n")
        }),
        ("plans_dir that does not exist", &|r| {
            add_plan(r, "plans_dir: nowhere\n")
        }),
    ];
    let runs = scenarios(&cases, RANGE);
    assert_snapshot!(runs, @r"
        == plans_dir elsewhere
        exit 1
        plan plans/new.md (new): failed: 1 of 2 targets uncovered
          uncovered  docs/b.md  no change and no reason (plans/new.md:5)
        gate failed: 1 of 1 plan(s) not covered
        == plans_dir in another case
        exit 1
        plan plans/new.md (new): failed: 1 of 2 targets uncovered
          uncovered  docs/b.md  no change and no reason (plans/new.md:5)
        gate failed: 1 of 1 plan(s) not covered
        == plans_dir as ./plans
        exit 1
        plan plans/new.md (new): failed: 1 of 2 targets uncovered
          uncovered  docs/b.md  no change and no reason (plans/new.md:5)
        gate failed: 1 of 1 plan(s) not covered
        == plans_dir that does not exist
        exit 1
        plan plans/new.md (new): failed: 1 of 2 targets uncovered
          uncovered  docs/b.md  no change and no reason (plans/new.md:5)
        gate failed: 1 of 1 plan(s) not covered
        ");
}

/// The merge base's `plans_dir` is normalized, must exist there, and is never guessed: a wrong
/// case or a missing directory is refused (exit 2) with a hint, instead of matching nothing.
#[test]
fn the_merge_base_plans_dir_must_exist() {
    let run = |config: &str| {
        let repo = TestRepo::with().config(config).two_docs().on_feature();
        repo.write(
            "plans/p.md",
            &plan("Two docs, reworded", &["docs/a.md", "docs/b.md"]),
        );
        repo.commit_all("touch the plan");
        named(verify(&repo, RANGE), &repo, &[("main", "<main>")]).to_string()
    };
    let normalized = run("plans_dir: ./plans//\n");
    assert_snapshot!(normalized, @r"
        exit: 1
        --- stdout
        verifying main...feature (merge base <main>)

        plan plans/p.md (p): failed: 2 of 2 targets uncovered
          uncovered  docs/a.md  no change and no reason (plans/p.md:4)
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)

        gate failed: 1 of 1 plan(s) not covered
        <the covering hint>
        ");
    assert_snapshot!(run("plans_dir: Plans\n"), @r"
        exit: 2
        --- stderr
        error: plans_dir `Plans/` does not exist at the merge base <main>
        hint: did you mean `plans`? git paths are case-sensitive; the gate reads plans_dir from .baton.yml at the merge base, so correct `Plans` on the base branch
        ");
    assert_snapshot!(run("plans_dir: work/plans\n"), @r"
        exit: 2
        --- stderr
        error: plans_dir `work/plans/` does not exist at the merge base <main>
        hint: the gate reads plans_dir from .baton.yml at the merge base: create `work/plans/` on the base branch (an empty `work/plans/.gitkeep` will do), set plans_dir there, or name the plans to check
        ");

    // A configuration that does not parse at the merge base is an error located there; the
    // pull request's own, broken or not, is not read.
    let broken = run("plan_dir: plans\n");
    assert!(
        broken.starts_with(
            "exit: 2\n--- stderr\nerror: <main>:.baton.yml:1:1: unknown field `plan_dir`"
        ),
        "{broken}"
    );
    let repo = pull_request();
    repo.write(
        "plans/p.md",
        &plan("Two docs, reworded", &["docs/a.md", "docs/b.md"]),
    );
    repo.write(".baton.yml", "plan_dir: [\n");
    repo.commit_all("touch the plan, break the configuration");
    assert_eq!(
        verify(&repo, RANGE).code,
        1,
        "the gate ran, and failed on docs/b.md"
    );

    // The default too: a range of a repository without `plans/` at the merge base.
    let repo = TestRepo::with().named(&["docs/a.md"]).on_feature();
    repo.write("plans/p.md", &plan("New", &["docs/a.md"]));
    repo.commit_all("first plan");
    assert_snapshot!(named(verify(&repo, RANGE), &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 2
        --- stderr
        error: plans_dir `plans/` does not exist at the merge base <main>
        hint: the gate reads plans_dir from .baton.yml at the merge base: create `plans/` on the base branch (an empty `plans/.gitkeep` will do), set plans_dir there, or name the plans to check
        ");
    // Named, the plan needs no discovery.
    assert_eq!(verify(&repo, &format!("plans/p.md {RANGE}")).code, 1);
}

/// Deleting the plan, or putting it where discovery does not look, leaves its targets at the
/// merge base checked and fails the gate, naming where it went.
#[test]
fn deleting_or_hiding_a_plan_fails() {
    let mv = |to: &'static str| {
        move |repo: &TestRepo| {
            if let Some(dir) = std::path::Path::new(to).parent() {
                std::fs::create_dir_all(repo.path(&dir.display().to_string())).unwrap();
            }
            repo.git(["mv", "plans/p.md", to]);
        }
    };
    let (to_docs, to_upper, within) = (mv("docs/p.md"), mv("plans/p.MD"), mv("plans/done/p.md"));
    let cases: [Case<'_>; 5] = [
        ("deleted", &|r| {
            r.git(["rm", "-q", "plans/p.md"]);
        }),
        ("moved out of plans/", &to_docs),
        ("renamed to .MD", &to_upper),
        ("moved within plans/", &within),
        ("replaced by a symbolic link", &|r| {
            r.git(["rm", "-q", "plans/p.md"]);
            std::fs::create_dir_all(r.path("plans")).unwrap();
            std::os::unix::fs::symlink("../docs/a.md", r.path("plans/p.md")).unwrap();
        }),
    ];
    let runs = scenarios(&cases, RANGE);
    assert_snapshot!(runs, @r"
        == deleted
        exit 1
        plan changes (each fails the gate: the plans at the merge base are the gate):
          deleted  plans/p.md: the range deletes this plan
        plan plans/p.md (p, deleted by the range: its targets at the merge base): failed: 1 of 2 targets uncovered
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)
        gate failed: 1 of 1 plan(s) not covered, 1 plan change(s) not allowed
        == moved out of plans/
        exit 1
        plan changes (each fails the gate: the plans at the merge base are the gate):
          moved  plans/p.md: the range moves this plan to `docs/p.md`, where discovery does not look (the `*.md` files under `plans/`, in that case)
        plan plans/p.md (p, deleted by the range: its targets at the merge base): failed: 1 of 2 targets uncovered
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)
        gate failed: 1 of 1 plan(s) not covered, 1 plan change(s) not allowed
        == renamed to .MD
        exit 1
        plan changes (each fails the gate: the plans at the merge base are the gate):
          undiscoverable  plans/p.MD: this plan is not where discovery looks (the `*.md` files under `plans/`, in that case), so no gate would check it
          moved           plans/p.md: the range moves this plan to `plans/p.MD`, where discovery does not look (the `*.md` files under `plans/`, in that case)
        plan plans/p.MD (p): failed: 1 of 2 targets uncovered
          uncovered  docs/b.md  no change and no reason (plans/p.MD:5)
        plan plans/p.md (p, deleted by the range: its targets at the merge base): failed: 1 of 2 targets uncovered
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)
        gate failed: 2 of 2 plan(s) not covered, 2 plan change(s) not allowed
        == moved within plans/
        exit 1
        plan changes (each fails the gate: the plans at the merge base are the gate):
          moved  plans/p.md: the range moves this plan to `plans/done/p.md`
        plan plans/done/p.md (p): failed: 1 of 2 targets uncovered
          uncovered  docs/b.md  no change and no reason (plans/done/p.md:5)
        plan plans/p.md (p, deleted by the range: its targets at the merge base): failed: 1 of 2 targets uncovered
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)
        gate failed: 2 of 2 plan(s) not covered, 1 plan change(s) not allowed
        == replaced by a symbolic link
        exit 1
        plan changes (each fails the gate: the plans at the merge base are the gate):
          deleted  plans/p.md: the range deletes this plan
        plan plans/p.md (p, deleted by the range: its targets at the merge base): failed: 1 of 2 targets uncovered
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)
        gate failed: 1 of 1 plan(s) not covered, 1 plan change(s) not allowed
        ");

    // Another extension, or a directory that differs only in case, hides it as `.MD` does.
    let hidden = |to: &'static str| scenarios(&[("renamed to .MD", &mv(to))], RANGE);
    let upper = hidden("plans/p.MD");
    assert!(runs.contains(&upper), "{upper}");
    for to in ["plans/p.markdown", "Plans/p.md"] {
        assert_same(&hidden(to), &upper, &[("plans/p.MD", to)]);
    }

    // Allowed, each is reported as it was and the plan is taken as the head has it.
    let allowed = scenarios(&cases[..2], &format!("{RANGE} --allow-plan-changes"));
    assert_snapshot!(allowed, @r"
        == deleted
        exit 0
        plan changes (allowed by --allow-plan-changes: the plans were checked as the head has them):
          deleted  plans/p.md: the range deletes this plan
        gate passed
        == moved out of plans/
        exit 0
        plan changes (allowed by --allow-plan-changes: the plans were checked as the head has them):
          moved  plans/p.md: the range moves this plan to `docs/p.md`, where discovery does not look (the `*.md` files under `plans/`, in that case)
        gate passed
        ");
}

/// Removing the untouched target, emptying `targets` or dropping the key: the targets at the
/// merge base still count, and each removal fails the gate. The same for a named plan.
#[test]
fn removing_targets_fails() {
    let rewrite = |targets: &'static str| {
        move |repo: &TestRepo| {
            repo.write(
                "plans/p.md",
                &format!("---\ntitle: Two docs\n{targets}---\n# The work\n"),
            );
        }
    };
    let (one, empty, none, glob) = (
        rewrite("targets:\n  - docs/a.md\n"),
        rewrite("targets: []\n"),
        rewrite(""),
        rewrite("targets:\n  - \"docs/a*.md\"\n"),
    );
    let cases: [Case<'_>; 4] = [
        ("untouched target removed", &one),
        ("targets emptied", &empty),
        ("targets key removed", &none),
        ("targets replaced by a glob", &glob),
    ];
    let runs = scenarios(&cases, RANGE);
    assert_snapshot!(runs, @r"
        == untouched target removed
        exit 1
        plan changes (each fails the gate: the plans at the merge base are the gate):
          target removed  plans/p.md: the range removes target `docs/b.md` (line 5 at the merge base) from this plan
        plan plans/p.md (p): failed: 1 of 2 targets uncovered
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)
        gate failed: 1 of 1 plan(s) not covered, 1 plan change(s) not allowed
        == targets emptied
        exit 1
        plan changes (each fails the gate: the plans at the merge base are the gate):
          target removed  plans/p.md: the range removes target `docs/a.md` (line 4 at the merge base) from this plan
          target removed  plans/p.md: the range removes target `docs/b.md` (line 5 at the merge base) from this plan
        plan plans/p.md (p): failed: 1 of 2 targets uncovered
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)
        gate failed: 1 of 1 plan(s) not covered, 2 plan change(s) not allowed
        == targets key removed
        exit 1
        plan changes (each fails the gate: the plans at the merge base are the gate):
          target removed  plans/p.md: the range removes target `docs/a.md` (line 4 at the merge base) from this plan
          target removed  plans/p.md: the range removes target `docs/b.md` (line 5 at the merge base) from this plan
        plan plans/p.md (p): failed: 1 of 2 targets uncovered
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)
        gate failed: 1 of 1 plan(s) not covered, 2 plan change(s) not allowed
        == targets replaced by a glob
        exit 1
        plan changes (each fails the gate: the plans at the merge base are the gate):
          target removed  plans/p.md: the range removes target `docs/a.md` (line 4 at the merge base) from this plan
          target removed  plans/p.md: the range removes target `docs/b.md` (line 5 at the merge base) from this plan
        plan plans/p.md (p): failed: 1 of 3 targets uncovered
          uncovered  docs/b.md   no change and no reason (plans/p.md:5)
        gate failed: 1 of 1 plan(s) not covered, 2 plan change(s) not allowed
        ");
    assert_eq!(
        scenarios(&cases, &format!("plans/p.md {RANGE}")),
        runs,
        "a named plan is held to its targets at the merge base too"
    );

    // The JSON names each change and whether it was allowed.
    let repo = pull_request();
    one(&repo);
    repo.commit_all("drop b");
    let json = verify(&repo, &format!("{RANGE} --json")).json();
    assert_eq!(json["passed"], false);
    assert_eq!(
        json["plan_changes"],
        json!([{
            "plan": "plans/p.md",
            "kind": "target_removed",
            "target": "docs/b.md",
            "line": 5,
            "message": "the range removes target `docs/b.md` (line 5 at the merge base) from this plan",
            "allowed": false
        }])
    );
    let targets = targets_of(&json, 0);
    assert_eq!(targets, ["docs/a.md", "docs/b.md"]);
}

/// A plan the pull request adds where discovery does not look is a failure, and is checked all
/// the same; a file there that is no plan is not.
#[test]
fn adding_a_plan_discovery_would_not_see_fails() {
    let add = |path: &'static str| {
        move |repo: &TestRepo| repo.write(path, &plan("Hidden", &["docs/a.md", "docs/b.md"]))
    };
    let hidden = |path: &'static str| scenarios(&[(path, &add(path))], RANGE);
    let upper = hidden("plans/new.MD");
    assert_snapshot!(upper, @r"
        == plans/new.MD
        exit 1
        plan changes (each fails the gate: the plans at the merge base are the gate):
          undiscoverable  plans/new.MD: this plan is not where discovery looks (the `*.md` files under `plans/`, in that case), so no gate would check it
        plan plans/new.MD (new): failed: 1 of 2 targets uncovered
          uncovered  docs/b.md  no change and no reason (plans/new.MD:5)
        gate failed: 1 of 1 plan(s) not covered, 1 plan change(s) not allowed
        ");
    // Another extension, or a directory that differs only in case, is as hidden.
    for path in ["plans/new.markdown", "PLANS/new.md"] {
        assert_same(&hidden(path), &upper, &[("plans/new.MD", path)]);
    }
    let notes: Case<'_> = ("notes that are no plan", &|r| {
        r.write("plans/notes.txt", "not a plan\n");
        r.write("plans/README.markdown", "---\ntitle: About plans\n---\n");
    });
    assert_snapshot!(scenarios(&[notes], RANGE), @r"
        == notes that are no plan
        exit 0
        ");
}

/// A `Baton-Unchanged` trailer in a merge commit gives no reason, and the output says it was
/// ignored; the same trailer in an ordinary commit does.
#[test]
fn trailers_of_merge_commits_are_ignored() {
    let repo = pull_request();
    let trailer = "Baton-Unchanged: docs/b.md: the page already states the rule in full";
    repo.git(["checkout", "-q", "-b", "side", "main"]);
    repo.write("docs/other.md", "unrelated\n");
    repo.commit_all("side work");
    repo.git(["checkout", "-q", "feature"]);
    repo.git([
        "merge",
        "-q",
        "--no-ff",
        "side",
        "-m",
        "Merge side",
        "-m",
        trailer,
    ]);
    let names = [("main", "<main>"), ("feature", "<merge>")];

    let run = verify(&repo, &format!("plans/p.md {RANGE}"));
    assert_snapshot!(named(run, &repo, &names).to_string(), @r"
        exit: 1
        --- stdout
        verifying main...feature (merge base <main>)
        note: merge commit <merge> has 1 Baton-Unchanged trailer(s), ignored: only ordinary commits give reasons

        plan plans/p.md (p): failed: 1 of 2 targets uncovered
          changed    docs/a.md  docs/a.md
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)

        gate failed: 1 of 1 plan(s) not covered
        <the covering hint>
        ");
    let run = verify(&repo, &format!("plans/p.md {RANGE} --json"));
    let json = named(run, &repo, &names).json();
    assert_eq!(
        json["ignored_trailers"],
        json!([{"commit": "<merge>", "count": 1}])
    );
    let run = verify(&repo, &format!("plans/p.md {RANGE} --format github"));
    let github = named(tokenless(run, &repo), &repo, &names).to_string();
    assert!(
        github
            .contains("\n::notice::merge commit <merge> has 1 Baton-Unchanged trailer(s), ignored"),
        "{github}"
    );

    repo.commit_message("Explain b", trailer);
    assert_eq!(verify(&repo, &format!("plans/p.md {RANGE}")).code, 0);
}

/// `--allow-plan-changes` is logged in every format, and changes nothing where no plan changed.
#[test]
fn allowed_plan_changes_are_logged_in_every_format() {
    let repo = pull_request();
    repo.write("plans/p.md", &plan("Two docs", &["docs/a.md"]));
    repo.commit_all("drop b");
    let args = format!("{RANGE} --allow-plan-changes");

    assert_snapshot!(gate(&repo, &args), @r"
        exit: 0
        --- stdout
        verifying main...feature (merge base <main>)

        plan changes (allowed by --allow-plan-changes: the plans were checked as the head has them):
          target removed  plans/p.md: the range removes target `docs/b.md` (line 5 at the merge base) from this plan

        plan plans/p.md (p): passed: 1 target covered
          changed    docs/a.md  docs/a.md

        gate passed
        ");
    let json = verify(&repo, &format!("{args} --json")).json();
    assert_eq!(json["passed"], true);
    assert_eq!(json["allow_plan_changes"], true);
    assert_eq!(json["plan_changes"][0]["allowed"], true);
    // The github format encloses the text report as it is.
    let text = verify(&repo, &args).stdout;
    let run = tokenless(verify(&repo, &format!("{args} --format github")), &repo);
    assert_snapshot!(named(run.replace(&text, "<the text report>\n"), &repo, &[]).to_string(), @r"
        exit: 0
        --- stdout
        ::warning file=plans/p.md,line=5,title=plan change allowed%3A target removed::the range removes target `docs/b.md` (line 5 at the merge base) from this plan (allowed by --allow-plan-changes)
        ::stop-commands::<token>
        <the text report>
        ::<token>::
        ");
    assert_snapshot!(gate(&repo, &format!("{args} --format markdown")), @r"
        exit: 0
        --- stdout
        ## git-baton coverage: passed

        Checked main...feature (merge base `<main>`).

        **plan changes (allowed by `--allow-plan-changes`: the plans were checked as the head has them)**

        - target removed `plans/p.md`: removes target `docs/b.md` (line 5 at the merge base)

        ### `plans/p.md` (p): passed: 1 target covered

        | target | status | paths or reason |
        |---|---|---|
        | `docs/a.md` | changed | `docs/a.md` |
        ");

    let untouched = pull_request();
    let run = verify(&untouched, &format!("plans/p.md {args}"));
    assert!(
        run.stdout.contains(
            "note: --allow-plan-changes was given; the range changes no plan that gates it"
        ),
        "{run}"
    );
    assert_eq!(
        run.code, 1,
        "the flag allows plan changes, not uncovered targets"
    );
}
