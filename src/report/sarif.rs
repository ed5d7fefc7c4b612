//! The verification as SARIF 2.1.0, for code-scanning views (GitHub's among them): every target
//! that fails the gate is a result at its line of the plan file, with a rule per kind; a target
//! whose reason was accepted is a result carrying a suppression whose justification is the reason,
//! so that reviewers see what was explained away and by whom.
//!
//! Results, by rule (`ruleId`):
//!
//! | rule | level | what |
//! |---|---|---|
//! | `baton/uncovered` | error | a target with no change and no reason |
//! | `baton/missing` | error | a target that names no path |
//! | `baton/touched` | error | a target changed only in whitespace, line endings or file mode |
//! | `baton/unchanged` | note | a target with an accepted reason: suppressed, `external` for an evidence file, `inSource` for a commit trailer (which the range itself carries) |
//! | `baton/invalid-evidence` | error | an evidence problem, at the line of the target it names |
//! | `baton/plan-change` | error, or warning when allowed | what the range did to a plan that gates it |
//! | `baton/unverified` | warning, or error under `--require-targets` | a plan that declares no targets |
//! | `baton/untargeted` | warning | a path the plan's body names that no target covers |
//!
//! Locations are repository-relative URIs (`uriBaseId: SRCROOT`), percent-encoded as URI
//! references must be. Text is exact, as in JSON: a SARIF viewer shows it as text.

use serde_json::{Value, json};

use super::gate::{TOUCHED_DETAIL, change_word, range};
use crate::coverage::{Source, TargetReport, TargetStatus};
use crate::verify::{PlanResult, Verification};

/// Where SARIF's own schema is published; viewers and validators look it up from here.
const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// Every rule, in the order of `tool.driver.rules`: id, level, short description.
const RULES: [(&str, &str, &str); 8] = [
    (
        "baton/uncovered",
        "error",
        "A plan target has no changed path and no recorded reason why it needed no change.",
    ),
    (
        "baton/missing",
        "error",
        "A plan target names no path at the merge base, the head or in the worktree.",
    ),
    (
        "baton/touched",
        "error",
        "A plan target changed only in whitespace, line endings or file mode, which does not count as a change.",
    ),
    (
        "baton/unchanged",
        "note",
        "A plan target needed no change, for a recorded reason.",
    ),
    (
        "baton/invalid-evidence",
        "error",
        "An evidence entry or trailer is invalid.",
    ),
    (
        "baton/plan-change",
        "error",
        "The range changes a plan that gates it.",
    ),
    (
        "baton/unverified",
        "warning",
        "The plan declares no targets, so nothing was checked.",
    ),
    (
        "baton/untargeted",
        "warning",
        "The plan's body names a path that no target covers.",
    ),
];

/// The SARIF log of `v`, pretty-printed, with a final newline.
pub fn sarif(v: &Verification) -> String {
    let mut results = Vec::new();
    for c in &v.plan_changes {
        let level = if c.allowed { "warning" } else { "error" };
        let note = if c.allowed {
            " (allowed by --allow-plan-changes)"
        } else {
            ""
        };
        results.push(result(
            "baton/plan-change",
            level,
            format!("{}: {}{note}", change_word(c.kind), c.message),
            &c.plan,
            c.line.unwrap_or(1),
            None,
        ));
    }
    for plan in &v.plans {
        plan_results(v, plan, &mut results);
    }
    let rules: Vec<Value> = RULES
        .iter()
        .map(|(id, level, text)| {
            json!({
                "id": id,
                "shortDescription": {"text": text},
                "defaultConfiguration": {"level": level},
                "help": {"text": "See docs/coverage.md of git-baton."},
            })
        })
        .collect();
    let log = json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "git-baton",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "originalUriBaseIds": {"SRCROOT": {
                "description": {"text": "The root of the repository's worktree."}
            }},
            "invocations": [{
                "executionSuccessful": true,
                "properties": {
                    "passed": v.passed,
                    "range": range(v),
                    "mergeBase": v.merge_base,
                },
            }],
            "results": results,
        }],
    });
    let mut text = serde_json::to_string_pretty(&log).expect("a SARIF log serializes");
    text.push('\n');
    text
}

