//! What an agent leaves in its worktree, shown to a reviewer at bounded cost: a named pipe
//! where a target was, a socket, a sparse file of a gigabyte, a text file of megabytes.

use super::*;

/// The diffstat line of `path` in a review, without its padding: `path | detail`.
fn diffstat_line(review: &str, path: &str) -> Option<String> {
    review.lines().find_map(|line| {
        let (name, detail) = line.split_once(" | ")?;
        (name.trim() == path).then(|| format!("{path} | {detail}"))
    })
}

/// An agent replaces a target by a named pipe, another by a socket, leaves a 1 GB sparse file
/// and a 9 MB text file: `review` ends at once (it never opens the pipe), names each special
/// file by its kind, calls the sparse file binary from its first bytes, and counts no lines of
/// the large one. Whatever becomes of the run's snapshot, the review reads the worktree.
#[test]
fn review_names_special_files_and_reads_changed_files_only_up_to_a_bound() {
    let agent = Actor::shell(
        "agent",
        "printf 'rule: grade A\\n' >> docs/a.md && rm docs/b.md && mkfifo docs/b.md && \
         truncate -s 1G docs/sparse.bin && \
         head -c 9000000 /dev/zero | tr '\\0' a > docs/large.txt",
    );
    let repo = repo_running(&[agent], "");
    let run = wait(&repo, spawn(&repo, &["run", "plans/fix.md"]));
    let id = run.run_id();
    // A socket where the third target was, as a server the agent started would leave it.
    let socket = repo.path(&format!(".baton/worktrees/{id}/docs/c.md"));
    std::fs::remove_file(&socket).unwrap();
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let review = wait(&repo, spawn(&repo, &["review", &id]));
    assert_eq!(review.code, 0, "{review}");
    let lines: Vec<Option<String>> = [
        "docs/a.md",
        "docs/b.md",
        "docs/c.md",
        "docs/large.txt",
        "docs/sparse.bin",
    ]
    .iter()
    .map(|path| diffstat_line(&review.stdout, path))
    .collect();
    assert_eq!(
        lines,
        [
            Some("docs/a.md | +1 -0".to_string()),
            Some("docs/b.md | named pipe (FIFO): not a file git can store".to_string()),
            Some("docs/c.md | socket: not a file git can store".to_string()),
            Some("docs/large.txt | 8.6 MiB, lines not counted".to_string()),
            Some("docs/sparse.bin | binary".to_string()),
        ],
        "{review}"
    );
}

/// `git baton diff` shows a file too large to show by its size, and the review counts none of
/// its lines; the rest of the attempt's diff is as usual.
#[test]
fn diff_and_review_show_a_large_file_by_its_size() {
    let agent = Actor::shell(
        "agent",
        "printf 'rule\\n' >> docs/a.md && printf 'rule\\n' >> docs/b.md && \
         printf 'rule\\n' >> docs/c.md && \
         head -c 9000000 /dev/zero | tr '\\0' a > docs/large.txt",
    );
    let repo = repo_running(&[agent], "");
    let run = wait(&repo, spawn(&repo, &["run", "plans/fix.md"]));
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    let diff = wait(&repo, spawn(&repo, &["diff", &id, "--stage", "executor"]));
    assert_eq!(diff.code, 0, "{diff}");
    assert!(
        diff.stdout.contains(
            "diff /dev/null b/docs/large.txt\n(a side of 8.6 MiB is too large to show here; \
             `git diff` shows it)\n"
        ),
        "{diff}"
    );
    assert!(diff.stdout.contains("+rule\n"), "{diff}");
    assert!(diff.stdout.len() < 10_000, "{} bytes", diff.stdout.len());
    let review = wait(&repo, spawn(&repo, &["review", &id]));
    assert_eq!(
        diffstat_line(&review.stdout, "docs/large.txt").as_deref(),
        Some("docs/large.txt | 8.6 MiB, lines not counted"),
        "{review}"
    );
}
