//! The human view of one run: what `git baton status` prints.
//!
//! It answers, at a glance: where is the run, what happened in each stage, what went wrong
//! last, what the gate said, and what to type next.

use std::fmt::Write;

use crate::coverage::TargetStatus;
use crate::report::{escape, rows, width};
use crate::state::store::Holder;
use crate::state::{RunState, RunStatus, Stage, StageStatus, TargetSource};

/// The serde name of a status or outcome (`rate_limited`, not `RateLimited`).
pub fn word<T: serde::Serialize>(value: T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// A run's status word, with `(stale)` when it says running but no live process drives it.
pub fn label(status: RunStatus, stale: bool) -> String {
    let word = word(status);
    if stale {
        format!("{word} (stale)")
    } else {
        word
    }
}

/// Milliseconds as `1m 05s`, `2.3s` or `45ms`.
pub fn duration(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms}ms"),
        1_000..60_000 => format!("{:.1}s", ms as f64 / 1000.0),
        _ => {
            let s = ms / 1000;
            if s >= 3600 {
                format!("{}h {:02}m", s / 3600, (s % 3600) / 60)
            } else {
                format!("{}m {:02}s", s / 60, s % 60)
            }
        }
    }
}

fn elapsed_ms(since: jiff::Timestamp, now: jiff::Timestamp) -> Option<u64> {
    u64::try_from(now.duration_since(since).as_millis()).ok()
}

/// Where a published run stands: the remote and how this clone's record compares (`sync`),
/// who holds its lease until when, and the takeovers it saw; empty for a run never published.
/// `in_force` says whether the run's lease is in force by the rule of takeovers
/// (`Store::lease_in_force`): one that ends further out than any lease could is not.
pub fn publication(
    state: &RunState,
    remote: Option<(&str, &str)>,
    now: jiff::Timestamp,
    in_force: bool,
) -> String {
    let mut out = String::new();
    if let Some((remote, sync)) = remote {
        let _ = writeln!(out, "  remote    {} ({sync})", escape::line(remote));
    }
    if let Some(lease) = state.lease() {
        let held = match (in_force, lease.until > now) {
            (true, _) => "leased",
            (false, true) => "lease not in force (longer than any lease this clone grants)",
            (false, false) => "lease expired",
        };
        let _ = writeln!(
            out,
            "  {held} by {} on {} until {}",
            escape::line(&lease.holder),
            escape::line(&lease.host),
            lease.until
        );
    }
    for takeover in state.takeovers() {
        let _ = writeln!(
            out,
            "  taken over at {} by {} on {}: the lease of {} on {} had expired at {}",
            takeover.at,
            escape::line(&takeover.holder),
            escape::line(&takeover.host),
            escape::line(&takeover.from_holder),
            escape::line(&takeover.from_host),
            takeover.expired_at
        );
    }
    out
}

pub fn render(
    state: &RunState,
    stale: bool,
    holder: Option<&Holder>,
    now: jiff::Timestamp,
) -> String {
    let mut out = String::new();
    heading(&mut out, state, stale, holder);
    cycle_lines(&mut out, state);
    current_line(&mut out, state, stale, now);
    stage_table(&mut out, state);
    usage_total(&mut out, state);
    last_error(&mut out, state);
    if state.plan.targets.is_empty() {
        let _ = writeln!(out, "\n  coverage: not verified — {}", no_targets(state));
    } else if let Some(report) = state.coverage() {
        let verdict = if report.passed { "passed" } else { "failed" };
        let _ = writeln!(out, "\n  coverage: {verdict}{}", derived_note(state));
        target_rows(&mut out, report, "    ");
    }
    if !state.checks().is_empty() {
        let _ = writeln!(out, "\n  checks: {}", checks_verdict(state));
        checks_lines(&mut out, state, "    ");
    }
    let _ = writeln!(out, "\n  next: {}", next_command(state, stale));
    out
}

/// The run and its status, its plan, where the work is, and the process driving it.
fn heading(out: &mut String, state: &RunState, stale: bool, holder: Option<&Holder>) {
    let mut status = word(state.status());
    if stale {
        status.push_str(" (stale: no process is driving it; it crashed or was killed)");
    }
    let _ = writeln!(out, "run {}: {status}", state.run_id);
    let _ = writeln!(
        out,
        "  plan      {} ({}){}",
        escape::line(&state.plan.path),
        state.plan.id,
        rows::title(state)
    );
    where_lines(out, state);
    if let Some(h) = holder {
        let _ = writeln!(
            out,
            "  driven by pid {} on {} since {} (`{}`)",
            h.pid, h.host, h.since, h.command
        );
    }
}

