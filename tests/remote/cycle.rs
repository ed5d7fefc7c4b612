//! `scripts/worker/cycle.sh`, the logic of the scheduled examples (GitHub, GitLab, systemd), run
//! as a script with `sh` in fresh clones (the runners) against the shared bare repository: runs
//! queued and pushed on one machine are driven by runners cycling the remote at the same time,
//! each run by exactly one of them, and every result ends on the remote.

use std::process::{Command, Stdio};

use super::*;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/worker/cycle.sh");

/// How long one runner's pass may take before the test gives up on it.
const PASS: Duration = Duration::from_secs(180);

/// A runner without a git identity: none in the environment, and git told not to guess one.
const NO_IDENTITY: &str =
    "unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
git config --global user.useConfigOnly true
";

/// The process group of a spawned script, killed when the test ends however it ends: nothing
/// the script started (its cycle, their resumes, their actors) outlives the test.
struct Group(u32);

impl Drop for Group {
    fn drop(&mut self) {
        crate::support::remote::kill_group(self.0);
    }
}

/// What one pass of `cycle` over the origin would do on `machine`: the `decisions` of
/// `cycle --once --remote origin --dry-run --json`, and the whole pass as shown (its stderr
/// says why), for the messages of assertions on them.
fn planned(machine: &TestRepo) -> (Value, String) {
    let plan = machine.live([
        "cycle",
        "--once",
        "--remote",
        "origin",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(plan.code, 0, "{plan}");
    (plan.json()["decisions"].clone(), plan.to_string())
}

/// Starts `script` with `sh -c` in `machine` on the real clock, in a process group of its own.
fn spawn_shell(machine: &TestRepo, script: &str) -> (std::process::Child, Group) {
    let mut cmd: Command = machine.live_shell_command(script);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let child = cmd.spawn().unwrap();
    let group = Group(child.id());
    (child, group)
}

/// `n` runs of the plan queued on `machine` for the actor `executor`, then pushed in one push.
fn queued_and_pushed(machine: &TestRepo, n: usize, executor: &str) -> Vec<String> {
    let actor = format!("executor={executor}");
    let ids: Vec<String> = (0..n)
        .map(|_| {
            let run = machine.live(["run", "--queue", "--actor", &actor, "plans/fix.md"]);
            assert_eq!(run.code, 0, "{run}");
            run.run_id()
        })
        .collect();
    let mut push = vec!["push"];
    push.extend(ids.iter().map(String::as_str));
    let pushed = machine.live(&push);
    assert_eq!(pushed.code, 0, "{pushed}");
    for id in &ids {
        assert_eq!(status(machine, id)["status"], "queued");
    }
    ids
}

/// The machine whose clone the origin's record of a run says drove it last: the run's worktree
/// is in that clone.
fn driven_by<'m>(state: &Value, machines: &[(&'m str, &TestRepo)]) -> Option<&'m str> {
    let worktree = Path::new(state["worktree"].as_str()?);
    machines
        .iter()
        .find(|(_, m)| worktree.starts_with(&m.root))
        .map(|(name, _)| *name)
}

