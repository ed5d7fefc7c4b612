//! Commit trailers: `Baton-Unchanged: <target>: <reason>` lines that supply reasons for
//! targets no evidence file names, and the `Baton-Run: <run>` / `Baton-Plan: <path>` pair that
//! `git baton finish` writes to say which run, and which plan, a commit is the work of.
//!
//! Which lines are trailers is git's rule, applied by gix's parser (the same as `git
//! interpret-trailers --parse`): only the last paragraph of the body, never the subject; that
//! paragraph counts only when every line in it is a trailer or a continuation line (or, with a
//! `Signed-off-by:` among them, a quarter of them are trailers); `Key: value` and `Key:value`
//! alike; a line indented under a trailer continues its value, folded with single spaces.

use gix::bstr::ByteSlice;
use gix::objs::commit::MessageRef;

use super::{Claim, EvidenceEntry, Source};

/// The trailer key of a reason for an unchanged target, matched case-insensitively.
pub const TRAILER_KEY: &str = "Baton-Unchanged";
/// The trailer key naming the run a commit is the work of.
pub const RUN_TRAILER_KEY: &str = "Baton-Run";
/// The trailer key naming the plan (repo-relative path) a commit is the work of.
pub const PLAN_TRAILER_KEY: &str = "Baton-Plan";
/// Says where a finished run's targets came from; informational, no gate reads it.
pub const TARGETS_TRAILER_KEY: &str = "Baton-Targets";

/// The git-baton trailers of one commit message, each kind in message order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CommitTrailers {
    /// `Baton-Unchanged` reasons.
    pub unchanged: Vec<EvidenceEntry>,
    /// `Baton-Run` values, as written (not checked to be run ids).
    pub runs: Vec<String>,
    /// `Baton-Plan` values, as written (not checked to be paths).
    pub plans: Vec<String>,
}

/// Reads the git-baton trailers of a commit message.
///
/// A `Baton-Unchanged` value is `<target>: <reason>`: the target runs up to the first `": "`, so
/// targets may contain `:` but not `": "`. One without that separator or with an empty target
/// is ignored. Empty `Baton-Run` and `Baton-Plan` values are ignored.
///
/// Commits that `finish` made before it wrote `Baton-Plan` name their plan only in the body line
/// `Work of git-baton run <id> for plan <path>.`; for a run named without a plan, that line of
/// the same run names it — when its path is one inside the repository ([`is_repo_path`]): a
/// plan outside it gets no `Baton-Plan`, and the line then names none either.
#[must_use]
pub fn parse_commit_trailers(commit: &str, message: &str) -> CommitTrailers {
    let mut found = CommitTrailers::default();
    let Some(body) = MessageRef::from_bytes(message.as_bytes()).body() else {
        return found;
    };
    for trailer in body.trailers() {
        let key = trailer.token.to_str_lossy();
        let value = trailer.value.to_str_lossy();
        let value = value.trim();
        if key.eq_ignore_ascii_case(TRAILER_KEY) {
            if let Some(entry) = unchanged(commit, value) {
                found.unchanged.push(entry);
            }
        } else if value.is_empty() {
            continue;
        } else if key.eq_ignore_ascii_case(RUN_TRAILER_KEY) {
            found.runs.push(value.to_owned());
        } else if key.eq_ignore_ascii_case(PLAN_TRAILER_KEY) {
            found.plans.push(value.to_owned());
        }
    }
    if found.plans.is_empty() {
        let prose = body.without_trailer().to_str_lossy();
        for run in &found.runs {
            let line = format!("Work of git-baton run {run} for plan ");
            let plan = prose
                .lines()
                .find_map(|l| l.strip_prefix(line.as_str())?.strip_suffix('.'));
            // `finish` writes that line for every plan, and a `Baton-Plan` only for one inside the
            // repository: a line naming a plan outside it (`../x.md`, `/tmp/x.md`) says where
            // the run's plan was, and names no plan for `verify`, as the absent trailer says.
            if let Some(plan) = plan.filter(|p| is_repo_path(p)) {
                found.plans.push(plan.to_owned());
            }
        }
    }
    found
}

/// The `Baton-Unchanged` reasons of a commit message, in message order; see
/// [`parse_commit_trailers`].
#[must_use]
pub fn parse_trailers(commit: &str, message: &str) -> Vec<EvidenceEntry> {
    parse_commit_trailers(commit, message).unchanged
}

fn unchanged(commit: &str, value: &str) -> Option<EvidenceEntry> {
    let (target, reason) = value.split_once(": ")?;
    let target = target.trim();
    if target.is_empty() {
        return None;
    }
    Some(EvidenceEntry {
        target: target.to_owned(),
        claim: Claim::Unchanged {
            reason: reason.trim().to_owned(),
        },
        source: Source::Trailer {
            commit: commit.to_owned(),
        },
    })
}

