//! The rule itself: targets, changed paths and evidence in, one [`Report`] out.
//!
//! The changed paths must be repo-relative, `/`-separated, and sorted by byte order (the order of
//! `str`'s `Ord`) without duplicates: the paths under a directory are then contiguous, so a
//! target costs a binary search plus a scan of its own range instead of a pass over the whole
//! diff. Input that is not sorted is sorted first, which is correct but costs a copy.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{
    Claim, EvidenceEntry, MAX_REASON_CHARS, MIN_REASON_WORDS, Source, check_reason,
    control_character_at,
};
use crate::plan::Target;
use crate::suggest::edit_distance;

/// The verdict on one target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum TargetStatus {
    Changed,
    Unchanged,
    Uncovered,
    // Uncovered, and the target names nothing: no path at the base, the head or in the
    // worktree matches it (see `Report::mark_missing`). Fails the gate like `uncovered`. (A
    // plain comment: a doc comment would make the schema's enum a `oneOf`.)
    Missing,
    // Changed, but only in whitespace, line endings or file mode, where the plan does not let
    // that count (see `Report::mark_touched`). Fails the gate like `uncovered`.
    Touched,
}

/// One row per declared target, in declaration order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct TargetReport {
    /// The target's normalized spec.
    pub target: String,
    pub status: TargetStatus,
    /// `C(t)`, sorted; empty unless `changed`. A RunState keeps the first ([`Report::bounded`]).
    pub paths: Vec<String>,
    /// How many paths of `C(t)` a bounded report left out (not written when 0).
    #[serde(default, skip_serializing_if = "super::bounded::is_zero")]
    pub paths_omitted: usize,
    /// The accepted reason; only for `unchanged`.
    pub reason: Option<String>,
    pub reason_source: Option<Source>,
    /// Line of the target in the plan file.
    pub line: usize,
    /// For a `missing` target: the existing path it most likely meant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
}

/// Why evidence is invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    UnknownTarget,
    DuplicateEntry,
    ClaimNotInDiff,
    ReasonTooShort,
    ReasonTooLong,
    PlaceholderReason,
    EmptyReason,
    ControlCharacter,
}

/// Invalid evidence; any problem fails the gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Problem {
    /// The target as the entry named it.
    pub target: String,
    pub source: Source,
    pub kind: ProblemKind,
    /// A complete sentence naming the target; callers prefix it with the source.
    pub message: String,
}

/// An `unchanged` entry for a target that the diff changed. The diff wins; kept for the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Contradiction {
    pub target: String,
    pub source: Source,
    pub reason: String,
    /// What the diff changed under the target.
    pub paths: Vec<String>,
    /// As [`TargetReport::paths_omitted`].
    #[serde(default, skip_serializing_if = "super::bounded::is_zero")]
    pub paths_omitted: usize,
}

/// The outcome of [`evaluate`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Report {
    /// The plan declared at least one target, so passing means something.
    pub verified: bool,
    /// No target is uncovered and there are no problems.
    pub passed: bool,
    pub targets: Vec<TargetReport>,
    /// Evidence file problems in entry order, then trailer problems in target order.
    pub problems: Vec<Problem>,
    pub contradictions: Vec<Contradiction>,
}

impl Report {
    /// The plan line that declares `target`: where an annotation about it points (the first
    /// line when no target of the report has that name).
    pub fn line_of(&self, target: &str) -> usize {
        self.targets
            .iter()
            .find(|t| t.target == target)
            .map_or(1, |t| t.line)
    }

    pub fn uncovered(&self) -> impl Iterator<Item = &TargetReport> {
        self.targets
            .iter()
            .filter(|row| row.status == TargetStatus::Uncovered)
    }

    /// Fails a report that verified nothing, for callers that treat a plan without targets as
    /// a mistake rather than as nothing to check.
    pub fn require_targets(&mut self) {
        if !self.verified {
            self.passed = false;
        }
    }
}