/// Over `git daemon` on 127.0.0.1, as runners reach their forge: two runners start the script at
/// the same moment against four queued runs. Each run reaches review on the origin with one
/// attempt per stage — no run was driven twice — and between them the runners drove all four.
#[test]
fn two_runners_cycling_one_remote_at_once_drive_each_queued_run_exactly_once() {
    let Some(world) = World::new(Transport::Daemon, "") else {
        return;
    };
    let a = world.origin.machine();
    let ids = queued_and_pushed(&a, 4, "worker");
    let (b, c) = (world.origin.machine(), world.origin.machine());
    let (b_child, _b_group) = spawn_shell(&b, &format!("sh {SCRIPT}"));
    let (c_child, _c_group) = spawn_shell(&c, &format!("sh {SCRIPT}"));
    let b_ran = b.baton_wait(b_child, PASS);
    let c_ran = c.baton_wait(c_child, PASS);
    assert_eq!(b_ran.code, 0, "{b_ran}");
    assert_eq!(c_ran.code, 0, "{c_ran}");

    let machines = [("A", &a), ("B", &b), ("C", &c)];
    let mut drivers = Vec::new();
    for id in &ids {
        let state = world.state_on_origin(id);
        assert_eq!(
            state["status"], "review",
            "{id}: {state:#}\n{b_ran}\n{c_ran}"
        );
        for stage in ["executor", "reporter"] {
            assert_eq!(
                attempts(&state, stage).len(),
                1,
                "{id}: stage {stage} was driven more than once: {state:#}\n{b_ran}\n{c_ran}"
            );
        }
        assert!(state.get("lease").is_none(), "released: {state:#}");
        assert!(state.get("takeovers").is_none(), "{state:#}");
        let driver = driven_by(&state, &machines)
            .unwrap_or_else(|| panic!("{id}: no machine's worktree: {state:#}"));
        // The runner whose worktree the record names says it drove the run there.
        let log = if driver == "B" { &b_ran } else { &c_ran };
        assert!(
            log.stderr
                .contains(&format!("cycle: {id}: resume ended, the run is review")),
            "{id} driven by {driver}:\n{log}"
        );
        drivers.push(driver);
    }
    assert!(
        drivers.iter().all(|d| ["B", "C"].contains(d)),
        "only the runners drive: {drivers:?}"
    );
    // Every record was published by its driver; nothing is left ahead on either runner.
    for runner in [&b_ran, &c_ran] {
        assert!(!runner.stderr.contains("is ahead of origin"), "{runner}");
    }
    // The next pass resumes nothing on either runner. A runner whose resume lost a run to the
    // other (exit 3) kept a copy of it from before, still queued; it must judge that run as
    // the remote now has it — in review — and not start a resume that can only be refused.
    for (name, runner) in [("B", &b), ("C", &c)] {
        let again = runner.live_shell(&format!("sh {SCRIPT}"));
        assert_eq!(again.code, 0, "{name}: {again}");
        assert!(
            !again.stderr.contains(": resuming"),
            "{name} started a resume:\n{again}"
        );
    }
    // The machine that queued the runs sees the results after a fetch.
    assert_eq!(a.live(["fetch"]).code, 0);
    for id in &ids {
        assert_eq!(status(&a, id)["sync"], "behind");
    }
}

/// A runner without a git identity gets one, and commits the run's record as it.
#[test]
fn the_cycle_script_sets_an_identity_where_git_has_none() {
    let world = World::new(Transport::File, "").unwrap();
    let a = world.origin.machine();
    let ids = queued_and_pushed(&a, 1, "worker");
    let runner = world.origin.machine();
    let ran = runner.live_shell(&format!("{NO_IDENTITY}sh {SCRIPT}"));
    assert_eq!(ran.code, 0, "{ran}");
    assert!(ran.stderr.contains("git has no identity here"), "{ran}");
    assert_eq!(
        runner.git(["config", "user.name"]).trim(),
        "git-baton worker"
    );
    assert_eq!(world.state_on_origin(&ids[0])["status"], "review", "{ran}");
}

