//! Tests of `exec::run` with real child processes: `testdata/agents/fake-agent.sh` plays the
//! actor, its verbs composing each scenario. The last sections drive the real binary where the
//! property is about runs: what a crashed attempt left running, and `git baton log`.
//!
//! Every run happens on a helper thread with a generous deadline, so that a regression that makes
//! `run` hang fails the test instead of hanging the suite. No assertion depends on how fast the
//! machine is, beyond such liveness bounds.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use git_baton::agent::output::Format;
use git_baton::exec::{
    self, ActorSpec, Ended, ExecError, Invocation, Ran, RateLimitRules, StopCause,
};
use tempfile::TempDir;

use crate::support::{AGENT, LIVENESS};

mod leftovers;
mod logs;

/// A temporary directory: `work/` is the actor's working directory; prompt, evidence file and
/// logs sit beside it.
struct Dir {
    _tmp: TempDir,
    root: PathBuf,
}

impl Dir {
    fn new() -> Dir {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_owned();
        fs::create_dir(root.join("work")).unwrap();
        fs::write(
            root.join("prompt.md"),
            "# Do the thing\n\nwith {braces} and ünïcode\n",
        )
        .unwrap();
        Dir { _tmp: tmp, root }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    fn read(&self, name: &str) -> String {
        fs::read_to_string(self.path(name)).unwrap()
    }
}

/// One attempt to run: the actor, and how the test stops it.
struct Case {
    actor: ActorSpec,
    grace: Duration,
    /// Request a stop once the stdout log contains this.
    stop_when_stdout_has: Option<&'static str>,
    interrupted: Arc<AtomicBool>,
    log_limit: u64,
    /// Where to record the attempt's token.
    token_file: Option<PathBuf>,
}

/// Stopped by us: a SIGINT/SIGTERM to git-baton or a stop request.
const MANUAL: Ended = Ended::Interrupted {
    cause: StopCause::Manual,
};

/// A rate limit, `matched` by its rule or the output.
fn limited(exit_code: Option<i32>, matched: &str) -> Ended {
    Ended::RateLimited {
        exit_code,
        matched: matched.into(),
    }
}

/// A failure: the actor's exit code, or the signal that ended it.
fn failed(exit_code: Option<i32>, signal: Option<i32>) -> Ended {
    Ended::Failed { exit_code, signal }
}

/// The fake agent performing `script`: verbs and their arguments as `verb arg; verb arg …`.
/// A verb's last argument runs to the next `;`, so texts may hold spaces.
fn case(script: &str) -> Case {
    let mut argv = Vec::new();
    for step in script.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        let (verb, mut rest) = step.split_once(' ').unwrap_or((step, ""));
        argv.push(verb.to_owned());
        let arity = match verb {
            "trap-term" => 0,
            "edit" | "spawn-child-sleep" | "setsid-writer" | "cd-sleep" | "check-ended" => 2,
            _ => 1,
        };
        for i in 1..=arity {
            let arg = if i == arity {
                rest
            } else {
                let (arg, tail) = rest.split_once(' ').expect("an argument per word");
                rest = tail;
                arg
            };
            argv.push(arg.to_owned());
        }
    }
    case_argv(argv)
}

/// The fake agent performing the verbs and arguments `verbs`.
fn case_argv(verbs: Vec<String>) -> Case {
    let mut command = vec![AGENT.to_string()];
    command.extend(verbs);
    Case {
        actor: ActorSpec {
            name: "fake".into(),
            command,
            stdin_prompt: false,
            env: Vec::new(),
            timeout: None,
            rate_limit: RateLimitRules::default(),
            output: Default::default(),
        },
        grace: Duration::from_millis(500),
        stop_when_stdout_has: None,
        interrupted: Arc::new(AtomicBool::new(false)),
        log_limit: exec::DEFAULT_LOG_LIMIT,
        token_file: None,
    }
}

