//! Targets as people write them: sibling directories that sort around `/`, paths without a
//! trailing slash that name directories, targets that name nothing, and ignored targets.

use super::*;

/// The layout of the report that found the panic: `grep/` and `grep-searcher/` (and `src/`
/// beside `src-tauri/`, `docs/` beside `docs.old/`) as targets of one plan, with new directories
/// staged on both sides. Every pair gets git's verdict instead of a stack trace.
#[test]
fn sibling_directories_that_sort_around_a_slash() {
    for (dir, sibling) in [
        ("grep", "grep-searcher"),
        ("src", "src-tauri"),
        ("docs", "docs.old"),
    ] {
        let repo = TestRepo::new();
        repo.write(&format!("{dir}/README.md"), "a\n");
        repo.write(&format!("{dir}/src/lib.rs"), "b\n");
        repo.commit_all("base");
        repo.write(&format!("{sibling}/Cargo.toml"), "a\n");
        repo.write(&format!("{dir}/examples/simplegrep.rs"), "new\n");
        repo.git(["add", sibling, &format!("{dir}/examples")]);
        repo.write(
            "plans/p.md",
            &plan("Siblings", &[&format!("{sibling}/"), &format!("{dir}/")]),
        );
        let run = verify(&repo, "plans/p.md --base HEAD");
        assert_eq!(run.code, 0, "{dir} beside {sibling}: {run}");
        assert!(
            run.stdout.contains(&format!("{sibling}/Cargo.toml"))
                && run
                    .stdout
                    .contains(&format!("{dir}/examples/simplegrep.rs")),
            "{run}"
        );
        assert!(!run.stderr.contains("panicked"), "{run}");
    }
}

/// `crates` means what `git diff -- crates` means: the directory and everything below it, in
/// both modes; `crates/` stays the explicit directory form, and a file target is still the file.
#[test]
fn a_target_without_a_slash_covers_what_is_below_it() {
    let repo = TestRepo::with()
        .plan(
            "plans/p.md",
            "Crates",
            &["crates", "crates/", "docs/a.md", "crates-old"],
        )
        .file("crates/a/src/lib.rs", "a\n")
        .file("crates-old/x.rs", "x\n")
        .named(&["docs/a.md"])
        .on_feature();
    repo.write("crates/a/src/lib.rs", "a, changed\n");
    repo.write("crates/b/new.rs", "new\n");
    repo.write("docs/a.md", "changed\n");
    let worktree = gate(&repo, "plans/p.md --base main");
    assert!(worktree.starts_with("exit: 1\n"), "{worktree}");
    assert!(
        worktree.contains("changed    crates      crates/a/src/lib.rs, crates/b/new.rs"),
        "{worktree}"
    );
    assert!(
        worktree.contains("changed    crates/     crates/a/src/lib.rs, crates/b/new.rs"),
        "{worktree}"
    );
    assert!(
        worktree.contains("uncovered  crates-old  no change"),
        "{worktree}"
    );
    repo.commit_all("work");
    let range = gate(&repo, "plans/p.md --base main --head HEAD");
    assert!(
        range.contains("changed    crates      crates/a/src/lib.rs, crates/b/new.rs"),
        "{range}"
    );
    // A trailer names the target as the plan spells it, as before.
    repo.commit_message(
        "x",
        "Baton-Unchanged: crates-old: the old crates are frozen for this release",
    );
    let passed = gate(&repo, "plans/p.md --base main --head HEAD");
    assert!(passed.starts_with("exit: 0\n"), "{passed}");
}

