//! Runner checks end to end (docs/checks.md): commands `.baton.yml` and the plan name, run by
//! git-baton itself in the run's worktree after the actor exits, recorded on the attempt as
//! runner evidence; a failing one blocks the attempt whatever the agent claimed.

use super::*;

/// The standard pipeline with `worker` and `writer`, and `checks` (YAML lines) after it.
fn repo_checking(actors: &[Actor], checks: &str) -> TestRepo {
    let mut all = vec![writer()];
    all.extend(actors.iter().cloned());
    repo_with(&config(
        &all,
        &format!("{}{checks}", pipeline_with(&actors[0].name, "")),
    ))
}

/// The runner checks recorded on attempt `n` (1-based) of the executor.
fn checks_of(state: &Value, n: usize) -> Vec<Value> {
    attempts(state, "executor")[n - 1]["checks"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The tail of the check's output the state recorded.
fn tail(check: &Value) -> &str {
    check["tail"].as_str().unwrap()
}

#[test]
fn a_passing_check_is_recorded_as_runner_evidence_and_the_run_goes_on() {
    let repo = repo_checking(
        &[worker()],
        "checks:\n  - { name: tests, command: [sh, -c, 'echo \"3 passed in $PWD\"; echo warn >&2'] }\n",
    );
    let (id, _) = repo.run_plan("plans/fix.md", 0);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "review");
    let checks = checks_of(&state, 1);
    assert_eq!(checks.len(), 1, "{state:#}");
    let check = &checks[0];
    assert_eq!(check["name"], "tests");
    assert_eq!(check["outcome"], "passed");
    assert_eq!(check["exit_code"], 0);
    assert_eq!(check["stdout_log"], "checks/tests.stdout.log");
    // It ran in the run's worktree, not in the main one.
    let log = run_dir(&repo, &id).join("attempts/executor-1/checks/tests.stdout.log");
    let logged = text(&log);
    assert!(
        logged.ends_with(&format!("/.baton/worktrees/{id}\n")),
        "{logged}"
    );
    assert!(tail(check).starts_with("3 passed in "), "{check:#}");
    assert!(
        tail(check).ends_with(&format!("/.baton/worktrees/{id}\nwarn")),
        "{check:#}"
    );
    // The run's latest checks, beside its coverage; the reporter (ungated) ran none.
    assert_eq!(state["checks"][0]["outcome"], "passed");
    assert!(checks_of_stage(&state, "reporter").is_empty());
    let shown = repo.baton(["status", &id]);
    assert!(
        shown
            .stdout
            .contains("checks: passed (run by git-baton on attempt 1 of stage executor)"),
        "{shown}"
    );
    let review = repo.baton(["review", &id]);
    assert!(review.stdout.contains("\nchecks: passed"), "{review}");
}

fn checks_of_stage(state: &Value, name: &str) -> Vec<Value> {
    attempts(state, name)
        .iter()
        .flat_map(|a| a["checks"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// Done-means: the agent says its tests pass and covers every target; git-baton's own run of
/// the tests fails, so the attempt is blocked with the check's name and the tail of its log,
/// in the run's error, in `status`, and in the next agent's prompt. Once the work makes the
/// check pass, the run goes on.
#[test]
fn claimed_passing_tests_that_fail_are_blocked_by_the_runners_check() {
    let claimer = Actor::agent("claimer")
        .edit_all()
        .say("All 42 tests pass. Done.")
        .evidence(USAGE);
    let fixer = Actor::agent("fixer").edit("fixed.txt", "the grading bug");
    let script = "if test -f fixed.txt; then echo '42 passed'; else \
                  echo 'test grades::rule_a ... FAILED'; echo \"assertion failed: grade == 'A'\" >&2; exit 3; fi";
    let repo = repo_checking(
        &[claimer, fixer],
        &format!("checks:\n  - name: tests\n    command: [sh, -c, {script:?}]\n"),
    );
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "blocked", "{state:#}");
    // The coverage gate passed: only the runner's check blocks it.
    assert_eq!(state["coverage"]["passed"], true, "{:#}", state["error"]);
    let check = &checks_of(&state, 1)[0];
    assert_eq!(check["outcome"], "failed");
    assert_eq!(check["exit_code"], 3);
    assert_eq!(
        tail(check),
        "test grades::rule_a ... FAILED\nassertion failed: grade == 'A'"
    );
    assert_eq!(
        state["error"]["message"],
        "runner check `tests` failed with exit code 3; the tail of its output:\n\
         test grades::rule_a ... FAILED\nassertion failed: grade == 'A'"
    );
    let shown = repo.baton(["status", &id]);
    for line in [
        "checks: failed (run by git-baton on attempt 1 of stage executor)",
        "failed     tests  exit code 3",
        "  | assertion failed: grade == 'A'",
        "(the stage re-runs; its work must pass runner check `tests`)",
    ] {
        assert!(shown.stdout.contains(line), "{line:?} not in\n{shown}");
    }

    let resumed = repo.baton(["resume", &id, "--actor", "executor=fixer"]);
    assert_eq!(resumed.code, 0, "{resumed}");
    let prompt = text(&run_dir(&repo, &id).join("attempts/executor-2/prompt.md"));
    assert!(
        prompt.contains(
            "The runner check `tests` failed with exit code 3 on the previous attempt's work."
        ),
        "{prompt}"
    );
    assert!(
        prompt.contains(
            "```text\ntest grades::rule_a ... FAILED\nassertion failed: grade == 'A'\n```"
        ),
        "{prompt}"
    );
    let state = status(&repo, &id);
    assert_eq!(state["status"], "review");
    assert_eq!(checks_of(&state, 2)[0]["outcome"], "passed");
    assert_eq!(state["checks"][0]["outcome"], "passed");
}

/// A check that hangs is killed at its timeout together with what it started, and recorded as
/// timed out; the attempt is blocked.
#[test]
fn a_hanging_check_is_killed_at_its_timeout_with_its_process_group() {
    let out = scratch();
    let child_pid = outside(&out, "child.pid");
    let script = format!("sleep 300 & echo $! > {}; wait", child_pid.display());
    let repo = repo_checking(
        &[worker()],
        &format!("checks:\n  - name: hang\n    shell: {script:?}\n    timeout: 1\n"),
    );
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "blocked");
    let check = &checks_of(&state, 1)[0];
    assert_eq!(check["outcome"], "timed_out", "{check:#}");
    assert!(
        state["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("runner check `hang` timed out and was killed"),
        "{state:#}"
    );
    let pid = wait_for_line(&child_pid);
    assert!(
        group_gone_within(&pid, LIVENESS) && process_gone(&pid),
        "the check's `sleep` ({pid}) outlived it"
    );
}

/// Whether `pid` is gone or a zombie.
fn process_gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| matches!(rest.trim_start().chars().next(), Some('Z' | 'X'))),
    }
}

