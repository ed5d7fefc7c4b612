//! Renderers of a verification: text for people, JSON for scripts, GitHub workflow commands and
//! Markdown for CI. Each is a pure function from the result to a `String`; the caller decides
//! where it goes.

use std::fmt::Write;

use crate::coverage::{Report, TargetStatus};
use crate::report::status::short;
use crate::verify::{PlanResult, Verification};

pub mod diff;
pub mod list;
pub mod log;
pub mod review;
pub mod status;

/// GitHub shows at most 10 error annotations per step; the rest are dropped silently, so we stop
/// at the limit ourselves and say how many were left out.
pub const GITHUB_ANNOTATION_LIMIT: usize = 10;

fn range(v: &Verification) -> String {
    match &v.head {
        Some(head) => format!("{}...{head}", v.base),
        None => format!("the worktree against {}", v.base),
    }
}

fn summary_line(plan: &PlanResult) -> String {
    let r = &plan.coverage;
    let total = r.targets.len();
    let uncovered = r.uncovered().count();
    if !r.verified {
        let verdict = if r.passed { "unverified" } else { "failed" };
        return format!("{verdict}: the plan declares no targets, so nothing was checked");
    }
    let mut parts = Vec::new();
    let targets = if total == 1 { "target" } else { "targets" };
    if uncovered > 0 {
        parts.push(format!("{uncovered} of {total} {targets} uncovered"));
    } else if total == 1 {
        parts.push("1 target covered".into());
    } else {
        parts.push(format!("all {total} targets covered"));
    }
    if !r.problems.is_empty() {
        parts.push(format!("{} evidence problem(s)", r.problems.len()));
    }
    format!(
        "{}: {}",
        if r.passed { "passed" } else { "failed" },
        parts.join(", ")
    )
}

/// The human report.
pub fn text(v: &Verification) -> String {
    let mut out = String::new();
    if v.plans.is_empty() {
        let _ = writeln!(
            out,
            "no plans to verify: none was named, and none under {}/ changed in {}",
            v.plans_dir.as_deref().unwrap_or("plans"),
            range(v)
        );
        return out;
    }
    let _ = writeln!(
        out,
        "verifying {} (merge base {})",
        range(v),
        short(&v.merge_base)
    );
    for plan in &v.plans {
        let _ = writeln!(
            out,
            "\nplan {} ({}): {}",
            plan.path,
            plan.id,
            summary_line(plan)
        );
        target_rows(&mut out, plan);
        let r = &plan.coverage;
        for p in &r.problems {
            let _ = writeln!(out, "  problem    {}: {}", p.source, p.message);
        }
        for c in &r.contradictions {
            let _ = writeln!(
                out,
                "  note       {} says `{}` is unchanged, but the diff changed {}; the diff wins",
                c.source,
                c.target,
                c.paths.join(", ")
            );
        }
    }
    let failed = v.plans.iter().filter(|p| !p.coverage.passed).count();
    if failed == 0 {
        let _ = writeln!(out, "\ngate passed");
    } else {
        let _ = writeln!(
            out,
            "\ngate failed: {failed} of {} plan(s) not covered",
            v.plans.len()
        );
        if v.plans
            .iter()
            .any(|p| p.coverage.uncovered().next().is_some())
        {
            let _ = writeln!(
                out,
                "hint: change each uncovered target, or record why it needed no change:\n\
                 hint:   a commit trailer `Baton-Unchanged: <target>: <specific reason>`, or\n\
                 hint:   an `unchanged` entry with a reason in an --evidence file"
            );
        }
    }
    out
}

fn target_rows(out: &mut String, plan: &PlanResult) {
    let width = plan
        .coverage
        .targets
        .iter()
        .map(|t| t.target.chars().count())
        .max()
        .unwrap_or(0);
    for t in &plan.coverage.targets {
        let detail = match t.status {
            TargetStatus::Changed => t.paths.join(", "),
            TargetStatus::Unchanged => format!(
                "because: {}{}",
                t.reason.as_deref().unwrap_or(""),
                t.reason_source
                    .as_ref()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default()
            ),
            TargetStatus::Uncovered => {
                format!("no change and no reason ({}:{})", plan.path, t.line)
            }
        };
        let status = crate::report::status::word(t.status);
        let _ = writeln!(out, "  {status:<10} {:<width$}  {detail}", t.target);
    }
}

