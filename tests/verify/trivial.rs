//! Changes that do not count: a target whose only change is whitespace, line endings or file mode
//! is `touched`, fails the gate, and says so in every format — unless the plan says `trivial:
//! counts`, for itself or for the target.

use super::*;

/// A repository whose base commit holds `files` and the plan; the feature branch is checked out.
fn repo_with(plan_text: &str, files: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.write("plans/p.md", plan_text);
    repo.commit_all("base");
    repo.git(["checkout", "-q", "-b", "feature"]);
    repo
}

fn make_executable(repo: &TestRepo, path: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = repo.path(path);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn statuses(json: &serde_json::Value) -> Vec<(String, String)> {
    json["plans"][0]["coverage"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["target"].as_str().unwrap().to_owned(),
                t["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

const FILES: &[(&str, &str)] = &[
    ("src/lib.rs", "pub fn a() -> u32 {\n    1\n}\n"),
    ("docs/a.md", "# A\n\nText.\n"),
    ("run.sh", "#!/bin/sh\necho hi\n"),
];

/// The attack of the issue: one blank line added to each target. Text, JSON, Markdown, GitHub.
#[test]
fn a_blank_line_leaves_a_target_touched_in_every_format() {
    let repo = repo_with(&plan("Work", &["src/lib.rs", "docs/a.md"]), FILES);
    repo.write("src/lib.rs", "pub fn a() -> u32 {\n    1\n}\n\n");
    repo.write("docs/a.md", "# A\n\nText, edited.\n");

    let run = verify(&repo, "plans/p.md --base main");
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 1
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): failed: 1 of 2 targets touched only in whitespace or mode
          touched    src/lib.rs  only whitespace, line endings or mode changed (plans/p.md:4): src/lib.rs
          changed    docs/a.md   docs/a.md

        gate failed: 1 of 1 plan(s) not covered
        hint: a touched target changed only in whitespace, line endings or file mode, which does not count:
        hint: make the change the plan asks for, record why it needed none, or write `trivial: counts` in the plan
        hint: (for the plan, or for the target: `{path: <target>, trivial: counts}`) when such a change is the work
        ");

    let json = verify(&repo, "plans/p.md --base main --json").json();
    assert_eq!(
        statuses(&json),
        [
            ("src/lib.rs".to_owned(), "touched".to_owned()),
            ("docs/a.md".to_owned(), "changed".to_owned())
        ]
    );
    assert_eq!(json["passed"], false);
    assert_eq!(
        json["plans"][0]["coverage"]["targets"][0]["paths"],
        json!(["src/lib.rs"])
    );

    let run = verify(&repo, "plans/p.md --base main --format markdown");
    assert!(
        run.stdout
            .contains("| `src/lib.rs` | touched | **only whitespace, line endings or mode changed**: `src/lib.rs` |"),
        "{run}"
    );
    let run = verify(&repo, "plans/p.md --base main --format github");
    assert!(
        run.stdout.lines().any(|l| l.starts_with(
            "::error file=plans/p.md,line=4,title=touched target src/lib.rs::`src/lib.rs` changed only in whitespace"
        )),
        "{run}"
    );
}

/// Range mode compares two blobs: CRLF, re-indentation and `chmod +x` are trivial, a word is
/// not, and a directory target is changed as soon as one path under it really changed.
#[test]
fn range_mode_line_endings_mode_and_directories() {
    let files = &[
        ("src/lib.rs", "pub fn a() -> u32 {\n    1\n}\n"),
        ("src/util.rs", "pub fn b() {}\n"),
        ("docs/a.md", "# A\n\nText.\n"),
        ("docs/b.md", "# B\n"),
        ("run.sh", "#!/bin/sh\necho hi\n"),
    ];
    let repo = repo_with(
        &plan("Work", &["src/", "docs/", "run.sh", "src/lib.rs"]),
        files,
    );
    repo.write("src/lib.rs", "pub fn a() -> u32 {\r\n\t1\r\n}\r\n");
    repo.write("src/util.rs", "pub fn b()  {}\n\n");
    repo.write("docs/a.md", "# A\r\n\r\nText.\r\n");
    repo.write("docs/b.md", "# B, really\n");
    make_executable(&repo, "run.sh");
    repo.git(["add", "-A"]);
    repo.git(["commit", "-q", "-m", "whitespace"]);

    let json = verify(&repo, "plans/p.md --base main --head HEAD --json").json();
    assert_eq!(
        statuses(&json),
        [
            ("src/".to_owned(), "touched".to_owned()),
            ("docs/".to_owned(), "changed".to_owned()),
            ("run.sh".to_owned(), "touched".to_owned()),
            ("src/lib.rs".to_owned(), "touched".to_owned()),
        ]
    );
    // The second directory's paths are all trivial; the first has one real change.
    assert_eq!(
        json["plans"][0]["coverage"]["targets"][0]["paths"],
        json!(["src/lib.rs", "src/util.rs"])
    );
}

/// Added files: empty or whitespace-only ones are touched; a deleted file and a binary byte are
/// real changes.
#[test]
fn added_deleted_and_binary_files() {
    let repo = repo_with(
        &plan(
            "Work",
            &["new/empty.py", "new/real.py", "gone.md", "blob.bin"],
        ),
        &[("gone.md", "bye\n"), ("blob.bin", "\0\u{1} a")],
    );
    repo.write("new/empty.py", "\n \n");
    repo.write("new/real.py", "x = 1\n");
    std::fs::remove_file(repo.path("gone.md")).unwrap();
    repo.write("blob.bin", "\0\u{1}  a");
    let json = verify(&repo, "plans/p.md --base main --json").json();
    assert_eq!(
        statuses(&json),
        [
            ("new/empty.py".to_owned(), "touched".to_owned()),
            ("new/real.py".to_owned(), "changed".to_owned()),
            ("gone.md".to_owned(), "changed".to_owned()),
            ("blob.bin".to_owned(), "changed".to_owned()),
        ]
    );
}

/// A tracked file whose directory became a symbolic link (to a copy elsewhere, here with only
/// its whitespace changed) is deleted as git sees it: a change, never read through the link.
#[test]
fn a_file_behind_a_symlinked_directory_is_deleted() {
    let repo = repo_with(&plan("Work", &["src/y/f.c"]), &[("src/y/f.c", "int a;\n")]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("f.c"), "int  a;\n").unwrap();
    std::fs::remove_dir_all(repo.path("src/y")).unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.path("src/y")).unwrap();
    assert_eq!(
        repo.git(["status", "--porcelain", "src/y/f.c"]),
        " D src/y/f.c\n"
    );
    let json = verify(&repo, "plans/p.md --base main --json").json();
    assert_eq!(
        statuses(&json),
        [("src/y/f.c".to_owned(), "changed".to_owned())]
    );
}

/// `trivial: counts` for the plan, or for one target; a target's own word wins over the plan's.
#[test]
fn trivial_counts_lets_such_changes_be_the_work() {
    let plan_for = |frontmatter: &str| format!("---\n{frontmatter}---\n# Reformat\n");
    for (frontmatter, expect) in [
        (
            "trivial: counts\ntargets: [src/lib.rs, run.sh]\n",
            ["changed", "changed"],
        ),
        (
            "targets:\n  - {path: src/lib.rs, trivial: counts}\n  - run.sh\n",
            ["changed", "touched"],
        ),
        (
            "trivial: counts\ntargets:\n  - src/lib.rs\n  - path: run.sh\n    trivial: touched\n",
            ["changed", "touched"],
        ),
    ] {
        let repo = repo_with(&plan_for(frontmatter), FILES);
        repo.write("src/lib.rs", "pub fn a() -> u32 {\n  1\n}\n");
        make_executable(&repo, "run.sh");
        repo.git(["add", "-A"]);
        repo.git(["commit", "-q", "-m", "reformat"]);
        let run = verify(&repo, "plans/p.md --base main --head HEAD --json");
        let json = run.json();
        let got: Vec<String> = statuses(&json).into_iter().map(|(_, s)| s).collect();
        assert_eq!(got, expect, "{frontmatter}");
        assert_eq!(
            run.code,
            if expect[1] == "changed" { 0 } else { 1 },
            "{run}"
        );
    }
}

/// A touched target with an `unchanged` reason is judged as if it had not changed.
#[test]
fn a_reason_explains_a_touched_target() {
    let repo = repo_with(&plan("Work", &["docs/a.md"]), FILES);
    repo.write("docs/a.md", "# A\n\nText.   \n");
    repo.write(
        "evidence.json",
        r#"{"target_coverage": [{"target": "docs/a.md", "status": "unchanged",
            "reason": "the page already says what the new flag does"}]}"#,
    );
    let run = verify(
        &repo,
        "plans/p.md --base main --evidence evidence.json --json",
    );
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(statuses(&run.json())[0].1, "unchanged");
}

