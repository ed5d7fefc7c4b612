//! What `doctor --fix` may remove: only what cannot lose work, only what git-baton provably
//! made, never what a live process or a running git holds.

use super::*;

/// `doctor --fix` applies every fix that cannot lose work and says so; `doctor` then reports
/// nothing it could fix. What holds work survives: a stale run (its fix runs an agent), a branch
/// of no run with commits no other branch has, and a worktree of no run with uncommitted work
/// (and its branch). `--fix --force` deletes the branch with commits, never the worktree.
#[test]
fn doctor_fix_applies_only_what_cannot_lose_work() {
    let (mut rng, _) = Rng::seeded("doctor --fix");
    let repo = standard_repo(&[]);
    make_debris(&repo, &mut rng);
    // A branch of no run with a commit of its own: a creation killed after it made the branch,
    // whose branch then got a commit.
    let before = branches(&repo);
    assert!(killed(
        &repo,
        &["run", "plans/fix.md"],
        &Kill::At("worktree")
    ));
    let lone = branches(&repo)
        .lines()
        .map(|b| b.trim_start_matches(['*', '+', ' ']).to_owned())
        .find(|b| !before.contains(b.as_str()))
        .expect("the killed creation's branch");
    let extra = repo.tmp().join("extra");
    repo.git(["worktree", "add", "-q", extra.to_str().unwrap(), &lone]);
    std::fs::write(extra.join("extra.md"), "only here\n").unwrap();
    repo.git_in(&extra, ["add", "extra.md"]);
    repo.git_in(&extra, ["commit", "-q", "-m", "extra"]);
    repo.git(["worktree", "remove", extra.to_str().unwrap()]);
    // A worktree of no run (a creation killed after it was made), then written to.
    assert!(killed(&repo, &["run", "plans/fix.md"], &Kill::At("state")));
    let dirty: PathBuf = std::fs::read_dir(repo.path(".baton/worktrees"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            !run_dir(&repo, &name).exists()
                && repo.git(["worktree", "list"]).contains(&name)
                && std::fs::read_to_string(p.join("docs/a.md")).is_ok()
        })
        .expect("a worktree of no run");
    std::fs::write(dirty.join("docs/a.md"), "uncommitted work\n").unwrap();
    let dirty_id = dirty.file_name().unwrap().to_string_lossy().into_owned();

    let fixed = repo.baton(["doctor", "--fix"]);
    assert_eq!(fixed.code, 1, "what holds work is left: {fixed}");
    let done: Vec<&str> = fixed
        .stdout
        .lines()
        .filter(|l| l.starts_with("fixed "))
        .collect();
    assert!(!done.is_empty(), "{fixed}");
    assert!(!fixed.stdout.contains("not fixed"), "{fixed}");

    let left = doctor_findings(&repo);
    assert!(
        left.iter().all(|f| f["safe"] == false),
        "doctor --fix left something it could fix: {left:#?}"
    );
    // What survives is what holds work (or, after a random kill inside git's checkout, what
    // doctor cannot tell from work).
    for kind in ["stale_run", "orphaned_worktree", "orphaned_branch"] {
        assert!(
            left.iter().any(|f| f["kind"] == kind),
            "no {kind}: {left:#?}"
        );
    }
    // And a lock a git killed mid-checkout left (a worktree's index.lock): reported, never
    // taken, since only the user can tell that no git is running.
    assert!(
        left.iter().all(|f| [
            "headless_run",
            "stale_run",
            "orphaned_worktree",
            "orphaned_branch",
            "git_lock"
        ]
        .contains(&f["kind"].as_str().unwrap())),
        "{left:#?}"
    );
    assert!(repo.git(["branch", "--list", &lone]).contains(&lone));
    assert_eq!(text(&dirty.join("docs/a.md")), "uncommitted work\n");
    assert!(repo.git(["branch", "--list"]).contains(&dirty_id));
    assert!(temporary_files(&repo).is_empty());
    assert!(run_entries(&repo).iter().all(|n| !n.starts_with('.')));

    let forced = repo.baton(["doctor", "--fix", "--force"]);
    assert!(
        forced
            .stdout
            .contains(&format!("fixed orphaned_branch: git branch -D {lone}")),
        "{forced}"
    );
    assert_eq!(repo.git(["branch", "--list", &lone]), "");
    assert_eq!(
        text(&dirty.join("docs/a.md")),
        "uncommitted work\n",
        "never the worktree"
    );
    assert!(
        repo.git(["branch", "--list"]).contains(&dirty_id),
        "nor its branch"
    );
}

