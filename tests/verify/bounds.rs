//! Inputs from a real worktree or a pull request that have no natural bound: a named pipe where
//! a file was, a target of 40,000 components, a plan whose one target is 100 KB long or whose
//! thousands of targets make a report of megabytes. Each costs what its size says, and blocks
//! nothing.

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use super::*;

/// Long enough for any machine; a command that blocks fails the test instead of hanging it.
const LIVENESS: Duration = Duration::from_secs(60);

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
}

/// `git baton ARGS` in the repository, killed (and the test failed) if it does not end in time.
fn bounded(repo: &TestRepo, args: &[&str]) -> Run {
    let child = repo.baton_spawn(&repo.root, args, &[]);
    repo.baton_wait(child, LIVENESS)
}

/// An agent replaces a target by a named pipe, and leaves another in an untracked directory:
/// the worktree gate counts the target changed (git cannot store what is there now) and lists
/// the untracked pipe nowhere, as `git ls-files --others` does not, without opening either.
#[test]
fn a_target_replaced_by_a_named_pipe_is_changed_and_never_opened() {
    let repo = TestRepo::with()
        .plan("plans/p.md", "Docs", &["docs/a.md", "docs/b.md", "notes"])
        .named(&["docs/a.md", "docs/b.md"])
        .on_feature();
    mkfifo(&repo.path("docs/a.md"));
    std::fs::create_dir_all(repo.path("notes")).unwrap();
    mkfifo(&repo.path("notes/scratch"));
    // A filter on every file makes the gate read what its stat cannot vouch for.
    repo.write(".git/info/attributes", "* text=auto\n");
    let run = bounded(&repo, &["verify", "plans/p.md", "--base", "main"]);
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 1
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): failed: 2 of 3 targets uncovered
          changed    docs/a.md  docs/a.md
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)
          uncovered  notes      no change and no reason (plans/p.md:6)

        gate failed: 1 of 1 plan(s) not covered
        <the covering hint>
        ");
    assert_eq!(
        repo.oracle(&repo.root, "main"),
        ["docs/a.md"],
        "git agrees on what changed"
    );
}