/// A target that names nothing at the base, the head or in the worktree is `missing`, with the
/// path it most likely meant, in every format; it fails the gate like an uncovered one.
#[test]
fn a_target_that_names_nothing_is_missing() {
    let repo = TestRepo::with()
        .plan(
            "plans/p.md",
            "Typos",
            &["crate/lib.rs", "docs/a.md", "nowhere/at/all.md"],
        )
        .file("crates/lib.rs", "lib\n")
        .named(&["docs/a.md"])
        .on_feature();
    repo.write("docs/a.md", "changed\n");
    let text = gate(&repo, "plans/p.md --base main");
    assert!(text.starts_with("exit: 1\n"), "{text}");
    assert!(text.contains("failed: 2 of 3 targets missing"), "{text}");
    assert!(
        text.contains(
            "missing    crate/lib.rs       names no path (plans/p.md:4); did you mean `crates/lib.rs`?"
        ),
        "{text}"
    );
    assert!(
        text.contains("missing    nowhere/at/all.md  names no path (plans/p.md:6)\n"),
        "{text}"
    );

    let json = verify(&repo, "plans/p.md --base main --json").json();
    let rows = &json["plans"][0]["coverage"]["targets"];
    assert_eq!(rows[0]["status"], "missing");
    assert_eq!(rows[0]["suggestion"], "crates/lib.rs");
    assert_eq!(rows[1]["status"], "changed");
    assert!(rows[1].get("suggestion").is_none());
    assert_eq!(rows[2]["status"], "missing");
    assert_eq!(json["passed"], false);

    let github = verify(&repo, "plans/p.md --base main --format github").stdout;
    assert!(
        github.contains("title=missing target crate/lib.rs::`crate/lib.rs` names no path at the merge base, the head or in the worktree; did you mean `crates/lib.rs`?"),
        "{github}"
    );
    let markdown = verify(&repo, "plans/p.md --base main --format markdown").stdout;
    assert!(
        markdown.contains(
            "| `crate/lib.rs` | missing | **names no path**; did you mean `crates/lib.rs`? |"
        ),
        "{markdown}"
    );

    // Created by the work, it is changed; present but untouched, uncovered.
    repo.write("nowhere/at/all.md", "now it exists\n");
    repo.write("crate/lib.rs", "and so does this\n");
    repo.git(["add", "crate/lib.rs"]);
    repo.commit_all("create");
    let text = gate(&repo, "plans/p.md --base main --head HEAD");
    assert!(text.contains("passed: all 3 targets covered"), "{text}");
}

/// `verify` names an ignored, untracked target as a located warning with a hint, and says so in
/// its JSON; a negated rule, a tracked path and a glob are not warned about.
#[test]
fn an_ignored_target_is_a_located_warning() {
    let repo = TestRepo::with()
        .file(".gitignore", "build/\n*.log\n!keep.log\n")
        .file("tracked.log", "forced\n")
        .plan(
            "plans/p.md",
            "Ignored",
            &[
                "build/out.txt",
                "x.log",
                "keep.log",
                "tracked.log",
                "build/**/*.txt",
            ],
        )
        .on_feature();
    repo.git(["add", "-f", "tracked.log"]);
    repo.git(["commit", "-q", "-m", "tracked"]);
    let run = verify(&repo, "plans/p.md --base main");
    assert_eq!(run.code, 1, "{run}");
    assert_eq!(
        run.stderr,
        "warning: plans/p.md:4:5: target `build/out.txt` is ignored by .gitignore:1 (`build/`), \
         so no file the work creates there can count as a change\n\
         hint: un-ignore it (`!build/out.txt` after that rule), track it first (`git add -f`), or \
         target a tracked path\n\
         warning: plans/p.md:5:5: target `x.log` is ignored by .gitignore:2 (`*.log`), so no file \
         the work creates there can count as a change\n\
         hint: un-ignore it (`!x.log` after that rule), track it first (`git add -f`), or target \
         a tracked path\n"
    );
    let json = verify(&repo, "plans/p.md --base main --json").json();
    let ignored = &json["ignored_targets"];
    assert_eq!(ignored.as_array().map(Vec::len), Some(2), "{json}");
    assert_eq!(ignored[0]["target"], "build/out.txt");
    assert_eq!(ignored[0]["source"], ".gitignore:1");
    assert_eq!(ignored[1]["line"], 5);
    // Range mode judges commits, where ignore rules play no part.
    let run = verify(&repo, "plans/p.md --base main --head HEAD");
    assert_eq!(run.stderr, "", "{run}");
}