/// `doctor --fix` removes only what git-baton provably made, even with `--force`: a `baton/`
/// branch only when its name is a run id and its reflog shows git-baton creating it (a user's
/// `baton/my-experiment` is not even reported; a run-id-like branch made by hand is reported,
/// never deleted), and in the store and `.git/info` only files named exactly as an atomic write
/// names its temporary file (`.git-baton-<pid>-XXXXXX.tmp`; never a directory, a link, any
/// `.tmp-` name — git-baton's own older shape included, which is what another tool's mktemp or a
/// hand gives too — nor the fresh file of a writer that is alive).
#[test]
fn doctor_fix_removes_only_what_git_baton_made() {
    let repo = standard_repo(&[]);
    let before = branches(&repo);
    assert!(killed(
        &repo,
        &["run", "plans/fix.md"],
        &Kill::At("worktree")
    ));
    let ours = branches(&repo)
        .lines()
        .map(|b| b.trim_start_matches(['*', '+', ' ']).to_owned())
        .find(|b| !before.contains(b.as_str()))
        .expect("the killed creation's branch");
    let theirs = [
        "baton/my-experiment",
        "baton/0qqqqqqqqq",
        "baton/0123456789/x",
        "baton/0QQQQQQQQQ",
    ];
    for branch in theirs {
        repo.git(["branch", branch, "main"]);
    }
    // Named like a run, but made by hand: no trace of git-baton in its reflog.
    repo.git(["branch", "baton/0rrrrrrrrr", "main"]);
    let info = repo.path(".git/info");
    let store = repo.path(".git/baton");
    std::fs::create_dir_all(info.join(".tmp-sparse-drafts")).unwrap();
    std::fs::write(info.join(".tmp-sparse-drafts/v2"), "hand-written rules\n").unwrap();
    std::fs::create_dir_all(info.join(".tmp-abcdef")).unwrap();
    std::fs::write(info.join(".tmp-abcdef/keep"), "x").unwrap();
    let foreign_files = [
        info.join(".tmp-sparse"),
        info.join(".tmp-backup"),
        info.join(".tmp-Q1w2E3"),
        info.join(format!(".git-baton-{}-Q1w2E3.tmp", std::process::id())),
        info.join(format!(".git-baton-{DEAD_PID}-R1w2E3")),
        info.join(".tmp-foo"),
        info.join(".tmp-abcdefg"),
        info.join(".tmp-ab-def"),
        store.join(".tmp-notes"),
        runs_dir(&repo).join(".tmp-x"),
    ];
    for file in &foreign_files {
        std::fs::write(file, "not git-baton's\n").unwrap();
    }
    std::os::unix::fs::symlink(&foreign_files[0], info.join(".tmp-l1nk00")).unwrap();
    let debris = [
        info.join(temp_name("Q1w2E3")),
        store.join(temp_name("000aaa")),
    ];
    for file in &debris {
        std::fs::write(file, "half").unwrap();
    }

    let findings = doctor_findings(&repo);
    let about = |needle: &str| {
        findings
            .iter()
            .filter(|f| f["message"].as_str().unwrap().contains(needle))
            .count()
    };
    for name in ["my-experiment", "baton/0123456789/x", "0QQQQQQQQQ"] {
        assert_eq!(about(name), 0, "{name}: {findings:#?}");
    }
    for foreign in [
        ".tmp-sparse-drafts",
        ".tmp-abcdef",
        ".tmp-foo",
        ".tmp-abcdefg",
        ".tmp-ab-def",
        ".tmp-notes",
        ".tmp-x",
        ".tmp-l1nk00",
    ] {
        assert_eq!(about(foreign), 0, "{foreign}: {findings:#?}");
    }
    for file in &foreign_files {
        let name = file.file_name().unwrap().to_str().unwrap();
        assert_eq!(about(name), 0, "{name}: {findings:#?}");
    }
    for hand_made in ["baton/0qqqqqqqqq", "baton/0rrrrrrrrr"] {
        let finding = findings
            .iter()
            .find(|f| {
                f["kind"] == "orphaned_branch" && f["fix"].as_str().unwrap().ends_with(hand_made)
            })
            .unwrap_or_else(|| panic!("{hand_made}: {findings:#?}"));
        assert_unproven(finding);
    }

    for args in [&["doctor", "--fix"][..], &["doctor", "--fix", "--force"]] {
        let fixed = repo.baton(args);
        assert!(fixed.code == 0 || fixed.code == 1, "{fixed}");
        for branch in theirs
            .iter()
            .chain(&["baton/0qqqqqqqqq", "baton/0rrrrrrrrr"])
        {
            assert!(
                repo.git(["branch", "--list", branch]).contains(branch),
                "{args:?} deleted {branch}: {fixed}"
            );
        }
        assert_eq!(
            text(&info.join(".tmp-sparse-drafts/v2")),
            "hand-written rules\n"
        );
        assert!(info.join(".tmp-abcdef/keep").is_file());
        assert!(info.join(".tmp-l1nk00").is_symlink());
        for file in &foreign_files {
            assert!(file.is_file(), "{args:?} removed {}", file.display());
        }
    }
    // What git-baton made went with the first `--fix`: the killed creation's branch (its tip is
    // main's) and the temporary files of the right name.
    assert_eq!(repo.git(["branch", "--list", &ours]), "");
    for file in &debris {
        assert!(!file.exists(), "{} was kept", file.display());
    }
}