/// The current stage, with how long its attempt has been running when one is (and the run is
/// not stale).
fn current_line(out: &mut String, state: &RunState, stale: bool, now: jiff::Timestamp) {
    let Some(stage) = state.current_stage() else {
        return;
    };
    let running = state
        .stages()
        .iter()
        .find(|s| s.name == stage && s.status() == StageStatus::Running)
        .and_then(|s| s.attempts.last());
    match running {
        Some(a) if !stale => {
            let elapsed = elapsed_ms(a.started_at, now)
                .map(duration)
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  current   {stage} (attempt {}, running for {elapsed})",
                a.n
            );
        }
        _ => {
            let _ = writeln!(out, "  current   {stage}");
        }
    }
}

/// The table of stages: one row each, then what its attempts add to it.
fn stage_table(out: &mut String, state: &RunState) {
    let _ = writeln!(
        out,
        "\n  {:<10} {:<12} {:<10} {:>8} {:>10} {:>12} {:>9}",
        "STAGE", "STATUS", "ACTOR", "ATTEMPTS", "DURATION", "TOKENS", "COST"
    );
    for s in state.stages() {
        stage_row(out, s);
        attempt_lines(out, s);
    }
}

/// A stage's row: its status, actor, attempts, and the time, tokens and cost they reported.
fn stage_row(out: &mut String, s: &Stage) {
    let measured: Vec<u64> = s.attempts.iter().filter_map(|a| a.duration_ms).collect();
    let dur = if measured.is_empty() {
        "-".into()
    } else {
        duration(measured.iter().sum())
    };
    let usages = s.attempts.iter().filter_map(|a| a.usage.as_ref());
    let (tokens, reported) = usages.clone().fold((0u64, 0), |acc, u| {
        (
            acc.0 + u.input_tokens.unwrap_or(0) + u.output_tokens.unwrap_or(0),
            acc.1 + 1,
        )
    });
    // Codex and Gemini CLI report tokens but no cost: no cost is shown as none, not $0.00.
    let costs: Vec<f64> = usages.filter_map(|u| u.cost_usd).collect();
    let tokens = if reported == 0 {
        "-".into()
    } else {
        tokens.to_string()
    };
    let cost = if costs.is_empty() {
        "-".into()
    } else {
        format!("${:.2}", costs.iter().sum::<f64>())
    };
    let _ = writeln!(
        out,
        "  {} {} {} {:>8} {dur:>10} {tokens:>12} {cost:>9}",
        width::left(&s.name, 10),
        width::status(&word(s.status()), 12),
        width::left(s.actor(), 10),
        s.attempts.len(),
    );
}

/// Under a stage's row: each attempt and how it ended (when there are several), then what the
/// hook, the snapshot and the agent's output said of each.
fn attempt_lines(out: &mut String, s: &Stage) {
    for a in s.attempts.iter().filter(|_| s.attempts.len() > 1) {
        let outcome = a.outcome.map(word).unwrap_or_else(|| "running".into());
        let cause = a
            .cause
            .map(|c| format!(" ({})", word(c)))
            .unwrap_or_default();
        let resumed = if a.resumed() { ", resumed" } else { "" };
        let fallback = a
            .fallback_from
            .as_ref()
            .map(|f| format!(", fallback from #{}", f.attempt))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    #{} {} {outcome}{cause}{resumed}{fallback}",
            a.n,
            escape::line(&a.actor)
        );
    }
    // The gate inside the agent's loop: how often the Stop hook sent the agent back to work.
    for a in &s.attempts {
        if let Some(blocks) = a.hook_blocks {
            let _ = writeln!(
                out,
                "    #{} the Stop hook kept the agent working {blocks} time(s)",
                a.n
            );
        }
    }
    // What the snapshot left out is only in the worktree the attempt ran in.
    for a in &s.attempts {
        for left in &a.unrecorded {
            let _ = writeln!(
                out,
                "    #{} not recorded: {} ({})",
                a.n,
                escape::line(&left.path),
                escape::line(&left.reason)
            );
        }
    }
    // What the agent's output said beyond the outcome: when its limit lifts, or that it
    // could not be read.
    for a in &s.attempts {
        let Some(agent) = &a.agent else { continue };
        if let Some(reset) = &agent.rate_limit_reset {
            let at = reset.at.map(|t| format!(", at {t}")).unwrap_or_default();
            let _ = writeln!(
                out,
                "    #{} rate limit resets {}{at}",
                a.n,
                escape::line(&reset.text)
            );
        }
        if let Some(reason) = &agent.unparsed {
            let _ = writeln!(
                out,
                "    #{} output not read as {}: {}",
                a.n,
                agent.format.name(),
                escape::line(reason)
            );
        }
    }
}

