//! An attempt's directory starts empty, made by the driver. The run directory is under the git
//! common directory, which an agent reaches: one attempt's agent can make the next attempt's
//! directory and fill it (`evidence.json` with reasons, `stop-hook.json` that disables the Stop
//! hook). The next attempt then refuses to start, naming the directory, rather than pass with a
//! reason it never gave; an empty directory — what a driver killed before it recorded the
//! attempt leaves — is replaced.

use std::os::unix::fs::symlink;

use super::*;

/// What a planting agent leaves at `$next`, the directory of the stage's next attempt.
const PLANTS: [(&str, &str); 5] = [
    (
        "evidence",
        r#"mkdir -p "$next" && printf '{"target_coverage":[{"target":"docs/b.md","status":"unchanged","reason":"the document already states the rule in section two"},{"target":"docs/c.md","status":"unchanged","reason":"the document already states the rule in section three"}]}' > "$next/evidence.json""#,
    ),
    (
        "hook",
        r#"mkdir -p "$next" && printf '{"blocks":99}' > "$next/stop-hook.json""#,
    ),
    ("hidden", r#"mkdir -p "$next/.cache""#),
    ("file", r#"printf x > "$next""#),
    (
        "link",
        r#"mkdir -p "$next.real" && printf '{"blocks":99}' > "$next.real/stop-hook.json" && ln -s "$next.real" "$next""#,
    ),
];

fn planter(name: &str, plant: &str) -> Actor {
    Actor::shell(
        &format!("plant-{name}"),
        &format!(
            "echo 'rule: A' >> docs/a.md; \
             next=$(dirname \"$(dirname \"$BATON_EVIDENCE_FILE\")\")/executor-$((BATON_ATTEMPT + 1)); \
             {plant}"
        ),
    )
}

#[test]
fn an_attempt_refuses_a_directory_an_earlier_agent_planted() {
    let mut actors: Vec<Actor> = PLANTS.iter().map(|(n, p)| planter(n, p)).collect();
    actors.insert(0, Actor::agent("idle"));
    let repo = repo_running(&actors, "");
    for (name, _) in PLANTS {
        let run = repo.baton([
            "run",
            "plans/fix.md",
            "--actor",
            &format!("executor=plant-{name}"),
        ]);
        assert_eq!(run.code, 1, "{name}: {run}");
        let id = run.run_id();
        assert_eq!(status(&repo, &id)["status"], "blocked", "{name}");
        let next = run_dir(&repo, &id).join("attempts/executor-2");
        assert!(
            std::fs::symlink_metadata(&next).is_ok(),
            "{name}: nothing planted"
        );

        let resumed = repo.baton(["resume", &id, "--actor", "executor=idle"]);
        assert_eq!(resumed.code, 2, "{name}: {resumed}");
        assert!(
            resumed.stderr.contains(&format!(
                "error: run {id}: the directory of attempt executor-2, {}, exists already",
                repo.mask(&next.display().to_string())
            )) && resumed
                .stderr
                .contains("hint: see what it holds, remove it"),
            "{name}: {resumed}"
        );
        let state = status(&repo, &id);
        assert_eq!(state["status"], "blocked", "{name}");
        assert_eq!(
            attempts(&state, "executor").len(),
            1,
            "{name}: no attempt started"
        );
        assert!(
            std::fs::symlink_metadata(&next).is_ok(),
            "{name}: the plant is kept"
        );

        // The hint's way out: the plant removed, the next attempt is the idle agent's own, and
        // it gave no reason, so it is blocked like any attempt that did nothing.
        match std::fs::symlink_metadata(&next).unwrap().is_dir() {
            true => std::fs::remove_dir_all(&next).unwrap(),
            false => std::fs::remove_file(&next).unwrap(),
        }
        let resumed = repo.baton(["resume", &id, "--actor", "executor=idle"]);
        assert_eq!(resumed.code, 1, "{name}: {resumed}");
        let state = status(&repo, &id);
        assert_eq!(state["status"], "blocked", "{name}");
        let reasons: Vec<String> = coverage_rows(&state);
        assert!(
            reasons.iter().all(|row| !row.contains("already states")),
            "{name}: {reasons:?}"
        );
        assert_eq!(
            attempt_field(&state, "executor", "hook_blocks")[1],
            Value::Null
        );
    }
}

/// What a driver killed between making an attempt's directory and recording the attempt
/// leaves — an empty directory, or (killed while writing the prompt, which comes after the
/// attempt is recorded) an attempt to record as a crash — never keeps a run from resuming.
#[test]
fn a_driver_killed_around_an_attempts_start_leaves_nothing_in_the_way() {
    let repo = standard_repo(&[]);
    let killed = repo.baton_env(
        &repo.root,
        ["run", "plans/fix.md"],
        &[("GIT_BATON_FAIL_AT", OsStr::new("write:prompt.md:kill"))],
    );
    assert_eq!(killed.code, -1, "{killed}");
    let id = std::fs::read_dir(runs_dir(&repo))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|n| !n.starts_with('.'))
        .unwrap();
    let resumed = repo.baton(["resume", &id]);
    assert_eq!(resumed.code, 0, "{resumed}");
    let state = status(&repo, &id);
    assert_eq!(attempt_field(&state, "executor", "cause")[0], "crash");

    let run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    let id = run.run_id();
    let empty = run_dir(&repo, &id).join("attempts/reporter-1");
    std::fs::create_dir(&empty).unwrap();
    let resumed = repo.baton(["resume", &id]);
    assert_eq!(resumed.code, 0, "{resumed}");
    assert_eq!(status(&repo, &id)["status"], "review");
    assert!(empty.join("prompt.md").exists());
}

/// The refusal holds for a planted symlink to an empty directory too: what it points to is
/// the agent's, not the driver's.
#[test]
fn a_symlink_to_an_empty_directory_is_not_an_attempt_directory() {
    let repo = standard_repo(&[]);
    let run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    let elsewhere = repo.tmp().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    symlink(&elsewhere, run_dir(&repo, &id).join("attempts/reporter-1")).unwrap();
    let resumed = repo.baton(["resume", &id]);
    assert_eq!(resumed.code, 2, "{resumed}");
    assert!(resumed.stderr.contains("exists already"), "{resumed}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}