impl Case {
    fn run(self, dir: &Dir) -> Result<Ran, ExecError> {
        let root = dir.root.clone();
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let work = root.join("work");
            let prompt = root.join("prompt.md");
            let evidence = root.join("evidence.json");
            let stdout_log = root.join("stdout.log");
            let stderr_log = root.join("stderr.log");
            let stop_log = stdout_log.clone();
            let stop_when = self.stop_when_stdout_has;
            let stop_requested = move || {
                stop_when.is_some_and(|needle| {
                    fs::read_to_string(&stop_log).is_ok_and(|text| text.contains(needle))
                })
            };
            let text = |path: &Path| path.to_str().unwrap().to_owned();
            let inv = Invocation {
                actor: &self.actor,
                workdir: &work,
                env: vec![
                    ("BATON_RUN_ID".into(), "run-1".into()),
                    ("BATON_STAGE".into(), "implement".into()),
                    ("BATON_EVIDENCE_FILE".into(), text(&evidence)),
                ],
                clear_env: &[],
                placeholders: Some(vec![
                    ("prompt_file", text(&prompt)),
                    ("evidence_file", text(&evidence)),
                    ("worktree", text(&work)),
                    ("run_id", "run-1".into()),
                    ("stage", "implement".into()),
                    ("attempt", "2".into()),
                ]),
                prompt_file: &prompt,
                stdout_log: &stdout_log,
                stderr_log: &stderr_log,
                echo: &exec::no_echo,
                stop_requested: &stop_requested,
                interrupted: &self.interrupted,
                grace: self.grace,
                token_file: self.token_file.as_deref(),
                pid_file: None,
                log_limit: self.log_limit,
            };
            let _ = send.send(exec::run(&inv));
        });
        receive
            .recv_timeout(LIVENESS)
            .expect("exec::run did not return")
    }
}

