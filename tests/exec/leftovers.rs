//! Nothing the attempt started outlives it: children that left its session, process group or
//! worktree, orphans the subreaper adopted, and what a crashed attempt left running, found by
//! its token when the run resumes (issue 9, item 3).

use super::*;

/// A child that leaves the actor's session and process group (`setsid`), with its output on
/// /dev/null, and keeps writing after the actor exited: once `run` has returned, it is dead and
/// the file it wrote stops changing.
#[test]
fn a_setsid_child_that_keeps_writing_is_ended_with_the_attempt() {
    let dir = Dir::new();
    let ticks = dir.path("ticks.txt");
    let writer = dir.path("writer.pid");
    let finished = case(&format!(
        "pid {{worktree}}/leader.pid; setsid-writer {} {}; say leaving it running",
        ticks.display(),
        writer.display()
    ))
    .run(&dir)
    .unwrap();

    assert_eq!(finished.outcome, Ended::Succeeded);
    let (pid, sid) = dir
        .read("writer.pid")
        .trim()
        .split_once(' ')
        .map(|(p, s)| (p.to_string(), s.to_string()))
        .unwrap();
    assert_eq!(pid, sid, "the writer leads a session of its own");
    assert_ne!(pid, dir.read("work/leader.pid").trim());
    assert!(ended_now(&pid), "the setsid child outlived the attempt");
    assert!(!still_growing(&ticks));
}

/// An orphan with no mark of the attempt left — no token (`env -i`), no pipe (`/dev/null`), in
/// a session it does not lead (a background subshell of a `setsid` shell that exited) —
/// re-parents to the subreaper running the attempt, which finds it among its children and ends
/// it with the attempt.
#[test]
fn an_orphan_adopted_by_the_subreaper_is_ended_with_the_attempt() {
    if !cfg!(target_os = "linux") {
        println!(
            "skipped: an_orphan_adopted_by_the_subreaper_is_ended_with_the_attempt: no child \
             subreaper on this platform"
        );
        return;
    }
    let dir = Dir::new();
    let mut case = case("");
    let pid_file = dir.path("orphan.pid");
    case.actor.command = vec![
        "sh".into(),
        "-c".into(),
        format!(
            "setsid env -i PATH=\"$PATH\" sh -c '(sleep 30) </dev/null >/dev/null 2>&1 & echo $! >{}'; \
             echo started",
            pid_file.display()
        ),
    ];
    let finished = case.run(&dir).unwrap();
    assert_eq!(finished.outcome, Ended::Succeeded);
    assert_eq!(dir.read("stdout.log"), "started\n");
    assert!(
        ended_now(&dir.read("orphan.pid")),
        "the orphan outlived the attempt"
    );
}

/// A child that left the worktree (`cd /`) is ended with the attempt.
#[test]
fn a_child_that_left_the_worktree_is_ended_with_the_attempt() {
    let dir = Dir::new();
    let finished = case("cd-sleep 30 {worktree}/child.pid; say bye")
        .run(&dir)
        .unwrap();
    assert_eq!(finished.outcome, Ended::Succeeded);
    assert!(ended_now(&dir.read("work/child.pid")));
}

/// A child that scrubbed its environment (so it carries no token) but still holds the output
/// pipe, after its parent exited: found by the pipe, ended.
#[test]
fn a_child_without_the_token_that_holds_the_pipes_is_ended() {
    let dir = Dir::new();
    let mut case = case("");
    let pid_file = dir.path("child.pid");
    case.actor.command = vec![
        "sh".into(),
        "-c".into(),
        format!(
            "setsid env -i sleep 30 & echo $! > '{}'; echo started",
            pid_file.display()
        ),
    ];
    let finished = case.run(&dir).unwrap();
    assert_eq!(finished.outcome, Ended::Succeeded);
    assert_eq!(dir.read("stdout.log"), "started\n");
    assert!(ended_now(&dir.read("child.pid")));
}

/// The token is recorded, atomically and before the actor starts, where the caller asked; the
/// actor (and everything it starts) carries it in its environment.
#[test]
fn the_token_is_recorded_before_the_actor_starts() {
    let dir = Dir::new();
    let token_file = dir.path("attempt.token");
    let mut case = case("");
    case.actor.command = vec![
        "sh".into(),
        "-c".into(),
        format!(
            "cat '{}' > token-seen-at-start; sh -c 'echo \"${}\"' > token-in-env",
            token_file.display(),
            exec::TOKEN_VAR
        ),
    ];
    case.token_file = Some(token_file.clone());
    let finished = case.run(&dir).unwrap();
    assert_eq!(finished.outcome, Ended::Succeeded);
    let token = dir.read("attempt.token");
    assert!(token.trim().len() > 16, "{token:?}");
    assert_eq!(dir.read("work/token-seen-at-start"), token);
    assert_eq!(dir.read("work/token-in-env"), token);
}

