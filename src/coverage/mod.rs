//! The coverage rule: a stage succeeded only if it touched every target of its plan, or said
//! specifically why a target needed no change.
//!
//! This module is pure. It takes the plan's targets, the changed paths of the cumulative diff
//! and the evidence (entries of evidence files and commit trailers) and returns a [`Report`];
//! reading files and running git belong to the callers.
//!
//! # The rule
//!
//! For each target `t`, let `C(t)` be the changed paths that `t` matches.
//!
//! 1. `C(t)` is not empty: the target is `changed`, with those paths. The diff is the truth:
//!    no evidence is needed when every target changed, evidence cannot undo a change, and a
//!    `changed` entry cannot make one (it is only checked against `C(t)`).
//! 2. Otherwise, an `unchanged` entry for `t` with an acceptable reason makes it `unchanged`.
//! 3. Otherwise it is `uncovered`; and `missing` when the caller finds that the target names
//!    nothing at all (see [`Report::mark_missing`]).
//! 4. A `changed` target whose every path changed only in whitespace, line endings or file mode
//!    is `touched` when the caller has compared the sides (see [`Report::mark_touched`] and
//!    `trivial`), unless the plan says `trivial: counts`; it is then judged as if unchanged.
//!
//! The gate passes when no target is uncovered, missing or touched and the evidence has no [`Problem`]. An entry of
//! an evidence file is a problem when it names a target the plan does not declare (exact match
//! on the normalized spec, with the closest declared target suggested), when it is the second
//! entry for a target, when a `changed` entry claims a path outside `C(t)`, or when the reason
//! that would be used is not acceptable. An `unchanged` entry for a target that the diff
//! changed is not a problem, because the diff wins, but it is kept as a [`Contradiction`].
//!
//! Commit trailers (`Baton-Unchanged: <target>: <reason>`, see [`parse_trailers`]) only supply
//! reasons for targets that no evidence file entry names. The first trailer in the given order
//! wins (callers pass newest commit first, so the latest word counts). A trailer naming a
//! target the plan does not declare is ignored, since one commit range may serve several
//! plans; the reason of the trailer that is used must be acceptable like any other.
//!
//! A plan without targets verifies nothing: its report is `verified: false` and passes unless
//! the evidence has problems. [`Report::require_targets`] turns it into a failure.
//!
//! The rule lives in `rule`, the parsing of evidence files in `evidence`, commit trailers in
//! `trailers` and the policy for reasons in `reasons`; their public items are re-exported here.

mod bounded;
mod evidence;
mod missing;
mod reasons;
mod rule;
mod trailers;
mod trivial;

pub use bounded::KEPT_PATHS;
#[cfg(test)]
pub(crate) use evidence::json_schema as evidence_schema;
pub use evidence::{
    Claim, Evidence, EvidenceEntry, EvidenceError, MAX_EVIDENCE_BYTES, Source, USAGE_NAME_LIMIT,
    Usage, parse_evidence, too_large_message,
};
pub use missing::closest_name;
pub use reasons::{
    MAX_REASON_CHARS, MIN_REASON_CHARS, MIN_REASON_WORDS, PLACEHOLDER_REASONS, check_reason,
    control_character, control_character_at,
};
pub use rule::{Contradiction, Problem, ProblemKind, Report, TargetReport, TargetStatus, evaluate};
pub use trailers::{
    CommitTrailers, PLAN_TRAILER_KEY, RUN_TRAILER_KEY, TARGETS_TRAILER_KEY, TRAILER_KEY,
    is_repo_path, parse_commit_trailers, parse_trailers,
};
pub use trivial::{FileKind, Side, is_trivial};

/// Builders shared by the unit tests of every part of the rule.
#[cfg(test)]
mod test_support {
    use super::*;
    use crate::plan::Target;

    pub(super) fn plan_targets(specs: &[&str]) -> Vec<Target> {
        let list = serde_json::to_string(specs).expect("specs serialize");
        crate::plan::parse("p.md", &format!("---\ntargets: {list}\n---\n"))
            .expect("test plan parses")
            .targets
    }

    pub(super) fn diff(paths: &[&str]) -> Vec<String> {
        let mut paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
        paths.sort();
        paths
    }

    pub(super) fn evidence(json: &str) -> Vec<EvidenceEntry> {
        parse_evidence("evidence.json", json)
            .expect("test evidence parses")
            .entries
    }

    pub(super) fn trailer(commit: &str, target: &str, reason: &str) -> EvidenceEntry {
        EvidenceEntry {
            target: target.to_owned(),
            claim: Claim::Unchanged {
                reason: reason.to_owned(),
            },
            source: Source::Trailer {
                commit: commit.to_owned(),
            },
        }
    }

    pub(super) fn shape_error(json: &str) -> String {
        parse_evidence("evidence.json", json)
            .expect_err("evidence is malformed")
            .to_string()
    }
}