/// The run's tokens and cost as the actors reported them, with what the total may leave out;
/// nothing when none was reported.
fn usage_total(out: &mut String, state: &RunState) {
    let t = &state.usage();
    let reported = t.input_tokens + t.output_tokens > 0 || t.cost_usd > 0.0;
    if !reported {
        return;
    }
    let mut notes = Vec::new();
    if t.attempts_without_usage > 0 {
        notes.push(format!(
            "{} attempt(s) reported no usage",
            t.attempts_without_usage
        ));
    }
    if t.attempts_cut > 0 {
        notes.push(format!(
            "{} attempt(s) had output cut by log_limit",
            t.attempts_cut
        ));
    }
    if t.attempts_without_cost > 0 {
        notes.push(format!(
            "{} attempt(s) reported no cost",
            t.attempts_without_cost
        ));
    }
    let lower = if notes.is_empty() {
        String::new()
    } else {
        format!(" (at least: {})", notes.join("; "))
    };
    let cache = if t.cache_read_input_tokens + t.cache_creation_input_tokens > 0 {
        format!(
            " (+ {} cache-read, {} cache-write)",
            t.cache_read_input_tokens, t.cache_creation_input_tokens
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  total as the actors reported it: {} input{cache} + {} output tokens, ${:.2}{lower}",
        t.input_tokens, t.output_tokens, t.cost_usd
    );
}

/// The run's last error, with the stage it stopped.
fn last_error(out: &mut String, state: &RunState) {
    if let Some(err) = &state.error() {
        let _ = writeln!(
            out,
            "\n  last error: {} in stage {}",
            word(&err.kind),
            err.stage
        );
        for line in err.message.lines() {
            let _ = writeln!(out, "    {}", escape::line(line));
        }
    }
}

/// What `cycle` may do with the run: held by a person (since when, why, and how to end it), how
/// often `cycle` resumed it, whether `cycle` itself stopped it; nothing while there is nothing
/// to say.
fn cycle_lines(out: &mut String, state: &RunState) {
    let cycle = state.cycle();
    let id = &state.run_id;
    if let Some(held) = &cycle.held {
        let why = held
            .reason
            .as_deref()
            .map(|r| format!(": {}", escape::line(r)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  held      since {}{why}; cycle leaves it alone until `git baton release {id}`",
            held.at
        );
    }
    if cycle.resumes > 0 {
        let _ = writeln!(
            out,
            "  cycle     resumed it {} time(s) since a stage last succeeded",
            cycle.resumes
        );
    }
    if let Some(at) = cycle.stopped {
        let _ = writeln!(
            out,
            "  cycle     stopped it at {at}, when the cycle itself was stopped; the next cycle resumes it"
        );
    }
}

/// `passed`, or `failed`, with the attempt whose checks they are.
pub fn checks_verdict(state: &RunState) -> String {
    let Some((stage, attempt)) = checked_attempt(state) else {
        return "none ran".into();
    };
    let verdict = match crate::state::checks::first_failed(&attempt.checks) {
        None => "passed",
        Some(_) => "failed",
    };
    format!(
        "{verdict} (run by git-baton on attempt {} of stage {stage})",
        attempt.n
    )
}

/// The latest attempt that ran the runner's checks, with its stage's name.
fn checked_attempt(state: &RunState) -> Option<(&str, &crate::state::Attempt)> {
    state
        .stages()
        .iter()
        .flat_map(|s| s.attempts.iter().map(move |a| (s.name.as_str(), a)))
        .filter(|(_, a)| !a.checks.is_empty())
        .max_by_key(|(_, a)| a.started_at)
}

/// The lines of the runner's checks of the latest attempt that ran them: each with its outcome,
/// how it ended and its stdout log (relative to the run directory); a check that did not pass
/// with the last lines of its output.
pub fn checks_lines(out: &mut String, state: &RunState, indent: &str) {
    const SHOWN_LINES: usize = 5;
    let Some((_, attempt)) = checked_attempt(state) else {
        return;
    };
    let checks = &attempt.checks;
    let cells = width::widest(checks.iter().map(|c| c.name.as_str()));
    for check in checks {
        let how = match (check.exit_code, check.signal, check.outcome) {
            (_, _, crate::state::CheckOutcome::TimedOut) => "timed out".to_string(),
            (Some(code), _, _) => format!("exit code {code}"),
            (None, Some(signal), _) => format!("signal {signal}"),
            (None, None, _) => check
                .error
                .as_deref()
                .map(|e| escape::line(e).into_owned())
                .unwrap_or_else(|| "-".into()),
        };
        let name = width::left(&check.name, cells);
        let outcome = width::status(check.outcome.name(), 10);
        if check.outcome == crate::state::CheckOutcome::Error {
            // It never ran: no duration, no log.
            let _ = writeln!(out, "{indent}{outcome} {name}  {how}");
            continue;
        }
        let _ = writeln!(
            out,
            "{indent}{outcome} {name}  {how}, {}  {}/{}",
            duration(check.duration_ms),
            escape::line(&attempt.dir),
            escape::line(&check.stdout_log),
        );
        if check.passed() {
            continue;
        }
        let lines: Vec<&str> = check.tail.lines().collect();
        for line in &lines[lines.len().saturating_sub(SHOWN_LINES)..] {
            let _ = writeln!(out, "{indent}  | {}", escape::line(line));
        }
    }
}

/// The base, branch and worktree lines that `status` and `review` both begin with.
pub fn where_lines(out: &mut String, state: &RunState) {
    let _ = writeln!(
        out,
        "  base      {} ({})",
        state.base.short(),
        state.base_rev
    );
    let _ = writeln!(out, "  branch    {}", state.branch);
    let _ = writeln!(out, "  worktree  {}", state.worktree);
}

pub use crate::git::short_hex as short;

/// The command a newcomer should type next.
pub fn next_command(state: &RunState, stale: bool) -> String {
    let id = &state.run_id;
    match state.status() {
        RunStatus::Running | RunStatus::Pending if stale => {
            format!("git baton resume {id}   (records the crash, then re-runs the stage)")
        }
        RunStatus::Running | RunStatus::Pending => {
            format!("wait, or `git baton stop {id}`; follow it with `git baton log {id}`")
        }
        RunStatus::Queued if state.cycle().held.is_some() => format!(
            "git baton release {id}   (held: cycle does not start it), or `git baton resume {id}` \
             to start it now"
        ),
        RunStatus::Queued => {
            format!(
                "git baton cycle   (starts the queue), or `git baton resume {id}` to start it now"
            )
        }
        RunStatus::Review => format!(
            "git baton review {id}, then `git baton finish {id}` and merge branch {}",
            state.branch
        ),
        RunStatus::Finished => format!(
            "merge branch {}; `git baton clean {id}` removes the run",
            state.branch
        ),
        RunStatus::Blocked => {
            let last = state
                .stages()
                .iter()
                .flat_map(|s| &s.attempts)
                .max_by_key(|a| a.started_at);
            let check = last.and_then(|a| crate::state::checks::first_failed(&a.checks));
            let uncovered = last
                .and_then(|a| a.coverage.as_ref())
                .is_some_and(|r| !r.passed);
            let must = match (check, uncovered) {
                (Some(c), false) => format!("its work must pass runner check `{}`", c.name),
                (Some(c), true) => format!(
                    "it must change or give a reason for every uncovered target, and pass runner check `{}`",
                    c.name
                ),
                (None, _) => "it must change or give a reason for every uncovered target".into(),
            };
            format!("git baton resume {id}   (the stage re-runs; {must})")
        }
        RunStatus::Paused | RunStatus::Interrupted | RunStatus::RateLimited | RunStatus::Failed => {
            format!(
                "git baton resume {id}   (optionally --actor STAGE=NAME); see `git baton log {id}`"
            )
        }
    }
}

/// Why a run without targets checks nothing, as the end of a sentence.
#[must_use]
pub fn no_targets(state: &RunState) -> &'static str {
    match state.plan.targets_source {
        TargetSource::Declared => "the plan declares no targets",
        TargetSource::Derived => {
            "the plan declares no targets and its body names no path of the base (derive_targets: body)"
        }
    }
}

/// ` (targets derived from the plan's body)` for a run gated on derived targets.
#[must_use]
pub fn derived_note(state: &RunState) -> &'static str {
    match state.plan.targets_source {
        TargetSource::Declared => "",
        TargetSource::Derived => " (targets derived from the plan's body)",
    }
}

/// One row per target of `report` — its status word, the target padded to the widest, and its
/// paths or reason — each line starting with `indent`: what `status` and `check` show.
pub fn target_rows(out: &mut String, report: &crate::coverage::Report, indent: &str) {
    rows::targets(out, &report.targets, indent, |t| match t.status {
        TargetStatus::Changed => rows::paths(&t.paths),
        TargetStatus::Unchanged => format!(
            "because: {}",
            escape::line(t.reason.as_deref().unwrap_or(""))
        ),
        TargetStatus::Uncovered => "no change and no reason".into(),
        TargetStatus::Missing => {
            format!("names no path{}", crate::report::gate::did_you_mean(t))
        }
        TargetStatus::Touched => format!(
            "{}: {}",
            crate::report::gate::TOUCHED_DETAIL,
            rows::paths(&t.paths)
        ),
    });
}
