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

use std::collections::BTreeMap;
use std::fmt::Write;

use super::escape;
use super::gate::{
    REQUIRE_PLANS_HINT, change_word, ignored_trailers_note, nothing_checked, range, text,
    why_no_plans,
};
use crate::coverage::{TargetReport, TargetStatus};
use crate::report::status::word;
use crate::verify::Verification;

/// GitHub shows at most 10 annotations of each kind (error, warning, notice) per step; the rest
/// are dropped silently, so we stop at the limit ourselves and say how many were left out.
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
    let shown = within_limits(&annotations);
    for a in &shown {
        let _ = writeln!(out, "{a}");
    }
    if shown.len() < annotations.len() {
        let _ = writeln!(
            out,
            "::notice::{} more annotation(s) left out (GitHub shows {GITHUB_ANNOTATION_LIMIT} of each kind per step); see the job summary",
            annotations.len() - shown.len()
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

/// The annotations GitHub will show, in order: the first [`GITHUB_ANNOTATION_LIMIT`] of each
/// kind, so that warnings and notices never push an error out. When any is left out, one
/// notice's place is kept for the notice that says how many.
fn within_limits(annotations: &[String]) -> Vec<&str> {
    fn kind(annotation: &str) -> &str {
        let command = annotation.strip_prefix("::").unwrap_or(annotation);
        command.split([' ', ':']).next().unwrap_or_default()
    }
    let mut of_kind: BTreeMap<&str, usize> = BTreeMap::new();
    for a in annotations {
        *of_kind.entry(kind(a)).or_default() += 1;
    }
    let over = of_kind.values().any(|&n| n > GITHUB_ANNOTATION_LIMIT);
    let mut shown_of_kind: BTreeMap<&str, usize> = BTreeMap::new();
    let mut shown = Vec::new();
    for a in annotations {
        let k = kind(a);
        let room = if over && k == "notice" {
            GITHUB_ANNOTATION_LIMIT - 1
        } else {
            GITHUB_ANNOTATION_LIMIT
        };
        let n = shown_of_kind.entry(k).or_default();
        if *n < room {
            *n += 1;
            shown.push(a.as_str());
        }
    }
    shown
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

    /// GitHub counts each kind apart: twelve warnings leave out two of them and no error, and
    /// ten notices give up one place to the notice that counts what was left out.
    #[test]
    fn each_kind_of_annotation_is_capped_apart() {
        fn of(kind: &'static str, n: usize) -> impl Iterator<Item = String> {
            (0..n).map(move |i| format!("::{kind} file=p.md,line={i}::x"))
        }
        let warnings_first: Vec<String> = of("warning", 12).chain(of("error", 3)).collect();
        let shown = within_limits(&warnings_first);
        assert_eq!(shown.iter().filter(|a| a.starts_with("::error")).count(), 3);
        assert_eq!(
            shown.iter().filter(|a| a.starts_with("::warning")).count(),
            10
        );
        let notices: Vec<String> = of("notice", 10).chain(of("error", 11)).collect();
        let shown = within_limits(&notices);
        assert_eq!(
            shown.iter().filter(|a| a.starts_with("::error")).count(),
            10
        );
        assert_eq!(
            shown.iter().filter(|a| a.starts_with("::notice")).count(),
            9
        );
        let within: Vec<String> = of("notice", 10).chain(of("error", 10)).collect();
        assert_eq!(within_limits(&within).len(), 20);
        assert_eq!(
            within_limits(&["::error title=t::m".to_string()]),
            ["::error title=t::m"]
        );
    }

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
