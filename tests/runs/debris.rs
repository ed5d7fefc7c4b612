//! What killed commands leave behind, and how it is found and removed.
//!
//! `clean` killed at any moment leaves the whole run or a removal that `doctor` reports and
//! `clean` finishes — never a run directory that nothing lists. `doctor` lists every leftover
//! with one command each, in an order in which the commands apply top to bottom (they are run
//! here with `sh -e`), and `doctor --fix` applies the ones that cannot lose work. The debris is
//! made for real: `kill -9` at the failure-injection points (`GIT_BATON_FAIL_AT=<point>:kill`)
//! and at random moments of a seeded, bounded loop; the seed is printed (`CRASH_SEED` replays
//! it) with the counts of what the kills left.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::process::Stdio;

use super::*;
use crate::support::Rng;

mod fix;

/// Random kills per loop; the injection points come on top.
const RANDOM_KILLS: usize = 8;

/// Where a trial kills git-baton.
#[derive(Debug, Clone)]
enum Kill {
    /// It kills itself at this injection point.
    At(&'static str),
    /// Its process group is killed this long after it started (perhaps after it ended).
    After(Duration),
}

/// Runs git-baton with `args` in its own process group and kills it as `kill` says; returns
/// whether it died of the kill (rather than ending first). The whole group goes, so that no git
/// child of git-baton finishes its work after the kill.
fn killed(repo: &TestRepo, args: &[&str], how: &Kill) -> bool {
    let mut cmd = repo.baton_command(&repo.root, &[], args);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    if let Kill::At(point) = how {
        cmd.env("GIT_BATON_FAIL_AT", format!("{point}:kill"));
    }
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    let pgid = child.id().to_string();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().is_none();
        }
        match how {
            Kill::After(delay) if started.elapsed() >= *delay => {
                kill("KILL", &format!("-{pgid}"));
                child.wait().unwrap();
                return true;
            }
            _ => assert!(
                started.elapsed() < LIVENESS,
                "git-baton {args:?} did not end"
            ),
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Above the kernel's largest pid (2^22): the pid of no live process.
const DEAD_PID: u32 = 4_194_305;

/// The name git-baton's atomic write gives its temporary file, as a killed writer (a dead pid)
/// leaves it.
fn temp_name(random: &str) -> String {
    format!(".git-baton-{DEAD_PID}-{random}.tmp")
}

/// `doctor --json`, which must say something or nothing (exit 1 or 0), as findings.
fn doctor_findings(repo: &TestRepo) -> Vec<Value> {
    let doctor = repo.baton(["doctor", "--json"]);
    assert!(doctor.code == 0 || doctor.code == 1, "{doctor}");
    doctor.json()["findings"].as_array().unwrap().clone()
}

/// Every file under the store and in `.git/info` named like git-baton's temporary files
/// (`.git-baton-<pid>-XXXXXX.tmp`).
fn temporary_files(repo: &TestRepo) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if git_baton::files::is_temporary_name(
                &path.file_name().unwrap().to_string_lossy(),
            ) {
                out.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(&repo.path(".git/baton"), &mut found);
    walk(&repo.path(".git/info"), &mut found);
    found
}

/// Nothing under the run store is invisible: every run directory with a whole RunState is
/// listed, and `doctor` reports every other entry (a run directory without its state included)
/// and every temporary file. Returns the findings.
fn nothing_invisible(repo: &TestRepo, context: &str) -> Vec<Value> {
    let mut runs = Vec::new();
    let mut headless = Vec::new();
    for name in run_entries(repo) {
        if !name.starts_with('.') {
            let path = run_dir(repo, &name).join("state.json");
            if !path.exists() {
                headless.push(name);
                continue;
            }
            let raw = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("{context}: cannot read {} ({e})", path.display()));
            git_baton::state::store::parse(&raw)
                .unwrap_or_else(|e| panic!("{context}: {}: {e}", path.display()));
            runs.push(name);
        }
    }
    let list = repo.baton(["list", "--json"]);
    assert_eq!(list.code, 0, "{context}: {list}");
    let listed: Vec<String> = list
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, runs, "{context}: list and the run directories");

