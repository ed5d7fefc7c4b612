//! `git baton init` and the agent-side commands, `git baton unchanged` and `git baton check`
//! (and its Claude Code Stop-hook form), through the real binary, in a real run's worktree while
//! its driver holds the run's lock.
//!
//! The agent of these runs edits `docs/a.md`, writes its pid and then waits for a file the test
//! creates, so the test acts as the agent's tools in between, from the run's worktree; or it
//! calls `git baton unchanged` itself (`git-baton` is first on its `PATH`).

use std::io::Write as _;
use std::process::Stdio;

use super::*;

mod hook;

/// An actor that can run `git baton`.
pub(super) fn with_baton(actor: Actor) -> Actor {
    actor.set(&format!(
        "env: {{ PATH: {} }}",
        serde_json::to_string(&crate::support::path_with_baton().to_string_lossy()).unwrap()
    ))
}

/// A run in progress: its driver (`git baton run`) waits on an agent that edited `docs/a.md`
/// and waits for [`Waiting::release`].
pub(super) struct Waiting {
    pub(super) repo: TestRepo,
    _scratch: tempfile::TempDir,
    go: PathBuf,
    child: Child,
    pub(super) id: String,
    pub(super) worktree: PathBuf,
}

impl Waiting {
    pub(super) fn start() -> Waiting {
        Waiting::start_with("")
    }

    /// Like [`Waiting::start`], with `tail` after the pipeline (`coverage: resume` …).
    fn start_with(tail: &str) -> Waiting {
        let scratch = scratch();
        let pid = outside(&scratch, "agent.pid");
        let go = outside(&scratch, "go");
        let agent = Actor::agent("worker")
            .edit("docs/a.md", "rule: grade A")
            .pid(&pid)
            .verbs(&["wait-for", go.to_str().unwrap()]);
        let repo = repo_running(&[agent], tail);
        let child = spawn(&repo, &["run", "plans/fix.md"]);
        wait_for_line(&pid);
        let id = wait_for_run(&repo);
        let worktree = worktree_of(&repo, &status(&repo, &id));
        Waiting {
            repo,
            _scratch: scratch,
            go,
            child,
            id,
            worktree,
        }
    }

    /// `git baton ARGS` in the run's worktree.
    fn baton(&self, args: &[&str]) -> Run {
        self.repo.baton_in(&self.worktree, args)
    }

    /// `git baton check --hook claude-stop ARGS` in the run's worktree with `input` on stdin.
    fn hook(&self, input: &str, args: &[&str]) -> Run {
        hook_in(&self.repo, &self.worktree, input, args)
    }

    /// A file outside every repository holding `bytes`.
    fn scratch_file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self._scratch.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// Lets the agent exit 0 and waits for the driver.
    pub(super) fn release(self) -> (TestRepo, String, Run) {
        std::fs::write(&self.go, "").unwrap();
        let run = wait(&self.repo, self.child);
        (self.repo, self.id, run)
    }
}

fn hook_in(repo: &TestRepo, dir: &Path, input: &str, args: &[&str]) -> Run {
    hook_kind_in(repo, dir, "claude-stop", input, args)
}

/// `git baton check --hook KIND ARGS` in `dir` with `input` on stdin.
fn hook_kind_in(repo: &TestRepo, dir: &Path, kind: &str, input: &str, args: &[&str]) -> Run {
    let mut all = vec!["check", "--hook", kind];
    all.extend(args);
    let mut cmd = repo.baton_command(dir, &[], &all);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    repo.baton_wait(child, LIVENESS)
}

/// The reason the tests' agents give why docs/b.md needs no change.
pub(super) const REASON: &str = "already states the new grading rule in its first section";

/// The run is in review with docs/a.md changed, and docs/b.md and docs/c.md unchanged, docs/b.md
/// for [`REASON`].
pub(super) fn assert_review_with_the_reason(state: &Value) {
    assert_eq!(state["status"], "review", "{state:#}");
    assert_eq!(
        coverage_rows(state),
        [
            "docs/a.md changed",
            "docs/b.md unchanged",
            "docs/c.md unchanged"
        ]
    );
    assert_eq!(state["coverage"]["targets"][1]["reason"], REASON);
}

