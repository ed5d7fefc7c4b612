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
