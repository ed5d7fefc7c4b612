//! The session's resolver and its commit, on a real repository in a temporary directory.

use super::super::note::Silent;
use super::*;
use crate::state::Clock;
use crate::state::fixture;
use crate::state::store;

fn repo_and_store() -> (tempfile::TempDir, Repo, Store) {
    let dir = crate::testing::git_init(&[]);
    let repo = Repo::discover(dir.path()).unwrap();
    let store = Store::new(repo.common_dir(), Clock::fixed(fixture::at(0), 1));
    (dir, repo, store)
}

/// A session that opens any run, without catching up.
const OPEN: Open<'static> = Open {
    command: "test",
    catch_up: None,
    caught_up: caught_up_notes,
    check: any_state,
};

/// The fixture's run, saved in `store`.
fn saved_run(store: &Store) -> RunState {
    let state = fixture::run();
    let dir = store.run_dir(&state.run_id);
    std::fs::create_dir_all(&dir).unwrap();
    store::save_in(&dir, &state).unwrap();
    state
}

fn add_run(store: &Store, id: &str) {
    std::fs::create_dir_all(store.run_dir(id)).unwrap();
    std::fs::write(store.run_dir(id).join("state.json"), "{}").unwrap();
}

#[test]
fn a_run_is_named_by_its_id_or_a_unique_prefix() {
    let (_dir, repo, store) = repo_and_store();
    for id in ["1abc000000", "1abd000000", "2xyz000000"] {
        add_run(&store, id);
    }
    let here = |name| resolve(&store, &repo, name, Lookup::Here);
    assert_eq!(
        here("2").unwrap(),
        NamedRun::Here("2xyz000000".parse().unwrap())
    );
    assert_eq!(here("1abc").unwrap().id().as_str(), "1abc000000");
    assert!(matches!(
        here("1ab"),
        Err(RunError::Store(StoreError::Ambiguous { .. }))
    ));
    assert!(matches!(
        here("3"),
        Err(RunError::Store(StoreError::Unknown(_)))
    ));
    // Every id starts with the empty string; naming no run is not naming all of them.
    assert!(matches!(
        here(""),
        Err(RunError::Store(StoreError::Unknown(_)))
    ));
}

#[test]
fn debris_is_named_only_where_asked_and_only_unambiguously() {
    let (_dir, repo, store) = repo_and_store();
    std::fs::create_dir_all(store.removal_dir("1abc000000")).unwrap();
    std::fs::create_dir_all(store.run_dir("2xyz000000")).unwrap();
    std::fs::create_dir_all(store.run_dir("2xyw000000")).unwrap();
    let named = |name, lookup| resolve(&store, &repo, name, lookup);
    assert_eq!(
        named("1a", Lookup::Debris).unwrap(),
        NamedRun::Removal("1abc000000".parse().unwrap())
    );
    assert!(named("1a", Lookup::Here).is_err());
    assert_eq!(
        named("2xyz", Lookup::Debris).unwrap(),
        NamedRun::Headless("2xyz000000".parse().unwrap())
    );
    assert!(matches!(
        named("2xy", Lookup::Debris),
        Err(RunError::Store(StoreError::Unknown(_)))
    ));
    assert!(named("", Lookup::Debris).is_err());
}

#[test]
fn a_commit_applies_the_event_and_persists_file_and_record_at_once() {
    let (_dir, repo, store) = repo_and_store();
    let mut state = saved_run(&store);
    let id = state.run_id.clone();
    let named = resolve(&store, &repo, &id[..4], Lookup::Here).unwrap();
    let (session, loaded) = Session::open(&repo, &store, &Silent, &named, &OPEN).unwrap();
    assert_eq!(loaded, state);
    session
        .commit_at(&mut state, Event::Paused, fixture::at(5))
        .unwrap();
    assert_eq!(state.status(), crate::state::RunStatus::Paused);
    assert_eq!(store.load(&id).unwrap(), state);
    assert!(matches!(
        record::recorded(&repo, session.dir(), &id).unwrap(),
        record::Recorded::Current(_)
    ));
    // An illegal move changes nothing, here or in the record.
    let before = state.clone();
    assert!(session.commit(&mut state, Event::Finished).is_err());
    assert_eq!(state, before);
    assert_eq!(store.load(&id).unwrap(), before);
    // The lock is the session's: a second one is refused until it is dropped.
    assert!(Session::open(&repo, &store, &Silent, &named, &OPEN).is_err());
    drop(session);
    assert!(Session::open(&repo, &store, &Silent, &named, &OPEN).is_ok());
}

#[test]
fn a_session_dropped_with_its_lease_gives_the_lease_back_on_the_remote() {
    let (dir, repo, store) = repo_and_store();
    let bare = dir.path().join("remote.git");
    let git = |args: &[&str]| crate::testing::git(dir.path(), args);
    git(&["init", "-q", "--bare", bare.to_str().unwrap()]);
    git(&["remote", "add", "origin", bare.to_str().unwrap()]);
    let id = saved_run(&store).run_id;
    let named = NamedRun::Here(id.clone());
    let (mut session, mut state) = Session::open(&repo, &store, &Silent, &named, &OPEN).unwrap();
    session
        .take_lease(&mut state, "origin", Duration::from_secs(60), false)
        .unwrap();
    let on_remote = || {
        remote::tracked_state(&repo, "origin", &id)
            .unwrap()
            .unwrap()
    };
    assert!(on_remote().lease().is_some(), "the lease was published");
    assert!(store.load(&id).unwrap().lease().is_some());
    // A command that fails on the way drops its session without releasing it.
    drop(session);
    assert_eq!(on_remote().lease(), None, "the lease went back on drop");
    assert_eq!(store.load(&id).unwrap().lease(), None);
}
