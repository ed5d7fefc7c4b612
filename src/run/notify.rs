//! Telling a person that a run needs them (docs/notify.md): after a commit of the run
//! [`session`](super::session) made the run `blocked`, `failed`, `review`, or put it on hold
//! (`rate_limited`, no `fallback:` actor taking over), the configuration's `notify:` command is
//! run once, with a JSON [`Document`] on its stdin.
//!
//! Only the process that commits the change notifies, once per change: a record taken from a
//! remote while catching up is not committed here, so it tells nobody. The command runs through
//! `exec` as a runner check does — its own process group, killed with it at its timeout, the
//! actor's cleaned environment — in the main worktree; its output is appended to the run's
//! `notify.log`, which is bounded. Whatever it does, the run is not changed by it: a command
//! that fails, is missing or times out is a warning [`Note`], never an error.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use jiff::Timestamp;
use serde::Serialize;

use crate::config::{Notify, NotifyEvent};
use crate::exec;
use crate::git::Repo;
use crate::state::{RunState, RunStatus};

use super::note::{Note, Sink};

/// What the document's `schema` says: its layout, bumped when a field changes meaning or goes.
pub const SCHEMA: &str = "git-baton/notify/1";
/// In the run directory: what every notification's command printed, appended.
pub const LOG: &str = "notify.log";
/// In the run directory: the document of the latest notification, its command's stdin.
pub const DOCUMENT: &str = "notify.json";
/// [`LOG`] is moved aside to `notify.log.1` (replacing it) once it is this long, before a
/// notification is appended: the two stay bounded however often a run stops.
const LOG_LIMIT: u64 = 256 * 1024;
/// The most of each of the command's streams one notification keeps (head and tail).
const STREAM_LIMIT: u64 = 64 * 1024;
/// Between SIGTERM to the command's processes at its timeout and SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// What git-baton writes on the stdin of the `notify:` command when a run needs a person
/// (docs/notify.md). Every field is always written, `null` when it has no value.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(title = "git-baton notify document"))]
pub struct Document<'a> {
    /// `git-baton/notify/1`.
    #[cfg_attr(test, schemars(extend("const" = "git-baton/notify/1")))]
    pub schema: &'static str,
    /// What the run became: `blocked`, `failed`, `review`, or `hold` (`rate_limited`).
    pub event: NotifyEvent,
    pub run_id: &'a str,
    pub plan: PlanOf<'a>,
    /// The run's status after the change.
    pub status: RunStatus,
    /// The run's status before it.
    pub previous_status: RunStatus,
    /// The stage of the run's latest attempt.
    pub stage: Option<&'a str>,
    /// The number of the run's latest attempt within its stage (1-based).
    pub attempt: Option<u32>,
    /// The actor of the run's latest attempt.
    pub actor: Option<&'a str>,
    /// Why the run stopped, as `status` says it: the latest attempt's error.
    pub error: Option<String>,
    /// For `hold`: when the limit lifts, as the agent said it, when it did.
    pub reset: Option<Reset<'a>>,
    /// The run's branch.
    pub branch: &'a str,
    /// The run's worktree (absolute).
    pub worktree: &'a str,
    /// When the run changed.
    pub at: Timestamp,
}

/// The run's plan, as `status` names it.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct PlanOf<'a> {
    pub id: &'a str,
    pub title: Option<&'a str>,
    /// Repo-relative.
    pub path: &'a str,
}

/// When a rate limit lifts, from the latest attempt's `agent.rate_limit_reset`.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Reset<'a> {
    /// As the agent wrote it: `3pm (Europe/Berlin)`, `in 4 days 6 hours 37 minutes`.
    pub text: &'a str,
    /// The instant, when the agent's words give one.
    pub at: Option<Timestamp>,
}

