//! `git baton cycle`: queued runs started, a rate limit holding its actor for every run until
//! its reset, what a person stopped left alone, the resume cap, and a stop by signal that the
//! next cycle resumes. Cycles run on the real clock (the reset instants are real), through the
//! real binary, whose resumes are real child processes.

use super::*;

const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/agents");

/// A `git baton` command in `repo` on the system clock, not the harness's pinned one.
fn real_clock(repo: &TestRepo, args: &[&str]) -> Command {
    let mut cmd = repo.baton_command(&repo.path(""), &[], args);
    cmd.env_remove("GIT_BATON_TIMESTAMP")
        .env_remove("GIT_BATON_RANDOMNESS_SEED");
    cmd
}

fn cycle(repo: &TestRepo, args: &[&str]) -> Run {
    let mut all = vec!["cycle"];
    all.extend_from_slice(args);
    let mut cmd = real_clock(repo, &all);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    repo.baton_wait(cmd.spawn().unwrap(), Duration::from_secs(120))
}

/// An actor that, the first time any run calls it (the marker file does not exist yet), prints
/// Claude Code's JSON for a usage limit resetting `secs` seconds from now and exits 1; every
/// later time it does the whole plan.
fn limited_once(dir: &tempfile::TempDir, secs: u32) -> Actor {
    let script = crate::support::limited_once_script(dir.path(), secs);
    Actor::shell("claude", &script).set("output: claude-json")
}

