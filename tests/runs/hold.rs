//! `git baton hold` and `release`: a person keeps `cycle` away from a run and gives it back,
//! recorded in the run (`cycle.held` of `status --json`), shown by `status` and `list`, and,
//! for a published run, on its remote.

use super::*;
use crate::support::remote::{Origin, Transport};

/// The lines of stderr that start with `prefix`.
fn lines_with<'a>(run: &'a Run, prefix: &str) -> Vec<&'a str> {
    run.stderr
        .lines()
        .filter(|l| l.starts_with(prefix))
        .collect()
}

/// A refusal as docs/cli.md words it: exit `code`, one `error:` line containing `error`, and a
/// `hint:` after it.
fn assert_refused(run: &Run, code: i32, error: &str) {
    assert_eq!(run.code, code, "{run}");
    let errors = lines_with(run, "error: ");
    assert_eq!(errors.len(), 1, "{run}");
    assert!(errors[0].contains(error), "{run}");
    assert!(!lines_with(run, "hint: ").is_empty(), "{run}");
}

/// A queued run held with a reason: the hold is in `status --json` (valid by the schemas, as
/// stored too), in `status` with the command that ends it, and in `list`; holding it again is
/// refused; `release` ends it and leaves no `cycle` behind; releasing again is refused.
#[test]
fn hold_then_release_round_trip() {
    let repo = standard_repo(&[]);
    let run = repo.baton(["run", "plans/fix.md", "--queue"]);
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    assert_eq!(status(&repo, &id).get("cycle"), None, "{run}");

    let hold = repo.baton(["hold", &id, "--reason", "waiting for the API key"]);
    assert_eq!(hold.code, 0, "{hold}");
    assert_eq!(
        hold.stdout,
        format!("held run {id} (queued): cycle leaves it alone until `git baton release {id}`\n")
    );
    let held = status(&repo, &id);
    assert_eq!(held["status"], "queued");
    assert_eq!(held["cycle"]["held"]["reason"], "waiting for the API key");
    let at = held["cycle"]["held"]["at"].as_str().unwrap().to_owned();
    assert_eq!(
        held["updated_at"],
        at.as_str(),
        "the hold is what happened last"
    );
    schemas::assert_valid(
        &schemas::schema("status.schema.json"),
        &held,
        "status --json of a held run",
    );
    let stored: Value =
        serde_json::from_str(&text(&run_dir(&repo, &id).join("state.json"))).unwrap();
    schemas::assert_valid(
        &schemas::schema("state.schema.json"),
        &stored,
        "state.json of a held run",
    );

    let shown = repo.baton(["status", &id]);
    assert!(
        shown.stdout.contains(&format!(
            "  held      since {at}: waiting for the API key; cycle leaves it alone until `git baton release {id}`\n"
        )),
        "{shown}"
    );
    assert!(
        shown
            .stdout
            .contains(&format!("next: git baton release {id}")),
        "{shown}"
    );
    let list = repo.baton(["list"]);
    let header = list.stdout.lines().next().unwrap();
    assert!(header.split_whitespace().last() == Some("CYCLE"), "{list}");
    assert!(
        list.stdout.contains(" held: waiting for the API key\n"),
        "{list}"
    );
    let listed = repo.baton(["list", "--json"]);
    assert_eq!(
        listed.json()[0]["cycle"]["held"]["reason"],
        "waiting for the API key"
    );

    assert_refused(&repo.baton(["hold", &id]), 2, "is already held, since");
    assert_eq!(status(&repo, &id)["cycle"]["held"]["at"], at.as_str());

    let release = repo.baton(["release", &id]);
    assert_eq!(release.code, 0, "{release}");
    assert_eq!(
        release.stdout,
        format!("released run {id} (queued): cycle may take it again\n")
    );
    let released = status(&repo, &id);
    assert_eq!(released.get("cycle"), None, "{released:#}");
    assert_eq!(released["status"], "queued");
    assert!(!repo.baton(["list"]).stdout.contains("CYCLE"));

    let again = repo.baton(["release", &id]);
    assert_refused(&again, 2, "is not held");
    assert!(
        again.stderr.contains(&format!("`git baton hold {id}`")),
        "{again}"
    );
}

/// A run in review (or finished) has nothing left for `cycle`: holding it is bad input, and its
/// state is left byte for byte. A reason on more than one line is refused before anything.
#[test]
fn a_settled_run_cannot_be_held() {
    let repo = standard_repo(&[]);
    let (id, _) = repo.run_plan("plans/fix.md", 0);
    let state_file = run_dir(&repo, &id).join("state.json");
    let before = text(&state_file);
    assert_refused(&repo.baton(["hold", &id]), 2, "is review");
    assert_refused(&repo.baton(["release", &id]), 2, "is not held");
    assert_eq!(text(&state_file), before);

    let queued = repo.baton(["run", "plans/fix.md", "--queue"]).run_id();
    let two_lines = repo.baton(["hold", &queued, "--reason", "one\ntwo"]);
    assert_eq!(two_lines.code, 2, "{two_lines}");
    assert!(
        two_lines.stderr.contains("control character"),
        "{two_lines}"
    );
    assert_eq!(status(&repo, &queued).get("cycle"), None);
    let unknown = repo.baton(["hold", "nosuchrun"]);
    assert_refused(&unknown, 2, "nosuchrun");
}