/// The event the commit that turned `before` into `after` is for a person, if any: a change of
/// status into `blocked`, `failed`, `review` or `rate_limited` — the last only when no
/// `fallback:` actor takes the stage over, since then the run goes on at once.
pub(super) fn due(before: RunStatus, after: &RunState) -> Option<NotifyEvent> {
    if before == after.status() {
        return None;
    }
    let event = NotifyEvent::of_status(after.status())?;
    if event == NotifyEvent::Hold
        && let Some((index, _)) = after.latest_attempt()
        && super::fallback::next_fallback(&after.stages()[index]).is_some()
    {
        return None;
    }
    Some(event)
}

/// The document of `event`, which the change from `previous` to `state` at `at` is.
pub(super) fn document<'a>(
    state: &'a RunState,
    event: NotifyEvent,
    previous: RunStatus,
    at: Timestamp,
) -> Document<'a> {
    let latest = state.latest_attempt();
    let reset = match event {
        NotifyEvent::Hold => latest
            .and_then(|(_, attempt)| attempt.agent.as_ref())
            .and_then(|agent| agent.rate_limit_reset.as_ref())
            .map(|reset| Reset {
                text: &reset.text,
                at: reset.at,
            }),
        _ => None,
    };
    Document {
        schema: SCHEMA,
        event,
        run_id: &state.run_id,
        plan: PlanOf {
            id: &state.plan.id,
            title: state.plan.title.as_deref(),
            path: &state.plan.path,
        },
        status: state.status(),
        previous_status: previous,
        stage: latest.map(|(index, _)| state.stages()[index].name.as_str()),
        attempt: latest.map(|(_, attempt)| attempt.n),
        actor: latest.map(|(_, attempt)| attempt.actor.as_str()),
        error: state.error().map(|error| error.message),
        reset,
        branch: &state.branch,
        worktree: &state.worktree,
        at,
    }
}

/// A session's notifier: the `notify:` configuration, read from the main worktree the first
/// time a commit is due to notify (most sessions never are), and kept for the session.
///
/// The session reads it rather than being handed it so that every command that commits a run —
/// `run`, `resume` and whatever drives runs next — notifies without each having to remember to;
/// a configuration that no longer loads costs a warning, never the commit.
#[derive(Default)]
pub(super) struct Notifier {
    notify: OnceLock<Option<Notify>>,
}

impl Notifier {
    /// Notifies of the commit that turned a run `before` into `state` at `at`, when it is due.
    pub(super) fn committed(
        &self,
        repo: &Repo,
        run_dir: &Path,
        sink: &dyn Sink,
        before: RunStatus,
        state: &RunState,
        at: Timestamp,
    ) {
        let Some(event) = due(before, state) else {
            return;
        };
        let notify = self.notify.get_or_init(|| match load(repo) {
            Ok(notify) => notify,
            Err(reason) => {
                sink.note(Note::NotifyUnread {
                    run: state.run_id.to_string(),
                    reason,
                });
                None
            }
        });
        let Some(notify) = notify.as_ref().filter(|n| n.wants(event)) else {
            return;
        };
        let document = document(state, event, before, at);
        let workdir = main_worktree(repo);
        if let Err(reason) = send(notify, &document, run_dir, &workdir) {
            sink.note(Note::NotifyFailed {
                run: state.run_id.to_string(),
                event: event.name().into(),
                command: shown(&notify.command),
                origin: notify.origin.clone(),
                reason,
                log: run_dir.join(LOG).display().to_string(),
            });
        }
    }
}

/// The `notify:` the configuration of the repository and the user sets.
fn load(repo: &Repo) -> Result<Option<Notify>, String> {
    let config = crate::config::load(&main_worktree(repo)).map_err(|err| match err.hint() {
        Some(hint) => format!("{err} ({hint})"),
        None => err.to_string(),
    })?;
    Ok(config.notify)
}

/// The main worktree, where the configuration is read and the command runs: the common
/// directory of a non-bare repository is `<main worktree>/.git`.
fn main_worktree(repo: &Repo) -> PathBuf {
    let common = repo.common_dir();
    match (common.file_name(), common.parent()) {
        (Some(name), Some(parent)) if name == ".git" => parent.to_path_buf(),
        _ => repo.workdir().unwrap_or(common).to_path_buf(),
    }
}