/// The agent calls `git baton unchanged` for the targets it leaves alone, and the gate after it
/// exits accepts those reasons: the run reaches review with the reasons in its coverage.
#[test]
fn an_agent_that_records_reasons_passes_the_gate() {
    let agent = with_baton(
        Actor::agent("worker")
            .edit("docs/a.md", "rule: grade A")
            .verbs(&["unchanged", "docs/b.md", REASON])
            .verbs(&["unchanged", "docs/c.md", "n/a"])
            .verbs(&[
                "unchanged",
                "docs/c.md",
                "the old rule it states is unchanged by this plan",
            ]),
    );
    let repo = repo_running(&[agent], "");
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    let codes: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("unchanged: "))
        .collect();
    assert_eq!(
        codes,
        ["unchanged: 0", "unchanged: 2", "unchanged: 0"],
        "{run}"
    );
    assert!(
        run.stderr
            .contains("error: reason for target `docs/c.md` refused: the reason is a placeholder"),
        "{run}"
    );
    let state = status(&repo, &run.run_id());
    assert_review_with_the_reason(&state);
    assert_eq!(
        state["coverage"]["targets"][1]["reason_source"],
        serde_json::json!({"kind": "file", "path": "attempts/executor-1/evidence.json", "index": 0})
    );
    // The hook never ran, so the attempt says nothing about it.
    assert_eq!(
        attempt_field(&state, "executor", "hook_blocks"),
        [Value::Null]
    );
}

