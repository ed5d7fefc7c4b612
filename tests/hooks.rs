//! git-baton's own git plumbing runs none of the user's hooks: a run's snapshots, commit and
//! removal are not the user's git commands. The actor's git commands in its worktree are, and
//! run them as usual.

use std::path::Path;

use crate::support::TestRepo;

use crate::support::AGENT;

/// Every hook `git help githooks` documents.
const HOOKS: [&str; 28] = [
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
];

/// Installs every hook in the repository; each appends its name to the returned log, which lies
/// outside the repository.
fn install_hooks(repo: &TestRepo) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let log = repo.tmp().join("hooks.log");
    std::fs::write(&log, "").unwrap();
    let dir = repo.path(".git/hooks");
    std::fs::create_dir_all(&dir).unwrap();
    for hook in HOOKS {
        let path = dir.join(hook);
        std::fs::write(
            &path,
            format!("#!/bin/sh\necho {hook} >> '{}'\n", log.display()),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // The hooks work: a git command of the user's runs them.
    repo.git(["update-ref", "refs/probe", "HEAD"]);
    repo.git(["update-ref", "-d", "refs/probe"]);
    assert!(
        read(&log).contains("reference-transaction"),
        "{}",
        read(&log)
    );
    std::fs::write(&log, "").unwrap();
    log
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn run_resume_finish_clean_and_doctor_run_no_hook() {
    let repo = TestRepo::new();
    repo.write("docs/a.md", "# A\n");
    repo.write("docs/b.md", "# B\n");
    repo.write(
        "plans/fix.md",
        "---\ntitle: Fix two documents\ntargets:\n  - docs/a.md\n  - docs/b.md\n---\n# Fix them\n",
    );
    let agent = serde_json::to_string(AGENT).unwrap();
    repo.write(
        ".baton.yml",
        &format!(
            "actors:\n  drafter:\n    command: [{agent}, edit, docs/a.md, \"rule: grade A\"]\n  \
             worker:\n    command: [{agent}, edit, docs/a.md, \"rule: grade A\", edit, docs/b.md, \"rule: grade B\"]\n\
             pipeline:\n  - {{ stage: draft, actor: drafter }}\n  - {{ stage: executor, actor: worker, gate: coverage }}\n"
        ),
    );
    repo.commit_all("base");
    let log = install_hooks(&repo);

    let run = repo.baton(["run", "plans/fix.md", "--stop-after", "draft"]);
    let id = run.run_id();
    assert_eq!(read(&log), "", "`run` ran hooks:\n{run}");
    let resume = repo.baton(["resume", &id]);
    assert_eq!(resume.code, 0, "{resume}");
    assert_eq!(read(&log), "", "`resume` ran hooks:\n{resume}");
    let finish = repo.baton(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    assert!(
        repo.git(["show", &format!("baton/{id}:docs/b.md")])
            .contains("rule: grade B"),
        "{finish}"
    );
    assert_eq!(read(&log), "", "`finish` ran hooks:\n{finish}");

    let other = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(other.code, 0, "{other}");
    let other_id = other.run_id();
    assert_eq!(read(&log), "", "`run` ran hooks:\n{other}");
    let clean = repo.baton(["clean", "--force", &other_id]);
    assert_eq!(clean.code, 0, "{clean}");
    assert_eq!(read(&log), "", "`clean` ran hooks:\n{clean}");

    let doctor = repo.baton(["doctor", "--fix"]);
    assert_eq!(read(&log), "", "`doctor --fix` ran hooks:\n{doctor}");
}

#[test]
fn the_actors_own_git_commands_run_the_users_hooks() {
    let repo = TestRepo::with()
        .committer("echo work >> docs/a.md && git add docs/a.md && git commit -q -m 'actor work'")
        .commit();
    let log = install_hooks(&repo);

    let run = repo.baton(["run", "plans/work.md"]);
    assert_eq!(run.code, 0, "{run}");
    let ran = read(&log);
    assert!(ran.lines().any(|hook| hook == "pre-commit"), "{ran}");
}
