//! The lease across machines: a driver killed with SIGKILL leaves its lease on the remote;
//! another machine is refused while it holds and takes the run over once it expired, and the
//! RunState records the takeover. A driver cut off from the remote stops before its lease ends;
//! one that drove on offline (`sync: push`) has diverged.

use super::*;

/// How long a lease lasts in this test: long enough for machine B's refused attempt to come
/// while it holds on a loaded machine, short enough for a quick test.
const LEASE: Duration = Duration::from_secs(4);

#[test]
fn a_lease_left_by_a_killed_driver_holds_then_expires_and_is_taken_over() {
    let world = World::new(Transport::File, &format!("lease: {}s\n", LEASE.as_secs())).unwrap();
    let (a, id) = world.rate_limited_and_pushed();

    // A resumes the published run with an actor that sleeps; once the actor runs, the lease is
    // taken and published. Then the driver dies without a word, and its actor with it.
    let driver = a.live_spawn(["resume", id.as_str(), "--actor", "executor=sleeper"]);
    let agent = wait_for_line(&world.scratch("sleeper.pid"));
    let leased = world.state_on_origin(&id);
    assert!(
        leased["lease"].is_object(),
        "the lease is published before the actor runs: {leased:#}"
    );
    // The record that took the lease was published before the attempt began; the first
    // renewal (a third of the lease later) publishes the running attempt, which is what the
    // takeover must close as a crash.
    let deadline = Instant::now() + LIVENESS;
    let leased = loop {
        let state = world.state_on_origin(&id);
        if state["status"] == "running" {
            break state;
        }
        assert!(Instant::now() < deadline, "never renewed: {state:#}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        attempt_field(&leased, "executor", "actor"),
        ["partial", "sleeper"]
    );
    kill9(&driver.id().to_string());
    kill9(&format!("-{agent}"));
    let killed = wait(&a, driver);
    assert_ne!(killed.code, 0, "{killed}");
    let killed_at = Instant::now();
    // The lease as the dead driver last renewed it.
    let left = world.state_on_origin(&id)["lease"].clone();
    assert_eq!(left["holder"], leased["lease"]["holder"], "{left:#}");

    // B, while the lease holds: refused with exit 3, naming the holder; nothing changes.
    let b = world.origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    let record = format!("refs/baton/runs/{id}/record");
    let on_origin = world.origin.rev(&record);
    let refused = b.live(["resume", &id, "--actor", "executor=finisher"]);
    assert!(
        killed_at.elapsed() < LEASE,
        "too slow to see the lease hold ({:?}): the machine is overloaded",
        killed_at.elapsed()
    );
    assert_leased(&refused, &id);
    assert_eq!(
        world.origin.rev(&record),
        on_origin,
        "the origin is untouched"
    );

    // After the lease expired B takes the run over (bounded: the lease and a margin).
    let deadline = killed_at + LEASE + LIVENESS;
    std::thread::sleep(Duration::from_millis(250));
    let taken = resume_once_free(&b, &id, deadline);
    assert_eq!(taken.code, 0, "{taken}");
    assert!(
        killed_at.elapsed() >= LEASE - Duration::from_millis(500),
        "taken over before the lease could have expired ({:?})",
        killed_at.elapsed()
    );

    for state in [status(&b, &id), world.state_on_origin(&id)] {
        assert_eq!(state["status"], "review", "{state:#}");
        let takeovers = state["takeovers"].as_array().unwrap_or_else(|| {
            panic!("no takeovers in {state:#}");
        });
        assert_eq!(takeovers.len(), 1, "{state:#}");
        let takeover = &takeovers[0];
        assert_eq!(takeover["from_holder"], left["holder"], "{state:#}");
        assert_eq!(takeover["from_host"], left["host"], "{state:#}");
        assert_eq!(takeover["expired_at"], left["until"], "{state:#}");
        assert_ne!(takeover["holder"], takeover["from_holder"], "{state:#}");
        assert!(takeover["at"].is_string(), "{state:#}");
        assert_executor_attempts(
            &state,
            &[
                ("partial", "rate_limited"),
                ("sleeper", "interrupted"),
                ("finisher", "succeeded"),
            ],
        );
        assert_eq!(attempts(&state, "executor")[1]["cause"], "crash");
        assert!(
            state["lease"].is_null(),
            "released at the end: {}",
            state["lease"]
        );
    }
}

/// A driver cut off from the remote: its renewals fail, and before its lease expires it stops
/// its actor and exits 3 by itself, so that another machine may take the run over without two
/// drivers at once. Another machine does, after the lease expired, and drives the run to review;
/// the cut-off clone, back in reach, is merely behind and catches up.
#[test]
fn a_driver_cut_off_from_the_remote_stops_before_its_lease_expires() {
    let world = World::new(Transport::File, &format!("lease: {}s\n", LEASE.as_secs())).unwrap();
    let url = world.origin.url.clone();
    // A loses the network: its remote points nowhere.
    let (a, id) = driver_cut_off(&world, |a| {
        let nowhere = a.tmp().join("unreachable.git");
        a.git(["remote", "set-url", "origin", nowhere.to_str().unwrap()]);
    });

    // B takes the run once A's lease expired, and drives it to review.
    let b = world.origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    let deadline = Instant::now() + LEASE + LIVENESS;
    let taken = resume_once_free(&b, &id, deadline);
    assert_eq!(taken.code, 0, "{taken}");
    let state = world.state_on_origin(&id);
    assert_eq!(state["status"], "review", "{state:#}");
    assert_eq!(
        state["takeovers"].as_array().map(Vec::len),
        Some(1),
        "{state:#}"
    );

    // A, back in reach, is behind: it catches up and finishes B's work.
    a.git(["remote", "set-url", "origin", &url]);
    assert_eq!(a.live(["fetch"]).code, 0);
    assert_eq!(status(&a, &id)["sync"], "behind");
    let finish = a.live(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    let doc_b = a.git(["show", &format!("baton/{id}:docs/b.md")]);
    assert!(doc_b.contains(B_WORK), "{doc_b}");
}

/// A remote that hangs instead of refusing (a connection that stays open, a server that never
/// answers): git would wait on it for ever, holding the renewal, and with it the driver's stop,
/// past the lease. The push is stopped in time, with what it started, and the driver stops
/// before its lease expires as when the remote is out of reach.
#[test]
fn a_driver_whose_remote_hangs_stops_before_its_lease_expires() {
    let world = World::new(Transport::File, &format!("lease: {}s\n", LEASE.as_secs())).unwrap();
    let pid_file = world.scratch("receive-pack.pid");
    let hang = world.scratch("hang.sh");
    // Bounded, so that a regression leaves nothing running for long.
    std::fs::write(
        &hang,
        format!("echo $$ >'{}'\nexec sleep 60\n", pid_file.display()),
    )
    .unwrap();
    let (_a, _id) = driver_cut_off(&world, |a| {
        a.git([
            "config",
            "remote.origin.receivepack",
            &format!("sh '{}'", hang.display()),
        ]);
    });
    let receive_pack = wait_for_line(&pid_file);
    assert!(
        gone_within(&receive_pack, LIVENESS),
        "the hanging receive-pack (pid {receive_pack}) was left running"
    );
}

/// Starts a driver in machine A on a run with a lease, waits until it has renewed, `cut`s A off
/// from the remote, and checks that the driver stopped itself with exit 3 before its lease (as
/// last published) ended, and that its actor is gone.
fn driver_cut_off(world: &World, cut: impl FnOnce(&TestRepo)) -> (TestRepo, String) {
    let (a, id) = world.rate_limited_and_pushed();
    let driver = a.live_spawn(["resume", id.as_str(), "--actor", "executor=sleeper"]);
    let agent = wait_for_line(&world.scratch("sleeper.pid"));
    let deadline = Instant::now() + LIVENESS;
    while world.state_on_origin(&id)["status"] != "running" {
        assert!(Instant::now() < deadline, "never renewed");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The lease as last published: A's driver must stop before it ends.
    let until: jiff::Timestamp = world.state_on_origin(&id)["lease"]["until"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    cut(&a);
    let stopped = wait(&a, driver);
    let stopped_at = jiff::Timestamp::now();
    assert_eq!(stopped.code, 3, "{stopped}");
    assert!(
        stopped.stderr.contains(&format!(
            "error: run {id}: its lease could not be renewed in time"
        )),
        "{stopped}"
    );
    assert!(
        stopped_at < until,
        "stopped at {stopped_at}, after its lease ended at {until}"
    );
    assert!(
        gone_within(&agent, LIVENESS),
        "the stopped driver's actor (pid {agent}) still runs"
    );
    (a, id)
}

/// A driver that works offline with `sync: push` keeps its saves locally, and the machine that
/// took its expired lease over advances the run on the remote: the two records have diverged.
/// `status` says so, `doctor` reports it, and `resume`, `finish` and `push` refuse it with exit
/// 3, while the remote keeps the record of the machine that held the lease.
///
/// The lease is long here and the actor ends when told: what A does offline (the rest of the
/// attempt, the snapshot, the gate, the reporter) must fit in what is left of its lease, or A
/// rightly stops so that another machine may take over — on a loaded machine a short lease
/// would test the load, not the divergence.
#[test]
fn a_clone_that_drove_offline_past_its_lease_has_diverged() {
    const OFFLINE_LEASE: Duration = Duration::from_secs(20);
    let tail = format!("lease: {}s\nsync: push\n", OFFLINE_LEASE.as_secs());
    let world = World::new(Transport::File, &tail).unwrap();
    let (a, id) = world.rate_limited_and_pushed();
    let driver = a.live_spawn(["resume", id.as_str(), "--actor", "executor=waiting"]);
    wait_for_line(&world.scratch("waiting.pid"));
    let deadline = Instant::now() + LIVENESS;
    while world.state_on_origin(&id)["status"] != "running" {
        assert!(Instant::now() < deadline, "never published running");
        std::thread::sleep(Duration::from_millis(20));
    }
    // A loses the network: its git sends the remote's url nowhere. Through the user's
    // configuration, not the repository's, which an attempt may not see change.
    let url = world.origin.url.clone();
    let nowhere = a.tmp().join("unreachable.git");
    let rewrite = format!("url.{}.insteadOf", nowhere.display());
    a.git(["config", "--global", &rewrite, &url]);
    // Offline, A's actor ends and A saves the rest of the run here only.
    std::fs::write(world.scratch("go"), "").unwrap();
    let offline = wait(&a, driver);
    assert_eq!(status(&a, &id)["status"], "review", "{offline}");

    let b = world.origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    let deadline = Instant::now() + OFFLINE_LEASE + LIVENESS;
    let taken = resume_once_free(&b, &id, deadline);
    assert_eq!(taken.code, 0, "{taken}");
    let record = format!("refs/baton/runs/{id}/record");
    let b_record = world.origin.rev(&record);
    assert_eq!(b_record, local_rev(&b, &record));

    a.git(["config", "--global", "--unset", &rewrite]);
    assert_eq!(a.live(["fetch"]).code, 0);
    assert_eq!(status(&a, &id)["sync"], "diverged");
    let doctor = a.live(["doctor", "--json"]);
    assert_eq!(doctor.code, 1, "{doctor}");
    let kinds: Vec<Value> = doctor.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].clone())
        .collect();
    assert!(kinds.contains(&Value::from("diverged_record")), "{doctor}");
    for args in [["resume", &id], ["finish", &id]] {
        let refused = a.live(args);
        assert_eq!(refused.code, 3, "{refused}");
        assert!(refused.stderr.contains("have diverged"), "{refused}");
    }
    let refused = a.live(["push", &id]);
    assert_eq!(refused.code, 3, "{refused}");
    assert!(
        refused.stderr.contains(&format!("error: run {id}: ")),
        "{refused}"
    );
    assert_eq!(world.origin.rev(&record), b_record, "the remote kept B's");
}