/// The machine report: the whole verification as JSON.
pub fn json(v: &Verification) -> String {
    let mut text = serde_json::to_string_pretty(v).expect("verification serializes");
    text.push('\n');
    text
}

/// Escapes data for a GitHub workflow command message.
fn gh_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a GitHub workflow command property (file, title).
fn gh_property(s: &str) -> String {
    gh_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// GitHub workflow commands: an `::error` per uncovered target or evidence problem, at the
/// target's line in the plan, up to the per-step limit, followed by the human report for the log.
pub fn github(v: &Verification) -> String {
    let mut annotations = Vec::new();
    for plan in &v.plans {
        let file = gh_property(&plan.path);
        let r = &plan.coverage;
        for t in r.uncovered() {
            annotations.push(format!(
                "::error file={file},line={},title={}::{}",
                t.line,
                gh_property(&format!("uncovered target {}", t.target)),
                gh_data(&format!(
                    "`{}` has no changed path in {} and no recorded reason why it needed no change",
                    t.target,
                    range(v)
                ))
            ));
        }
        for p in &r.problems {
            let line = r
                .targets
                .iter()
                .find(|t| t.target == p.target)
                .map_or(1, |t| t.line);
            annotations.push(format!(
                "::error file={file},line={line},title={}::{}",
                gh_property("invalid evidence"),
                gh_data(&format!("{}: {}", p.source, p.message))
            ));
        }
        if !r.verified {
            let kind = if r.passed { "warning" } else { "error" };
            annotations.push(format!(
                "::{kind} file={file},line=1::{}",
                gh_data("the plan declares no targets, so the coverage gate verified nothing")
            ));
        }
    }
    let mut out = String::new();
    let total = annotations.len();
    for a in annotations.iter().take(GITHUB_ANNOTATION_LIMIT) {
        let _ = writeln!(out, "{a}");
    }
    if total > GITHUB_ANNOTATION_LIMIT {
        let _ = writeln!(
            out,
            "::notice::{} more annotation(s) left out (GitHub shows {GITHUB_ANNOTATION_LIMIT} per step); see the job summary",
            total - GITHUB_ANNOTATION_LIMIT
        );
    }
    out.push_str(&text(v));
    out
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A Markdown report: one table per plan, for job summaries and pull-request comments.
pub fn markdown(v: &Verification) -> String {
    let mut out = String::new();
    let verdict = if v.passed { "passed" } else { "failed" };
    let _ = writeln!(out, "## git-baton coverage: {verdict}\n");
    let _ = writeln!(
        out,
        "Checked {} (merge base `{}`).\n",
        md_cell(&range(v)),
        short(&v.merge_base)
    );
    if v.plans.is_empty() {
        let _ = writeln!(
            out,
            "No plans to verify: none under `{}/` changed.",
            v.plans_dir.as_deref().unwrap_or("plans")
        );
        return out;
    }
    for plan in &v.plans {
        let r: &Report = &plan.coverage;
        let _ = writeln!(
            out,
            "### `{}` ({}): {}\n",
            md_cell(&plan.path),
            md_cell(&plan.id),
            summary_line(plan)
        );
        if r.verified {
            let _ = writeln!(out, "| target | status | paths or reason |\n|---|---|---|");
            for t in &r.targets {
                let detail = match t.status {
                    TargetStatus::Changed => t
                        .paths
                        .iter()
                        .map(|p| format!("`{}`", md_cell(p)))
                        .collect::<Vec<_>>()
                        .join(", "),
                    TargetStatus::Unchanged => md_cell(t.reason.as_deref().unwrap_or("")),
                    TargetStatus::Uncovered => "**no change and no reason**".into(),
                };
                let status = crate::report::status::word(t.status);
                let _ = writeln!(out, "| `{}` | {status} | {detail} |", md_cell(&t.target));
            }
            let _ = writeln!(out);
        }
        for p in &r.problems {
            let _ = writeln!(
                out,
                "- problem: {}: {}",
                md_cell(&p.source.to_string()),
                md_cell(&p.message)
            );
        }
        for c in &r.contradictions {
            let _ = writeln!(
                out,
                "- note: {} says `{}` is unchanged, but the diff changed it; the diff wins",
                md_cell(&c.source.to_string()),
                md_cell(&c.target)
            );
        }
        if !r.problems.is_empty() || !r.contradictions.is_empty() {
            let _ = writeln!(out);
        }
    }
    out
}
