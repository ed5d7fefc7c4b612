//! Creation is a transaction, and bad input creates nothing.

use super::*;

/// Nothing of a run exists: no branch, no worktree, no run directory (not even a hidden one),
/// and `list` shows no run.
fn assert_nothing_created(repo: &TestRepo, context: &str) {
    assert_eq!(branches(repo), "", "{context}: a baton branch is left");
    assert_eq!(
        worktrees(repo),
        [repo.root.display().to_string()],
        "{context}: a worktree is left registered"
    );
    let left: Vec<String> = match std::fs::read_dir(repo.path(".baton/worktrees")) {
        Ok(entries) => entries
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect(),
        Err(_) => Vec::new(),
    };
    assert!(
        left.is_empty(),
        "{context}: worktree directories left: {left:?}"
    );
    assert!(
        run_entries(repo).is_empty(),
        "{context}: run directories left: {:?}",
        run_entries(repo)
    );
    assert_eq!(repo.git(["status", "--porcelain"]), "", "{context}");
}

#[test]
fn a_failure_at_any_creation_step_rolls_everything_back() {
    let repo = standard_repo(&[]);
    for step in ["snapshot", "branch", "worktree", "state", "publish"] {
        let run = repo.baton_env(
            &repo.root,
            ["run", "plans/fix.md"],
            &[("GIT_BATON_FAIL_AT", OsStr::new(step))],
        );
        assert_eq!(
            run.to_string(),
            format!(
                "exit: 2\n--- stderr\nerror: injected failure at step `{step}` (GIT_BATON_FAIL_AT)\n"
            )
        );
        assert_nothing_created(&repo, step);
        let list = repo.baton(["list"]);
        assert_eq!(
            list.stdout, "no runs yet; start one with `git baton run <PLAN>`\n",
            "{step}"
        );
    }
    // And the transaction still works afterwards.
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
}

/// Bad configuration, bad plans and bad flags: one located `error:` line (plus hints), exit 2,
/// and nothing created.
#[test]
fn bad_config_plans_and_flags_create_nothing() {
    let actors = config(&[worker(), writer()], "");
    let good = format!("{actors}{PIPELINE}");
    let wrong_actor = "pipeline:\n  - { stage: executor, actor: wrker, gate: coverage }\n";
    let wrong_key = format!("{good}pipline: []\n");
    let wrong_key_plan = "---\ntitle: x\ntarget:\n  - docs/a.md\n---\nDo it.\n";
    let outside_plan = "---\ntargets:\n  - docs/a.md\n  - ../elsewhere.md\n---\nDo it.\n";
    // (what is wrong, .baton.yml, the plan, the flags of `run`)
    #[rustfmt::skip]
    let cases: [(&str, &str, &str, &str); 10] = [
        ("unknown actor in the pipeline", &format!("{actors}{wrong_actor}"), PLAN, ""),
        ("unknown key", &wrong_key, PLAN, ""),
        ("no pipeline", &actors, PLAN, ""),
        ("plan with an unknown key", &good, wrong_key_plan, ""),
        ("plan with a target outside the repository", &good, outside_plan, ""),
        ("--actor naming an unknown stage", &good, PLAN, "--actor review=worker"),
        ("--actor naming an unknown actor", &good, PLAN, "--actor executor=ghost"),
        ("--actor without =", &good, PLAN, "--actor executor"),
        ("--stop-after naming an unknown stage", &good, PLAN, "--stop-after review"),
        ("an unknown base", &good, PLAN, "--base no-such-rev"),
    ];
    let mut all = String::new();
    for (name, yml, plan, flags) in cases {
        let repo = TestRepo::with()
            .named(&["docs/a.md"])
            .file("plans/fix.md", plan)
            .config(yml)
            .commit();
        let mut args = vec!["run", "plans/fix.md"];
        args.extend(flags.split_whitespace());
        let run = repo.baton(&args);
        assert_eq!(run.code, 2, "{name}: {run}");
        assert!(run.stderr.starts_with("error: "), "{name}: {run}");
        assert!(!run.stderr.contains("panicked"), "{name}: {run}");
        all.push_str(&format!("== {name}\n{}\n", run.stderr.trim_end()));
        assert_nothing_created(&repo, name);
    }
    // The AGENT path is in the configuration; it shows in no message.
    assert!(!all.contains(AGENT), "{all}");
    assert_snapshot!(all, @r#"
        == unknown actor in the pipeline
        error: .baton.yml:7:31: unknown actor `wrker` for stage `executor`
        hint: did you mean `worker`?
        == unknown key
        error: .baton.yml:9:1: unknown field `pipline`, expected one of plans_dir, actors, pipeline, coverage, worktree_root, prompts, require_targets, derive_targets, log_limit, lease, sync, remote, checks, protect, notify
        hint: did you mean `pipeline`?
        == no pipeline
        error: no pipeline is configured: .baton.yml has no `pipeline`
        hint: for example:
        hint:
        hint: actors:
        hint:   agent: { command: [my-agent, "{prompt_file}"] }
        hint: pipeline:
        hint:   - { stage: executor, actor: agent, gate: coverage }
        == plan with an unknown key
        error: plans/fix.md:3:1: unknown key `target` in plan frontmatter
        hint: did you mean `targets`?
        == plan with a target outside the repository
        error: plans/fix.md:4:5: target `../elsewhere.md` contains a `..` component
        hint: targets name paths inside the repository, relative to its root
        == --actor naming an unknown stage
        error: --actor names stage `review`, which this run does not have
        hint: the run's stages: executor, reporter
        == --actor naming an unknown actor
        error: --actor names actor `ghost`, which is not configured
        hint: configured actors: worker, writer
        == --actor without =
        error: invalid value 'executor' for '--actor <STAGE=NAME>': expected STAGE=NAME, got `executor`

        For more information, try '--help'.
        == --stop-after naming an unknown stage
        error: --stop-after names stage `review`, which this run does not have
        hint: the run's stages: executor, reporter
        == an unknown base
        error: unknown revision `no-such-rev`
        hint: name a branch, tag or commit that exists here; in CI, fetch it first
        "#);
}

/// A plan whose `stages` names a stage the configured pipeline lacks is bad input in the plan
/// file: like every other plan error (design §3, §8) it must name the plan file, line and
/// column of the offending entry, not just the stage.
#[test]
fn a_plan_stage_missing_from_the_pipeline_is_a_located_error() {
    let repo = repo_with(&config(&[worker(), writer()], PIPELINE));
    repo.write(
        "plans/staged.md",
        "---\ntargets: [docs/a.md]\nstages: [executor, review]\n---\nDo it.\n",
    );
    repo.commit_all("a plan with stages");
    let run = repo.baton(["run", "plans/staged.md"]);
    assert_eq!(run.code, 2, "{run}");
    assert_nothing_created(&repo, "plan stages");
    let first = run.stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("error: plans/staged.md:3:"),
        "the error does not name the plan file and line of `review`:\n{run}"
    );
    assert!(first.contains("`review`"), "{run}");
}

