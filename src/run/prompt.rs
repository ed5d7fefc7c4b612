//! The prompt an actor gets (pure: state and plan in, markdown out).
//!
//! Every prompt carries the plan body and every target, and says how to record a target that
//! needs no change. A resumed attempt's prompt adds what the incident showed an agent lacks when
//! it picks up someone else's work: that the earlier attempt ended early and the work may be
//! partly done, which paths already changed, which targets did not, and that partial changes
//! are not completion. A configured template replaces the layout; its `{{name}}` syntax lives in
//! [`crate::template`].

use std::fmt::Write;

use crate::coverage::{Report, TargetStatus};
use crate::state::{Attempt, RunState};

/// What the prompt needs beyond the RunState.
pub struct PromptInput<'a> {
    pub state: &'a RunState,
    pub stage: usize,
    pub plan_body: &'a str,
    /// The plan's targets, matched exactly as the gate matches them.
    pub targets: &'a [crate::plan::Target],
    /// The cumulative diff against the base, for a resumed attempt's prompt.
    pub changed: &'a [String],
    /// The latest coverage report, for stages after the gated one.
    pub coverage: Option<&'a Report>,
}

/// Renders the prompt: the built-in layout, or `template` with its `{{name}}` placeholders
/// filled from the same sections, so a custom prompt cannot lose the resume facts or the
/// evidence instructions unless it leaves their placeholders out on purpose.
pub fn render(input: &PromptInput, template: Option<&str>) -> String {
    let state = input.state;
    let stage = &state.stages()[input.stage];
    let previous: Option<&Attempt> = stage.attempts.iter().rev().find(|a| a.outcome.is_some());
    let title = format!(
        "# {} — stage `{}`\n\n",
        state.plan.title.as_deref().unwrap_or(&state.plan.id),
        stage.name
    );
    let mut resume = String::new();
    if let Some(prev) = previous {
        resume_section(&mut resume, input, prev);
    }
    let plan = format!("## The plan\n\n{}\n\n", input.plan_body.trim());
    let mut targets = String::new();
    targets_section(&mut targets, state);
    let mut coverage = String::new();
    if let Some(report) = input.coverage.filter(|_| !stage.gated) {
        coverage_section(&mut coverage, report);
    }
    let mut evidence = String::new();
    evidence_section(&mut evidence, state, input.targets, input.changed);
    match template {
        None => [title, resume, plan, targets, coverage, evidence].concat(),
        Some(template) => {
            let attempt = stage.next_attempt().to_string();
            let values = [
                ("title", title.as_str()),
                ("resume", resume.as_str()),
                ("plan", plan.as_str()),
                ("targets", targets.as_str()),
                ("coverage", coverage.as_str()),
                ("evidence", evidence.as_str()),
                ("run_id", state.run_id.as_str()),
                ("stage", stage.name.as_str()),
                ("attempt", attempt.as_str()),
            ];
            crate::template::fill(template, &values)
        }
    }
}

fn resume_section(out: &mut String, input: &PromptInput, prev: &Attempt) {
    let state = input.state;
    let outcome = prev
        .outcome
        .map(|o| o.name().to_string())
        .unwrap_or_default();
    let cause = prev
        .cause
        .map(|c| format!(" ({c:?})").to_lowercase())
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "## This is a resumed attempt — the work may be partly done\n\n\
         The previous attempt (#{}, actor `{}`, started {}) ended early: {outcome}{cause}. \
         Its changes are still in this worktree. Do not assume the work is finished because \
         some files were already edited: partial changes are not completion.\n",
        prev.n, prev.actor, prev.started_at
    );
    failed_checks_section(out, prev);
    if !prev.violations.is_empty() {
        let _ = writeln!(
            out,
            "It was failed for changing what no attempt may change, which this worktree still              holds; every attempt fails until it is undone:\n"
        );
        let mut said: Vec<&str> = prev.violations.iter().map(|v| v.message.as_str()).collect();
        said.dedup();
        for message in said {
            let _ = writeln!(out, "- {message}");
        }
        let _ = writeln!(out);
    }
    if input.changed.is_empty() {
        let _ = writeln!(out, "Nothing has changed against the base commit yet.\n");
    } else {
        let _ = writeln!(out, "Paths already changed against the base commit:\n");
        for path in input.changed {
            let _ = writeln!(out, "- `{path}`");
        }
        let _ = writeln!(out);
    }
    if !state.plan.targets.is_empty() {
        let untouched: Vec<&String> = state
            .plan
            .targets
            .iter()
            .filter(|t| {
                !input
                    .changed
                    .iter()
                    .any(|p| input.targets.iter().any(|x| &x.spec == *t && x.matches(p)))
            })
            .collect();
        if untouched.is_empty() {
            let _ = writeln!(
                out,
                "Every target has some change, but that does not mean each is done.\n"
            );
        } else {
            let _ = writeln!(out, "Targets with no change yet:\n");
            for t in untouched {
                let _ = writeln!(out, "- `{t}`");
            }
            let _ = writeln!(out);
        }
        let _ = writeln!(
            out,
            "Re-check every target against the plan. Finish what is missing. For each target you \
             leave unchanged, record the specific reason (below).\n"
        );
    } else {
        let _ = writeln!(
            out,
            "The plan declares no targets, so nothing can check the work mechanically: re-check \
             the whole plan from the start.\n"
        );
    }
}

