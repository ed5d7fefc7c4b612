//! Driving a run: the happy path to review, rate limits and timeouts, and the commands from
//! any worktree of the repository.

use super::*;

/// The happy path: the executor does all the work, the gate passes, the reporter runs, the run
/// waits for review. Every field scripts rely on is there, and the main worktree is untouched.
#[test]
fn full_run_reaches_review() {
    let repo = standard_repo(&[]);
    let base = base(&repo);
    let (id, run) = repo.run_plan("plans/fix.md", 0);
    assert_snapshot!(shown(&run, &base), @r"
        exit: 0
        --- stdout
        working on the grading documents
        report written
        --- stderr
        run 1mnbe80fdk
        worktree $TMP/repo/.baton/worktrees/1mnbe80fdk

        run 1mnbe80fdk: review
          plan      plans/fix.md (fix) — Fix the grading documents
          base      <BASE> (HEAD)
          branch    baton/1mnbe80fdk
          worktree  $TMP/repo/.baton/worktrees/1mnbe80fdk

          STAGE      STATUS       ACTOR      ATTEMPTS   DURATION       TOKENS      COST
          executor   succeeded    worker            1       1.0s         1540     $0.25
          reporter   succeeded    writer            1       1.0s            -         -
          total as the actors reported it: 1200 input + 340 output tokens, $0.25 (at least: 1 attempt(s) reported no usage)

          coverage: passed
            changed    docs/a.md  docs/a.md
            changed    docs/b.md  docs/b.md
            changed    docs/c.md  docs/c.md

          next: git baton review 1mnbe80fdk, then `git baton finish 1mnbe80fdk` and merge branch baton/1mnbe80fdk
        ");

    let state = status(&repo, &id);
    let worktree = repo.path(&format!(".baton/worktrees/{id}"));
    assert_eq!(state["run_id"], id.as_str());
    assert_eq!(state["status"], "review");
    assert_eq!(state["stale"], false);
    assert_eq!(state["plan"]["id"], "fix");
    assert_eq!(state["plan"]["path"], "plans/fix.md");
    assert_eq!(
        state["plan"]["targets"],
        serde_json::json!(["docs/a.md", "docs/b.md", "docs/c.md"])
    );
    assert_eq!(state["base"], base.as_str());
    assert_eq!(state["branch"], format!("baton/{id}").as_str());
    assert_eq!(
        state["worktree"],
        format!("$TMP/repo/.baton/worktrees/{id}").as_str()
    );
    assert_eq!(worktree_of(&repo, &state), worktree);
    assert_eq!(state["current_stage"], Value::Null);
    let names: Vec<&str> = state["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["executor", "reporter"]);
    for (name, actor) in [("executor", "worker"), ("reporter", "writer")] {
        let s = stage(&state, name);
        assert_eq!(s["status"], "succeeded", "{name}");
        assert_eq!(s["actor"], actor, "{name}");
        let [a] = attempts(&state, name).as_slice() else {
            panic!("one attempt expected: {s:#}")
        };
        assert_eq!(a["n"], 1);
        assert_eq!(a["actor"], actor);
        assert_eq!(a["outcome"], "succeeded");
        assert_eq!(a["resumed"], false);
        assert_eq!(a["exit_code"], 0);
        assert!(a["duration_ms"].is_u64(), "{a:#}");
        let started: jiff::Timestamp = a["started_at"].as_str().unwrap().parse().unwrap();
        let ended: jiff::Timestamp = a["ended_at"].as_str().unwrap().parse().unwrap();
        assert!(started <= ended, "{a:#}");
    }
    assert_eq!(
        attempts(&state, "executor")[0]["usage"]["input_tokens"],
        1200
    );
    assert_eq!(state["coverage"]["verified"], true);
    assert_eq!(state["coverage"]["passed"], true);
    assert_eq!(
        coverage_rows(&state),
        [
            "docs/a.md changed",
            "docs/b.md changed",
            "docs/c.md changed"
        ]
    );
    assert_eq!(state["coverage"]["targets"][0]["paths"][0], "docs/a.md");
    assert_eq!(state["usage"]["input_tokens"], 1200);
    assert_eq!(state["usage"]["output_tokens"], 340);
    assert_eq!(state["usage"]["cost_usd"], 0.25);
    assert_eq!(state["usage"]["attempts_without_usage"], 1);
    assert_eq!(state["error"], Value::Null);

    // The work is in the run's worktree, on its branch; the main worktree is untouched.
    assert!(text(&worktree.join("docs/a.md")).contains("rule: grade A"));
    assert!(!text(&repo.path("docs/a.md")).contains("rule: grade A"));
    assert_eq!(repo.git(["status", "--porcelain"]), "");
    assert_eq!(
        repo.git_in(&worktree, ["rev-parse", "--abbrev-ref", "HEAD"])
            .trim(),
        format!("baton/{id}")
    );

    let dir = run_dir(&repo, &id);
    let result: Value = serde_json::from_str(&text(&dir.join("result.json"))).unwrap();
    assert_eq!(result["run_id"], id.as_str());
    assert_eq!(result["status"], "review");
    assert_eq!(result["coverage"]["passed"], true);
    assert!(text(&dir.join("result.md")).contains("| `docs/a.md` | changed |"));
    assert_eq!(text(&dir.join("plan.md")), PLAN, "the plan snapshot");

    let list = repo.baton(["list"]);
    assert_snapshot!(shown(&list, &base), @r"
        exit: 0
        --- stdout
        RUN         STATUS  STAGE  PLAN          CREATED
        1mnbe80fdk  review  -      plans/fix.md  2026-01-01 00:00
        ");
    let listed = repo.baton(["list", "--json"]).json();
    assert_eq!(listed[0]["run_id"], id.as_str());

    let log = repo.baton(["log", &id, "--stage", "executor"]);
    assert_snapshot!(shown(&log, &base), @r"
        exit: 0
        --- stdout
        == run 1mnbe80fdk, stage executor, attempt 1 (succeeded, actor worker, started 2026-01-01T00:00:03Z)
        -- stdout
        working on the grading documents
        -- stderr
        (empty)
        ");
    // A unique prefix names the run too.
    let log = repo.baton(["log", &id[..8]]);
    assert_eq!(log.code, 0, "{log}");
    assert!(log.stdout.contains("report written"), "{log}");
}

#[test]
fn rate_limits_by_exit_code_and_by_output_and_timeouts() {
    let rules = r#"rate_limit: { exit_codes: [75], patterns: ["usage limit"] }"#;
    let agent = |name: &str| Actor::agent(name).set(rules);
    let repo = repo_running(
        &[
            agent("by_code").edit("docs/a.md", "a").exit("75"),
            agent("by_text")
                .warn("Error: Usage Limit reached, try again at 5pm")
                .exit("1"),
            agent("failing").warn("segfault").exit("3"),
            Actor::agent("sleepy").sleep("30").set("timeout: 1"),
        ],
        "",
    );
    // (actor, status, error kind, the start of the error message)
    #[rustfmt::skip]
    let cases = [
        ("by_code", "rate_limited", "rate_limited", "rate limited (exit code 75)"),
        ("by_text", "rate_limited", "rate_limited", "rate limited (usage limit)"),
        ("failing", "failed", "failed", "the actor exited with code 3"),
        ("sleepy", "interrupted", "interrupted", "stopped: the actor's timeout elapsed"),
    ];
    for (actor, status_word, kind, message) in cases {
        let started = Instant::now();
        let run = repo.baton([
            "run",
            "plans/fix.md",
            "--actor",
            &format!("executor={actor}"),
        ]);
        let id = run.run_id();
        assert_eq!(run.code, 1, "{actor}: {run}");
        let state = status(&repo, &id);
        assert_eq!(state["status"], status_word, "{actor}");
        assert_eq!(state["current_stage"], "executor", "{actor}");
        assert_eq!(state["error"]["kind"], kind, "{actor}");
        assert_eq!(state["error"]["stage"], "executor", "{actor}");
        let got = state["error"]["message"].as_str().unwrap();
        assert!(got.starts_with(message), "{actor}: {got}");
        assert_eq!(attempt_field(&state, "executor", "actor"), [actor]);
        assert!(attempts(&state, "reporter").is_empty());
        if actor == "sleepy" {
            assert_eq!(attempt_field(&state, "executor", "cause"), ["timeout"]);
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the timeout did not stop the actor: {:?}",
                started.elapsed()
            );
        } else {
            assert_eq!(attempt_field(&state, "executor", "cause"), [Value::Null]);
        }
    }
}

#[test]
fn commands_work_from_the_run_worktree_and_subdirectories() {
    let repo = standard_repo(&[]);
    std::fs::create_dir_all(repo.path("docs/sub")).unwrap();
    // A plan named relative to a subdirectory is recorded repo-relative.
    let run = repo.baton_in(
        &repo.path("docs/sub"),
        ["run", "../../plans/fix.md", "--stop-after", "executor"],
    );
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    let state = status(&repo, &id);
    assert_eq!(state["plan"]["path"], "plans/fix.md");
    let worktree = worktree_of(&repo, &state);

    for dir in [worktree.clone(), worktree.join("docs"), repo.path("docs")] {
        let status = repo.baton_in(&dir, ["status", "--json"]);
        assert_eq!(status.code, 0, "{}: {status}", dir.display());
        assert_eq!(status.json()["run_id"], id.as_str());
        let list = repo.baton_in(&dir, ["list"]);
        assert_eq!(list.code, 0, "{list}");
        assert!(list.stdout.contains(&id), "{}: {list}", dir.display());
        let log = repo.baton_in(&dir, ["log", &id]);
        assert!(
            log.stdout.contains("working on the grading documents"),
            "{log}"
        );
    }

    // Resumed from inside its own worktree, the run finishes there.
    let resumed = repo.baton_in(&worktree.join("docs"), ["resume", &id]);
    assert_eq!(resumed.code, 0, "{resumed}");
    assert_eq!(status(&repo, &id)["status"], "review");
    assert_eq!(repo.git(["status", "--porcelain"]), "");
}

/// `--attempt N` without `--stage` names the gated stage's attempt, not the last stage's: after
/// a run reaches its reporter, "attempt 1" is the executor's, the one the gate judged.
#[test]
fn attempt_without_stage_means_the_gated_stage() {
    let repo = standard_repo(&[]);
    let id = repo.baton(["run", "plans/fix.md"]).run_id();
    let alone = repo.baton(["diff", &id, "--attempt", "1", "--name-only"]);
    assert_eq!(alone.code, 0, "{alone}");
    assert!(alone.stdout.starts_with("attempt 1 of executor"), "{alone}");
    let named = repo.baton([
        "diff",
        &id,
        "--stage",
        "executor",
        "--attempt",
        "1",
        "--name-only",
    ]);
    assert_eq!(alone.stdout, named.stdout);

    let log = repo.baton(["log", &id, "--attempt", "1", "--json"]);
    assert_eq!(log.code, 0, "{log}");
    assert_eq!(log.json()["stage"], "executor", "{log}");

    // Without --attempt, the latest stage that ran, as before.
    let latest = repo.baton(["diff", &id, "--name-only"]);
    assert!(
        latest.stdout.starts_with("attempt 1 of reporter"),
        "{latest}"
    );
}
