//! Paths git refuses lose nothing else in a handoff: the attempt that left them fails naming
//! each, its snapshot holds the rest of its work, the lease publishes it as it stops, and another
//! clone rebuilds the worktree with that work and says which paths it lacks. The first machine
//! keeps everything.

use super::*;

/// What is left in A's worktree while its agent works, and the paths the attempt must name.
const REFUSED: [(&str, &[&str]); 5] = [
    ("docs/.GIT", &["docs/.GIT"]),
    ("fifo docs/c.md", &["docs/c.md"]),
    ("fifo docs/pipe", &["docs/pipe"]),
    ("repo vendor", &["vendor/"]),
    ("docs/.GIT + fifo docs/c.md", &["docs/.GIT", "docs/c.md"]),
];

/// Leaves `what` (see [`REFUSED`]) in `worktree`.
fn leave(worktree: &Path, what: &str) {
    for part in what.split(" + ") {
        let fifo = |rel: &str| {
            let path = worktree.join(rel);
            let _ = std::fs::remove_file(&path);
            let made = std::process::Command::new("mkfifo").arg(&path).status();
            assert!(made.unwrap().success(), "mkfifo {}", path.display());
        };
        match part.split_once(' ') {
            None => std::fs::write(worktree.join(part), "cache\n").unwrap(),
            Some(("fifo", rel)) => fifo(rel),
            Some(("repo", rel)) => {
                let dir = worktree.join(rel);
                std::fs::create_dir(&dir).unwrap();
                let init = std::process::Command::new("git")
                    .args(["init", "-q"])
                    .current_dir(&dir)
                    .status();
                assert!(init.unwrap().success());
            }
            Some(other) => panic!("unknown {other:?}"),
        }
    }
}

#[test]
fn the_recorded_work_of_an_attempt_with_refused_paths_travels_and_the_paths_are_named() {
    for (what, paths) in REFUSED {
        let world = World::new(Transport::File, "").unwrap();
        let (a, id) = world.rate_limited_and_pushed();
        let worktree = worktree_of(&a, &status(&a, &id));

        // While the slow agent works, something leaves paths git refuses in the worktree.
        let pid = world.scratch("slow.pid");
        let child = a.live_spawn(["resume", &id, "--actor", "executor=slow"]);
        wait_for_line(&pid);
        leave(&worktree, what);
        let resumed = wait(&a, child);
        assert_eq!(resumed.code, 1, "{what}: {resumed}");
        let state = world.state_on_origin(&id);
        assert_eq!(state["status"], "failed", "{what}: the lease published it");
        let attempt = &attempts(&state, "executor")[1];
        let named: Vec<&str> = attempt["unrecorded"]
            .as_array()
            .unwrap_or_else(|| panic!("{what}: {attempt:#}"))
            .iter()
            .map(|u| u["path"].as_str().unwrap())
            .collect();
        assert_eq!(named, paths, "{what}");
        let error = attempt["error"].as_str().unwrap();
        assert!(paths.iter().all(|p| error.contains(p)), "{what}: {error}");
        assert!(attempt["snapshot"].is_string(), "{what}: {attempt:#}");

        let push = a.live(["push", &id]);
        assert_eq!(push.code, 0, "{what}: {push}");

        // Machine B rebuilds the worktree with the slow agent's work, and is told what it lacks.
        let b = world.origin.machine();
        assert_eq!(b.live(["fetch"]).code, 0);
        let taken = b.live(["resume", &id, "--actor", "executor=failing"]);
        assert_eq!(taken.code, 1, "{what}: {taken}");
        assert!(
            taken
                .stderr
                .contains("note: the snapshot of attempt 2 of stage `executor` does not hold")
                && paths.iter().all(|p| taken.stderr.contains(p)),
            "{what}: {taken}"
        );
        let there = worktree_of(&b, &status(&b, &id));
        let doc_b = text(&there.join("docs/b.md"));
        assert!(
            doc_b.contains(B_WORK) && doc_b.contains("half done"),
            "{what}: {doc_b}"
        );
        assert!(
            text(&there.join("notes.md")).contains(A_UNTRACKED),
            "{what}"
        );
        assert!(
            !there.join("docs/.GIT").exists() && !there.join("docs/pipe").exists(),
            "{what}"
        );

        // Machine A deleted nothing.
        assert!(text(&worktree.join("docs/b.md")).contains(B_WORK), "{what}");
        for path in paths {
            let left = worktree.join(path.trim_end_matches('/'));
            assert!(std::fs::symlink_metadata(&left).is_ok(), "{what}: {path}");
        }
    }
}
