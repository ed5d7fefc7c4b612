//! The verification as GitHub Actions workflow commands: annotations, then the human report for
//! the log, with command processing stopped around it.
//!
//! A pull request writes the text that ends up here (reasons, target names, paths), and the
//! runner acts on workflow commands: `::error`, `::add-mask`, `::stop-commands` at the start of
//! any line, and the legacy `##[command]` form anywhere in one. Three layers keep that text
//! from ever being one:
//!
//! 1. in an annotation, the message is escaped as the runner unescapes it (`%`, CR, LF) and the
//!    properties also escape `:` and `,`, after [`escape::line`] has made every control
//!    character visible, so nothing ends the command or starts another;
//! 2. the human report is printed between `::stop-commands::TOKEN` and `::TOKEN::`, so the runner
//!    acts on nothing in it. TOKEN is the SHA-1 of the report itself: text that would resume
//!    processing would have to contain the hash of itself;
//! 3. within the report, [`escape::line`] has already removed every line break and broken every
//!    `##[` an untrusted string carried.

use std::fmt::Write;

use super::escape;
use super::gate::{
    REQUIRE_PLANS_HINT, change_word, ignored_trailers_note, nothing_checked, range, text,
    why_no_plans,
};
use crate::coverage::{TargetReport, TargetStatus};
use crate::report::status::word;
use crate::verify::Verification;

/// GitHub shows at most 10 error annotations per step; the rest are dropped silently, so we stop
/// at the limit ourselves and say how many were left out.
pub const GITHUB_ANNOTATION_LIMIT: usize = 10;

/// Why target `t` fails the gate, in the words of its annotation; `None` when it does not.
fn failure(t: &TargetReport, v: &Verification) -> Option<String> {
    let message = match t.status {
        TargetStatus::Uncovered => format!(
            "`{}` has no changed path in {} and no recorded reason why it needed no change",
            t.target,
            range(v)
        ),
        TargetStatus::Missing => {
            let mean = t
                .suggestion
                .as_deref()
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            format!(
                "`{}` names no path at the merge base, the head or in the worktree{mean}",
                t.target
            )
        }
        TargetStatus::Touched => format!(
            "`{}` changed only in whitespace, line endings or file mode in {}, which does not \
             count as a change ({})",
            t.target,
            range(v),
            super::bound::joined(&t.paths, str::to_owned)
        ),
        TargetStatus::Changed | TargetStatus::Unchanged => return None,
    };
    Some(message)
}

/// Escapes data for a GitHub workflow command message.
fn data(s: &str) -> String {
    escape::line(s)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a GitHub workflow command property (file, title).
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

/// An `::error` annotation on `line` of the plan `file` (already a property value).
fn error(file: &str, line: usize, title: &str, message: &str) -> String {
    format!(
        "::error file={file},line={line},title={}::{}",
        property(title),
        data(message)
    )
}

/// The annotations and the report, as described in the module documentation.
pub fn github(v: &Verification) -> String {
    let mut annotations = Vec::new();
    for c in &v.plan_changes {
        let (kind, title, note) = if c.allowed {
            (
                "warning",
                "plan change allowed",
                " (allowed by --allow-plan-changes)",
            )
        } else {
            ("error", "plan change", "")
        };
        annotations.push(format!(
            "::{kind} file={},line={},title={}::{}",
            property(&c.plan),
            c.line.unwrap_or(1),
            property(&format!("{title}: {}", change_word(c.kind))),
            data(&format!("{}{note}", c.message))
        ));
    }
    for plan in &v.plans {
        let file = property(&plan.path);
        let r = &plan.coverage;
        for status in TargetStatus::FAILING {
            for t in r.targets.iter().filter(|t| t.status == status) {
                if let Some(message) = failure(t, v) {
                    let title = format!("{} target {}", word(status), t.target);
                    annotations.push(error(&file, t.line, &title, &message));
                }
            }
        }
        for p in &r.problems {
            annotations.push(error(
                &file,
                r.line_of(&p.target),
                "invalid evidence",
                &format!("{}: {}", p.source, p.message),
            ));
        }
        for named in &plan.untargeted {
            annotations.push(format!(
                "::warning file={file},line={},col={},title={}::{}",
                named.line,
                named.column,
                property("path not targeted"),
                data(&format!(
                    "the plan's body names `{}`, which no target covers",
                    named.target
                ))
            ));
        }
        if !r.verified {
            let kind = if r.passed { "warning" } else { "error" };
            annotations.push(format!(
                "::{kind} file={file},line=1::{}",
                data("the plan declares no targets, so the coverage gate verified nothing")
            ));
        }
    }
    if nothing_checked(v) {
        annotations.push(format!(
            "::error title={}::{}",
            property("no plan checked"),
            data(&format!(
                "--require-plans was given and no plan was checked: {}. {REQUIRE_PLANS_HINT}",
                why_no_plans(v)
            ))
        ));
    }
    for t in &v.ignored_trailers {
        annotations.push(format!(
            "::notice::{}",
            data(&ignored_trailers_note(&t.commit, t.count))
        ));
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
    // Plain: the token hashes exactly what the log shows, and a stream that strips colour
    // would otherwise change the text after it was hashed.
    let report = anstream::adapter::strip_str(&text(v)).to_string();
    let token = stop_token(&report);
    let _ = writeln!(out, "::stop-commands::{token}");
    out.push_str(&report);
    let _ = writeln!(out, "::{token}::");
    out
}

/// The token that stops and resumes command processing around `report`: `baton-` and the git
/// blob id (SHA-1) of the report, which no text can contain of itself.
pub fn stop_token(report: &str) -> String {
    let id = crate::git::blob_id(report.as_bytes()).unwrap_or_else(|| String::from("unhashed"));
    format!("baton-{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_properties_cannot_end_their_command() {
        let hostile = "a%0A::error::b\r\n::add-mask::x, y: 100%";
        assert_eq!(
            data(hostile),
            r"a%250A::error::b\r\n::add-mask::x, y: 100%25"
        );
        assert_eq!(
            property(hostile),
            r"a%250A%3A%3Aerror%3A%3Ab\r\n%3A%3Aadd-mask%3A%3Ax%2C y%3A 100%25"
        );
    }

    #[test]
    fn the_stop_token_is_the_blob_id_of_the_report() {
        // `git hash-object --stdin <<< ""` without the newline: the empty blob.
        assert_eq!(
            stop_token(""),
            "baton-e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
        );
        assert_ne!(stop_token("a"), stop_token("b"));
    }
}
