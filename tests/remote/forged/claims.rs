//! What a record says of itself, checked before anything takes it: that it is the record of the
//! run its ref names, that it fits the limit of a record file, that it gates what this
//! repository's configuration gates, and that its checks are commands a commit holds.

use super::*;

/// A record under run X's ref whose state names run Y — a run machine B has of its own — is
/// not taken for either: `list` warns and shows Y once, `cycle` does not drive Y on its word,
/// and resuming X refuses the record.
#[test]
fn a_record_that_names_another_run_is_not_that_run() {
    let world = World::new(Transport::File, "").unwrap();
    let (_a, x) = world.rate_limited_and_pushed();
    let b = world.origin.machine();
    let run = b.live(["run", "plans/fix.md", "--actor", "executor=failing"]);
    assert_eq!(run.code, 1, "{run}");
    let y = run.run_id();
    forge_record(
        &world.origin.bare,
        &x,
        |s| s["run_id"] = y.as_str().into(),
        &[],
    );
    assert_eq!(b.live(["fetch"]).code, 0);

    let list = b.live(["list"]);
    assert!(
        list.stderr.contains(&format!(
            "run {x}: the record origin holds is refused: it is the record of run `{y}`, not of \
             the run its ref names"
        )),
        "{list}"
    );
    assert_eq!(list.stdout.matches(y.as_str()).count(), 1, "{list}");
    let cycle = b.live(["cycle", "--once", "--remote", "origin"]);
    assert!(!cycle.stderr.contains("driver died"), "{cycle}");
    assert_eq!(status(&b, &y)["status"], "failed", "{cycle}");
    let resumed = b.live(["resume", &x, "--actor", "executor=finisher"]);
    assert_refused(&resumed, &x, "not of the run its ref names");
    assert_not_taken(&b, &x);
}

/// A remote `state.json` past the limit of a record file (here 64 MiB and one byte of JSON
/// whitespace, a push of a few hundred KiB) is refused by its size before it is read, by every
/// command that reads a remote's state — not only by `resume`.
#[test]
fn an_oversized_remote_state_is_refused_unread() {
    let world = World::new(Transport::File, "").unwrap();
    let (_a, x) = world.rate_limited_and_pushed();
    let original = world.origin.git([
        "cat-file",
        "blob",
        &format!("refs/baton/runs/{x}/record:state.json"),
    ]);
    let mut padded = original.into_bytes();
    padded.resize((64 << 20) + 1, b' ');
    forge_record(
        &world.origin.bare,
        &x,
        |_| {},
        &[("state.json", Some(&padded))],
    );
    let b = world.origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    for args in [vec!["list"], vec!["status", x.as_str()]] {
        let run = b.live(&args);
        assert!(
            run.stderr.contains(&format!(
                "`state.json` is {} bytes, more than a record file may be",
                (64 << 20) + 1
            )),
            "{args:?}: {run}"
        );
    }
}

/// A run this clone never had runs the checks this repository's `.baton.yml` runs, and has
/// targets where it requires them: a record whose successful attempt has no result of a
/// configured check, or whose plan lost its targets, was made weaker than creation here would
/// make it, and is not taken.
#[test]
fn a_record_weaker_than_the_configuration_is_not_adopted() {
    let checks = "checks:\n  - { name: tests, shell: \"echo TESTS FAIL; exit 1\" }\n";
    let world = World::new(Transport::File, checks).unwrap();
    let a = world.origin.machine();
    // The work covers every target; the check blocks it.
    let run = a.live(["run", "plans/fix.md", "--actor", "executor=worker"]);
    assert_eq!(run.code, 1, "{run}");
    let id = run.run_id();
    assert_eq!(a.live(["push", &id]).code, 0);
    forge_record(
        &world.origin.bare,
        &id,
        |s| {
            s["stages"][0]["attempts"][0]["checks"] = serde_json::json!([]);
            claim_review(s, |_| {});
        },
        &[],
    );
    let b = world.origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    assert_refused(
        &b.live(["finish", &id]),
        &id,
        "attempt 1 of stage `executor` succeeded without a result of its runner check `tests`",
    );
    assert_not_taken(&b, &id);

    let world = World::new(Transport::File, "require_targets: true\n").unwrap();
    let (_a, id) = blocked_and_pushed(&world);
    let untargeted = "---\ntitle: Fix the grading documents\n---\nState the rule.\n";
    forge_record(
        &world.origin.bare,
        &id,
        |s| {
            claim_review(s, |report| {
                report["targets"] = serde_json::json!([]);
                report["passed"] = true.into();
                report["verified"] = false.into();
                report["problems"] = serde_json::json!([]);
            });
            s["plan"]["targets"] = serde_json::json!([]);
        },
        &[("plan.md", Some(untargeted.as_bytes()))],
    );
    let b = world.origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    assert_refused(&b.live(["finish", &id]), &id, "require_targets: true");
    assert_not_taken(&b, &id);
}

/// The runner checks of a run this clone never had are commands it would run: a record whose
/// plan snapshot gained a check the plan file does not have at the run's base is not taken, and
/// the command never runs. A check the plan has at its base is the plan's own, and taken.
#[test]
fn a_check_only_the_record_holds_never_runs() {
    let world = World::new(Transport::File, "").unwrap();
    let (_a, id) = world.rate_limited_and_pushed();
    let ran = world.scratch("check-ran");
    let snapshot = world.origin.git([
        "cat-file",
        "blob",
        &format!("refs/baton/runs/{id}/record:plan.md"),
    ]);
    let forged = snapshot.replacen(
        "targets:",
        &format!(
            "checks:\n  - {{ name: lint, shell: \"touch {}\" }}\ntargets:",
            ran.display()
        ),
        1,
    );
    assert_ne!(forged, snapshot);
    forge_record(
        &world.origin.bare,
        &id,
        |_| {},
        &[("plan.md", Some(forged.as_bytes()))],
    );
    let b = world.origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    let resumed = b.live(["resume", &id, "--actor", "executor=worker"]);
    assert_refused(
        &resumed,
        &id,
        "its plan snapshot has runner checks that `plans/fix.md` does not have at the run's base",
    );
    assert_not_taken(&b, &id);
    assert!(!ran.exists(), "the forged check ran");
}
