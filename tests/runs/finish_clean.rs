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
    let (id, _) = repo.run_plan("plans/fix.md", 0);
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
    let (id, _) = repo.run_plan("plans/fix.md", 0);
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

/// No control character (but a tab) passes the gate in a reason, wherever the reason comes from,
/// and none in any text of a run can make `finish` write a message git refuses: a NUL in a
/// reason used to pass the gate and then fail every `finish` with exit 2, and an ESC or a BEL
/// went raw into the `Baton-Unchanged` trailer.
#[test]
fn control_characters_never_pass_the_gate_nor_break_finish() {
    // The evidence file: the reviewer's reproduction blocks, naming the entry and the character.
    let nul = r#"{"target_coverage":[{"target":"docs/b.md","status":"unchanged","reason":"nul \u0000 and a long enough reason for this"}]}"#;
    let bell = r#"{"target_coverage":[{"target":"docs/b.md","status":"unchanged","reason":"a bell \u0007 and an \u001b[2J escape in a reason"}]}"#;
    let tab = r#"{"target_coverage":[{"target":"docs/b.md","status":"unchanged","reason":"the rule\tis already stated in section 3"}]}"#;
    let with = |name: &str, evidence: &str| {
        Actor::agent(name)
            .edit("docs/a.md", "rule: grade A")
            .edit("docs/c.md", "rule: grade C")
            .evidence(evidence)
    };
    let title = "Fix \\0 the \\e[2J grading\\a documents";
    let plan = PLAN.replace("Fix the grading documents", &format!("\"{title}\""));
    let repo = TestRepo::with()
        .old_rule_docs()
        .file("plans/fix.md", &plan)
        .config(&config(
            &[
                with("nul", nul),
                with("bell", bell),
                with("tab", tab),
                writer(),
            ],
            &pipeline_with("nul", ""),
        ))
        .commit();
    let (id, run) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "blocked", "{run}");
    let problems = state["coverage"]["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{state:#}");
    assert_eq!(problems[0]["kind"], "control_character");
    assert_eq!(problems[0]["source"]["index"], 0);
    assert_eq!(
        problems[0]["message"],
        "reason for target \"docs/b.md\" holds a control character at character 5 (U+0000): write the reason as plain text on one line"
    );
    assert!(
        run.stderr.contains("character 5 (U+0000)") && !run.stderr.contains('\0'),
        "{run}"
    );
    let bell_run = repo.baton(["resume", &id, "--actor", "executor=bell"]);
    assert_eq!(bell_run.code, 1, "{bell_run}");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "blocked");
    assert_eq!(
        state["coverage"]["problems"][0]["message"],
        "reason for target \"docs/b.md\" holds a control character at character 8 (U+0007): write the reason as plain text on one line"
    );

    // A tab is whitespace: it passes, and `finish` commits a message git accepts although the
    // plan's title holds a NUL, an ESC and a BEL.
    let tab_run = repo.baton(["resume", &id, "--actor", "executor=tab"]);
    assert_eq!(tab_run.code, 0, "{tab_run}");
    assert_eq!(status(&repo, &id)["status"], "review");
    let finish = repo.baton(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    let message = repo.git(["log", "-1", "--format=%B", &format!("baton/{id}")]);
    assert!(
        message.starts_with("Fix \\u{0} the \\u{1b}[2J grading\\u{7} documents\n"),
        "{message}"
    );
    assert!(
        message.contains("Baton-Unchanged: docs/b.md: the rule\tis already stated in section 3\n"),
        "{message}"
    );
    assert!(
        !message
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{message:?}"
    );
    let gate =
        repo.baton(format!("verify plans/fix.md --base main --head baton/{id} --json").split(' '));
    assert_eq!(gate.code, 0, "{gate}");
    assert_eq!(
        gate.json()["plans"][0]["coverage"]["targets"][1]["reason"],
        "the rule\tis already stated in section 3"
    );
}

/// Work undone in the worktree after review (a target reverted by hand, or by a later stage)
/// is not finished: `finish` judges the gate on the commit it would put on the branch.
#[test]
fn finish_refuses_a_worktree_that_lost_a_target_since_review() {
    let repo = standard_repo(&[]);
    let (id, _) = repo.run_plan("plans/fix.md", 0);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "review");
    let worktree = worktree_of(&repo, &state);
    repo.git_in(&worktree, ["checkout", "HEAD", "--", "docs/b.md"]);

    let finish = repo.baton(["finish", &id]);
    assert_eq!(finish.code, 1, "{finish}");
    assert!(
        finish.stderr.contains(&format!(
            "error: run {id}: the coverage gate of stage executor does not pass on the run's final snapshot: uncovered docs/b.md"
        )),
        "{finish}"
    );
    assert_eq!(status(&repo, &id)["status"], "review");
    let log = repo.git(["log", "--format=%B", &format!("baton/{id}"), "--"]);
    assert!(!log.contains("Baton-Run:"), "{log}");
}