/// While the attempt runs (its driver holding the run's lock): `check` exit 1 naming the
/// uncovered targets, refusals with exit 2 that write nothing, two reasons at once that both
/// land, `check` exit 0; after the attempt, the gate passes on the same evidence.
#[test]
fn unchanged_and_check_during_an_attempt() {
    let w = Waiting::start();
    let id = w.id.clone();

    let check = w.baton(&["check"]);
    assert_eq!(check.code, 1, "{check}");
    assert_eq!(
        check.stdout,
        format!(
            "run {id}, stage executor, attempt 1\n  \
             changed    docs/a.md  docs/a.md\n  \
             uncovered  docs/b.md  no change and no reason\n  \
             uncovered  docs/c.md  no change and no reason\n\n\
             the gate would block this attempt\n\
             hint: change each uncovered target, or record why it needed no change:\n\
             hint:   git baton unchanged <TARGET> \"<specific reason>\"\n"
        )
    );

    let unknown = w.baton(&["unchanged", "docs/bb.md", REASON]);
    assert_eq!(unknown.code, 2, "{unknown}");
    assert_eq!(
        unknown.stderr,
        format!(
            "error: unknown target `docs/bb.md`: the plan of run {id} has no such target\n\
             hint: did you mean `docs/b.md`?\n"
        )
    );
    let short = w.baton(&["unchanged", "docs/b.md", "looks fine"]);
    assert_eq!(short.code, 2, "{short}");
    assert!(short.stderr.contains("the reason is too short"), "{short}");
    let placeholder = w.baton(&["unchanged", "docs/b.md", "No change needed."]);
    assert_eq!(placeholder.code, 2, "{placeholder}");
    assert!(
        placeholder.stderr.contains("the reason is a placeholder"),
        "{placeholder}"
    );
    let control = w.baton(&[
        "unchanged",
        "docs/b.md",
        "a bell \u{7} and a long enough reason",
    ]);
    assert_eq!(control.code, 2, "{control}");
    assert_eq!(
        control.stderr,
        "error: reason for target `docs/b.md` refused: the reason holds a control character at character 8 (U+0007): write it as plain text on one line\n\
         hint: say specifically why this target needed no change, e.g. \"already states the new rule in section 3\"\n"
    );
    let evidence = run_dir(&w.repo, &id).join("attempts/executor-1/evidence.json");
    assert!(!evidence.exists(), "a refusal wrote the evidence file");

    // A reason for a target the agent changed is kept, and the agent told that the diff wins.
    let moot = w.baton(&["unchanged", "docs/a.md", REASON]);
    assert_eq!(moot.code, 0, "{moot}");
    assert_eq!(
        moot.stdout,
        format!(
            "recorded: docs/a.md needed no change, because: {REASON}\n\
             note: docs/a.md already has changes in the worktree; the gate counts it as changed, \
             and keeps the reason for the record\n"
        )
    );

    // Three at once: two for docs/b.md, one for docs/c.md. One of the first two lands and the
    // other is a duplicate, whatever the order; the third lands too.
    let spawn_unchanged = |target: &str, reason: &str| {
        let mut cmd = w
            .repo
            .baton_command(&w.worktree, &[], ["unchanged", target, reason]);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd.spawn().unwrap()
    };
    let children = [
        spawn_unchanged("docs/b.md", REASON),
        spawn_unchanged("docs/b.md", "the grading rule in it is already the new one"),
        spawn_unchanged("docs/c.md", REASON),
    ];
    let codes: Vec<i32> = children
        .into_iter()
        .map(|child| w.repo.baton_wait(child, LIVENESS).code)
        .collect();
    let mut for_b = codes[..2].to_vec();
    for_b.sort_unstable();
    assert_eq!(
        (for_b.as_slice(), codes[2]),
        ([0, 2].as_slice(), 0),
        "{codes:?}"
    );
    let duplicate = w.baton(&["unchanged", "docs/b.md", REASON]);
    assert_eq!(duplicate.code, 2, "{duplicate}");
    assert_eq!(
        duplicate.stderr,
        "error: target `docs/b.md` already has an entry in this attempt's evidence \
         (attempts/executor-1/evidence.json)\n\
         hint: one reason per target and attempt; `git baton check` shows what is recorded\n"
    );
    let written: Value = serde_json::from_str(&text(&evidence)).unwrap();
    let mut targets: Vec<&str> = written["target_coverage"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["target"].as_str().unwrap())
        .collect();
    targets.sort_unstable();
    assert_eq!(targets, ["docs/a.md", "docs/b.md", "docs/c.md"]);

    let check = w.baton(&["check", "--json"]);
    assert_eq!(check.code, 0, "{check}");
    let json = check.json();
    assert_eq!(json["schema_version"], 1);
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schemas/check.schema.json");
    let schema: Value = serde_json::from_str(&text(&schema_path)).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let problems: Vec<String> = validator
        .iter_errors(&json)
        .map(|e| e.to_string())
        .collect();
    assert!(problems.is_empty(), "{problems:?}\n{json:#}");
    assert_eq!(json["passed"], true);
    assert_eq!(json["enforced"], true);
    assert_eq!(json["coverage"]["passed"], true);
    // Nothing of this touched the RunState: the attempt is still open, the driver still holds it.
    let state = status(&w.repo, &id);
    assert_eq!(state["status"], "running");
    assert!(state["lock"].is_object(), "{state:#}");

    let (repo, id, run) = w.release();
    assert_eq!(run.code, 0, "{run}");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "review");
    assert_eq!(
        coverage_rows(&state),
        [
            "docs/a.md changed",
            "docs/b.md unchanged",
            "docs/c.md unchanged"
        ]
    );
}

/// Outside a run's worktree, or when its attempt has ended, the agent-side commands refuse
/// with exit 2; the hook form fails open with exit 1, never 2 (which Claude Code reads as
/// "block").
#[test]
fn outside_an_attempt_the_commands_refuse() {
    let w = Waiting::start();
    let worktree = w.worktree.clone();
    let in_main = w.repo.baton(["unchanged", "docs/b.md", REASON]);
    assert_eq!(in_main.code, 2, "{in_main}");
    assert_eq!(
        in_main.stderr,
        "error: $TMP/repo is not in the worktree of a git-baton run\n\
         hint: these commands are for the agent of a run, in the run's worktree (`git baton status` names it)\n"
    );
    let hook = hook_in(&w.repo, &w.repo.root, "{}", &[]);
    assert_eq!(hook.code, 1, "{hook}");
    assert_eq!(hook.stdout, "");
    assert!(
        hook.stderr
            .starts_with("error: $TMP/repo is not in the worktree"),
        "{hook}"
    );
    let garbage = w.hook("not json", &[]);
    assert_eq!(garbage.code, 1, "{garbage}");
    assert!(
        garbage.stderr.contains("the Stop hook's input is not JSON"),
        "{garbage}"
    );

    let (repo, id, run) = w.release();
    // Only docs/a.md changed: the gate blocks the run.
    assert_eq!(run.code, 1, "{run}");
    let check = repo.baton_in(&worktree, ["check"]);
    assert_eq!(check.code, 2, "{check}");
    assert_eq!(
        check.stderr,
        format!(
            "error: run {id} has no attempt running (it is blocked)\n\
             hint: reasons are recorded by the agent while its attempt runs; resume the run with `git baton resume {id}`\n"
        )
    );
}