/// Whether `pid` is gone (or a zombie: dead, waiting for a parent that is not ours to reap it),
/// waiting for it boundedly.
fn dead(pid: &str) -> bool {
    let deadline = Instant::now() + LIVENESS;
    loop {
        let gone = ended_now(pid);
        if gone || Instant::now() >= deadline {
            return gone;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` is gone or a zombie right now, without waiting.
fn ended_now(pid: &str) -> bool {
    // An empty pid would name `/proc/stat`, which always exists.
    assert!(pid.trim().parse::<u32>().is_ok(), "not a pid: {pid:?}");
    match fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| matches!(rest.trim_start().chars().next(), Some('Z' | 'X'))),
    }
}

/// Whether the file at `path` grows within a generous moment: a writer that is still alive
/// appends every 50 ms. (Only an "it stopped" is asserted, so a slow machine cannot fail it.)
fn still_growing(path: &Path) -> bool {
    let before = fs::metadata(path).unwrap().len();
    std::thread::sleep(Duration::from_millis(500));
    fs::metadata(path).unwrap().len() != before
}

#[test]
fn success_captures_logs_and_expands_placeholders() {
    let dir = Dir::new();
    let script = "say stage={stage} attempt={attempt} run={run_id}; say {prompt_file}; \
                  warn a warning; edit {worktree}/notes.txt edited; evidence {\"targets\": {}}";
    let finished = case(script).run(&dir).unwrap();

    assert_eq!(finished.outcome, Ended::Succeeded);
    assert_eq!((finished.exit_code, finished.signal), (Some(0), None));
    let prompt = dir.path("prompt.md");
    assert_eq!(
        dir.read("stdout.log"),
        format!(
            "stage=implement attempt=2 run=run-1\n{}\n",
            prompt.display()
        )
    );
    assert_eq!(dir.read("stderr.log"), "a warning\n");
    assert_eq!(finished.stderr_tail, "a warning");
    assert_eq!(dir.read("work/notes.txt"), "edited\n");
    // Braces that do not form a placeholder reach the actor untouched.
    assert_eq!(dir.read("evidence.json"), "{\"targets\": {}}\n");
}

#[test]
fn the_prompt_is_the_stdin_only_when_asked() {
    let dir = Dir::new();
    let mut with_prompt = case("cat-stdin {worktree}/stdin.txt");
    with_prompt.actor.stdin_prompt = true;
    assert_eq!(with_prompt.run(&dir).unwrap().outcome, Ended::Succeeded);
    assert_eq!(dir.read("work/stdin.txt"), dir.read("prompt.md"));

    let without = case("cat-stdin {worktree}/stdin.txt");
    assert_eq!(without.run(&dir).unwrap().outcome, Ended::Succeeded);
    assert_eq!(dir.read("work/stdin.txt"), "");
}

#[test]
fn baton_variables_are_visible_and_win_over_the_actor_env() {
    let dir = Dir::new();
    let mut case = case("env {worktree}/env.txt");
    case.actor.env = vec![
        ("BATON_STAGE".into(), "from-config".into()),
        ("BATON_FROM_CONFIG".into(), "yes".into()),
    ];
    assert_eq!(case.run(&dir).unwrap().outcome, Ended::Succeeded);
    let evidence = dir.path("evidence.json");
    assert_eq!(
        dir.read("work/env.txt"),
        format!(
            "BATON_EVIDENCE_FILE={}\nBATON_FROM_CONFIG=yes\nBATON_RUN_ID=run-1\nBATON_STAGE=implement\n",
            evidence.display()
        )
    );
}

#[test]
fn a_non_zero_exit_fails_with_its_code_and_the_stderr_tail() {
    let dir = Dir::new();
    let lines: Vec<String> = (1..=25).map(|i| format!("problem {i}")).collect();
    let warnings: Vec<String> = lines.iter().map(|line| format!("warn {line}")).collect();
    let finished = case(&format!("{}; exit 3", warnings.join("; ")))
        .run(&dir)
        .unwrap();

    assert_eq!(finished.outcome, failed(Some(3), None));
    assert_eq!(finished.exit_code, Some(3));
    assert_eq!(finished.stderr_tail, lines[5..].join("\n"));
    assert_eq!(dir.read("stderr.log"), lines.join("\n") + "\n");
}

#[test]
fn death_by_a_signal_we_did_not_send_is_a_failure() {
    let dir = Dir::new();
    let finished = case("kill-self KILL").run(&dir).unwrap();
    assert_eq!(finished.outcome, failed(None, Some(9)));
}

#[test]
fn rate_limit_by_exit_code() {
    let dir = Dir::new();
    let mut case = case("warn slow down; exit 75");
    case.actor.rate_limit.exit_codes = vec![75];
    let finished = case.run(&dir).unwrap();
    assert_eq!(finished.outcome, limited(Some(75), "exit code 75"));
}

#[test]
fn rate_limit_by_a_pattern_split_across_writes() {
    let dir = Dir::new();
    let mut case = case("print Error: Rate Li; sleep 0.2; print mit exceeded; exit 1");
    case.actor.rate_limit.patterns = vec!["quota".into(), "rate limit exceeded".into()];
    let finished = case.run(&dir).unwrap();
    assert_eq!(finished.outcome, limited(Some(1), "rate limit exceeded"));
    assert_eq!(dir.read("stdout.log"), "Error: Rate Limit exceeded");
}

#[test]
fn a_rate_limit_message_with_exit_0_is_still_a_success() {
    let dir = Dir::new();
    let mut case = case("warn 429 rate limit, retrying; say done");
    case.actor.rate_limit.patterns = vec!["rate limit".into()];
    assert_eq!(case.run(&dir).unwrap().outcome, Ended::Succeeded);
}

/// The fake agent printing a real agent's captured output (testdata/agents/<rel>) and exiting
/// with `code`, read as `format`.
fn printing(rel: &str, code: &str, format: Format) -> Case {
    let path = format!("{}/testdata/agents/{rel}", env!("CARGO_MANIFEST_DIR"));
    let mut case = case_argv(vec!["cat".into(), path, "exit".into(), code.into()]);
    case.actor.output = format;
    case
}

/// What the output says weighs before the exit code; output that does not parse, or a `text`
/// actor, leaves the exit code and the rules to decide as before.
#[test]
fn the_structured_verdict_decides_before_the_exit_code() {
    let codex_429 = "codex-jsonl: exceeded retry limit, last status: 429 Too Many Requests";
    let aider_429 = "aider-text: litellm.RateLimitError: RateLimitError: OpenAIException - This \
                     request would exceed your account's rate limit. Please try again later.";
    #[rustfmt::skip]
    let cases = [
        // aider exits 0 when it gives up on a 429: only its output says so.
        ("aider/e2e-429.txt", "0", Format::AiderText, limited(Some(0), aider_429)),
        ("aider/e2e-429.txt", "0", Format::Text, Ended::Succeeded),
        ("aider/e2e-edit.txt", "0", Format::AiderText, Ended::Succeeded),
        ("codex/rate-limit-429.jsonl", "1", Format::CodexJsonl, limited(Some(1), codex_429)),
        ("codex/rate-limit-429.jsonl", "0", Format::CodexJsonl, limited(Some(0), codex_429)),
        ("codex/rate-limit-429.jsonl", "1", Format::Text, failed(Some(1), None)),
        ("codex/success.jsonl", "1", Format::CodexJsonl, failed(Some(1), None)),
        ("claude/success.json", "0", Format::ClaudeJson, Ended::Succeeded),
        ("claude/success.json", "0", Format::CodexJsonl, Ended::Succeeded),
    ];
    for (rel, code, format, want) in cases {
        let dir = Dir::new();
        let finished = printing(rel, code, format).run(&dir).unwrap();
        assert_eq!(finished.outcome, want, "{rel} exit {code} as {format:?}");
        assert_eq!(finished.agent.is_some(), format != Format::Text);
    }
    // Claude's success read as Codex's events: unparsed, with why; the exit code decided.
    let dir = Dir::new();
    let finished = printing("claude/success.json", "0", Format::CodexJsonl)
        .run(&dir)
        .unwrap();
    let report = finished.agent.unwrap();
    assert_eq!(
        report.unparsed.as_deref(),
        Some("no turn.completed or turn.failed event among 1 event(s)")
    );
}

/// A structured failure with exit 0 is a failure, and the rate-limit patterns still apply to it.
#[test]
fn a_structured_failure_with_exit_0_fails_and_meets_the_rules() {
    let dir = Dir::new();
    let mut case = printing("claude/rate-limit-429.json", "0", Format::CodexJsonl);
    case.actor.rate_limit.patterns = vec!["per-minute rate limit".into()];
    // Not Codex's format: unparsed, exit 0 — a success, whatever the patterns say.
    assert_eq!(case.run(&dir).unwrap().outcome, Ended::Succeeded);

    let dir = Dir::new();
    let path = dir.path("failed.jsonl");
    let capture = fs::read_to_string(format!(
        "{}/testdata/agents/codex/rate-limit-429.jsonl",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    fs::write(
        &path,
        capture.replace(
            "exceeded retry limit, last status: 429 Too Many Requests",
            "stream disconnected: upstream says slow down",
        ),
    )
    .unwrap();
    let mut case = case_argv(vec!["cat".into(), path.to_str().unwrap().into()]);
    case.actor.output = Format::CodexJsonl;
    assert_eq!(case.run(&dir).unwrap().outcome, failed(Some(0), None));
    let mut case = case_argv(vec!["cat".into(), path.to_str().unwrap().into()]);
    case.actor.output = Format::CodexJsonl;
    case.actor.rate_limit.patterns = vec!["slow down".into()];
    assert_eq!(
        case.run(&dir).unwrap().outcome,
        limited(Some(0), "slow down")
    );
}

/// An attempt we stopped is not read: it did not finish saying anything.
#[test]
fn a_stopped_attempt_is_not_read() {
    let dir = Dir::new();
    let mut case = case("say halfway; sleep 30");
    case.actor.output = Format::ClaudeJson;
    case.stop_when_stdout_has = Some("halfway");
    let finished = case.run(&dir).unwrap();
    assert_eq!(finished.outcome, MANUAL);
    assert_eq!(finished.agent, None);
}

#[test]
fn a_timeout_kills_the_whole_group() {
    let dir = Dir::new();
    let mut case = case(
        "pid {worktree}/leader.pid; spawn-child-sleep 30 {worktree}/child.pid; say started; sleep 30",
    );
    let timeout = Duration::from_millis(300);
    case.actor.timeout = Some(timeout);
    let finished = case.run(&dir).unwrap();

    assert_eq!(
        finished.outcome,
        Ended::Interrupted {
            cause: StopCause::Timeout
        }
    );
    assert_eq!(finished.signal, Some(15));
    assert!(finished.duration >= timeout);
    assert!(dead(&dir.read("work/leader.pid")));
    assert!(dead(&dir.read("work/child.pid")));
    assert_eq!(dir.read("stdout.log"), "started\n");
}

#[test]
fn a_stop_request_interrupts_and_keeps_what_was_written() {
    let dir = Dir::new();
    let mut case = case("warn working on it; say halfway; sleep 30; say never");
    case.stop_when_stdout_has = Some("halfway");
    let finished = case.run(&dir).unwrap();

    assert_eq!(finished.outcome, MANUAL);
    assert_eq!(dir.read("stdout.log"), "halfway\n");
    assert_eq!(dir.read("stderr.log"), "working on it\n");
    assert_eq!(finished.stderr_tail, "working on it");
}

#[test]
fn the_interrupt_flag_stops_the_attempt() {
    let dir = Dir::new();
    let case = case("say ready; sleep 30");
    let flag = Arc::clone(&case.interrupted);
    let log = dir.path("stdout.log");
    // Plays our SIGINT handler, once the actor is under way.
    std::thread::spawn(move || {
        let deadline = Instant::now() + LIVENESS;
        while !fs::read_to_string(&log).is_ok_and(|text| text.contains("ready"))
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        flag.store(true, Ordering::SeqCst);
    });
    let finished = case.run(&dir).unwrap();
    assert_eq!(finished.outcome, MANUAL);
    assert_eq!(finished.signal, Some(15));
}

#[test]
fn an_interrupt_before_the_start_starts_nothing() {
    let dir = Dir::new();
    let case = case("pid {worktree}/leader.pid");
    case.interrupted.store(true, Ordering::SeqCst);
    let finished = case.run(&dir).unwrap();
    assert_eq!(finished.outcome, MANUAL);
    assert!(!dir.path("work/leader.pid").exists());
}

#[test]
fn an_actor_ignoring_sigterm_is_killed_after_the_grace_period() {
    let dir = Dir::new();
    let mut case =
        case("trap-term; spawn-child-sleep 30 {worktree}/child.pid; say ready; sleep 30");
    case.stop_when_stdout_has = Some("ready");
    case.grace = Duration::from_millis(300);
    let finished = case.run(&dir).unwrap();

    assert_eq!(finished.outcome, MANUAL);
    assert_eq!(finished.signal, Some(9));
    assert!(finished.duration >= Duration::from_millis(300));
    assert!(dead(&dir.read("work/child.pid")));
}

#[test]
fn a_grandchild_holding_the_pipes_does_not_hang_run() {
    let dir = Dir::new();
    let finished = case("spawn-child-sleep 30 {worktree}/child.pid; say done")
        .run(&dir)
        .unwrap();

    assert_eq!(finished.outcome, Ended::Succeeded);
    assert_eq!(dir.read("stdout.log"), "done\n");
    assert!(dead(&dir.read("work/child.pid")));
}

#[test]
fn output_larger_than_a_pipe_buffer_is_logged_whole() {
    let dir = Dir::new();
    let finished = case("flood 1000000; warn end").run(&dir).unwrap();
    assert_eq!(finished.outcome, Ended::Succeeded);
    let stdout = dir.read("stdout.log");
    assert_eq!(stdout.len(), 1_000_000);
    assert!(stdout.bytes().all(|b| b == b'x'));
}

#[test]
fn a_missing_program_is_an_error_naming_actor_and_program() {
    let dir = Dir::new();
    let mut case = case("");
    case.actor.name = "codex".into();
    case.actor.command = vec!["git-baton-test-no-such-agent".into(), "--yes".into()];
    let err = case.run(&dir).unwrap_err();
    assert!(matches!(err, ExecError::NotFound { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "actor `codex`: command `git-baton-test-no-such-agent` not found"
    );
    assert!(err.hint().unwrap().contains("PATH"));
}

#[test]
fn a_program_without_the_executable_bit_is_an_error() {
    let dir = Dir::new();
    let script = dir.path("work/agent.sh");
    fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    let mut case = case("");
    case.actor.command = vec![script.to_str().unwrap().into()];
    let err = case.run(&dir).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "actor `fake`: command `{}` cannot be executed: permission denied",
            script.display()
        )
    );
}

#[test]
fn a_missing_working_directory_is_not_reported_as_a_missing_program() {
    let dir = Dir::new();
    fs::remove_dir(dir.path("work")).unwrap();
    let err = case("say hi").run(&dir).unwrap_err();
    assert!(matches!(err, ExecError::Workdir { .. }), "{err:?}");
    assert!(err.to_string().starts_with("actor `fake`: cannot run in "));
}

#[test]
fn bad_commands_are_errors_before_anything_runs() {
    let dir = Dir::new();
    let err = case("say {worktre}").run(&dir).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown placeholder `{worktre}` in the command of actor `fake`"
    );
    assert!(err.hint().unwrap().contains("{worktree}"));

    let mut empty = case("");
    empty.actor.command.clear();
    let err = empty.run(&dir).unwrap_err();
    assert_eq!(err.to_string(), "actor `fake` has an empty command");
}

#[test]
fn an_unwritable_log_is_an_error_naming_it() {
    let dir = Dir::new();
    fs::create_dir(dir.path("stdout.log")).unwrap();
    let err = case("say hi").run(&dir).unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "actor `fake`: cannot write log {}: ",
            dir.path("stdout.log").display()
        )),
        "{message}"
    );
}

#[test]
fn the_interrupt_flag_is_registered_once_and_set_by_sigterm() {
    let flag = exec::interrupt_flag().unwrap();
    assert!(Arc::ptr_eq(&flag, &exec::interrupt_flag().unwrap()));
    // The handler is installed, so this sets the flag instead of ending the test binary.
    signal_hook::low_level::raise(signal_hook::consts::SIGTERM).unwrap();
    let deadline = Instant::now() + LIVENESS;
    while !flag.load(Ordering::SeqCst) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(flag.swap(false, Ordering::SeqCst));
}

#[test]
fn a_log_that_cannot_take_more_stops_the_attempt() {
    let dir = Dir::new();
    // Every write to /dev/full fails with ENOSPC, like a full disk.
    std::os::unix::fs::symlink("/dev/full", dir.path("stdout.log")).unwrap();
    // The pid first: the failed write of "hi" stops the attempt at once, and once killed
    // half-way through writing its pid, the agent left an empty file (found by CI, 1 run in 300).
    let err = case("pid {worktree}/leader.pid; say hi; sleep 30")
        .run(&dir)
        .unwrap_err();
    assert!(matches!(err, ExecError::Log { .. }), "{err:?}");
    assert!(err.to_string().contains("stdout.log"), "{err}");
    assert!(dead(&dir.read("work/leader.pid")));
}

/// A JSON flow sequence (valid YAML) for `command:`: the fake agent with `verbs`.
fn argv(verbs: &[&str]) -> String {
    let mut argv = vec![AGENT];
    argv.extend(verbs);
    serde_json::to_string(&argv).unwrap()
}

/// What the tests through the binary share.
mod cli {
    use crate::support::TestRepo;

    /// A repository with a plan without targets, `plans/p.md`, and `baton_yml`, committed.
    pub fn repo(baton_yml: &str) -> TestRepo {
        TestRepo::with()
            .file("plans/p.md", "---\ntitle: Work\n---\nDo the work.\n")
            .config(baton_yml)
            .commit()
    }

    pub use crate::support::wait_for_line;

    pub fn kill9(pid: u32) {
        let status = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }
}