/// Applies the coverage rule (see the [`coverage`](super) module documentation).
///
/// `changed` should be sorted by byte order without duplicates. `file_entries` come from
/// evidence files; `trailer_entries` from commit trailers, newest commit first. Trailer entries
/// other than `unchanged` ones are ignored: trailers only supply reasons.
#[must_use]
pub fn evaluate(
    targets: &[Target],
    changed: &[String],
    file_entries: &[EvidenceEntry],
    trailer_entries: &[EvidenceEntry],
) -> Report {
    let changed: Cow<'_, [String]> = if changed.windows(2).all(|w| w[0] < w[1]) {
        Cow::Borrowed(changed)
    } else {
        let mut sorted = changed.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        Cow::Owned(sorted)
    };
    let covered: Vec<Vec<&str>> = targets
        .iter()
        .map(|target| covered_paths(target, &changed))
        .collect();

    // Evidence is keyed by spec; if a plan ever declared one spec twice, both rows share the
    // evidence of the first.
    let mut by_spec: HashMap<&str, usize> = HashMap::with_capacity(targets.len());
    for (i, target) in targets.iter().enumerate() {
        by_spec.entry(target.spec.as_str()).or_insert(i);
    }

    let mut judge = Judge {
        changed: &changed,
        covered: &covered,
        reasons: vec![None; targets.len()],
        problems: Vec::new(),
        contradictions: Vec::new(),
    };

    let mut file_entry: Vec<Option<&Source>> = vec![None; targets.len()];
    for entry in file_entries {
        let Some(&ti) = by_spec.get(entry.target.as_str()) else {
            judge.problem(
                entry,
                ProblemKind::UnknownTarget,
                unknown_target_message(&entry.target, targets),
            );
            continue;
        };
        if let Some(first) = file_entry[ti] {
            judge.problem(
                entry,
                ProblemKind::DuplicateEntry,
                format!(
                    "second entry for target {:?} (the first is {first}); give one entry per target",
                    entry.target
                ),
            );
            continue;
        }
        file_entry[ti] = Some(&entry.source);
        match &entry.claim {
            Claim::Changed { paths } => judge.changed(ti, entry, paths),
            Claim::Unchanged { reason } => judge.unchanged(ti, entry, reason),
        }
    }

    let mut trailer: Vec<Option<&EvidenceEntry>> = vec![None; targets.len()];
    for entry in trailer_entries {
        if !matches!(entry.claim, Claim::Unchanged { .. }) {
            continue;
        }
        if let Some(&ti) = by_spec.get(entry.target.as_str())
            && file_entry[ti].is_none()
            && trailer[ti].is_none()
        {
            trailer[ti] = Some(entry);
        }
    }
    for (ti, entry) in trailer.iter().enumerate() {
        if let Some(entry) = entry
            && let Claim::Unchanged { reason } = &entry.claim
        {
            judge.unchanged(ti, entry, reason);
        }
    }

    let rows: Vec<TargetReport> = targets
        .iter()
        .zip(&covered)
        .map(|(target, paths)| {
            target_row(
                target,
                paths,
                judge.reasons[by_spec[target.spec.as_str()]].as_ref(),
            )
        })
        .collect();

    let passed = judge.problems.is_empty() && rows.iter().all(|r| !r.status.fails());
    Report {
        verified: !targets.is_empty(),
        passed,
        targets: rows,
        problems: judge.problems,
        contradictions: judge.contradictions,
    }
}

fn target_row(target: &Target, paths: &[&str], reason: Option<&(String, Source)>) -> TargetReport {
    let (status, reason, reason_source) = match reason {
        _ if !paths.is_empty() => (TargetStatus::Changed, None, None),
        Some((reason, source)) => (
            TargetStatus::Unchanged,
            Some(reason.clone()),
            Some(source.clone()),
        ),
        None => (TargetStatus::Uncovered, None, None),
    };
    TargetReport {
        target: target.spec.clone(),
        status,
        paths: paths.iter().map(|p| (*p).to_owned()).collect(),
        paths_omitted: 0,
        reason,
        reason_source,
        line: target.line,
        suggestion: None,
    }
}

struct Judge<'a> {
    changed: &'a [String],
    /// `C(t)` per target index.
    covered: &'a [Vec<&'a str>],
    /// The accepted reason per target index.
    reasons: Vec<Option<(String, Source)>>,
    problems: Vec<Problem>,
    contradictions: Vec<Contradiction>,
}

impl Judge<'_> {
    fn problem(&mut self, entry: &EvidenceEntry, kind: ProblemKind, message: String) {
        self.problems.push(Problem {
            target: entry.target.clone(),
            source: entry.source.clone(),
            kind,
            message,
        });
    }

    /// A `changed` entry adds nothing to coverage; it can only be caught out.
    fn changed(&mut self, ti: usize, entry: &EvidenceEntry, paths: &[String]) {
        let mut claimed: Vec<&str> = paths.iter().map(String::as_str).collect();
        claimed.sort_unstable();
        claimed.dedup();
        for path in claimed {
            if self.covered[ti].binary_search(&path).is_ok() {
                continue;
            }
            let target = &entry.target;
            let in_diff = self
                .changed
                .binary_search_by(|p| p.as_str().cmp(path))
                .is_ok();
            let message = if in_diff {
                format!(
                    "claims {path:?} for target {target:?}, but the target does not match that path"
                )
            } else {
                format!(
                    "claims {path:?} changed for target {target:?}, but the diff does not change it"
                )
            };
            self.problem(entry, ProblemKind::ClaimNotInDiff, message);
        }
    }

    fn unchanged(&mut self, ti: usize, entry: &EvidenceEntry, reason: &str) {
        let reason = reason.trim();
        let verdict = check_reason(reason);
        if verdict == Err(ProblemKind::ReasonTooLong) {
            // Refused even where the diff wins, so that no report carries it; and never quoted.
            let target = &entry.target;
            let length = reason.chars().count();
            self.problem(
                entry,
                ProblemKind::ReasonTooLong,
                format!(
                    "reason for target {target:?} is {length} characters long, over the limit of {MAX_REASON_CHARS}: give the specific reason in a sentence or two"
                ),
            );
            return;
        }
        if verdict == Err(ProblemKind::ControlCharacter) {
            // Refused where the diff wins too, so that no record carries it; never quoted, since
            // the control character is the problem and the position says where it is.
            let target = &entry.target;
            let at = control_character_at(reason);
            self.problem(
                entry,
                ProblemKind::ControlCharacter,
                format!(
                    "reason for target {target:?} holds a control character at {at}: write the reason as plain text on one line"
                ),
            );
            return;
        }
        if !self.covered[ti].is_empty() {
            // The reason is not used, so its quality is not the gate's business.
            self.contradictions.push(Contradiction {
                target: entry.target.clone(),
                source: entry.source.clone(),
                reason: reason.to_owned(),
                paths: self.covered[ti].iter().map(|p| (*p).to_owned()).collect(),
                paths_omitted: 0,
            });
            return;
        }
        match verdict {
            Ok(()) => self.reasons[ti] = Some((reason.to_owned(), entry.source.clone())),
            Err(kind) => {
                let target = &entry.target;
                let message = match kind {
                    ProblemKind::EmptyReason => format!(
                        "reason for target {target:?} is empty: give a specific reason (at least {MIN_REASON_WORDS} words) why it needed no change"
                    ),
                    ProblemKind::PlaceholderReason => format!(
                        "reason {reason:?} for target {target:?} is a placeholder: give a specific reason why it needed no change"
                    ),
                    _ => format!(
                        "reason {reason:?} for target {target:?} is too short: give a specific reason (at least {MIN_REASON_WORDS} words)"
                    ),
                };
                self.problem(entry, kind, message);
            }
        }
    }
}

