//! `list --json` and `status --json` say where a run lives and which side is ahead: `remote`
//! (the remote's name) and `sync` (`local_only`, `remote_only`, `up_to_date`, `ahead`,
//! `behind`, `diverged`), both absent for a run never published.

use super::*;

/// The one run `list --json` shows with id `id`.
fn listed_run(machine: &TestRepo, id: &str) -> Value {
    let runs = listed(machine);
    let found: Vec<&Value> = runs.iter().filter(|r| r["run_id"] == id).collect();
    assert_eq!(found.len(), 1, "run {id} once in {runs:#?}");
    found[0].clone()
}

#[test]
fn list_and_status_say_where_a_run_lives_and_which_side_is_ahead() {
    let world = World::new(Transport::File, "").unwrap();
    let a = world.origin.machine();
    let run = a.live(["run", "plans/fix.md"]);
    assert_eq!(run.code, 1, "{run}");
    let id = run.run_id();

    // Never published: neither a remote nor a side ahead.
    let local = listed_run(&a, &id);
    assert_eq!(local["sync"], Value::Null, "{local:#}");
    assert_eq!(local["remote"], Value::Null, "{local:#}");

    // Pushed: up to date, on origin; `status --json` agrees with `list --json`. `push` without
    // names pushes the runs published already.
    let push = a.live(["push", &id]);
    assert_eq!(push.code, 0, "{push}");
    assert!(
        push.stderr.contains(&format!("pushed {id} to origin")),
        "{push}"
    );
    let again = a.live(["push"]);
    assert_eq!(again.code, 0, "{again}");
    assert!(
        again
            .stderr
            .contains(&format!("{id} is up to date on origin")),
        "{again}"
    );
    for shown in [listed_run(&a, &id), status(&a, &id)] {
        assert_eq!(shown["sync"], "up_to_date", "{shown:#}");
        assert_eq!(shown["remote"], "origin", "{shown:#}");
    }

    // B: nothing before fetching; after it, the run exists only on the remote.
    let b = world.origin.machine();
    assert!(listed(&b).is_empty(), "{:#?}", listed(&b));
    assert_eq!(b.live(["fetch"]).code, 0);
    let remote_only = listed_run(&b, &id);
    assert_eq!(remote_only["sync"], "remote_only", "{remote_only:#}");
    assert_eq!(remote_only["remote"], "origin", "{remote_only:#}");
    assert_eq!(status(&b, &id)["sync"], "remote_only");
    assert_eq!(status(&b, &id)["status"], "rate_limited");
    let human = b.live(["list"]);
    assert_eq!(human.code, 0, "{human}");
    assert!(human.stdout.contains(&id), "{human}");

    // B resumes it (and publishes as it drives): B is up to date, A is behind once it fetched.
    let resumed = b.live(["resume", &id, "--actor", "executor=finisher"]);
    assert_eq!(resumed.code, 0, "{resumed}");
    assert_eq!(b.live(["push", &id]).code, 0);
    assert_eq!(status(&b, &id)["sync"], "up_to_date");
    assert_eq!(a.live(["fetch"]).code, 0);
    let behind = status(&a, &id);
    assert_eq!(behind["sync"], "behind", "{behind:#}");
    assert_eq!(listed_run(&a, &id)["sync"], "behind");

    // A finishes it: it catches up first, and publishes the finished run.
    let finish = a.live(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    assert_eq!(status(&a, &id)["sync"], "up_to_date");
    assert_eq!(world.state_on_origin(&id)["status"], "finished");
    assert_eq!(
        listed_run(&b, &id)["sync"],
        "up_to_date",
        "B has not fetched"
    );
    assert_eq!(b.live(["fetch"]).code, 0);
    assert_eq!(listed_run(&b, &id)["sync"], "behind");
}

/// `sync: push` publishes every save: a run started with it is on the remote when `run`
/// returns, with no `git baton push`, and the clone is up to date with it.
#[test]
fn sync_push_publishes_a_run_without_being_asked() {
    let world = World::new(Transport::File, "sync: push\n").unwrap();
    let a = world.origin.machine();
    let run = a.live(["run", "plans/fix.md"]);
    assert_eq!(run.code, 1, "{run}");
    let id = run.run_id();
    let record = format!("refs/baton/runs/{id}/record");
    assert_eq!(world.origin.rev(&record), local_rev(&a, &record), "{run}");
    assert_eq!(world.state_on_origin(&id)["status"], "rate_limited");
    assert!(
        world
            .origin
            .rev(&format!("refs/heads/baton/{id}"))
            .is_some()
    );
    let shown = status(&a, &id);
    assert_eq!(shown["sync"], "up_to_date", "{shown:#}");
    assert_eq!(shown["remote"], "origin", "{shown:#}");
}

/// Each clone names the shared repository as it likes: B calls it `shared`, and the run B takes
/// from it records that name in B, and B's saves go there; A still calls it `origin`.
#[test]
fn a_clone_that_names_the_remote_otherwise_uses_its_own_name() {
    let world = World::new(Transport::File, "").unwrap();
    let (a, id) = world.rate_limited_and_pushed();
    let b = world.origin.machine();
    b.git(["remote", "rename", "origin", "shared"]);
    let fetch = b.live(["fetch", "--remote", "shared"]);
    assert_eq!(fetch.code, 0, "{fetch}");
    let remote_only = listed_run(&b, &id);
    assert_eq!(remote_only["remote"], "shared", "{remote_only:#}");
    assert_eq!(remote_only["sync"], "remote_only", "{remote_only:#}");

    let resumed = b.live(["resume", &id, "--actor", "executor=finisher"]);
    assert_eq!(resumed.code, 0, "{resumed}");
    let shown = status(&b, &id);
    assert_eq!(shown["remote"], "shared", "{shown:#}");
    assert_eq!(shown["sync"], "up_to_date", "{shown:#}");
    let record = format!("refs/baton/runs/{id}/record");
    assert_eq!(world.origin.rev(&record), local_rev(&b, &record));

    assert_eq!(a.live(["fetch"]).code, 0);
    let behind = status(&a, &id);
    assert_eq!(behind["remote"], "origin", "{behind:#}");
    assert_eq!(behind["sync"], "behind", "{behind:#}");
}
