//! Tests of the store: layout and listing, the codec, the lock.

use std::time::Duration;

use super::lock::read_holder;
use super::*;

/// A temporary directory whose `state.json` holds `text`, and that file's path.
fn state_file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state.json");
    std::fs::write(&path, text).unwrap();
    (tmp, path)
}

/// The file at `path` as JSON, to look at what was stored.
fn stored(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn runs_are_listed_by_id_and_only_complete_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::new(tmp.path(), Clock::system());
    for id in ["1abc000000", "1abd000000", "2xyz000000", "not-a-run"] {
        std::fs::create_dir_all(store.run_dir(id)).unwrap();
        std::fs::write(store.run_dir(id).join("state.json"), "{}").unwrap();
    }
    std::fs::create_dir_all(store.staging_dir("3new000000")).unwrap();
    assert_eq!(
        store.list().unwrap(),
        ["1abc000000", "1abd000000", "2xyz000000"]
    );
}

/// A named pipe planted where the store keeps `state.json` or `lock.json` is refused at
/// once, with the path named; read plainly it would block until a writer came. The read
/// runs on a thread so that a regression fails (after a bounded wait, opening the pipe's
/// other end to free the thread) instead of hanging the suite.
#[cfg(unix)]
#[test]
fn a_named_pipe_for_a_state_or_lock_file_is_refused_unread() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::new(tmp.path(), Clock::system());
    let r: RunId = "1ngvbzkqq5".parse().unwrap();
    let dir = store.run_dir(&r);
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["state.json", "lock.json"] {
        crate::testing::fifo(dir.join(name));
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let state_path = dir.join("state.json");
    let (run_dir, path) = (dir.clone(), state_path.clone());
    let reader = std::thread::spawn(move || {
        let loaded = load(&path).map(|_| ()).map_err(|e| e.to_string());
        let holder = read_holder(&run_dir);
        let _ = tx.send((loaded, holder.is_none()));
    });
    let Ok((loaded, no_holder)) = rx.recv_timeout(Duration::from_secs(30)) else {
        // A writer that opens and closes at once ends a blocked reader's wait; without a
        // reader the open fails at once (non-blocking), so the loop is bounded.
        for _ in 0..100 {
            if reader.is_finished() {
                break;
            }
            for name in ["state.json", "lock.json"] {
                let _ = rustix::fs::open(
                    dir.join(name),
                    rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::NONBLOCK,
                    rustix::fs::Mode::empty(),
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = reader.join();
        panic!("reading a named pipe blocked");
    };
    reader.join().unwrap();
    let message = loaded.unwrap_err();
    assert!(
        message.contains(&state_path.display().to_string()),
        "{message}"
    );
    assert!(message.contains("named pipe (FIFO)"), "{message}");
    assert!(no_holder, "a lock.json that is not a file names no holder");
}

#[test]
fn one_holder_at_a_time_and_the_lock_is_released_on_drop() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::new(tmp.path(), Clock::system());
    let r: RunId = "1ngvbzkqq5".parse().unwrap();
    std::fs::create_dir_all(store.run_dir(&r)).unwrap();
    let lock = store.lock(&r, "git baton run").unwrap();
    let holder = store.holder(&r).unwrap().expect("held");
    assert_eq!(holder.pid, std::process::id());
    match store.lock(&r, "git baton resume") {
        Err(StoreError::Busy { holder, .. }) => {
            assert!(holder.contains("git baton run"), "{holder}")
        }
        other => panic!("expected busy, got {:?}", other.map(|_| ())),
    }
    drop(lock);
    assert_eq!(store.holder(&r).unwrap(), None);
    assert!(!store.run_dir(&r).join("lock.json").exists());
}

#[test]
fn unfinished_creations_and_removals_are_found_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::new(tmp.path(), Clock::system());
    let (a, b): (RunId, RunId) = ("1abc000000".parse().unwrap(), "1abd000000".parse().unwrap());
    for dir in [
        store.staging_dir(&a),
        store.removal_dir(&b),
        store.runs_dir().join(".clean-not-a-run"),
        store.run_dir("1abe000000"),
    ] {
        std::fs::create_dir_all(dir).unwrap();
    }
    assert_eq!(
        store.unfinished(),
        [
            (Unfinished::Creation, a.clone(), store.staging_dir(&a)),
            (Unfinished::Removal, b.clone(), store.removal_dir(&b)),
        ]
    );
}

/// A temporary file's name as [`crate::files::temporary_in`] gives it, by process `pid`.
fn temp_name(pid: u32, random: &str) -> String {
    format!(
        "{}{pid}-{random}{}",
        crate::files::TEMP_PREFIX,
        crate::files::TEMP_SUFFIX
    )
}

/// Above the kernel's largest pid (`PID_MAX_LIMIT`, 2^22): never a live process.
const DEAD: u32 = 4_194_305;

#[test]
fn temporary_files_are_found_with_the_lock_their_writer_held() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::new(&tmp.path().join(".git"), Clock::system());
    let id: RunId = "1abc000000".parse().unwrap();
    let attempt = store.run_dir(&id).join("attempts/executor-1");
    let info = tmp.path().join(".git/info");
    let files = [
        store
            .runs_dir()
            .parent()
            .unwrap()
            .join(temp_name(DEAD, "a1B2c3")),
        store.runs_dir().join(temp_name(DEAD, "012345")),
        info.join(temp_name(DEAD, "XyZ789")),
        store.run_dir(&id).join(temp_name(DEAD, "aaaaaa")),
        attempt.join(temp_name(DEAD, "Prompt")),
        // Removed with their directories, so not listed:
        store
            .staging_dir("1abd000000")
            .join(temp_name(DEAD, "plan00")),
        store
            .removal_dir("1abe000000")
            .join(temp_name(DEAD, "lock00")),
    ];
    // Not the name an atomic write gives (somebody else's, git-baton's older `.tmp-XXXXXX`
    // shape included), or no file, or the fresh file of a live writer: not listed either.
    let me = std::process::id();
    let foreign = [
        ".tmp-foo".to_owned(),
        ".tmp-sparse-drafts".to_owned(),
        ".tmp-abcdef".to_owned(),
        ".tmp-backup".to_owned(),
        ".tmp-abc.ef".to_owned(),
        ".tmp-".to_owned(),
        temp_name(DEAD, "abcdefg"),
        temp_name(DEAD, "abc.ef"),
        format!(".git-baton-{DEAD}-abcdef"),
        ".git-baton--abcdef.tmp".to_owned(),
        format!(".git-baton-0{DEAD}-abcdef.tmp"),
        format!(".git-baton-x{DEAD}-abcdef.tmp"),
        temp_name(me, "fresh1"),
    ];
    for file in files
        .iter()
        .chain(&foreign.clone().map(|name| info.join(name)))
    {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, "half").unwrap();
    }
    std::fs::create_dir_all(info.join(temp_name(DEAD, "d1r000")).join("inside")).unwrap();
    std::os::unix::fs::symlink(&files[0], info.join(temp_name(DEAD, "l1nk00"))).unwrap();
    std::fs::write(attempt.join("prompt.md"), "whole").unwrap();
    // A live writer's file an hour old is no write in progress: its pid names another process.
    let stale = info.join(temp_name(me, "stale1"));
    std::fs::write(&stale, "half").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - crate::files::TEMP_SAFE_AGE * 2)
        .unwrap();
    let real = crate::files::temporary_in(&info).unwrap();
    let name = real
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(crate::files::temporary_writer(&name), Some(me), "{name}");
    // Its writer lives and it is fresh: a write in progress, not listed.
    let run = TempOwner::Run(id);
    let expected = [
        (files[0].clone(), TempOwner::Store),
        (files[1].clone(), TempOwner::Store),
        (files[2].clone(), TempOwner::Store),
        (stale.clone(), TempOwner::Store),
        (files[3].clone(), run.clone()),
        (files[4].clone(), run),
    ]
    .map(|(path, owner)| TempFile { path, owner });
    // Within a directory they come by name, and the pids' digits decide that order here.
    let mut found = store.temporary_files();
    let mut expected = expected.to_vec();
    found.sort_by(|a, b| a.path.cmp(&b.path));
    expected.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(found, expected);
    drop(real);
}

