//! After review: `finish` and its trailers, `verify --head` in CI, `clean`.

use super::*;

/// `finish` commits the rest of the work with a `Baton-Unchanged` trailer per unchanged target;
/// `verify --head` on the branch then accepts those reasons, as CI would.
#[test]
fn finish_writes_trailers_that_verify_head_accepts() {
    let reason = r#"{"target_coverage": [{"target": "docs/c.md", "status": "unchanged", "reason": "already states the new grading rule in section 3"}]}"#;
    let partial = Actor::agent("partial")
        .edit("docs/a.md", "rule: grade A")
        .edit("docs/b.md", "rule: grade B")
        .evidence(reason);
    let repo = repo_running(&[partial], "");
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    let worktree = repo.path(&format!(".baton/worktrees/{id}"));

    let review = repo.baton(["review", &id]);
    assert_eq!(review.code, 0, "{review}");
    assert!(
        review
            .stdout
            .contains("needed no change, because: already states the new grading rule"),
        "{review}"
    );
    assert!(review.stdout.contains("docs/a.md"), "{review}");

    let finish = repo.baton(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    assert!(
        finish.stdout.contains("1 unchanged reason(s) as trailers"),
        "{finish}"
    );
    assert!(!worktree.exists(), "a clean worktree is removed:\n{finish}");
    assert_eq!(status(&repo, &id)["status"], "finished");
    let message = repo.git(["log", "-1", "--format=%B", &format!("baton/{id}")]);
    assert!(message.contains(&format!("Baton-Run: {id}")), "{message}");
    assert!(message.contains("Baton-Plan: plans/fix.md"), "{message}");
    assert!(
        message.contains(
            "Baton-Unchanged: docs/c.md: already states the new grading rule in section 3"
        ),
        "{message}"
    );
    assert_eq!(
        repo.git(["status", "--porcelain"]),
        "",
        "the main worktree is untouched"
    );

    let gate =
        repo.baton(format!("verify plans/fix.md --base main --head baton/{id} --json").split(' '));
    assert_eq!(gate.code, 0, "{gate}");
    let rows = &gate.json()["plans"][0]["coverage"]["targets"];
    assert_eq!(rows[2]["status"], "unchanged", "{gate}");
    assert_eq!(rows[2]["reason_source"]["kind"], "trailer", "{gate}");
    // The README's flow, with no plan named: the branch never touched the plan on main, and
    // its finish commit names it.
    let gate = repo
        .baton(format!("verify --base main --head baton/{id} --require-plans --json").split(' '));
    assert_eq!(gate.code, 0, "{gate}");
    let json = gate.json();
    assert_eq!(json["plans"][0]["path"], "plans/fix.md", "{gate}");
    assert_eq!(
        json["plans"][0]["named_by"][0]["runs"],
        serde_json::json!([id]),
        "{gate}"
    );
    assert_eq!(
        json["plans"][0]["coverage"]["targets"][2]["status"],
        "unchanged"
    );

    // A finished run can be cleaned; its branch stays.
    let clean = repo.baton(["clean", &id]);
    assert_eq!(clean.code, 0, "{clean}");
    assert!(!run_dir(&repo, &id).exists());
    assert!(branches(&repo).contains(&format!("baton/{id}")));
    assert_eq!(
        repo.git(["for-each-ref", &format!("refs/baton/runs/{id}/")]),
        ""
    );
    let doctor = repo.baton(["doctor"]);
    assert_eq!(
        doctor.code, 0,
        "the kept branch of a cleaned run is not a problem: {doctor}"
    );
}

/// When the work is all committed already and no target needed a reason, `finish` still commits
/// (an empty commit) so that the branch names its plan: `verify --require-plans` on the branch
/// then checks it, where it would otherwise check nothing.
#[test]
fn finish_names_the_plan_when_nothing_is_left_to_commit() {
    let repo = standard_repo(&[]);
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    let worktree = repo.path(&format!(".baton/worktrees/{id}"));
    repo.git_in(&worktree, ["add", "-A"]);
    repo.git_in(&worktree, ["commit", "-q", "-m", "the agent's own commit"]);
    let tip = repo.git(["rev-parse", &format!("baton/{id}")]);

    let finish = repo.baton(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    assert!(
        finish
            .stdout
            .contains("(0 unchanged reason(s) as trailers)"),
        "{finish}"
    );
    let parent = repo.git(["rev-parse", &format!("baton/{id}^")]);
    assert_eq!(parent, tip, "one commit on top of the agent's");
    let changed = repo.git([
        "diff",
        "--name-only",
        &format!("baton/{id}^"),
        &format!("baton/{id}"),
    ]);
    assert_eq!(changed, "", "the finish commit changes no file");

    let gate = repo
        .baton(format!("verify --base main --head baton/{id} --require-plans --json").split(' '));
    assert_eq!(gate.code, 0, "{gate}");
    assert_eq!(gate.json()["plans"][0]["path"], "plans/fix.md", "{gate}");
}

/// `clean` refuses an unfinished run unless forced, since its worktree may hold the only copy.
#[test]
fn clean_refuses_an_unfinished_run_without_force() {
    let repo = standard_repo(&[]);
    let run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let id = run.run_id();
    let refused = repo.baton(["clean", &id]);
    assert_eq!(refused.code, 2, "{refused}");
    assert!(refused.stderr.contains("not finished"), "{refused}");
    assert!(run_dir(&repo, &id).exists());
    let forced = repo.baton(["clean", "--force", &id]);
    assert_eq!(forced.code, 0, "{forced}");
    assert!(!repo.path(&format!(".baton/worktrees/{id}")).exists());
    assert_eq!(
        repo.baton(["list"]).stdout.trim(),
        "no runs yet; start one with `git baton run <PLAN>`"
    );
}
