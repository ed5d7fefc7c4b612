//! The verification as Markdown, for job summaries and pull-request comments.
//!
//! Untrusted strings stay in the cell or the line they are put in, and stay text: after
//! [`escape::line`] (no line break survives it), [`text`] escapes the backslash first and then
//! every character that would start formatting, a link, a code span or HTML — `|` included, so
//! a GitHub table splits a row at no pipe of ours — and `<`, `>`, `&` become entities.
//! [`code`] shows a path in a code span, where nothing is interpreted, unless it holds a
//! backtick, a backslash or a pipe; it is then [`text`] in `<code>`.

use std::fmt::Write;

use super::gate::{
    REQUIRE_PLANS_HINT, change_word, changes_heading, ignored_trailers_note, named_by,
    nothing_checked, range, summary_line, why_no_plans,
};
use super::{bound, escape};
use crate::coverage::{Report, TargetStatus};
use crate::report::review::size;
use crate::report::status::short;
use crate::verify::Verification;

/// Untrusted text as literal Markdown text, on one line.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in escape::line(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Untrusted text (a path, a target) as inline code.
pub fn code(s: &str) -> String {
    let line = escape::line(s);
    if line.contains(['`', '\\', '|']) {
        format!("<code>{}</code>", text(&line))
    } else {
        format!("`{line}`")
    }
}

/// A Markdown report: one table per plan, for job summaries and pull-request comments; at most
/// [`bound::MAX_MARKDOWN_BYTES`], whatever the plans and the diff hold.
pub fn markdown(v: &Verification) -> String {
    bound::cap(report(v), bound::MAX_MARKDOWN_BYTES, |lines, bytes| {
        format!(
            "\n_… {lines} more line(s) ({}) left out: this summary is cut at {}; `--format \
             json` prints the whole verification._",
            size(bytes as u64),
            size(bound::MAX_MARKDOWN_BYTES as u64)
        )
    })
}

fn report(v: &Verification) -> String {
    let mut out = String::new();
    let verdict = if v.passed { "passed" } else { "failed" };
    let _ = writeln!(out, "## git-baton coverage: {verdict}\n");
    let _ = writeln!(
        out,
        "Checked {} (merge base `{}`).\n",
        text(&range(v)),
        short(&v.merge_base)
    );
    notes(&mut out, v);
    if nothing_checked(v) {
        let _ = writeln!(
            out,
            "**No plan was checked, and `--require-plans` was given**: {}. {}\n",
            text(&why_no_plans(v)),
            text(REQUIRE_PLANS_HINT)
        );
    }
    if v.plans.is_empty() && v.plan_changes.is_empty() {
        if !nothing_checked(v) {
            let _ = writeln!(out, "No plans to verify: {}.", text(&why_no_plans(v)));
        }
        return out;
    }
    changes(&mut out, v);
    for plan in &v.plans {
        let r: &Report = &plan.coverage;
        let deleted = if plan.deleted {
            ", deleted by the range: its targets at the merge base"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "### {} ({}{deleted}): {}\n",
            code(&plan.path),
            text(&plan.id),
            summary_line(plan)
        );
        let by = named_by(plan);
        if !by.is_empty() {
            let _ = writeln!(out, "Named by {}.\n", text(&by.join(", ")));
        }
        if r.verified {
            let _ = writeln!(out, "| target | status | paths or reason |\n|---|---|---|");
            for t in &r.targets {
                let detail = match t.status {
                    TargetStatus::Changed => bound::joined(&t.paths, code),
                    TargetStatus::Unchanged => text(t.reason.as_deref().unwrap_or("")),
                    TargetStatus::Uncovered => "**no change and no reason**".into(),
                    TargetStatus::Missing => format!(
                        "**names no path**{}",
                        t.suggestion
                            .as_deref()
                            .map(|s| format!("; did you mean {}?", code(s)))
                            .unwrap_or_default()
                    ),
                    TargetStatus::Touched => format!(
                        "**{}**: {}",
                        super::gate::TOUCHED_DETAIL,
                        bound::joined(&t.paths, code)
                    ),
                };
                let status = crate::report::status::word(t.status);
                let _ = writeln!(out, "| {} | {status} | {detail} |", code(&t.target));
            }
            let _ = writeln!(out);
        }
        for p in &r.problems {
            let _ = writeln!(
                out,
                "- problem: {}: {}",
                text(&p.source.to_string()),
                text(&p.message)
            );
        }
        for c in &r.contradictions {
            let _ = writeln!(
                out,
                "- note: {} says {} is unchanged, but the diff changed it; the diff wins",
                text(&c.source.to_string()),
                code(&c.target)
            );
        }
        if !r.problems.is_empty() || !r.contradictions.is_empty() {
            let _ = writeln!(out);
        }
    }
    out
}

fn notes(out: &mut String, v: &Verification) {
    let mut any = false;
    for plan in &v.plans {
        for named in &plan.untargeted {
            let _ = writeln!(
                out,
                "- **warning**: {}:{}: the body names {}, which no target covers",
                code(&plan.path),
                named.line,
                code(&named.target)
            );
            any = true;
        }
    }
    for t in &v.ignored_trailers {
        let _ = writeln!(out, "- note: {}", ignored_trailers_note(&t.commit, t.count));
        any = true;
    }
    for note in &v.notes {
        let _ = writeln!(out, "- note: {}", text(note));
        any = true;
    }
    if v.allow_plan_changes && v.plan_changes.is_empty() {
        let _ = writeln!(
            out,
            "- note: `--allow-plan-changes` was given; the range changes no plan that gates it"
        );
        any = true;
    }
    if any {
        let _ = writeln!(out);
    }
}

/// The plan changes from their fields, so that every path is shown as code.
fn changes(out: &mut String, v: &Verification) {
    if v.plan_changes.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "**{}**\n",
        changes_heading(v).replace("--allow-plan-changes", "`--allow-plan-changes`")
    );
    for c in &v.plan_changes {
        let what = match (&c.target, c.line, &c.to) {
            (Some(target), Some(line), _) => {
                format!(
                    "removes target {} (line {line} at the merge base)",
                    code(target)
                )
            }
            (_, _, Some(to)) => format!("moves it to {}", code(to)),
            _ => text(&c.message),
        };
        let _ = writeln!(out, "- {} {}: {what}", change_word(c.kind), code(&c.plan));
    }
    let _ = writeln!(out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_text_stays_text_in_its_cell() {
        assert_eq!(text("plain words, a-b.c (d)"), "plain words, a-b.c (d)");
        assert_eq!(
            text("a | b\n| c <img src=x onerror=y> &amp; `x` *y* [l](u) \\| ~z~ ##[e] !"),
            r"a \| b\\n\| c &lt;img src=x onerror=y&gt; &amp;amp; \`x\` \*y\* \[l\](u) \\\| \~z\~ \#\\u{23}\[e\] \!"
        );
        assert_eq!(code("docs/a,b: c.md"), "`docs/a,b: c.md`");
        assert_eq!(code("a`b|c\\d"), r"<code>a\`b\|c\\d</code>");
        assert_eq!(code("x\n| y"), r"<code>x\\n\| y</code>");
    }
}