/// `doctor` never touches what a live process holds: a temporary file in the directory of a run
/// being driven is not reported (its writer may be about to rename it), and `--fix` leaves it;
/// once the driver is gone it is debris, reported and removed.
#[test]
fn doctor_leaves_what_a_live_process_holds_alone() {
    let scratch_dir = scratch();
    let pid_file = outside(&scratch_dir, "agent.pid");
    let slow = worker().pid(&pid_file).sleep("1.5");
    let repo = repo_running(&[slow], "");
    let child = spawn(&repo, &["run", "plans/fix.md"]);
    wait_for_line(&pid_file);
    let id = wait_for_run(&repo);
    let planted = run_dir(&repo, &id).join(format!("attempts/executor-1/{}", temp_name("pLant3")));
    std::fs::write(&planted, "half").unwrap();

    let fixed = repo.baton(["doctor", "--fix"]);
    assert_eq!(
        fixed.to_string(),
        "exit: 0\n--- stdout\nno problems found\n"
    );
    assert!(planted.exists());
    assert_eq!(wait(&repo, child).code, 0);

    let findings = doctor_findings(&repo);
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0]["kind"], "temporary_file");
    assert_eq!(findings[0]["safe"], true);
    let fixed = repo.baton(["doctor", "--fix"]);
    assert!(
        fixed.stdout.starts_with("fixed temporary_file: rm -f "),
        "{fixed}"
    );
    assert!(!planted.exists());
    nothing_left_over(&repo, "after the run");
}

