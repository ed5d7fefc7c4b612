//! The terminal going away: a closed stdout or stderr (`… | head -1`), and SIGHUP from a closed
//! session. git-baton never panics for it, and the RunState says what happened: a run nobody
//! reads goes on to its end; a hang-up interrupts the attempt as SIGTERM does, unless git-baton
//! was started to outlive its terminal (`nohup`).

use std::io::{BufRead, BufReader, Read};
use std::process::Stdio;

use super::*;

/// Which ends of git-baton's output the reader keeps.
#[derive(Debug, Clone, Copy)]
enum Reader {
    /// stdout's pipe is closed before git-baton starts; stderr is read.
    StdoutClosed,
    /// stderr's pipe is closed before git-baton starts; stdout is read.
    StderrClosed,
    /// Both pipes are closed before git-baton starts.
    BothClosed,
    /// `2>&1 | head -1`: one pipe for both, closed after the first line.
    FirstLineOnly,
}

/// An actor that prints more than a pipe holds on both streams, so that writes after the reader
/// left fail for certain, then does the whole plan.
fn loud_worker() -> Actor {
    worker().verbs(&["flood", "200000"]).warn("and a warning")
}

/// Waits (boundedly) for `child` and returns its exit code, `-1` for a signal.
fn exit_code(mut child: Child) -> i32 {
    let deadline = Instant::now() + LIVENESS;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("git-baton did not exit within {LIVENESS:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `run` whose output nobody (or only one line of it) is read: no panic, exit 0, and the run
/// recorded in `review`, not stale, with the actor's whole output in its logs.
#[test]
fn a_run_whose_output_nobody_reads_completes_and_is_recorded() {
    for reader in [
        Reader::StdoutClosed,
        Reader::StderrClosed,
        Reader::BothClosed,
        Reader::FirstLineOnly,
    ] {
        let repo = repo_running(&[loud_worker()], "");
        let args: &[&str] = match reader {
            // The JSON on stdout has nowhere to go either.
            Reader::BothClosed => &["run", "plans/fix.md", "--json"],
            _ => &["run", "plans/fix.md"],
        };
        let mut cmd = repo.baton_command(&repo.root, &[], args);
        cmd.stdin(Stdio::null());
        let closed = || {
            let (read, write) = std::io::pipe().unwrap();
            drop(read);
            Stdio::from(write)
        };
        let (read, write) = std::io::pipe().unwrap();
        let mut kept = Some(read);
        match reader {
            Reader::StdoutClosed => cmd.stdout(closed()).stderr(write),
            Reader::StderrClosed => cmd.stdout(write).stderr(closed()),
            Reader::BothClosed => {
                kept = None;
                cmd.stdout(closed()).stderr(closed())
            }
            Reader::FirstLineOnly => cmd.stdout(write.try_clone().unwrap()).stderr(write),
        };
        let child = cmd.spawn().unwrap();
        // The command holds the write ends until it is dropped: end-of-file needs them gone.
        drop(cmd);
        let seen = match (reader, kept) {
            (Reader::FirstLineOnly, Some(read)) => {
                let mut line = String::new();
                BufReader::new(read).read_line(&mut line).unwrap();
                line
            }
            (_, Some(mut read)) => {
                let mut all = Vec::new();
                read.read_to_end(&mut all).unwrap();
                String::from_utf8_lossy(&all).into_owned()
            }
            (_, None) => String::new(),
        };
        let code = exit_code(child);
        assert_eq!(code, 0, "{reader:?}: exit {code}, output:\n{seen}");
        assert!(
            !seen.contains("panicked") && !seen.contains("Broken pipe"),
            "{reader:?}:\n{seen}"
        );
        if matches!(reader, Reader::StdoutClosed | Reader::FirstLineOnly) {
            assert!(seen.starts_with("run "), "{reader:?}: {seen}");
        }

        let id = wait_for_run(&repo);
        let state = status(&repo, &id);
        assert_eq!(state["status"], "review", "{reader:?}");
        assert_eq!(state["stale"], false, "{reader:?}");
        assert_eq!(attempt_field(&state, "executor", "outcome"), ["succeeded"]);
        let dir = run_dir(&repo, &id).join("attempts/executor-1");
        let stdout_log = text(&dir.join("stdout.log"));
        assert!(
            stdout_log.starts_with("working on the grading documents\n")
                && stdout_log.ends_with(&"x".repeat(1000)),
            "{reader:?}: the log keeps what the terminal lost"
        );
        assert_eq!(text(&dir.join("stderr.log")), "and a warning\n");
    }
}

/// SIGHUP to git-baton during an attempt is recorded like SIGTERM (see
/// `a_signal_to_git_baton_interrupts_the_attempt_and_exits_130`); started with SIGHUP ignored,
/// as `nohup` starts it, git-baton keeps ignoring it and the run goes on to review.
#[test]
fn a_hang_up_is_ignored_when_git_baton_was_started_to_outlive_its_terminal() {
    let scratch_dir = scratch();
    let pid_file = outside(&scratch_dir, "agent.pid");
    let slow = worker().pid(&pid_file).sleep("1");
    let repo = repo_running(&[slow], "");
    let nohup = ["sh", "-c", "trap '' HUP; exec \"$@\"", "sh"];
    let mut cmd = repo.baton_command(&repo.root, &nohup, ["run", "plans/fix.md"]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    wait_for_line(&pid_file);
    let id = wait_for_run(&repo);
    assert!(kill("HUP", &child.id().to_string()));
    let run = wait(&repo, child);
    assert_eq!(run.code, 0, "{run}");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "review");
    assert_eq!(attempt_field(&state, "executor", "outcome"), ["succeeded"]);
}

/// Every command whose reader has gone ends as it would have with one: the same exit code, and
/// nothing on stderr but what it says anyway — no panic, no "Broken pipe".
#[test]
fn every_command_ends_the_same_when_its_stdout_is_closed() {
    let repo = repo_running(&[loud_worker()], "");
    let id = repo.baton(["run", "plans/fix.md"]).run_id();
    let commands: Vec<Vec<&str>> = vec![
        vec!["status", &id],
        vec!["status", "--json", &id],
        vec!["list"],
        vec!["list", "--json"],
        vec!["log", &id, "--stage", "executor"],
        vec!["log", "--json", &id, "--stage", "executor"],
        vec!["review", &id],
        vec!["diff", &id, "--stage", "executor"],
        vec!["doctor"],
        vec!["verify", "plans/fix.md"],
        vec!["--help"],
        vec!["status", "no-such-run"],
    ];
    for args in commands {
        let open = repo.baton(&args);
        let mut cmd = repo.baton_command(&repo.root, &[], &args);
        let (read, write) = std::io::pipe().unwrap();
        drop(read);
        let (mut errors, error_end) = std::io::pipe().unwrap();
        cmd.stdin(Stdio::null()).stdout(write).stderr(error_end);
        let child = cmd.spawn().unwrap();
        drop(cmd);
        let mut stderr = String::new();
        errors.read_to_string(&mut stderr).unwrap();
        let code = exit_code(child);
        assert_eq!(code, open.code, "{args:?}: {stderr}");
        assert_eq!(stderr, open.stderr, "{args:?}");
    }
}
