//! The verification for people (text) and for scripts (JSON), and the wording both CI formats
//! share with the text: the range, a plan's one-line verdict, the names of plan changes.
//!
//! Every string a plan, a diff, evidence or a commit supplied goes through [`escape::line`]
//! here; JSON needs no escaping beyond serde's, and is exact.

use std::fmt::Write;

use super::{bound, escape};
use crate::coverage::TargetStatus;
use crate::report::status::short;
use crate::verify::{PlanChangeKind, PlanResult, Verification};

pub(super) fn range(v: &Verification) -> String {
    match &v.head {
        Some(head) => format!("{}...{head}", v.base),
        None => format!("the worktree against {}", v.base),
    }
}

pub(super) fn summary_line(plan: &PlanResult) -> String {
    let r = &plan.coverage;
    let total = r.targets.len();
    let uncovered = r.uncovered().count();
    let missing = r.missing().count();
    let touched = r.touched().count();
    let derived = plan.targets_source == crate::state::TargetSource::Derived;
    if !r.verified {
        let verdict = if r.passed { "unverified" } else { "failed" };
        let why = if derived {
            "the plan declares no targets and its body names no path of the merge base"
        } else {
            "the plan declares no targets"
        };
        return format!("{verdict}: {why}, so nothing was checked");
    }
    let mut parts = Vec::new();
    let targets = if total == 1 { "target" } else { "targets" };
    if uncovered > 0 {
        parts.push(format!("{uncovered} of {total} {targets} uncovered"));
    }
    if missing > 0 {
        parts.push(format!("{missing} of {total} {targets} missing"));
    }
    if touched > 0 {
        parts.push(format!(
            "{touched} of {total} {targets} touched only in whitespace or mode"
        ));
    }
    if uncovered > 0 || missing > 0 || touched > 0 {
    } else if total == 1 {
        parts.push("1 target covered".into());
    } else {
        parts.push(format!("all {total} targets covered"));
    }
    if !r.problems.is_empty() {
        parts.push(format!("{} evidence problem(s)", r.problems.len()));
    }
    format!(
        "{}: {}{}",
        if r.passed { "passed" } else { "failed" },
        parts.join(", "),
        if derived {
            " (targets derived from the plan's body)"
        } else {
            ""
        }
    )
}

/// How a plan change is named in every format.
pub(super) fn change_word(kind: PlanChangeKind) -> &'static str {
    match kind {
        PlanChangeKind::TargetRemoved => "target removed",
        PlanChangeKind::Deleted => "deleted",
        PlanChangeKind::Moved => "moved",
        PlanChangeKind::Undiscoverable => "undiscoverable",
    }
}

/// What `--allow-plan-changes` did, or what not giving it means, as the heading of the changes.
pub(super) fn changes_heading(v: &Verification) -> &'static str {
    if v.allow_plan_changes {
        "plan changes (allowed by --allow-plan-changes: the plans were checked as the head has them)"
    } else {
        "plan changes (each fails the gate: the plans at the merge base are the gate)"
    }
}

/// The note for the merge commits whose trailers gave no reasons.
pub(super) fn ignored_trailers_note(commit: &str, count: usize) -> String {
    format!(
        "merge commit {} has {count} Baton-Unchanged trailer(s), ignored: only ordinary commits \
         give reasons",
        short(commit)
    )
}

/// Why no plan was checked, as the end of a sentence.
pub(super) fn why_no_plans(v: &Verification) -> String {
    format!(
        "none was named, none under {}/ changed in {}, and no commit there names one in a \
         Baton-Plan trailer",
        v.plans_dir.as_deref().unwrap_or("plans"),
        range(v)
    )
}

/// `--require-plans` was given and nothing was checked.
pub(super) fn nothing_checked(v: &Verification) -> bool {
    v.require_plans && v.plans.is_empty()
}

pub(super) const REQUIRE_PLANS_HINT: &str = "run the work with `git baton run <plan>` and `git \
     baton finish`, whose commit names the plan in a Baton-Plan trailer; or name the plan to \
     check: `git baton verify <plan> ...`";

