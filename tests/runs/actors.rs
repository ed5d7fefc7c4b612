//! What an actor gets: the `BATON_*` environment, the prompt, and prompt templates.

use super::*;

#[test]
fn actors_get_the_baton_environment_and_a_resume_prompt() {
    let scratch_dir = scratch();
    let dump = outside(&scratch_dir, "env-{stage}-{attempt}.txt");
    let cwd = outside(&scratch_dir, "cwd.txt");
    let first = Actor::agent("first")
        .verbs(&["env", dump.to_str().unwrap()])
        .edit("docs/a.md", "a")
        .exit("1");
    let second = Actor::shell(
        "second",
        &format!(
            "pwd > {cwd} && exec {AGENT} env {dump} edit docs/b.md b edit docs/c.md c",
            cwd = cwd.display(),
            dump = dump.display(),
        ),
    );
    let repo = repo_running(&[first, second], "");
    let base = base(&repo);
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let resumed = repo.baton(["resume", &id, "--actor", "executor=second"]);
    assert_eq!(resumed.code, 0, "{resumed}");

    let out = scratch_dir.path();
    let show = |name: &str| {
        with_base(
            &text(&out.join(name)).replace(&repo.tmp().display().to_string(), "$TMP"),
            &base,
        )
    };
    let fresh = show("env-executor-1.txt");
    assert_snapshot!(fresh, @r"
        BATON_ATTEMPT=1
        BATON_BASE=<BASE>
        BATON_EVIDENCE_FILE=$TMP/repo/.git/baton/runs/1mnbe80fdk/attempts/executor-1/evidence.json
        BATON_PLAN_FILE=$TMP/repo/.git/baton/runs/1mnbe80fdk/plan.md
        BATON_PROMPT_FILE=$TMP/repo/.git/baton/runs/1mnbe80fdk/attempts/executor-1/prompt.md
        BATON_RESUMED=0
        BATON_RUN_ID=1mnbe80fdk
        BATON_STAGE=executor
        BATON_WORKTREE=$TMP/repo/.baton/worktrees/1mnbe80fdk
        ");
    let resumed = fresh
        .replace("BATON_ATTEMPT=1", "BATON_ATTEMPT=2")
        .replace("/executor-1/", "/executor-2/")
        .replace("BATON_RESUMED=0", "BATON_RESUMED=1");
    assert_eq!(show("env-executor-2.txt"), resumed);
    let state = status(&repo, &id);
    assert_eq!(
        Path::new(text(&cwd).trim()),
        worktree_of(&repo, &state),
        "the actor runs in the worktree"
    );

    let dir = run_dir(&repo, &id);
    let first_prompt = text(&dir.join("attempts/executor-1/prompt.md"));
    assert!(first_prompt.contains("State the new grading rule in each of them."));
    for target in ["docs/a.md", "docs/b.md", "docs/c.md"] {
        assert!(
            first_prompt.contains(&format!("- `{target}`")),
            "{first_prompt}"
        );
    }
    assert!(!first_prompt.contains("resumed"), "{first_prompt}");
    let resumed_prompt = text(&dir.join("attempts/executor-2/prompt.md"));
    assert_snapshot!(with_base(&resumed_prompt, &base), @r#"
        # Fix the grading documents — stage `executor`

        ## This is a resumed attempt — the work may be partly done

        The previous attempt (#1, actor `first`, started 2026-01-01T00:00:03Z) ended early: failed. Its changes are still in this worktree. Do not assume the work is finished because some files were already edited: partial changes are not completion.

        Paths already changed against the base commit:

        - `docs/a.md`

        Targets with no change yet:

        - `docs/b.md`
        - `docs/c.md`

        Re-check every target against the plan. Finish what is missing. For each target you leave unchanged, record the specific reason (below).

        ## The plan

        # Fix the three grading documents

        State the new grading rule in each of them.

        ## Targets

        The work must change each of these paths, or say why it needs no change:

        - `docs/a.md`
        - `docs/b.md`
        - `docs/c.md`

        ## Recording targets that need no change

        Targets you changed need no record: the diff shows them. For each target you leave unchanged, give a specific reason (at least a few words that a reviewer can check; "n/a", "done" or "no change" are rejected). Run, in this worktree:

        ```sh
        git baton unchanged docs/b.md "already states the new rule in section 3"
        ```

        It refuses at once a target the plan does not have, a reason that is too vague, or a second reason for one target. `git baton check` prints what the coverage gate will say when you finish (it exits 1 while a target is uncovered): run it before you stop.

        If you cannot run commands, write JSON to the file named by the environment variable `BATON_EVIDENCE_FILE` instead. You may also report usage there.

        ```json
        {
          "target_coverage": [
            {"target": "docs/b.md", "status": "unchanged", "reason": "already states the new rule in section 3"}
          ],
          "usage": {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, "model": "…", "provider": "…"}
        }
        ```
        "#);
}

/// `prompts.fresh`/`prompts.resume` replace the built-in layout; their placeholders are filled
/// from the same sections, and an unknown placeholder is a located error before anything runs.
#[test]
fn prompt_templates_from_the_configuration() {
    let out = scratch();
    let copy = outside(&out, "prompt.md");
    let copier = Actor::shell(
        "copier",
        &format!("cp \"$BATON_PROMPT_FILE\" '{}'", copy.display()),
    );
    let tail = pipeline_with("copier", "prompts:\n  fresh: prompts/fresh.md\n");
    let repo = TestRepo::with()
        .files(&[
            ("docs/a.md", "# A\n"),
            ("docs/b.md", "# B\n"),
            ("docs/c.md", "# C\n"),
        ])
        .file("plans/fix.md", PLAN)
        .file(
            "prompts/fresh.md",
            "CUSTOM for {{stage}} of {{run_id}}\n{{targets}}{{evidence}}",
        )
        .config(&config(&[copier, writer()], &tail))
        .commit();
    let run = repo.baton(["run", "plans/fix.md"]);
    let id = run.run_id();
    let prompt = text(&copy);
    assert!(
        prompt.starts_with(&format!("CUSTOM for executor of {id}\n")),
        "{prompt}"
    );
    assert!(prompt.contains("- `docs/c.md`"), "{prompt}");
    assert!(prompt.contains("BATON_EVIDENCE_FILE"), "{prompt}");
    assert!(
        !prompt.contains("## The plan"),
        "the built-in layout is replaced:\n{prompt}"
    );

    repo.write("prompts/fresh.md", "line one\n  {{plna}}\n");
    let bad = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(bad.code, 2, "{bad}");
    assert!(
        bad.stderr.starts_with(
            "error: prompts/fresh.md:2:3: unknown placeholder `{{plna}}` in prompt template"
        ),
        "{bad}"
    );
}