/// A malformed `trivial:` is a located plan error.
#[test]
fn a_malformed_trivial_is_a_located_plan_error() {
    let repo = repo_with(
        "---\ntargets:\n  - {path: docs/a.md, trivial: yes}\n---\n",
        FILES,
    );
    let run = verify(&repo, "plans/p.md --base main");
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: plans/p.md:3:32: `trivial` must be `counts` or `touched`, found a boolean `yes`
        hint: `trivial` is `counts` (a change of only whitespace, line endings or file mode is the work) or `touched` (it is not, the default)
        ");
}

/// What the rule cannot read is a real change, found without reading it: a named pipe where a
/// target file was (never opened, so the gate does not block), and a file over the 8 MiB limit
/// whose only change is a trailing newline.
#[test]
fn unreadable_sides_are_real_changes() {
    let big = "word ".repeat(2 * 1024 * 1024); // 10 MiB
    let repo = repo_with(
        &plan("Work", &["pipe.md", "big.txt", "small.txt"]),
        &[
            ("pipe.md", "text\n"),
            ("big.txt", &big),
            ("small.txt", "x\n"),
        ],
    );
    std::fs::remove_file(repo.path("pipe.md")).unwrap();
    let mkfifo = std::process::Command::new("mkfifo")
        .arg(repo.path("pipe.md"))
        .status()
        .unwrap();
    assert!(mkfifo.success());
    repo.write("big.txt", &format!("{big}\n"));
    repo.write("small.txt", "x\n\n");
    let json = verify(&repo, "plans/p.md --base main --json").json();
    assert_eq!(
        statuses(&json),
        [
            ("pipe.md".to_owned(), "changed".to_owned()),
            ("big.txt".to_owned(), "changed".to_owned()),
            ("small.txt".to_owned(), "touched".to_owned()),
        ]
    );

    // Committed, the large blob is measured from its header, never read: still a real change.
    std::fs::remove_file(repo.path("pipe.md")).unwrap();
    repo.git(["add", "-A"]);
    repo.git(["commit", "-q", "-m", "big"]);
    let json = verify(&repo, "plans/p.md --base main --head HEAD --json").json();
    assert_eq!(
        statuses(&json)[1..],
        [
            ("big.txt".to_owned(), "changed".to_owned()),
            ("small.txt".to_owned(), "touched".to_owned()),
        ]
    );
}
