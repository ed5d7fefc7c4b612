//! `derive_targets: body`: a plan that declares no targets runs with the paths its body names,
//! gated exactly like declared ones — the incident's own register-made plan had none.

use super::*;

/// The incident's plan as a register writes it: no `targets`, the documents named in the text.
const UNDECLARED: &str = "\
---
title: Fix the grading documents
---
# Fix the three grading documents

State the new grading rule in `docs/a.md`, [the B document](../docs/b.md) and docs/c.md.
";

fn repo_deriving(actors: &[Actor]) -> TestRepo {
    let mut all = actors.to_vec();
    all.push(writer());
    let yml = config(
        &all,
        &pipeline_with(&actors[0].name, "derive_targets: body\n"),
    );
    let repo = repo_with(&yml);
    repo.write("plans/fix.md", UNDECLARED);
    repo.commit_all("a plan without targets");
    repo
}

#[test]
fn a_lazy_resume_of_a_plan_without_targets_is_blocked_on_the_derived_ones() {
    let partial = Actor::agent("partial")
        .edit("docs/a.md", "rule: grade A")
        .exit("75")
        .set("rate_limit: { exit_codes: [75] }");
    let lazy = Actor::agent("lazy").say("The documents already state the rule. Done.");
    let repo = repo_deriving(&[partial, lazy, worker()]);

    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    assert_eq!(
        state["plan"]["targets"],
        serde_json::json!(["docs/a.md", "docs/b.md", "docs/c.md"])
    );
    assert_eq!(state["plan"]["targets_source"], "derived");

    let lazy_run = repo.baton(["resume", &id, "--actor", "executor=lazy"]);
    assert_eq!(lazy_run.code, 1, "{lazy_run}");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "blocked");
    assert_eq!(
        coverage_rows(&state),
        [
            "docs/a.md changed",
            "docs/b.md uncovered",
            "docs/c.md uncovered"
        ]
    );
    let text = repo.baton(["status", &id]);
    assert!(
        text.stdout
            .contains("coverage: failed (targets derived from the plan's body)"),
        "{text}"
    );

    let done = repo.baton(["resume", &id, "--actor", "executor=worker"]);
    assert_eq!(done.code, 0, "{done}");
    assert_eq!(status(&repo, &id)["status"], "review");
    let review = repo.baton(["review", &id, "--no-pager"]);
    assert!(
        review
            .stdout
            .contains("coverage (targets derived from the plan's body)"),
        "{review}"
    );

    let finish = repo.baton(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    let message = repo.git(["log", "-1", "--format=%B", &format!("baton/{id}")]);
    assert!(
        message.contains("Baton-Targets: derived from the plan's body\n"),
        "{message}"
    );
}

/// Without the policy nothing changes: the same plan runs unverified.
#[test]
fn without_the_policy_the_plan_stays_unverified() {
    let repo = repo_with(&config(&[worker(), writer()], PIPELINE));
    repo.write("plans/fix.md", UNDECLARED);
    repo.commit_all("a plan without targets");
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    let state = status(&repo, &run.run_id());
    assert_eq!(state["plan"]["targets"], serde_json::json!([]));
    assert!(state["plan"].get("targets_source").is_none(), "{state:#}");
    assert_eq!(state["coverage"]["verified"], false);
}

/// A body that names nothing of the base leaves the run unverifiable, and it says why.
#[test]
fn a_body_that_names_nothing_says_why_the_run_is_unverified() {
    let repo = repo_deriving(&[worker()]);
    repo.write(
        "plans/fix.md",
        "---\ntitle: vague\n---\nMake it better. See https://example.com/a.md\n",
    );
    repo.commit_all("a vague plan");
    let (id, _) = repo.run_plan("plans/fix.md", 0);
    let state = status(&repo, &id);
    assert_eq!(state["plan"]["targets_source"], "derived");
    assert_eq!(state["coverage"]["verified"], false);
    let text = repo.baton(["status", &id]);
    assert!(
        text.stdout.contains(
            "coverage: not verified — the plan declares no targets and its body names no path of the base"
        ),
        "{text}"
    );
}

/// The record does not decide what is gated: targets derived again from the snapshot and the
/// base must be the ones the RunState lists, or the run is refused.
#[test]
fn a_record_whose_derived_targets_were_edited_is_refused() {
    let partial = Actor::agent("partial")
        .edit("docs/a.md", "rule: grade A")
        .exit("75")
        .set("rate_limit: { exit_codes: [75] }");
    let repo = repo_deriving(&[partial, worker()]);
    let (id, _) = repo.run_plan("plans/fix.md", 1);

    let file = run_dir(&repo, &id).join("state.json");
    let mut state: Value = serde_json::from_str(&text(&file)).unwrap();
    state["plan"]["targets"] = serde_json::json!(["docs/a.md"]);
    std::fs::write(&file, serde_json::to_string_pretty(&state).unwrap()).unwrap();

    let resumed = repo.baton(["resume", &id, "--actor", "executor=worker"]);
    assert_eq!(resumed.code, 2, "{resumed}");
    assert!(
        resumed.stderr.contains(&format!(
            "error: run {id} gates targets derived from its plan's body, but its RunState lists \
             targets [docs/a.md], its plan snapshot gives [docs/a.md, docs/b.md, docs/c.md]"
        )),
        "{resumed}"
    );
}

/// The CI gate derives as the run did, against the merge base, under the merge base's policy.
#[test]
fn verify_gates_the_derived_targets_in_range_mode() {
    let repo = repo_deriving(&[worker()]);
    repo.git(["checkout", "-q", "-b", "work"]);
    repo.write("docs/a.md", "rule: grade A\n");
    repo.commit_all("only a");
    let json = repo
        .baton([
            "verify",
            "plans/fix.md",
            "--base",
            "main",
            "--head",
            "work",
            "--json",
        ])
        .json();
    assert_eq!(json["passed"], false);
    assert_eq!(json["plans"][0]["targets_source"], "derived");
    let rows = coverage_rows(&json["plans"][0]);
    assert_eq!(
        rows,
        [
            "docs/a.md changed",
            "docs/b.md uncovered",
            "docs/c.md uncovered"
        ]
    );
}

/// `run` warns, before the agent starts, about each path the body names beyond the targets.
#[test]
fn run_warns_about_paths_the_body_names_beyond_the_targets() {
    let repo = standard_repo(&[]);
    repo.write(
        "plans/fix.md",
        "---\ntargets: [docs/a.md, docs/b.md, docs/c.md]\n---\nAlso check `docs/extra.md` and docs/a.md.\n",
    );
    repo.write("docs/extra.md", "x\n");
    repo.commit_all("a plan naming one more path");
    let (id, run) = repo.run_plan("plans/fix.md", 0);
    assert!(
        run.stderr.starts_with(&format!(
            "run {id}\nworktree $TMP/repo/.baton/worktrees/{id}\n\
             warning: plans/fix.md:4:13: the body names `docs/extra.md`, which no target covers\n"
        )),
        "{run}"
    );
}
