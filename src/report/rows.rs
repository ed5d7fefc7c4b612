//! Rows that more than one view of a run or a verification renders the same way: the plan's
//! title after a heading, a list of paths, the table of targets (`status`, `review`, `check`
//! and the verification text each choose only what a target's detail says), and the evidence
//! problems under it.

use std::fmt::Write;

use super::{bound, escape, width};
use crate::coverage::{Problem, TargetReport};
use crate::state::RunState;

/// ` — title` for a run whose plan has a title, to follow the heading; empty otherwise.
pub fn title(state: &RunState) -> String {
    state
        .plan
        .title
        .as_deref()
        .map(|t| format!(" — {}", escape::line(t)))
        .unwrap_or_default()
}

/// Paths as one line: each escaped, the list cut to what fits ([`bound::joined`]).
pub fn paths(paths: &[String]) -> String {
    bound::joined(paths, |p| escape::line(p).into_owned())
}

/// The reason a target needed no change, and where it was given (` (commit abc1234 trailer)`).
pub fn reason(t: &TargetReport) -> String {
    format!(
        "{}{}",
        escape::line(t.reason.as_deref().unwrap_or("")),
        t.reason_source
            .as_ref()
            .map(|s| format!(" ({})", escape::line(&s.to_string())))
            .unwrap_or_default()
    )
}

/// One row per target — its status word, the target padded to the widest, and what `detail`
/// says of it — each line starting with `indent`.
pub fn targets(
    out: &mut String,
    targets: &[TargetReport],
    indent: &str,
    detail: impl Fn(&TargetReport) -> String,
) {
    let names: Vec<_> = targets.iter().map(|t| escape::line(&t.target)).collect();
    let cells = width::widest(names.iter().map(|t| t.as_ref()));
    for (t, name) in targets.iter().zip(&names) {
        let detail = detail(t);
        let status = width::status(&super::status::word(t.status), 10);
        let name = width::left(name, cells);
        let _ = writeln!(out, "{indent}{status} {name}  {detail}");
    }
}

/// One `problem` row per evidence problem, aligned with the target rows above it.
pub fn problems(out: &mut String, problems: &[Problem]) {
    for p in problems {
        let _ = writeln!(
            out,
            "  problem    {}: {}",
            escape::line(&p.source.to_string()),
            escape::line(&p.message)
        );
    }
}