/// A lock a killed git left (here `packed-refs.lock`, as a git killed during `clean`'s ref
/// deletion leaves it) makes git refuse the next ref deletion: `clean` fails naming it, `doctor`
/// reports it with its fix, and `doctor --fix` leaves it alone, since only the user can tell that
/// no git is running. Once removed, `clean` completes.
#[test]
fn a_lock_left_by_a_killed_git_is_reported_never_taken() {
    let repo = standard_repo(&[]);
    let id = reviewed(&repo);
    assert_eq!(repo.baton(["finish", &id]).code, 0);
    repo.git(["pack-refs", "--all"]);
    let lock = repo.path(".git/packed-refs.lock");
    std::fs::write(&lock, "").unwrap();

    let clean = repo.baton(["clean", &id]);
    assert_ne!(clean.code, 0, "{clean}");
    assert!(clean.stderr.contains("packed-refs.lock"), "{clean}");

    let findings = doctor_findings(&repo);
    let reported = findings
        .iter()
        .find(|f| f["kind"] == "git_lock")
        .unwrap_or_else(|| panic!("{findings:#?}"));
    assert_eq!(reported["safe"], false);
    assert!(
        reported["fix"].as_str().unwrap().starts_with("rm -f "),
        "{reported:#?}"
    );
    let fixed = repo.baton(["doctor", "--fix"]);
    assert!(lock.exists(), "doctor --fix took git's lock: {fixed}");

    let fix = repo.unmask(reported["fix"].as_str().unwrap());
    let removed = repo.shell(&fix);
    assert_eq!(removed.code, 0, "{removed}");
    let clean = repo.baton(["clean", &id]);
    assert_eq!(clean.code, 0, "{clean}");
    assert!(
        !doctor_findings(&repo)
            .iter()
            .any(|f| f["kind"] == "git_lock")
    );
}