/// `path` as a plan trailer may name it: repo-relative, `/`-separated, with no empty, `.` or
/// `..` component and no control character, so that it can name nothing outside the
/// repository's tree.
#[must_use]
pub fn is_repo_path(path: &str) -> bool {
    !path.is_empty()
        && path.trim() == path
        && !path.chars().any(|c| c.is_control() || c == '\\')
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
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

    fn targets(message: &str) -> Vec<String> {
        parse_trailers("c", message)
            .into_iter()
            .map(|e| e.target)
            .collect()
    }

    #[test]
    fn only_a_trailer_block_counts() {
        // Prose in the last paragraph makes it no trailer block (git's rule)...
        let prose =
            "Subject\n\nBody.\n\nSee the notes.\nBaton-Unchanged: a.md: the text is right\n";
        assert!(targets(prose).is_empty());
        // ...unless a Signed-off-by is among a quarter or more of trailer lines.
        let signed = "Subject\n\nSee the notes.\nSigned-off-by: A <a@example.com>\n\
                      Baton-Unchanged: a.md: the text is right\n";
        assert_eq!(targets(signed), ["a.md"]);
        // The last paragraph only: a block followed by prose is no block.
        let earlier = "Subject\n\nBaton-Unchanged: a.md: the text is right\n\nThanks.\n";
        assert!(targets(earlier).is_empty());
        // The subject's paragraph is the title, also without a blank line after the subject.
        assert!(targets("Subject\nBaton-Unchanged: a.md: the text is right\n").is_empty());
        // Trailing blank lines do not end the block.
        assert_eq!(
            targets("Subject\n\nBaton-Unchanged: a.md: the text is right\n\n\n"),
            ["a.md"]
        );
    }

    #[test]
    fn trailer_lines_as_git_reads_them() {
        let message = "Subject\r\n\r\n\
                       Baton-Unchanged:a.md: no space after the key\r\n\
                       Baton-Unchanged : b.md: a space before the separator\r\n\
                       Baton-Unchanged: c.md: folded over\r\n\
                       \t  three\r\n   lines\r\n";
        let entries = parse_trailers("c", message);
        let got: Vec<(&str, &str)> = entries
            .iter()
            .map(|e| match &e.claim {
                Claim::Unchanged { reason } => (e.target.as_str(), reason.as_str()),
                Claim::Changed { .. } => unreachable!("trailers make no changed claims"),
            })
            .collect();
        assert_eq!(
            got,
            [
                ("a.md", "no space after the key"),
                ("b.md", "a space before the separator"),
                ("c.md", "folded over three lines"),
            ]
        );
    }

    #[test]
    fn run_and_plan_trailers() {
        let message = "Grade review\n\nWork of git-baton run 0abc123xyz for plan plans/a.md.\n\n\
                       Baton-Run: 0abc123xyz\n\
                       baton-plan: plans/grade review.md\n\
                       Baton-Plan:\n\
                       Baton-Unchanged: docs/a.md: the flags it documents are unchanged\n";
        let found = parse_commit_trailers("c", message);
        assert_eq!(found.runs, ["0abc123xyz"]);
        assert_eq!(found.plans, ["plans/grade review.md"]);
        assert_eq!(found.unchanged.len(), 1);
        // In the body's prose they name nothing.
        let prose = "Subject\n\nBaton-Run: 0abc123xyz was mentioned here\nand explained.\n";
        assert_eq!(parse_commit_trailers("c", prose), CommitTrailers::default());
        // What finish wrote before Baton-Plan: the body line names the plan of the run.
        let older = "Grade review\n\nWork of git-baton run 0abc123xyz for plan plans/a.b.md.\n\n\
                     Baton-Run: 0abc123xyz\n";
        assert_eq!(parse_commit_trailers("c", older).plans, ["plans/a.b.md"]);
        // Only for the run the trailer names, and only with no Baton-Plan.
        let other = older.replace("Baton-Run: 0abc123xyz", "Baton-Run: 1def456xyz");
        assert!(parse_commit_trailers("c", &other).plans.is_empty());
        assert_eq!(
            parse_commit_trailers("c", message).plans,
            ["plans/grade review.md"]
        );
        let no_run = "Subject\n\nWork of git-baton run 0abc123xyz for plan plans/a.md.\n";
        assert!(parse_commit_trailers("c", no_run).plans.is_empty());
        // A plan outside the repository: finish writes the line but no Baton-Plan, and the line
        // names no plan (verify would refuse the path).
        for outside in [
            "../outside.md",
            "/tmp/plan.md",
            "plans/../../x.md",
            "./x.md",
        ] {
            let message = older.replace("plans/a.b.md", outside);
            let found = parse_commit_trailers("c", &message);
            assert!(found.plans.is_empty(), "{outside}: {found:?}");
            assert_eq!(found.runs, ["0abc123xyz"], "{outside}");
        }
    }

    #[test]
    fn plan_paths_stay_in_the_tree() {
        for ok in ["plans/a.md", "a.md", "deep/er/plan x.md", "plans/a:b.md"] {
            assert!(is_repo_path(ok), "{ok}");
        }
        for bad in [
            "",
            " plans/a.md",
            "/etc/passwd",
            "../x.md",
            "plans/../x.md",
            "./plans/a.md",
            "plans//a.md",
            "plans/",
            "plans\\a.md",
            "plans/a\u{1b}.md",
        ] {
            assert!(!is_repo_path(bad), "{bad:?}");
        }
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