fn queue(repo: &TestRepo) -> String {
    let run = repo.baton(["run", "--queue", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    run.run_id()
}

#[test]
fn queued_runs_are_started_by_one_pass_and_reach_review() {
    let repo = repo_running(&[worker()], "");
    let (a, b) = (queue(&repo), queue(&repo));
    assert_eq!(status(&repo, &a)["status"], "queued");
    let dry = cycle(&repo, &["--once", "--dry-run", "--json"]);
    assert_eq!(dry.code, 0, "{dry}");
    let plan = dry.json();
    assert_eq!(plan["resumed"], serde_json::json!([]));
    assert_eq!(plan["decisions"][0]["action"], "resume");
    assert_eq!(
        status(&repo, &a)["status"],
        "queued",
        "a dry run starts nothing"
    );

    let done = cycle(&repo, &["--once", "--jobs", "2", "--json"]);
    assert_eq!(done.code, 0, "{done}");
    for id in [&a, &b] {
        let state = status(&repo, id);
        assert_eq!(state["status"], "review", "{done}");
        assert!(
            state.get("cycle").is_none(),
            "the count went back to 0 when a stage succeeded: {state:#}"
        );
    }
    assert_eq!(done.json()["resumed"].as_array().unwrap().len(), 2);
    assert!(
        done.stderr.contains(&format!("cycle: {a}: due: queued")),
        "{done}"
    );
}

/// The incident as a schedule: the first run hits the limit with a reset 6 s ahead; the other
/// run on the same actor is held (not started into the same limit); after the reset both are
/// resumed and reach review.
#[test]
fn a_rate_limit_holds_its_actor_for_every_run_until_the_reset() {
    let dir = scratch();
    // Seconds ahead, so that the pass decides about the second run before the reset even on a
    // loaded machine.
    let repo = repo_running(&[limited_once(&dir, 6)], "");
    let (a, b) = (queue(&repo), queue(&repo));

    let first = cycle(&repo, &["--once"]);
    assert_eq!(first.code, 0, "{first}");
    let limited = status(&repo, &a);
    assert_eq!(limited["status"], "rate_limited", "{first}");
    let reset = attempts(&limited, "executor")[0]["agent"]["rate_limit_reset"]["at"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        status(&repo, &b)["status"],
        "queued",
        "held, never started: {first}"
    );
    assert!(
        first
            .stderr
            .contains(&format!("cycle: {b}: waits until {reset}")),
        "{first}"
    );
    assert!(first.stderr.contains("claude is on hold until"), "{first}");
    // `status` and `list` show the hold the queued run waits for, and its end.
    let held = status(&repo, &b);
    assert_eq!(held["hold"]["actor"], "claude", "{held:#}");
    assert_eq!(held["hold"]["until"], reset.as_str());
    assert_eq!(held["hold"]["run"], a.as_str());
    let shown = repo.baton(["status", &b]);
    assert!(
        shown.stdout.contains(&format!(
            "hold: claude is on hold until {reset} (rate limited in run {a}"
        )),
        "{shown}"
    );
    let list = repo.baton(["list"]);
    assert!(
        list.stdout
            .contains(&format!("claude on hold until {reset}")),
        "{list}"
    );

    // Once more before the reset: nothing is started.
    let early = cycle(&repo, &["--once", "--json"]);
    let reset_at: jiff::Timestamp = reset.parse().unwrap();
    if jiff::Timestamp::now() < reset_at {
        assert_eq!(early.json()["resumed"], serde_json::json!([]), "{early}");
    }
    // After the reset both go.
    let deadline = Instant::now() + Duration::from_secs(30);
    while jiff::Timestamp::now() <= reset_at && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let after = cycle(&repo, &["--once"]);
    assert_eq!(after.code, 0, "{after}");
    for id in [&a, &b] {
        assert_eq!(status(&repo, id)["status"], "review", "{after}");
    }
}

#[test]
fn what_a_person_stopped_or_held_is_left_alone() {
    let repo = repo_running(&[worker()], "");
    let (held, paused) = (queue(&repo), queue(&repo));
    let hold = repo.baton(["hold", &held, "--reason", "the API key expired"]);
    assert_eq!(hold.code, 0, "{hold}");
    let pause = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let paused_id = pause.run_id();
    assert_eq!(status(&repo, &paused_id)["status"], "paused", "{pause}");
    let _ = paused;

    let run = cycle(&repo, &["--once", "--json"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(status(&repo, &held)["status"], "queued");
    assert_eq!(status(&repo, &paused_id)["status"], "paused");
    assert!(
        run.stderr
            .contains(&format!("cycle: {held}: left alone: held by hand since")),
        "{run}"
    );
    assert!(run.stderr.contains("the API key expired"), "{run}");
    assert!(
        run.stderr
            .contains(&format!("cycle: {paused_id}: left alone: paused by hand")),
        "{run}"
    );
    let release = repo.baton(["release", &held]);
    assert_eq!(release.code, 0, "{release}");
    let again = cycle(&repo, &["--once"]);
    assert_eq!(status(&repo, &held)["status"], "review", "{again}");
}

/// A resume that is refused under the run's lock (the run was held after cycle looked) exits 2
/// and changes nothing: the child checks the run's own facts, not the cycle's view of them.
#[test]
fn the_resume_checks_the_runs_facts_again_under_its_lock() {
    let repo = repo_running(&[worker()], "");
    let id = queue(&repo);
    assert_eq!(repo.baton(["hold", &id]).code, 0);
    let refused = repo.baton(["resume", &id, "--by-cycle", "3"]);
    assert_eq!(refused.code, 2, "{refused}");
    assert!(
        refused
            .stderr
            .contains("is held (git baton hold): cycle does not resume it"),
        "{refused}"
    );
    let state = status(&repo, &id);
    assert_eq!(state["status"], "queued");
    assert!(state["cycle"].get("resumes").is_none());
}

/// A run that keeps ending rate limited is resumed at most --max-resumes times, then waits for
/// a person, saying why.
#[test]
fn a_run_that_keeps_failing_stops_being_resumed_at_the_cap() {
    let dir = scratch();
    // Rate limited every time, with a reset already past: due again at once.
    let template = dir.path().join("limit.json");
    let capture = text(Path::new(&format!("{CAPTURES}/claude/rate-limit-429.json")));
    std::fs::write(
        &template,
        capture.replace(
            "API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit",
            "Claude AI usage limit reached|1000000000",
        ),
    )
    .unwrap();
    let always = Actor::shell("claude", &format!("cat '{}'; exit 1", template.display()))
        .set("output: claude-json");
    let repo = repo_running(&[always], "");
    let id = queue(&repo);
    for n in 1..=2 {
        let run = cycle(&repo, &["--once", "--max-resumes", "2"]);
        assert_eq!(run.code, 0, "{run}");
        let state = status(&repo, &id);
        assert_eq!(state["cycle"]["resumes"], n, "{run}");
        assert_eq!(state["status"], "rate_limited");
    }
    let capped = cycle(&repo, &["--once", "--max-resumes", "2", "--json"]);
    assert_eq!(capped.json()["resumed"], serde_json::json!([]), "{capped}");
    assert!(
        capped.stderr.contains(&format!(
            "cycle: {id}: waits for a person: cycle resumed it 2 times without a stage succeeding"
        )),
        "{capped}"
    );
    // A person's release gives it back to cycle.
    assert_eq!(repo.baton(["release", &id]).code, 0);
    let json = cycle(&repo, &["--once", "--max-resumes", "2", "--json"]).json();
    assert_eq!(json["resumed"].as_array().unwrap().len(), 1);
}

/// SIGTERM to a waiting cycle that drives a run: the run's actor is stopped at a safe point,
/// the cycle exits 130, the run is recorded as stopped by its cycle (not by a person), and the
/// next cycle resumes it.
#[test]
fn a_stopped_cycle_stops_its_runs_and_the_next_cycle_resumes_them() {
    let dir = scratch();
    let pid_file = dir.path().join("agent.pid");
    let marker = dir.path().join("second");
    // The first attempt writes its pid and sleeps; a later one does the work.
    let script = format!(
        "if [ -e '{marker}' ]; then for d in a b c; do echo done >> docs/$d.md; done; \
         else touch '{marker}'; echo $$ > '{pid}'; exec sleep 60; fi",
        marker = marker.display(),
        pid = pid_file.display(),
    );
    let repo = repo_running(&[Actor::shell("slow", &script)], "");
    let id = queue(&repo);
    let mut cmd = real_clock(&repo, &["cycle", "--interval", "1s"]);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let cycle_pid = child.id();
    wait_for_line(&pid_file);
    let _ = Command::new("kill")
        .args(["-TERM", &cycle_pid.to_string()])
        .status();
    let stopped = repo.baton_wait(child, Duration::from_secs(60));
    assert_eq!(stopped.code, 130, "{stopped}");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "interrupted", "{stopped}");
    assert!(state["cycle"]["stopped"].is_string(), "{state:#}");
    let again = cycle(&repo, &["--once"]);
    assert_eq!(again.code, 0, "{again}");
    assert!(
        again.stderr.contains(&format!(
            "cycle: {id}: due: the cycle driving it was stopped"
        )),
        "{again}"
    );
    assert_eq!(status(&repo, &id)["status"], "review", "{again}");
}
