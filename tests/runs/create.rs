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
    let mut shown_all = String::new();
    for step in ["snapshot", "branch", "worktree", "state", "publish"] {
        let run = repo.baton_env(
            &repo.root,
            ["run", "plans/fix.md"],
            &[("GIT_BATON_FAIL_AT", OsStr::new(step))],
        );
        assert_eq!(run.code, 2, "{step}: {run}");
        shown_all.push_str(&format!("== {step}\n{run}"));
        assert_nothing_created(&repo, step);
        let list = repo.baton(["list"]);
        assert_eq!(
            list.stdout, "no runs yet; start one with `git baton run <PLAN>`\n",
            "{step}"
        );
    }
    assert_snapshot!(shown_all, @r"
    == snapshot
    exit: 2
    --- stderr
    error: injected failure at step `snapshot` (GIT_BATON_FAIL_AT)
    == branch
    exit: 2
    --- stderr
    error: injected failure at step `branch` (GIT_BATON_FAIL_AT)
    == worktree
    exit: 2
    --- stderr
    error: injected failure at step `worktree` (GIT_BATON_FAIL_AT)
    == state
    exit: 2
    --- stderr
    error: injected failure at step `state` (GIT_BATON_FAIL_AT)
    == publish
    exit: 2
    --- stderr
    error: injected failure at step `publish` (GIT_BATON_FAIL_AT)
    ");
    // And the transaction still works afterwards.
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
}

/// Bad configuration, bad plans and bad flags: one located `error:` line (plus hints), exit 2,
/// and nothing created.
#[test]
fn bad_config_plans_and_flags_create_nothing() {
    let worker_writer = format!("actors:\n{}{}", worker(), writer());
    let cases: Vec<(&str, String, String, Vec<&str>)> = vec![
        (
            "unknown actor in the pipeline",
            format!(
                "{worker_writer}pipeline:\n  - {{ stage: executor, actor: wrker, gate: coverage }}\n"
            ),
            PLAN.into(),
            vec![],
        ),
        (
            "unknown key",
            format!("{worker_writer}{PIPELINE}pipline: []\n"),
            PLAN.into(),
            vec![],
        ),
        ("no pipeline", worker_writer.clone(), PLAN.into(), vec![]),
        (
            "plan with an unknown key",
            format!("{worker_writer}{PIPELINE}"),
            "---\ntitle: x\ntarget:\n  - docs/a.md\n---\nDo it.\n".into(),
            vec![],
        ),
        (
            "plan with a target outside the repository",
            format!("{worker_writer}{PIPELINE}"),
            "---\ntargets:\n  - docs/a.md\n  - ../elsewhere.md\n---\nDo it.\n".into(),
            vec![],
        ),
        (
            "--actor naming an unknown stage",
            format!("{worker_writer}{PIPELINE}"),
            PLAN.into(),
            vec!["--actor", "review=worker"],
        ),
        (
            "--actor naming an unknown actor",
            format!("{worker_writer}{PIPELINE}"),
            PLAN.into(),
            vec!["--actor", "executor=ghost"],
        ),
        (
            "--actor without =",
            format!("{worker_writer}{PIPELINE}"),
            PLAN.into(),
            vec!["--actor", "executor"],
        ),
        (
            "--stop-after naming an unknown stage",
            format!("{worker_writer}{PIPELINE}"),
            PLAN.into(),
            vec!["--stop-after", "review"],
        ),
        (
            "an unknown base",
            format!("{worker_writer}{PIPELINE}"),
            PLAN.into(),
            vec!["--base", "no-such-rev"],
        ),
    ];
    let mut all = String::new();
    for (name, yml, plan, flags) in cases {
        let repo = TestRepo::new();
        repo.write("docs/a.md", "a\n");
        repo.write("plans/fix.md", &plan);
        repo.write(".baton.yml", &yml);
        repo.commit_all("base");
        let mut args = vec!["run", "plans/fix.md"];
        args.extend(flags);
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
        error: .baton.yml:9:1: unknown field `pipline`, expected one of plans_dir, actors, pipeline, coverage, worktree_root, prompts, require_targets
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
