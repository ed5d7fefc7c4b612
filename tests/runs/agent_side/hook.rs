//! The Stop hook (`git baton check --hook`): it fails open whatever fails, blocks a bounded
//! number of times per attempt in each CLI's protocol, and lets a covered attempt stop.

use super::*;

/// `git baton ARGS` (all of them) in `dir` with `stdin` as its standard input.
fn baton_with_stdin(repo: &TestRepo, dir: &Path, args: &[&str], stdin: Stdio) -> Run {
    let mut cmd = repo.baton_command(dir, &[], args);
    cmd.stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    repo.baton_wait(cmd.spawn().unwrap(), LIVENESS)
}

/// In hook mode every failure is the non-blocking exit 1, never 2 (which Claude Code reads as
/// "block" and feeds to the agent): a command line clap refuses (a value out of range, a
/// misspelt flag or hook name, conflicting flags), a directory that is not there, and stdin
/// that cannot be read. Each prints its error on stderr and nothing on stdout; the same command
/// line without `--hook` is still a usage error (2).
#[test]
fn the_stop_hook_fails_open_whatever_fails() {
    let w = Waiting::start();
    let input = r#"{"session_id": "s", "stop_hook_active": false}"#;
    let bad_lines: [&[&str]; 8] = [
        &[
            "check",
            "--hook",
            "claude-stop",
            "--max-blocks",
            "99999999999",
        ],
        &["check", "--hook", "claude-stop", "--max-blocks", "-1"],
        &["check", "--hook", "claude-stop", "--max-block", "3"],
        &["check", "--hook", "claude-stpo"],
        &["check", "--hook=claude-stop", "--json"],
        &["check", "--hook", "claude-stop", "extra"],
        &["check", "--hook"],
        &["-C", "/missing/dir", "check", "--hook", "claude-stop"],
    ];
    for args in bad_lines {
        let run = baton_with_stdin(&w.repo, &w.worktree, args, Stdio::piped());
        assert_eq!(run.code, 1, "{args:?}: {run}");
        assert_eq!(run.stdout, "", "{args:?}: {run}");
        assert!(run.stderr.starts_with("error: "), "{args:?}: {run}");
    }
    let missing = baton_with_stdin(
        &w.repo,
        &w.worktree,
        &["-C", "/missing/dir", "check", "--hook", "claude-stop"],
        Stdio::null(),
    );
    assert!(
        missing.stderr.contains("cannot change to `/missing/dir`"),
        "{missing}"
    );
    // Stdin that cannot be read: a directory, and bytes that are not UTF-8.
    let hook = ["check", "--hook", "claude-stop"];
    let dir = std::fs::File::open(&w.worktree).unwrap();
    let unreadable = baton_with_stdin(&w.repo, &w.worktree, &hook, Stdio::from(dir));
    assert_eq!(unreadable.code, 1, "{unreadable}");
    assert!(
        unreadable
            .stderr
            .starts_with("error: cannot read the hook's input"),
        "{unreadable}"
    );
    let binary = w.scratch_file("binary", b"{\"session_id\": \"\xff\"}");
    let garbled = baton_with_stdin(
        &w.repo,
        &w.worktree,
        &hook,
        Stdio::from(std::fs::File::open(binary).unwrap()),
    );
    assert_eq!(garbled.code, 1, "{garbled}");
    assert_eq!(garbled.stdout, "", "{garbled}");

    // Outside hook mode the same mistakes are usage errors, as ever.
    let plain = w.baton(&["check", "--max-blocks", "3"]);
    assert_eq!(plain.code, 2, "{plain}");
    let plain = w.baton(&["check", "--jsn"]);
    assert_eq!(plain.code, 2, "{plain}");
    // And a good hook command line answers as before.
    let good = w.hook(input, &["--max-blocks", "5"]);
    assert_eq!(good.code, 0, "{good}");
    assert!(good.stdout.contains(r#""decision":"block""#), "{good}");
}

/// A driver that dies mid-attempt still leaves the attempt's record with how often the Stop hook
/// kept the agent working: `resume` reads the count when it records the crash.
#[test]
fn a_crash_keeps_how_often_the_stop_hook_blocked() {
    let mut w = Waiting::start();
    let hook = w.hook(
        r#"{"session_id": "abc-123", "stop_hook_active": false}"#,
        &[],
    );
    assert_eq!(hook.code, 0, "{hook}");
    assert!(hook.stdout.contains(r#""decision":"block""#), "{hook}");
    w.child.kill().unwrap();
    w.child.wait().unwrap();
    std::fs::write(&w.go, "").unwrap();
    let resumed = w.repo.baton(["resume", &w.id]);
    assert!(resumed.stderr.contains("crash"), "{resumed}");
    let state = status(&w.repo, &w.id);
    let blocks = attempt_field(&state, "executor", "hook_blocks");
    assert_eq!(blocks[0], 1, "{state:#}");
    assert_eq!(
        attempt_field(&state, "executor", "cause")[0],
        "crash",
        "{state:#}"
    );
}

/// The Stop hook blocks while a target is uncovered — at most `--max-blocks` times — then lets
/// the agent stop; the attempt's record counts the blocks, and the gate after the agent exits
/// still decides.
#[test]
fn the_stop_hook_blocks_a_bounded_number_of_times() {
    let w = Waiting::start();
    let input =
        r#"{"session_id": "abc-123", "stop_hook_active": false, "hook_event_name": "Stop"}"#;
    for _ in 0..2 {
        let hook = w.hook(input, &["--max-blocks", "2"]);
        assert_eq!(hook.code, 0, "{hook}");
        let answer: Value = serde_json::from_str(&hook.stdout).unwrap();
        assert_eq!(answer["decision"], "block");
        let reason = answer["reason"].as_str().unwrap();
        assert!(
            reason.contains("2 of 3 targets are uncovered: docs/b.md, docs/c.md."),
            "{reason}"
        );
        assert!(reason.contains("git baton unchanged <TARGET>"), "{reason}");
    }
    let third = w.hook(
        r#"{"session_id": "abc-123", "stop_hook_active": true}"#,
        &["--max-blocks", "2"],
    );
    assert_eq!(third.code, 0, "{third}");
    let answer: Value = serde_json::from_str(&third.stdout).unwrap();
    assert_eq!(answer.get("decision"), None, "{answer}");
    assert!(
        answer["systemMessage"]
            .as_str()
            .unwrap()
            .contains("blocked 2 time(s)"),
        "{answer}"
    );

    let (repo, id, run) = w.release();
    assert_eq!(run.code, 1, "the gate still blocks: {run}");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "blocked");
    assert_eq!(attempt_field(&state, "executor", "hook_blocks"), [2]);
    let shown = repo.baton(["status", &id]);
    assert!(
        shown
            .stdout
            .contains("    #1 the Stop hook kept the agent working 2 time(s)\n"),
        "{shown}"
    );
    let record: Value = serde_json::from_str(&text(
        &run_dir(&repo, &id).join("attempts/executor-1/stop-hook.json"),
    ))
    .unwrap();
    assert_eq!(record["session_id"], "abc-123");
}

/// Codex's and Gemini CLI's hook kinds answer in their CLIs' protocols and share the attempt's
/// one count with Claude Code's: the limit is per attempt, whichever CLI asks.
#[test]
fn every_hook_kind_blocks_in_its_protocol_and_shares_one_count() {
    let w = Waiting::start();
    let answer = |kind: &str, input: &str| {
        let run = hook_kind_in(&w.repo, &w.worktree, kind, input, &["--max-blocks", "2"]);
        assert_eq!(run.code, 0, "{run}");
        serde_json::from_str::<Value>(&run.stdout).unwrap()
    };
    let codex = answer(
        "codex-stop",
        r#"{"session_id":"t-1","turn_id":"1","stop_hook_active":false,"hook_event_name":"Stop"}"#,
    );
    assert_eq!(codex["decision"], "block", "{codex}");
    assert!(
        codex["reason"]
            .as_str()
            .unwrap()
            .contains("docs/b.md, docs/c.md."),
        "{codex}"
    );
    let gemini = answer(
        "gemini-after-agent",
        r#"{"session_id":"g-1","hook_event_name":"AfterAgent","prompt":"p","prompt_response":"done","stop_hook_active":false}"#,
    );
    assert_eq!(gemini["decision"], "deny", "{gemini}");
    assert_eq!(gemini["reason"], codex["reason"]);
    // The third block of the attempt would pass the limit of 2, whoever asks.
    let third = answer("codex-stop", "{}");
    assert_eq!(third.get("decision"), None, "{third}");
    assert!(
        third["systemMessage"]
            .as_str()
            .unwrap()
            .contains("blocked 2 time(s)"),
        "{third}"
    );
    let (repo, id, run) = w.release();
    assert_eq!(run.code, 1, "the gate still blocks: {run}");
    let state = status(&repo, &id);
    assert_eq!(attempt_field(&state, "executor", "hook_blocks"), [2]);
}

/// Once every target is covered the hook lets the agent stop at once and counts nothing.
#[test]
fn the_stop_hook_allows_a_covered_attempt() {
    let w = Waiting::start();
    for target in ["docs/b.md", "docs/c.md"] {
        let run = w.baton(&["unchanged", target, REASON]);
        assert_eq!(run.code, 0, "{run}");
    }
    let hook = w.hook(r#"{"session_id": "s", "stop_hook_active": false}"#, &[]);
    assert_eq!(hook.code, 0, "{hook}");
    assert_eq!(hook.stdout, "{}\n");
    let (repo, id, run) = w.release();
    assert_eq!(run.code, 0, "{run}");
    let state = status(&repo, &id);
    assert_eq!(
        attempt_field(&state, "executor", "hook_blocks"),
        [Value::Null]
    );
}

/// The agent can write its attempt's directory: an `agent.lock` it made a named pipe is refused
/// at once by the hook (exit 1, the non-blocking "cannot decide") and by `unchanged`, where
/// opening it blocked both for ever; with the pipe gone both work again.
#[test]
fn an_agent_lock_that_is_a_named_pipe_is_refused_without_waiting() {
    let w = Waiting::start();
    let lock = run_dir(&w.repo, &w.id).join("attempts/executor-1/agent.lock");
    let made = std::process::Command::new("mkfifo").arg(&lock).status();
    assert!(made.unwrap().success(), "mkfifo {}", lock.display());
    let input = r#"{"session_id": "s", "stop_hook_active": false}"#;
    let hook = w.hook(input, &[]);
    assert_eq!(hook.code, 1, "{hook}");
    assert_eq!(hook.stdout, "", "{hook}");
    assert!(
        hook.stderr.starts_with("error: cannot open ")
            && hook.stderr.contains("agent.lock")
            && hook.stderr.contains("named pipe (FIFO)"),
        "{hook}"
    );
    let unchanged = w.baton(&["unchanged", "docs/b.md", REASON]);
    assert_ne!(unchanged.code, 0, "{unchanged}");
    assert!(
        unchanged.stderr.contains("named pipe (FIFO)"),
        "{unchanged}"
    );
    std::fs::remove_file(&lock).unwrap();
    let hook = w.hook(input, &[]);
    assert_eq!(hook.code, 0, "{hook}");
    assert!(hook.stdout.contains(r#""decision":"block""#), "{hook}");
    let unchanged = w.baton(&["unchanged", "docs/b.md", REASON]);
    assert_eq!(unchanged.code, 0, "{unchanged}");
    let (_repo, _id, run) = w.release();
    assert_eq!(run.code, 1, "docs/c.md is still uncovered: {run}");
}

/// Every target covered, but the worktree holds a named pipe the attempt's snapshot cannot
/// record (so its end would record it `failed`): `check` says it would not pass (exit 1, naming
/// the path, also in `--json`) and the hook blocks naming it; with the pipe gone both let the
/// agent stop, and the attempt passes.
#[test]
fn a_path_the_snapshot_cannot_record_fails_the_check_and_blocks_the_hook() {
    let w = Waiting::start();
    for target in ["docs/b.md", "docs/c.md"] {
        let run = w.baton(&["unchanged", target, REASON]);
        assert_eq!(run.code, 0, "{run}");
    }
    let pipe = w.worktree.join("docs/scratch.pipe");
    let made = std::process::Command::new("mkfifo").arg(&pipe).status();
    assert!(made.unwrap().success(), "mkfifo {}", pipe.display());

    let check = w.baton(&["check"]);
    assert_eq!(check.code, 1, "{check}");
    assert!(
        check.stdout.contains(
            "if the attempt ended now, its snapshot does not hold 1 path(s) git cannot record, \
             which are only in the worktree: docs/scratch.pipe (a FIFO: git records only regular \
             files, symbolic links and directories)"
        ) && check.stdout.contains("the attempt would fail: ")
            && check
                .stdout
                .contains("hint: remove or replace each path git cannot record"),
        "{check}"
    );
    let json = w.baton(&["check", "--json"]);
    assert_eq!(json.code, 1, "{json}");
    let value: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(value["passed"], false, "{json}");
    assert_eq!(value["coverage"]["passed"], true, "{json}");
    assert_eq!(
        value["unrecorded"][0]["path"], "docs/scratch.pipe",
        "{json}"
    );

    let input = r#"{"session_id": "s", "stop_hook_active": false}"#;
    let hook = w.hook(input, &[]);
    assert_eq!(hook.code, 0, "{hook}");
    let answer: Value = serde_json::from_str(&hook.stdout).unwrap();
    assert_eq!(answer["decision"], "block", "{hook}");
    let reason = answer["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("git-baton: this attempt would fail. ")
            && reason.contains("docs/scratch.pipe"),
        "{reason}"
    );

    std::fs::remove_file(&pipe).unwrap();
    let check = w.baton(&["check"]);
    assert_eq!(check.code, 0, "{check}");
    assert!(!check.stdout.contains("would fail"), "{check}");
    let json = w.baton(&["check", "--json"]);
    assert!(!json.stdout.contains("unrecorded"), "{json}");
    let hook = w.hook(input, &[]);
    assert_eq!(hook.code, 0, "{hook}");
    assert_eq!(hook.stdout, "{}\n");
    let (_repo, _id, run) = w.release();
    assert_eq!(run.code, 0, "{run}");
}