/// A creation killed while git registered the worktree leaves `.git/worktrees/<id>/` with an
/// empty `gitdir` or without `commondir`. Such an entry made every later creation fail; now
/// `doctor` names it and the next run discards it.
#[test]
fn a_half_written_worktree_registration_does_not_block_later_runs() {
    let repo = standard_repo(&[]);
    let registrations = repo.root.join(".git/worktrees");
    for (name, files) in [
        ("0abcdefghj", &[("gitdir", "")][..]),
        ("0abcdefghk", &[("gitdir", "/nowhere/.git\n")][..]),
    ] {
        let dir = registrations.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in files {
            std::fs::write(dir.join(file), text).unwrap();
        }
    }
    let doctor = repo.baton(["doctor"]);
    for (name, why) in [
        ("0abcdefghj", "invalid gitdir file"),
        ("0abcdefghk", "commondir file does not exist"),
    ] {
        assert!(
            doctor
                .stdout
                .contains(&format!("worktrees/{name} is a worktree registration"))
                && doctor.stdout.contains(why),
            "{doctor}"
        );
    }
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(!registrations.join("0abcdefghj").exists());
    assert!(!registrations.join("0abcdefghk").exists());
}

/// Without a committer identity (a fresh container), `run` says so before it writes anything —
/// no branch, no reflog begun, no run — and names the commands that give one.
#[test]
fn a_run_without_a_committer_identity_is_refused_before_anything_is_written() {
    let repo = repo_running(&[Actor::agent("idle")], "");
    let mut cmd = repo.baton_command(&repo.root, &[], ["run", "plans/fix.md"]);
    for var in [
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
    ] {
        cmd.env_remove(var);
    }
    let run = Run::new(cmd.output().unwrap(), &[]);
    assert_eq!(
        run.the_error(2),
        "error: no committer identity: the run's branch and commits are recorded in your name, \
         and neither user.name and user.email nor GIT_COMMITTER_NAME and GIT_COMMITTER_EMAIL are \
         set",
        "{run}"
    );
    assert!(
        run.stderr.contains("hint: git config --global user.name"),
        "{run}"
    );
    assert_nothing_created(&repo, "no identity");
    assert!(!repo.path(".git/logs/refs/heads/baton").exists());
}
