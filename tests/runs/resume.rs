//! `resume` refuses what it cannot do, and the hints of its refusals repair what they name.

use super::*;

#[test]
fn resume_refusals() {
    let failing = Actor::agent("failing").edit("docs/a.md", "a").exit("1");
    let lazy = Actor::agent("lazy").say("nothing");
    let repo = standard_repo(&[failing, lazy]);
    let base = base(&repo);

    // A run in review has nothing to resume.
    let done = repo.baton(["run", "plans/fix.md"]);
    let done_id = run_id(&done);
    let again = repo.baton(["resume", &done_id]);
    assert_snapshot!(shown(&again, &done_id, &base), @r#"
        exit: 2
        --- stderr
        run <ID>
        error: run <ID> is in review: there is nothing to resume
        hint: see `git baton status <ID>`
        "#);

    // An unknown run.
    let unknown = repo.baton(["resume", "zzzz"]);
    assert_snapshot!(shown(&unknown, "", &base), @r#"
        exit: 2
        --- stderr
        error: unknown run `zzzz`
        hint: see the runs with `git baton list`
        "#);

    // --actor for a stage other than the one being resumed.
    let paused = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let paused_id = run_id(&paused);
    let wrong = repo.baton(["resume", &paused_id, "--actor", "executor=lazy"]);
    assert_snapshot!(shown(&wrong, &paused_id, &base), @r#"
        exit: 2
        --- stderr
        run <ID>
        error: --actor names stage `executor`, but the stage to resume is `reporter`
        hint: the RunState's pipeline is authoritative; only the actor of the stage being resumed may change
        "#);
    let ghost = repo.baton(["resume", &paused_id, "--actor", "reporter=ghost"]);
    assert_snapshot!(shown(&ghost, &paused_id, &base), @r#"
        exit: 2
        --- stderr
        run <ID>
        error: --actor names actor `ghost`, which is not configured
        hint: configured actors: failing, lazy, worker, writer
        "#);
    assert_eq!(status(&repo, &paused_id)["status"], "paused", "untouched");

    // The worktree deleted by hand.
    let failed = repo.baton(["run", "plans/fix.md", "--actor", "executor=failing"]);
    let failed_id = run_id(&failed);
    assert_eq!(failed.code, 1, "{failed}");
    let worktree = repo.path(&format!(".baton/worktrees/{failed_id}"));
    std::fs::remove_dir_all(&worktree).unwrap();
    let gone = repo.baton(["resume", &failed_id]);
    assert_snapshot!(shown(&gone, &failed_id, &base), @r#"
        exit: 2
        --- stderr
        run <ID>
        error: stale worktree mapping: run <ID>: its worktree $TMP/repo/.baton/worktrees/<ID> does not exist
        hint: `git baton resume <ID> --recreate-worktree` rebuilds it from branch baton/<ID> and the last attempt's snapshot
        "#);
    let state = status(&repo, &failed_id);
    assert_eq!(state["status"], "failed", "untouched");
    assert_eq!(attempts(&state, "executor").len(), 1, "no attempt started");

    // The worktree switched to another branch.
    let switched_run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let switched_id = run_id(&switched_run);
    let worktree = repo.path(&format!(".baton/worktrees/{switched_id}"));
    repo.git_in(&worktree, ["switch", "-q", "-c", "elsewhere"]);
    let switched = repo.baton(["resume", &switched_id]);
    assert_snapshot!(shown(&switched, &switched_id, &base), @r#"
        exit: 2
        --- stderr
        run <ID>
        error: stale worktree mapping: run <ID>: its worktree $TMP/repo/.baton/worktrees/<ID> is on branch elsewhere instead of baton/<ID>
        hint: put it back on the run's branch with `git -C $TMP/repo/.baton/worktrees/<ID> switch baton/<ID>`
        "#);
    assert_eq!(status(&repo, &switched_id)["status"], "paused");
}

/// Runs the command that the stale-mapping error's hint proposes (the first `git …` in
/// backticks: `git baton …` or plain git) in the main worktree, as a user would paste it.
fn follow_the_hint(repo: &TestRepo, refused: &Run) -> Run {
    let hint = refused
        .stderr
        .lines()
        .find(|l| l.starts_with("hint: "))
        .unwrap_or_else(|| panic!("no hint:\n{refused}"));
    let command = hint
        .split('`')
        .find(|part| part.starts_with("git "))
        .unwrap_or_else(|| panic!("the hint proposes no git command:\n{refused}"))
        .replace("$TMP", &repo.tmp().display().to_string());
    let args: Vec<&str> = command.split_whitespace().skip(1).collect();
    if args.first() == Some(&"baton") {
        return repo.baton(&args[1..]);
    }
    let out = repo.git_output(&repo.root, &args);
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A stale mapping is diagnosed, and the hint's next step repairs it: after it, the run
/// resumes to review with the work of its first stage intact.
fn hint_repairs(repo: &TestRepo, id: &str) {
    let refused = repo.baton(["resume", id]);
    assert_eq!(refused.code, 2, "{refused}");
    assert!(
        refused.stderr.contains("error: stale worktree mapping"),
        "{refused}"
    );
    let followed = follow_the_hint(repo, &refused);
    assert!(
        followed.code == 0,
        "the hinted command fails:\n{followed}\nafter:\n{refused}"
    );
    if status(repo, id)["status"] != "review" {
        let resumed = repo.baton(["resume", id]);
        assert_eq!(resumed.code, 0, "{resumed}");
    }
    let state = status(repo, id);
    assert_eq!(state["status"], "review");
    let worktree = worktree_of(repo, &state);
    assert!(text(&worktree.join("docs/a.md")).contains("rule: grade A"));
}

/// A worktree deleted by hand: the hint says how to bring it back.
#[test]
fn the_hint_for_a_deleted_worktree_repairs_it() {
    let repo = standard_repo(&[]);
    let run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let id = run_id(&run);
    std::fs::remove_dir_all(repo.path(&format!(".baton/worktrees/{id}"))).unwrap();
    hint_repairs(&repo, &id);
}

/// A worktree switched to another branch: the hint says how to put it back.
#[test]
fn the_hint_for_a_switched_worktree_repairs_it() {
    let repo = standard_repo(&[]);
    let run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let id = run_id(&run);
    let worktree = repo.path(&format!(".baton/worktrees/{id}"));
    repo.git_in(&worktree, ["switch", "-q", "-c", "elsewhere"]);
    hint_repairs(&repo, &id);
}

/// A lost worktree: resume refuses with a stale-mapping diagnostic, doctor names the fix, and
/// `--recreate-worktree` brings back the uncommitted work of the last attempt from its snapshot.
#[test]
fn recreate_worktree_restores_uncommitted_work_from_the_snapshot() {
    let half = Actor::agent("half")
        .edit("docs/a.md", "rule: grade A")
        .exit("75")
        .set("rate_limit: { exit_codes: [75] }");
    let repo = repo_running(&[half, worker()], "");
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 1, "{run}");
    let id = run_id(&run);
    let worktree = repo.path(&format!(".baton/worktrees/{id}"));
    assert!(text(&worktree.join("docs/a.md")).contains("rule: grade A"));
    std::fs::remove_dir_all(&worktree).unwrap();

    let refused = repo.baton(["resume", &id]);
    assert_eq!(refused.code, 2, "{refused}");
    assert!(
        refused.stderr.contains("stale worktree mapping"),
        "{refused}"
    );
    let doctor = repo.baton(["doctor"]);
    assert_eq!(doctor.code, 1, "{doctor}");
    assert!(
        doctor
            .stdout
            .contains(&format!("git baton resume {id} --recreate-worktree")),
        "{doctor}"
    );

    let diff_before = repo.baton(["diff", &id, "--name-only"]);
    assert!(diff_before.stdout.contains("docs/a.md"), "{diff_before}");
    let resumed =
        repo.baton(format!("resume {id} --recreate-worktree --actor executor=worker").split(' '));
    assert_eq!(resumed.code, 0, "{resumed}");
    // The first attempt's edit came back from the snapshot, and the worker appended to it.
    let a = text(&worktree.join("docs/a.md"));
    assert_eq!(a.matches("rule: grade A").count(), 2, "{a}");
    assert_eq!(status(&repo, &id)["status"], "review");
}