/// `clean --force` removes a run's worktree only when git's registration of it names that
/// directory on the run's branch. A directory that took the place of a worktree removed by hand
/// — a plain one, or another worktree of the repository on a branch of the user's — is left
/// with a warning naming it, and the run is removed all the same.
#[test]
fn clean_force_leaves_a_directory_that_is_not_the_runs_worktree() {
    let repo = standard_repo(&[]);
    for replacement in ["directory", "worktree"] {
        let run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
        let id = run.run_id();
        let worktree = worktree_of(&repo, &status(&repo, &id));
        let path = worktree.to_str().unwrap().to_owned();
        repo.git(["worktree", "remove", "--force", &path]);
        match replacement {
            "directory" => {
                std::fs::create_dir_all(&worktree).unwrap();
            }
            _ => {
                let branch = format!("mine-{id}");
                repo.git(["worktree", "add", "-q", "-b", &branch, &path]);
            }
        }
        std::fs::write(worktree.join("mine.txt"), "the user's own file\n").unwrap();

        let forced = repo.baton(["clean", "--force", &id]);
        assert_eq!(forced.code, 0, "{replacement}: {forced}");
        assert!(forced.stderr.starts_with("warning: left "), "{forced}");
        assert!(
            forced.stderr.contains(&format!(
                "/.baton/worktrees/{id} in place: no worktree registration of this repository names it on branch baton/{id}"
            )),
            "{replacement}: {forced}"
        );
        assert_eq!(text(&worktree.join("mine.txt")), "the user's own file\n");
        assert!(
            !run_dir(&repo, &id).exists(),
            "{replacement}: the run is gone"
        );
    }
    // The run's own worktree still goes, without a warning.
    let run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let id = run.run_id();
    let worktree = worktree_of(&repo, &status(&repo, &id));
    let forced = repo.baton(["clean", "--force", &id]);
    assert_eq!(forced.code, 0, "{forced}");
    assert!(!forced.stderr.contains("warning:"), "{forced}");
    assert!(!worktree.exists());
}

/// Removing a run's worktree forgets that worktree's registration and no other: a worktree of
/// the user's whose directory is away for a moment (an unmounted disk) keeps its registration,
/// index and HEAD, where a repository-wide `git worktree prune` would have deleted them. A run
/// worktree deleted by hand still loses its stale registration.
#[test]
fn removing_a_run_worktree_forgets_only_its_own_registration() {
    let repo = standard_repo(&[]);
    let kept = repo
        .baton(["run", "plans/fix.md", "--stop-after", "executor"])
        .run_id();
    let by_hand = repo
        .baton(["run", "plans/fix.md", "--stop-after", "executor"])
        .run_id();
    let disk = repo.tmp().join("usb");
    let feature = disk.join("feature");
    repo.git([
        "worktree",
        "add",
        "-q",
        "-b",
        "feature",
        feature.to_str().unwrap(),
    ]);
    std::fs::write(feature.join("new.md"), "staged\n").unwrap();
    repo.git_in(&feature, ["add", "new.md"]);
    let unmounted = repo.tmp().join("usb.unmounted");
    std::fs::rename(&disk, &unmounted).unwrap();
    let by_hand_tree = worktree_of(&repo, &status(&repo, &by_hand));
    std::fs::remove_dir_all(&by_hand_tree).unwrap();

    for id in [&kept, &by_hand] {
        let forced = repo.baton(["clean", "--force", id]);
        assert_eq!(forced.code, 0, "{forced}");
    }
    let list = repo.git(["worktree", "list", "--porcelain"]);
    assert!(!list.contains(&kept) && !list.contains(&by_hand), "{list}");
    std::fs::rename(&unmounted, &disk).unwrap();
    assert_eq!(
        repo.git_in(&feature, ["status", "--porcelain"]).trim(),
        "A  new.md"
    );
}

