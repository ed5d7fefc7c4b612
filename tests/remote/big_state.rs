//! A record holds the whole state, however many targets and changed paths a run has: a
//! `state.json` past the 1 MiB a record keeps of other files is recorded whole (never cut into
//! invalid JSON), and the coverage reports it keeps hold a bounded number of paths, the rest
//! counted. Both travel through push and fetch to another clone, which reads the run.

use super::*;

/// A repository with `n` committed files `t/f-<i>.md`, a plan targeting each of them (or, with
/// `dir_target`, the directory `gen/` instead) and one actor, `agent`, running `verbs`.
fn big_origin(n: usize, dir_target: bool, verbs: &[&str]) -> Origin {
    let files: Vec<(String, String)> = (0..n)
        .map(|i| {
            (
                format!("t/file-with-a-longish-name-{i:05}.md"),
                "x\n".to_owned(),
            )
        })
        .collect();
    let targets: Vec<&str> = match dir_target {
        true => vec!["gen/"],
        false => files.iter().map(|(p, _)| p.as_str()).collect(),
    };
    let config = format!(
        "actors:\n{}pipeline:\n  - {{ stage: executor, actor: agent, gate: coverage }}\n",
        actor("agent", verbs, ""),
    );
    let mut fixture = TestRepo::with()
        .plan("plans/big.md", "Many targets", &targets)
        .config(&config);
    for (path, content) in &files {
        fixture = fixture.file(path, content);
    }
    Origin::new(fixture, Transport::File).unwrap()
}

/// The record's `state.json` of run `id` in `machine`: the bytes, which must parse.
fn recorded_state(machine: &TestRepo, id: &str) -> (String, Value) {
    let text = machine.git(["show", &format!("refs/baton/runs/{id}/record:state.json")]);
    let state = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON: {e}"));
    (text, state)
}

/// `doctor` on `machine` finds nothing.
fn doctor_is_clean(machine: &TestRepo) {
    let doctor = machine.live(["doctor"]);
    assert_eq!(doctor.code, 0, "{doctor}");
    assert!(!doctor.stdout.contains("unrecorded_state"), "{doctor}");
}

#[test]
fn a_state_of_many_targets_and_attempts_is_recorded_whole_and_travels() {
    let origin = big_origin(
        3000,
        false,
        &["edit", "t/file-with-a-longish-name-00000.md", "y"],
    );
    let a = origin.machine();
    let run = a.live(["run", "plans/big.md"]);
    assert_eq!(run.code, 1, "{run}");
    let id = run.run_id();
    for _ in 0..3 {
        assert_eq!(a.live(["resume", &id]).code, 1);
    }
    let dir = a.path(&format!(".git/baton/runs/{id}"));
    let on_disk = text(&dir.join("state.json"));
    assert!(on_disk.len() > 1 << 20, "only {} bytes", on_disk.len());
    let (recorded, state) = recorded_state(&a, &id);
    assert_eq!(recorded, on_disk, "the record holds the whole state.json");
    assert_eq!(attempts(&state, "executor").len(), 4);
    doctor_is_clean(&a);

    assert_eq!(a.live(["push", &id]).code, 0);
    let b = origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    assert_eq!(status(&b, &id)["sync"], "remote_only");
    let resumed = b.live(["resume", &id]);
    assert_eq!(resumed.code, 1, "{resumed}");
    let state = status(&b, &id);
    assert_eq!(state["status"], "blocked");
    assert_eq!(attempts(&state, "executor").len(), 5);
    doctor_is_clean(&b);
}

#[test]
fn an_attempt_changing_thousands_of_paths_keeps_a_bounded_report() {
    let script =
        "mkdir -p gen && i=0; while [ $i -lt 30000 ]; do echo $i > gen/f$i; i=$((i+1)); done";
    let origin = big_origin(1, true, &[]);
    let a = origin.machine();
    // The fake agent has no loop: the actor is the shell.
    let config = a.path(".baton.yml");
    let yaml = text(&config).replace(
        &format!("command: [{}]", serde_json::to_string(AGENT).unwrap()),
        &format!(
            "command: [\"sh\", \"-c\", {}]",
            serde_json::to_string(script).unwrap()
        ),
    );
    std::fs::write(&config, yaml).unwrap();
    a.git(["commit", "-q", "-am", "the agent writes 30,000 files"]);
    let run = a.live(["run", "plans/big.md"]);
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    let (_, state) = recorded_state(&a, &id);
    let row = &attempts(&state, "executor")[0]["coverage"]["targets"][0];
    assert_eq!(row["status"], "changed");
    assert_eq!(row["paths"].as_array().unwrap().len(), 1001);
    assert_eq!(row["paths_omitted"], 30000 - 1001);
    let on_disk = text(&a.path(&format!(".git/baton/runs/{id}/state.json")));
    assert!(on_disk.len() < 1 << 20, "{} bytes", on_disk.len());
    doctor_is_clean(&a);

    assert_eq!(a.live(["push", &id]).code, 0);
    let b = origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    let finish = b.live(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    let files = b.git([
        "ls-tree",
        "-r",
        "--name-only",
        &format!("baton/{id}"),
        "gen/",
    ]);
    assert_eq!(files.lines().count(), 30000);
}
