//! Two machines against one remote: both resume the same run at the same moment, and a push
//! after the remote moved. The compare-and-swap push decides; the loser exits 3 and nothing
//! is lost.

use super::*;

/// Machines B and C resume the run at once: exactly one drives it (exit 0, to review); the other
/// is refused with exit 3 — by the lease or by the lost compare-and-swap — and the origin holds
/// the winner's work, with one resumed attempt.
#[test]
fn two_machines_resume_the_same_run_at_once_and_one_wins() {
    let world = World::new(Transport::File, "").unwrap();
    let (a, id) = world.rate_limited_and_pushed();
    let (b, c) = (world.origin.machine(), world.origin.machine());
    for machine in [&b, &c] {
        let fetch = machine.live(["fetch"]);
        assert_eq!(fetch.code, 0, "{fetch}");
    }

    let args = ["resume", id.as_str(), "--actor", "executor=slow"];
    let (from_b, from_c) = (b.live_spawn(args), c.live_spawn(args));
    let (from_b, from_c) = (wait(&b, from_b), wait(&c, from_c));
    let winners = [&from_b, &from_c].iter().filter(|r| r.code == 0).count();
    assert_eq!(winners, 1, "exactly one wins:\nB: {from_b}\nC: {from_c}");
    let (winner, loser, lost) = if from_b.code == 0 {
        (&b, &c, &from_c)
    } else {
        (&c, &b, &from_b)
    };

    // The origin holds the winner's record: one resumed attempt, by `slow`, to review.
    let record = format!("refs/baton/runs/{id}/record");
    assert_eq!(world.origin.rev(&record), local_rev(winner, &record));
    let state = world.state_on_origin(&id);
    assert_eq!(state["status"], "review", "{state:#}");
    assert_executor_attempts(
        &state,
        &[("partial", "rate_limited"), ("slow", "succeeded")],
    );
    let branch = world
        .origin
        .git(["show", &format!("refs/heads/baton/{id}:docs/a.md")]);
    assert!(branch.contains(A_COMMITTED), "{branch}");

    // Nothing lost: the loser catches up with the winner's run, and so does machine A.
    for machine in [loser, &a] {
        let fetch = machine.live(["fetch"]);
        assert_eq!(fetch.code, 0, "{fetch}");
        let again = machine.live(["resume", &id]);
        assert_eq!(again.code, 2, "in review, nothing to resume:\n{again}");
        let state = status(machine, &id);
        assert_eq!(state["status"], "review", "{state:#}");
        assert_eq!(
            attempt_field(&state, "executor", "actor"),
            ["partial", "slow"]
        );
    }
    // Last, so that everything above is checked whatever the code: losing the race is exit 3
    // (busy), whether the loser saw the lease or lost the compare-and-swap.
    assert_eq!(lost.code, 3, "{lost}");
    assert!(
        lost.stderr.contains(&format!("error: run {id}")),
        "the loser says which run it could not take:\n{lost}"
    );
}

