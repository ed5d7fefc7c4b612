//! What an attempt may not touch: a protected path its plan does not target (the plan file,
//! `.baton.yml`, CI configuration, what `protect:` adds), the repository's git configuration,
//! the run's branch, the history the run recorded, the base. Each real agent below does the
//! plan's work and then one of these; its attempt is `failed`, the run's error is of kind
//! `violation`, and the attempt's `violations` name what it did.

use super::*;

/// The agent's share of the plan: the three documents, so that only the violation fails it.
const WORK: &str = "for f in docs/a.md docs/b.md docs/c.md; do echo 'rule: new' >> $f; done";

/// An agent that does the plan's work and then runs `then`.
fn working_then(then: &str) -> Actor {
    Actor::shell("agent", &format!("{WORK}; {then}"))
}

/// Runs the plan in a repository whose executor is `agent`, plus `tail` in `.baton.yml`.
fn ran(agent: Actor, tail: &str) -> (TestRepo, Run) {
    let repo = repo_running(&[agent], tail);
    let run = repo.baton(["run", "plans/fix.md"]);
    (repo, run)
}

/// `(kind, subject)` of each violation of the executor's latest attempt.
fn violations(state: &Value) -> Vec<(String, String)> {
    let attempt = attempts(state, "executor").last().unwrap();
    attempt["violations"]
        .as_array()
        .unwrap_or_else(|| panic!("no violations in {attempt:#}"))
        .iter()
        .map(|v| {
            assert!(!v["message"].as_str().unwrap().is_empty(), "{v}");
            (
                v["kind"].as_str().unwrap().to_owned(),
                v["subject"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The run failed on its executor's violation; its error says `said`.
fn assert_violated(repo: &TestRepo, run: &Run, said: &str) -> Value {
    assert_eq!(run.code, 1, "{run}");
    let state = status(repo, &run.run_id());
    assert_eq!(state["status"], "failed", "{state:#}");
    assert_eq!(state["error"]["kind"], "violation", "{state:#}");
    let message = state["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("the attempt changed what no attempt may: "),
        "{message}"
    );
    assert!(message.contains(said), "{message}");
    // The gate never judged the attempt: a violation is not a coverage question.
    assert_eq!(attempt_field(&state, "executor", "coverage"), [Value::Null]);
    assert_eq!(
        attempt_field(&state, "reporter", "outcome"),
        Vec::<Value>::new()
    );
    state
}

#[test]
fn an_attempt_that_changes_a_protected_path_its_plan_does_not_target_fails_naming_it() {
    let cases = [
        (
            "echo 'coverage: resume' >> .baton.yml",
            ".baton.yml",
            "git-baton's configuration",
        ),
        (
            "echo '  - docs/d.md' >> plans/fix.md",
            "plans/fix.md",
            "the run's plan",
        ),
        (
            "mkdir -p .github/workflows && echo 'on: push' > .github/workflows/ci.yml",
            ".github/workflows/ci.yml",
            "CI configuration",
        ),
        // Committed, and removed rather than edited: still a change of the run.
        (
            "git rm -q .baton.yml && git commit -qm 'drop the configuration'",
            ".baton.yml",
            "git-baton's configuration",
        ),
    ];
    for (bad, path, what) in cases {
        let (repo, run) = ran(working_then(bad), "");
        let state = assert_violated(
            &repo,
            &run,
            &format!("it changes {path} ({what}), which the plan does not target"),
        );
        assert_eq!(
            violations(&state),
            [("protected_path".to_owned(), path.to_owned())],
            "{bad}"
        );
        // Nothing was undone: the worktree keeps the agent's work, the snapshot records it.
        assert!(text(&worktree_of(&repo, &state).join("docs/a.md")).contains("rule: new"));
        assert!(attempt_field(&state, "executor", "snapshot")[0].is_string());
    }
}

#[test]
fn a_violation_left_in_the_worktree_fails_the_resumed_attempt_too_until_it_is_undone() {
    let once = scratch();
    let marker = outside(&once, "edited");
    let agent = working_then(&format!(
        "if [ ! -e {m} ]; then touch {m}; echo 'coverage: resume' >> .baton.yml; fi",
        m = marker.display()
    ));
    let (repo, run) = ran(agent, "");
    let state = assert_violated(&repo, &run, "it changes .baton.yml");
    let id = run.run_id();
    // The second attempt does only its work, but the worktree still holds the first's edit.
    let resumed = repo.baton(["resume", &id]);
    assert_eq!(resumed.code, 1, "{resumed}");
    let again = status(&repo, &id);
    assert_eq!(attempts(&again, "executor").len(), 2);
    // Its prompt said why the first attempt failed.
    let prompt = text(&run_dir(&repo, &id).join("attempts/executor-2/prompt.md"));
    assert!(
        prompt.contains(
            "- it changes .baton.yml (git-baton's configuration), which the plan does not target"
        ),
        "{prompt}"
    );
    assert_eq!(
        violations(&again),
        [("protected_path".to_owned(), ".baton.yml".to_owned())]
    );
    // Undone, the next attempt passes and the run goes on.
    let worktree = worktree_of(&repo, &state);
    repo.git_in(&worktree, ["checkout", "-q", "HEAD", "--", ".baton.yml"]);
    let fixed = repo.baton(["resume", &id]);
    assert_eq!(fixed.code, 0, "{fixed}");
    assert_eq!(status(&repo, &id)["status"], "review");
}

#[test]
fn a_plan_that_targets_a_protected_path_may_change_it() {
    let agent = working_then("echo 'coverage: resume' >> .baton.yml");
    let repo = repo_running(&[agent], "");
    repo.write(
        "plans/fix.md",
        "---\ntargets: [docs/a.md, docs/b.md, docs/c.md, .baton.yml]\n---\nAlso the config.\n",
    );
    repo.commit_all("target the configuration");
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    let state = status(&repo, &run.run_id());
    assert_eq!(state["status"], "review");
    assert_eq!(
        attempt_field(&state, "executor", "violations"),
        [Value::Null]
    );
}

#[test]
fn protect_in_the_configuration_and_in_the_plan_adds_paths() {
    let agent = working_then("echo x > NOTES.md && mkdir -p deploy && echo y > deploy/prod.tf");
    let repo = repo_running(&[agent], "protect: [NOTES.md]\n");
    let (repo, run) = {
        let run = repo.baton(["run", "plans/fix.md"]);
        (repo, run)
    };
    let state = assert_violated(&repo, &run, "it changes NOTES.md (protected by .baton.yml)");
    assert_eq!(
        violations(&state),
        [("protected_path".to_owned(), "NOTES.md".to_owned())]
    );

    let agent = working_then("mkdir -p deploy && echo y > deploy/prod.tf");
    let repo = repo_running(&[agent], "");
    repo.write(
        "plans/fix.md",
        "---\ntargets: [docs/a.md, docs/b.md, docs/c.md]\nprotect: [deploy/]\n---\nFix.\n",
    );
    repo.commit_all("protect deploy/");
    let run = repo.baton(["run", "plans/fix.md"]);
    let state = assert_violated(
        &repo,
        &run,
        "it changes deploy/prod.tf (protected by the plan)",
    );
    assert_eq!(
        violations(&state),
        [("protected_path".to_owned(), "deploy/prod.tf".to_owned())]
    );
}

#[test]
fn neither_the_plan_nor_the_configuration_can_empty_the_protected_paths() {
    let repo = repo_running(&[working_then("true")], "");
    repo.write(
        "plans/fix.md",
        "---\ntargets: [docs/a.md]\nprotect: []\n---\nFix.\n",
    );
    repo.commit_all("unprotect");
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.stderr
            .starts_with("error: plans/fix.md:3:1: `protect: []` cannot empty the protected paths"),
        "{run}"
    );
    assert!(run_entries(&repo).is_empty(), "no run was created");

    let repo = repo_running(&[working_then("true")], "protect: []\n");
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stderr.contains("`protect` is empty"), "{run}");
}

#[test]
fn an_attempt_that_changes_the_git_configuration_fails_naming_the_file() {
    let cases = [
        ("git config core.hooksPath /tmp/x", "config"),
        (
            "printf '#!/bin/sh\\n' > \"$(git rev-parse --git-common-dir)/hooks/pre-commit\"",
            "hooks/pre-commit",
        ),
        (
            "echo 'docs/' >> \"$(git rev-parse --git-common-dir)/info/exclude\"",
            "info/exclude",
        ),
    ];
    for (bad, file) in cases {
        let (repo, run) = ran(working_then(bad), "");
        let state = assert_violated(
            &repo,
            &run,
            &format!("it changes the repository's git configuration: {file}"),
        );
        assert_eq!(
            violations(&state),
            [("git_config".to_owned(), file.to_owned())]
        );
    }
}

#[test]
fn an_attempt_that_moves_its_worktree_off_the_branch_fails_and_resume_says_the_same() {
    let (repo, run) = ran(working_then("git checkout -q -b other"), "");
    let id = run.run_id();
    let branch = format!("baton/{id}");
    let said = format!("is on branch other instead of {branch}");
    let state = assert_violated(&repo, &run, &format!("its worktree {said}"));
    assert_eq!(
        violations(&state),
        [("branch".to_owned(), "other".to_owned())]
    );
    // resume refuses the worktree in the same words.
    let resumed = repo.baton(["resume", &id]);
    assert_eq!(resumed.code, 2, "{resumed}");
    assert!(resumed.stderr.contains(&said), "{resumed}");
}

#[test]
fn an_attempt_that_rewrites_the_recorded_history_or_loses_the_base_fails() {
    // The executor commits its work; the reporter then resets the branch below that commit.
    let committer = Actor::shell("agent", &format!("{WORK} && git commit -qam work"));
    let resetter = Actor::shell("writer", "git reset -q --hard HEAD~1");
    let repo = repo_with(&config(&[committer, resetter], &pipeline_with("agent", "")));
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    assert_eq!(state["error"]["kind"], "violation", "{state:#}");
    assert_eq!(state["error"]["stage"], "reporter", "{state:#}");
    let work = repo.git([
        "log",
        "-1",
        "--format=%H",
        &format!("refs/baton/runs/{id}/attempts/executor-1^"),
    ]);
    let reporter = attempts(&state, "reporter").last().unwrap();
    let found: Vec<(&str, &str)> = reporter["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["kind"].as_str().unwrap(), v["subject"].as_str().unwrap()))
        .collect();
    assert_eq!(found, [("history", work.trim())]);
    let message = state["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("it rewrote baton/{id} below ")),
        "{message}"
    );

    // Rebased onto the base's parent: neither the recorded tip nor the base is in its history.
    let rebaser = working_then("git commit -qam work && git rebase -q --onto HEAD~2 HEAD~1");
    let repo = repo_running(&[rebaser], "");
    repo.write("docs/d.md", "# D\n");
    repo.commit_all("a second commit, so that the base has a parent");
    let run = repo.baton(["run", "plans/fix.md"]);
    let state = assert_violated(&repo, &run, "does not contain the run's base");
    let kinds: Vec<String> = violations(&state).into_iter().map(|(k, _)| k).collect();
    assert_eq!(kinds, ["history", "base"]);
}

/// The plan snapshot `BATON_PLAN_FILE` names is the plan the run follows: an attempt that
/// rewrites it (here without two of the three targets, so that the next attempt would gate
/// less) fails naming it, and the snapshot is written back as it was. A snapshot changed while
/// no attempt runs is refused when the run is next loaded: the run follows the plan it was
/// created with or none.
#[test]
fn the_plan_snapshot_is_the_plan_the_run_was_created_with() {
    let fewer = "printf -- '---\\ntitle: Fix the grading documents\\ntargets:\\n  - docs/a.md\\n---\\nDo it.\\n' > \"$BATON_PLAN_FILE\"";
    let (repo, run) = ran(working_then(fewer), "");
    let id = run.run_id();
    let state = assert_violated(
        &repo,
        &run,
        "it changes the run's plan snapshot, which the run follows",
    );
    assert_eq!(
        violations(&state),
        [("plan_snapshot".to_owned(), "plan.md".to_owned())]
    );
    let snapshot = repo.path(&format!(".git/baton/runs/{id}/plan.md"));
    assert_eq!(text(&snapshot), text(&repo.path("plans/fix.md")));

    std::fs::write(
        &snapshot,
        "---\ntitle: Fix\ntargets: [docs/a.md]\n---\nDo it.\n",
    )
    .unwrap();
    let resumed = repo.baton(["resume", &id]);
    assert_eq!(
        resumed.the_error(2),
        format!(
            "error: run {id}: its plan snapshot $TMP/repo/.git/baton/runs/{id}/plan.md is not the \
             plan the run was created with: plan.id or plan.targets is not what its plan \
             snapshot declares"
        ),
        "{resumed}"
    );
    assert!(
        resumed
            .stderr
            .contains("hint: something changed it after creation"),
        "{resumed}"
    );
}
