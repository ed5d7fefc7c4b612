//! A signal to git-baton while it waits on a remote that never answers: every command that
//! talks to a remote (`fetch`, `push`, `resume` and `finish` of a published run, `clean
//! --remote`) forwards SIGINT, SIGTERM or SIGHUP to its git child, waits for it and exits 130,
//! and no process it started survives it. And the test fixtures' own daemon ends with them.

use std::process::{Child, Stdio};

use git_baton::procs::{self, Proc};

use super::*;
use crate::support::remote::{Silent, kill_group};

/// A git-baton started in a process group of its own, which is killed if the test ends before
/// it was waited for.
struct Started(Option<Child>);

impl Started {
    fn pid(&self) -> u32 {
        self.0.as_ref().unwrap().id()
    }

    fn wait(mut self, machine: &TestRepo) -> Run {
        wait(machine, self.0.take().unwrap())
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            kill_group(child.id());
            let _ = child.wait();
        }
    }
}

fn start(machine: &TestRepo, args: &[&str]) -> Started {
    let mut cmd = machine.live_command(&machine.root, args);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    Started(Some(cmd.spawn().unwrap()))
}

/// Waits (boundedly) until `silent` has accepted more than `before` connections.
fn wait_connected(silent: &Silent, before: usize, what: &str) {
    let deadline = Instant::now() + LIVENESS;
    while silent.accepted() <= before {
        assert!(
            Instant::now() < deadline,
            "{what}: no connection within {LIVENESS:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn cmdline(proc: &Proc) -> String {
    std::fs::read(format!("/proc/{}/cmdline", proc.pid))
        .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " "))
        .unwrap_or_default()
}

#[test]
fn a_signal_while_git_waits_on_a_silent_remote_stops_git_and_exits_130() {
    let world = World::new(Transport::File, "").unwrap();
    let (a, id) = world.rate_limited_and_pushed();
    let silent = Silent::new();
    a.git(["remote", "set-url", "origin", &silent.url()]);
    let refs_before = run_refs(&a);
    let commands: [&[&str]; 5] = [
        &["fetch"],
        &["push", &id],
        &["resume", &id],
        &["finish", &id],
        &["clean", "--remote", &id],
    ];
    for args in commands {
        for (signal, name) in [
            (rustix::process::Signal::TERM, "SIGTERM"),
            (rustix::process::Signal::INT, "SIGINT"),
            (rustix::process::Signal::HUP, "SIGHUP"),
        ] {
            let what = format!("git baton {} ({name})", args.join(" "));
            if name == "SIGHUP" && git_baton::signals::ignores(signal_hook::consts::SIGHUP) {
                // Started under `nohup`: git-baton inherits SIGHUP ignored and keeps it so, as
                // documented, and a SIGHUP then ends nothing.
                eprintln!("{what}: skipped, SIGHUP is ignored here");
                continue;
            }
            let before = silent.accepted();
            let started = start(&a, args);
            wait_connected(&silent, before, &what);
            let pid = started.pid() as i32;
            let tree = procs::descendants(pid);
            assert!(
                tree.iter().any(|p| cmdline(p).contains("git")),
                "{what}: no git child among {tree:?}"
            );
            let target = rustix::process::Pid::from_raw(pid).unwrap();
            rustix::process::kill_process(target, signal).unwrap();
            // Shown with a failure: a wait that times out names only the pid.
            eprintln!("{what}: signalled pid {pid}");
            let run = started.wait(&a);
            assert_eq!(run.code, 130, "{what}: {run}");
            assert!(
                run.stderr.contains(&format!("interrupted by {name}")),
                "{what}: {run}"
            );
            for proc in &tree {
                let deadline = Instant::now() + LIVENESS;
                while !procs::ended(proc) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(10));
                }
                assert!(
                    procs::ended(proc),
                    "{what}: {} survived git-baton: {}",
                    proc.pid,
                    cmdline(proc)
                );
            }
            assert_eq!(run_refs(&a), refs_before, "{what}");
        }
    }
    // Nothing was left held: with the remote back, the run is pushed and resumed as ever.
    a.git(["remote", "set-url", "origin", &world.origin.url]);
    assert_eq!(status(&a, &id)["status"], "rate_limited");
    let push = a.live(["push", &id]);
    assert_eq!(push.code, 0, "{push}");
}

/// What [`Origin`] starts for `Transport::Daemon` ends when it is dropped: the daemon and the
/// children it forked for connections, none of them left listening with ppid 1.
#[test]
fn a_dropped_origin_leaves_no_daemon_behind() {
    let Some(world) = World::new(Transport::Daemon, "") else {
        return;
    };
    let a = world.origin.machine();
    assert_eq!(a.live(["fetch"]).code, 0);
    let daemon = world
        .origin
        .daemon_pid()
        .expect("a daemon serves the origin") as i32;
    let port: u16 = world
        .origin
        .url
        .trim_start_matches("git://127.0.0.1:")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let group: Vec<Proc> = procs::list()
        .unwrap()
        .into_iter()
        .filter(|p| p.pgrp == daemon && !p.zombie)
        .collect();
    assert!(
        group.iter().any(|p| p.pid == daemon),
        "the daemon {daemon} is not among its group {group:?}"
    );
    let leader = group.iter().find(|p| p.pid == daemon).unwrap();
    assert!(
        cmdline(leader).contains("git-daemon"),
        "{}: the daemon is run directly, not through the `git` wrapper",
        cmdline(leader)
    );
    drop(a);
    drop(world);
    for proc in &group {
        let deadline = Instant::now() + LIVENESS;
        while !procs::ended(proc) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            procs::ended(proc),
            "{} survived: {}",
            proc.pid,
            cmdline(proc)
        );
    }
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "something still listens on port {port}"
    );
}
