//! `clean --remote`: a finished run's refs go from this clone and from the remote, its branch
//! stays; other clones lose it at their next fetch.

use super::*;

#[test]
fn clean_remote_deletes_the_runs_refs_on_the_remote_but_not_its_branch() {
    let world = World::new(Transport::File, "").unwrap();
    let a = world.origin.machine();
    let run = a.live(["run", "plans/fix.md", "--actor", "executor=worker"]);
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    assert_eq!(a.live(["finish", &id]).code, 0);
    let push = a.live(["push", &id]);
    assert_eq!(push.code, 0, "{push}");
    let prefix = format!("refs/baton/runs/{id}/");
    assert!(
        world
            .origin
            .refs(&prefix)
            .iter()
            .any(|r| r.ends_with("/record")),
        "{:?}",
        world.origin.refs(&prefix)
    );
    let b = world.origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    assert!(listed(&b).iter().any(|r| r["run_id"] == id.as_str()));

    let clean = a.live(["clean", &id, "--remote"]);
    assert_eq!(clean.code, 0, "{clean}");
    assert_eq!(
        world.origin.refs(&prefix),
        Vec::<String>::new(),
        "record and attempts gone"
    );
    assert!(
        world
            .origin
            .rev(&format!("refs/heads/baton/{id}"))
            .is_some(),
        "the branch stays on the remote"
    );
    let local = a.git(["for-each-ref", "--format=%(refname)", &prefix]);
    assert_eq!(local, "", "gone locally too");
    assert!(!a.path(&format!(".git/baton/runs/{id}")).exists());

    let fetch = b.live(["fetch"]);
    assert_eq!(fetch.code, 0, "{fetch}");
    assert!(
        !listed(&b).iter().any(|r| r["run_id"] == id.as_str()),
        "pruned at B's next fetch: {:#?}",
        listed(&b)
    );
}

/// While another machine's lease holds, `clean --remote` from a clone that only fetched the run
/// is refused with exit 3 and the remote keeps every ref of the run.
#[test]
fn clean_remote_is_refused_while_another_machine_drives_the_run() {
    let world = World::new(Transport::File, "").unwrap();
    let (a, id) = world.rate_limited_and_pushed();
    let driver = a.live_spawn(["resume", id.as_str(), "--actor", "executor=sleeper"]);
    let agent = wait_for_line(&world.scratch("sleeper.pid"));
    let prefix = format!("refs/baton/runs/{id}/");
    let before = world.origin.refs(&prefix);

    let b = world.origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    let refused = b.live(["clean", &id, "--remote"]);
    kill9(&driver.id().to_string());
    kill9(&format!("-{agent}"));
    wait(&a, driver);
    assert_leased(&refused, &id);
    let after = world.origin.refs(&prefix);
    assert!(
        before.iter().all(|r| after.contains(r)),
        "the remote kept the run: {before:?} {after:?}"
    );
    assert!(world.state_on_origin(&id)["lease"].is_object());
}

/// A run removed from the remote by another clone (`clean --remote` there) is not brought back
/// by a `push` that names no run: it is noted and skipped, and named, it is published again.
#[test]
fn push_without_names_does_not_bring_back_a_run_removed_from_the_remote() {
    let world = World::new(Transport::File, "").unwrap();
    let a = world.origin.machine();
    let run = a.live(["run", "plans/fix.md", "--actor", "executor=worker"]);
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    assert_eq!(a.live(["push", &id]).code, 0);
    let prefix = format!("refs/baton/runs/{id}/");
    for name in world.origin.refs(&prefix) {
        world.origin.git(["update-ref", "-d", &name]);
    }
    assert_eq!(a.live(["fetch"]).code, 0);

    let unnamed = a.live(["push"]);
    assert_eq!(unnamed.code, 2, "{unnamed}");
    assert!(
        unnamed.stderr.contains(&format!(
            "note: {id} is no longer on origin; name it to publish it again"
        )),
        "{unnamed}"
    );
    assert!(
        unnamed
            .stderr
            .contains("error: no run of this clone is published yet"),
        "{unnamed}"
    );
    assert_eq!(world.origin.refs(&prefix), Vec::<String>::new());

    let named = a.live(["push", &id]);
    assert_eq!(named.code, 0, "{named}");
    assert!(!world.origin.refs(&prefix).is_empty());
}
