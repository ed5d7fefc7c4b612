//! What a person at a terminal gets: colour by `--color`, `NO_COLOR` and `CLICOLOR_FORCE`; the
//! pager for `diff`, `log` and `review`; `-C`; columns aligned in cells; and the status line
//! under a running stage. A terminal is made with util-linux's `script`, which runs the binary on
//! a pseudo-terminal and copies everything it shows to our pipe.

use std::process::Stdio;

use super::*;

const ESC: &str = "\x1b[";

/// An actor that changes nothing: the gate blocks its stage.
fn idle() -> Actor {
    Actor::agent("idle").say("nothing to do")
}

/// `git baton ARGS` on a pseudo-terminal (stdout and stderr both), with `env` added; what the
/// terminal showed, and the exit code.
fn on_terminal(repo: &TestRepo, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    // `script` takes one command line; the binary's path and the arguments have no blanks. In
    // a session of its own: the terminal's hang-up when it closes must reach nothing of the
    // test binary's, whose other tests send and expect signals of their own.
    let wrapper = [
        "setsid",
        "-w",
        "sh",
        "-c",
        "exec script -qfec \"$*\" /dev/null",
        "sh",
    ];
    let mut cmd = repo.baton_command(&repo.root, &wrapper, args);
    cmd.stdin(Stdio::null()).envs(env.iter().copied());
    let out = cmd.output().unwrap();
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), shown)
}

#[test]
fn colour_follows_the_flag_and_the_environment_and_never_reaches_json() {
    let repo = repo_running(&[idle()], "");
    let (id, run) = repo.run_plan("plans/fix.md", 1);
    // Piped, as in every other test: no colour unless asked for.
    assert!(!run.stderr.contains(ESC), "{run}");
    let plain = repo.baton(["status", &id]);
    assert!(!plain.stdout.contains(ESC), "{plain}");

    let always = repo.baton(["--color", "always", "status", &id]);
    assert!(
        always.stdout.contains("\x1b[1m\x1b[31mblocked\x1b[0m"),
        "blocked stands out:\n{always}"
    );
    // The paint has no width: stripped, the text is the plain one.
    assert_eq!(
        anstream::adapter::strip_str(&always.stdout).to_string(),
        plain.stdout
    );
    // Wherever the flag stands.
    let after = repo.baton(["status", &id, "--color=always"]);
    assert!(after.stdout.contains(ESC), "{after}");
    // The gate's report on stderr, uncovered targets included.
    let verify = repo.baton(["verify", "plans/fix.md", "--color", "always"]);
    assert!(
        verify.stdout.contains("\x1b[1m\x1b[31muncovered"),
        "{verify}"
    );

    let never = repo.baton_env(
        &repo.root,
        ["--color", "never", "status", &id],
        &[("CLICOLOR_FORCE", OsStr::new("1"))],
    );
    assert_eq!(never.stdout, plain.stdout);
    let forced = repo.baton_env(
        &repo.root,
        ["status", &id],
        &[("CLICOLOR_FORCE", OsStr::new("1"))],
    );
    assert_eq!(forced.stdout, always.stdout);
    let no_color = repo.baton_env(
        &repo.root,
        ["status", &id],
        &[
            ("CLICOLOR_FORCE", OsStr::new("1")),
            ("NO_COLOR", OsStr::new("1")),
        ],
    );
    assert_eq!(no_color.stdout, plain.stdout, "NO_COLOR wins");

    for args in [
        vec!["status", "--json", &id],
        vec!["list", "--json"],
        vec!["verify", "plans/fix.md", "--format", "json"],
    ] {
        let mut argv = vec!["--color", "always"];
        argv.extend(args.iter().copied());
        let json = repo.baton(&argv);
        assert!(!json.stdout.contains('\x1b'), "{argv:?}:\n{json}");
        json.json();
    }

    // On a terminal, auto colours; NO_COLOR turns it off there too.
    let (code, shown) = on_terminal(&repo, &["status", &id], &[("TERM", "xterm")]);
    assert_eq!(code, 0, "{shown}");
    assert!(shown.contains("\x1b[1m\x1b[31mblocked"), "{shown:?}");
    let (_, shown) = on_terminal(
        &repo,
        &["status", &id],
        &[("TERM", "xterm"), ("NO_COLOR", "1")],
    );
    assert!(!shown.contains(ESC), "{shown:?}");
}

#[test]
fn diff_log_and_review_go_through_the_pager_on_a_terminal_only() {
    let repo = standard_repo(&[]);
    let id = repo.baton(["run", "plans/fix.md"]).run_id();
    let scratch_dir = scratch();
    let paged = outside(&scratch_dir, "paged");
    let pager = format!("cat > {}", paged.display());
    for command in ["diff", "log", "review"] {
        let _ = std::fs::remove_file(&paged);
        let expected = repo.baton([command, &id]);
        assert_eq!(expected.code, 0, "{expected}");
        let (code, shown) = on_terminal(&repo, &[command, &id], &[("GIT_PAGER", &pager)]);
        assert_eq!(code, 0, "{command}: {shown}");
        let got = text(&paged).replace(&repo.tmp().display().to_string(), "$TMP");
        assert_eq!(got, expected.stdout, "{command}: the pager got it all");
        assert!(
            !shown.contains(&expected.stdout.replace('\n', "\r\n")),
            "{command}"
        );

        // --no-pager, or a pipe: no pager.
        let _ = std::fs::remove_file(&paged);
        let (code, _) = on_terminal(
            &repo,
            &["--no-pager", command, &id],
            &[("GIT_PAGER", &pager)],
        );
        assert_eq!(code, 0);
        let piped = repo.baton_env(
            &repo.root,
            [command, &id],
            &[("GIT_PAGER", OsStr::new(&pager))],
        );
        assert_eq!(piped.stdout, expected.stdout);
        assert!(!paged.exists(), "{command}: no pager without a terminal");
    }

    // core.pager when GIT_PAGER is unset; PAGER last.
    repo.git(["config", "core.pager", &pager]);
    let (code, _) = on_terminal(&repo, &["review", &id], &[("PAGER", "false")]);
    assert_eq!(code, 0);
    assert!(
        text(&paged).starts_with("review of run "),
        "core.pager was used"
    );
}