/// A check whose output floods is capped like the actor's logs, and its recorded tail stays
/// small.
#[test]
fn a_flooding_check_is_capped() {
    let repo = repo_checking(
        &[worker()],
        "log_limit: 64KiB\nchecks:\n  - { name: flood, shell: 'yes flooding | head -c 3000000; exit 1' }\n",
    );
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    let check = &checks_of(&state, 1)[0];
    assert_eq!(check["outcome"], "failed");
    let log = run_dir(&repo, &id).join("attempts/executor-1/checks/flood.stdout.log");
    let len = std::fs::metadata(&log).unwrap().len();
    assert!(len < 64 * 1024 + 200, "the log kept {len} bytes");
    assert!(text(&log).contains("dropped here"), "no cut marker");
    assert!(tail(check).len() <= 4096);
    assert!(
        tail(check).contains("flooding\nflooding"),
        "{}",
        tail(check)
    );
}

const PLAN_WITH_CHECK: &str = "\
---
title: Fix the grading documents
targets: [docs/a.md, docs/b.md, docs/c.md]
checks:
  - { name: plan-docs, command: [grep, -q, 'rule: grade A', docs/a.md] }
---
Fix them.
";

/// A plan adds a check of its own; it runs after the repository's, and counts the same.
#[test]
fn a_plan_adds_a_check_after_the_repositorys() {
    let lazy = Actor::agent("lazy").edit_all();
    let yml = config(
        &[lazy, worker(), writer()],
        &format!(
            "{}checks:\n  - {{ name: tests, command: [\"true\"] }}\n",
            pipeline_with("lazy", "")
        ),
    );
    let repo = TestRepo::with()
        .files(&[
            ("docs/a.md", "A\n"),
            ("docs/b.md", "B\n"),
            ("docs/c.md", "C\n"),
        ])
        .files(&[("plans/fix.md", PLAN_WITH_CHECK)])
        .config(&yml)
        .commit();
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    let outcomes: Vec<String> = checks_of(&state, 1)
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c["name"].as_str().unwrap(),
                c["outcome"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(outcomes, ["tests passed", "plan-docs failed"]);
    // What is recorded and printed of them, the configuration and the plan hold their schemas.
    use super::schemas::{assert_valid, frontmatter, schema, yaml};
    let stored: Value =
        serde_json::from_str(&text(&run_dir(&repo, &id).join("state.json"))).unwrap();
    assert_valid(&schema("state.schema.json"), &stored, "state.json");
    assert_valid(&schema("status.schema.json"), &state, "status --json");
    assert_valid(&schema("baton.schema.json"), &yaml(&yml), ".baton.yml");
    assert_valid(
        &schema("plan.schema.json"),
        &frontmatter(PLAN_WITH_CHECK),
        "plans/fix.md",
    );
    assert!(
        state["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("runner check `plan-docs` failed with exit code 1"),
        "{state:#}"
    );
    // The worker writes `rule: grade A` into docs/a.md: the plan's check passes.
    let resumed = repo.baton(["resume", &id, "--actor", "executor=worker"]);
    assert_eq!(resumed.code, 0, "{resumed}");
}

/// A plan may not redefine a check of the repository: the run is refused at the plan's line.
#[test]
fn a_plan_cannot_redefine_a_repository_check() {
    let plan =
        "---\ntargets: [docs/a.md]\nchecks:\n  - { name: tests, command: [\"true\"] }\n---\n";
    let yml = config(
        &[worker(), writer()],
        &format!("{PIPELINE}checks:\n  - {{ name: tests, command: [cargo, test] }}\n"),
    );
    let repo = TestRepo::with()
        .files(&[("docs/a.md", "A\n"), ("plans/weak.md", plan)])
        .config(&yml)
        .commit();
    let run = repo.baton(["run", "plans/weak.md"]);
    assert_snapshot!(run.to_string().trim_end(), @r"
    exit: 2
    --- stderr
    error: plans/weak.md:4:13: check `tests` is already defined by the repository at .baton.yml:10:13; a plan may add checks, not redefine them
    hint: give the plan's check another name
    ");
    assert!(
        run_entries(&repo).iter().all(|n| n.starts_with('.')),
        "a run was created"
    );
}

/// A check whose program is not on PATH fails as a check, with one line naming the
/// configuration file and line where it is defined.
#[test]
fn a_check_whose_program_is_missing_names_its_config_line() {
    let repo = repo_checking(
        &[worker()],
        "checks:\n  - name: tests\n    command: [no-such-test-runner, --all]\n",
    );
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    let check = &checks_of(&state, 1)[0];
    assert_eq!(check["outcome"], "error");
    let shown = repo.baton(["status", &id]);
    assert!(
        shown.stdout.contains(
            "    error      tests  .baton.yml:10:11: command `no-such-test-runner` not found (a name without `/` is looked up on PATH)\n"
        ),
        "{shown}"
    );
    assert_eq!(
        check["error"],
        ".baton.yml:10:11: command `no-such-test-runner` not found (a name without `/` is looked up on PATH)"
    );
    assert_eq!(
        state["error"]["message"],
        "runner check `tests` could not be run: .baton.yml:10:11: command `no-such-test-runner` not found (a name without `/` is looked up on PATH)"
    );
}

/// `git baton check --checks` runs the stage's checks for the agent, now, with its logs apart
/// from the runner's; only the runner's run after the agent exits is recorded, and counts.
#[test]
fn the_agent_may_run_the_checks_but_only_the_runners_run_counts() {
    let out = scratch();
    let seen = outside(&out, "agent-check.txt");
    // The check passes while the agent runs (a marker it leaves), and fails once it is gone.
    let agent = super::agent_side::with_baton(Actor::shell(
        "claimer",
        &format!(
            "printf 'rule\\n' >> docs/a.md; printf 'rule\\n' >> docs/b.md; printf 'rule\\n' >> docs/c.md; \
             touch ../agent-running; git baton check --checks > {0}; echo \"exit $?\" >> {0}; rm ../agent-running",
            seen.display()
        ),
    ));
    let repo = repo_checking(
        &[agent],
        "checks:\n  - { name: tests, shell: 'test -f ../agent-running && echo ok || { echo \"not ok\"; exit 1; }' }\n",
    );
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let told = text(&seen);
    assert!(
        told.contains("passed     tests  agent-checks/tests.stdout.log"),
        "{told}"
    );
    assert!(told.ends_with("exit 0\n"), "{told}");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "blocked");
    let checks = checks_of(&state, 1);
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0]["outcome"], "failed");
    assert_eq!(tail(&checks[0]), "not ok");
}

