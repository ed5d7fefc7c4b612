//! The gate in a run: the incident design §1 describes, and the coverage rules end to end.

use super::*;

/// Design §1: three documents to fix; the first agent edits one and hits a rate limit; the
/// resumed agent changes nothing and exits 0. git-baton blocks it and names the two documents
/// nobody touched; a diligent agent fixes one and gives a reason for the other, and only then
/// does the run reach review — with the reason in the result.
#[test]
fn the_incident_rate_limit_then_a_lazy_resume_is_blocked() {
    let partial = Actor::agent("partial")
        .edit("docs/a.md", "rule: grade A")
        .warn("You have hit your usage limit.")
        .exit("75")
        .set("rate_limit: { exit_codes: [75] }");
    let lazy = Actor::agent("lazy").say("The documents already state the rule. Done.");
    let reason = "already states the new grading rule in section 3";
    let evidence = format!(
        r#"{{"target_coverage": [{{"target": "docs/c.md", "status": "unchanged", "reason": "{reason}"}}]}}"#
    );
    let diligent = Actor::agent("diligent")
        .edit("docs/b.md", "rule: grade B")
        .evidence(&evidence);
    let out = scratch();
    let reporter_prompt = outside(&out, "reporter-prompt.md");
    let copy = format!("cat \"$BATON_PROMPT_FILE\" > {}", reporter_prompt.display());
    let repo = repo_running(
        &[partial, lazy, diligent, Actor::shell("writer", &copy)],
        "",
    );
    let base = base(&repo);

    let (id, _) = repo.run_plan("plans/fix.md", 1);
    assert_eq!(status(&repo, &id)["status"], "rate_limited");

    let lazy_run = repo.baton(["resume", &id, "--actor", "executor=lazy"]);
    assert_eq!(lazy_run.code, 1, "{lazy_run}");
    assert_snapshot!(shown(&lazy_run, &base), @r"
        exit: 1
        --- stdout
        The documents already state the rule. Done.
        --- stderr
        run 1mnbe80fdk

        run 1mnbe80fdk: blocked
          plan      plans/fix.md (fix) — Fix the grading documents
          base      <BASE> (HEAD)
          branch    baton/1mnbe80fdk
          worktree  $TMP/repo/.baton/worktrees/1mnbe80fdk
          current   executor

          STAGE      STATUS       ACTOR      ATTEMPTS   DURATION       TOKENS      COST
          executor   blocked      lazy              2       2.0s            -         -
            #1 partial rate_limited
            #2 lazy blocked, resumed
          reporter   pending      writer            0          -            -         -

          last error: blocked in stage executor
            coverage gate: 2 of 3 targets uncovered: docs/b.md, docs/c.md

          coverage: failed
            changed    docs/a.md  docs/a.md
            uncovered  docs/b.md  no change and no reason
            uncovered  docs/c.md  no change and no reason

          next: git baton resume 1mnbe80fdk   (the stage re-runs; it must change or give a reason for every uncovered target)
        ");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "blocked");
    assert_eq!(state["error"]["kind"], "blocked");
    assert_eq!(
        state["error"]["message"],
        "coverage gate: 2 of 3 targets uncovered: docs/b.md, docs/c.md"
    );
    assert_eq!(state["coverage"]["passed"], false);
    assert_eq!(
        coverage_rows(&state),
        [
            "docs/a.md changed",
            "docs/b.md uncovered",
            "docs/c.md uncovered"
        ]
    );
    assert!(attempts(&state, "reporter").is_empty(), "never reported");

    let done = repo.baton(["resume", &id, "--actor", "executor=diligent"]);
    assert_eq!(done.code, 0, "{done}");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "review");
    assert_executor_attempts(
        &state,
        &[
            ("partial", "rate_limited"),
            ("lazy", "blocked"),
            ("diligent", "succeeded"),
        ],
    );
    assert_eq!(
        attempt_field(&state, "executor", "resumed"),
        [false, true, true]
    );
    assert_eq!(
        coverage_rows(&state),
        [
            "docs/a.md changed",
            "docs/b.md changed",
            "docs/c.md unchanged"
        ]
    );
    let result: Value =
        serde_json::from_str(&text(&run_dir(&repo, &id).join("result.json"))).unwrap();
    assert_eq!(result["coverage"]["targets"][2]["reason"], reason);
    assert!(text(&run_dir(&repo, &id).join("result.md")).contains(reason));
    // The reviewer's actor sees the reason too.
    let reporter_prompt = text(&reporter_prompt);
    assert!(reporter_prompt.contains(reason), "{reporter_prompt}");

    let human = repo.baton(["status", &id]);
    assert_snapshot!(shown(&human, &base), @r"
        exit: 0
        --- stdout
        run 1mnbe80fdk: review
          plan      plans/fix.md (fix) — Fix the grading documents
          base      <BASE> (HEAD)
          branch    baton/1mnbe80fdk
          worktree  $TMP/repo/.baton/worktrees/1mnbe80fdk

          STAGE      STATUS       ACTOR      ATTEMPTS   DURATION       TOKENS      COST
          executor   succeeded    diligent          3       3.0s            -         -
            #1 partial rate_limited
            #2 lazy blocked, resumed
            #3 diligent succeeded, resumed
          reporter   succeeded    writer            1       1.0s            -         -

          coverage: passed
            changed    docs/a.md  docs/a.md
            changed    docs/b.md  docs/b.md
            unchanged  docs/c.md  because: already states the new grading rule in section 3

          next: git baton review 1mnbe80fdk, then `git baton finish 1mnbe80fdk` and merge branch baton/1mnbe80fdk
        ");
}

/// Runs the plan with executor `actor` and returns the final state.
fn run_with(repo: &TestRepo, actor: &str) -> (Run, Value) {
    let run = repo.baton([
        "run",
        "plans/fix.md",
        "--actor",
        &format!("executor={actor}"),
    ]);
    let id = run.run_id();
    let state = status(repo, &id);
    (run, state)
}

#[test]
fn the_gate_blocks_bad_evidence_and_passes_complete_work() {
    let with_evidence = |name: &str, evidence: &str| {
        let ab = Actor::agent(name)
            .edit("docs/a.md", "a")
            .edit("docs/b.md", "b");
        ab.evidence(evidence)
    };
    let good = "the grading rule in this document is already the new one";
    let unchanged = |target: &str| {
        format!(r#"{{"target": "{target}", "status": "unchanged", "reason": "{good}"}}"#)
    };
    let c = unchanged("docs/c.md");
    let ab = "echo a >> docs/a.md && echo b >> docs/b.md";
    let actors = vec![
        with_evidence(
            "claims",
            r#"{"target_coverage": [{"target": "docs/c.md", "status": "changed", "paths": ["docs/c.md"]}]}"#,
        ),
        with_evidence(
            "placeholder",
            r#"{"target_coverage": [{"target": "docs/c.md", "status": "unchanged", "reason": "n/a"}]}"#,
        ),
        with_evidence(
            "duplicate",
            &format!(r#"{{"target_coverage": [{c}, {c}]}}"#),
        ),
        Actor::agent("unknown").edit_all().evidence(&format!(
            r#"{{"target_coverage": [{}]}}"#,
            unchanged("docs/d.md")
        )),
        with_evidence("broken", "{not json"),
        with_evidence("reasoned", &format!(r#"{{"target_coverage": [{c}]}}"#)),
        Actor::shell("deleter", &format!("{ab} && rm docs/c.md")),
        Actor::shell(
            "committer",
            &format!("{ab} && echo c >> docs/c.md && git add -A && git commit -qm work"),
        ),
        Actor::shell(
            "renamer",
            &format!("{ab} && git mv docs/c.md docs/c-renamed.md"),
        ),
    ];
    let repo = standard_repo(&actors);
    let mut blocked = String::new();
    for actor in ["claims", "placeholder", "duplicate", "unknown", "broken"] {
        let (run, state) = run_with(&repo, actor);
        assert_eq!(run.code, 1, "{actor}: {run}");
        assert_eq!(state["status"], "blocked", "{actor}");
        assert_eq!(attempt_field(&state, "executor", "outcome"), ["blocked"]);
        assert!(attempts(&state, "reporter").is_empty(), "{actor}");
        blocked.push_str(&format!(
            "{actor}: {}\n",
            state["error"]["message"].as_str().unwrap()
        ));
    }
    assert_snapshot!(blocked, @r#"
        claims: coverage gate: 1 of 3 targets uncovered: docs/c.md; attempts/executor-1/evidence.json: entry 0: claims "docs/c.md" changed for target "docs/c.md", but the diff does not change it
        placeholder: coverage gate: 1 of 3 targets uncovered: docs/c.md; attempts/executor-1/evidence.json: entry 0: reason "n/a" for target "docs/c.md" is a placeholder: give a specific reason why it needed no change
        duplicate: attempts/executor-1/evidence.json: entry 1: second entry for target "docs/c.md" (the first is attempts/executor-1/evidence.json: entry 0); give one entry per target
        unknown: attempts/executor-1/evidence.json: entry 0: target "docs/d.md" is not declared by the plan; did you mean "docs/a.md"?
        broken: invalid evidence: attempts/executor-1/evidence.json:1:2: key must be a string
        "#);

    for actor in ["worker", "reasoned", "deleter", "committer", "renamer"] {
        let (run, state) = run_with(&repo, actor);
        assert_eq!(run.code, 0, "{actor}: {run}");
        assert_eq!(state["status"], "review", "{actor}");
        assert_eq!(state["coverage"]["passed"], true, "{actor}");
        let c = &state["coverage"]["targets"][2];
        match actor {
            "reasoned" => {
                assert_eq!(c["status"], "unchanged");
                assert_eq!(c["reason"], good);
            }
            _ => {
                assert_eq!(c["status"], "changed", "{actor}: {c:#}");
                assert_eq!(c["paths"], serde_json::json!(["docs/c.md"]), "{actor}");
            }
        }
    }
}

/// `coverage: resume`: a fresh attempt is not gated (a first attempt that changes nothing
/// succeeds), but its report is recorded so the uncovered targets stay visible; every resumed
/// attempt is gated.
#[test]
fn coverage_resume_gates_only_resumed_attempts() {
    let lazy = Actor::agent("lazy").say("nothing to do");
    let failing = Actor::agent("failing").exit("1");
    let repo = repo_running(&[lazy, failing], "coverage: resume\n");
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    let state = status(&repo, &run.run_id());
    assert_eq!(state["status"], "review");
    assert_eq!(state["policy"]["coverage"], "resume");
    let report = &attempts(&state, "executor")[0]["coverage"];
    assert_eq!(report["passed"], false, "recorded, not enforced: {report}");
    assert_eq!(state["coverage"]["targets"][0]["status"], "uncovered");
    let shown = repo.baton(["status", state["run_id"].as_str().unwrap()]);
    assert!(shown.stdout.contains("coverage: failed"), "{shown}");

    let run = repo.baton(["run", "plans/fix.md", "--actor", "executor=failing"]);
    assert_eq!(run.code, 1, "{run}");
    let id = run.run_id();
    assert_eq!(status(&repo, &id)["status"], "failed");
    let resumed = repo.baton(["resume", &id, "--actor", "executor=lazy"]);
    assert_eq!(resumed.code, 1, "{resumed}");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "blocked");
    assert_eq!(
        state["error"]["message"],
        "coverage gate: 3 of 3 targets uncovered: docs/a.md, docs/b.md, docs/c.md"
    );
}

/// Evidence is the agent's text. A file over 1 MiB blocks the stage unread, a reason over 2,000
/// characters or with a control character is a bad reason (located, never echoed), and a hostile
/// reason otherwise reaches `status`, `review` and result.md escaped (raw in the JSON, which is
/// exact).
#[test]
fn agent_text_is_bounded_and_escaped() {
    let control = "kept\u{1b}[2J as it was\r\n::error::forged | cell | \u{202e}and more words";
    let hostile = "kept as it was ::error::forged | cell | \u{202e}and more words";
    let reason = |reason: &str| {
        serde_json::json!({"target_coverage": [
            {"target": "docs/c.md", "status": "unchanged", "reason": reason}
        ]})
        .to_string()
    };
    let ab = |name: &str| {
        Actor::agent(name)
            .edit("docs/a.md", "a")
            .edit("docs/b.md", "b")
    };
    let actors = vec![
        ab("control").evidence(&reason(control)),
        ab("hostile").evidence(&reason(hostile)),
        ab("verbose").evidence(&reason(&"because ".repeat(300))),
        Actor::shell(
            "flooder",
            "echo a >> docs/a.md && echo b >> docs/b.md && \
             head -c 1100000 /dev/zero | tr '\\0' ' ' > \"$BATON_EVIDENCE_FILE\"",
        ),
    ];
    let repo = standard_repo(&actors);
    let mut blocked = String::new();
    for actor in ["control", "verbose", "flooder"] {
        let (run, state) = run_with(&repo, actor);
        assert_eq!(run.code, 1, "{actor}: {run}");
        assert_eq!(state["status"], "blocked", "{actor}");
        blocked.push_str(&format!(
            "{actor}: {}\n",
            state["error"]["message"].as_str().unwrap()
        ));
    }
    assert_snapshot!(blocked, @r#"
        control: coverage gate: 1 of 3 targets uncovered: docs/c.md; attempts/executor-1/evidence.json: entry 0: reason for target "docs/c.md" holds a control character at character 5 (U+001B): write the reason as plain text on one line
        verbose: coverage gate: 1 of 3 targets uncovered: docs/c.md; attempts/executor-1/evidence.json: entry 0: reason for target "docs/c.md" is 2399 characters long, over the limit of 2000: give the specific reason in a sentence or two
        flooder: invalid evidence: attempts/executor-1/evidence.json: the file is larger than 1 MiB, the limit for an evidence file; give one short entry per target
        "#);

    let (run, state) = run_with(&repo, "hostile");
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(state["coverage"]["targets"][2]["reason"], hostile);
    let id = state["run_id"].as_str().unwrap();
    let inert = |text: &str| {
        !text
            .chars()
            .any(|c| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c))
    };
    for command in ["status", "review"] {
        let shown = repo.baton([command, id]);
        assert!(inert(&shown.stdout), "{command}:\n{shown}");
        assert!(
            shown
                .stdout
                .contains(r"kept as it was ::error::forged | cell | \u{202e}and more words"),
            "{command}:\n{shown}"
        );
    }
    let result = text(&run_dir(&repo, id).join("result.md"));
    assert!(inert(&result), "{result}");
    let row = result.lines().find(|l| l.contains("docs/c.md")).unwrap();
    assert_eq!(
        row,
        r"| `docs/c.md` | unchanged | needed no change, because: kept as it was ::error::forged \| cell \| \\u{202e}and more words |"
    );
}

/// A target `.gitignore` ignores is refused when the run is created, at its line and column,
/// before any agent works: a file the agent created there could never count as a change.
#[test]
fn a_run_refuses_an_ignored_target_before_the_agent_starts() {
    let repo = standard_repo(&[]);
    repo.write(".gitignore", "build/\n");
    repo.write(
        "plans/ignored.md",
        "---\ntargets:\n  - docs/a.md\n  - build/report.txt\n---\nWrite the report.\n",
    );
    repo.commit_all("a plan with an ignored target");
    let run = repo.baton(["run", "plans/ignored.md"]);
    assert_eq!(run.code, 2, "{run}");
    assert_eq!(
        run.stderr,
        "error: plans/ignored.md:4:5: target `build/report.txt` is ignored by .gitignore:1 \
         (`build/`), so no file the work creates there can count as a change\n\
         hint: un-ignore it (`!build/report.txt` after that rule), track it first (`git add -f`), \
         or target a tracked path\n"
    );
    let list = repo.baton(["list", "--json"]);
    assert_eq!(list.stdout.trim(), "[]", "no run was created: {list}");
}

/// A stage the gate does not hold still answers to the gate's verdict: a reporter that reverts
/// a target the executor's gate counted is blocked with what it undid, and the run never
/// reaches review. (`finish` would refuse such a run too; the run must not claim review first.)
#[test]
fn a_later_stage_that_undoes_a_gated_target_is_blocked() {
    let reverter = Actor::shell("writer", "git checkout -- docs/b.md && echo reverted");
    let repo = repo_running(&[worker(), reverter], "");

    let (id, run) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "blocked", "{run}");
    assert_eq!(stage(&state, "executor")["status"], "succeeded");
    assert_eq!(stage(&state, "reporter")["status"], "blocked");
    assert_eq!(
        state["error"]["message"],
        "coverage gate: this stage undid work the gate of stage `executor` counted; \
         uncovered now: docs/b.md"
    );
    let finish = repo.baton(["finish", &id]);
    assert_ne!(finish.code, 0, "{finish}");

    // A reporter that leaves the targets alone (or touches other files) passes as before.
    let repo = repo_running(
        &[worker(), Actor::agent("writer").edit("NOTES.md", "n")],
        "",
    );
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(status(&repo, &run.run_id())["status"], "review");
}

/// The verdict is the snapshot's: a process the attempt left behind, detached beyond every mark
/// the containment follows, that reverts a target once the snapshot exists cannot change what
/// the gate counted, and the reverted worktree is what the next stage and `finish` see. (A gate
/// that read the worktree after the snapshot would lose this race only some of the time; with
/// the verdict on the snapshot the outcome does not depend on it.)
#[test]
fn the_gate_judges_the_snapshot_not_the_worktree_after_it() {
    let out = scratch();
    let done = outside(&out, "reverted");
    // Spins until the executor's snapshot ref exists (a bounded count of turns), then
    // restores docs/b.md at once: between the snapshot and any read of the worktree.
    let reverter = format!(
        "ref=\"$(git rev-parse --git-common-dir)/refs/baton/runs/$BATON_RUN_ID/attempts/executor-1\"; \
         n=0; while [ ! -e \"$ref\" ] && [ $n -lt 20000000 ]; do n=$((n+1)); done; \
         printf '# B\\n\\nThe old rule.\\n' >docs/b.md; touch {}",
        done.display()
    );
    let escape = format!(
        "printf 'rule: grade A\\n' >>docs/a.md; printf 'rule: grade B\\n' >>docs/b.md; \
         printf 'rule: grade C\\n' >>docs/c.md; \
         env -u GIT_BATON_ATTEMPT_TOKEN setsid --fork sh -c '{}' </dev/null >/dev/null 2>&1; \
         echo done",
        reverter.replace('\'', "'\\''")
    );
    let leaver = Actor::shell("leaver", &escape);
    // The reporter waits for the revert, so that it runs on the reverted worktree.
    let wait = Actor::shell(
        "writer",
        &format!(
            "n=0; while [ ! -e {} ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n+1)); done",
            done.display()
        ),
    );
    let repo = repo_running(&[leaver, wait], "");
    let run = repo.baton(["run", "plans/fix.md"]);
    let id = run.run_id();
    assert!(done.exists(), "the detached process did not revert: {run}");
    let state = status(&repo, &id);
    // The executor's gate counted its snapshot, which holds the edit of docs/b.md …
    assert_eq!(stage(&state, "executor")["status"], "succeeded", "{run}");
    assert!(
        coverage_rows(&state).contains(&"docs/b.md changed".to_string()),
        "{run}"
    );
    // … and the reporter's snapshot no longer does: the revert is caught there.
    assert_eq!(stage(&state, "reporter")["status"], "blocked", "{run}");
    assert_eq!(run.code, 1, "{run}");
}

/// An agent that only adds a blank line to each target (and makes one executable) is blocked:
/// the targets are `touched`, which `status` and the resume prompt name; real edits then pass.
#[test]
fn an_agent_that_only_adds_blank_lines_is_blocked() {
    let blank = Actor::shell(
        "blank",
        "printf '\\n' >> docs/a.md && printf '\\r\\n' >> docs/b.md && chmod +x docs/c.md",
    );
    let out = scratch();
    let prompt = outside(&out, "prompt.md");
    let diligent = Actor::shell(
        "diligent",
        &format!(
            "cat \"$BATON_PROMPT_FILE\" > {} && echo a >> docs/a.md && echo b >> docs/b.md && echo c >> docs/c.md",
            prompt.display()
        ),
    );
    let repo = repo_running(&[blank, diligent], "");

    let (id, run) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "blocked", "{run}");
    assert_eq!(
        coverage_rows(&state),
        [
            "docs/a.md touched",
            "docs/b.md touched",
            "docs/c.md touched"
        ]
    );
    assert_eq!(
        state["error"]["message"],
        "coverage gate: 3 of 3 targets touched only in whitespace, line endings or mode: \
         docs/a.md, docs/b.md, docs/c.md"
    );
    let shown = repo.baton(["status", &id]);
    assert!(
        shown.stdout.contains(
            "touched    docs/a.md  only whitespace, line endings or mode changed: docs/a.md"
        ),
        "{shown}"
    );

    let resumed = repo.baton(["resume", &id, "--actor", "executor=diligent"]);
    assert_eq!(resumed.code, 0, "{resumed}");
    assert_eq!(status(&repo, &id)["stages"][0]["status"], "succeeded");
    let prompt = std::fs::read_to_string(&prompt).unwrap();
    assert!(
        prompt.contains(
            "Targets whose only change is whitespace, line endings or file mode, which does not \
             count as a change (`touched`): make the change the plan asks for\n\n- `docs/a.md`\n"
        ),
        "{prompt}"
    );
}

/// A later stage that turns a gated target's real change back into a whitespace-only one has
/// undone it as surely as a revert: blocked, naming it touched; `finish` refuses the run too.
#[test]
fn a_later_stage_that_leaves_a_target_only_touched_is_blocked() {
    let reverter = Actor::shell(
        "writer",
        "git checkout -- docs/b.md && printf '\\n' >> docs/b.md && echo reverted",
    );
    let repo = repo_running(&[worker(), reverter], "");
    let (id, run) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    assert_eq!(stage(&state, "reporter")["status"], "blocked", "{run}");
    assert_eq!(
        state["error"]["message"],
        "coverage gate: this stage undid work the gate of stage `executor` counted; \
         touched only in whitespace, line endings or mode now: docs/b.md"
    );
    let finish = repo.baton(["finish", &id]);
    assert_ne!(finish.code, 0, "{finish}");
}
