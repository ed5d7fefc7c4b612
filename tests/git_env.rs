//! git-baton runs git children (snapshots, `finish`'s commit, worktree removal) from one place,
//! which must not pass on the repository-local variables of its caller: `GIT_INDEX_FILE=…
//! git baton finish` once wrote a stray index at that path and left the run's own index behind.
//! The repositories it names itself (a run's worktree) are opened without them too.

use std::ffi::OsStr;

use crate::support::TestRepo;

use crate::support::AGENT;

const PLAN: &str = "\
---
title: Fix two documents
targets:
  - docs/a.md
  - docs/b.md
---
# Fix them
";

const CONFIG: &str = "\
actors:
  worker:
    command: [AGENT, edit, docs/a.md, \"rule: grade A\", edit, docs/b.md, \"rule: grade B\"]
pipeline:
  - { stage: executor, actor: worker, gate: coverage }
";

#[test]
fn the_callers_repository_variables_reach_no_git_child() {
    let repo = TestRepo::new();
    repo.write("docs/a.md", "# A\n");
    repo.write("docs/b.md", "# B\n");
    repo.write("plans/fix.md", PLAN);
    let agent = serde_json::to_string(AGENT).unwrap();
    repo.write(".baton.yml", &CONFIG.replace("AGENT", &agent));
    repo.commit_all("base");
    let main_index = std::fs::read(repo.path(".git/index")).unwrap();

    // What a hook, an alias or `git --git-dir=… baton` hands down: the main repository named
    // explicitly, and an index of its own.
    let stray = repo.tmp().join("stray-index");
    let root = repo.root.as_os_str();
    let git_dir = repo.path(".git");
    let env: [(&str, &OsStr); 4] = [
        ("GIT_INDEX_FILE", stray.as_os_str()),
        ("GIT_DIR", git_dir.as_os_str()),
        ("GIT_WORK_TREE", root),
        ("GIT_PREFIX", OsStr::new("docs/")),
    ];

    let run = repo.baton_env(&repo.root, ["run", "plans/fix.md"], &env);
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    assert!(!stray.exists(), "`run` wrote {}", stray.display());

    let finish = repo.baton_env(&repo.root, ["finish", &id], &env);
    assert_eq!(finish.code, 0, "{finish}");
    assert!(!stray.exists(), "`finish` wrote {}", stray.display());
    // The run's worktree was read through its own index: clean after the commit, so removed.
    let worktree = repo.path(&format!(".baton/worktrees/{id}"));
    assert!(
        !worktree.exists(),
        "the clean worktree is removed:\n{finish}"
    );
    // The commit holds the run's work, not the main worktree's files.
    for (path, rule) in [
        ("docs/a.md", "rule: grade A"),
        ("docs/b.md", "rule: grade B"),
    ] {
        let committed = repo.git(["show", &format!("baton/{id}:{path}")]);
        assert!(committed.contains(rule), "{path}: {committed}");
    }
    // The main worktree and its index are untouched.
    assert_eq!(repo.git(["status", "--porcelain"]), "");
    assert_eq!(std::fs::read(repo.path(".git/index")).unwrap(), main_index);
}

/// `git --git-dir=<main .git> baton run` with a scratch index named too: the actor's own
/// `git commit` must land on the run's branch through its worktree, not on `main` through the
/// inherited variables, and the RunState says which variables were kept from it (a tmux pane's
/// and a screen window's among them).
#[test]
fn the_actor_finds_its_worktree_not_the_callers_repository() {
    // It commits only when no multiplexer variable reached it.
    let repo = TestRepo::with()
        .committer(
            "echo work >> docs/a.md && test -z \"${TMUX+x}${TMUX_PANE+x}${STY+x}\" \
             && git add docs/a.md && git commit -q -m 'actor work'",
        )
        .commit();
    let main_before = repo.git(["rev-parse", "main"]);
    let main_index = std::fs::read(repo.path(".git/index")).unwrap();

    let git_dir = repo.path(".git");
    let index = repo.path(".git/index");
    // And a tmux pane's and a screen window's variables, which lead to a server that started
    // outside the attempt.
    let env: [(&str, &OsStr); 5] = [
        ("GIT_DIR", git_dir.as_os_str()),
        ("GIT_INDEX_FILE", index.as_os_str()),
        ("TMUX", OsStr::new("/tmp/tmux-1000/default,4242,0")),
        ("TMUX_PANE", OsStr::new("%3")),
        ("STY", OsStr::new("4243.pts-0.host")),
    ];
    let run = repo.baton_env(&repo.root, ["run", "plans/work.md"], &env);
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();

    assert_eq!(repo.git(["rev-parse", "main"]), main_before, "main moved");
    assert_eq!(
        repo.git(["log", "-1", "--format=%s", "main"]).trim(),
        "base"
    );
    assert_eq!(
        std::fs::read(repo.path(".git/index")).unwrap(),
        main_index,
        "the main index changed"
    );
    assert_eq!(
        repo.git(["log", "-1", "--format=%s", &format!("baton/{id}")])
            .trim(),
        "actor work"
    );
    assert_eq!(repo.git(["status", "--porcelain"]), "");

    let status = repo.baton(["status", &id, "--json"]);
    assert_eq!(status.code, 0, "{status}");
    let view = status.json();
    assert_eq!(
        view["stages"][0]["attempts"][0]["cleared_env"],
        serde_json::json!(["GIT_DIR", "GIT_INDEX_FILE", "TMUX", "TMUX_PANE", "STY"]),
        "{view:#}"
    );
    // Never the values: they may be private paths.
    assert!(
        !status.stdout.contains(&*index.to_string_lossy()),
        "{status}"
    );
}