/// An open attempt whose driver died (killed here) is never gated, so `unchanged` and `check`
/// refuse it instead of recording reasons that a resume would drop.
#[test]
fn a_run_whose_driver_died_takes_no_reasons() {
    let mut w = Waiting::start();
    w.child.kill().unwrap();
    w.child.wait().unwrap();
    let unchanged = w.baton(&["unchanged", "docs/b.md", REASON]);
    assert_eq!(unchanged.code, 2, "{unchanged}");
    let id = w.id.clone();
    assert_eq!(
        unchanged.stderr,
        format!(
            "error: run {id} has an open attempt but no live driver (stale): nothing recorded now \
             would reach its gate\n\
             hint: the attempt was cut off; `git baton resume {id}` records that and starts a new one\n"
        )
    );
    assert_eq!(w.baton(&["check"]).code, 2);
    // The orphaned agent ends; no evidence file holds the refused reason.
    std::fs::write(&w.go, "").unwrap();
    let attempts = w.repo.path(&format!(".git/baton/runs/{id}/attempts"));
    for entry in std::fs::read_dir(&attempts).unwrap() {
        let evidence = entry.unwrap().path().join("evidence.json");
        let text = std::fs::read_to_string(&evidence).unwrap_or_default();
        assert!(!text.contains(REASON), "{}: {text}", evidence.display());
    }
}