/// Submodule work in a run's worktree is work: an untracked file inside a submodule, and a
/// commit made in it whose objects live only in the worktree's own git directory
/// (`.git/worktrees/<id>/modules/sub`), even once `finish` recorded the submodule's new commit
/// on the run's branch. `finish` keeps the worktree and names both, `clean` refuses without
/// `--force`, and `doctor --fix` leaves the worktree once its run is gone.
#[test]
fn submodule_work_in_a_run_worktree_is_never_removed() {
    let repo = standard_repo(&[]);
    let inner = repo.tmp().join("inner");
    std::fs::create_dir_all(&inner).unwrap();
    repo.git_in(&inner, ["init", "-q", "-b", "main"]);
    std::fs::write(inner.join("i"), "i\n").unwrap();
    repo.git_in(&inner, ["add", "i"]);
    repo.git_in(&inner, ["commit", "-q", "-m", "i"]);
    repo.add_submodule(&inner, "sub");
    repo.git(["commit", "-q", "-m", "sub"]);
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    let worktree = repo.path(&format!(".baton/worktrees/{id}"));
    repo.git_in(
        &worktree,
        [
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "-q",
            "update",
            "--init",
        ],
    );
    let sub = worktree.join("sub");
    std::fs::write(sub.join("n"), "n\n").unwrap();
    repo.git_in(&sub, ["add", "n"]);
    repo.git_in(&sub, ["commit", "-q", "-m", "subwork"]);
    let commit = repo.git_in(&sub, ["rev-parse", "HEAD"]).trim().to_owned();
    std::fs::write(sub.join("notes.txt"), "notes\n").unwrap();

    let finish = repo.baton(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    assert!(finish.stdout.contains("kept the worktree"), "{finish}");
    assert!(
        finish.stdout.contains("sub (submodule: untracked content)"),
        "{finish}"
    );
    assert!(
        finish
            .stdout
            .contains(&format!("sub (submodule: commit {commit} ")),
        "{finish}"
    );
    let clean = repo.baton(["clean", &id]);
    assert_eq!(clean.code, 2, "{clean}");
    assert!(clean.stderr.starts_with("error: "), "{clean}");
    assert!(clean.stderr.contains("sub (submodule: "), "{clean}");
    assert!(run_dir(&repo, &id).exists());

    std::fs::remove_dir_all(run_dir(&repo, &id)).unwrap();
    let fixed = repo.baton(["doctor", "--fix"]);
    assert!(!fixed.stdout.contains("fixed orphaned_worktree"), "{fixed}");
    assert_eq!(text(&sub.join("notes.txt")), "notes\n");
    assert_eq!(repo.git_in(&sub, ["rev-parse", "HEAD"]).trim(), commit);
}

/// A plan kept outside the repository gets no `Baton-Plan` (docs/plan-format.md), and the body
/// line `finish` still writes for the reader (`… for plan ../<dir>/fix.md.`) names no plan for
/// `verify` either: the run branch's pull request is verified (here: no plans, exit 0), never
/// refused because the line names a path outside the repository (exit 2).
#[test]
fn a_finish_of_a_plan_outside_the_repository_names_no_plan_to_verify() {
    let scratch = scratch();
    let repo = standard_repo(&[]);
    let plan = outside(&scratch, "fix.md");
    std::fs::write(&plan, PLAN).unwrap();
    // The plan as the repository's root reaches it: `../…/fix.md`.
    let (root, file) = (
        repo.root.canonicalize().unwrap(),
        plan.canonicalize().unwrap(),
    );
    let common = root
        .components()
        .zip(file.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut relative = "../".repeat(root.components().count() - common);
    let rest: Vec<String> = file
        .components()
        .skip(common)
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    relative.push_str(&rest.join("/"));
    assert!(repo.root.join(&relative).exists(), "{relative}");
    let (id, _) = repo.run_plan(&relative, 0);
    let finish = repo.baton(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    let message = repo.git(["log", "-1", "--format=%B", &format!("baton/{id}")]);
    assert!(
        message.contains(&format!("Work of git-baton run {id} for plan {relative}.")),
        "{message}"
    );
    assert!(message.contains(&format!("Baton-Run: {id}")), "{message}");
    assert!(!message.contains("Baton-Plan"), "{message}");

    let head = format!("baton/{id}");
    let gate = repo.baton(["verify", "--base", "main", "--head", &head, "--json"]);
    assert_eq!(gate.code, 0, "{gate}");
    assert_eq!(gate.json()["plans"], serde_json::json!([]), "{gate}");
    // Named on the command line, it is checked as any plan argument is.
    let named = repo.baton([
        "verify",
        &plan.to_string_lossy(),
        "--base",
        "main",
        "--head",
        &head,
    ]);
    assert_ne!(named.code, 2, "{named}");
}