/// A run directory without its state is no run, but it is found; a directory being created
/// or removed, or named like no run, is not one of those.
#[test]
fn run_directories_without_state_are_found() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::new(tmp.path(), Clock::system());
    for (name, state) in [
        ("1abc000000", true),
        ("1abd000000", false),
        ("not-a-run", false),
        (".clean-1abe000000", false),
        (".new-1abf000000", false),
    ] {
        let dir = store.runs_dir().join(name);
        std::fs::create_dir_all(dir.join("attempts")).unwrap();
        if state {
            std::fs::write(dir.join("state.json"), "{}").unwrap();
        }
    }
    let id: RunId = "1abd000000".parse().unwrap();
    assert_eq!(store.headless(), [(id.clone(), store.run_dir(&id))]);
    assert_eq!(store.list().unwrap().len(), 1);
}

#[test]
fn a_cleaned_run_is_recorded_once() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::new(tmp.path(), Clock::system());
    for id in ["1abc000000", "1abd000000", "1abc000000"] {
        store.record_cleaned(id).unwrap();
    }
    assert_eq!(store.cleaned(), ["1abc000000", "1abd000000"]);
}

#[test]
fn a_version_1_file_loads_and_is_saved_as_version_3() {
    let (tmp, path) = state_file(include_str!("../../../testdata/state/v1/review.json"));
    let state = load(&path).unwrap();
    save_in(tmp.path(), &state).unwrap();
    let saved = stored(&path);
    assert_eq!(saved["schema_version"], 3);
    for derived in ["current_stage", "coverage", "usage", "error"] {
        assert!(saved.get(derived).is_none(), "{derived} is not stored");
    }
    assert_eq!(saved["stages"][0]["configured_actor"], "limited");
    assert!(saved["stages"][0].get("status").is_none());
    assert!(
        saved["policy"].get("pipeline").is_none(),
        "the pipeline is stored once"
    );
    assert_eq!(load(&path).unwrap(), state, "and reads back the same");
}

