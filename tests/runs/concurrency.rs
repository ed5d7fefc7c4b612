//! Concurrency: one process drives a run; one key makes one run.

use super::*;

/// While a process drives a run, `resume` from another process is refused with exit 3 and
/// names the holder; `status` shows who drives it.
#[test]
fn a_second_process_cannot_drive_a_busy_run() {
    let scratch_dir = scratch();
    let pid_file = outside(&scratch_dir, "agent.pid");
    let slow = Actor::agent("slow").pid(&pid_file).sleep("1.5").edit_all();
    let repo = repo_running(&[slow], "");
    let child = spawn(&repo, &["run", "plans/fix.md"]);
    let pid = child.id();
    wait_for_line(&pid_file);
    let id = wait_for_run(&repo);

    let busy = repo.baton(["resume", &id]);
    assert_eq!(busy.code, 3, "{busy}");
    let busy = busy
        .to_string()
        .replace(&format!("pid {pid} "), "pid <PID> ");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let busy = if host.is_empty() {
        busy
    } else {
        busy.replace(&format!(" on {host})"), " on <HOST>)")
    };
    assert_snapshot!(busy, @r"
        exit: 3
        --- stderr
        run 1mnbe80fdk
        error: run 1mnbe80fdk is busy: `git baton run` (pid <PID> on <HOST>) has driven it since 2026-01-01T00:00:02Z
        hint: wait for it to finish, or stop it with `git baton stop 1mnbe80fdk`
        ");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "running");
    assert_eq!(state["stale"], false);
    assert_eq!(state["lock"]["pid"], pid);
    assert_eq!(state["lock"]["command"], "git baton run");

    let run = wait(&repo, child);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(status(&repo, &id)["status"], "review");
}

/// Two `run --key K` at once make one run: both print its id. The same key with another plan
/// is a conflict (exit 2); with the same plan, later, it returns the run.
#[test]
fn the_same_key_from_two_processes_makes_one_run() {
    let repo = repo_running(&[Actor::agent("slowish").sleep("1").edit_all()], "");
    let first = spawn(&repo, &["run", "plans/fix.md", "--key", "ticket-42"]);
    let second = spawn(&repo, &["run", "plans/fix.md", "--key", "ticket-42"]);
    let (first, second) = (wait(&repo, first), wait(&repo, second));
    let ids = [first.run_id(), second.run_id()];
    assert_eq!(ids[0], ids[1], "{first}\n{second}");
    let id = ids[0].clone();
    assert_eq!(
        run_entries(&repo),
        std::slice::from_ref(&id),
        "exactly one run directory"
    );
    assert_eq!(branches(&repo).lines().count(), 1);
    assert_eq!(worktrees(&repo).len(), 2, "main and the run's");

    // One created and drove it; the other found it by its key while it was being driven.
    let (creator, finder) = if first.stderr.contains("note: key") {
        (second, first)
    } else {
        (first, second)
    };
    assert_eq!(creator.code, 0, "{creator}");
    assert!(!creator.stderr.contains("note: key"), "{creator}");
    let finder_text = finder.to_string();
    assert!(
        finder_text.starts_with(&format!(
            "exit: 3\n--- stderr\nrun {id}\nnote: key `ticket-42` names this existing run ("
        )),
        "a run that a live process drives is busy (exit 3), whatever its status:\n{finder_text}"
    );

    // Later, the same key and plan return the run, now in review.
    let again = repo.baton(["run", "plans/fix.md", "--key", "ticket-42"]);
    assert_eq!(
        again.to_string(),
        format!(
            "exit: 0\n--- stderr\nrun {id}\nnote: key `ticket-42` names this existing run (review); not creating another\n"
        )
    );

    // The same key with a different plan is a conflict.
    repo.write(
        "plans/other.md",
        "---\ntargets: [docs/a.md]\n---\nSomething else.\n",
    );
    let conflict = repo.baton(["run", "plans/other.md", "--key", "ticket-42"]);
    assert_snapshot!(conflict.to_string().replace(&id, "<ID>"), @r"
    exit: 2
    --- stderr
    error: key `ticket-42` already names run <ID> of plan plans/fix.md, with a different plan
    hint: use another --key for another plan, or the same plan to get that run back
    ");
    assert_eq!(run_entries(&repo), [id]);
}