/// The checks' logs are made by git-baton in the attempt's directory after the actor exits, and
/// an agent can reach that directory: links it planted there — at a log, or at the log
/// directory — are replaced, and what they point at is neither written nor created.
#[test]
fn links_an_agent_planted_at_the_check_logs_write_nothing_outside() {
    for (what, plant) in [
        (
            "a log",
            "mkdir -p $DIR/checks && ln -s $OUTSIDE/victim $DIR/checks/tests.stdout.log",
        ),
        ("the log directory", "ln -s $OUTSIDE $DIR/checks"),
    ] {
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, "precious\n").unwrap();
        let planter = Actor::shell(
            "planter",
            &format!(
                "for f in docs/a.md docs/b.md docs/c.md; do echo 'rule: new' >> $f; done; \
                 OUTSIDE={}; DIR=$(dirname \"$BATON_EVIDENCE_FILE\"); {plant} || exit 7",
                outside.path().display()
            ),
        );
        let repo = repo_checking(
            &[planter],
            "checks:\n  - { name: tests, command: [sh, -c, 'echo checked'] }\n",
        );
        let (id, _) = repo.run_plan("plans/fix.md", 0);
        assert_eq!(text(&victim), "precious\n", "{what}");
        let names: Vec<_> = std::fs::read_dir(outside.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["victim"], "{what}");
        let log = run_dir(&repo, &id).join("attempts/executor-1/checks/tests.stdout.log");
        assert_eq!(text(&log), "checked\n", "{what}");
    }
}