/// A plan, an evidence file, `.baton.yml` or the index that is a named pipe is refused by name
/// and kind, at once, where reading it would wait for a writer for ever.
#[test]
fn a_plan_evidence_configuration_or_index_that_is_a_named_pipe_is_refused_by_its_kind() {
    let repo = TestRepo::with().one_doc().on_feature();
    mkfifo(&repo.path("plans/pipe.md"));
    mkfifo(&repo.path("evidence.json"));
    let plan = bounded(&repo, &["verify", "plans/pipe.md", "--base", "main"]);
    assert_snapshot!(plan.to_string(), @r"
        exit: 2
        --- stderr
        error: cannot read plan plans/pipe.md: is a named pipe (FIFO), not a regular file
        ");
    let evidence = bounded(
        &repo,
        &[
            "verify",
            "plans/p.md",
            "--base",
            "main",
            "--evidence",
            "evidence.json",
        ],
    );
    assert_snapshot!(evidence.to_string(), @r"
        exit: 2
        --- stderr
        error: cannot read evidence evidence.json: is a named pipe (FIFO), not a regular file
        ");
    // `targets` reads the plan as `verify` does (it used a plain read and blocked for ever).
    let targets = bounded(&repo, &["targets", "plans/pipe.md"]);
    assert_snapshot!(targets.to_string(), @r"
        exit: 2
        --- stderr
        error: cannot read plan plans/pipe.md: is a named pipe (FIFO), not a regular file
        ");
    // A device never ends: refused by its kind, unread.
    let device = bounded(&repo, &["targets", "/dev/zero"]);
    assert_eq!(device.code, 2, "{device}");
    assert!(
        device
            .stderr
            .contains("/dev/zero: is a character device, not a regular file"),
        "{device}"
    );
    std::fs::remove_file(repo.path("plans/pipe.md")).unwrap();
    mkfifo(&repo.path(".baton.yml"));
    let config = bounded(&repo, &["verify", "--base", "main"]);
    assert_eq!(config.code, 2, "{config}");
    assert!(
        config
            .stderr
            .contains("is a named pipe (FIFO), not a regular file"),
        "{config}"
    );
    assert!(config.stderr.contains(".baton.yml"), "{config}");
    // The index is the worktree's to write, too.
    std::fs::remove_file(repo.path(".baton.yml")).unwrap();
    mkfifo(&repo.path(".git/index"));
    let index = bounded(&repo, &["verify", "plans/p.md", "--base", "main"]);
    assert_eq!(index.code, 2, "{index}");
    assert!(
        index.stderr.starts_with("error: cannot read the index ")
            && index
                .stderr
                .contains(".git/index: is a named pipe (FIFO), not a regular file"),
        "{index}"
    );
}

/// One target of 40,000 components (an 80 KB plan): the worktree gate's memory grows with its
/// length, not its square — under a 512 MiB address-space limit, where the quadratic cost
/// (3 GB) failed to allocate. Also with the target's first directories present.
#[test]
fn a_deep_target_costs_memory_linear_in_its_length() {
    let deep = format!("{}x", "a/".repeat(40_000));
    let repo = TestRepo::with()
        .plan("plans/deep.md", "Deep", &["docs/a.md", &deep])
        .named(&["docs/a.md"])
        .on_feature();
    repo.write("docs/a.md", "changed\n");
    repo.commit_all("a change");
    std::fs::create_dir_all(repo.path(&"a/".repeat(100))).unwrap();
    for args in [
        &["verify", "plans/deep.md", "--base", "main"][..],
        &[
            "verify",
            "plans/deep.md",
            "--base",
            "main",
            "--head",
            "HEAD",
        ],
    ] {
        let mut cmd = repo.baton_command(
            &repo.root,
            &["sh", "-c", "ulimit -v 524288 && exec \"$@\"", "sh"],
            args,
        );
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            // The deep target names no path: missing, which fails like uncovered.
            stdout.contains("1 of 2 targets missing"),
            "{args:?}: {stdout:.2000}"
        );
    }
}

/// Lines of `text` longer than `cells` bytes.
fn long_lines(text: &str, cells: usize) -> Vec<&str> {
    text.lines().filter(|l| l.len() > cells).collect()
}

/// A pull request adds a plan of 300 short targets and one 100 KB target: no line is padded to
/// the long one, the long one is shown cut with the rest counted, and no format — the CI log,
/// the job summary, the text — is more than a small multiple of the plan. JSON has it whole.
#[test]
fn a_huge_target_pads_nothing_and_every_format_stays_near_the_plan_size() {
    let long = format!("{}x", "a/".repeat(50_000));
    let mut targets: Vec<String> = (0..300).map(|i| format!("docs/f{i:03}.md")).collect();
    targets.push(long.clone());
    let targets: Vec<&str> = targets.iter().map(String::as_str).collect();
    let repo = TestRepo::with()
        .named(&["docs/f000.md"])
        .file("plans/.keep", "")
        .on_feature();
    repo.write("plans/pr.md", &plan("A plan", &targets));
    repo.write("docs/f000.md", "changed\n");
    repo.commit_all("a plan");
    let plan_size = std::fs::metadata(repo.path("plans/pr.md")).unwrap().len() as usize;
    let summary = repo.tmp().join("summary.md");
    for format in ["text", "github", "markdown"] {
        let run = repo.baton_env(
            &repo.root,
            [
                "verify", "--base", "main", "--head", "HEAD", "--format", format,
            ],
            &[("GITHUB_STEP_SUMMARY", OsStr::new(&summary))],
        );
        assert_eq!(run.code, 1, "{format}: {:.2000}", run.stdout);
        assert!(
            run.stdout.len() < 3 * plan_size,
            "{format}: {} bytes of output for a plan of {plan_size}",
            run.stdout.len()
        );
        // The long target's lines (its row, its annotation) are the only long ones, each cut.
        let long_ones = long_lines(&run.stdout, 200);
        assert!(!long_ones.is_empty() && long_ones.len() <= 3, "{format}");
        for line in long_ones {
            assert!(line.len() < 30_000, "{format}: a line of {}", line.len());
            assert!(line.contains("more characters)"), "{format}: {line:.300}");
        }
        let row = run
            .stdout
            .lines()
            .find(|l| l.contains("docs/f299.md"))
            .unwrap();
        assert!(row.len() < 200, "{format}: {row}");
    }
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(summary.len() < 3 * plan_size, "{}", summary.len());
    let json = verify(&repo, "--base main --head HEAD --format json");
    assert!(json.stdout.len() < 3 * plan_size, "{}", json.stdout.len());
    let exact = json.json()["plans"][0]["coverage"]["targets"][300]["target"].clone();
    assert_eq!(exact, long, "JSON is exact");
}

/// A plan whose report would be megabytes: the text report stops at 1 MiB with a line that says
/// how much it left out, and still ends with its verdict; the Markdown summary stops at
/// 512 KiB; JSON is whole.
#[test]
fn a_report_past_its_limit_is_cut_with_a_count_and_keeps_its_verdict() {
    let targets: Vec<String> = (0..6000)
        .map(|i| format!("docs/{}/{i:04}.md", "long-directory-name".repeat(10)))
        .collect();
    let targets: Vec<&str> = targets.iter().map(String::as_str).collect();
    let repo = TestRepo::with()
        .named(&["docs/a.md"])
        .file("plans/.keep", "")
        .on_feature();
    repo.write("plans/pr.md", &plan("A big plan", &targets));
    repo.commit_all("a big plan");
    let text = verify(&repo, "--base main --head HEAD");
    assert_eq!(text.code, 1);
    assert!(
        text.stdout.len() <= 1024 * 1024 + 2048,
        "{}",
        text.stdout.len()
    );
    let cut = text
        .stdout
        .lines()
        .find(|l| l.contains("left out"))
        .unwrap_or_else(|| panic!("no note in {:.2000}", text.stdout));
    assert!(
        cut.starts_with("… ")
            && cut.ends_with(
                "left out: the report is cut at 1.0 MiB; `--format json` prints the whole \
                 verification"
            ),
        "{cut}"
    );
    let left_out: usize = cut[4..].split(' ').next().unwrap().parse().unwrap();
    let shown = text
        .stdout
        .lines()
        // The targets name no path: missing, the failing status for them.
        .filter(|l| l.contains("uncovered  docs/") || l.contains("missing    docs/"))
        .count();
    assert_eq!(shown + left_out, 6000, "{cut}");
    assert!(
        text.stdout
            .contains("\ngate failed: 1 of 1 plan(s) not covered\nhint: "),
        "the verdict survives the cut"
    );

    let markdown = verify(&repo, "--base main --head HEAD --format markdown");
    assert!(
        markdown.stdout.len() <= 512 * 1024 + 1024,
        "{}",
        markdown.stdout.len()
    );
    assert!(
        markdown
            .stdout
            .trim_end()
            .ends_with("`--format json` prints the whole verification._"),
        "{:?}",
        markdown.stdout.lines().last()
    );
    let json = verify(&repo, "--base main --head HEAD --format json");
    assert_eq!(
        json.json()["plans"][0]["coverage"]["targets"]
            .as_array()
            .unwrap()
            .len(),
        6000
    );
}

/// A directory target with hundreds of changed paths lists the first that fit a line and counts
/// the rest, in the text report and in the job summary alike.
#[test]
fn a_target_with_many_changed_paths_lists_what_fits_and_counts_the_rest() {
    let repo = TestRepo::with()
        .plan("plans/p.md", "Sources", &["src/"])
        .named(&["src/keep.rs"])
        .on_feature();
    for i in 0..500 {
        repo.write(
            &format!("src/a-module-with-a-longish-name-{i:03}.rs"),
            "x\n",
        );
    }
    repo.commit_all("many files");
    for format in ["text", "markdown"] {
        let run = repo.baton([
            "verify",
            "plans/p.md",
            "--base",
            "main",
            "--head",
            "HEAD",
            "--format",
            format,
        ]);
        assert_eq!(run.code, 0, "{run}");
        let row = run
            .stdout
            .lines()
            .find(|l| l.contains("a-module-with-a-longish-name-000.rs"))
            .unwrap();
        assert!(row.len() < 2400, "{format}: {}", row.len());
        let shown = row.matches("a-module-with-a-longish-name-").count();
        assert!(
            shown > 10 && row.contains(&format!(", … and {} more", 500 - shown)),
            "{format}: {row}"
        );
    }
}