/// A pushes the run, B resumes it and pushes; A, which has not fetched since, pushes again: the
/// origin moved, so A's push is refused with exit 3 and names the run, and neither A's refs nor
/// its run directory change (its copies of the remote's refs may: the refusal names who advanced the
/// run). After a fetch A is behind, catches up, and its push goes through.
#[test]
fn a_push_after_the_remote_moved_is_refused_and_changes_nothing() {
    let world = World::new(Transport::File, "").unwrap();
    let (a, id) = world.rate_limited_and_pushed();
    let b = world.resumed_elsewhere(&id);
    let push = b.live(["push", &id]);
    assert_eq!(push.code, 0, "{push}");
    let record = format!("refs/baton/runs/{id}/record");
    let b_record = local_rev(&b, &record);
    assert_eq!(world.origin.rev(&record), b_record);

    let refs_before = run_refs(&a);
    let state_file = a.path(&format!(".git/baton/runs/{id}/state.json"));
    let state_before = text(&state_file);
    let refused = a.live(["push", &id]);
    assert_eq!(refused.code, 3, "{refused}");
    assert!(
        refused
            .stderr
            .contains(&format!("error: run {id}: origin holds a newer record")),
        "{refused}"
    );
    assert!(
        refused.stderr.contains("hint: ") && refused.stderr.contains("git baton fetch"),
        "{refused}"
    );
    assert_eq!(run_refs(&a), refs_before, "no ref of A's run changed");
    assert_eq!(text(&state_file), state_before, "A's RunState is untouched");
    assert_eq!(world.origin.rev(&record), b_record, "the origin kept B's");

    let fetch = a.live(["fetch"]);
    assert_eq!(fetch.code, 0, "{fetch}");
    assert_eq!(status(&a, &id)["sync"], "behind");
    let finish = a.live(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    let push = a.live(["push", &id]);
    assert_eq!(push.code, 0, "{push}");
    assert_eq!(world.state_on_origin(&id)["status"], "finished");
    assert_eq!(status(&a, &id)["sync"], "up_to_date");
}

/// The race lost at the remote's end: another machine's push lands after the remote advertised
/// its refs to this push (so the lease check in git passes) and before it updates them, and the
/// remote's own compare-and-swap refuses the update (`cannot lock ref …: is at X but expected
/// Y`). That is the same lost race as a stale lease: exit 3, nothing local changed. A
/// `pre-receive` hook on the origin plays the other machine, moving the run's record once.
#[test]
fn a_race_lost_inside_the_remote_is_exit_3_too() {
    let world = World::new(Transport::File, "").unwrap();
    let (_a, id) = world.rate_limited_and_pushed();
    let b = world.origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    let hook = world.origin.bare.join("hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\n\
         # Once: another machine's record lands between the advertisement and the update.\n\
         rm -f \"$0\"\n\
         while read -r old new ref; do\n\
         \x20   case $ref in */record) env -u GIT_QUARANTINE_PATH git update-ref \"$ref\" \"$(git rev-parse main)\" \"$old\" ;; esac\n\
         done\n",
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&hook).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&hook, permissions).unwrap();

    let record = format!("refs/baton/runs/{id}/record");
    let before = local_rev(&b, &format!("refs/baton/remotes/origin/runs/{id}/record"));
    let lost = b.live(["resume", &id, "--actor", "executor=finisher"]);
    assert!(!hook.exists(), "the hook ran:\n{lost}");
    assert_ne!(
        world.origin.rev(&record),
        before,
        "the other machine's record landed"
    );
    assert_eq!(lost.code, 3, "{lost}");
    assert!(lost.stderr.contains(&format!("error: run {id}")), "{lost}");
    assert!(
        !lost.stderr.contains("git push"),
        "no raw git failure:\n{lost}"
    );
}

/// A clone whose resume was refused by another machine's lease never drove the run, so once the
/// holder is done it is simply behind: it catches up and finishes the run the holder drove to
/// review. (Refused while the lease held, it must not have recorded anything of its own that
/// would make its copy diverge from the holder's.)
#[test]
fn a_clone_refused_by_the_lease_catches_up_once_the_holder_is_done() {
    let world = World::new(Transport::File, "").unwrap();
    let (a, id) = world.rate_limited_and_pushed();
    let driver = a.live_spawn(["resume", id.as_str(), "--actor", "executor=slow"]);
    wait_for_line(&world.scratch("slow.pid"));
    let b = world.origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    let refused = b.live(["resume", &id, "--actor", "executor=finisher"]);
    assert_leased(&refused, &id);
    let driven = wait(&a, driver);
    assert_eq!(driven.code, 0, "{driven}");
    assert_eq!(world.state_on_origin(&id)["status"], "review");

    assert_eq!(b.live(["fetch"]).code, 0);
    let shown = status(&b, &id);
    assert!(
        shown["sync"] == "behind" || shown["sync"] == "remote_only",
        "B never drove the run: {}",
        shown["sync"]
    );
    let finish = b.live(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    assert_eq!(world.state_on_origin(&id)["status"], "finished");
}