#[test]
fn cleared_variables_are_stored_by_name_and_absent_means_none() {
    let (tmp, path) = state_file(include_str!("../../../testdata/state/v1/review.json"));
    let mut state = load(&path).unwrap();
    assert!(state.stages[0].attempts[0].cleared_env.is_empty());
    // A version-2 file written before the field existed, or with nothing cleared, omits it.
    save_in(tmp.path(), &state).unwrap();
    let saved = stored(&path);
    assert!(
        saved["stages"][0]["attempts"][0]
            .get("cleared_env")
            .is_none()
    );
    assert_eq!(load(&path).unwrap(), state);

    state.stages[0].attempts[0].cleared_env = vec!["GIT_DIR".into(), "GIT_INDEX_FILE".into()];
    save_in(tmp.path(), &state).unwrap();
    let saved = stored(&path);
    assert_eq!(
        saved["stages"][0]["attempts"][0]["cleared_env"],
        serde_json::json!(["GIT_DIR", "GIT_INDEX_FILE"])
    );
    assert_eq!(load(&path).unwrap(), state, "and reads back the same");
}

/// Version 3 only added fields (`cycle`, a halt's `cause`) that a version 2 file lacks: such a
/// file reads as a run `cycle` has nothing to say about, whose halt counts as a person's.
#[test]
fn a_version_2_file_reads_with_the_fields_version_3_added_absent() {
    let (_tmp, path) = state_file(include_str!("../../../testdata/state/v1/halted.json"));
    let state = load(&path).unwrap();
    let v3 = String::from_utf8(crate::state::store::to_json(&state)).unwrap();
    assert!(!v3.contains("\"cycle\"") && !v3.contains("\"cause\": \"manual\""));
    let v2 = v3.replacen("\"schema_version\": 3", "\"schema_version\": 2", 1);
    std::fs::write(&path, &v2).unwrap();
    let read = load(&path).unwrap();
    assert_eq!(read, state);
    assert!(read.cycle().is_empty());
    assert!(
        read.stopped_by_hand(),
        "a halt without a cause is a person's"
    );
}

#[test]
fn unknown_versions_and_inconsistent_states_are_refused_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state.json");
    let v1 = include_str!("../../../testdata/state/v1/review.json");
    let cases = [
        (
            v1.replacen("\"schema_version\": 1", "\"schema_version\": 4", 1),
            "schema_version 4 is not supported by this git-baton (it reads 1 to 3)",
        ),
        (
            "{}".to_string(),
            "not a RunState: missing field `schema_version` at line 1 column 2",
        ),
        (
            v1.replacen("\"status\": \"review\"", "\"status\": \"paused\"", 1),
            "inconsistent RunState: the run is paused but every stage succeeded, so there \
             is nothing to pause before",
        ),
    ];
    for (text, message) in cases {
        std::fs::write(&path, text).unwrap();
        let err = load(&path).unwrap_err();
        assert_eq!(err.to_string(), format!("{}: {message}", path.display()));
    }
}

#[test]
fn ids_come_from_the_clock_and_skip_taken_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let start: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let first = Store::new(tmp.path(), Clock::fixed(start, 1))
        .allocate_id()
        .unwrap();
    let store = Store::new(tmp.path(), Clock::fixed(start, 1));
    assert_eq!(
        store.allocate_id().unwrap(),
        first,
        "the same seed, the same id"
    );
    std::fs::create_dir_all(store.staging_dir(&first)).unwrap();
    let store = Store::new(tmp.path(), Clock::fixed(start, 1));
    let second = store.allocate_id().unwrap();
    assert_ne!(second, first);
    assert_eq!(second[..7], first[..7], "the same second");
}
