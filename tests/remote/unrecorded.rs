//! A run whose latest attempt's work could not be recorded is not handed on: the driver's lease
//! publishes the failed attempt as it stops, but another clone refuses to take that record
//! (the work is only in the first machine's worktree), and `push` refuses it too.

use super::*;

#[test]
fn a_record_whose_latest_work_is_unrecorded_is_not_taken_elsewhere() {
    let world = World::new(Transport::File, "").unwrap();
    let (a, id) = world.rate_limited_and_pushed();
    let worktree = worktree_of(&a, &status(&a, &id));

    // While the slow agent works, something leaves a path git refuses in the worktree.
    let pid = world.scratch("slow.pid");
    let child = a.live_spawn(["resume", &id, "--actor", "executor=slow"]);
    wait_for_line(&pid);
    std::fs::write(worktree.join("docs/.GIT"), "cache\n").unwrap();
    let resumed = wait(&a, child);
    assert_eq!(resumed.code, 1, "{resumed}");
    let state = world.state_on_origin(&id);
    assert_eq!(
        state["status"], "failed",
        "the lease's release published the failure"
    );
    assert_eq!(
        attempt_field(&state, "executor", "snapshot")[1],
        Value::Null
    );

    let push = a.live(["push", &id]);
    assert_eq!(push.code, 2, "{push}");
    assert!(push.stderr.contains("is not recorded"), "{push}");

    let b = world.origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    let refused = b.live(["resume", &id, "--actor", "executor=finisher"]);
    assert_eq!(refused.code, 2, "{refused}");
    assert!(
        refused.stderr.contains(&format!(
            "error: run {id}: the work of attempt 2 of stage `executor` is not recorded"
        )) && refused
            .stderr
            .contains("hint: the work is only in the worktree of the machine that ran the attempt"),
        "{refused}"
    );
    assert!(
        !b.path(&format!(".git/baton/runs/{id}")).exists(),
        "nothing of the run was rebuilt here"
    );

    // Where the work is, the path removed, a resume records it; then it travels.
    std::fs::remove_file(worktree.join("docs/.GIT")).unwrap();
    let resumed = a.live(["resume", &id, "--actor", "executor=finisher"]);
    assert_eq!(resumed.code, 0, "{resumed}");
    assert_eq!(b.live(["fetch"]).code, 0);
    let finish = b.live(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    let doc_b = b.git(["show", &format!("baton/{id}:docs/b.md")]);
    assert!(doc_b.contains(B_WORK), "{doc_b}");
}
