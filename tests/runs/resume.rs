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
    let done_id = done.run_id();
    let again = repo.baton(["resume", &done_id]);
    assert_snapshot!(shown(&again, &base), @r"
        exit: 2
        --- stderr
        run 1mnbe80fdk
        error: run 1mnbe80fdk is in review: there is nothing to resume
        hint: see `git baton status 1mnbe80fdk`
        ");

    // An unknown run.
    let unknown = repo.baton(["resume", "zzzz"]);
    assert_snapshot!(shown(&unknown, &base), @r#"
        exit: 2
        --- stderr
        error: unknown run `zzzz`
        hint: see the runs with `git baton list`
        "#);

    // --actor for a stage other than the one being resumed.
    let paused = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let paused_id = paused.run_id();
    let wrong = repo.baton(["resume", &paused_id, "--actor", "executor=lazy"]);
    assert_snapshot!(shown(&wrong, &base), @r"
        exit: 2
        --- stderr
        run 1mnbrsgdz3
        error: --actor names stage `executor`, but the stage to resume is `reporter`
        hint: the RunState's pipeline is authoritative; only the actor of the stage being resumed may change
        ");
    let ghost = repo.baton(["resume", &paused_id, "--actor", "reporter=ghost"]);
    assert_snapshot!(shown(&ghost, &base), @r"
        exit: 2
        --- stderr
        run 1mnbrsgdz3
        error: --actor names actor `ghost`, which is not configured
        hint: configured actors: failing, lazy, worker, writer
        ");
    assert_eq!(status(&repo, &paused_id)["status"], "paused", "untouched");

    // The worktree deleted by hand.
    let failed = repo.baton(["run", "plans/fix.md", "--actor", "executor=failing"]);
    let failed_id = failed.run_id();
    assert_eq!(failed.code, 1, "{failed}");
    let worktree = repo.path(&format!(".baton/worktrees/{failed_id}"));
    std::fs::remove_dir_all(&worktree).unwrap();
    let gone = repo.baton(["resume", &failed_id]);
    assert_snapshot!(shown(&gone, &base), @r"
        exit: 2
        --- stderr
        run 1mnc6vgqe3
        error: stale worktree mapping: run 1mnc6vgqe3: its worktree $TMP/repo/.baton/worktrees/1mnc6vgqe3 does not exist
        hint: `git baton resume 1mnc6vgqe3 --recreate-worktree` rebuilds it from branch baton/1mnc6vgqe3 and the last attempt's snapshot
        ");
    let state = status(&repo, &failed_id);
    assert_eq!(state["status"], "failed", "untouched");
    assert_eq!(attempts(&state, "executor").len(), 1, "no attempt started");

    // The worktree switched to another branch.
    let switched_run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let switched_id = switched_run.run_id();
    let worktree = repo.path(&format!(".baton/worktrees/{switched_id}"));
    repo.git_in(&worktree, ["switch", "-q", "-c", "elsewhere"]);
    let switched = repo.baton(["resume", &switched_id]);
    assert_snapshot!(shown(&switched, &base), @r"
        exit: 2
        --- stderr
        run 1mnchd0ayb
        error: stale worktree mapping: run 1mnchd0ayb: its worktree $TMP/repo/.baton/worktrees/1mnchd0ayb is on branch elsewhere instead of baton/1mnchd0ayb
        hint: put it back on the run's branch with `git -C $TMP/repo/.baton/worktrees/1mnchd0ayb switch baton/1mnchd0ayb`
        ");
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
    let command = repo.unmask(
        hint.split('`')
            .find(|part| part.starts_with("git "))
            .unwrap_or_else(|| panic!("the hint proposes no git command:\n{refused}")),
    );
    let args: Vec<&str> = command.split_whitespace().skip(1).collect();
    if args.first() == Some(&"baton") {
        return repo.baton(&args[1..]);
    }
    Run::new(repo.git_output(&repo.root, &args), &[])
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
    let id = run.run_id();
    std::fs::remove_dir_all(repo.path(&format!(".baton/worktrees/{id}"))).unwrap();
    hint_repairs(&repo, &id);
}

/// A worktree switched to another branch: the hint says how to put it back.
#[test]
fn the_hint_for_a_switched_worktree_repairs_it() {
    let repo = standard_repo(&[]);
    let run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let id = run.run_id();
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
    let (id, _) = repo.run_plan("plans/fix.md", 1);
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

/// A run recorded by git-baton with schema version 1 (testdata/state/v1/rate_limited.json,
/// written by the last version-1 release for this very scenario) resumes, and the resume saves
/// it in the current version (3). The file's ids and paths are moved onto a run of this repository first: a
/// rate-limited run made here, whose worktree, branch and snapshot the version-1 file then names.
#[test]
fn a_version_1_run_resumes_and_is_saved_in_the_current_version() {
    let limited = Actor::agent("limited")
        .edit("docs/a.md", "rule: grade A")
        .evidence(r#"{"usage": {"input_tokens": 800, "output_tokens": 90, "cost_usd": 0.1}}"#)
        .warn("usage limit reached")
        .exit("75")
        .set("rate_limit: { exit_codes: [75] }");
    let finisher = Actor::agent("finisher")
        .edit("docs/b.md", "rule: grade B")
        .evidence(
            r#"{"target_coverage": [{"target": "docs/c.md", "status": "unchanged", "reason": "already states the new grading rule in section 3"}]}"#,
        );
    let repo = repo_running(&[limited, finisher], "");
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let made_here = status(&repo, &id);
    let snapshot = attempts(&made_here, "executor")[0]["snapshot"]
        .as_str()
        .unwrap()
        .to_string();

    let v1 = include_str!("../../testdata/state/v1/rate_limited.json")
        .replace("1ngvbzkqq5", &id)
        .replace("4a01a091e585d1cd23acfa07fb037ef4ace88459", &base(&repo))
        .replace("bc7e692f367d1bc74b27367c26904e84403d4cbf", &snapshot)
        .replace("$TMP", &repo.tmp().display().to_string());
    let path = run_dir(&repo, &id).join("state.json");
    std::fs::write(&path, &v1).unwrap();
    let shown_v1 = status(&repo, &id);
    assert_eq!(
        shown_v1["schema_version"], 3,
        "shown as the current version"
    );
    assert_eq!(shown_v1["status"], "rate_limited");
    assert_eq!(shown_v1["error"]["kind"], "rate_limited");
    assert_eq!(shown_v1["usage"]["input_tokens"], 800);
    assert_eq!(
        text(&path),
        v1,
        "reading a version-1 file does not rewrite it"
    );

    let resumed = repo.baton(["resume", &id, "--actor", "executor=finisher"]);
    assert_eq!(resumed.code, 0, "{resumed}");
    let saved: Value = serde_json::from_str(&text(&path)).unwrap();
    assert_eq!(saved["schema_version"], 3);
    assert!(
        saved.get("usage").is_none(),
        "versions 2 and 3 store no totals"
    );
    assert_eq!(saved["stages"][0]["configured_actor"], "limited");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "review");
    assert_eq!(
        attempt_field(&state, "executor", "outcome"),
        ["rate_limited", "succeeded"]
    );
    assert_eq!(attempt_field(&state, "executor", "resumed"), [false, true]);
    assert_eq!(
        attempt_field(&state, "executor", "started_at")[0],
        "2026-11-30T17:18:43.723Z",
        "the version-1 attempt is kept as it was recorded"
    );
    assert_eq!(state["usage"]["input_tokens"], 800);
    assert_eq!(
        coverage_rows(&state),
        [
            "docs/a.md changed",
            "docs/b.md changed",
            "docs/c.md unchanged"
        ]
    );
}