    let findings = doctor_findings(repo);
    let reported = |kind: &str, needle: &str| {
        findings
            .iter()
            .any(|f| f["kind"] == kind && f["message"].as_str().unwrap().contains(needle))
    };
    for name in &headless {
        assert!(
            reported("headless_run", name),
            "{context}: doctor does not report the run directory {name} without state.json: {findings:#?}"
        );
    }
    // A temporary file directly in `runs/` is checked with the others below.
    for name in run_entries(repo)
        .iter()
        .filter(|n| n.starts_with('.') && !git_baton::files::is_temporary_name(n))
    {
        let kind = if name.starts_with(".clean-") {
            "orphaned_removal"
        } else {
            "orphaned_creation"
        };
        assert!(
            reported(kind, name),
            "{context}: doctor does not report {name}: {findings:#?}"
        );
    }
    for lock in ["packed-refs.lock", "HEAD.lock", "index.lock", "config.lock"] {
        assert!(
            !repo.path(".git").join(lock).exists() || reported("git_lock", lock),
            "{context}: doctor does not report .git/{lock}: {findings:#?}"
        );
    }
    for file in temporary_files(repo) {
        let shown = file.file_name().unwrap().to_string_lossy().into_owned();
        // Inside an unfinished creation or removal, it goes with the directory.
        let inside = file.ancestors().any(|dir| {
            dir.file_name().is_some_and(|n| {
                n.to_string_lossy().starts_with(".new-")
                    || n.to_string_lossy().starts_with(".clean-")
            })
        });
        assert!(
            inside || reported("temporary_file", &shown),
            "{context}: doctor does not report {}: {findings:#?}",
            file.display()
        );
    }
    findings
}

/// The fixes `doctor` prints, in order, as a script.
fn printed_fixes(repo: &TestRepo) -> String {
    let doctor = repo.baton(["doctor"]);
    doctor
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("  fix: "))
        .map(|fix| repo.unmask(fix))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Nothing is left over: no hidden entry or temporary file in the store, every registered
/// worktree is the main one or a listed run's, `git worktree prune` has nothing to do, every
/// `baton/` branch is a listed or cleaned run's, and `doctor` finds nothing.
fn nothing_left_over(repo: &TestRepo, context: &str) {
    let entries = run_entries(repo);
    assert!(
        entries.iter().all(|n| !n.starts_with('.')),
        "{context}: {entries:?}"
    );
    assert_eq!(temporary_files(repo), Vec::<PathBuf>::new(), "{context}");
    let listed: Vec<String> = entries;
    let registered = worktrees(repo);
    assert_eq!(registered[0], repo.root.display().to_string(), "{context}");
    for worktree in &registered[1..] {
        let name = Path::new(worktree).file_name().unwrap().to_string_lossy();
        assert!(
            listed.iter().any(|id| *id == name) && Path::new(worktree).is_dir(),
            "{context}: worktree {worktree} is no listed run's"
        );
    }
    for dir in std::fs::read_dir(repo.path(".baton/worktrees"))
        .into_iter()
        .flatten()
    {
        let name = dir.unwrap().file_name().into_string().unwrap();
        assert!(listed.contains(&name), "{context}: .baton/worktrees/{name}");
    }
    let prune = repo.git(["worktree", "prune", "--dry-run", "-v"]);
    assert_eq!(prune, "", "{context}");
    let cleaned = std::fs::read_to_string(repo.path(".git/baton/cleaned")).unwrap_or_default();
    for branch in repo
        .git(["branch", "--list", "--format=%(refname:short)", "baton/*"])
        .lines()
    {
        let id = branch.trim_start_matches("baton/");
        assert!(
            listed.iter().any(|l| l == id) || cleaned.lines().any(|l| l == id),
            "{context}: branch {branch} is no run's"
        );
    }
    let doctor = repo.baton(["doctor"]);
    assert_eq!(
        doctor.to_string(),
        "exit: 0\n--- stdout\nno problems found\n",
        "{context}"
    );
}

/// A run in review, by the standard worker.
fn reviewed(repo: &TestRepo) -> String {
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    run.run_id()
}