/// `C(t)`, sorted, borrowed from the sorted `changed`.
fn covered_paths<'a>(target: &Target, changed: &'a [String]) -> Vec<&'a str> {
    let scope = target.scope().trim_end_matches('/');
    if scope.is_empty() {
        return changed
            .iter()
            .map(String::as_str)
            .filter(|path| target.matches(path))
            .collect();
    }
    let mut paths = Vec::new();
    // `matches` stays the authority; the sorted order only narrows where to ask it.
    if let Ok(i) = changed.binary_search_by(|p| p.as_str().cmp(scope))
        && target.matches(&changed[i])
    {
        paths.push(changed[i].as_str());
    }
    // Everything under `scope/` is contiguous; `scope-x` and friends sort outside it. Found
    // without building `scope/` (an allocation per target, most of matching's cost for a plan
    // of many targets and a small diff).
    let start = changed.partition_point(|p| below_or_after(p, scope) == Ordering::Less);
    paths.extend(
        changed[start..]
            .iter()
            .take_while(|p| below_or_after(p, scope) == Ordering::Equal)
            .map(String::as_str)
            .filter(|path| target.matches(path)),
    );
    paths
}

/// Where `path` sorts relative to the paths below the directory `dir`: `Equal` when it is one
/// of them (it starts with `dir/`), else `Less` or `Greater` as it compares with `dir/`.
fn below_or_after(path: &str, dir: &str) -> Ordering {
    let (path, dir) = (path.as_bytes(), dir.as_bytes());
    if path.len() <= dir.len() {
        // No longer than `dir`, so shorter than `dir/`: it is below nothing there.
        return match path.cmp(&dir[..path.len()]) {
            Ordering::Equal => Ordering::Less,
            other => other,
        };
    }
    path[..dir.len()].cmp(dir).then(path[dir.len()].cmp(&b'/'))
}

fn unknown_target_message(name: &str, targets: &[Target]) -> String {
    match closest_target(name, targets) {
        Some(suggestion) => {
            format!("target {name:?} is not declared by the plan; did you mean {suggestion:?}?")
        }
        None => format!("target {name:?} is not declared by the plan"),
    }
}

/// The declared target the author most likely meant: the same path up to `./`, `//`, a trailing
/// `/` or case; else a target that covers `name` as a path (entries name targets, not files);
/// else the nearest spec by edit distance, when near enough to be a typo.
fn closest_target<'a>(name: &str, targets: &'a [Target]) -> Option<&'a str> {
    fn loose(s: &str) -> String {
        let mut s = s.trim().to_lowercase();
        while s.contains("//") {
            s = s.replace("//", "/");
        }
        let mut s = s.as_str();
        while let Some(rest) = s.strip_prefix("./") {
            s = rest;
        }
        s.trim_end_matches('/').to_owned()
    }
    let key = loose(name);
    if let Some(target) = targets.iter().find(|t| loose(&t.spec) == key) {
        return Some(&target.spec);
    }
    if let Some(target) = targets.iter().find(|t| t.matches(name.trim())) {
        return Some(&target.spec);
    }
    targets
        .iter()
        .map(|t| (edit_distance(name, &t.spec), t))
        .filter(|(distance, t)| {
            let longer = name.chars().count().max(t.spec.chars().count());
            *distance <= 1 || distance * 5 <= longer
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, t)| t.spec.as_str())
}

#[cfg(test)]
mod tests;