/// The command as a person reads it: `sh -c` lines as their text, argv joined by spaces.
fn shown(command: &[String]) -> String {
    match command {
        [sh, c, line] if sh == "sh" && c == "-c" => line.clone(),
        argv => argv.join(" "),
    }
}

/// Runs `notify` with `document` on its stdin, in `workdir`, its output appended to the run
/// directory's [`LOG`]; `Err` says why it did not succeed.
fn send(
    notify: &Notify,
    document: &Document,
    run_dir: &Path,
    workdir: &Path,
) -> Result<(), String> {
    let mut text = serde_json::to_vec_pretty(document).map_err(|err| err.to_string())?;
    text.push(b'\n');
    let stdin = run_dir.join(DOCUMENT);
    crate::files::write_atomic(&stdin, &text)
        .map_err(|err| format!("cannot write its document: {err}"))?;
    let (stdout, stderr) = (
        run_dir.join("notify.stdout.tmp"),
        run_dir.join("notify.stderr.tmp"),
    );
    let outcome = run(notify, document, workdir, &stdin, &stdout, &stderr);
    let logged = append_log(run_dir, notify, document, &stdout, &stderr, &outcome);
    for scratch in [&stdout, &stderr] {
        let _ = std::fs::remove_file(scratch);
    }
    outcome?;
    logged.map_err(|err| {
        format!(
            "it succeeded, but its log could not be written: {}",
            crate::files::io_reason(&err)
        )
    })
}

/// Runs the command through `exec`; `Err` says why it did not succeed.
fn run(
    notify: &Notify,
    document: &Document,
    workdir: &Path,
    stdin: &Path,
    stdout: &Path,
    stderr: &Path,
) -> Result<(), String> {
    let spec = exec::ActorSpec {
        name: "notify".into(),
        command: notify.command.clone(),
        stdin_prompt: true,
        env: Vec::new(),
        timeout: Some(notify.timeout),
        rate_limit: exec::RateLimitRules::default(),
        output: crate::agent::output::Format::Text,
    };
    let interrupted = exec::interrupt_flag().map_err(|err| err.to_string())?;
    let cleared = super::attempt::actor_cleared_vars();
    let env = vec![
        ("BATON_RUN_ID".to_string(), document.run_id.to_string()),
        ("BATON_NOTIFY_EVENT".into(), document.event.name().into()),
        ("BATON_STATUS".into(), document.status.name().into()),
        ("BATON_WORKTREE".into(), document.worktree.into()),
    ];
    let never = || false;
    let invocation = exec::Invocation {
        actor: &spec,
        workdir,
        env,
        clear_env: &cleared,
        placeholders: None,
        prompt_file: stdin,
        stdout_log: stdout,
        stderr_log: stderr,
        echo: &exec::no_echo,
        stop_requested: &never,
        interrupted: &interrupted,
        grace: GRACE,
        token_file: None,
        pid_file: None,
        log_limit: STREAM_LIMIT,
    };
    let ran = exec::run(&invocation).map_err(|err| super::checks::reason(&err))?;
    match ran.outcome {
        exec::Ended::Succeeded => Ok(()),
        exec::Ended::Interrupted {
            cause: exec::StopCause::Timeout,
        } => Err(format!(
            "killed with its process group after its timeout of {:?}",
            notify.timeout
        )),
        exec::Ended::Interrupted { .. } => Err("interrupted".into()),
        exec::Ended::Failed { .. } | exec::Ended::RateLimited { .. } => {
            Err(match (ran.exit_code, ran.signal) {
                (Some(code), _) => format!("exit code {code}"),
                (None, Some(signal)) => format!("killed by signal {signal}"),
                (None, None) => "it failed".into(),
            })
        }
    }
}