/// The commits that name a plan, for the line under it.
pub(super) fn named_by(plan: &PlanResult) -> Vec<String> {
    plan.named_by
        .iter()
        .map(|n| {
            let runs = if n.runs.is_empty() {
                String::new()
            } else {
                format!(" (run {})", n.runs.join(", run "))
            };
            format!("commit {}{runs}", short(&n.commit))
        })
        .collect()
}

/// The human report: at most [`bound::MAX_TEXT_BYTES`] before its verdict, which is always
/// printed whole.
pub fn text(v: &Verification) -> String {
    let (body, verdict) = text_parts(v);
    let mut out = bound::cap(body, bound::MAX_TEXT_BYTES, |lines, bytes| {
        format!(
            "… {lines} more line(s) ({}) left out: the report is cut at {}; `--format json` \
             prints the whole verification",
            crate::report::review::size(bytes as u64),
            crate::report::review::size(bound::MAX_TEXT_BYTES as u64)
        )
    });
    out.push_str(&verdict);
    out
}

/// The report before its verdict, and the verdict.
fn text_parts(v: &Verification) -> (String, String) {
    let mut out = String::new();
    if v.plans.is_empty() && v.plan_changes.is_empty() {
        if nothing_checked(v) {
            let _ = writeln!(
                out,
                "error: no plan was checked and --require-plans was given: {}",
                escape::line(&why_no_plans(v))
            );
            let _ = writeln!(out, "hint: {REQUIRE_PLANS_HINT}");
        } else {
            let _ = writeln!(
                out,
                "no plans to verify: {}",
                escape::line(&why_no_plans(v))
            );
        }
        notes(&mut out, v);
        return (out, String::new());
    }
    let _ = writeln!(
        out,
        "verifying {} (merge base {})",
        escape::line(&range(v)),
        short(&v.merge_base)
    );
    notes(&mut out, v);
    if !v.plan_changes.is_empty() {
        let _ = writeln!(out, "\n{}:", changes_heading(v));
        let width = v
            .plan_changes
            .iter()
            .map(|c| change_word(c.kind).len())
            .max()
            .unwrap_or(0);
        for c in &v.plan_changes {
            let _ = writeln!(
                out,
                "  {:<width$}  {}: {}",
                change_word(c.kind),
                escape::line(&c.plan),
                escape::line(&c.message)
            );
        }
    }
    for plan in &v.plans {
        let deleted = if plan.deleted {
            ", deleted by the range: its targets at the merge base"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "\nplan {} ({}{deleted}): {}",
            escape::line(&plan.path),
            escape::line(&plan.id),
            summary_line(plan)
        );
        for by in named_by(plan) {
            let _ = writeln!(out, "  named by   {}", escape::line(&by));
        }
        target_rows(&mut out, plan);
        let r = &plan.coverage;
        super::rows::problems(&mut out, &r.problems);
        for c in &r.contradictions {
            let _ = writeln!(
                out,
                "  note       {} says `{}` is unchanged, but the diff changed {}; the diff wins",
                escape::line(&c.source.to_string()),
                escape::line(&c.target),
                super::rows::paths(&c.paths)
            );
        }
    }
    let mut tail = String::new();
    verdict(&mut tail, v);
    (out, tail)
}

fn notes(out: &mut String, v: &Verification) {
    for plan in &v.plans {
        for named in &plan.untargeted {
            let _ = writeln!(out, "warning: {}", untargeted_warning(&plan.path, named));
        }
    }
    for t in &v.ignored_trailers {
        let _ = writeln!(out, "note: {}", ignored_trailers_note(&t.commit, t.count));
    }
    for note in &v.notes {
        let _ = writeln!(out, "note: {}", escape::line(note));
    }
    if v.allow_plan_changes && v.plan_changes.is_empty() {
        let _ = writeln!(
            out,
            "note: --allow-plan-changes was given; the range changes no plan that gates it"
        );
    }
}

