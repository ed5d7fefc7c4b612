//! What `git baton check` prints: the gate's verdict on the open attempt of a run, as the agent
//! inside the run's worktree needs it — which targets are uncovered and how to cover them.

use std::fmt::Write;

use serde::Serialize;

use super::escape;
use crate::coverage::Report;
use crate::state::UnrecordedPath;

/// The version of `check --json`'s layout: raised when a field changes meaning or goes away
/// (adding one does not).
pub const CHECK_SCHEMA_VERSION: u32 = 1;

/// The gate's view of an open attempt, filled by the run (`run::agent_side`); `check --json`
/// prints it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(title = "git-baton check --json"))]
pub struct Check {
    /// [`CHECK_SCHEMA_VERSION`].
    pub schema_version: u32,
    pub run_id: String,
    pub stage: String,
    pub attempt: u32,
    /// The stage has the coverage gate.
    pub gated: bool,
    /// The gate will decide this attempt (`coverage: resume` leaves first attempts alone).
    pub enforced: bool,
    /// The attempt would pass now: covered (or not enforced), and its snapshot would hold every
    /// path of the worktree.
    pub passed: bool,
    pub coverage: Option<Report>,
    /// Why there is no report: the evidence is invalid, the diff failed, the stage has no gate.
    pub error: Option<String>,
    /// The paths the attempt's snapshot would not hold if it ended now (a named pipe, a socket,
    /// a name git refuses), each with git's reason: an attempt that leaves any ends `failed`,
    /// whatever its coverage. Left out when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unrecorded: Vec<UnrecordedPath>,
    /// Why git could not record the worktree at all now (the attempt would then fail too).
    /// Left out when it could.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unrecordable: Option<String>,
}

impl Check {
    /// Whether the attempt's snapshot would hold all of its work.
    #[must_use]
    pub fn recordable(&self) -> bool {
        self.unrecorded.is_empty() && self.unrecordable.is_none()
    }
}

/// The text form: a verdict line, one row per target, problems, and what to do next.
pub fn text(check: &Check) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "run {}, stage {}, attempt {}",
        check.run_id, check.stage, check.attempt
    );
    if let Some(report) = &check.coverage {
        super::status::target_rows(&mut out, report, "  ");
        super::rows::problems(&mut out, &report.problems);
    }
    if let Some(error) = &check.error {
        let _ = writeln!(out, "{}", escape::line(error));
    }
    if !check.unrecorded.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            escape::line(&format!(
                "if the attempt ended now, {}",
                crate::state::unrecorded_message(&check.unrecorded)
            ))
        );
    }
    if let Some(why) = &check.unrecordable {
        let _ = writeln!(
            out,
            "{}",
            escape::line(&format!("git cannot record the worktree now: {why}"))
        );
    }
    let covered = check.coverage.as_ref().is_some_and(|r| r.passed);
    let verdict = match (check.gated, check.enforced, covered) {
        (false, _, _) => "no gate: this stage is not checked".to_string(),
        (true, false, _) => {
            "the gate is not enforced for this attempt (`coverage: resume`); its report is kept"
                .to_string()
        }
        (true, true, true) => "the gate would pass".to_string(),
        (true, true, false) => "the gate would block this attempt".to_string(),
    };
    let _ = writeln!(out, "\n{verdict}");
    if !check.recordable() {
        let _ = writeln!(
            out,
            "the attempt would fail: its snapshot cannot hold all of the worktree"
        );
    }
    if check.gated && !covered {
        let _ = writeln!(
            out,
            "hint: change each uncovered target, or record why it needed no change:\n\
             hint:   git baton unchanged <TARGET> \"<specific reason>\""
        );
    }
    if !check.recordable() {
        let _ = writeln!(out, "hint: {UNRECORDABLE_HINT}");
    }
    out
}

/// What to do about paths git cannot record.
pub const UNRECORDABLE_HINT: &str = "remove or replace each path git cannot record: git records \
     only regular files, symbolic links and directories, under names it accepts";

/// What `git baton check --checks` ran of the runner checks: one line per check, with the end of
/// the output of one that did not pass.
pub fn checks_text(checks: &[crate::state::CheckResult]) -> String {
    let mut out = String::new();
    if checks.is_empty() {
        let _ = writeln!(out, "\nno runner checks apply to this stage");
        return out;
    }
    let _ = writeln!(
        out,
        "\nrunner checks (run now for your information; the runner runs them again after you exit, and only that run counts):"
    );
    for check in checks {
        let _ = writeln!(
            out,
            "  {} {}  {}",
            crate::report::width::status(check.outcome.name(), 10),
            crate::report::escape::line(&check.name),
            crate::report::escape::line(&check.stdout_log)
        );
        if !check.passed() {
            for line in check.tail.lines() {
                let _ = writeln!(out, "    | {}", crate::report::escape::line(line));
            }
        }
    }
    out
}
