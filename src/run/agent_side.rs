//! The agent-side commands, run by the agent inside a run's worktree while its attempt runs:
//! `git baton unchanged` records a reason where the gate reads it, `git baton check` says what
//! the gate would say now, and its hook forms keep Claude Code, Codex and Gemini CLI working
//! while a target is uncovered (one count per attempt, whichever CLI's hook asks).
//!
//! The driver holds the run's lock for as long as the attempt runs, so these never take it and
//! never write `state.json`. They write only the open attempt's own files — the evidence file
//! the gate reads, and the Stop hook's count — each replaced atomically under the attempt's
//! own file lock ([`AGENT_LOCK`]), so that two calls at once (an agent running tools in
//! parallel) both land, one after the other. The gate after the actor exits reads the same
//! evidence file with the same engine, and decides, always.

use std::fs::File;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::closest;
use crate::coverage::{self, ProblemKind, TargetStatus};
use crate::git::Repo;
use crate::plan::Plan;
pub use crate::report::check::Check;
use crate::state::RunState;
use crate::state::store::Store;

/// In an attempt's directory: the lock the agent-side commands hold while they change the
/// attempt's files.
pub const AGENT_LOCK: &str = "agent.lock";
/// In an attempt's directory: how often the Stop hook blocked, read into the attempt's record
/// when it ends.
pub const STOP_HOOK_FILE: &str = "stop-hook.json";
/// How often the Stop hook blocks one attempt unless told otherwise. Small: each block costs a
/// turn, and Claude Code stops honouring a hook after 8 blocks in a row anyway.
pub const DEFAULT_MAX_BLOCKS: u32 = 3;
/// The most of the hook's input read from stdin.
pub const MAX_HOOK_INPUT: u64 = 1024 * 1024;
/// How long a call waits for another to release [`AGENT_LOCK`]: the calls hold it for the few
/// milliseconds a write takes, so only a process that holds it and never lets go (the agent
/// can `flock` the file) waits this long — and then the call fails instead of hanging.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Takes `file`'s exclusive lock, waiting at most `wait` for another holder to release it.
fn lock_within(file: &File, wait: std::time::Duration) -> std::io::Result<()> {
    let deadline = std::time::Instant::now() + wait;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::Error(err)) => return Err(err),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::WouldBlock,
                    format!(
                        "another process has held it for {} s",
                        wait.as_secs_f64().round()
                    ),
                ));
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AgentSideError {
    #[error("{dir} is not in the worktree of a git-baton run")]
    NotInRun { dir: String },
    #[error("run {run} has no attempt running (it is {status})")]
    NoOpenAttempt { run: String, status: String },
    #[error(
        "run {run} has an open attempt but no live driver (stale): nothing recorded now would \
         reach its gate"
    )]
    Stale { run: String },
    #[error("unknown target `{target}`: the plan of run {run} has no such target")]
    UnknownTarget {
        target: String,
        run: String,
        suggestion: Option<String>,
        targets: Vec<String>,
    },
    #[error("reason for target `{target}` refused: {message}")]
    BadReason { target: String, message: String },
    #[error("target `{target}` already has an entry in this attempt's evidence ({path})")]
    Duplicate { target: String, path: String },
    #[error("the evidence file {path} is not valid: {message}")]
    InvalidEvidence { path: String, message: String },
    #[error("cannot read the plan snapshot of run {run}: {message}")]
    Plan { run: String, message: String },
    #[error("the Stop hook's input is not JSON: {0}")]
    HookInput(String),
    #[error("cannot {action} {}", .path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Write(#[from] crate::files::AtomicWriteError),
    #[error(transparent)]
    Store(#[from] crate::state::store::StoreError),
    #[error(transparent)]
    Git(#[from] crate::git::GitError),
}

type Result<T, E = AgentSideError> = std::result::Result<T, E>;

/// The run whose worktree the agent is in, and its open attempt.
pub struct Current {
    pub state: RunState,
    pub run_dir: PathBuf,
    pub stage: usize,
    /// The open attempt's number within its stage.
    pub attempt: u32,
    pub attempt_dir: PathBuf,
    pub plan: Plan,
}

impl Current {
    /// The worktree `repo` (discovered from the current directory) is the worktree of exactly
    /// one run; that run, with its open attempt.
    pub fn find(repo: &Repo, store: &Store) -> Result<Current> {
        let state = run_of_worktree(repo, store)?;
        let run_dir = store.run_dir(&state.run_id);
        let open = state.open_attempt().map(|(i, a)| {
            let dir = state.attempt_dir_in(&run_dir, &state.stages()[i].name, a);
            (i, a.n, dir)
        });
        let Some((stage, attempt, dir)) = open else {
            return Err(AgentSideError::NoOpenAttempt {
                run: state.run_id.to_string(),
                status: crate::report::status::word(state.status()),
            });
        };
        // An open attempt whose driver is gone (a crash) is never gated: its reasons would be
        // dropped without a word when the run is resumed.
        if store.is_stale(&state) {
            return Err(AgentSideError::Stale {
                run: state.run_id.to_string(),
            });
        }
        let plan =
            super::targets::of_run(repo, &state, &run_dir).map_err(|err| AgentSideError::Plan {
                run: state.run_id.to_string(),
                message: err.to_string(),
            })?;
        let attempt_dir = dir.map_err(|e| AgentSideError::Plan {
            run: state.run_id.to_string(),
            message: e.to_string(),
        })?;
        Ok(Current {
            attempt_dir,
            run_dir,
            state,
            stage,
            attempt,
            plan,
        })
    }

    fn evidence_file(&self) -> PathBuf {
        self.attempt_dir.join("evidence.json")
    }

    /// The evidence file as the run's messages name it.
    fn evidence_shown(&self) -> String {
        let stage = &self.state.stages()[self.stage];
        format!("attempts/{}-{}/evidence.json", stage.name, self.attempt)
    }

    /// Holds the attempt's own lock until the returned file is dropped.
    fn lock(&self) -> Result<File> {
        let path = self.attempt_dir.join(AGENT_LOCK);
        let io = |action| {
            let path = path.clone();
            move |source| AgentSideError::Io {
                action,
                path,
                source,
            }
        };
        // The agent can write its attempt's directory: a named pipe, a device or a link put
        // there is refused at once, never opened in a way that waits.
        let file = crate::files::open_lock_file(&path).map_err(io("open"))?;
        lock_within(&file, LOCK_WAIT).map_err(io("lock"))?;
        Ok(file)
    }

    /// Records that `target` needed no change, because `reason`, in the open attempt's evidence.
    /// Refused at once — before anything is written — for a target the plan does not have, a
    /// reason the gate would refuse, or a target that already has an entry.
    pub fn record_unchanged(&self, target: &str, reason: &str) -> Result<()> {
        let specs: Vec<&str> = self.plan.targets.iter().map(|t| t.spec.as_str()).collect();
        if !specs.contains(&target) {
            return Err(AgentSideError::UnknownTarget {
                target: target.into(),
                run: self.state.run_id.to_string(),
                suggestion: closest(target, &specs).map(String::from),
                targets: specs.iter().map(|s| s.to_string()).collect(),
            });
        }
        let reason = reason.trim();
        if let Err(kind) = coverage::check_reason(reason) {
            return Err(AgentSideError::BadReason {
                target: target.into(),
                message: reason_message(kind, reason),
            });
        }
        let _held = self.lock()?;
        let path = self.evidence_file();
        let shown = self.evidence_shown();
        let invalid = |message: String| AgentSideError::InvalidEvidence {
            path: shown.clone(),
            message,
        };
        // Whatever else the file holds (usage, entries a plain command wrote) stays as it is.
        let mut document = match super::read_evidence_text(&path, &shown).map_err(&invalid)? {
            None => serde_json::json!({}),
            Some(text) => {
                let evidence = super::parse_evidence(&shown, &text).map_err(&invalid)?;
                if evidence.entries.iter().any(|e| e.target == target) {
                    return Err(AgentSideError::Duplicate {
                        target: target.into(),
                        path: shown,
                    });
                }
                serde_json::from_str::<Value>(&text).map_err(|e| invalid(e.to_string()))?
            }
        };
        let Some(object) = document.as_object_mut() else {
            return Err(invalid("the top level is not an object".into()));
        };
        let entries = object
            .entry("target_coverage")
            .or_insert_with(|| Value::Array(Vec::new()));
        let Some(entries) = entries.as_array_mut() else {
            return Err(invalid("`target_coverage` is not a list".into()));
        };
        entries.push(serde_json::json!({
            "target": target,
            "status": "unchanged",
            "reason": reason,
        }));
        let mut bytes = serde_json::to_vec_pretty(&document).expect("serializes");
        bytes.push(b'\n');
        crate::files::write_atomic(&path, &bytes)?;
        Ok(())
    }

    /// What the gate would say if the attempt ended now: the same evidence file, diff and rule.
    pub fn check(&self, repo: &Repo) -> Check {
        let evidence = super::read_evidence(&self.evidence_file(), &self.evidence_shown());
        let stage = &self.state.stages()[self.stage];
        let enforced = stage.gated && self.state.gate_enforced(self.attempt);
        let result = if stage.gated {
            super::gate(
                repo,
                &self.state,
                &self.plan,
                &evidence,
                super::Work::Worktree,
            )
        } else {
            Err(format!("stage `{}` has no coverage gate", stage.name))
        };
        // The attempt's end fails an attempt whose snapshot leaves paths out, gated or not:
        // the check applies the same rule, found the same way.
        let (unrecorded, unrecordable) = match super::unrecorded::would_leave_out(repo, &self.state)
        {
            Ok(paths) => (paths, None),
            Err(why) => (Vec::new(), Some(why)),
        };
        let covered = match &result {
            Ok(report) => report.passed || !enforced,
            Err(_) => !enforced,
        };
        Check {
            schema_version: crate::report::check::CHECK_SCHEMA_VERSION,
            run_id: self.state.run_id.to_string(),
            stage: stage.name.clone(),
            attempt: self.attempt,
            gated: stage.gated,
            enforced,
            passed: covered && unrecorded.is_empty() && unrecordable.is_none(),
            coverage: result.as_ref().ok().cloned(),
            error: result.err(),
            unrecorded,
            unrecordable,
        }
    }

    /// The Stop hook's decision: block while the check fails, at most `max_blocks` times per
    /// attempt; the count is kept in the attempt's [`STOP_HOOK_FILE`].
    pub fn stop_hook(&self, check: &Check, input: &HookInput, max_blocks: u32) -> Result<Hook> {
        if check.passed {
            return Ok(Hook::Allow { note: None });
        }
        let _held = self.lock()?;
        let path = self.attempt_dir.join(STOP_HOOK_FILE);
        let mut record = read_stop_hook(&path).unwrap_or_default();
        if record.blocks >= max_blocks {
            return Ok(Hook::Allow {
                note: Some(format!(
                    "git-baton: the Stop hook blocked {} time(s), its limit for this attempt; the gate decides when the agent exits",
                    record.blocks
                )),
            });
        }
        record.blocks += 1;
        if let Some(session) = &input.session_id {
            record.session_id = Some(session.clone());
        }
        let mut bytes = serde_json::to_vec_pretty(&record).expect("serializes");
        bytes.push(b'\n');
        crate::files::write_atomic(&path, &bytes)?;
        Ok(Hook::Block {
            reason: block_reason(check),
        })
    }
}

/// The run whose worktree `repo` (discovered from the current directory) is, whatever its
/// status.
pub fn run_of_worktree(repo: &Repo, store: &Store) -> Result<RunState> {
    let not_in_run = || AgentSideError::NotInRun {
        dir: repo
            .workdir()
            .map(|d| d.display().to_string())
            .unwrap_or_else(|_| repo.common_dir().display().to_string()),
    };
    let workdir = repo
        .workdir()
        .ok()
        .and_then(|d| d.canonicalize().ok())
        .ok_or_else(not_in_run)?;
    // The latest run first: a worktree path reused after `clean` belongs to the newest.
    store
        .list()?
        .into_iter()
        .rev()
        .filter_map(|id| store.load(&id).ok())
        .find(|state| Path::new(&state.worktree).canonicalize().ok() == Some(workdir.clone()))
        .ok_or_else(not_in_run)
}

/// How often the Stop hook blocked the attempt whose directory is `dir`, if it ever ran.
pub fn stop_hook_blocks(dir: &Path) -> Option<u32> {
    read_stop_hook(&dir.join(STOP_HOOK_FILE)).map(|r| r.blocks)
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StopHookRecord {
    blocks: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
}

fn read_stop_hook(path: &Path) -> Option<StopHookRecord> {
    let bytes = crate::files::read_limited_regular(path, 64 * 1024).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// The part of a hook's input git-baton reads (the same two fields in Claude Code's and
/// Codex's Stop and Gemini CLI's AfterAgent input); the rest is ignored.
#[derive(Debug, Default, Deserialize)]
pub struct HookInput {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub stop_hook_active: bool,
}

impl HookInput {
    pub fn parse(text: &str) -> Result<HookInput> {
        if text.trim().is_empty() {
            return Ok(HookInput::default());
        }
        serde_json::from_str(text).map_err(|e| AgentSideError::HookInput(e.to_string()))
    }
}

/// The Stop hook's answer.
#[derive(Debug, PartialEq, Eq)]
pub enum Hook {
    /// Let the agent stop; `note` says why although a target is uncovered.
    Allow { note: Option<String> },
    /// Keep the agent working, with `reason` as its next instruction.
    Block { reason: String },
}

/// The instruction Claude Code gets when the hook blocks: which targets, and how to cover them.
fn block_reason(check: &Check) -> String {
    let covered = check.coverage.as_ref().is_some_and(|r| r.passed) || !check.enforced;
    let mut text = String::from(if covered {
        "git-baton: this attempt would fail. "
    } else {
        "git-baton: the coverage gate would block this attempt. "
    });
    if !check.unrecorded.is_empty() {
        text.push_str(&format!(
            "If it ended now, {}. ",
            crate::state::unrecorded_message(&check.unrecorded)
        ));
    }
    if let Some(why) = &check.unrecordable {
        text.push_str(&format!("git cannot record the worktree now: {why}. "));
    }
    if !check.recordable() {
        text.push_str(&format!(
            "Before you stop, {}. ",
            crate::report::check::UNRECORDABLE_HINT
        ));
        if covered {
            text.push_str("Run `git baton check` to see what the gate will say, then finish.");
            return text;
        }
    }
    match &check.coverage {
        Some(report) => {
            for (status, targets) in report.failing_by_status() {
                let n = targets.len();
                let (count, what) = match status {
                    TargetStatus::Uncovered => {
                        (format!("{n} of {}", report.targets.len()), "are uncovered")
                    }
                    TargetStatus::Missing => (
                        n.to_string(),
                        "name no path in the repository (a mistake in the plan, for its author \
                         to correct)",
                    ),
                    TargetStatus::Touched => (
                        n.to_string(),
                        "changed only in whitespace, line endings or file mode, which does not \
                         count",
                    ),
                    TargetStatus::Changed | TargetStatus::Unchanged => continue,
                };
                text.push_str(&format!("{count} targets {what}: {}. ", targets.join(", ")));
            }
            for p in &report.problems {
                text.push_str(&format!("Problem: {}. ", p.message));
            }
        }
        None => {
            if let Some(error) = &check.error {
                text.push_str(&format!("{error}. "));
            }
        }
    }
    text.push_str(
        "Change each uncovered target as the plan asks. For a target that truly needs no \
         change, run `git baton unchanged <TARGET> \"<specific reason>\"`. Run `git baton check` \
         to see what the gate will say, then finish.",
    );
    text
}

/// The reason rule's verdict on `reason` as a sentence, the way the gate words it.
fn reason_message(kind: ProblemKind, reason: &str) -> String {
    match kind {
        ProblemKind::ControlCharacter => format!(
            "the reason holds a control character at {}: write it as plain text on one line",
            coverage::control_character_at(reason)
        ),
        ProblemKind::EmptyReason => "the reason is empty".into(),
        ProblemKind::PlaceholderReason => "the reason is a placeholder".into(),
        ProblemKind::ReasonTooLong => format!(
            "the reason is longer than {} characters",
            coverage::MAX_REASON_CHARS
        ),
        _ => format!(
            "the reason is too short (at least {} words and {} characters)",
            coverage::MIN_REASON_WORDS,
            coverage::MIN_REASON_CHARS
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock another process holds and never releases makes the call fail after the wait, not
    /// hang; one that is free is taken at once.
    #[test]
    fn a_lock_held_for_ever_fails_after_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(AGENT_LOCK);
        let holder = crate::files::open_lock_file(&path).unwrap();
        holder.lock().unwrap();
        let other = crate::files::open_lock_file(&path).unwrap();
        let err = lock_within(&other, std::time::Duration::from_millis(50)).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock, "{err}");
        drop(holder);
        lock_within(&other, std::time::Duration::from_millis(50)).unwrap();
    }

    /// `agent.lock` as a named pipe, a directory or a symbolic link is refused by its kind at
    /// once (a thread deadline turns a regression into a failure, not a hang).
    #[cfg(unix)]
    #[test]
    fn a_lock_that_is_not_a_regular_file_is_refused_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        crate::testing::fifo(&fifo);
        let sub = dir.path().join("dir");
        std::fs::create_dir(&sub).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let refused = crate::testing::without_waiting(move || {
            [fifo, sub, link].map(|path| {
                crate::files::open_lock_file(&path)
                    .map(|_| ())
                    .map_err(|err| err.to_string())
            })
        });
        assert_eq!(
            refused,
            [
                Err("is a named pipe (FIFO), not a regular file".to_string()),
                Err("is a directory, not a regular file".to_string()),
                Err("is a symbolic link, not a regular file".to_string()),
            ]
        );
    }

    #[test]
    fn hook_input_is_read_leniently_but_must_be_json() {
        let input =
            HookInput::parse(r#"{"session_id": "s-1", "stop_hook_active": true, "x": 1}"#).unwrap();
        assert_eq!(input.session_id.as_deref(), Some("s-1"));
        assert!(input.stop_hook_active);
        assert!(HookInput::parse("").unwrap().session_id.is_none());
        assert!(HookInput::parse("not json").is_err());
    }

    #[test]
    fn a_block_names_each_kind_of_failing_target_in_its_own_words() {
        let plan = crate::plan::parse(
            "plans/p.md",
            "---\ntargets: [a.md, b.md, c.md, d.md]\n---\n",
        )
        .unwrap();
        let mut report = coverage::evaluate(&plan.targets, &["d.md".into()], &[], &[]);
        report.targets[1].status = TargetStatus::Missing;
        report.targets[2].status = TargetStatus::Touched;
        let check = Check {
            schema_version: crate::report::check::CHECK_SCHEMA_VERSION,
            run_id: "r".into(),
            stage: "executor".into(),
            attempt: 2,
            gated: true,
            enforced: true,
            passed: false,
            coverage: Some(report),
            error: None,
            unrecorded: Vec::new(),
            unrecordable: None,
        };
        assert_eq!(
            block_reason(&check),
            "git-baton: the coverage gate would block this attempt. \
             1 of 4 targets are uncovered: a.md. \
             1 targets name no path in the repository (a mistake in the plan, for its author to \
             correct): b.md. \
             1 targets changed only in whitespace, line endings or file mode, which does not \
             count: c.md. \
             Change each uncovered target as the plan asks. For a target that truly needs no \
             change, run `git baton unchanged <TARGET> \"<specific reason>\"`. Run `git baton \
             check` to see what the gate will say, then finish."
        );
    }

    /// Covered, but the snapshot would leave a path out: the block names the path and git's
    /// reason, and says what to do, with nothing about uncovered targets.
    #[test]
    fn a_block_for_an_unrecordable_path_names_it() {
        let plan = crate::plan::parse("plans/p.md", "---\ntargets: [a.md]\n---\n").unwrap();
        let report = coverage::evaluate(&plan.targets, &["a.md".into()], &[], &[]);
        assert!(report.passed);
        let check = Check {
            schema_version: crate::report::check::CHECK_SCHEMA_VERSION,
            run_id: "r".into(),
            stage: "executor".into(),
            attempt: 1,
            gated: true,
            enforced: true,
            passed: false,
            coverage: Some(report),
            error: None,
            unrecorded: vec![crate::state::UnrecordedPath {
                path: "docs/p".into(),
                reason: "a named pipe (FIFO): git records only regular files".into(),
            }],
            unrecordable: None,
        };
        let reason = block_reason(&check);
        assert!(
            reason.starts_with(
                "git-baton: this attempt would fail. If it ended now, its snapshot does not hold \
                 1 path(s) git cannot record"
            ),
            "{reason}"
        );
        assert!(
            reason.contains("docs/p (a named pipe (FIFO): git records only regular files)"),
            "{reason}"
        );
        assert!(reason.contains("remove or replace each path"), "{reason}");
        assert!(!reason.contains("uncovered"), "{reason}");
    }

    #[test]
    fn reason_messages_name_the_rule() {
        assert_eq!(
            reason_message(ProblemKind::PlaceholderReason, "n/a"),
            "the reason is a placeholder"
        );
        assert!(reason_message(ProblemKind::ReasonTooShort, "ok").contains("at least 3 words"));
        assert_eq!(
            reason_message(ProblemKind::ControlCharacter, "a bell \u{7} rings here"),
            "the reason holds a control character at character 8 (U+0007): write it as plain text on one line"
        );
    }
}
