//! An attempt whose work cannot be wholly recorded is not a passing attempt, and loses nothing.
//! When git refuses paths the agent left, the snapshot holds every other path and the attempt
//! fails naming each refused one with git's reason; the worktree keeps everything, `push`
//! publishes the run (its snapshot holds the recorded work), and once the paths are gone the
//! next attempt records the rest and the run goes on.

use super::*;

/// Ways an agent leaves paths git cannot record, each with the paths git's refusal names.
const UNRECORDABLE: [(&str, &str, &[&str]); 5] = [
    (
        "an untracked docs/.GIT, a name git refuses",
        "printf 'cache\\n' > docs/.GIT",
        &["docs/.GIT"],
    ),
    (
        "a tracked file turned into a FIFO",
        "rm docs/c.md && mkfifo docs/c.md",
        &["docs/c.md"],
    ),
    (
        "an untracked FIFO, which git does not even list (one in an ignored directory is no work)",
        "mkfifo docs/pipe && printf 'build/\\n' > .gitignore && mkdir build && mkfifo build/p",
        &["docs/pipe"],
    ),
    (
        "a nested repository without a commit",
        "mkdir vendor && git -C vendor init -q",
        &["vendor/"],
    ),
    (
        "two at once",
        "printf 'cache\\n' > docs/.GIT && rm docs/c.md && mkfifo docs/c.md",
        &["docs/.GIT", "docs/c.md"],
    ),
];

/// An agent that does the whole plan (so the gate would pass) and then runs `bad`.
fn worker_then(bad: &str) -> Actor {
    Actor::shell(
        "careless",
        &format!("for f in docs/a.md docs/b.md docs/c.md; do echo 'rule: new' >> $f; done; {bad}"),
    )
}

/// Removes what `paths` name from `worktree`, putting a tracked docs/c.md back as a file.
fn remove(worktree: &Path, paths: &[&str]) {
    for path in paths {
        let gone = worktree.join(path.trim_end_matches('/'));
        match std::fs::symlink_metadata(&gone).unwrap().is_dir() {
            true => std::fs::remove_dir_all(&gone).unwrap(),
            false => std::fs::remove_file(&gone).unwrap(),
        }
        if *path == "docs/c.md" {
            std::fs::write(&gone, "# C\n\nrule: new\n").unwrap();
        }
    }
}

