//! An attempt whose work cannot be recorded is not a passing attempt. When the snapshot fails —
//! git refuses a path the agent left — the attempt fails with git's reason naming the path, the
//! worktree keeps everything, `push` refuses to publish the run, and `resume` refuses to start an
//! agent in a worktree that still cannot be recorded; once the path is gone, the next attempt
//! records the work and the run goes on.

use super::*;

/// Ways an agent leaves a worktree git cannot commit, each with the path git names.
const UNRECORDABLE: [(&str, &str, &str); 3] = [
    (
        "an untracked docs/.GIT, a name git refuses",
        "printf 'cache\\n' > docs/.GIT",
        "docs/.GIT",
    ),
    (
        "a tracked file turned into a FIFO",
        "rm docs/c.md && mkfifo docs/c.md",
        "docs/c.md",
    ),
    (
        "a nested repository without a commit",
        "mkdir vendor && git -C vendor init -q",
        "vendor",
    ),
];

/// An agent that does the whole plan (so the gate would pass) and then runs `bad`.
fn worker_then(bad: &str) -> Actor {
    Actor::shell(
        "careless",
        &format!("for f in docs/a.md docs/b.md docs/c.md; do echo 'rule: new' >> $f; done; {bad}"),
    )
}

#[test]
fn an_attempt_whose_work_cannot_be_recorded_fails_and_is_not_handed_on() {
    for (name, bad, path) in UNRECORDABLE {
        let idle = Actor::agent("idle");
        let repo = repo_running(&[worker_then(bad), idle, worker()], "");
        let remote = repo.tmp().join("remote.git");
        repo.git(["init", "-q", "--bare", remote.to_str().unwrap()]);
        repo.git(["remote", "add", "origin", remote.to_str().unwrap()]);

        let run = repo.baton(["run", "plans/fix.md"]);
        assert_eq!(run.code, 1, "{name}: {run}");
        let id = run.run_id();
        let state = status(&repo, &id);
        assert_eq!(state["status"], "failed", "{name}");
        let error = state["error"]["message"].as_str().unwrap();
        assert!(
            error.starts_with("its work could not be recorded") && error.contains(path),
            "{name}: {error}"
        );
        assert_eq!(attempt_field(&state, "executor", "snapshot"), [Value::Null]);
        assert_eq!(attempt_field(&state, "executor", "coverage"), [Value::Null]);
        // Nothing in the worktree was touched.
        let worktree = worktree_of(&repo, &state);
        assert!(
            text(&worktree.join("docs/a.md")).contains("rule: new"),
            "{name}"
        );
        assert!(
            std::fs::symlink_metadata(worktree.join(path)).is_ok(),
            "{name}"
        );

        let push = repo.baton(["push", &id]);
        assert_eq!(push.code, 2, "{name}: {push}");
        assert!(
            push.stderr.contains(&format!(
                "error: run {id}: the work of attempt 1 of stage `executor` is not recorded"
            )) && push.stderr.contains("hint: the work is still in"),
            "{name}: {push}"
        );
        assert_eq!(
            repo.git(["ls-remote", "origin"]),
            "",
            "{name}: nothing published"
        );

        // No agent starts in a worktree whose work would be lost again.
        let resumed = repo.baton(["resume", &id, "--actor", "executor=idle"]);
        assert_eq!(resumed.code, 2, "{name}: {resumed}");
        assert!(
            resumed.stderr.contains("cannot be recorded") && resumed.stderr.contains(path),
            "{name}: {resumed}"
        );
        assert_eq!(attempts(&status(&repo, &id), "executor").len(), 1, "{name}");

        // The path gone (as the hint says), the next attempt records the work and passes.
        let gone = worktree.join(path);
        match std::fs::symlink_metadata(&gone).unwrap().is_dir() {
            true => std::fs::remove_dir_all(&gone).unwrap(),
            false => std::fs::remove_file(&gone).unwrap(),
        }
        if path == "docs/c.md" {
            std::fs::write(&gone, "# C\n\nrule: new\n").unwrap();
        }
        let resumed = repo.baton(["resume", &id, "--actor", "executor=idle"]);
        assert_eq!(resumed.code, 0, "{name}: {resumed}");
        assert!(
            resumed.stderr.contains(
                "note: the work of attempt 1 of stage `executor` was not recorded; it is still in \
                 the worktree"
            ),
            "{name}: {resumed}"
        );
        let state = status(&repo, &id);
        assert_eq!(state["status"], "review", "{name}");
        let snapshot = attempt_field(&state, "executor", "snapshot")[1].clone();
        let recorded = repo.git(["show", &format!("{}:docs/a.md", snapshot.as_str().unwrap())]);
        assert!(recorded.contains("rule: new"), "{name}: {recorded}");
        assert_eq!(repo.baton(["push", &id]).code, 0, "{name}");
    }
}

/// A failed snapshot never turns a worse outcome into a better one: a rate-limited attempt stays
/// rate limited, and its error says both.
#[test]
fn an_unrecorded_attempt_keeps_the_outcome_it_had() {
    let limited = Actor::shell(
        "limited",
        "echo x >> docs/a.md; echo c > docs/.GIT; exit 75",
    )
    .set("rate_limit: { exit_codes: [75] }");
    let repo = repo_running(&[limited], "");
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 1, "{run}");
    let state = status(&repo, &run.run_id());
    assert_eq!(state["status"], "rate_limited");
    let error = state["error"]["message"].as_str().unwrap();
    assert!(
        error.contains("; its work could not be recorded"),
        "{error}"
    );
    assert!(error.contains("docs/.GIT"), "{error}");
}