fn plan_results(v: &Verification, plan: &PlanResult, results: &mut Vec<Value>) {
    let r = &plan.coverage;
    let file = &plan.path;
    if !r.verified {
        let level = if r.passed { "warning" } else { "error" };
        results.push(result(
            "baton/unverified",
            level,
            format!("plan {file} declares no targets, so the gate checked nothing"),
            file,
            1,
            None,
        ));
    }
    for t in &r.targets {
        let (rule, message) = match t.status {
            TargetStatus::Changed => continue,
            TargetStatus::Uncovered => (
                "baton/uncovered",
                format!(
                    "`{}` has no changed path in {} and no recorded reason why it needed no change",
                    t.target,
                    range(v)
                ),
            ),
            TargetStatus::Missing => (
                "baton/missing",
                format!(
                    "`{}` names no path at the merge base, the head or in the worktree{}",
                    t.target,
                    t.suggestion
                        .as_deref()
                        .map(|s| format!("; did you mean `{s}`?"))
                        .unwrap_or_default()
                ),
            ),
            TargetStatus::Touched => (
                "baton/touched",
                format!(
                    "`{}`: {TOUCHED_DETAIL} in {} ({}), which does not count as a change",
                    t.target,
                    range(v),
                    super::bound::joined(&t.paths, str::to_owned)
                ),
            ),
            TargetStatus::Unchanged => {
                results.push(result(
                    "baton/unchanged",
                    "note",
                    format!("`{}` needed no change", t.target),
                    file,
                    t.line,
                    Some(suppression(t)),
                ));
                continue;
            }
        };
        results.push(result(rule, "error", message, file, t.line, None));
    }
    for p in &r.problems {
        let line = r.line_of(&p.target);
        results.push(result(
            "baton/invalid-evidence",
            "error",
            format!("{}: {}", p.source, p.message),
            file,
            line,
            None,
        ));
    }
    for named in &plan.untargeted {
        let mut found = result(
            "baton/untargeted",
            "warning",
            format!(
                "the plan's body names `{}`, which no target covers",
                named.target
            ),
            file,
            named.line,
            None,
        );
        found["locations"][0]["physicalLocation"]["region"]["startColumn"] = json!(named.column);
        results.push(found);
    }
}

/// An accepted reason as SARIF sees it: a suppression, justified by the reason's text. A commit
/// trailer travels with the analysed range (`inSource`); an evidence file is beside it
/// (`external`).
fn suppression(t: &TargetReport) -> Value {
    let kind = match &t.reason_source {
        Some(Source::Trailer { .. }) => "inSource",
        Some(Source::File { .. }) | None => "external",
    };
    let mut suppression = json!({
        "kind": kind,
        "status": "accepted",
        "justification": t.reason.as_deref().unwrap_or_default(),
    });
    if let Some(source) = &t.reason_source {
        suppression["properties"] = json!({"source": source.to_string()});
    }
    suppression
}

fn result(
    rule: &str,
    level: &str,
    message: String,
    file: &str,
    line: usize,
    suppression: Option<Value>,
) -> Value {
    let index = RULES
        .iter()
        .position(|(id, _, _)| *id == rule)
        .expect("every rule used is declared");
    let mut result = json!({
        "ruleId": rule,
        "ruleIndex": index,
        "level": level,
        "message": {"text": message},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": uri(file), "uriBaseId": "SRCROOT"},
            "region": {"startLine": line.max(1)},
        }}],
    });
    if let Some(suppression) = suppression {
        result["suppressions"] = json!([suppression]);
    }
    result
}

/// A repository-relative path as a relative URI reference: every byte but the unreserved ones
/// and `/` percent-encoded (a space, `%`, `#`, `?`, `:` in a file name would otherwise change
/// what the URI names).
fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_is_named_once() {
        let mut ids: Vec<&str> = RULES.iter().map(|(id, _, _)| *id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
    }

    #[test]
    fn paths_become_uri_references() {
        for (path, reference) in [
            ("plans/a.md", "plans/a.md"),
            ("plans/a b#1%.md", "plans/a%20b%231%25.md"),
            ("plans/é:x.md", "plans/%C3%A9%3Ax.md"),
        ] {
            assert_eq!(uri(path), reference);
        }
    }
}