/// After a crash, before `actor.pid` was ever written: the token file alone finds what the
/// attempt left running — here a process that left the session and the worktree — and ends it.
#[test]
fn kill_leftovers_finds_a_crashed_attempt_by_its_token_alone() {
    let dir = Dir::new();
    // Unique per run: a fixed token would also find the leftovers of another run of this test
    // (a concurrent checkout, or an earlier run that was itself killed).
    let token = format!(
        "crashed-attempt-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    fs::write(dir.path("attempt.token"), format!("{token}\n")).unwrap();
    let pid_file = dir.path("left.pid");
    // The starter exits at once, as a dead driver's actor might have; what it started runs on.
    let status = std::process::Command::new("sh")
        .args([
            "-c",
            &format!(
                "cd / && setsid sleep 30 </dev/null >/dev/null 2>&1 & echo $! > '{}'",
                pid_file.display()
            ),
        ])
        .env(exec::TOKEN_VAR, &token)
        .status()
        .unwrap();
    assert!(status.success());
    let pid = dir.read("left.pid");
    assert!(!ended_now(&pid));

    let killed = exec::kill_leftovers(
        &dir.path("attempt.token"),
        &dir.path("actor.pid"),
        &dir.path("work"),
        Duration::from_secs(5),
    )
    .unwrap();
    assert_eq!(killed, 1);
    assert!(ended_now(&pid));
    // Nothing is left: a second call finds nothing.
    let again = exec::kill_leftovers(
        &dir.path("attempt.token"),
        &dir.path("actor.pid"),
        &dir.path("work"),
        Duration::from_secs(5),
    );
    assert_eq!(again.unwrap(), 0);
}

/// `kill -9` of the git-baton driving a run whose actor has a `setsid` grandchild writing a
/// file and a child that left the worktree: both outlive the driver; `git baton resume` ends
/// them before the resumed attempt starts (which records what it sees).
#[test]
fn resume_after_a_crash_ends_what_the_attempt_left_running_before_starting() {
    let scratch = tempfile::tempdir().unwrap();
    let at = |name: &str| scratch.path().join(name).to_str().unwrap().to_string();
    let (ticks, writer, cd, agent, seen) = (
        at("ticks.txt"),
        at("writer.pid"),
        at("cd.pid"),
        at("agent.pid"),
        at("seen.txt"),
    );
    let slow = argv(&[
        "setsid-writer",
        &ticks,
        &writer,
        "cd-sleep",
        "60",
        &cd,
        "pid",
        &agent,
        "sleep",
        "30",
    ]);
    let checker = argv(&["check-ended", &writer, &seen, "check-ended", &cd, &seen]);
    let repo = cli::repo(&format!(
        "actors:\n  slow:\n    command: {slow}\n  checker:\n    command: {checker}\n\
         pipeline:\n  - {{ stage: executor, actor: slow }}\n"
    ));
    let child = repo.baton_spawn(&repo.root, ["run", "plans/p.md"], &[]);
    // Written after the grandchild and the child have started.
    cli::wait_for_line(Path::new(&agent));
    cli::kill9(child.id());
    let run = repo.baton_wait(child, LIVENESS);
    assert_eq!(run.code, -1, "killed by a signal: {run}");
    let writer_pid = fs::read_to_string(&writer).unwrap();
    let writer_pid = writer_pid.split(' ').next().unwrap().to_string();
    let cd_pid = fs::read_to_string(&cd).unwrap();
    assert!(
        !ended_now(&writer_pid),
        "the setsid grandchild outlived its driver"
    );
    assert!(
        !ended_now(&cd_pid),
        "the child outside the worktree outlived its driver"
    );

    let id = repo.baton(["list", "--json"]).json()[0]["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let resumed = repo.baton(["resume", &id, "--actor", "executor=checker"]);
    assert_eq!(resumed.code, 0, "{resumed}");
    assert!(
        resumed
            .stderr
            .contains("process(es) the crashed attempt left running"),
        "{resumed}"
    );
    assert_eq!(fs::read_to_string(&seen).unwrap(), "ended\nended\n");
    assert!(ended_now(&writer_pid) && ended_now(&cd_pid));
    assert!(!still_growing(Path::new(&ticks)));
}