#[test]
fn a_pager_that_quits_at_once_is_not_an_error() {
    let loud = worker().verbs(&["flood", "300000"]);
    let repo = repo_running(&[loud], "");
    let id = repo.baton(["run", "plans/fix.md"]).run_id();
    for command in ["log", "diff", "review"] {
        let (code, shown) = on_terminal(&repo, &[command, &id], &[("GIT_PAGER", "true")]);
        assert_eq!(code, 0, "{command}: {shown}");
        assert!(
            !shown.contains("panicked") && !shown.contains("error") && !shown.contains("Broken"),
            "{command}: {shown}"
        );
    }
}

#[test]
fn dash_c_moves_like_git_relative_to_the_one_before() {
    let repo = standard_repo(&[]);
    let id = repo.baton(["run", "plans/fix.md"]).run_id();
    let tmp = repo.tmp();
    let here = repo.baton_in(tmp, ["-C", "repo", "list"]);
    assert_eq!(here.code, 0, "{here}");
    assert!(here.stdout.contains(&id), "{here}");
    let chained = repo.baton_in(tmp, ["-C", "repo", "-C", "docs", "status", &id, "--json"]);
    assert_eq!(chained.code, 0, "{chained}");
    // Relative paths in the arguments follow: the plan, from the repository's docs/.
    let verify = repo.baton_in(tmp, ["-C", "repo/docs", "verify", "../plans/fix.md"]);
    let from_root = repo.baton(["verify", "plans/fix.md"]);
    assert_eq!(verify.code, from_root.code, "{verify}");
    let missing = repo.baton_in(tmp, ["-C", "nowhere", "list"]);
    assert_eq!(missing.code, 2, "{missing}");
    assert!(
        missing
            .stderr
            .starts_with("error: cannot change to `nowhere`: "),
        "{missing}"
    );
}

#[test]
fn list_aligns_wide_characters() {
    let wide = PLAN.replacen("---\n", "---\nid: nihongo\n", 1);
    let repo = standard_repo(&[]);
    repo.write("plans/日本語の計画.md", &wide);
    repo.commit_all("a plan named in Japanese");
    repo.baton(["run", "plans/fix.md"]).run_id();
    repo.baton(["run", "plans/日本語の計画.md"]).run_id();
    let list = repo.baton(["list"]);
    assert_eq!(list.code, 0, "{list}");
    // Every row's CREATED column starts in the same terminal cell as the header's.
    let cells = |line: &str, at: usize| git_baton::report::width::width(&line[..at]);
    let lines: Vec<&str> = list.stdout.lines().collect();
    let column = cells(lines[0], lines[0].find("CREATED").unwrap());
    for line in &lines[1..] {
        // The date is the last column: `YYYY-MM-DD HH:MM`.
        assert_eq!(cells(line, line.len() - 16), column, "{}", list.stdout);
    }
}

/// The status line on a terminal: drawn below the actor's output, erased at the end, and
/// nowhere else — not in the logs, not on a stderr that is not a terminal, not with `--quiet`.
#[test]
fn the_status_line_is_shown_on_a_terminal_only_and_never_logged() {
    let slow = worker()
        .say("first line")
        .sleep("3")
        .warn("a warning")
        .say("last line");
    let repo = repo_running(&[slow], "");
    let (code, shown) = on_terminal(&repo, &["run", "plans/fix.md"], &[]);
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("\r\x1b[Kexecutor · worker · attempt 1 · "),
        "the status line names stage, actor and attempt:\n{shown:?}"
    );
    assert!(shown.contains("last output "), "{shown:?}");
    assert!(shown.contains("first line\r\n"), "{shown:?}");
    // Erased before the summary: the line drawn last is followed by an erase.
    let last_draw = shown.rfind("\r\x1b[Kexecutor · worker").unwrap();
    assert!(shown[last_draw + 3..].contains("\r\x1b[K"), "{shown:?}");

    let id = wait_for_run(&repo);
    let dir = run_dir(&repo, &id).join("attempts/executor-1");
    let stdout_log = text(&dir.join("stdout.log"));
    assert_eq!(
        stdout_log,
        "working on the grading documents\nfirst line\nlast line\n"
    );
    assert_eq!(text(&dir.join("stderr.log")), "a warning\n");

    // Not a terminal, or --quiet: no line at all.
    let piped = repo_running(&[worker().say("first line").sleep("2")], "");
    let run = piped.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        !run.stderr.contains('\x1b') && !run.stderr.contains('\r'),
        "{run}"
    );
    let (code, shown) = on_terminal(&piped, &["--quiet", "run", "plans/fix.md"], &[]);
    assert_eq!(code, 0, "{shown}");
    assert!(!shown.contains("attempt 1 ·"), "{shown:?}");
    assert!(
        !shown.contains("first line"),
        "--quiet leaves the actor's output to its log"
    );
}