/// Appends one notification to the run's [`LOG`] — what it was, the command, its output and how
/// it ended — after moving a log past [`LOG_LIMIT`] aside.
fn append_log(
    run_dir: &Path,
    notify: &Notify,
    document: &Document,
    stdout: &Path,
    stderr: &Path,
    outcome: &Result<(), String>,
) -> std::io::Result<()> {
    let path = run_dir.join(LOG);
    if std::fs::metadata(&path).is_ok_and(|m| m.len() >= LOG_LIMIT) {
        std::fs::rename(&path, run_dir.join(format!("{LOG}.1")))?;
    }
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)?;
    let mut entry = format!(
        "== {} {}: run {} became {} (was {})\n$ {} ({})\n",
        document.at,
        document.event.name(),
        document.run_id,
        document.status,
        document.previous_status,
        shown(&notify.command),
        notify.origin,
    )
    .into_bytes();
    for (name, path) in [("stdout", stdout), ("stderr", stderr)] {
        // Bounded by `STREAM_LIMIT` (and the cut's marker): exec capped it.
        let bytes = std::fs::read(path).unwrap_or_default();
        if !bytes.is_empty() {
            entry.extend_from_slice(format!("-- {name}\n").as_bytes());
            entry.extend_from_slice(&bytes);
            if !bytes.ends_with(b"\n") {
                entry.push(b'\n');
            }
        }
    }
    let ended = match outcome {
        Ok(()) => "== succeeded\n".to_string(),
        Err(reason) => format!("== did not succeed: {reason}\n"),
    };
    entry.extend_from_slice(ended.as_bytes());
    // One write: two notifications never interleave (one process holds the run's lock anyway).
    log.write_all(&entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::fixture;
    use crate::state::transition::{AttemptEnd, Event, apply};
    use crate::state::{AgentOutput, Outcome, RateLimitReset};

    /// The fixture run with one attempt of the executor by `actor`, ended with `end`.
    fn ended(state: &RunState, actor: &str, end: AttemptEnd) -> RunState {
        let started = apply(
            state,
            Event::AttemptStarted {
                stage: 0,
                actor: actor.into(),
                dir: "attempts/executor-1".into(),
                cleared_env: Vec::new(),
                fallback_from: None,
            },
            fixture::at(1),
        )
        .unwrap();
        apply(&started, Event::attempt_ended(end), fixture::at(2)).unwrap()
    }

    fn rate_limited(reset: Option<RateLimitReset>) -> AttemptEnd {
        AttemptEnd {
            outcome: Outcome::RateLimited,
            error: Some("rate limited: exit code 75".into()),
            // As read back from a state file: robust to fields this test does not care about.
            agent: Some(Box::new(
                serde_json::from_value::<AgentOutput>(serde_json::json!({
                    "format": "claude-json",
                    "rate_limit_reset": reset,
                }))
                .unwrap(),
            )),
            ..AttemptEnd::default()
        }
    }

    #[test]
    fn a_change_into_a_status_a_person_waits_on_is_due_once() {
        let run = fixture::run();
        let failed = ended(
            &run,
            "a",
            AttemptEnd {
                outcome: Outcome::Failed,
                error: Some("exit code 3".into()),
                ..AttemptEnd::default()
            },
        );
        assert_eq!(due(RunStatus::Running, &failed), Some(NotifyEvent::Failed));
        // The same status committed again (the result written after review, a lease event)
        // is no new change.
        assert_eq!(due(RunStatus::Failed, &failed), None);
        // Nothing to tell of a run that started.
        assert_eq!(due(RunStatus::Pending, &run), None);
        let held = ended(&run, "a", rate_limited(None));
        assert_eq!(due(RunStatus::Running, &held), Some(NotifyEvent::Hold));
    }

    #[test]
    fn a_rate_limit_a_fallback_takes_over_is_no_hold() {
        let mut json: serde_json::Value =
            serde_json::from_slice(&crate::state::store::to_json(&fixture::run())).unwrap();
        json["stages"][0]["fallback"] = serde_json::json!(["spare"]);
        let run = crate::state::store::parse(json.to_string().as_bytes()).unwrap();
        let limited = ended(&run, "a", rate_limited(None));
        assert_eq!(limited.status(), RunStatus::RateLimited);
        assert_eq!(due(RunStatus::Running, &limited), None);
    }

    #[test]
    fn the_document_says_what_the_run_became_and_when_a_hold_ends() {
        let reset = RateLimitReset {
            text: "3pm (Europe/Berlin)".into(),
            at: Some(fixture::at(3600)),
        };
        let held = ended(&fixture::run(), "claude", rate_limited(Some(reset)));
        let document = document(&held, NotifyEvent::Hold, RunStatus::Running, fixture::at(2));
        let json = serde_json::to_value(&document).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "schema": "git-baton/notify/1",
                "event": "hold",
                "run_id": "1ngvbzkqq5",
                "plan": {"id": "p", "title": null, "path": "plans/p.md"},
                "status": "rate_limited",
                "previous_status": "running",
                "stage": "executor",
                "attempt": 1,
                "actor": "claude",
                "error": "rate limited: exit code 75",
                "reset": {"text": "3pm (Europe/Berlin)", "at": "2026-01-01T01:00:00Z"},
                "branch": "baton/1ngvbzkqq5",
                "worktree": "/w",
                "at": "2026-01-01T00:00:02Z",
            })
        );
        // A run that waits for nobody's limit has no reset, and a run just created no attempt.
        let fresh = fixture::run();
        let json = serde_json::to_value(document_of(&fresh)).unwrap();
        assert_eq!(json["reset"], serde_json::Value::Null);
        assert_eq!(json["attempt"], serde_json::Value::Null);
        assert_eq!(json["error"], serde_json::Value::Null);
    }

    fn document_of(state: &RunState) -> Document<'_> {
        document(
            state,
            NotifyEvent::Review,
            RunStatus::Running,
            fixture::at(9),
        )
    }

    #[test]
    fn the_log_is_appended_and_moved_aside_once_it_is_long() {
        let dir = tempfile::tempdir().unwrap();
        let run = fixture::run();
        let doc = document_of(&run);
        let notify = Notify {
            command: vec!["sh".into(), "-c".into(), "notify-send hi".into()],
            timeout: Duration::from_secs(1),
            on: NotifyEvent::ALL.to_vec(),
            origin: ".baton.yml:3:9".into(),
        };
        let (out, err) = (dir.path().join("out"), dir.path().join("err"));
        std::fs::write(&out, "sent").unwrap();
        std::fs::write(&err, "").unwrap();
        append_log(dir.path(), &notify, &doc, &out, &err, &Ok(())).unwrap();
        let failed = Err("exit code 1".to_string());
        append_log(dir.path(), &notify, &doc, &out, &err, &failed).unwrap();
        let log = std::fs::read_to_string(dir.path().join(LOG)).unwrap();
        let entry = "== 2026-01-01T00:00:09Z review: run 1ngvbzkqq5 became pending (was running)\n\
                     $ notify-send hi (.baton.yml:3:9)\n-- stdout\nsent\n";
        assert_eq!(
            log,
            format!("{entry}== succeeded\n{entry}== did not succeed: exit code 1\n")
        );
        // Past the limit, the log is moved aside (replacing the one before) and starts again.
        let long = "x".repeat(LOG_LIMIT as usize);
        std::fs::write(dir.path().join(LOG), &long).unwrap();
        std::fs::write(dir.path().join("notify.log.1"), "older").unwrap();
        append_log(dir.path(), &notify, &doc, &out, &err, &Ok(())).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("notify.log.1")).unwrap(),
            long
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join(LOG)).unwrap(),
            format!("{entry}== succeeded\n")
        );
    }

    #[test]
    fn commands_are_shown_as_written() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(shown(&argv(&["notify-send", "baton"])), "notify-send baton");
        assert_eq!(shown(&argv(&["sh", "-c", "curl -d @- x"])), "curl -d @- x");
    }
}