/// The actor `waiting`, which writes its pid to the first path and edits every target once the
/// second one exists, both in `scratch_dir`.
fn waiting_actor(scratch_dir: &tempfile::TempDir) -> (Actor, PathBuf, PathBuf) {
    let (pid_file, go) = (
        outside(scratch_dir, "agent.pid"),
        outside(scratch_dir, "go"),
    );
    let actor = Actor::agent("waiting")
        .pid(&pid_file)
        .verbs(&["wait-for", go.to_str().unwrap()])
        .edit_all();
    (actor, pid_file, go)
}

/// A run a live process drives is busy: `hold` says so (exit 3) with when it can be held, and
/// changes nothing; once the driver let go, the hold is taken.
#[test]
fn a_run_being_driven_is_busy_for_hold() {
    let scratch_dir = scratch();
    let (waiting, pid_file, go) = waiting_actor(&scratch_dir);
    let repo = repo_running(&[waiting], "");
    let child = spawn(&repo, &["run", "plans/fix.md", "--stop-after", "executor"]);
    wait_for_line(&pid_file);
    let id = wait_for_run(&repo);
    let busy = repo.baton(["hold", &id, "--reason", "later"]);
    assert_refused(&busy, 3, &id);
    assert!(
        busy.stderr
            .contains("hint: it can be held once its driver lets go of it"),
        "{busy}"
    );
    std::fs::write(&go, "").unwrap();
    let run = wait(&repo, child);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(status(&repo, &id)["status"], "paused");
    let hold = repo.baton(["hold", &id]);
    assert_eq!(hold.code, 0, "{hold}");
    let held = status(&repo, &id);
    assert!(held["cycle"]["held"]["at"].is_string(), "{held:#}");
    assert_eq!(held["cycle"]["held"].get("reason"), None, "{held:#}");
}

/// The state of run `id` as `origin`'s record holds it.
fn on_origin(origin: &Origin, id: &str) -> Value {
    let text = origin.git([
        "cat-file",
        "-p",
        &format!("refs/baton/runs/{id}/record:state.json"),
    ]);
    serde_json::from_str(&text).unwrap()
}

/// A published run held on another machine, where only the remote had it: the hold reaches the
/// remote under a lease given back at once. The first machine, whose copy predates the hold,
/// catches up before it releases the run — releasing its own stale copy would be refused as not
/// held — and the release reaches the remote too.
#[test]
fn the_hold_of_a_published_run_reaches_the_remote() {
    let fixture = TestRepo::with()
        .old_rule_docs()
        .file("plans/fix.md", PLAN)
        .config(&config(&[worker(), writer()], PIPELINE));
    let origin = Origin::new(fixture, Transport::File).unwrap();
    let a = origin.machine();
    let run = a.live(["run", "plans/fix.md", "--queue"]);
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    let push = a.live(["push", &id]);
    assert_eq!(push.code, 0, "{push}");
    assert_eq!(on_origin(&origin, &id).get("cycle"), None);

    let b = origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    let hold = b.live(["hold", &id, "--reason", "not tonight"]);
    assert_eq!(hold.code, 0, "{hold}");
    let remote = on_origin(&origin, &id);
    assert_eq!(
        remote["cycle"]["held"]["reason"], "not tonight",
        "{remote:#}"
    );
    assert!(
        remote["lease"].is_null(),
        "the lease was given back: {remote:#}"
    );
    assert_eq!(remote["status"], "queued");

    let release = a.live(["release", &id]);
    assert_eq!(release.code, 0, "{release}");
    let remote = on_origin(&origin, &id);
    assert_eq!(remote.get("cycle"), None, "{remote:#}");
    assert!(remote["lease"].is_null(), "{remote:#}");
    // Machine b's copy predates the release: it catches up before it refuses a second release.
    let again = b.live(["release", &id]);
    assert_refused(&again, 2, "is not held");
}

/// A published run that another machine drives, under a lease in force: `hold` on a second
/// machine is busy (exit 3) — the lease is not taken, and the remote keeps no hold.
#[test]
fn a_run_leased_by_another_machine_is_busy_for_hold() {
    let scratch_dir = scratch();
    let (waiting, pid_file, go) = waiting_actor(&scratch_dir);
    let fixture = TestRepo::with()
        .old_rule_docs()
        .file("plans/fix.md", PLAN)
        .config(&config(
            &[waiting, writer()],
            &pipeline_with("waiting", "sync: push\n"),
        ));
    let origin = Origin::new(fixture, Transport::File).unwrap();
    let a = origin.machine();
    let driver = a.live_spawn(["run", "plans/fix.md", "--stop-after", "executor"]);
    wait_for_line(&pid_file);
    let id = wait_for_run(&a);

    let b = origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    let busy = b.live(["hold", &id, "--reason", "not now"]);
    assert_refused(&busy, 3, &format!("run {id} is leased by "));
    let remote = on_origin(&origin, &id);
    assert!(remote.get("cycle").is_none(), "{remote:#}");
    assert_eq!(remote["status"], "running", "{remote:#}");

    std::fs::write(&go, "").unwrap();
    let run = a.baton_wait(driver, LIVENESS);
    assert_eq!(run.code, 0, "{run}");
}