/// A bad environment is exit 2 with an `error:` line and a hint, before anything is fetched.
#[test]
fn the_cycle_script_refuses_a_bad_environment() {
    let world = World::new(Transport::File, "").unwrap();
    let runner = world.origin.machine();
    let expect = |run: &Run, error: &str| {
        assert_eq!(run.code, 2, "{run}");
        assert!(
            run.stderr.starts_with(&format!("error: {error}\nhint: ")),
            "{run}"
        );
    };

    let outside = world.scratch("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let not_a_repo = runner.live_shell(&format!(
        "cd '{}' && GIT_CEILING_DIRECTORIES='{}' sh {SCRIPT}",
        outside.display(),
        world.scratch.path().display()
    ));
    expect(
        &not_a_repo,
        &format!("{} is not a git repository", outside.display()),
    );

    // A PATH with git and nothing else.
    let bin = world.scratch("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let git = runner.live_shell("command -v git").stdout;
    std::os::unix::fs::symlink(git.trim(), bin.join("git")).unwrap();
    let no_baton = runner.live_shell(&format!("PATH='{}' /bin/sh {SCRIPT}", bin.display()));
    expect(&no_baton, "git-baton is not on PATH");

    let no_remote = runner.live_shell(&format!("BATON_REMOTE=upstream sh {SCRIPT}"));
    expect(&no_remote, "this clone has no remote `upstream`");
    assert!(no_remote.stderr.contains("one of: origin"), "{no_remote}");

    for jobs in ["0", "two", "-1"] {
        let bad = runner.live_shell(&format!("BATON_JOBS={jobs} sh {SCRIPT}"));
        expect(
            &bad,
            &format!("BATON_JOBS=`{jobs}` is not a number of runs above 0"),
        );
    }
    let bad = runner.live_shell(&format!("BATON_MAX_RESUMES=many sh {SCRIPT}"));
    expect(&bad, "BATON_MAX_RESUMES=`many` is not a number");
    // Nothing of the remote's was fetched by any of them.
    assert_eq!(run_refs(&runner), "");
}

