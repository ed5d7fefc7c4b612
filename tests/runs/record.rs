//! The run's record in git (`refs/baton/runs/<id>/record`): what each save commits, what it
//! leaves out, and how a record that lags its `state.json` is found and mended.

use super::*;

/// The files of the record commit `rev`, as git lists them.
fn record_files(repo: &TestRepo, rev: &str) -> Vec<String> {
    repo.git(["ls-tree", "-r", "--name-only", rev])
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Every save of a run is a commit on its record, whose `state.json` is the file's bytes and
/// whose tree holds the plan snapshot, the result and each attempt's prompt, logs and evidence —
/// and nothing about this machine only (locks, pids, tokens).
#[test]
fn every_save_is_recorded_and_the_record_rebuilds_the_run() {
    let limited = Actor::agent("limited")
        .edit("docs/a.md", "rule: grade A")
        .say("out of tokens")
        .exit("75")
        .set("rate_limit: { exit_codes: [75] }");
    let repo = repo_running(&[limited, worker()], "");
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let resumed = repo.baton(["resume", &id, "--actor", "executor=worker"]);
    assert_eq!(resumed.code, 0, "{resumed}");

    let record = format!("refs/baton/runs/{id}/record");
    let saves: usize = repo
        .git(["rev-list", "--count", &record])
        .trim()
        .parse()
        .unwrap();
    // Created, attempt 1 started and ended, attempt 2 started and ended, reporter started and
    // ended, review entered (and the result beside it): one commit each, at least.
    assert!(saves >= 7, "only {saves} record commits");
    let subjects = repo.git(["log", "--format=%s", &record]);
    assert!(
        subjects.starts_with(&format!("baton: run {id} is review")),
        "{subjects}"
    );
    assert!(
        subjects.contains(&format!("baton: run {id} is rate_limited")),
        "{subjects}"
    );

    let dir = run_dir(&repo, &id);
    let in_record = repo.git(["show", &format!("{record}:state.json")]);
    assert_eq!(in_record, text(&dir.join("state.json")));
    let files = record_files(&repo, &record);
    for expected in [
        "plan.md",
        "result.json",
        "result.md",
        "state.json",
        "attempts/executor-1/prompt.md",
        "attempts/executor-1/stdout.log",
        "attempts/executor-2/prompt.md",
        "attempts/reporter-1/stdout.log",
    ] {
        assert!(
            files.iter().any(|f| f == expected),
            "{expected} in {files:?}"
        );
    }
    for file in &files {
        assert!(
            !file.ends_with("lock")
                && !file.ends_with("lock.json")
                && !file.ends_with("actor.pid")
                && !file.ends_with("attempt.token"),
            "{file} is about this machine only: {files:?}"
        );
    }
    let log = repo.git(["show", &format!("{record}:attempts/executor-1/stdout.log")]);
    assert_eq!(log, "out of tokens\n");
    assert_eq!(
        repo.git(["show", &format!("{record}:plan.md")]),
        text(&dir.join("plan.md"))
    );
}

/// A save cut short between `state.json` and its record leaves a lag that `doctor` reports and
/// `doctor --fix` records; a run whose record is current is not reported.
#[test]
fn a_record_lagging_its_state_is_reported_and_mended() {
    let repo = standard_repo(&[]);
    let (id, _) = repo.run_plan("plans/fix.md", 0);
    let clean = repo.baton(["doctor", "--json"]);
    assert_eq!(clean.code, 0, "{clean}");

    // What a kill between the two writes leaves: the record behind the file (the last two
    // saves differ by the result only, not by state.json).
    let record = format!("refs/baton/runs/{id}/record");
    let previous = repo
        .git(["rev-parse", &format!("{record}~2")])
        .trim()
        .to_owned();
    repo.git(["update-ref", &record, &previous]);
    let doctor = repo.baton(["doctor", "--json"]);
    assert_eq!(doctor.code, 1, "{doctor}");
    let findings = doctor.json()["findings"].clone();
    let finding = findings
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "unrecorded_state")
        .unwrap_or_else(|| panic!("{doctor}"));
    assert_eq!(finding["run"], id.as_str());
    assert_eq!(finding["safe"], true);

    let fixed = repo.baton(["doctor", "--fix"]);
    assert_eq!(fixed.code, 0, "{fixed}");
    let tip = repo.git(["rev-parse", &record]).trim().to_owned();
    assert_ne!(tip, previous);
    assert_eq!(
        repo.git(["show", &format!("{record}:state.json")]),
        text(&run_dir(&repo, &id).join("state.json"))
    );
    assert_eq!(repo.baton(["doctor"]).code, 0);
}
