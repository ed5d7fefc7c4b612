//! `worktree_root` cannot lose work: `info/exclude` names exactly the root, roots that would
//! share a directory with tracked files (or sit in `.git`, or be the repository) are refused
//! before anything is created, an older broader exclude line is migrated, and `finish` keeps a
//! worktree that holds anything its branch does not, ignored files included.

use super::*;

const MARKER: &str = "# git-baton: run worktrees (git-baton manages the next line)";

fn exclude(repo: &TestRepo) -> String {
    std::fs::read_to_string(repo.path(".git/info/exclude")).unwrap_or_default()
}

/// A shell actor that writes `docs/new-chapter.md`, a file in a directory git does not track.
fn chapter_writer() -> Actor {
    Actor::shell(
        "worker",
        "mkdir -p docs && printf '# A new chapter\\n' >docs/new-chapter.md",
    )
}

/// The incident: with the root under `docs/`, the exclude line used to be `/docs/`, and the
/// agent's new chapter was invisible to the gate, missing from the snapshot and the `finish`
/// commit, and deleted with the worktree.
#[test]
fn a_new_file_beside_the_root_reaches_gate_snapshot_and_finish_commit() {
    let repo = TestRepo::with()
        .file("notes/a.md", "a\n")
        .plan(
            "plans/chapter.md",
            "Write a chapter",
            &["docs/new-chapter.md"],
        )
        .config(&format!(
            "{}worktree_root: docs/.runs\n",
            config(&[chapter_writer(), writer()], &pipeline_with("worker", ""))
        ))
        .commit();
    let run = repo.baton(["run", "plans/chapter.md"]);
    assert_eq!(run.code, 0, "the gate sees the new file:\n{run}");
    let id = run.run_id();
    let worktree = repo.path(&format!("docs/.runs/{id}"));
    assert!(worktree.join("docs/new-chapter.md").is_file(), "{run}");
    assert_eq!(
        coverage_rows(&status(&repo, &id)),
        ["docs/new-chapter.md changed"]
    );
    let exclude = exclude(&repo);
    assert!(
        exclude.contains(&format!("{MARKER}\n/docs/.runs/\n")),
        "{exclude}"
    );
    assert!(!exclude.contains("\n/docs/\n"), "{exclude}");

    let snapshot = repo.git([
        "ls-tree",
        "-r",
        "--name-only",
        &format!("refs/baton/runs/{id}/attempts/executor-1"),
    ]);
    assert!(snapshot.contains("docs/new-chapter.md"), "{snapshot}");

    let finish = repo.baton(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    let committed = repo.git(["show", &format!("baton/{id}:docs/new-chapter.md")]);
    assert_eq!(committed, "# A new chapter\n");
    assert!(!worktree.exists(), "everything is on the branch:\n{finish}");
}

/// The default form: `/.baton/` hid every new file under `.baton/`, the documented home of the
/// prompt templates. Only the worktrees are hidden now.
#[test]
fn the_default_root_hides_only_the_worktrees() {
    let repo = repo_running(&[worker()], "");
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    repo.write(".baton/prompts/x.md", "{{plan}}\n");
    assert_eq!(
        repo.git(["status", "--porcelain", "--untracked-files=all"]),
        "?? .baton/prompts/x.md\n"
    );
    assert_eq!(exclude(&repo).matches(MARKER).count(), 1);
    assert!(exclude(&repo).ends_with(&format!("{MARKER}\n/.baton/worktrees/\n")));

    // Committed prompt templates beside the default root do not make it refused.
    repo.commit_all("prompts");
    let again = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(again.code, 0, "{again}");
    assert_eq!(exclude(&repo).matches(MARKER).count(), 1, "idempotent");
}

/// Roots that would share a directory with tracked files, sit in the git directory or be the
/// repository: refused with the configuration's location, before anything is created.
#[test]
fn roots_among_tracked_files_in_git_or_at_the_top_are_refused() {
    for (root, why) in [
        ("docs/.runs", "is inside `docs`, which has tracked files"),
        ("docs", "is inside `docs`, which has tracked files"),
        ("staged/runs", "is inside `staged`, which has tracked files"),
        (".git/runs", "is inside the git directory"),
        (".", "is the repository root"),
        ("./docs/../", "is the repository root"),
    ] {
        let repo = repo_with(&format!(
            "{}worktree_root: {root}\n",
            config(&[worker(), writer()], PIPELINE)
        ));
        // Tracked only in the index counts too.
        repo.write("staged/x.md", "x\n");
        repo.git(["add", "staged/x.md"]);
        let line = repo
            .git(["show", "HEAD:.baton.yml"])
            .lines()
            .position(|l| l.starts_with("worktree_root:"))
            .unwrap()
            + 1;
        let run = repo.baton(["run", "plans/fix.md"]);
        assert_eq!(run.code, 2, "{root}: {run}");
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(
            lines[0],
            format!("error: .baton.yml:{line}:16: `worktree_root: {root}` {why}"),
            "{run}"
        );
        assert!(lines[1].starts_with("hint: "), "{run}");
        assert_eq!(lines.len(), 2, "{run}");
        assert_eq!(branches(&repo), "", "{root}: no branch");
        assert!(run_entries(&repo).is_empty(), "{root}: no run");
        assert_eq!(exclude(&repo).matches(MARKER).count(), 0, "{root}");
        assert!(!repo.path("docs/.runs").exists() && !repo.path(".git/runs").exists());
    }
}

/// `git worktree remove` deletes ignored files: `finish` keeps a worktree holding one, says what
/// and how to remove it, and `clean` refuses it without `--force`.
#[test]
fn finish_keeps_a_worktree_holding_an_ignored_file() {
    let agent = Actor::shell(
        "worker",
        "for f in a b c; do echo new >>docs/$f.md; done; echo notes >scratch.log",
    );
    let repo = TestRepo::with()
        .files(&[
            ("docs/a.md", "a\n"),
            ("docs/b.md", "b\n"),
            ("docs/c.md", "c\n"),
            ("plans/fix.md", PLAN),
            (".gitignore", "*.log\n"),
        ])
        .config(&config(&[agent, writer()], &pipeline_with("worker", "")))
        .commit();
    let (id, _) = repo.run_plan("plans/fix.md", 0);
    let worktree = repo.path(&format!(".baton/worktrees/{id}"));

    let finish = repo.baton(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    assert_eq!(text(&worktree.join("scratch.log")), "notes\n", "{finish}");
    assert!(
        finish.stdout.contains(&format!(
            "/.baton/worktrees/{id}: it holds 1 path(s) the branch does not have:\n  scratch.log\n"
        )),
        "{finish}"
    );
    assert!(
        finish.stdout.contains(&format!(
            "`git worktree remove --force $TMP/repo/.baton/worktrees/{id}`"
        )),
        "{finish}"
    );

    let clean = repo.baton(["clean", &id]);
    assert_eq!(clean.code, 2, "{clean}");
    assert!(clean.stderr.contains("scratch.log"), "{clean}");
    assert_eq!(text(&worktree.join("scratch.log")), "notes\n");
}

/// A line an older git-baton wrote under its marker is replaced; the user's lines, the same
/// pattern included, are not touched.
#[test]
fn an_older_broader_exclude_line_is_migrated() {
    let repo = repo_running(&[worker()], "");
    let old = "# mine\n/.baton/\n*.tmp\n# worktrees of git-baton runs\n/.baton/\n";
    std::fs::write(repo.path(".git/info/exclude"), old).unwrap();
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        exclude(&repo),
        format!("# mine\n/.baton/\n*.tmp\n{MARKER}\n/.baton/worktrees/\n")
    );
}

/// The same class in `doctor --fix`: a worktree of no run (its creation killed) is debris it
/// removes on its own only when nothing in it is missing from its commit, ignored files included.
#[test]
fn doctor_fix_keeps_an_orphaned_worktree_holding_an_ignored_file() {
    let repo = repo_running(&[worker()], "");
    let user_exclude = repo.path(".git/info/exclude");
    std::fs::write(&user_exclude, "*.log\n").unwrap();
    let killed = repo.baton_env(
        &repo.root,
        ["run", "plans/fix.md"],
        &[("GIT_BATON_FAIL_AT", OsStr::new("state:kill"))],
    );
    assert_eq!(killed.code, -1, "killed at `state`: {killed}");
    let orphan = std::fs::read_dir(repo.path(".baton/worktrees"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .next()
        .expect("the killed creation's worktree");
    std::fs::write(orphan.join("scratch.log"), "notes\n").unwrap();

    let fixed = repo.baton(["doctor", "--fix"]);
    assert!(fixed.stdout.contains("scratch.log"), "{fixed}");
    assert_eq!(text(&orphan.join("scratch.log")), "notes\n", "{fixed}");
}

/// Changing `worktree_root` does not un-ignore the runs under the old root: their line stays
/// while they are there (the main worktree's `git status` stays clean), beside the new root's,
/// and goes once they are gone.
#[test]
fn changing_the_root_keeps_the_old_runs_ignored() {
    let repo = repo_running(&[worker()], "");
    let first = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(first.code, 0, "{first}");
    let first = first.run_id();
    let yml = std::fs::read_to_string(repo.path(".baton.yml")).unwrap();
    repo.write(".baton.yml", &format!("{yml}worktree_root: runs2\n"));
    repo.commit_all("move the worktree root");

    let second = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(second.code, 0, "{second}");
    let second = second.run_id();
    assert!(repo.path(&format!("runs2/{second}/docs/a.md")).is_file());
    assert_eq!(
        repo.git(["status", "--porcelain", "--untracked-files=all"]),
        "",
        "the main worktree shows no run worktree"
    );
    let lines = exclude(&repo);
    assert!(
        lines.ends_with(&format!(
            "\n{MARKER}\n/.baton/worktrees/\n{MARKER}\n/runs2/\n"
        )),
        "{lines}"
    );
    assert_eq!(lines.matches(MARKER).count(), 2, "{lines}");
    // Still only the worktrees: a new prompt template beside the old root shows.
    repo.write(".baton/prompts/x.md", "{{plan}}\n");
    assert_eq!(
        repo.git(["status", "--porcelain", "--untracked-files=all"]),
        "?? .baton/prompts/x.md\n"
    );
    std::fs::remove_file(repo.path(".baton/prompts/x.md")).unwrap();

    // Once the old root holds no run, its line goes with the next creation.
    let clean = repo.baton(["clean", "--force", &first]);
    assert_eq!(clean.code, 0, "{clean}");
    let third = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(third.code, 0, "{third}");
    let lines = exclude(&repo);
    assert!(
        lines.ends_with(&format!("\n{MARKER}\n/runs2/\n")),
        "{lines}"
    );
    assert_eq!(lines.matches(MARKER).count(), 1, "{lines}");
    assert_eq!(
        repo.git(["status", "--porcelain", "--untracked-files=all"]),
        ""
    );
}

/// A run's paths do not depend on where the command ran: from inside the run's worktree,
/// `status --json` names the same `run_dir` as from the main worktree (it once went through
/// `.git/worktrees/<id>/../..`), and the directory is the run's.
#[test]
fn status_json_names_one_run_dir_from_any_worktree() {
    let repo = repo_running(&[worker()], "");
    let (id, _) = repo.run_plan("plans/fix.md", 0);
    let from_main = repo.baton(["status", &id, "--json"]).json();
    // The paths are printed with the temporary directory as `$TMP`.
    let real = |path: &Value| repo.unmask(path.as_str().unwrap());
    let from_run = repo
        .baton_in(
            Path::new(&real(&from_main["worktree"])),
            ["status", &id, "--json"],
        )
        .json();
    let run_dir = real(&from_main["run_dir"]);
    assert_eq!(real(&from_run["run_dir"]), run_dir);
    assert!(!run_dir.contains(".."), "{run_dir}");
    assert!(
        Path::new(&run_dir).join("state.json").is_file(),
        "{run_dir}"
    );
}