/// `clean` killed at each of its injection points and at random moments: before the run
/// directory is renamed aside, the run is whole and listed and `clean` removes it; after, it is
/// a removal `doctor` reports with `git baton clean <id>` as the fix, which finishes it. Either
/// way nothing is invisible meanwhile, and nothing is left after. Every other trial cleans an
/// unfinished run with uncommitted work (`--force`), whose worktree the removal deletes.
#[test]
fn clean_killed_at_any_moment_leaves_the_run_or_a_removal_that_clean_finishes() {
    let (mut rng, _) = Rng::seeded("clean");
    let repo = standard_repo(&[]);
    // How long a whole clean takes here, so that random kills land inside one.
    let id = reviewed(&repo);
    assert_eq!(repo.baton(["finish", &id]).code, 0);
    let started = Instant::now();
    assert_eq!(repo.baton(["clean", &id]).code, 0);
    let span = started.elapsed().as_millis() as u64 * 3 / 2 + 1;

    let points = [
        "write:cleaned",
        "clean:renamed",
        "clean:worktree",
        "clean:refs",
    ];
    let kills: Vec<Kill> = points
        .iter()
        .map(|p| Kill::At(p))
        .chain((0..RANDOM_KILLS).map(|_| Kill::After(Duration::from_millis(rng.below(span)))))
        .collect();
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    for (n, kill) in kills.iter().enumerate() {
        let forced = n % 2 == 1;
        let id = if forced {
            let run = repo.baton(["run", "plans/fix.md", "--stop-after", "executor"]);
            assert_eq!(run.code, 0, "{run}");
            run.run_id()
        } else {
            let id = reviewed(&repo);
            assert_eq!(repo.baton(["finish", &id]).code, 0);
            id
        };
        let args: Vec<&str> = if forced {
            vec!["clean", "--force", &id]
        } else {
            vec!["clean", &id]
        };
        let context = format!("clean {kill:?} (forced: {forced})");
        let died = killed(&repo, &args, kill);
        if let Kill::At(_) = kill {
            assert!(died, "{context}: the injection point was not reached");
        }

        let findings = nothing_invisible(&repo, &context);
        // A git killed with git-baton keeps its lock (`packed-refs.lock`, during a ref
        // deletion) and git refuses the next deletion; doctor names it, and the user removes it
        // as its fix says, since the killed git is gone.
        for lock in findings.iter().filter(|f| f["kind"] == "git_lock") {
            let fix = repo.unmask(lock["fix"].as_str().unwrap());
            let removed = repo.shell(&fix);
            assert_eq!(removed.code, 0, "{context}: {fix}\n{removed}");
        }
        let listed = run_dir(&repo, &id).exists();
        let removal = runs_dir(&repo).join(format!(".clean-{id}")).exists();
        assert!(!(listed && removal), "{context}");
        let what = if listed {
            let again = repo.baton(&args);
            assert_eq!(again.code, 0, "{context}: clean again: {again}");
            "the run stayed whole; clean removed it"
        } else if removal {
            let fix = findings
                .iter()
                .find(|f| f["kind"] == "orphaned_removal" && f["run"] == id.as_str())
                .unwrap_or_else(|| panic!("{context}: {findings:#?}"));
            assert_eq!(fix["fix"], format!("git baton clean {id}"), "{context}");
            assert_eq!(fix["safe"], true, "{context}");
            "a removal was left; `git baton clean <id>` finished it"
        } else {
            "clean ended before the kill"
        };
        *tally.entry(what.to_string()).or_default() += 1;
        // Whatever else the kill left (a temporary file of `cleaned`), the printed fixes remove.
        let fixes = printed_fixes(&repo);
        let applied = repo.shell(&fixes);
        assert_eq!(applied.code, 0, "{context}: {fixes}\n{applied}");

        nothing_left_over(&repo, &context);
        assert!(
            !repo.path(&format!(".baton/worktrees/{id}")).exists(),
            "{context}"
        );
        assert_eq!(
            repo.git(["for-each-ref", &format!("refs/baton/runs/{id}/")]),
            "",
            "{context}"
        );
        assert!(
            branches(&repo).contains(&format!("baton/{id}")),
            "{context}: the branch stays"
        );
    }
    for (what, count) in &tally {
        println!("clean killed: {count:>2} × {what}");
    }
}

