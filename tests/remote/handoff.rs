//! The scenario issue 10 exists for: a run rate limited on machine A is pushed, fetched on
//! machine B, resumed there by another actor with A's uncommitted and untracked work in place,
//! passes the gate, is pushed back, and is finished on machine A — over `file://` and over
//! `git daemon` on 127.0.0.1.

use super::*;

#[test]
fn a_run_stopped_on_one_machine_is_finished_from_another_over_file() {
    handoff(Transport::File);
}

#[test]
fn a_run_stopped_on_one_machine_is_finished_from_another_over_git_daemon() {
    handoff(Transport::Daemon);
}

fn handoff(transport: Transport) {
    let Some(world) = World::new(transport, "") else {
        return;
    };
    let (a, id) = world.rate_limited_and_pushed();
    let base = local_rev(&a, "main").unwrap();
    let origin_url = &world.origin.url;
    assert!(
        world
            .origin
            .rev(&format!("refs/baton/runs/{id}/record"))
            .is_some(),
        "the record reached {origin_url}: {:?}",
        world.origin.refs("refs/baton/")
    );
    assert!(
        world
            .origin
            .rev(&format!("refs/heads/baton/{id}"))
            .is_some(),
        "the branch reached {origin_url}"
    );
    assert_eq!(
        world.state_on_origin(&id)["status"],
        "rate_limited",
        "the record holds the RunState"
    );

    // Machine B: a fresh clone, whose own main moved on (a new commit that changes the plan),
    // which must not leak into the run: its base and its plan are the run's.
    let b = world.origin.machine();
    let four = [&TARGETS[..], &["docs/d.md"]].concat();
    b.write(
        "plans/fix.md",
        &plan_text("Fix the grading documents", &four),
    );
    b.commit_all("machine B: a plan with a fourth target");
    let fetch = b.live(["fetch"]);
    assert_eq!(fetch.code, 0, "{fetch}");
    assert!(
        fetch.stderr.contains(&id),
        "fetch names the new run:\n{fetch}"
    );

    let resumed = b.live(["resume", &id, "--actor", "executor=finisher"]);
    assert_eq!(resumed.code, 0, "{resumed}");
    let state = status(&b, &id);
    assert_eq!(state["status"], "review", "{state:#}");
    assert_executor_attempts(
        &state,
        &[("partial", "rate_limited"), ("finisher", "succeeded")],
    );
    assert_eq!(attempt_field(&state, "executor", "resumed"), [false, true]);
    assert_eq!(state["coverage"]["passed"], true, "{state:#}");
    let targets: Vec<&str> = state["coverage"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap())
        .collect();
    assert_eq!(targets, TARGETS, "A's plan, not B's main");
    assert_eq!(
        state["base"],
        base.as_str(),
        "A's base commit, not B's main"
    );

    // B's worktree was rebuilt on B with all of A's work: committed, staged, unstaged and
    // untracked, and B's agent worked on top of it.
    let worktree = worktree_of(&b, &state);
    assert!(worktree.starts_with(b.tmp()), "{}", worktree.display());
    assert!(text(&worktree.join("docs/a.md")).contains(A_COMMITTED));
    let doc_b = text(&worktree.join("docs/b.md"));
    assert!(
        doc_b.contains(A_STAGED) && doc_b.contains(B_WORK),
        "{doc_b}"
    );
    assert!(text(&worktree.join("docs/c.md")).contains(A_UNSTAGED));
    assert_eq!(text(&worktree.join("notes.md")), format!("{A_UNTRACKED}\n"));
    let log = b.git_in(&worktree, ["log", "--format=%s", "-1", "HEAD"]);
    assert_eq!(
        log.trim(),
        "machine A: docs/a.md",
        "A's commit is on B's branch"
    );

    let push = b.live(["push", &id]);
    assert_eq!(push.code, 0, "{push}");
    assert_eq!(
        world.origin.rev(&format!("refs/baton/runs/{id}/record")),
        local_rev(&b, &format!("refs/baton/runs/{id}/record")),
        "the origin holds B's record"
    );
    assert_eq!(world.state_on_origin(&id)["status"], "review");
    // B's actor was told what a local resume tells it: the previous attempt, and A's changes.
    let prompt = world.origin.git([
        "show",
        &format!("refs/baton/runs/{id}/record:attempts/executor-2/prompt.md"),
    ]);
    assert!(
        prompt.contains("This is a resumed attempt")
            && prompt.contains("(#1, actor `partial`")
            && prompt.contains("rate_limited"),
        "{prompt}"
    );
    for path in ["docs/a.md", "docs/b.md", "docs/c.md", "notes.md"] {
        assert!(prompt.contains(&format!("- `{path}`")), "{path}:\n{prompt}");
    }

    // Back on machine A: fetch, then finish; the branch holds B's work.
    let fetch = a.live(["fetch"]);
    assert_eq!(fetch.code, 0, "{fetch}");
    let finish = a.live(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    let state = status(&a, &id);
    assert_eq!(state["status"], "finished", "{state:#}");
    assert_eq!(
        attempt_field(&state, "executor", "actor"),
        ["partial", "finisher"]
    );
    let branch = format!("baton/{id}");
    let show = |path: &str| a.git(["show", &format!("{branch}:{path}")]);
    assert!(show("docs/a.md").contains(A_COMMITTED));
    let doc_b = show("docs/b.md");
    assert!(
        doc_b.contains(A_STAGED) && doc_b.contains(B_WORK),
        "{doc_b}"
    );
    assert!(show("docs/c.md").contains(A_UNSTAGED));
    assert_eq!(show("notes.md"), format!("{A_UNTRACKED}\n"));
    let message = a.git(["log", "-1", "--format=%B", &branch]);
    assert!(message.contains(&format!("Baton-Run: {id}")), "{message}");
}
