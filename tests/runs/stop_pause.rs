//! Stopping at stage boundaries (`--stop-after`, `pause`) and stopping now (`stop`).

use super::*;

/// `--stop-after executor` pauses the run once the executor succeeded; `resume` runs the
/// reporter (a first attempt of that stage, not a resumed one) and the run reaches review.
#[test]
fn stop_after_pauses_then_resume_reaches_review() {
    let repo = standard_repo(&[]);
    let run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let id = run.run_id();
    assert_eq!(run.code, 0, "{run}");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "paused");
    assert_eq!(state["current_stage"], "reporter");
    assert_eq!(stage(&state, "executor")["status"], "succeeded");
    assert_eq!(stage(&state, "reporter")["status"], "pending");
    assert!(attempts(&state, "reporter").is_empty());
    assert_eq!(state["policy"]["stop_after"], "executor");

    let resumed = repo.baton(["resume", &id]);
    assert_eq!(resumed.code, 0, "{resumed}");
    assert_eq!(resumed.run_id(), id);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "review");
    assert_eq!(state["current_stage"], Value::Null);
    assert_eq!(
        attempts(&state, "executor").len(),
        1,
        "the executor is not re-run"
    );
    assert_eq!(attempt_field(&state, "reporter", "resumed"), [false]);
    assert_eq!(attempt_field(&state, "reporter", "outcome"), ["succeeded"]);
}

/// `pause` from another process while the executor works: the stage finishes, then the run
/// stops as paused (exit 0) before the reporter.
#[test]
fn pause_from_another_process_stops_at_the_stage_boundary() {
    let scratch_dir = scratch();
    let pid_file = outside(&scratch_dir, "agent.pid");
    let slow = Actor::agent("slow").pid(&pid_file).sleep("1").edit_all();
    let repo = repo_running(&[slow], "");
    let child = spawn(&repo, &["run", "plans/fix.md"]);
    wait_for_line(&pid_file);
    let id = wait_for_run(&repo);
    let pause = repo.baton(["pause", &id]);
    assert_eq!(pause.code, 0, "{pause}");
    assert_eq!(
        pause.stdout,
        format!("run {id} will pause after its current stage\n")
    );

    let run = wait(&repo, child);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.run_id(), id);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "paused");
    assert_eq!(state["current_stage"], "reporter");
    assert_eq!(attempt_field(&state, "executor", "outcome"), ["succeeded"]);
    assert!(attempts(&state, "reporter").is_empty(), "{state:#}");
    assert!(
        !run_dir(&repo, &id).join("pause.request").exists(),
        "the request is consumed"
    );
}

/// `stop` from another process while the agent sleeps: the agent is stopped, the attempt is
/// recorded as interrupted (manual), its logs and the worktree's changes stay. git-baton itself
/// got no signal, so it exits 1 (the run ended in a state other than review), not 130.
#[test]
fn stop_from_another_process_interrupts_the_attempt() {
    let scratch_dir = scratch();
    let pid_file = outside(&scratch_dir, "agent.pid");
    let slow = Actor::agent("slow")
        .edit("docs/a.md", "half done")
        .say("before the stop")
        .pid(&pid_file)
        .sleep("2")
        .say("after the sleep");
    let repo = repo_running(&[slow], "");
    let child = spawn(&repo, &["run", "plans/fix.md"]);
    let agent_pid = wait_for_line(&pid_file);
    let id = wait_for_run(&repo);
    let stop = repo.baton(["stop", &id]);
    assert_eq!(stop.code, 0, "{stop}");
    assert_eq!(stop.stdout, format!("stopped run {id}: interrupted\n"));
    let run = wait(&repo, child);
    assert_eq!(run.code, 1, "{run}");
    assert!(group_gone_within(&agent_pid, Duration::from_secs(5)));

    let state = status(&repo, &id);
    assert_eq!(state["status"], "interrupted");
    assert_eq!(state["stale"], false);
    assert_eq!(state["current_stage"], "executor");
    assert_eq!(
        attempt_field(&state, "executor", "outcome"),
        ["interrupted"]
    );
    assert_eq!(attempt_field(&state, "executor", "cause"), ["manual"]);
    assert_eq!(state["error"]["kind"], "interrupted");
    assert_eq!(state["error"]["stage"], "executor");
    let dir = run_dir(&repo, &id).join("attempts/executor-1");
    assert_eq!(text(&dir.join("stdout.log")), "before the stop\n");
    assert!(dir.join("prompt.md").is_file());
    assert!(text(&worktree_of(&repo, &state).join("docs/a.md")).contains("half done"));
    assert!(!run_dir(&repo, &id).join("stop.request").exists());

    // Nothing drives it any more: a second stop says so.
    let again = repo.baton(["stop", &id]);
    assert_eq!(
        again.to_string(),
        format!(
            "exit: 2\n--- stderr\nerror: run {id} is not being driven by any process (status: interrupted)\nhint: see `git baton status {id}`\n"
        )
    );
}

/// A `pause` asks the process driving the run to stop at its next stage boundary. When the
/// stage fails instead, that process ends and the request is moot: a later `resume` (a new
/// command, by a person) must run the stage, not pause at once on the leftover request.
#[test]
fn a_pause_request_does_not_outlive_the_driver_it_was_sent_to() {
    let out = scratch();
    let pid_file = outside(&out, "agent.pid");
    let flaky = Actor::agent("flaky").pid(&pid_file).sleep("0.5").exit("1");
    let repo = repo_running(&[flaky, worker()], "");
    let child = spawn(&repo, &["run", "plans/fix.md"]);
    wait_for_line(&pid_file);
    let id = wait_for_run(&repo);
    let pause = repo.baton(["pause", &id]);
    assert_eq!(pause.code, 0, "{pause}");
    let run = wait(&repo, child);
    assert_eq!(run.code, 1, "{run}");
    assert_eq!(status(&repo, &id)["status"], "failed");

    let resumed = repo.baton(["resume", &id, "--actor", "executor=worker"]);
    let state = status(&repo, &id);
    assert_eq!(
        attempt_field(&state, "executor", "actor"),
        ["flaky", "worker"],
        "resume did not run the stage (status {}):\n{resumed}",
        state["status"]
    );
    assert_eq!(resumed.code, 0, "{resumed}");
    assert_eq!(state["status"], "review");
}