#[test]
fn an_attempt_whose_paths_git_refuses_fails_naming_each_and_its_other_work_is_recorded() {
    for (name, bad, paths) in UNRECORDABLE {
        let idle = Actor::agent("idle");
        let repo = repo_running(&[worker_then(bad), idle], "");
        let remote = repo.tmp().join("remote.git");
        repo.git(["init", "-q", "--bare", remote.to_str().unwrap()]);
        repo.git(["remote", "add", "origin", remote.to_str().unwrap()]);

        let run = repo.baton(["run", "plans/fix.md"]);
        assert_eq!(run.code, 1, "{name}: {run}");
        let id = run.run_id();
        let state = status(&repo, &id);
        assert_eq!(state["status"], "failed", "{name}");
        let error = state["error"]["message"].as_str().unwrap();
        assert!(
            error.starts_with("its snapshot does not hold"),
            "{name}: {error}"
        );
        let listed: Vec<&str> = attempts(&state, "executor")[0]["unrecorded"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: no unrecorded paths in {state:#}"))
            .iter()
            .map(|u| {
                assert!(!u["reason"].as_str().unwrap().is_empty(), "{name}: {u}");
                u["path"].as_str().unwrap()
            })
            .collect();
        assert_eq!(listed, paths, "{name}");
        for path in paths {
            assert!(error.contains(path), "{name}: {error}");
        }
        // The gate did not run: an unrecorded path never counts as changed.
        assert_eq!(attempt_field(&state, "executor", "coverage"), [Value::Null]);
        // The snapshot holds the rest of the work, and none of the refused paths as they are.
        let snapshot = attempt_field(&state, "executor", "snapshot")[0].clone();
        let snapshot = snapshot
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no snapshot"));
        let recorded = repo.git(["show", &format!("{snapshot}:docs/a.md")]);
        assert!(recorded.contains("rule: new"), "{name}: {recorded}");
        let tree = repo.git(["ls-tree", "-r", "--name-only", snapshot]);
        assert!(
            !tree.contains("docs/.GIT") && !tree.contains("docs/pipe"),
            "{tree}"
        );
        if paths.contains(&"docs/c.md") {
            let c = repo.git(["show", &format!("{snapshot}:docs/c.md")]);
            assert!(
                !c.contains("rule: new"),
                "{name}: the FIFO is no change: {c}"
            );
        }
        // Nothing in the worktree was touched.
        let worktree = worktree_of(&repo, &state);
        assert!(
            text(&worktree.join("docs/a.md")).contains("rule: new"),
            "{name}"
        );
        for path in paths {
            assert!(
                std::fs::symlink_metadata(worktree.join(path.trim_end_matches('/'))).is_ok(),
                "{name}: {path}"
            );
        }
        let shown = repo.baton(["status", &id]);
        for path in paths {
            assert!(
                shown.stdout.contains(&format!("#1 not recorded: {path} (")),
                "{name}: {shown}"
            );
        }

        // What is recorded travels: the run is published.
        let push = repo.baton(["push", &id]);
        assert_eq!(push.code, 0, "{name}: {push}");
        assert!(
            repo.git(["ls-remote", "origin"]).contains(snapshot),
            "{name}: the snapshot is published"
        );

        // The paths gone, the next attempt records everything and the run goes on.
        remove(&worktree, paths);
        let resumed = repo.baton(["resume", &id, "--actor", "executor=idle"]);
        assert_eq!(resumed.code, 0, "{name}: {resumed}");
        assert!(
            resumed
                .stderr
                .contains("note: the snapshot of attempt 1 of stage `executor` does not hold")
                && paths.iter().all(|p| resumed.stderr.contains(p)),
            "{name}: {resumed}"
        );
        let state = status(&repo, &id);
        assert_eq!(state["status"], "review", "{name}");
        assert_eq!(attempts(&state, "executor")[1].get("unrecorded"), None);
        assert_eq!(repo.baton(["push", &id]).code, 0, "{name}");
    }
}

/// Paths left out never turn a worse outcome into a better one: a rate-limited attempt stays
/// rate limited, and its error says both.
#[test]
fn an_unrecorded_attempt_keeps_the_outcome_it_had() {
    let limited = Actor::shell(
        "limited",
        "echo x >> docs/a.md; echo c > docs/.GIT; exit 75",
    )
    .set("rate_limit: { exit_codes: [75] }");
    let repo = repo_running(&[limited], "");
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 1, "{run}");
    let state = status(&repo, &run.run_id());
    assert_eq!(state["status"], "rate_limited");
    let error = state["error"]["message"].as_str().unwrap();
    assert!(error.contains("; its snapshot does not hold"), "{error}");
    assert!(error.contains("docs/.GIT"), "{error}");
}

/// A FIFO where git reads one of its own files (an ignore file in a directory of the work) would
/// keep every git command that walks the worktree waiting for ever: the attempt's snapshot is
/// refused at once instead, naming it, and the run ends failed with its work in the worktree;
/// once it is gone, a resume records the work and the run goes on.
#[test]
fn a_fifo_where_git_reads_its_ignore_rules_is_named_not_waited_on() {
    let idle = Actor::agent("idle");
    let repo = repo_running(&[worker_then("mkfifo docs/.gitignore"), idle], "");
    let child = repo.baton_spawn(&repo.root, ["run", "plans/fix.md"], &[]);
    let run = repo.baton_wait(child, LIVENESS);
    assert_eq!(run.code, 1, "{run}");
    let id = run.run_id();
    let state = status(&repo, &id);
    let error = state["error"]["message"].as_str().unwrap();
    assert!(
        error.ends_with(
            "`docs/.gitignore` is a FIFO, which git would open as one of its own files and wait \
             on for ever; remove it"
        ),
        "{error}"
    );
    let worktree = worktree_of(&repo, &state);
    assert!(text(&worktree.join("docs/a.md")).contains("rule: new"));
    std::fs::remove_file(worktree.join("docs/.gitignore")).unwrap();
    let resumed = repo.baton(["resume", &id, "--actor", "executor=idle"]);
    assert_eq!(resumed.code, 0, "{resumed}");
    assert_eq!(status(&repo, &id)["status"], "review");
}