/// Without --force, `clean` refuses a worktree holding changes its branch does not have, and
/// leaves the run as it was.
#[test]
fn clean_refuses_a_worktree_holding_work_its_branch_does_not_have() {
    let repo = standard_repo(&[]);
    let id = reviewed(&repo);
    assert_eq!(repo.baton(["finish", &id]).code, 0);
    let worktree = repo.path(&format!(".baton/worktrees/{id}"));
    // Checked out again by hand, and written to.
    repo.git([
        "worktree",
        "add",
        "-q",
        worktree.to_str().unwrap(),
        &format!("baton/{id}"),
    ]);
    std::fs::write(worktree.join("notes.md"), "mine\n").unwrap();
    let refused = repo.baton(["clean", &id]);
    assert_eq!(
        refused.to_string(),
        format!(
            "exit: 2\n--- stderr\nerror: run {id}: its worktree $TMP/repo/.baton/worktrees/{id} \
             holds changes its branch does not have: notes.md\nhint: commit them on the run's \
             branch, or `git baton clean --force {id}` removes them too\n"
        )
    );
    assert!(worktree.join("notes.md").exists());
    assert_eq!(status(&repo, &id)["status"], "finished");
    assert_eq!(repo.baton(["clean", "--force", &id]).code, 0);
    nothing_left_over(&repo, "after clean --force");
}

/// Debris of every kind, made for real in `repo`: creations killed at each injection point and
/// at random moments, a run killed while writing its first attempt's prompt (stale, with a
/// temporary file), a removal cut short, a killed write of `cleaned`, and a half-written
/// worktree registration as a creation killed inside git leaves it. Returns the counts.
fn make_debris(repo: &TestRepo, rng: &mut Rng) -> BTreeMap<String, usize> {
    for point in [
        "snapshot",
        "branch",
        "worktree",
        "state",
        "publish",
        "write:prompt.md",
    ] {
        assert!(
            killed(repo, &["run", "plans/fix.md"], &Kill::At(point)),
            "run did not reach {point}"
        );
    }
    // Random moments of creation and of the first attempt.
    for _ in 0..RANDOM_KILLS / 2 {
        let delay = Duration::from_millis(rng.below(400));
        killed(repo, &["run", "plans/fix.md"], &Kill::After(delay));
    }
    for point in ["clean:renamed", "write:cleaned"] {
        let id = reviewed(repo);
        assert_eq!(repo.baton(["finish", &id]).code, 0);
        assert!(killed(repo, &["clean", &id], &Kill::At(point)));
    }
    // A run whose record lags its state.json, as a kill between the two writes leaves it (the
    // random kills above leave one only now and then; its fix, `doctor --fix`, once ran before
    // fixes it may not apply and failed the list).
    let lagging = reviewed(repo);
    let record = format!("refs/baton/runs/{lagging}/record");
    let previous = repo.git(["rev-parse", &format!("{record}~2")]);
    repo.git(["update-ref", &record, previous.trim()]);
    // A run directory without its state (what a `clean` of an older git-baton killed midway
    // left), with the worktree and branch of a run in review; and a temporary file directly in
    // the runs directory.
    let headless = reviewed(repo);
    std::fs::remove_file(run_dir(repo, &headless).join("state.json")).unwrap();
    std::fs::write(runs_dir(repo).join(temp_name("012345")), "half").unwrap();
    let registration = repo.path(".git/worktrees/0abcdefghj");
    std::fs::create_dir_all(&registration).unwrap();
    std::fs::write(registration.join("gitdir"), "").unwrap();

    let mut kinds = BTreeMap::new();
    for finding in nothing_invisible(repo, "debris") {
        *kinds
            .entry(finding["kind"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    kinds
}

/// `doctor` reports every kind of debris with one command each, and the commands, run top to
/// bottom with `sh -e`, leave a repository with nothing left over. Stale runs among the debris
/// are resumed by their fix and reach review.
#[test]
fn the_printed_fixes_apply_top_to_bottom_and_leave_nothing() {
    let (mut rng, _) = Rng::seeded("doctor fixes");
    let repo = standard_repo(&[]);
    let kinds = make_debris(&repo, &mut rng);
    for kind in [
        "broken_registration",
        "temporary_file",
        "orphaned_creation",
        "orphaned_removal",
        "headless_run",
        "stale_run",
        "orphaned_worktree",
        "orphaned_branch",
        "unrecorded_state",
    ] {
        assert!(kinds.contains_key(kind), "no {kind} among {kinds:?}");
    }
    println!("debris found by doctor: {kinds:?}");

    let fixes = printed_fixes(&repo);
    let applied = repo.shell(&fixes);
    assert_eq!(applied.code, 0, "{fixes}\n{applied}");
    nothing_left_over(&repo, "after the printed fixes");
    for run in repo.baton(["list", "--json"]).json().as_array().unwrap() {
        assert!(
            run["status"] == "review" || run["status"] == "finished",
            "{run:#}"
        );
    }
}