/// The remote refuses the publication of a run's release once (a pre-receive hook, as a remote
/// out of reach at that moment would): the resume warns and ends, the run's result is in the
/// runner's clone only, and the origin still says `queued` under the runner's lease. The
/// script pushes the run, which is ahead of the remote, and the result reaches it.
#[test]
fn a_result_the_remote_missed_at_the_release_is_pushed_by_the_script() {
    let world = World::new(Transport::File, "").unwrap();
    let a = world.origin.machine();
    let ids = queued_and_pushed(&a, 1, "worker");
    let marker = world.scratch("refuse-release");
    std::fs::write(&marker, "").unwrap();
    let hook = world.origin.bare.join("hooks/pre-receive");
    std::fs::write(
        &hook,
        format!(
            r#"#!/bin/sh
# Refuses once the first record of a run in review without a lease: its driver's release.
while read -r old new ref; do
    case $ref in refs/baton/runs/*/record) ;; *) continue ;; esac
    [ -e '{marker}' ] || continue
    state=$(git cat-file -p "$new:state.json")
    if printf '%s\n' "$state" | grep -q '^  "status": "review",' &&
        ! printf '%s\n' "$state" | grep -q '^  "lease":'; then
        rm -f '{marker}'
        echo "the release is refused, once" >&2
        exit 1
    fi
done
"#,
            marker = marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();

    let runner = world.origin.machine();
    let ran = runner.live_shell(&format!("sh {SCRIPT}"));
    assert!(!marker.exists(), "the release was refused: {ran}");
    assert_eq!(ran.code, 0, "{ran}");
    assert!(
        ran.stderr.contains(&format!(
            "run {} is ahead of origin here: pushing it",
            ids[0]
        )),
        "{ran}"
    );
    let state = world.state_on_origin(&ids[0]);
    assert_eq!(state["status"], "review", "{state:#}\n{ran}");
    assert_eq!(attempts(&state, "executor").len(), 1, "{state:#}");
    // The lease of the driver whose release was refused went with the push: another machine
    // need not wait for it to expire.
    assert!(state.get("lease").is_none(), "{state:#}");
    let record = format!("refs/baton/runs/{}/record", ids[0]);
    assert_eq!(world.origin.rev(&record), local_rev(&runner, &record));
}

/// A run held by hand on the machine that queued and pushed it — the hold is published with
/// the run, under its lease — is left alone by a runner's cycle, which says why; the run
/// queued with it is driven.
#[test]
fn a_run_held_by_hand_and_pushed_is_left_alone_by_a_runner() {
    let world = World::new(Transport::File, "").unwrap();
    let a = world.origin.machine();
    let ids = queued_and_pushed(&a, 2, "worker");
    let hold = a.live(["hold", &ids[0], "--reason", "the API key expired"]);
    assert_eq!(hold.code, 0, "{hold}");
    let held = world.state_on_origin(&ids[0]);
    assert!(!held["cycle"]["held"].is_null(), "published: {held:#}");

    let runner = world.origin.machine();
    let ran = runner.live_shell(&format!("sh {SCRIPT}"));
    assert_eq!(ran.code, 0, "{ran}");
    assert!(
        ran.stderr.contains(&format!(
            "cycle: {}: left alone: held by hand since",
            ids[0]
        )),
        "{ran}"
    );
    assert!(ran.stderr.contains("the API key expired"), "{ran}");
    assert!(
        !ran.stderr.contains(&format!("cycle: {}: resuming", ids[0])),
        "{ran}"
    );
    let held = world.state_on_origin(&ids[0]);
    assert_eq!(held["status"], "queued", "{held:#}");
    assert!(attempts(&held, "executor").is_empty(), "{held:#}");
    assert_eq!(world.state_on_origin(&ids[1])["status"], "review", "{ran}");
}

/// On a clone where a person's resume drives a published run right now, the run's record is
/// ahead of the remote's between two publications: the cycle leaves the run alone, and so does
/// the script's push (exit 3 from `push`), which is no failure of the pass.
#[test]
fn a_run_driven_here_right_now_is_left_to_its_driver() {
    let world = World::new(Transport::File, "").unwrap();
    let (a, id) = world.rate_limited_and_pushed();
    let driver = a.live_spawn(["resume", id.as_str(), "--actor", "executor=sleeper"]);
    let agent = wait_for_line(&world.scratch("sleeper.pid"));
    let ran = a.live_shell(&format!("sh {SCRIPT}"));
    kill9(&driver.id().to_string());
    kill9(&format!("-{agent}"));
    wait(&a, driver);
    assert_eq!(ran.code, 0, "{ran}");
    assert!(
        ran.stderr
            .contains(&format!("cycle: {id}: left alone: it is being driven now")),
        "{ran}"
    );
    assert!(
        ran.stderr.contains(&format!(
            "run {id} has another driver now (push exited 3): left to it"
        )),
        "{ran}"
    );
    assert!(!ran.stderr.contains("error:"), "{ran}");
}

/// SIGTERM to the script alone — systemd's `KillMode=mixed`, a CI job cancelled — reaches the
/// cycle, which stops the run it drives at a safe point: the script exits 130, the origin records
/// the run as interrupted by its cycle (not by a person) with no lease left, and the next
/// cycle, on another machine, resumes it.
#[test]
fn sigterm_to_the_script_stops_its_cycle_at_a_safe_point() {
    let world = World::new(Transport::File, "").unwrap();
    let a = world.origin.machine();
    let ids = queued_and_pushed(&a, 1, "sleeper");
    let runner = world.origin.machine();
    let (child, _group) = spawn_shell(&runner, &format!("exec sh {SCRIPT}"));
    let script = child.id();
    let agent = wait_for_line(&world.scratch("sleeper.pid"));
    let _ = Command::new("kill")
        .args(["-TERM", &script.to_string()])
        .status();
    let stopped = runner.baton_wait(child, PASS);
    assert_eq!(stopped.code, 130, "{stopped}");
    assert!(stopped.stderr.contains("cycle: stopping"), "{stopped}");
    assert!(gone_within(&agent, LIVENESS), "the actor was stopped");

    let state = world.state_on_origin(&ids[0]);
    assert_eq!(state["status"], "interrupted", "{state:#}\n{stopped}");
    assert!(state["cycle"]["stopped"].is_string(), "{state:#}");
    assert!(state.get("lease").is_none(), "{state:#}");

    let next = world.origin.machine();
    let (decisions, _) = planned(&next);
    assert_eq!(decisions[0]["run"], ids[0].as_str(), "{decisions:#}");
    assert_eq!(decisions[0]["action"], "resume", "{decisions:#}");
}

/// The machine that queued the runs cycles the remote too (a timer on the laptop), after a
/// runner met a rate limit on the first run: its own copies of both runs still say `queued`,
/// but it judges them as the remote has them — the first rate limited until its reset, the
/// second waiting for the actor the limit holds — and starts neither into the limit.
#[test]
fn a_rate_limit_a_runner_met_holds_the_actor_on_the_machine_that_queued_the_runs() {
    let scratch = tempfile::Builder::new()
        .prefix("baton-scratch")
        .tempdir()
        .unwrap();
    // The first call anywhere is limited for an hour; every later one does the whole plan.
    let script = crate::support::limited_once_script(scratch.path(), 3600);
    let config = format!(
        "actors:\n  claude:\n    command: [\"sh\", \"-c\", {}]\n    output: claude-json\n  \
         writer:\n    command: [\"echo\", \"report\"]\npipeline:\n  \
         - {{ stage: executor, actor: claude, gate: coverage }}\n  \
         - {{ stage: reporter, actor: writer }}\n",
        serde_json::to_string(&script).unwrap()
    );
    let fixture = TestRepo::with()
        .files(&[
            ("docs/a.md", "# A\n"),
            ("docs/b.md", "# B\n"),
            ("docs/c.md", "# C\n"),
        ])
        .plan("plans/fix.md", "Fix the documents", &TARGETS)
        .config(&config);
    let origin = crate::support::remote::Origin::new(fixture, Transport::File).unwrap();
    let a = origin.machine();
    let ids = queued_and_pushed(&a, 2, "claude");
    let runner = origin.machine();
    let ran = runner.live_shell(&format!("sh {SCRIPT}"));
    assert_eq!(ran.code, 0, "{ran}");
    let on_origin = |id: &str| -> Value {
        let path = format!("refs/baton/runs/{id}/record:state.json");
        serde_json::from_str(&origin.git(["cat-file", "-p", &path])).unwrap()
    };
    // The runner took the older run first (by creation, then id), met the limit, and held
    // the other.
    let (limited, held): (Vec<&String>, Vec<&String>) = ids
        .iter()
        .partition(|id| on_origin(id)["status"] == "rate_limited");
    assert_eq!((limited.len(), held.len()), (1, 1), "{ran}");
    let first = on_origin(limited[0]);
    let reset = attempts(&first, "executor")[0]["agent"]["rate_limit_reset"]["at"].clone();
    assert!(reset.is_string(), "{first:#}");
    assert_eq!(on_origin(held[0])["status"], "queued");
    assert!(
        ran.stderr
            .contains(&format!("cycle: {}: waits until", held[0])),
        "{ran}"
    );

    for id in &ids {
        assert_eq!(status(&a, id)["status"], "queued", "A's own copy is older");
    }
    let (decisions, pass) = planned(&a);
    for id in &ids {
        let decision = decisions
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["run"] == id.as_str())
            .unwrap_or_else(|| panic!("{id}: no decision: {decisions:#}"));
        assert_eq!(decision["action"], "wait", "{id}: {decisions:#}\n{pass}");
        assert_eq!(decision["until"], reset, "{id}: {decisions:#}");
    }
}

/// The key/value lines of each `[Section]` of a systemd unit file, comments left out.
fn unit(rel: &str) -> Vec<(String, String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let mut section = String::new();
    let mut entries = Vec::new();
    for line in text(&path).lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_owned();
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("{rel}: not KEY=VALUE: {line}"));
        entries.push((section.clone(), key.to_owned(), value.to_owned()));
    }
    entries
}

fn unit_value<'u>(
    entries: &'u [(String, String, String)],
    section: &str,
    key: &str,
) -> Vec<&'u str> {
    entries
        .iter()
        .filter(|(s, k, _)| s == section && k == key)
        .map(|(_, _, v)| v.as_str())
        .collect()
}

/// A systemd time span as the units write it: `300`, `90s`, `5min`, `1h`.
fn seconds(span: &str) -> u64 {
    let digits = span.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let n: u64 = digits.parse().unwrap_or_else(|_| panic!("span {span}"));
    match &span[digits.len()..] {
        "" | "s" | "sec" => n,
        "m" | "min" => n * 60,
        "h" => n * 3600,
        unit => panic!("span {span}: unit {unit}"),
    }
}

/// What a scheduled example runs: the script this file tests, or the cycle it runs.
fn runs_the_cycle(command: &str) -> bool {
    [
        "scripts/worker/cycle.sh",
        "git baton cycle --once --remote",
        "git-baton cycle --once --remote",
    ]
    .iter()
    .any(|c| command.contains(c))
}

/// The three scheduled examples start the script this file tests (or the cycle it runs) on a
/// schedule, one pass at a time per repository, and the systemd unit gives the cycle the time
/// to stop its runs when it is stopped.
#[test]
fn the_scheduled_examples_run_the_tested_cycle_one_pass_at_a_time() {
    let read = |rel: &str| -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
        serde_saphyr::from_str(&text(&path)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    };
    let github = read("examples/github/baton-cycle.yml");
    let on = &github["on"];
    let cron = on["schedule"][0]["cron"].as_str().unwrap_or_default();
    assert_eq!(cron.split_whitespace().count(), 5, "{on:#}");
    assert!(on.get("workflow_dispatch").is_some(), "{on:#}");
    assert_eq!(github["permissions"]["contents"], "write");
    let concurrency = &github["concurrency"];
    assert!(
        concurrency["group"]
            .as_str()
            .is_some_and(|g| g.contains("${{ github.repository }}")),
        "{concurrency:#}"
    );
    assert_eq!(concurrency["cancel-in-progress"], false, "{concurrency:#}");
    let steps = github["jobs"]["cycle"]["steps"].as_array().unwrap();
    assert!(
        steps
            .iter()
            .any(|s| s["run"].as_str().is_some_and(runs_the_cycle)),
        "no step runs the cycle: {steps:#?}"
    );

    let gitlab = read("examples/gitlab/baton-cycle.gitlab-ci.yml");
    let job = &gitlab["baton-cycle"];
    assert_eq!(
        job["rules"][0]["if"], "$CI_PIPELINE_SOURCE == \"schedule\"",
        "{job:#}"
    );
    assert!(job["resource_group"].is_string(), "{job:#}");
    let script = job["script"].as_array().unwrap();
    assert!(
        script
            .iter()
            .any(|l| l.as_str().is_some_and(runs_the_cycle)),
        "{script:?}"
    );

    let service = unit("examples/systemd/git-baton-cycle.service");
    assert_eq!(unit_value(&service, "Service", "Type"), ["oneshot"]);
    let exec = unit_value(&service, "Service", "ExecStart");
    assert!(exec.len() == 1 && runs_the_cycle(exec[0]), "{exec:?}");
    assert_eq!(unit_value(&service, "Service", "KillMode"), ["mixed"]);
    assert_eq!(unit_value(&service, "Service", "WorkingDirectory").len(), 1);
    // Longer than the two minutes cycle gives its resumes to stop before it kills them.
    let stop = unit_value(&service, "Service", "TimeoutStopSec");
    assert!(stop.len() == 1 && seconds(stop[0]) > 120, "{stop:?}");

    let timer = unit("examples/systemd/git-baton-cycle.timer");
    assert!(
        ["OnCalendar", "OnUnitActiveSec", "OnUnitInactiveSec"]
            .iter()
            .any(|key| !unit_value(&timer, "Timer", key).is_empty()),
        "{timer:?}"
    );
    assert_eq!(unit_value(&timer, "Install", "WantedBy"), ["timers.target"]);
}