/// The runner's checks the previous attempt did not pass, with the end of their output: what
/// git-baton itself found, whatever that attempt's agent reported.
fn failed_checks_section(out: &mut String, prev: &Attempt) {
    for check in prev.checks.iter().filter(|c| !c.passed()) {
        let how = crate::state::checks::failed_message(&crate::state::CheckResult {
            tail: String::new(),
            ..check.clone()
        });
        let _ = writeln!(
            out,
            "The {how} on the previous attempt's work. git-baton ran it itself, after that \
             attempt's agent had exited; whatever the agent reported, the work is not done until \
             this check passes. Its logs are `{}` and `{}` in the attempt's directory.\n",
            check.stdout_log, check.stderr_log
        );
        let tail = check.tail.trim_end();
        if !tail.is_empty() {
            let fence = "`".repeat(longest_backtick_run(tail).max(2) + 1);
            let _ = writeln!(
                out,
                "The end of its output:\n\n{fence}text\n{tail}\n{fence}\n"
            );
        }
    }
}

/// The longest run of backticks in `text`, so that a fence around it is longer.
fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

fn targets_section(out: &mut String, state: &RunState) {
    if state.plan.targets.is_empty() {
        let _ = writeln!(
            out,
            "## Targets\n\nThe plan declares no targets: nothing will check mechanically that the \
             work touched what it should.\n"
        );
        return;
    }
    let _ = writeln!(
        out,
        "## Targets\n\nThe work must change each of these paths, or say why it needs no change:\n"
    );
    for t in &state.plan.targets {
        let _ = writeln!(out, "- `{t}`");
    }
    let _ = writeln!(out);
}

fn coverage_section(out: &mut String, report: &Report) {
    let _ = writeln!(out, "## Coverage of the work so far\n");
    for t in &report.targets {
        match t.status {
            TargetStatus::Changed => {
                let more = match t.paths_omitted {
                    0 => String::new(),
                    n => format!(" and {n} more"),
                };
                let _ = writeln!(
                    out,
                    "- `{}`: changed ({}{more})",
                    t.target,
                    t.paths.join(", ")
                );
            }
            TargetStatus::Unchanged => {
                let _ = writeln!(
                    out,
                    "- `{}`: unchanged, because: {}",
                    t.target,
                    t.reason.as_deref().unwrap_or("")
                );
            }
            TargetStatus::Uncovered => {
                let _ = writeln!(out, "- `{}`: uncovered", t.target);
            }
            TargetStatus::Missing => {
                let _ = writeln!(out, "- `{}`: names no path in the repository", t.target);
            }
        }
    }
    let _ = writeln!(out);
}

fn evidence_section(
    out: &mut String,
    state: &RunState,
    targets: &[crate::plan::Target],
    changed: &[String],
) {
    // The example names a target that is still untouched, when there is one.
    let example = state
        .plan
        .targets
        .iter()
        .find(|t| {
            !changed
                .iter()
                .any(|p| targets.iter().any(|x| &x.spec == *t && x.matches(p)))
        })
        .or(state.plan.targets.first())
        .map(String::as_str)
        .unwrap_or("docs/example.md");
    let _ = writeln!(
        out,
        "## Recording targets that need no change\n\n\
         Targets you changed need no record: the diff shows them. For each target you leave \
         unchanged, give a specific reason (at least a few words that a reviewer can check; \
         \"n/a\", \"done\" or \"no change\" are rejected). Run, in this worktree:\n\n\
         ```sh\n\
         git baton unchanged {example} \"already states the new rule in section 3\"\n\
         ```\n\n\
         It refuses at once a target the plan does not have, a reason that is too vague, or a second \
         reason for one target. `git baton check` prints what the coverage gate will say when you \
         finish (it exits 1 while a target is uncovered): run it before you stop.\n\n\
         If you cannot run commands, write JSON to the file named by the environment variable \
         `BATON_EVIDENCE_FILE` instead. You may also report usage there.\n\n\
         ```json\n\
         {{\n  \"target_coverage\": [\n    {{\"target\": \"{example}\", \"status\": \"unchanged\", \"reason\": \"already states the new rule in section 3\"}}\n  ],\n  \
         \"usage\": {{\"input_tokens\": 0, \"output_tokens\": 0, \"cost_usd\": 0.0, \"model\": \"…\", \"provider\": \"…\"}}\n}}\n\
         ```"
    );
}