/// `init` writes one preset per agent on PATH (the first runs the gated stage), refuses to
/// overwrite without `--force`, names the closest agent for a typo, and every file it writes
/// loads with the strict configuration loader.
#[test]
fn init_writes_presets_that_load() {
    let repo = TestRepo::with().file("README.md", "x\n").commit();
    let bin = tempfile::tempdir().unwrap();
    for program in ["codex", "gemini"] {
        let path = bin.path().join(program);
        std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let init = repo.baton_env(&repo.root, ["init"], &[("PATH", OsStr::new(&path))]);
    assert_eq!(init.code, 0, "{init}");
    assert_eq!(
        init.stdout,
        "wrote $TMP/repo/.baton.yml with the preset(s) codex, gemini\n"
    );
    let config = git_baton::config::load(&repo.root).unwrap();
    assert_eq!(
        config.actors.keys().collect::<Vec<_>>(),
        ["codex", "gemini", "script"]
    );
    assert_eq!(config.pipeline[0].actor, "codex");
    let codex = &config.actors["codex"].command;
    assert!(codex.contains(&"{attempt_dir}".to_string()), "{codex:?}");
    assert!(
        !codex.contains(&"{git_common_dir}".to_string()),
        "{codex:?}"
    );
    assert!(!codex.iter().any(|a| a.contains("full-auto")), "{codex:?}");

    let again = repo.baton(["init", "--agent", "claude"]);
    assert_eq!(again.code, 2, "{again}");
    assert_eq!(
        again.stderr,
        "error: .baton.yml already exists in $TMP/repo\n\
         hint: `git baton init --force` replaces it (commit or copy it first)\n"
    );
    let typo = repo.baton(["init", "--agent", "codx", "--force"]);
    assert_eq!(typo.code, 2, "{typo}");
    assert_eq!(
        typo.stderr,
        "error: unknown agent `codx`\nhint: did you mean `codex`?\n"
    );
    for agent in git_baton::agent::preset::names() {
        let init = repo.baton(["init", "--agent", agent, "--force"]);
        assert_eq!(init.code, 0, "{init}");
        let config = git_baton::config::load(&repo.root)
            .unwrap_or_else(|e| panic!("{agent}: {e}\n{}", text(&repo.path(".baton.yml"))));
        assert_eq!(config.pipeline[0].actor, agent);
        assert!(config.pipeline[0].gated);
    }
    repo.baton(["init", "--agent", "claude", "--force"]);
    let config = git_baton::config::load(&repo.root).unwrap();
    let claude = &config.actors["claude"];
    assert!(claude.stdin_prompt);
    let at = claude
        .command
        .iter()
        .position(|a| a == "--allowedTools")
        .unwrap();
    assert_eq!(
        claude.command[at + 1..at + 4],
        [
            "Bash(git baton unchanged:*)",
            "Bash(git baton check)",
            "Bash(git baton check --json)"
        ]
    );
    let at = claude
        .command
        .iter()
        .position(|a| a == "--settings")
        .unwrap();
    let settings: Value = serde_json::from_str(&claude.command[at + 1]).unwrap();
    assert_eq!(
        settings["hooks"]["Stop"][0]["hooks"][0]["command"],
        "git baton check --hook claude-stop"
    );
}

/// The directory placeholders, absolute whatever directory the run was started from:
/// `{attempt_dir}` is the attempt's own directory — where its evidence file lies, and what the
/// Codex preset grants with `--add-dir` — and `{git_common_dir}` the main repository's `.git`.
#[test]
fn directory_placeholders_name_the_attempt_and_the_main_git_directory() {
    let out = scratch();
    let seen = outside(&out, "dirs.txt");
    let agent = Actor::command(
        "worker",
        &[
            "sh",
            "-c",
            "printf '%s\\n%s\\n%s\\n' \"$1\" \"$BATON_EVIDENCE_FILE\" \"$2\" >\"$3\"",
            "sh",
            "{attempt_dir}",
            "{git_common_dir}",
        ],
    )
    .verbs(&[seen.to_str().unwrap()]);
    let repo = repo_running(&[agent], "");
    std::fs::create_dir_all(repo.path("docs/sub")).unwrap();
    let run = repo.baton_in(&repo.path("docs/sub"), ["run", "../../plans/fix.md"]);
    assert_eq!(run.code, 1, "nothing changed, so the gate blocks: {run}");
    let text = text(&seen);
    let lines: Vec<&str> = text.lines().collect();
    let [dir, evidence, common] = lines[..] else {
        panic!("{text}")
    };
    assert!(Path::new(dir).is_absolute(), "{dir}");
    assert!(
        dir.starts_with(&repo.path(".git/baton/runs").display().to_string()),
        "{dir}"
    );
    assert_eq!(Path::new(evidence), Path::new(dir).join("evidence.json"));
    assert_eq!(common, repo.path(".git").display().to_string());
}

/// With `coverage: resume` the gate does not decide a first attempt: `check` says so and exits
/// 0, and the Stop hook lets the agent stop at once.
#[test]
fn an_attempt_the_gate_does_not_enforce_passes_the_check() {
    let w = Waiting::start_with("coverage: resume\n");
    let check = w.baton(&["check"]);
    assert_eq!(check.code, 0, "{check}");
    assert!(check.stdout.contains("  uncovered  docs/b.md"), "{check}");
    assert!(
        check.stdout.contains(
            "\nthe gate is not enforced for this attempt (`coverage: resume`); its report is kept\n"
        ),
        "{check}"
    );
    let json = w.baton(&["check", "--json"]).json();
    assert_eq!(
        (&json["enforced"], &json["passed"]),
        (&false.into(), &true.into())
    );
    let hook = w.hook("{}", &[]);
    assert_eq!((hook.code, hook.stdout.as_str()), (0, "{}\n"), "{hook}");
    let (repo, id, run) = w.release();
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(status(&repo, &id)["status"], "review");
}