/// A run directory without `state.json` (what a `clean` of an older git-baton killed midway
/// left, or a deletion by hand) is no run, but it is not invisible: `doctor` reports it with
/// `git baton clean --force <id>`, which removes it and the run's refs and nothing else (its
/// worktree and branch are reported on their own). `doctor --fix` removes one that no live
/// process holds and that has no record in git; one whose record still holds its last state
/// (every run since records exist), or whose lock is held, it leaves alone.
#[test]
fn a_run_directory_without_its_state_is_reported_and_removed() {
    let repo = standard_repo(&[]);
    let id = reviewed(&repo);
    let dir = run_dir(&repo, &id);
    std::fs::remove_file(dir.join("state.json")).unwrap();
    assert!(dir.join("attempts").is_dir() && dir.join("plan.md").is_file());
    assert_eq!(
        repo.baton(["list"]).stdout.trim(),
        "no runs yet; start one with `git baton run <PLAN>`"
    );

    let findings = doctor_findings(&repo);
    let headless: Vec<&Value> = findings
        .iter()
        .filter(|f| f["kind"] == "headless_run")
        .collect();
    assert_eq!(headless.len(), 1, "{findings:#?}");
    assert_eq!(headless[0]["run"], id.as_str());
    // Its record still holds its last state: said, with how to bring it back, and left to the
    // user.
    assert_eq!(headless[0]["safe"], false);
    let record = format!("refs/baton/runs/{id}/record");
    let message = headless[0]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("`git show {record}:state.json > ")),
        "{message}"
    );
    assert_ne!(repo.git(["rev-parse", "--verify", "-q", &record]), "");
    assert_eq!(headless[0]["fix"], format!("git baton clean --force {id}"));
    // Its worktree (with the agent's uncommitted work) and branch are findings of their own,
    // after it.
    let kinds: Vec<&str> = findings
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["headless_run", "orphaned_worktree", "orphaned_branch"],
        "{findings:#?}"
    );

    let refused = repo.baton(["clean", &id[..6]]);
    assert_eq!(
        refused.to_string(),
        format!(
            "exit: 2\n--- stderr\nerror: run {id} has no state.json: $TMP/repo/.git/baton/runs/{id} is what is left of it\n\
             hint: `git baton clean --force {id}` removes it; its worktree and branch, if any, stay for `git baton doctor` to report\n"
        )
    );
    assert!(dir.exists());
    // An empty name is a prefix of every id, but names no run.
    let nameless = repo.baton(["clean", "--force", ""]);
    assert_eq!(nameless.code, 2, "{nameless}");
    assert!(dir.exists(), "{nameless}");
    let snapshots = format!("refs/baton/runs/{id}/");
    assert_ne!(
        repo.git(["for-each-ref", &snapshots]),
        "",
        "the run had snapshots"
    );
    let clean = repo.baton(["clean", "--force", &id]);
    assert_eq!(clean.code, 0, "{clean}");
    assert_eq!(
        clean.stdout,
        format!(
            "removed what was left of run {id}; its worktree and branch, if any, are kept (`git baton doctor` reports them)\n"
        )
    );
    assert!(!dir.exists());
    assert_eq!(repo.git(["for-each-ref", &snapshots]), "");
    let worktree = repo.path(&format!(".baton/worktrees/{id}"));
    assert!(worktree.join("docs/a.md").is_file(), "the worktree stays");
    assert!(branches(&repo).contains(&id), "the branch stays");
    let kinds: Vec<String> = doctor_findings(&repo)
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["orphaned_worktree", "orphaned_branch"]);
    // What the printed fixes then do leaves nothing.
    let fixes = printed_fixes(&repo);
    assert_eq!(repo.shell(&fixes).code, 0, "{fixes}");
    nothing_left_over(&repo, "after clean --force");

    // `doctor --fix`: two directories without state and no worktree; one has its lock held by a
    // live process (as a driver would hold it), and stays until that process is gone.
    let free = "0aaaaaaaaa";
    let held = "0bbbbbbbbb";
    for name in [free, held] {
        std::fs::create_dir_all(run_dir(&repo, name).join("attempts/executor-1")).unwrap();
        std::fs::write(run_dir(&repo, name).join("plan.md"), PLAN).unwrap();
        std::fs::write(run_dir(&repo, name).join("lock"), "").unwrap();
    }
    let mut holder = Command::new("flock")
        .arg("--exclusive")
        .arg(run_dir(&repo, held).join("lock"))
        .args(["sleep", "30"])
        // The repository's HOME: if the test fails before killing it, dropping the repository
        // does (see `TestRepo`'s `Drop`).
        .env("HOME", &repo.home)
        .process_group(0)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + LIVENESS;
    while doctor_findings(&repo).len() != 1 {
        assert!(Instant::now() < deadline, "flock did not take the lock");
        std::thread::sleep(Duration::from_millis(20));
    }
    let fixed = repo.baton(["doctor", "--fix"]);
    assert_eq!(
        fixed.to_string(),
        format!(
            "exit: 0\n--- stdout\nfixed headless_run: git baton clean --force {free}\nno problems found\n"
        )
    );
    assert!(!run_dir(&repo, free).exists());
    assert!(run_dir(&repo, held).exists(), "a live process holds it");
    // flock and the sleep that inherited the lock, as a group.
    assert!(kill("KILL", &format!("-{}", holder.id())));
    holder.wait().unwrap();
    assert!(group_gone_within(&holder.id().to_string(), LIVENESS));
    let fixed = repo.baton(["doctor", "--fix"]);
    assert!(
        fixed.stdout.starts_with(&format!(
            "fixed headless_run: git baton clean --force {held}\n"
        )),
        "{fixed}"
    );
    nothing_left_over(&repo, "after doctor --fix");
}

/// The orphaned worktree finding about `path`, if doctor reports one.
fn orphaned_worktree<'a>(findings: &'a [Value], path: &Path) -> Option<&'a Value> {
    let shown = path.file_name().unwrap().to_str().unwrap().to_owned();
    findings.iter().find(|f| {
        f["kind"] == "orphaned_worktree" && f["message"].as_str().unwrap().contains(&shown)
    })
}

