//! Commit trailers: `Baton-Unchanged: <target>: <reason>` lines that supply reasons for
//! targets no evidence file names.

use super::{Claim, EvidenceEntry, Source};

/// The trailer key of [`parse_trailers`], matched case-insensitively.
pub const TRAILER_KEY: &str = "Baton-Unchanged";

/// Reads `Baton-Unchanged: <target>: <reason>` trailers from a commit message.
///
/// Lenient where it costs nothing: the key is matched case-insensitively on any line of the last
/// paragraph except the subject line, and lines indented under a trailer continue its reason (as
/// `git interpret-trailers` folds them). The target runs up to the first `": "`, so targets may
/// contain `:` but not `": "`. Lines without that separator or with an empty target are ignored.
/// Entries come back in message order.
#[must_use]
pub fn parse_trailers(commit: &str, message: &str) -> Vec<EvidenceEntry> {
    let lines: Vec<&str> = message.lines().collect();
    let end = lines
        .iter()
        .rposition(|line| !line.trim().is_empty())
        .map_or(0, |i| i + 1);
    // The subject is never a trailer, even in a one-paragraph message.
    let start = lines[..end]
        .iter()
        .rposition(|line| line.trim().is_empty())
        .map_or(1, |i| i + 1)
        .max(1);
    let mut entries: Vec<EvidenceEntry> = Vec::new();
    let mut continues = false;
    for line in lines.get(start..end).unwrap_or_default() {
        if continues && line.starts_with([' ', '\t']) {
            if let Some(EvidenceEntry {
                claim: Claim::Unchanged { reason },
                ..
            }) = entries.last_mut()
            {
                reason.push(' ');
                reason.push_str(line.trim());
                *reason = reason.trim().to_owned();
            }
            continue;
        }
        continues = false;
        let Some((key, rest)) = line.trim_start().split_once(':') else {
            continue;
        };
        if !key.trim().eq_ignore_ascii_case(TRAILER_KEY) {
            continue;
        }
        let Some((target, reason)) = rest.trim_start().split_once(": ") else {
            continue;
        };
        let target = target.trim();
        if target.is_empty() {
            continue;
        }
        entries.push(EvidenceEntry {
            target: target.to_owned(),
            claim: Claim::Unchanged {
                reason: reason.trim().to_owned(),
            },
            source: Source::Trailer {
                commit: commit.to_owned(),
            },
        });
        continues = true;
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::test_support::*;
    use crate::coverage::*;
    use insta::assert_json_snapshot;

    #[test]
    fn trailers_parse() {
        let message = "\
Baton-Unchanged: subject.md: the subject line is never a trailer

Body mentions Baton-Unchanged: body.md: but this paragraph is not the last one.

Signed-off-by: A <a@example.com>
baton-unchanged: docs/a.md: the flags it documents are unchanged
Baton-Unchanged:weird:name: with: colons inside the reason
Baton-Unchanged: no-separator-here
Baton-Unchanged: : empty target is ignored
BATON-UNCHANGED: src/parser/: the grammar
  did not change in this stage
Baton-Unchanged: docs/b.md:
";
        let entries = parse_trailers("1a2b3c4d5e6f", message);
        assert_json_snapshot!(entries, @r#"
            [
              {
                "target": "docs/a.md",
                "status": "unchanged",
                "reason": "the flags it documents are unchanged",
                "source": {
                  "kind": "trailer",
                  "commit": "1a2b3c4d5e6f"
                }
              },
              {
                "target": "weird:name",
                "status": "unchanged",
                "reason": "with: colons inside the reason",
                "source": {
                  "kind": "trailer",
                  "commit": "1a2b3c4d5e6f"
                }
              },
              {
                "target": "src/parser/",
                "status": "unchanged",
                "reason": "the grammar did not change in this stage",
                "source": {
                  "kind": "trailer",
                  "commit": "1a2b3c4d5e6f"
                }
              }
            ]
            "#);
        assert_eq!(entries[0].source.to_string(), "commit 1a2b3c4 trailer");
        assert!(parse_trailers("c", "Baton-Unchanged: a.md: subject only").is_empty());
        assert!(parse_trailers("c", "").is_empty());
    }

    #[test]
    fn trailers_supply_reasons() {
        let targets = plan_targets(&[
            "docs/a.md",
            "docs/b.md",
            "docs/c.md",
            "docs/d.md",
            "docs/e.md",
        ]);
        let files = evidence(
            r#"{"target_coverage": [
                {"target": "docs/c.md", "status": "unchanged", "reason": "the file entry beats every trailer"}
            ]}"#,
        );
        let newest = "ffffffffffffffffffffffffffffffffffffffff";
        let older = "0000000000000000000000000000000000000000";
        let trailers = [
            trailer(newest, "docs/a.md", "the newest trailer is the one used"),
            trailer(newest, "other-plan.md", "names a target of some other plan"),
            trailer(newest, "docs/c.md", "tbd"),
            trailer(newest, "docs/d.md", "skip"),
            trailer(newest, "docs/e.md", "the diff changed it anyway later"),
            trailer(older, "docs/a.md", "an older trailer is ignored"),
            trailer(
                older,
                "docs/b.md",
                "an older trailer still counts when alone",
            ),
            trailer(
                older,
                "docs/d.md",
                "an older good reason does not rescue it",
            ),
        ];
        let report = evaluate(&targets, &diff(&["docs/e.md"]), &files, &trailers);
        assert!(!report.passed);
        assert_json_snapshot!(report, @r#"
            {
              "verified": true,
              "passed": false,
              "targets": [
                {
                  "target": "docs/a.md",
                  "status": "unchanged",
                  "paths": [],
                  "reason": "the newest trailer is the one used",
                  "reason_source": {
                    "kind": "trailer",
                    "commit": "ffffffffffffffffffffffffffffffffffffffff"
                  },
                  "line": 2
                },
                {
                  "target": "docs/b.md",
                  "status": "unchanged",
                  "paths": [],
                  "reason": "an older trailer still counts when alone",
                  "reason_source": {
                    "kind": "trailer",
                    "commit": "0000000000000000000000000000000000000000"
                  },
                  "line": 2
                },
                {
                  "target": "docs/c.md",
                  "status": "unchanged",
                  "paths": [],
                  "reason": "the file entry beats every trailer",
                  "reason_source": {
                    "kind": "file",
                    "path": "evidence.json",
                    "index": 0
                  },
                  "line": 2
                },
                {
                  "target": "docs/d.md",
                  "status": "uncovered",
                  "paths": [],
                  "reason": null,
                  "reason_source": null,
                  "line": 2
                },
                {
                  "target": "docs/e.md",
                  "status": "changed",
                  "paths": [
                    "docs/e.md"
                  ],
                  "reason": null,
                  "reason_source": null,
                  "line": 2
                }
              ],
              "problems": [
                {
                  "target": "docs/d.md",
                  "source": {
                    "kind": "trailer",
                    "commit": "ffffffffffffffffffffffffffffffffffffffff"
                  },
                  "kind": "placeholder_reason",
                  "message": "reason \"skip\" for target \"docs/d.md\" is a placeholder: give a specific reason why it needed no change"
                }
              ],
              "contradictions": [
                {
                  "target": "docs/e.md",
                  "source": {
                    "kind": "trailer",
                    "commit": "ffffffffffffffffffffffffffffffffffffffff"
                  },
                  "reason": "the diff changed it anyway later",
                  "paths": [
                    "docs/e.md"
                  ]
                }
              ]
            }
            "#);
    }
}
