//! `git baton run PLAN… --queue`: several plans (or a glob the shell did not expand) become as
//! many `queued` runs, each created on its own, after every plan was read and checked; a bad
//! plan among them creates none.

use super::*;

/// Plans besides `plans/fix.md`: each targets one document.
const TWO: &str = "---\ntitle: Fix B\ntargets: [docs/b.md]\n---\n# Fix b\n";
const THREE: &str = "---\ntitle: Fix C\ntargets: [docs/c.md]\n---\n# Fix c\n";

/// The standard repository with `plans/two.md` and `plans/three.md` committed beside
/// `plans/fix.md`, and `extra` files besides.
fn queue_repo(extra: &[(&str, &str)]) -> TestRepo {
    TestRepo::with()
        .old_rule_docs()
        .files(&[
            ("plans/fix.md", PLAN),
            ("plans/two.md", TWO),
            ("plans/three.md", THREE),
        ])
        .files(extra)
        .config(&config(&[worker(), writer()], PIPELINE))
        .commit()
}

/// The ids of the `run <id>` lines of stderr, in order.
fn announced(run: &Run) -> Vec<String> {
    run.stderr
        .lines()
        .filter_map(|l| l.strip_prefix("run "))
        .map(String::from)
        .collect()
}

/// `list --json`: each run's id, status and plan path.
fn listed(repo: &TestRepo) -> Vec<(String, String, String)> {
    let list = repo.baton(["list", "--json"]);
    assert_eq!(list.code, 0, "{list}");
    list.json()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let field = |k: &str| r[k].as_str().unwrap().to_owned();
            (
                field("run_id"),
                field("status"),
                r["plan"]["path"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Three plans, three queued runs: announced one `run <id>` line each (the first line first),
/// none driven, all in `list` as `queued`, in the order the plans were named.
#[test]
fn several_plans_with_queue_become_as_many_queued_runs() {
    let repo = queue_repo(&[]);
    let run = repo.baton([
        "run",
        "plans/fix.md",
        "plans/two.md",
        "plans/three.md",
        "--queue",
    ]);
    assert_eq!(run.code, 0, "{run}");
    let ids = announced(&run);
    assert_eq!(ids.len(), 3, "{run}");
    assert_eq!(run.run_id(), ids[0]);
    assert_eq!(
        listed(&repo),
        [
            (ids[0].clone(), "queued".into(), "plans/fix.md".into()),
            (ids[1].clone(), "queued".into(), "plans/two.md".into()),
            (ids[2].clone(), "queued".into(), "plans/three.md".into()),
        ]
    );
    for id in &ids {
        let state = status(&repo, id);
        assert!(
            attempts(&state, "executor").is_empty(),
            "not driven: {state:#}"
        );
        assert_eq!(state["lock"], Value::Null, "{state:#}");
    }
    let list = repo.baton(["list"]);
    assert_eq!(list.stdout.matches(" queued ").count(), 3, "{list}");
    assert!(
        !list.stdout.contains("CYCLE"),
        "nothing to say of cycle yet: {list}"
    );
    let shown = repo.baton(["status", &ids[1]]);
    assert!(
        shown
            .stdout
            .contains("next: git baton cycle   (starts the queue)"),
        "{shown}"
    );
}

/// `--json` with several plans prints one array of the runs, as `list --json` does.
#[test]
fn several_plans_with_json_print_an_array_of_the_runs() {
    let repo = queue_repo(&[]);
    let run = repo.baton(["run", "plans/two.md", "plans/three.md", "--queue", "--json"]);
    assert_eq!(run.code, 0, "{run}");
    let printed = run.json();
    let ids: Vec<&str> = printed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, announced(&run));
    assert!(
        printed
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["status"] == "queued")
    );
}

/// A plan that does not parse, or that names a stage the configuration lacks, among good ones:
/// one `error:` naming it, and no run, branch or worktree is created — not even for the plans
/// named before it.
#[test]
fn a_bad_plan_among_several_creates_no_run() {
    let bad_key = "---\ntragets: [docs/a.md]\n---\n# Typo\n";
    let bad_stage = "---\ntargets: [docs/a.md]\nstages: [executor, nowhere]\n---\n# Stage\n";
    let repo = queue_repo(&[("plans/typo.md", bad_key), ("plans/stage.md", bad_stage)]);
    for bad in ["plans/typo.md", "plans/stage.md"] {
        let run = repo.baton(["run", "plans/fix.md", "plans/two.md", bad, "--queue"]);
        assert!(
            run.the_error(2).contains(bad),
            "the error names {bad}: {run}"
        );
        assert!(announced(&run).is_empty(), "{run}");
        assert!(run_entries(&repo).is_empty(), "{:?}", run_entries(&repo));
        assert_eq!(branches(&repo), "");
        assert_eq!(worktrees(&repo).len(), 1, "{:?}", worktrees(&repo));
    }
}

/// A glob the shell did not expand is expanded relative to the current directory (here
/// `plans/`, through `-C`), sorted; the runs record the plans' paths in the repository. A glob
/// that matches nothing is an error naming it.
#[test]
fn a_quoted_glob_expands_relative_to_the_current_directory() {
    let repo = queue_repo(&[("plans/notes.txt", "not a plan\n")]);
    let run = repo.baton(["-C", "plans", "run", "*.md", "--queue"]);
    assert_eq!(run.code, 0, "{run}");
    let plans: Vec<String> = listed(&repo).into_iter().map(|(_, _, plan)| plan).collect();
    assert_eq!(plans, ["plans/fix.md", "plans/three.md", "plans/two.md"]);

    let none = repo.baton(["run", "plans/*.yml", "--queue"]);
    assert_eq!(none.code, 2, "{none}");
    assert!(
        none.stderr
            .starts_with("error: no plan matches `plans/*.yml`\nhint: "),
        "{none}"
    );
    assert_eq!(listed(&repo).len(), 3, "nothing more was created");
}

/// One key names one run: `--key` with several plans is bad input, and creates nothing; so is
/// `--jobs` beside `--queue`, which drives nothing.
#[test]
fn several_plans_refuse_a_key() {
    let repo = queue_repo(&[]);
    let keyed = repo.baton(["run", "plans/*.md", "--queue", "--key", "k1"]);
    assert_eq!(keyed.code, 2, "{keyed}");
    assert!(
        keyed
            .stderr
            .starts_with("error: --key names one run, and 3 plans were given\nhint: "),
        "{keyed}"
    );
    let jobs = repo.baton(["run", "plans/*.md", "--queue", "--jobs", "2"]);
    assert_eq!(jobs.code, 2, "{jobs}");
    assert!(jobs.stderr.contains("--jobs"), "{jobs}");
    assert!(run_entries(&repo).is_empty());
    // A glob that matches one plan is one plan: run as `run PLAN` runs it.
    let one = repo.baton(["run", "plans/t*o.md", "--key", "k1"]);
    assert_eq!(one.code, 0, "{one}");
    assert_eq!(status(&repo, &one.run_id())["status"], "review");
}

/// Several plans without `--queue` are created queued, then driven as `cycle` drives runs — each
/// by a `git baton resume` of its own, in its own worktree, two at once here — and `run` ends
/// with the table of how they ended, exit 0 when every one reached review.
#[test]
fn several_plans_without_queue_are_driven_jobs_at_a_time() {
    let repo = queue_repo(&[]);
    let run = repo.baton(["run", "plans/fix.md", "plans/two.md", "--jobs", "2"]);
    assert_eq!(run.code, 0, "{run}");
    let ids = announced(&run);
    assert_eq!(ids.len(), 2, "{run}");
    for id in &ids {
        let state = status(&repo, id);
        assert_eq!(state["status"], "review", "{state:#}");
        assert_eq!(attempt_field(&state, "executor", "outcome"), ["succeeded"]);
        assert!(
            run.stderr.contains(&format!("cycle: {id}: resuming")),
            "{run}"
        );
        let row = run
            .stderr
            .lines()
            .find(|l| l.starts_with(id.as_str()) && !l.contains(" | "))
            .unwrap_or_else(|| panic!("no row for {id}: {run}"));
        assert!(row.contains(" review "), "{row}");
    }
    let worktrees = worktrees(&repo);
    assert_eq!(
        worktrees.len(),
        3,
        "one of each run, and the main one: {worktrees:?}"
    );
}

/// On the real clock, runs made within one second have ids in no particular order (the id
/// counts seconds, then three random characters): `list` orders them by when each was made, so
/// that the queue reads as it was made.
#[test]
fn list_shows_the_queue_in_the_order_it_was_made() {
    let plans: Vec<String> = (1..=6).map(|n| format!("plans/q{n}.md")).collect();
    let files: Vec<(&str, &str)> = plans.iter().map(|p| (p.as_str(), TWO)).collect();
    let repo = queue_repo(&files);
    let real_clock = |args: &[&str]| {
        let mut cmd = repo.baton_command(&repo.root, &[], args);
        cmd.env_remove("GIT_BATON_TIMESTAMP")
            .env_remove("GIT_BATON_RANDOMNESS_SEED")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        repo.baton_wait(cmd.spawn().unwrap(), LIVENESS)
    };
    let run = real_clock(&["run", "plans/q*.md", "--queue"]);
    assert_eq!(run.code, 0, "{run}");
    let made = announced(&run);
    assert_eq!(made.len(), 6, "{run}");
    let listed: Vec<String> = listed(&repo).into_iter().map(|(id, _, _)| id).collect();
    assert_eq!(listed, made);
}

/// One run of several that does not reach review (the worker leaves `docs/e.md` alone, which its
/// plan targets) makes `run` exit 1, as one run blocked would; the other still reached review.
#[test]
fn several_driven_plans_exit_1_when_one_ends_short_of_review() {
    let e = "---\ntargets: [docs/e.md]\n---\n# Fix e\n";
    let repo = queue_repo(&[("docs/e.md", "# E\n"), ("plans/e.md", e)]);
    let run = repo.baton(["run", "plans/two.md", "plans/e.md"]);
    assert_eq!(run.code, 1, "{run}");
    let [two, e] = <[String; 2]>::try_from(announced(&run)).unwrap();
    assert_eq!(status(&repo, &two)["status"], "review");
    assert_eq!(status(&repo, &e)["status"], "blocked");
}
