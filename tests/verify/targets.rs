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
