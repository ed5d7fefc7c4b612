//! Records forged on the remote (docs/state.md, "Who is trusted for what"): anyone who can push
//! there can rewrite a run's record, and another machine must take none that git-baton could
//! not have written — not an ungated stage, not a review the gate did not pass, not a path out
//! of the run directory, not a lease until the year 9000. Each test forges with
//! [`forge_record`], as a person with push access would, and checks what the next machine does
//! and that nothing outside the run was read, killed or published.

use super::*;
use crate::support::forge::forge_record;

mod claims;
mod lease;

/// One line `error: run <id>: the record origin holds is refused: …` naming `invariant`, and
/// a hint.
fn assert_refused(run: &Run, id: &str, invariant: &str) {
    let error = run.the_error(2);
    assert!(
        error.starts_with(&format!(
            "error: run {id}: the record origin holds is refused:"
        )) && error.contains(invariant),
        "{run}"
    );
    assert!(run.stderr.contains("hint:"), "{run}");
}

/// Machine `b` has no run directory for run `id`: nothing of a refused record was taken.
fn assert_not_taken(b: &TestRepo, id: &str) {
    let dir = b.root.join(".git/baton/runs").join(id);
    assert!(!dir.exists(), "{} exists", dir.display());
}

#[test]
fn a_record_that_ungates_its_stages_is_not_taken() {
    let world = World::new(Transport::File, "").unwrap();
    let (a, id) = world.rate_limited_and_pushed();
    let bare = &world.origin.bare;

    // The script's case: the only gated stage turned off, then a lazy agent on B.
    forge_record(bare, &id, |s| s["stages"][0]["gated"] = false.into(), &[]);
    let b = world.origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    let resumed = b.live(["resume", &id, "--actor", "executor=writer"]);
    assert_refused(&resumed, &id, "no stage is gated");
    assert_not_taken(&b, &id);
    // Neither shown as a remote-only run.
    assert_refused(&b.live(["status", &id]), &id, "no stage is gated");

    // The targets emptied to match: the plan snapshot in the record still declares them.
    forge_record(
        bare,
        &id,
        |s| s["plan"]["targets"] = serde_json::json!([]),
        &[],
    );
    assert_eq!(b.live(["fetch"]).code, 0);
    let resumed = b.live(["resume", &id, "--actor", "executor=writer"]);
    assert_refused(&resumed, &id, "plan.targets");
    assert_not_taken(&b, &id);

    // The gate moved to the stage that changes nothing: the machine that created the run
    // compares the pipeline with its own.
    forge_record(
        bare,
        &id,
        |s| {
            s["plan"]["targets"] = serde_json::json!(TARGETS);
            s["stages"][0]["gated"] = false.into();
            s["stages"][1]["gated"] = true.into();
        },
        &[],
    );
    assert_eq!(b.live(["fetch"]).code, 0);
    let resumed = b.live(["resume", &id, "--actor", "executor=writer"]);
    assert_refused(&resumed, &id, "stage `executor` is not gated");
    assert_not_taken(&b, &id);
    let before = run_refs(&a);
    let resumed = a.live(["resume", &id, "--actor", "executor=writer"]);
    assert_refused(&resumed, &id, "pipeline");
    assert_eq!(run_refs(&a), before, "nothing moved on A");
    assert_eq!(status(&a, &id)["status"], "rate_limited");

    // A file of an attempt the record does not have (the evidence of an attempt to come).
    forge_record(
        bare,
        &id,
        |s| {
            s["stages"][0]["gated"] = true.into();
            s["stages"][1]["gated"] = false.into();
        },
        &[(
            "attempts/executor-2/evidence.json",
            Some(br#"{"target_coverage": []}"#),
        )],
    );
    assert_eq!(b.live(["fetch"]).code, 0);
    let resumed = b.live(["resume", &id, "--actor", "executor=writer"]);
    assert_refused(&resumed, &id, "attempts/executor-2/evidence.json");
    assert_not_taken(&b, &id);

    // Another base, one B has: a base the work does not build on changes what counts as changed.
    b.write("docs/a.md", "# A\n\nSomething else entirely.\n");
    b.commit_all("elsewhere");
    let elsewhere = local_rev(&b, "HEAD").unwrap();
    forge_record(
        bare,
        &id,
        |s| s["base"] = elsewhere.as_str().into(),
        &[("attempts/executor-2/evidence.json", None)],
    );
    assert_eq!(b.live(["fetch"]).code, 0);
    let resumed = b.live(["resume", &id, "--actor", "executor=writer"]);
    assert_refused(&resumed, &id, "is not work on its base");
    assert_not_taken(&b, &id);

    // What the hint says: a refused record of a run B never had is removed from the remote.
    let cleaned = b.live(["clean", &id, "--remote=origin"]);
    assert_eq!(cleaned.code, 0, "{cleaned}");
    assert!(
        world
            .origin
            .refs(&format!("refs/baton/runs/{id}/"))
            .is_empty()
    );
}

#[test]
fn a_local_attempt_dir_out_of_the_run_directory_is_refused() {
    let world = World::new(Transport::File, "").unwrap();
    let (a, id) = world.rate_limited_and_pushed();
    let file = a.root.join(".git/baton/runs").join(&id).join("state.json");
    let mut state: Value = serde_json::from_str(&text(&file)).unwrap();
    let outside = world.scratch("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("stdout.log"), "not this run's log\n").unwrap();
    state["stages"][0]["attempts"][0]["dir"] = outside.display().to_string().into();
    std::fs::write(&file, serde_json::to_vec_pretty(&state).unwrap()).unwrap();
    let log = a.live(["log", &id]);
    assert_eq!(log.code, 2, "{log}");
    assert!(!log.stdout.contains("not this run's log"), "{log}");
    assert!(
        log.stderr.contains(&format!(
            "error: run {id}: the dir of attempt 1 of stage `executor` is `{}`, not `attempts/executor-1`",
            outside.display()
        )),
        "{log}"
    );
}

/// A run that machine A drove until the gate blocked it (`finisher` leaves docs/a.md and
/// docs/c.md untouched), pushed: the machine and the run id.
fn blocked_and_pushed(world: &World) -> (TestRepo, String) {
    let a = world.origin.machine();
    let run = a.live(["run", "plans/fix.md", "--actor", "executor=finisher"]);
    assert_eq!(run.code, 1, "{run}");
    let id = run.run_id();
    assert_eq!(status(&a, &id)["status"], "blocked");
    assert_eq!(a.live(["push", &id]).code, 0);
    (a, id)
}

/// A coverage report rewritten to claim that every target changed, with no problem.
fn every_target_changed(report: &mut Value) {
    for row in report["targets"].as_array_mut().unwrap() {
        row["status"] = "changed".into();
        row["paths"] = serde_json::json!([row["target"].clone()]);
        row["reason"] = Value::Null;
    }
    report["problems"] = serde_json::json!([]);
}

/// The forged save of a blocked run: `review`, its executor attempt `succeeded`, a reporter
/// attempt that never ran; `report` rewrites the gate's report (or leaves it as it was).
fn claim_review(state: &mut Value, report: impl FnOnce(&mut Value)) {
    state["status"] = "review".into();
    let executor = &mut state["stages"][0]["attempts"][0];
    executor["outcome"] = "succeeded".into();
    executor["error"] = Value::Null;
    report(&mut executor["coverage"]);
    let mut reporter = executor.clone();
    reporter["actor"] = "writer".into();
    reporter["dir"] = "attempts/reporter-1".into();
    reporter["coverage"] = Value::Null;
    state["stages"][1]["attempts"] = serde_json::json!([reporter]);
}

/// The run's branch on `machine` carries no commit of `finish`.
fn assert_unfinished_branch(machine: &TestRepo, id: &str) {
    let log = machine.git(["log", "--format=%B", &format!("baton/{id}"), "--"]);
    assert!(!log.contains("Baton-Run:"), "{log}");
}

#[test]
fn a_forged_review_is_not_finished() {
    let world = World::new(Transport::File, "").unwrap();
    let (_a, id) = blocked_and_pushed(&world);
    let bare = &world.origin.bare;

    // The script's case: the outcome flipped, the gate's failing report left as it was.
    forge_record(bare, &id, |s| claim_review(s, |_| {}), &[]);
    let b = world.origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    let finished = b.live(["finish", &id]);
    assert_refused(&finished, &id, "did not pass");
    assert_not_taken(&b, &id);

    // The policy weakened to gate only resumed attempts, so that the first one needs no report.
    forge_record(
        bare,
        &id,
        |s| s["policy"]["coverage"] = "resume".into(),
        &[],
    );
    assert_eq!(b.live(["fetch"]).code, 0);
    assert_refused(&b.live(["finish", &id]), &id, "coverage: resume");
    assert_not_taken(&b, &id);
    forge_record(
        bare,
        &id,
        |s| s["policy"]["coverage"] = "always".into(),
        &[],
    );

    // Placeholder reasons for what the work left alone: refused by the reason checks the gate
    // applies, never committed as trailers.
    forge_record(
        bare,
        &id,
        |s| {
            s["stages"][0]["attempts"][0]["coverage"]["passed"] = true.into();
            for row in s["stages"][0]["attempts"][0]["coverage"]["targets"]
                .as_array_mut()
                .unwrap()
            {
                if row["status"] == "uncovered" {
                    row["status"] = "unchanged".into();
                    row["reason"] = "n/a".into();
                }
            }
        },
        &[],
    );
    assert_eq!(b.live(["fetch"]).code, 0);
    assert_refused(&b.live(["finish", &id]), &id, "is not covered");
    assert_not_taken(&b, &id);

    // A report rewritten to pass in every detail: the gate derived here on the attempt's
    // snapshot fails, so the record is not taken — not shown, not finished.
    forge_record(
        bare,
        &id,
        |s| {
            every_target_changed(&mut s["stages"][0]["attempts"][0]["coverage"]);
        },
        &[],
    );
    assert_eq!(b.live(["fetch"]).code, 0);
    let finished = b.live(["finish", &id]);
    assert_refused(
        &finished,
        &id,
        "its coverage is not what the gate derives here: the record says the gate of attempt 1 \
         of stage `executor` passed; judged here it fails",
    );
    assert_not_taken(&b, &id);
    assert_eq!(
        world.state_on_origin(&id)["status"],
        "review",
        "nothing finished was published"
    );

    // The same report with the run claimed `finished`: `resume`, which has nothing to resume,
    // still does not take it, and `status` shows the verdict derived here, not the record's.
    forge_record(
        bare,
        &id,
        |s| {
            claim_review(s, every_target_changed);
            s["status"] = "finished".into();
        },
        &[],
    );
    assert_eq!(b.live(["fetch"]).code, 0);
    assert_refused(
        &b.live(["resume", &id]),
        &id,
        "its coverage is not what the gate derives here",
    );
    assert_not_taken(&b, &id);
    let shown = status(&b, &id);
    assert_eq!(shown["claim"]["verified"], false, "{shown:#}");
    assert_eq!(shown["coverage"]["passed"], false, "{shown:#}");
}

#[test]
fn a_run_in_review_is_pushed_only_when_its_gate_passes_again() {
    let world = World::new(Transport::File, "").unwrap();
    let (a, id) = blocked_and_pushed(&world);
    // This clone's own state.json, edited to claim what the gate refused: a clone trusts its
    // own file, but neither `push` nor `finish` trusts a status for a verdict.
    let file = a.root.join(".git/baton/runs").join(&id).join("state.json");
    let mut state: Value = serde_json::from_str(&text(&file)).unwrap();
    claim_review(&mut state, |report| report["passed"] = true.into());
    std::fs::write(&file, serde_json::to_vec_pretty(&state).unwrap()).unwrap();
    assert_eq!(status(&a, &id)["status"], "review");
    let on_origin = world.origin.rev(&format!("refs/baton/runs/{id}/record"));

    let pushed = a.live(["push", &id]);
    assert_eq!(pushed.code, 1, "{pushed}");
    assert!(
        pushed.stderr.contains("uncovered docs/a.md, docs/c.md"),
        "{pushed}"
    );
    assert_eq!(
        world.origin.rev(&format!("refs/baton/runs/{id}/record")),
        on_origin,
        "the remote keeps the record it had"
    );
    let finished = a.live(["finish", &id]);
    assert_eq!(finished.code, 1, "{finished}");
    assert!(finished.stderr.contains("does not pass"), "{finished}");
    assert_eq!(status(&a, &id)["status"], "review");
    assert_unfinished_branch(&a, &id);
}

/// Kills a process group when dropped: a test ends the agent it started, even when it fails.
struct Reaper(String);

impl Drop for Reaper {
    fn drop(&mut self) {
        kill9(&format!("-{}", self.0));
        kill9(&self.0);
    }
}

#[test]
fn a_forged_attempt_dir_reaches_no_other_run() {
    let world = World::new(Transport::File, "").unwrap();
    let (_a, x) = world.rate_limited_and_pushed();

    // Machine B drives a run of its own, Y, whose agent sleeps.
    let b = world.origin.machine();
    let driver = b.live_spawn(["run", "plans/fix.md", "--actor", "executor=sleeper"]);
    let agent = wait_for_line(&world.scratch("sleeper.pid"));
    let _reaper = Reaper(agent.clone());
    let runs = b.root.join(".git/baton/runs");
    let y = std::fs::read_dir(&runs)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|name| !name.starts_with('.'))
        .expect("run Y");
    let y_attempt = runs.join(&y).join("attempts/executor-1");
    assert!(y_attempt.join("attempt.token").exists());

    // X's record, forged to be running with its attempt open in Y's directory.
    let traversals = [
        format!("../{y}/attempts/executor-1"),
        y_attempt.display().to_string(),
        format!("attempts/executor-1/../../{y}/attempts/executor-1"),
    ];
    for dir in &traversals {
        forge_record(
            &world.origin.bare,
            &x,
            |s| {
                s["status"] = "running".into();
                let a = &mut s["stages"][0]["attempts"][0];
                for k in [
                    "outcome",
                    "cause",
                    "ended_at",
                    "duration_ms",
                    "exit_code",
                    "signal",
                    "error",
                ] {
                    a[k] = Value::Null;
                }
                a["dir"] = dir.as_str().into();
            },
            &[],
        );
        assert_eq!(b.live(["fetch"]).code, 0);
        let resumed = b.live(["resume", &x, "--actor", "executor=finisher"]);
        assert_refused(&resumed, &x, "attempts/executor-1");
        assert_not_taken(&b, &x);
        assert!(
            !gone_within(&agent, Duration::from_millis(200)),
            "Y's agent was killed by the resume of X through {dir}"
        );
    }
    drop(_reaper);
    let ended = wait(&b, driver);
    assert_ne!(ended.code, 0, "{ended}");
}

#[test]
fn a_forged_plan_snapshot_is_never_read() {
    let world = World::new(Transport::File, "").unwrap();
    let (a, id) = world.rate_limited_and_pushed();
    let secret = world.scratch("notes.md");
    std::fs::write(
        &secret,
        "---\ntargets: [docs/a.md]\n---\nSECRET-TOKEN-4242 outside every repository\n",
    )
    .unwrap();
    // This clone's own state.json pointed at the file: refused before any prompt is written.
    // (First, while the remote's record is still the one this clone made.)
    let file = a.root.join(".git/baton/runs").join(&id).join("state.json");
    let mut state: Value = serde_json::from_str(&text(&file)).unwrap();
    state["plan"]["snapshot"] = secret.display().to_string().into();
    std::fs::write(&file, serde_json::to_vec_pretty(&state).unwrap()).unwrap();
    let resumed = a.live(["resume", &id, "--actor", "executor=failing"]);
    assert_eq!(resumed.code, 2, "{resumed}");
    assert!(
        resumed.stderr.contains(&format!(
            "error: run {id}: plan.snapshot is `{}`",
            secret.display()
        )),
        "{resumed}"
    );
    let dir = a.root.join(".git/baton/runs").join(&id).join("attempts");
    for entry in std::fs::read_dir(dir).unwrap() {
        let prompt = entry.unwrap().path().join("prompt.md");
        let written = std::fs::read_to_string(&prompt).unwrap_or_default();
        assert!(
            !written.contains("SECRET-TOKEN-4242"),
            "{}",
            prompt.display()
        );
    }
    let b = world.origin.machine();
    let outside = [
        secret.display().to_string(),
        format!("../../../../../../../..{}", secret.display()),
        "attempts/executor-1/prompt.md".to_string(),
    ];
    for snapshot in &outside {
        forge_record(
            &world.origin.bare,
            &id,
            |s| s["plan"]["snapshot"] = snapshot.as_str().into(),
            &[],
        );
        assert_eq!(b.live(["fetch"]).code, 0);
        let resumed = b.live(["resume", &id, "--actor", "executor=failing"]);
        assert_refused(&resumed, &id, "plan.snapshot");
        assert_not_taken(&b, &id);
    }
    let tree = world.origin.git([
        "ls-tree",
        "-r",
        "--name-only",
        &format!("refs/baton/runs/{id}/record"),
    ]);
    for path in tree.lines() {
        let blob = world.origin.git([
            "cat-file",
            "-p",
            &format!("refs/baton/runs/{id}/record:{path}"),
        ]);
        assert!(!blob.contains("SECRET-TOKEN-4242"), "{path} on the remote");
    }
}

/// A plan that declares no targets and names the three documents in its body.
const UNDECLARED: &str = "\
---
title: Fix the grading documents
---
State the new grading rule in `docs/a.md`, `docs/b.md` and `docs/c.md`.
";

#[test]
fn a_review_with_derived_targets_and_no_gated_stage_is_not_finished() {
    let world = World::new(Transport::File, "derive_targets: body\n").unwrap();
    let a = world.origin.machine();
    a.write("plans/undeclared.md", UNDECLARED);
    a.commit_all("a plan without targets");
    let run = a.live(["run", "plans/undeclared.md", "--actor", "executor=finisher"]);
    assert_eq!(run.code, 1, "{run}");
    let id = run.run_id();
    assert_eq!(status(&a, &id)["plan"]["targets_source"], "derived");
    let file = a.root.join(".git/baton/runs").join(&id).join("state.json");
    let blocked: Value = serde_json::from_str(&text(&file)).unwrap();

    // Every stage ungated and no report left: no attempt's gate decided the run, so only the
    // targets derived again from the plan's body show that it has targets to judge. First
    // with the record's list emptied to match, then with the list the body gives.
    let lists = [
        (serde_json::json!([]), "its RunState lists targets []"),
        (
            serde_json::json!(TARGETS),
            "the plan has targets and no stage of the run is gated",
        ),
    ];
    for (targets, refusal) in lists {
        let mut state = blocked.clone();
        claim_review(&mut state, |report| *report = Value::Null);
        state["plan"]["targets"] = targets;
        for stage in state["stages"].as_array_mut().unwrap() {
            stage["gated"] = false.into();
        }
        std::fs::write(&file, serde_json::to_vec_pretty(&state).unwrap()).unwrap();
        assert_eq!(status(&a, &id)["status"], "review");

        for command in ["finish", "push"] {
            let refused = a.live([command, &id]);
            assert_ne!(refused.code, 0, "{refused}");
            let error = refused
                .stderr
                .lines()
                .find(|l| l.starts_with("error:"))
                .unwrap_or_default();
            assert!(
                error.contains(&format!("run {id}")) && error.contains(refusal),
                "{command}: {refused}"
            );
        }
        assert_eq!(status(&a, &id)["status"], "review");
        assert_unfinished_branch(&a, &id);
        assert!(
            world
                .origin
                .refs(&format!("refs/baton/runs/{id}/"))
                .is_empty(),
            "nothing was published"
        );
    }
}

/// The coverage rows of a `status --json` document: `target status` each.
fn coverage_rows(state: &Value) -> Vec<String> {
    state["coverage"]["targets"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    format!(
                        "{} {}",
                        r["target"].as_str().unwrap(),
                        r["status"].as_str().unwrap()
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn status_and_list_of_a_remote_run_show_the_coverage_judged_here() {
    let world = World::new(Transport::File, "").unwrap();
    let (a, id) = blocked_and_pushed(&world);
    let blocked = [
        "docs/a.md uncovered",
        "docs/b.md changed",
        "docs/c.md uncovered",
    ];
    assert_eq!(coverage_rows(&status(&a, &id)), blocked);
    let b = world.origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);

    // The record as A pushed it: the coverage B derives again is what A's gate said.
    let shown = status(&b, &id);
    assert_eq!(
        shown["claim"],
        serde_json::json!({"verified": true}),
        "{shown:#}"
    );
    assert_eq!(coverage_rows(&shown), blocked);
    let text = b.live(["status", &id]);
    assert!(
        text.stdout
            .contains("  claim     the remote's record, its coverage verified here\n"),
        "{text}"
    );

    // Forged to pass in every detail (the check of the claim takes it): shown with the gate
    // B judges, which fails, never as passed.
    forge_record(
        &world.origin.bare,
        &id,
        |s| {
            claim_review(s, |report| {
                report["passed"] = true.into();
                every_target_changed(report);
            })
        },
        &[],
    );
    assert_eq!(b.live(["fetch"]).code, 0);
    let shown = status(&b, &id);
    assert_eq!(
        shown["status"], "review",
        "the status is the record's, with…"
    );
    assert_eq!(shown["claim"]["verified"], false, "{shown:#}");
    assert_eq!(
        shown["claim"]["problem"],
        "the record says the gate of attempt 1 of stage `executor` passed; judged here it fails"
    );
    assert_eq!(shown["coverage"]["passed"], false);
    assert_eq!(coverage_rows(&shown), blocked);
    assert_eq!(
        shown["stages"][0]["attempts"][0]["coverage"]["passed"], false,
        "every report shown is judged here"
    );
    let text = b.live(["status", &id]);
    assert!(text.stdout.contains("  coverage: failed\n"), "{text}");
    assert!(!text.stdout.contains("coverage: passed"), "{text}");
    assert!(
        text.stdout.contains(
            "  claim     the remote's record, not verified here: the record says the gate"
        ),
        "{text}"
    );
    let listed = listed(&b);
    let entry = listed.iter().find(|r| r["run_id"] == id.as_str()).unwrap();
    assert_eq!(entry["claim"]["verified"], false);
    assert_eq!(entry["coverage"]["passed"], false);
    let list = b.live(["list"]);
    assert!(
        list.stdout.contains("origin: remote only, not verified"),
        "{list}"
    );

    // A report without the snapshot to judge it on: no report is shown at all.
    forge_record(
        &world.origin.bare,
        &id,
        |s| s["stages"][0]["attempts"][0]["snapshot"] = Value::Null,
        &[],
    );
    assert_eq!(b.live(["fetch"]).code, 0);
    let shown = status(&b, &id);
    assert_eq!(shown["claim"]["verified"], false, "{shown:#}");
    assert_eq!(
        shown["claim"]["problem"],
        "attempt 1 of stage `executor` has a coverage report and no snapshot to judge it on"
    );
    assert!(shown["coverage"].is_null(), "{shown:#}");
    let text = b.live(["status", &id]);
    assert!(!text.stdout.contains("coverage: "), "{text}");
}
