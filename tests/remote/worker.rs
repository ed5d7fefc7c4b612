//! `scripts/worker/resume.sh`, the logic of the CI worker examples, run as a script with `sh` in
//! a fresh clone (the runner) against the shared bare repository: the run comes back to the
//! remote with the runner's attempt, also when that attempt failed.

use super::*;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/worker/resume.sh");

/// A runner without a git identity: none in the environment, and git told not to guess one.
const NO_IDENTITY: &str =
    "unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
git config --global user.useConfigOnly true
";

/// Over `git daemon` on 127.0.0.1, as a runner reaches its forge over the network.
#[test]
fn the_worker_script_resumes_a_run_on_a_runner_and_pushes_it_back() {
    let Some(world) = World::new(Transport::Daemon, "") else {
        return;
    };
    let (a, id) = world.rate_limited_and_pushed();
    let runner = world.origin.machine();
    let worked = runner.live_shell(&format!(
        "{NO_IDENTITY}BATON_RUN={id} BATON_ACTOR=executor=finisher sh {SCRIPT}"
    ));
    assert_eq!(worked.code, 0, "{worked}");
    assert!(
        worked.stderr.contains("git has no identity here"),
        "{worked}"
    );
    assert_eq!(
        runner.git(["config", "user.name"]).trim(),
        "git-baton worker"
    );

    let record = format!("refs/baton/runs/{id}/record");
    assert_eq!(world.origin.rev(&record), local_rev(&runner, &record));
    let state = world.state_on_origin(&id);
    assert_eq!(state["status"], "review", "{state:#}");
    assert_executor_attempts(
        &state,
        &[("partial", "rate_limited"), ("finisher", "succeeded")],
    );

    // The machine that started the run sees the result after a fetch.
    assert_eq!(a.live(["fetch"]).code, 0);
    assert_eq!(status(&a, &id)["sync"], "behind");
}

/// An attempt that fails on the runner is pushed back all the same, and the script exits with
/// resume's code (1), so the CI job fails visibly. The run is named by a prefix of its id, as
/// people type it.
#[test]
fn a_failed_attempt_on_the_runner_travels_back_and_keeps_its_exit_code() {
    let world = World::new(Transport::File, "").unwrap();
    let (_a, id) = world.rate_limited_and_pushed();
    let runner = world.origin.machine();
    let prefix = &id[..6];
    let worked = runner.live_shell(&format!("sh {SCRIPT} {prefix} executor=failing"));
    assert_eq!(worked.code, 1, "{worked}");
    assert!(worked.stderr.contains("resume exited 1"), "{worked}");
    let state = world.state_on_origin(&id);
    assert_eq!(state["status"], "failed", "{state:#}");
    assert_executor_attempts(
        &state,
        &[("partial", "rate_limited"), ("failing", "failed")],
    );
}

/// A run another machine drives: the script exits 3, as resume does, and the remote holds
/// nothing of the runner's.
#[test]
fn the_worker_script_exits_3_when_another_machine_holds_the_run() {
    let world = World::new(Transport::File, "").unwrap();
    let (a, id) = world.rate_limited_and_pushed();
    let driver = a.live_spawn(["resume", id.as_str(), "--actor", "executor=sleeper"]);
    let agent = wait_for_line(&world.scratch("sleeper.pid"));
    let holder = world.state_on_origin(&id)["lease"]["holder"].clone();
    let runner = world.origin.machine();
    let worked = runner.live_shell(&format!("sh {SCRIPT} {id} executor=finisher"));
    kill9(&driver.id().to_string());
    kill9(&format!("-{agent}"));
    wait(&a, driver);
    assert_leased(&worked, &id);
    let state = world.state_on_origin(&id);
    assert_eq!(state["lease"]["holder"], holder, "{state:#}");
    let actors = attempt_field(&state, "executor", "actor");
    assert!(
        !actors.contains(&Value::from("finisher")),
        "nothing of the runner's: {actors:?}"
    );
}

/// Bad input is exit 2 with an `error:` line and a hint, before anything is fetched.
#[test]
fn the_worker_script_refuses_bad_input() {
    let world = World::new(Transport::File, "").unwrap();
    let runner = world.origin.machine();
    let none = runner.live_shell(&format!("sh {SCRIPT}"));
    assert_eq!(none.code, 2, "{none}");
    assert!(
        none.stderr
            .starts_with("error: no run to resume: BATON_RUN is empty\nhint: "),
        "{none}"
    );
    let bad = runner.live_shell(&format!("BATON_RUN=abc BATON_ACTOR=codex sh {SCRIPT}"));
    assert_eq!(bad.code, 2, "{bad}");
    assert!(
        bad.stderr
            .starts_with("error: BATON_ACTOR=`codex` is not STAGE=ACTOR\n"),
        "{bad}"
    );
}

/// The two CI examples start the script this file tests, with the run and the actor as the
/// variables it reads, and the GitHub one asks for them as `workflow_dispatch` inputs.
#[test]
fn the_ci_examples_run_the_tested_script_with_the_run_and_the_actor() {
    let read = |rel: &str| -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
        serde_saphyr::from_str(&text(&path)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    };
    let github = read("examples/github/baton-worker.yml");
    let inputs = &github["on"]["workflow_dispatch"]["inputs"];
    assert_eq!(inputs["run"]["required"], true, "{inputs:#}");
    assert_eq!(inputs["actor"]["required"], false, "{inputs:#}");
    let steps = github["jobs"]["resume"]["steps"].as_array().unwrap();
    let step = steps
        .iter()
        .find(|s| {
            s["run"]
                .as_str()
                .is_some_and(|r| r.contains("scripts/worker/resume.sh"))
        })
        .unwrap_or_else(|| panic!("no step runs the script: {steps:#?}"));
    assert_eq!(step["env"]["BATON_RUN"], "${{ inputs.run }}");
    assert_eq!(step["env"]["BATON_ACTOR"], "${{ inputs.actor }}");
    assert_eq!(github["permissions"]["contents"], "write");

    let gitlab = read("examples/gitlab/baton-worker.gitlab-ci.yml");
    let job = &gitlab["baton-worker"];
    assert_eq!(job["rules"][0]["if"], "$BATON_RUN", "{job:#}");
    let script: Vec<&str> = job["script"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        script
            .iter()
            .any(|l| l.contains("scripts/worker/resume.sh")),
        "{script:?}"
    );
}