fn verdict(out: &mut String, v: &Verification) {
    let failed = v.plans.iter().filter(|p| !p.passed()).count();
    let refused = v.plan_changes.iter().filter(|c| !c.allowed).count();
    if nothing_checked(v) {
        let _ = writeln!(
            out,
            "\nerror: no plan was checked and --require-plans was given\nhint: {REQUIRE_PLANS_HINT}"
        );
        return;
    }
    if failed == 0 && refused == 0 {
        let _ = writeln!(out, "\ngate passed");
        return;
    }
    let mut parts = Vec::new();
    if failed > 0 {
        parts.push(format!("{failed} of {} plan(s) not covered", v.plans.len()));
    }
    if refused > 0 {
        parts.push(format!("{refused} plan change(s) not allowed"));
    }
    let _ = writeln!(out, "\ngate failed: {}", parts.join(", "));
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
    if v.plans
        .iter()
        .any(|p| p.coverage.missing().next().is_some())
    {
        let _ = writeln!(
            out,
            "hint: a missing target names no path at the merge base, the head or in the worktree:\n\
             hint: correct it in the plan, or create the path it names"
        );
    }
    if v.plans
        .iter()
        .any(|p| p.coverage.touched().next().is_some())
    {
        let _ = writeln!(out, "{TOUCHED_HINT}");
    }
    if refused > 0 {
        let _ = writeln!(
            out,
            "hint: restore the plans as the merge base has them, or change them on the base branch\n\
             hint: first; where the change is the point of the pull request, rerun with\n\
             hint: --allow-plan-changes (the changes are then reported, not failed)"
        );
    }
}

fn target_rows(out: &mut String, plan: &PlanResult) {
    super::rows::targets(out, &plan.coverage.targets, "  ", |t| match t.status {
        TargetStatus::Changed => super::rows::paths(&t.paths),
        TargetStatus::Unchanged => format!("because: {}", super::rows::reason(t)),
        TargetStatus::Uncovered => {
            format!(
                "no change and no reason ({}:{})",
                escape::line(&plan.path),
                t.line
            )
        }
        TargetStatus::Missing => format!(
            "names no path ({}:{}){}",
            escape::line(&plan.path),
            t.line,
            did_you_mean(t)
        ),
        TargetStatus::Touched => format!(
            "{} ({}:{}): {}",
            TOUCHED_DETAIL,
            escape::line(&plan.path),
            t.line,
            super::rows::paths(&t.paths)
        ),
    });
}

/// The hint under a verdict with a touched target.
pub(super) const TOUCHED_HINT: &str = "hint: a touched target changed only in whitespace, line endings or file mode, which \
     does not count:\n\
     hint: make the change the plan asks for, record why it needed none, or write `trivial: \
     counts` in the plan\n\
     hint: (for the plan, or for the target: `{path: <target>, trivial: counts}`) when such a \
     change is the work";

/// What every human format says of a touched target, before its paths.
pub(super) const TOUCHED_DETAIL: &str = "only whitespace, line endings or mode changed";

/// `; did you mean `x`?` for a missing target with a suggestion, escaped; else nothing.
pub(super) fn did_you_mean(t: &crate::coverage::TargetReport) -> String {
    t.suggestion
        .as_deref()
        .map(|s| format!("; did you mean `{}`?", escape::line(s)))
        .unwrap_or_default()
}

/// The version of `verify --json`'s layout: raised when a field changes meaning or goes away
/// (adding one does not), so that scripts can refuse a layout they do not know.
pub const VERIFY_SCHEMA_VERSION: u32 = 1;

/// `verify --json` as printed: its schema version, then the verification.
#[derive(serde::Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(title = "git-baton verify --json"))]
pub struct VerifyJson<'a> {
    pub schema_version: u32,
    #[serde(flatten)]
    pub verification: &'a Verification,
}

/// The machine report: the whole verification as JSON.
pub fn json(v: &Verification) -> String {
    let document = VerifyJson {
        schema_version: VERIFY_SCHEMA_VERSION,
        verification: v,
    };
    let mut text = serde_json::to_string_pretty(&document).expect("verification serializes");
    text.push('\n');
    text
}

/// `PLAN:LINE:COL: the body names `PATH`, which no target covers`, in every format.
pub(super) fn untargeted_warning(plan: &str, named: &crate::verify::targets::Named) -> String {
    format!(
        "{}:{}:{}: the body names `{}`, which no target covers",
        escape::line(plan),
        named.line,
        named.column,
        escape::line(&named.target)
    )
}