/// A directory under the worktree root is git-baton's to remove only when its name is a run id
/// and its branch provably one git-baton made: a user's worktree `my-scratch` there is not even
/// reported, and one named like a run on a branch made by hand (or with no branch at all) is
/// reported and left, even by `--fix --force`. A killed creation's worktree still goes.
#[test]
fn doctor_fix_removes_only_worktrees_git_baton_made() {
    let repo = standard_repo(&[]);
    assert!(killed(&repo, &["run", "plans/fix.md"], &Kill::At("state")));
    let root = repo.path(".baton/worktrees");
    let ours = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .next()
        .expect("the killed creation's worktree");
    let scratch = root.join("my-scratch");
    let hand_made = root.join("0zzzzzzzzz");
    repo.git([
        "worktree",
        "add",
        "-q",
        "-b",
        "scratch",
        scratch.to_str().unwrap(),
    ]);
    repo.git([
        "worktree",
        "add",
        "-q",
        "-b",
        "baton/0zzzzzzzzz",
        hand_made.to_str().unwrap(),
    ]);
    let plain = root.join("0yyyyyyyyy");
    std::fs::create_dir_all(&plain).unwrap();

    let findings = doctor_findings(&repo);
    assert!(
        orphaned_worktree(&findings, &scratch).is_none(),
        "{findings:#?}"
    );
    for path in [&hand_made, &plain] {
        let finding = orphaned_worktree(&findings, path).unwrap_or_else(|| panic!("{findings:#?}"));
        assert_unproven(finding);
    }
    for args in [&["doctor", "--fix"][..], &["doctor", "--fix", "--force"]] {
        let fixed = repo.baton(args);
        assert!(fixed.code == 0 || fixed.code == 1, "{fixed}");
        for path in [&scratch, &hand_made, &plain] {
            assert!(
                path.is_dir(),
                "{args:?} removed {}: {fixed}",
                path.display()
            );
        }
    }
    assert!(!ours.exists(), "the killed creation's worktree stays");
    assert!(repo.git(["worktree", "list"]).contains("my-scratch"));
}

/// An orphaned run worktree whose HEAD is a detached commit no ref reaches holds that commit
/// (and the work in it) alone: `doctor` says so and `--fix` leaves it. Detached at a commit
/// its branch has, it holds nothing and goes.
#[test]
fn doctor_fix_keeps_a_worktree_whose_head_no_ref_reaches() {
    let repo = standard_repo(&[]);
    let id = reviewed(&repo);
    let worktree = repo.path(&format!(".baton/worktrees/{id}"));
    // Everything the run did committed on its branch: only the detached HEAD can hold work.
    repo.git_in(&worktree, ["add", "-A"]);
    repo.git_in(
        &worktree,
        ["commit", "-q", "--allow-empty", "-m", "the run's work"],
    );
    repo.git_in(&worktree, ["switch", "-q", "--detach"]);
    std::fs::remove_dir_all(run_dir(&repo, &id)).unwrap();
    let findings = doctor_findings(&repo);
    let finding =
        orphaned_worktree(&findings, &worktree).unwrap_or_else(|| panic!("{findings:#?}"));
    assert_eq!(
        finding["safe"], true,
        "detached at its branch's tip: {finding:#}"
    );

    std::fs::write(worktree.join("docs/precious.md"), "precious\n").unwrap();
    repo.git_in(&worktree, ["add", "docs/precious.md"]);
    repo.git_in(&worktree, ["commit", "-q", "-m", "precious detached work"]);
    let commit = repo
        .git_in(&worktree, ["rev-parse", "HEAD"])
        .trim()
        .to_owned();
    let findings = doctor_findings(&repo);
    let finding =
        orphaned_worktree(&findings, &worktree).unwrap_or_else(|| panic!("{findings:#?}"));
    assert_eq!(finding["safe"], false, "{finding:#}");
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .contains(&format!("HEAD (commit {commit}, which no ref reaches)")),
        "{finding:#}"
    );
    let fixed = repo.baton(["doctor", "--fix"]);
    assert_eq!(fixed.code, 1, "{fixed}");
    assert_eq!(repo.git_in(&worktree, ["rev-parse", "HEAD"]).trim(), commit);
}

/// A finding `doctor` reports and never fixes: what it names is not provably git-baton's.
fn assert_unproven(finding: &serde_json::Value) {
    assert_eq!(finding["safe"], false, "{finding:#}");
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .contains("does not show git-baton creating it"),
        "{finding:#}"
    );
}
