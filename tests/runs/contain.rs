//! What an attempt leaves running is ended before the attempt is recorded, whatever it did to
//! hide: here an orphan that scrubbed its environment, left the actor's session and put its
//! output on `/dev/null`, which only git-baton's adopting it as a child subreaper finds.

use super::*;

/// The reviewer's reproduction: the actor starts, through `setsid env -i`, a shell whose
/// background subshell waits a second and then appends to `docs/a.md` for ever; the shell exits
/// at once, so the subshell re-parents to git-baton with no token, no pipe and no group of the
/// attempt. Once `run` has recorded the run, it is gone and the file stops changing.
#[test]
fn an_orphan_in_a_session_of_its_own_is_ended_before_the_run_is_recorded() {
    if !cfg!(target_os = "linux") {
        println!(
            "skipped: an_orphan_in_a_session_of_its_own_is_ended_before_the_run_is_recorded: \
             no child subreaper on this platform"
        );
        return;
    }
    let out = scratch();
    let pid_file = outside(&out, "orphan.pid");
    // The subshell writes its own pid (a child's parent) so that the test can check it is gone;
    // bounded (30 s) so that a regression leaves no writer for ever.
    let orphan = outside(&out, "orphan.sh");
    std::fs::write(
        &orphan,
        "(sh -c 'echo $PPID' >\"$P\"; sleep 1; n=0; \
         while [ \"$n\" -lt 300 ]; do echo z >>\"$W/docs/a.md\"; sleep 0.1; n=$((n + 1)); done) \
         </dev/null >/dev/null 2>&1 &\n",
    )
    .unwrap();
    let actor = Actor::shell(
        "worker",
        &format!(
            "for f in a b c; do echo new >>docs/$f.md; done; \
             setsid env -i PATH=\"$PATH\" W=\"$PWD\" P='{}' sh '{}'",
            pid_file.display(),
            orphan.display()
        ),
    );
    let repo = repo_running(&[actor], "");
    let (id, _) = repo.run_plan("plans/fix.md", 0);
    assert_eq!(status(&repo, &id)["status"], "review");

    let doc = repo.path(&format!(".baton/worktrees/{id}/docs/a.md"));
    let recorded = text(&doc);
    // Past the second the subshell waits before it writes, with room to spare.
    std::thread::sleep(Duration::from_millis(1500));
    let pid = std::fs::read_to_string(&pid_file).ok();
    // A zombie is gone: it only waits to be reaped.
    let alive = pid.as_deref().map(str::trim).is_some_and(|pid| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .is_some_and(|state| state != "Z" && state != "X")
        })
    });
    if alive {
        kill("KILL", pid.as_deref().unwrap().trim());
    }
    assert!(!alive, "the orphan outlived the attempt");
    assert_eq!(
        text(&doc),
        recorded,
        "docs/a.md changed after the run was recorded"
    );
}

/// Inside a container the session leader often lives in a parent pid namespace, and the
/// session id then reads as 0: CI ran the demo that way and `run` panicked (exit 101) while it
/// set up containment. Reproduced with a pid namespace of its own, where `unshare` may make one.
#[test]
fn a_session_id_of_zero_is_no_panic() {
    // As root, or (most CI runners) as a user in a user namespace of its own.
    let usable = [
        &["unshare", "--pid", "--fork", "--kill-child", "--mount-proc"][..],
        &[
            "unshare",
            "--user",
            "--map-root-user",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount-proc",
        ],
    ]
    .into_iter()
    .find(|wrapper| {
        Command::new(wrapper[0])
            .args(&wrapper[1..])
            .arg("true")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    let Some(wrapper) = usable else {
        println!(
            "skipped: a_session_id_of_zero_is_no_panic: unshare cannot make a pid namespace here"
        );
        return;
    };
    let repo = repo_running(
        &[Actor::shell(
            "worker",
            "for f in a b c; do echo new >>docs/$f.md; done",
        )],
        "",
    );
    let child = repo
        .baton_command(&repo.root, wrapper, ["run", "plans/fix.md"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let run = repo.baton_wait(child, Duration::from_secs(120));
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(status(&repo, &run.run_id())["status"], "review");
}

/// Whatever a test starts ends with the test, even when it never waits for it (a test that
/// failed or panicked): dropping the repository kills every process started in it — here a
/// driver and its actor, which would otherwise sleep on for a minute.
#[test]
fn a_dropped_test_repository_ends_what_it_started() {
    let out = scratch();
    let pid_file = outside(&out, "agent.pid");
    let repo = repo_running(&[worker().pid(&pid_file).sleep("60")], "");
    let mut driver = spawn(&repo, &["run", "plans/fix.md"]);
    let agent: i32 = wait_for_line(&pid_file).parse().unwrap();
    let driver_pid = driver.id() as i32;
    let started: Vec<git_baton::procs::Proc> = [driver_pid, agent]
        .into_iter()
        .filter_map(git_baton::procs::stat)
        .collect();
    assert_eq!(started.len(), 2, "{started:?}");
    drop(repo);
    for proc in &started {
        let deadline = Instant::now() + LIVENESS;
        while !git_baton::procs::ended(proc) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(git_baton::procs::ended(proc), "{proc:?} outlived its test");
    }
    // Reaped: killed, it is a zombie child of the test until then.
    let _ = driver.wait();
}
