use super::*;

/// A configuration's error as the CLI prints it, `hint:` included.
pub(super) fn err(text: &str) -> String {
    let e = parse(".baton.yml", text).unwrap_err();
    match e.hint() {
        Some(h) => format!("{e}\nhint: {h}"),
        None => e.to_string(),
    }
}

const FULL: &str = "\
actors:
  codex:
    command: [codex, exec, --full-auto, \"{prompt_file}\"]
    rate_limit: { exit_codes: [75], patterns: [\"rate limit\", \"usage limit\"] }
    timeout: 30m
  writer:
    command: [sh, -c, 'cat \"$BATON_PROMPT_FILE\" | claude -p']
    stdin: prompt
    env: { CLAUDE_MODEL: opus }
    model: opus
pipeline:
  - { stage: executor, actor: codex, gate: coverage }
  - { stage: reporter, actor: writer }
coverage: resume
";

#[test]
fn a_full_configuration() {
    let c = parse(".baton.yml", FULL).unwrap();
    assert_eq!(c.coverage, CoverageMode::Resume);
    assert_eq!(c.pipeline.len(), 2);
    assert!(c.pipeline[0].gated && !c.pipeline[1].gated);
    let codex = &c.actors["codex"];
    assert_eq!(codex.timeout, Some(Duration::from_secs(1800)));
    assert_eq!(codex.rate_limit_exit_codes, [75]);
    let writer = &c.actors["writer"];
    assert!(writer.stdin_prompt);
    assert_eq!(
        writer.env,
        [("CLAUDE_MODEL".to_string(), "opus".to_string())]
    );
    assert_eq!(parse(".baton.yml", "").unwrap().plans_dir, "plans");
    assert_eq!(
        parse(".baton.yml", "plans_dir: work/plans/\n")
            .unwrap()
            .plans_dir,
        "work/plans"
    );
}

#[test]
fn output_formats_and_fallbacks() {
    let text = "\
actors:
  claude: { command: [claude, -p], output: claude-json }
  codex: { command: [codex, exec, --json], output: codex-jsonl }
  gemini: { command: [gemini], output: gemini-json }
  plain: { command: [x] }
pipeline:
  - { stage: executor, actor: claude, gate: coverage, fallback: [codex, gemini] }
  - { stage: reporter, actor: plain }
";
    let c = parse(".baton.yml", text).unwrap();
    use crate::agent::output::Format;
    assert_eq!(c.actors["claude"].output, Format::ClaudeJson);
    assert_eq!(c.actors["codex"].output, Format::CodexJsonl);
    assert_eq!(c.actors["gemini"].output, Format::GeminiJson);
    assert_eq!(c.actors["plain"].output, Format::Text);
    assert_eq!(c.pipeline[0].fallback, ["codex", "gemini"]);
    assert!(c.pipeline[1].fallback.is_empty());

    insta::assert_snapshot!(err("actors:\n  a: {command: [x], output: claude}\n"), @".baton.yml:2:29: unknown variant `claude`, expected one of text, claude-json, codex-jsonl, gemini-json, gemini-stream-json, aider-text, opencode-jsonl");
    insta::assert_snapshot!(err("actors:\n  a: {command: [x]}\n  b: {command: [y]}\npipeline:\n  - stage: s\n    actor: a\n    fallback: [b, c]\n"), @r"
        .baton.yml:7:19: unknown actor `c` in the `fallback` of stage `s`
        hint: defined actors: a, b
        ");
    insta::assert_snapshot!(err("actors:\n  a: {command: [x]}\n  bb: {command: [y]}\npipeline:\n  - { stage: s, actor: a, fallback: [bb, bb] }\n"), @r"
        .baton.yml:5:42: actor `bb` appears twice in the `fallback` of stage `s`
        hint: each actor is tried at most once per rate-limited stage
        ");
}

/// A fallback actor may be defined by the user, like a stage's actor: checked after the
/// overlay.
#[test]
fn a_fallback_actor_may_come_from_the_user_file() {
    let mut c = Config::default();
    let repo =
        "actors:\n  a: {command: [x]}\npipeline:\n  - { stage: s, actor: a, fallback: [mine] }\n";
    apply(&mut c, FILE_NAME, repo, false).unwrap();
    let e = validate_pipeline(&c).unwrap_err();
    assert_eq!(
        e.to_string(),
        ".baton.yml:4:38: unknown actor `mine` in the `fallback` of stage `s`"
    );
    apply(
        &mut c,
        "user.yml",
        "actors:\n  mine: {command: [y]}\n",
        true,
    )
    .unwrap();
    validate_pipeline(&c).unwrap();
}

/// Every spelling of one directory is that directory; one that leaves the repository or
/// names its root is refused, however it is spelled.
#[test]
fn plans_dir_is_normalized() {
    let dir =
        |text: &str| parse(".baton.yml", &format!("plans_dir: {text}\n")).map(|c| c.plans_dir);
    for spelling in [
        "plans",
        "./plans",
        "plans/",
        "./plans/",
        "plans//",
        "././plans/.",
    ] {
        assert_eq!(dir(spelling).unwrap(), "plans", "{spelling}");
    }
    assert_eq!(dir("./agents//plans/./").unwrap(), "agents/plans");
    for refused in [".", "./", "/", "/plans", "plans/../..", "./../plans"] {
        let err = dir(&format!("'{refused}'")).unwrap_err().to_string();
        assert!(
            err.contains("must be a repo-relative directory"),
            "{refused}: {err}"
        );
    }
}

/// Durations are jiff's: plain seconds as before, and every friendly or ISO 8601 spelling.
#[test]
fn timeouts_are_durations() {
    let timeout = |value: &str| {
        parse(
            ".baton.yml",
            &format!("actors:\n  a:\n    command: [x]\n    timeout: {value}\n"),
        )
        .map(|c| c.actors["a"].timeout.map(|d| d.as_secs()))
    };
    for (text, secs) in [
        ("900", 900),
        ("'900'", 900),
        ("90s", 90),
        ("30m", 1800),
        ("2h", 7200),
        ("1h30m", 5400),
        ("1h 30m 15s", 5415),
        ("1 hour 30 minutes", 5400),
        ("'2 hours, 5 secs'", 7205),
        ("PT1H30M", 5400),
        ("1.5h", 5400),
        ("168h", 604_800),
    ] {
        assert_eq!(timeout(text).unwrap(), Some(secs), "{text}");
    }
    for refused in [
        "0",
        "0s",
        "-5m",
        "5m ago",
        "soon",
        "1.5.3h",
        "''",
        "1d",
        "2 weeks",
        "169h",
        "604801",
        "'18446744073709551615'",
        "18446744073709551615",
    ] {
        let e = timeout(refused).unwrap_err().to_string();
        assert!(
            e.starts_with(".baton.yml:4:14: actor `a` has an invalid `timeout`: "),
            "{refused}: {e}"
        );
    }
}

#[test]
fn log_limit_is_a_size() {
    let limit = |text: &str| parse(".baton.yml", text).map(|c| c.log_limit);
    assert_eq!(limit("").unwrap(), 8 << 20);
    assert_eq!(limit("log_limit: 4096\n").unwrap(), 4096);
    assert_eq!(limit("log_limit: 512KiB\n").unwrap(), 512 << 10);
    assert_eq!(limit("log_limit: 2 M\n").unwrap(), 2 << 20);
    assert_eq!(limit("log_limit: 1GiB\n").unwrap(), 1 << 30);
    insta::assert_snapshot!(err("log_limit: 8MB\n"), @r"
        .baton.yml:1:12: `log_limit` must be a size greater than zero
        hint: use bytes (`8388608`) or a number with a unit: `512KiB`, `8MiB`, `1GiB`
        ");
    assert!(limit("log_limit: 0\n").is_err());
    assert!(limit("log_limit: 99999999999G\n").is_err());
}

#[test]
fn errors_are_located() {
    insta::assert_snapshot!(err("plans_dir: plans\nplan_dir: x\n"), @r#"
            .baton.yml:2:1: unknown field `plan_dir`, expected one of plans_dir, actors, pipeline, coverage, worktree_root, prompts, require_targets, derive_targets, log_limit, lease, sync, remote, checks, protect, notify
            hint: did you mean `plans_dir`?
            "#);
    insta::assert_snapshot!(err("plans_dir: [a]\n"), @".baton.yml:1:12: expected string scalar");
    insta::assert_snapshot!(err("plans_dir: ../up\n"), @r"
        .baton.yml:1:12: `plans_dir` must be a repo-relative directory, not `../up`
        hint: for example `plans_dir: plans`
        ");
    insta::assert_snapshot!(err("actors:\n  a: {command: [x]}\npipeline:\n  - { stage: executor, actor: b }\n"), @r#"
            .baton.yml:4:31: unknown actor `b` for stage `executor`
            hint: defined actors: a
            "#);
    insta::assert_snapshot!(err("actors:\n  a: {comand: [x]}\n"), @r"
        .baton.yml:2:7: unknown field `comand`, expected one of command, stdin, env, timeout, rate_limit, model, provider, account, output
        hint: did you mean `command`?
        ");
    insta::assert_snapshot!(err("actors:\n  a: {command: [x], timeout: 5 fortnights}\n"), @r#"
        .baton.yml:2:30: actor `a` has an invalid `timeout`: `5 fortnights`: failed to parse input in the "friendly" duration format: expected to find unit designator suffix (e.g., `years` or `secs`) after parsing integer
        hint: use seconds (`900`) or units as in `90s`, `30m`, `1h30m`, `2 hours`
        "#);
    insta::assert_snapshot!(err("actors:\n  a: {command: [x]}\npipeline:\n  - { stage: executor, actor: a, gate: tests }\n"), @r"
        .baton.yml:4:40: unknown gate `tests` for stage `executor`
        hint: the one gate is `coverage`
        ");
    insta::assert_snapshot!(err("coverage: sometimes\n"), @".baton.yml:1:11: unknown variant `sometimes`, expected one of always, resume");
}
