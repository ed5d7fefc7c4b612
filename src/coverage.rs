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
//! 3. Otherwise it is `uncovered`.
//!
//! The gate passes when no target is uncovered and the evidence has no [`Problem`]. An entry of
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
//! # Reasons
//!
//! The gate cannot judge whether a reason is true, only whether it is the kind of answer that
//! can be checked. A reason is trimmed and then acceptable when it
//!
//! - is not empty ([`ProblemKind::EmptyReason`]);
//! - is not a placeholder ([`ProblemKind::PlaceholderReason`]): lowercased, with `-` and `_`
//!   read as spaces, whitespace collapsed and non-alphanumeric characters stripped from both
//!   ends, it is neither empty (`...`, `?`) nor one of [`PLACEHOLDER_REASONS`] normalized the
//!   same way;
//! - has at least [`MIN_REASON_WORDS`] words and [`MIN_REASON_CHARS`] characters
//!   ([`ProblemKind::ReasonTooShort`]).
//!
//! Placeholders are checked before length so that `n/a` is reported as what it is. A placeholder
//! padded to length ("no change needed here") passes: the list catches habits, not intent.
//!
//! # Changed paths
//!
//! The changed paths must be repo-relative, `/`-separated, and sorted by byte order (the order of
//! `str`'s `Ord`) without duplicates: the paths under a directory are then contiguous, so a
//! target costs a binary search plus a scan of its own range instead of a pass over the whole
//! diff. Input that is not sorted is sorted first, which is correct but costs a copy.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::plan::{Target, TargetKind};
use crate::suggest::edit_distance;

/// Minimum number of whitespace-separated words in an acceptable reason.
pub const MIN_REASON_WORDS: usize = 3;

/// Minimum number of characters (after trimming) in an acceptable reason.
pub const MIN_REASON_CHARS: usize = 15;

/// Reasons that say nothing about why a target needed no change. Compared after normalization
/// (see the module documentation), so `N/A.`, `No-change` and `  nothing to do!` match too.
pub const PLACEHOLDER_REASONS: &[&str] = &[
    "n/a",
    "na",
    "n.a",
    "none",
    "nil",
    "null",
    "no change",
    "no changes",
    "no change needed",
    "no changes needed",
    "no change required",
    "no changes required",
    "no change necessary",
    "no update",
    "no updates",
    "no update needed",
    "no updates needed",
    "no update required",
    "no edit needed",
    "no edits needed",
    "no action",
    "no action needed",
    "no action required",
    "no need",
    "no need to change",
    "not needed",
    "not required",
    "not necessary",
    "unnecessary",
    "not applicable",
    "not relevant",
    "irrelevant",
    "unchanged",
    "not changed",
    "left unchanged",
    "untouched",
    "not touched",
    "not modified",
    "unmodified",
    "nothing",
    "nothing to do",
    "nothing to change",
    "nothing to update",
    "nothing needed",
    "nothing changed",
    "-",
    "--",
    "...",
    "?",
    "done",
    "ok",
    "okay",
    "fine",
    "good",
    "all good",
    "lgtm",
    "looks good",
    "same",
    "same as before",
    "as is",
    "left as is",
    "fine as is",
    "already done",
    "already correct",
    "already up to date",
    "up to date",
    "skip",
    "skipped",
    "ignore",
    "ignored",
    "todo",
    "tbd",
    "fixme",
    "xxx",
    "wip",
    "placeholder",
    "reason",
    "no reason",
    "see above",
    "see below",
    "see diff",
    "see commit",
    "see pr",
    "see notes",
    "out of scope",
    "noop",
    "no op",
    "wontfix",
    "won't fix",
    "yes",
    "no",
    "x",
];

/// The trailer key of [`parse_trailers`], matched case-insensitively.
pub const TRAILER_KEY: &str = "Baton-Unchanged";

/// What an evidence entry says about its target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Claim {
    /// The work changed these paths under the target; checked against the diff.
    Changed { paths: Vec<String> },
    /// The target needed no change, for this reason.
    Unchanged { reason: String },
}

/// Where an evidence entry came from, so that a problem can point at it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// Entry `index` (0-based) of `target_coverage` in the evidence file `path`.
    File { path: String, index: usize },
    /// A `Baton-Unchanged` trailer of the commit with this full hex id.
    Trailer { commit: String },
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::File { path, index } => write!(f, "{path}: entry {index}"),
            Source::Trailer { commit } => {
                let short = commit.get(..7).unwrap_or(commit);
                write!(f, "commit {short} trailer")
            }
        }
    }
}

/// One claim about one target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EvidenceEntry {
    pub target: String,
    #[serde(flatten)]
    pub claim: Claim,
    pub source: Source,
}

/// What the agent reports the stage cost. Not checked; carried for the record. Unknown keys are
/// accepted because agents add fields faster than this struct does.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

/// A parsed evidence file.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Evidence {
    pub entries: Vec<EvidenceEntry>,
    pub usage: Option<Usage>,
}

/// An evidence file that is not shaped like one. Semantic problems (unknown targets, bad
/// reasons, ...) are not errors but [`Problem`]s of the [`Report`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}{}: {message}", location(*.position))]
pub struct EvidenceError {
    pub path: String,
    /// 1-based line and column, when the JSON parser knew them.
    pub position: Option<(usize, usize)>,
    pub message: String,
}

fn location(position: Option<(usize, usize)>) -> String {
    match position {
        Some((line, column)) => format!(":{line}:{column}"),
        None => String::new(),
    }
}

/// Parses an evidence file:
///
/// ```json
/// {"target_coverage": [
///     {"target": "docs/a.md", "status": "changed", "paths": ["docs/a.md"]},
///     {"target": "src/parser/", "status": "unchanged", "reason": "the grammar did not change"}
///  ],
///  "usage": {"input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.02, "model": "m"}}
/// ```
///
/// `target_coverage` and `usage` are optional; other top-level or entry keys are errors, since a
/// misspelled key would otherwise silently drop a claim.
///
/// # Errors
///
/// An [`EvidenceError`] when the text is not JSON or not shaped like an evidence file; it
/// names the entry and, when known, the line and column.
pub fn parse_evidence(path: &str, text: &str) -> Result<Evidence, EvidenceError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        // An agent that was interrupted before writing anything leaves exactly this behind;
        // serde_json's "EOF while parsing a value" would not say so.
        return Err(EvidenceError {
            path: path.to_owned(),
            position: None,
            message: format!("the file is empty; expected {}", RawEvidence::EXPECTING),
        });
    }
    let raw: Object<RawEvidence> = serde_json::from_str(text).map_err(|e| {
        let full = e.to_string();
        let position = (e.line() != 0).then(|| (e.line(), e.column()));
        let message = match position {
            Some((line, column)) => full
                .strip_suffix(&format!(" at line {line} column {column}"))
                .unwrap_or(&full)
                .to_owned(),
            None => full,
        };
        EvidenceError {
            path: path.to_owned(),
            // serde_json reports column 0 for errors at a line start; editors count from 1.
            position: position.map(|(line, column)| (line, column.max(1))),
            message,
        }
    })?;
    let raw = raw.0;
    let entries = raw
        .target_coverage
        .map(|entries| entries.0)
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(index, (target, claim))| EvidenceEntry {
            target,
            claim,
            source: Source::File {
                path: path.to_owned(),
                index,
            },
        })
        .collect();
    Ok(Evidence {
        entries,
        usage: raw.usage,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEvidence {
    #[serde(default)]
    target_coverage: Option<RawEntries>,
    #[serde(default)]
    usage: Option<Usage>,
}

struct RawEntries(Vec<(String, Claim)>);

/// Derived struct deserializers also accept a JSON array of the fields in order; evidence is
/// written by agents, and a positional entry is far more likely a mistake than a shorthand.
struct Object<T>(T);

trait Described {
    const EXPECTING: &'static str;

    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

impl Described for RawEvidence {
    const EXPECTING: &'static str = "an evidence object like {\"target_coverage\": [...]}";
}

impl Described for RawEntry {
    const EXPECTING: &'static str =
        "an entry object like {\"target\": ..., \"status\": ..., \"reason\"/\"paths\": ...}";

    fn validate(&self) -> Result<(), String> {
        RawEntry::validate(self)
    }
}

impl<'de, T: Deserialize<'de> + Described> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Described> Visitor<'de> for ObjectVisitor<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(T::EXPECTING)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
                let value = T::deserialize(MapAccessDeserializer::new(map))?;
                value.validate().map_err(de::Error::custom)?;
                Ok(Object(value))
            }
        }
        deserializer.deserialize_map(ObjectVisitor(PhantomData))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    target: String,
    status: RawStatus,
    #[serde(default)]
    paths: Option<Vec<String>>,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum RawStatus {
    Changed,
    Unchanged,
}

impl RawEntry {
    /// The shape rules serde cannot express. Checked while the entry's object is still being
    /// read, so that serde_json locates the error at the entry (its closing brace) rather than
    /// wherever it had got to by the time the entry was complete.
    fn validate(&self) -> Result<(), String> {
        if self.target.trim().is_empty() {
            return Err("\"target\" is empty".into());
        }
        let problem = match (&self.status, &self.paths, &self.reason) {
            (RawStatus::Changed, _, Some(_)) => {
                "status \"changed\" takes \"paths\", not \"reason\" (the diff speaks for itself)"
            }
            (RawStatus::Changed, None, None) => {
                "status \"changed\" requires \"paths\": the changed paths under the target"
            }
            (RawStatus::Changed, Some(paths), None) if paths.is_empty() => {
                "status \"changed\" requires a non-empty \"paths\" list"
            }
            (RawStatus::Unchanged, Some(_), _) => {
                "status \"unchanged\" takes \"reason\", not \"paths\""
            }
            (RawStatus::Unchanged, None, None) => {
                "status \"unchanged\" requires \"reason\": why the target needed no change"
            }
            _ => return Ok(()),
        };
        Err(format!("target {:?}: {problem}", self.target))
    }

    /// Only called on a validated entry.
    fn into_claim(self) -> (String, Claim) {
        let claim = match self.status {
            RawStatus::Changed => Claim::Changed {
                paths: self.paths.unwrap_or_default(),
            },
            RawStatus::Unchanged => Claim::Unchanged {
                reason: self.reason.unwrap_or_default(),
            },
        };
        (self.target, claim)
    }
}

// A hand-written sequence visitor so that every error names the entry it is about; serde_json
// keeps the position of the inner error when it is wrapped in a custom message.
impl<'de> Deserialize<'de> for RawEntries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = RawEntries;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of target coverage entries")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawEntries, A::Error> {
                let mut entries = Vec::new();
                loop {
                    let index = entries.len();
                    match seq.next_element::<Object<RawEntry>>() {
                        Ok(Some(Object(raw))) => entries.push(raw.into_claim()),
                        Ok(None) => return Ok(RawEntries(entries)),
                        Err(e) => {
                            return Err(de::Error::custom(format_args!("entry {index}: {e}")));
                        }
                    }
                }
            }
        }
        deserializer.deserialize_seq(EntriesVisitor)
    }
}

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

/// Checks a reason against the policy of the module documentation.
///
/// # Errors
///
/// The [`ProblemKind`] (`EmptyReason`, `PlaceholderReason` or `ReasonTooShort`) of a reason
/// that is not acceptable.
pub fn check_reason(reason: &str) -> Result<(), ProblemKind> {
    let trimmed = reason.trim();
    if trimmed.is_empty() {
        return Err(ProblemKind::EmptyReason);
    }
    let normalized = normalize_reason(trimmed);
    if normalized.is_empty()
        || PLACEHOLDER_REASONS
            .iter()
            .any(|placeholder| normalize_reason(placeholder) == normalized)
    {
        return Err(ProblemKind::PlaceholderReason);
    }
    if trimmed.split_whitespace().count() < MIN_REASON_WORDS
        || trimmed.chars().count() < MIN_REASON_CHARS
    {
        return Err(ProblemKind::ReasonTooShort);
    }
    Ok(())
}

fn normalize_reason(reason: &str) -> String {
    let lowered: String = reason
        .to_lowercase()
        .chars()
        .map(|c| match c {
            '-' | '_' => ' ',
            '\u{2019}' => '\'',
            c => c,
        })
        .collect();
    let collapsed = lowered.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_owned()
}

/// The verdict on one target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetStatus {
    Changed,
    Unchanged,
    Uncovered,
}

/// One row per declared target, in declaration order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetReport {
    /// The target's normalized spec.
    pub target: String,
    pub status: TargetStatus,
    /// `C(t)`, sorted; empty unless `changed`.
    pub paths: Vec<String>,
    /// The accepted reason; only for `unchanged`.
    pub reason: Option<String>,
    pub reason_source: Option<Source>,
    /// Line of the target in the plan file.
    pub line: usize,
}

/// Why evidence is invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    UnknownTarget,
    DuplicateEntry,
    ClaimNotInDiff,
    ReasonTooShort,
    PlaceholderReason,
    EmptyReason,
}

/// Invalid evidence; any problem fails the gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
pub struct Contradiction {
    pub target: String,
    pub source: Source,
    pub reason: String,
    /// What the diff changed under the target.
    pub paths: Vec<String>,
}

/// The outcome of [`evaluate`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// Applies the coverage rule (see the module documentation).
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

    let passed =
        judge.problems.is_empty() && rows.iter().all(|r| r.status != TargetStatus::Uncovered);
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
        reason,
        reason_source,
        line: target.line,
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
        if !self.covered[ti].is_empty() {
            // The reason is not used, so its quality is not the gate's business.
            self.contradictions.push(Contradiction {
                target: entry.target.clone(),
                source: entry.source.clone(),
                reason: reason.to_owned(),
                paths: self.covered[ti].iter().map(|p| (*p).to_owned()).collect(),
            });
            return;
        }
        match check_reason(reason) {
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
    if !matches!(target.kind, TargetKind::File) {
        // Everything under `scope/` is contiguous; `scope-x` and friends sort outside it.
        let prefix = format!("{scope}/");
        let start = changed.partition_point(|p| p.as_str() < prefix.as_str());
        paths.extend(
            changed[start..]
                .iter()
                .take_while(|p| p.starts_with(&prefix))
                .map(String::as_str)
                .filter(|path| target.matches(path)),
        );
    }
    paths
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
mod tests {
    use super::*;
    use insta::{assert_json_snapshot, assert_snapshot};

    fn plan_targets(specs: &[&str]) -> Vec<Target> {
        let list = serde_json::to_string(specs).expect("specs serialize");
        crate::plan::parse("p.md", &format!("---\ntargets: {list}\n---\n"))
            .expect("test plan parses")
            .targets
    }

    fn diff(paths: &[&str]) -> Vec<String> {
        let mut paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
        paths.sort();
        paths
    }

    fn evidence(json: &str) -> Vec<EvidenceEntry> {
        parse_evidence("evidence.json", json)
            .expect("test evidence parses")
            .entries
    }

    fn trailer(commit: &str, target: &str, reason: &str) -> EvidenceEntry {
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

    fn shape_error(json: &str) -> String {
        parse_evidence("evidence.json", json)
            .expect_err("evidence is malformed")
            .to_string()
    }

    #[test]
    fn all_changed_needs_no_evidence() {
        let targets = plan_targets(&["docs/a.md", "src/parser/", "tests/**/*_golden.txt"]);
        let changed = diff(&[
            "docs/a.md",
            "src/parser/mod.rs",
            "src/parser/lexer.rs",
            "tests/cli/help_golden.txt",
            "tests/unit.rs",
        ]);
        let report = evaluate(&targets, &changed, &[], &[]);
        assert!(report.passed);
        assert_json_snapshot!(report, @r#"
            {
              "verified": true,
              "passed": true,
              "targets": [
                {
                  "target": "docs/a.md",
                  "status": "changed",
                  "paths": [
                    "docs/a.md"
                  ],
                  "reason": null,
                  "reason_source": null,
                  "line": 2
                },
                {
                  "target": "src/parser/",
                  "status": "changed",
                  "paths": [
                    "src/parser/lexer.rs",
                    "src/parser/mod.rs"
                  ],
                  "reason": null,
                  "reason_source": null,
                  "line": 2
                },
                {
                  "target": "tests/**/*_golden.txt",
                  "status": "changed",
                  "paths": [
                    "tests/cli/help_golden.txt"
                  ],
                  "reason": null,
                  "reason_source": null,
                  "line": 2
                }
              ],
              "problems": [],
              "contradictions": []
            }
            "#);
    }

    #[test]
    fn one_uncovered_fails() {
        let targets = plan_targets(&["docs/a.md", "docs/b.md"]);
        let report = evaluate(&targets, &diff(&["docs/a.md"]), &[], &[]);
        assert!(!report.passed);
        let uncovered: Vec<&str> = report.uncovered().map(|r| r.target.as_str()).collect();
        assert_eq!(uncovered, ["docs/b.md"]);
        assert_json_snapshot!(report, @r#"
            {
              "verified": true,
              "passed": false,
              "targets": [
                {
                  "target": "docs/a.md",
                  "status": "changed",
                  "paths": [
                    "docs/a.md"
                  ],
                  "reason": null,
                  "reason_source": null,
                  "line": 2
                },
                {
                  "target": "docs/b.md",
                  "status": "uncovered",
                  "paths": [],
                  "reason": null,
                  "reason_source": null,
                  "line": 2
                }
              ],
              "problems": [],
              "contradictions": []
            }
            "#);
    }

    #[test]
    fn unchanged_with_good_reason_passes() {
        let targets = plan_targets(&["docs/a.md", "docs/b.md"]);
        let entries = evidence(
            r#"{"target_coverage": [
                {"target": "docs/b.md", "status": "unchanged",
                 "reason": "  the CLI flags it documents did not change  "}
            ]}"#,
        );
        let report = evaluate(&targets, &diff(&["docs/a.md"]), &entries, &[]);
        assert!(report.passed);
        assert_json_snapshot!(report, @r#"
            {
              "verified": true,
              "passed": true,
              "targets": [
                {
                  "target": "docs/a.md",
                  "status": "changed",
                  "paths": [
                    "docs/a.md"
                  ],
                  "reason": null,
                  "reason_source": null,
                  "line": 2
                },
                {
                  "target": "docs/b.md",
                  "status": "unchanged",
                  "paths": [],
                  "reason": "the CLI flags it documents did not change",
                  "reason_source": {
                    "kind": "file",
                    "path": "evidence.json",
                    "index": 0
                  },
                  "line": 2
                }
              ],
              "problems": [],
              "contradictions": []
            }
            "#);
    }

    #[test]
    fn every_placeholder_is_rejected_however_dressed() {
        for placeholder in PLACEHOLDER_REASONS {
            for dressed in [
                (*placeholder).to_owned(),
                placeholder.to_uppercase(),
                format!("  {placeholder}.  "),
                format!("({placeholder})!"),
                placeholder.replace(' ', "  -  "),
            ] {
                assert_eq!(
                    check_reason(&dressed),
                    Err(ProblemKind::PlaceholderReason),
                    "{dressed:?}"
                );
            }
        }
        assert_eq!(check_reason("…"), Err(ProblemKind::PlaceholderReason));
        assert_eq!(
            check_reason("Won’t fix"),
            Err(ProblemKind::PlaceholderReason)
        );
        assert_eq!(
            check_reason("no_change_needed"),
            Err(ProblemKind::PlaceholderReason)
        );
        // Padding defeats the list; that is the documented limit, not a bug.
        assert_eq!(check_reason("no change needed here"), Ok(()));
    }

    #[test]
    fn placeholder_reasons_fail_the_gate() {
        let targets = plan_targets(&["docs/a.md", "docs/b.md"]);
        let entries = evidence(
            r#"{"target_coverage": [
                {"target": "docs/a.md", "status": "unchanged", "reason": "N/A."},
                {"target": "docs/b.md", "status": "unchanged", "reason": "No change needed"}
            ]}"#,
        );
        let report = evaluate(&targets, &[], &entries, &[]);
        assert!(!report.passed);
        assert_json_snapshot!(report, @r#"
            {
              "verified": true,
              "passed": false,
              "targets": [
                {
                  "target": "docs/a.md",
                  "status": "uncovered",
                  "paths": [],
                  "reason": null,
                  "reason_source": null,
                  "line": 2
                },
                {
                  "target": "docs/b.md",
                  "status": "uncovered",
                  "paths": [],
                  "reason": null,
                  "reason_source": null,
                  "line": 2
                }
              ],
              "problems": [
                {
                  "target": "docs/a.md",
                  "source": {
                    "kind": "file",
                    "path": "evidence.json",
                    "index": 0
                  },
                  "kind": "placeholder_reason",
                  "message": "reason \"N/A.\" for target \"docs/a.md\" is a placeholder: give a specific reason why it needed no change"
                },
                {
                  "target": "docs/b.md",
                  "source": {
                    "kind": "file",
                    "path": "evidence.json",
                    "index": 1
                  },
                  "kind": "placeholder_reason",
                  "message": "reason \"No change needed\" for target \"docs/b.md\" is a placeholder: give a specific reason why it needed no change"
                }
              ],
              "contradictions": []
            }
            "#);
    }

    #[test]
    fn reason_length_rule() {
        assert_eq!(check_reason(""), Err(ProblemKind::EmptyReason));
        assert_eq!(check_reason(" \n\t "), Err(ProblemKind::EmptyReason));
        assert_eq!(check_reason("kept it"), Err(ProblemKind::ReasonTooShort));
        // Three words but under 15 characters.
        assert_eq!(check_reason("it is fine"), Err(ProblemKind::ReasonTooShort));
        // 15 characters but two words.
        assert_eq!(
            check_reason("documentation-only"),
            Err(ProblemKind::ReasonTooShort)
        );
        assert_eq!(check_reason("API did not move"), Ok(()));
    }

    #[test]
    fn short_and_empty_reasons_fail_the_gate() {
        let targets = plan_targets(&["docs/a.md", "docs/b.md"]);
        let entries = evidence(
            r#"{"target_coverage": [
                {"target": "docs/a.md", "status": "unchanged", "reason": "it is fine"},
                {"target": "docs/b.md", "status": "unchanged", "reason": "   "}
            ]}"#,
        );
        let report = evaluate(&targets, &[], &entries, &[]);
        assert!(!report.passed);
        assert_json_snapshot!(report, @r#"
            {
              "verified": true,
              "passed": false,
              "targets": [
                {
                  "target": "docs/a.md",
                  "status": "uncovered",
                  "paths": [],
                  "reason": null,
                  "reason_source": null,
                  "line": 2
                },
                {
                  "target": "docs/b.md",
                  "status": "uncovered",
                  "paths": [],
                  "reason": null,
                  "reason_source": null,
                  "line": 2
                }
              ],
              "problems": [
                {
                  "target": "docs/a.md",
                  "source": {
                    "kind": "file",
                    "path": "evidence.json",
                    "index": 0
                  },
                  "kind": "reason_too_short",
                  "message": "reason \"it is fine\" for target \"docs/a.md\" is too short: give a specific reason (at least 3 words)"
                },
                {
                  "target": "docs/b.md",
                  "source": {
                    "kind": "file",
                    "path": "evidence.json",
                    "index": 1
                  },
                  "kind": "empty_reason",
                  "message": "reason for target \"docs/b.md\" is empty: give a specific reason (at least 3 words) why it needed no change"
                }
              ],
              "contradictions": []
            }
            "#);
    }

    #[test]
    fn claims_the_diff_does_not_show() {
        let targets = plan_targets(&["docs/", "src/main.rs"]);
        let entries = evidence(
            r#"{"target_coverage": [
                {"target": "docs/", "status": "changed",
                 "paths": ["docs/a.md", "docs/ghost.md", "src/main.rs", "docs/a.md"]}
            ]}"#,
        );
        let report = evaluate(
            &targets,
            &diff(&["docs/a.md", "src/main.rs"]),
            &entries,
            &[],
        );
        // Both targets changed; only the false claims fail the gate.
        assert!(report.uncovered().next().is_none());
        assert!(!report.passed);
        assert_json_snapshot!(report, @r#"
            {
              "verified": true,
              "passed": false,
              "targets": [
                {
                  "target": "docs/",
                  "status": "changed",
                  "paths": [
                    "docs/a.md"
                  ],
                  "reason": null,
                  "reason_source": null,
                  "line": 2
                },
                {
                  "target": "src/main.rs",
                  "status": "changed",
                  "paths": [
                    "src/main.rs"
                  ],
                  "reason": null,
                  "reason_source": null,
                  "line": 2
                }
              ],
              "problems": [
                {
                  "target": "docs/",
                  "source": {
                    "kind": "file",
                    "path": "evidence.json",
                    "index": 0
                  },
                  "kind": "claim_not_in_diff",
                  "message": "claims \"docs/ghost.md\" changed for target \"docs/\", but the diff does not change it"
                },
                {
                  "target": "docs/",
                  "source": {
                    "kind": "file",
                    "path": "evidence.json",
                    "index": 0
                  },
                  "kind": "claim_not_in_diff",
                  "message": "claims \"src/main.rs\" for target \"docs/\", but the target does not match that path"
                }
              ],
              "contradictions": []
            }
            "#);
    }

    #[test]
    fn changed_claim_cannot_cover_an_unchanged_target() {
        let targets = plan_targets(&["docs/a.md"]);
        let entries = evidence(
            r#"{"target_coverage": [
                {"target": "docs/a.md", "status": "changed", "paths": ["docs/a.md"]}
            ]}"#,
        );
        let report = evaluate(&targets, &[], &entries, &[]);
        assert_eq!(report.uncovered().count(), 1);
        assert_eq!(report.problems[0].kind, ProblemKind::ClaimNotInDiff);
    }

    #[test]
    fn duplicate_entries_across_files() {
        let targets = plan_targets(&["docs/a.md"]);
        let mut entries = evidence(
            r#"{"target_coverage": [
                {"target": "docs/a.md", "status": "unchanged", "reason": "the public API did not change"}
            ]}"#,
        );
        entries.extend(
            parse_evidence(
                "more/evidence.json",
                r#"{"target_coverage": [
                    {"target": "docs/a.md", "status": "unchanged", "reason": "n/a"}
                ]}"#,
            )
            .expect("parses")
            .entries,
        );
        let report = evaluate(&targets, &[], &entries, &[]);
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
                  "reason": "the public API did not change",
                  "reason_source": {
                    "kind": "file",
                    "path": "evidence.json",
                    "index": 0
                  },
                  "line": 2
                }
              ],
              "problems": [
                {
                  "target": "docs/a.md",
                  "source": {
                    "kind": "file",
                    "path": "more/evidence.json",
                    "index": 0
                  },
                  "kind": "duplicate_entry",
                  "message": "second entry for target \"docs/a.md\" (the first is evidence.json: entry 0); give one entry per target"
                }
              ],
              "contradictions": []
            }
            "#);
    }

    #[test]
    fn unknown_targets_suggest_the_closest() {
        let targets = plan_targets(&["docs/guide.md", "src/parser/", "tests/**/*_golden.txt"]);
        let entries = evidence(
            r#"{"target_coverage": [
                {"target": "docs/guid.md", "status": "unchanged", "reason": "only typos were in scope"},
                {"target": "./src//parser", "status": "unchanged", "reason": "only typos were in scope"},
                {"target": "src/parser/lexer.rs", "status": "unchanged", "reason": "only typos were in scope"},
                {"target": "DOCS/GUIDE.md", "status": "unchanged", "reason": "only typos were in scope"},
                {"target": "Cargo.toml", "status": "unchanged", "reason": "only typos were in scope"}
            ]}"#,
        );
        let report = evaluate(&targets, &[], &entries, &[]);
        let messages: Vec<String> = report
            .problems
            .iter()
            .map(|p| format!("{}: {:?}: {}", p.source, p.kind, p.message))
            .collect();
        assert_snapshot!(messages.join("\n"), @r#"
            evidence.json: entry 0: UnknownTarget: target "docs/guid.md" is not declared by the plan; did you mean "docs/guide.md"?
            evidence.json: entry 1: UnknownTarget: target "./src//parser" is not declared by the plan; did you mean "src/parser/"?
            evidence.json: entry 2: UnknownTarget: target "src/parser/lexer.rs" is not declared by the plan; did you mean "src/parser/"?
            evidence.json: entry 3: UnknownTarget: target "DOCS/GUIDE.md" is not declared by the plan; did you mean "docs/guide.md"?
            evidence.json: entry 4: UnknownTarget: target "Cargo.toml" is not declared by the plan
            "#);
    }

    #[test]
    fn unchanged_entry_for_changed_target_is_a_contradiction() {
        let targets = plan_targets(&["docs/a.md", "src/parser/"]);
        let entries = evidence(
            r#"{"target_coverage": [
                {"target": "src/parser/", "status": "unchanged", "reason": "n/a"}
            ]}"#,
        );
        let changed = diff(&["docs/a.md", "src/parser/mod.rs"]);
        let report = evaluate(&targets, &changed, &entries, &[]);
        // The diff wins, and the unused reason is not judged.
        assert!(report.passed);
        assert_json_snapshot!(report, @r#"
            {
              "verified": true,
              "passed": true,
              "targets": [
                {
                  "target": "docs/a.md",
                  "status": "changed",
                  "paths": [
                    "docs/a.md"
                  ],
                  "reason": null,
                  "reason_source": null,
                  "line": 2
                },
                {
                  "target": "src/parser/",
                  "status": "changed",
                  "paths": [
                    "src/parser/mod.rs"
                  ],
                  "reason": null,
                  "reason_source": null,
                  "line": 2
                }
              ],
              "problems": [],
              "contradictions": [
                {
                  "target": "src/parser/",
                  "source": {
                    "kind": "file",
                    "path": "evidence.json",
                    "index": 0
                  },
                  "reason": "n/a",
                  "paths": [
                    "src/parser/mod.rs"
                  ]
                }
              ]
            }
            "#);
    }

    #[test]
    fn dir_and_glob_targets() {
        let targets = plan_targets(&[
            "src/parser/",
            "src/lexer/",
            "tests/**/*_golden.txt",
            "**/*.md",
            "pages/[id].tsx",
            "crates/*/Cargo.toml",
        ]);
        let changed = diff(&[
            "README.md",
            "crates/a/Cargo.toml",
            "crates/a/src/Cargo.toml",
            "docs/x/y.md",
            "pages/[id].tsx",
            "src/lexer",
            "src/lexer-old/a.rs",
            "src/lexer.rs",
            "src/parser/a/b/c.rs",
            "src/parser/mod.rs",
            "tests/golden.txt",
            "tests/x_golden.txt",
            "tests/y/z_golden.txt",
        ]);
        let report = evaluate(&targets, &changed, &[], &[]);
        let rows: Vec<String> = report
            .targets
            .iter()
            .map(|r| format!("{} {:?} {:?}", r.target, r.status, r.paths))
            .collect();
        assert_snapshot!(rows.join("\n"), @r#"
            src/parser/ Changed ["src/parser/a/b/c.rs", "src/parser/mod.rs"]
            src/lexer/ Uncovered []
            tests/**/*_golden.txt Changed ["tests/x_golden.txt", "tests/y/z_golden.txt"]
            **/*.md Changed ["README.md", "docs/x/y.md"]
            pages/[id].tsx Changed ["pages/[id].tsx"]
            crates/*/Cargo.toml Changed ["crates/a/Cargo.toml"]
            "#);
    }

    #[test]
    fn narrowed_matching_agrees_with_a_full_scan() {
        let targets = plan_targets(&[
            "a/",
            "a/b",
            "a/b/",
            "a-b/",
            "a/**/*.rs",
            "*/b/*",
            "a/b/c.rs",
            "{a,b}/c.rs",
        ]);
        let mut changed = Vec::new();
        for top in ["a", "a-b", "a.b", "a0", "b", "ab"] {
            for mid in ["", "b/", "b-c/", "b/c/"] {
                for leaf in ["c.rs", "d.md", "b"] {
                    changed.push(format!("{top}/{mid}{leaf}"));
                }
            }
            changed.push(top.to_owned());
        }
        changed.sort();
        changed.dedup();
        for target in &targets {
            let naive: Vec<&str> = changed
                .iter()
                .map(String::as_str)
                .filter(|p| target.matches(p))
                .collect();
            assert_eq!(covered_paths(target, &changed), naive, "{}", target.spec);
        }
    }

    #[test]
    fn unsorted_input_is_sorted_first() {
        let targets = plan_targets(&["src/"]);
        let changed: Vec<String> = ["src/b.rs", "src/a.rs", "src/b.rs"]
            .map(str::to_owned)
            .to_vec();
        let report = evaluate(&targets, &changed, &[], &[]);
        assert_eq!(report.targets[0].paths, ["src/a.rs", "src/b.rs"]);
    }

    #[test]
    fn no_targets_verifies_nothing() {
        let mut report = evaluate(
            &[],
            &diff(&["a.rs"]),
            &[],
            &[trailer("c0ffee", "a.rs", "x")],
        );
        assert_json_snapshot!(report, @r#"
            {
              "verified": false,
              "passed": true,
              "targets": [],
              "problems": [],
              "contradictions": []
            }
            "#);
        report.require_targets();
        assert!(!report.passed);

        // Evidence naming targets of a plan that has none is still invalid.
        let entries = evidence(
            r#"{"target_coverage": [{"target": "a.rs", "status": "changed", "paths": ["a.rs"]}]}"#,
        );
        let report = evaluate(&[], &diff(&["a.rs"]), &entries, &[]);
        assert!(!report.verified && !report.passed);
        assert_eq!(report.problems[0].kind, ProblemKind::UnknownTarget);
    }

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

    #[test]
    fn evidence_parses_with_usage() {
        let evidence = parse_evidence(
            "ev.json",
            "\u{feff}{\"target_coverage\": [{\"target\": \"a.md\", \"status\": \"changed\", \"paths\": [\"a.md\"]}],
              \"usage\": {\"input_tokens\": 1200, \"output_tokens\": 300, \"cost_usd\": 0.02,
                        \"model\": \"m\", \"cache_tokens\": 5}}",
        )
        .expect("parses");
        assert_json_snapshot!(evidence, @r#"
            {
              "entries": [
                {
                  "target": "a.md",
                  "status": "changed",
                  "paths": [
                    "a.md"
                  ],
                  "source": {
                    "kind": "file",
                    "path": "ev.json",
                    "index": 0
                  }
                }
              ],
              "usage": {
                "input_tokens": 1200,
                "output_tokens": 300,
                "cost_usd": 0.02,
                "model": "m"
              }
            }
            "#);
        assert_eq!(
            parse_evidence("e", "{}").expect("parses"),
            Evidence::default()
        );
        assert_eq!(
            parse_evidence("e", r#"{"target_coverage": null, "usage": null}"#).expect("parses"),
            Evidence::default()
        );
    }

    #[test]
    fn evidence_shape_errors() {
        let errors = [
            "",
            "[]",
            "{\"target_coverage\": [], \"notes\": \"hi\"}",
            "{\"target_coverage\": {}}",
            "{\"target_coverage\": [\n  {\"target\": \"a.md\", \"status\": \"unchanged\", \"reason\": \"a real reason here\"},\n  {\"target\": \"b.md\", \"status\": \"unchanged\", \"reasn\": \"typo\"}\n]}",
            "{\"target_coverage\": [{\"target\": \"a.md\", \"status\": \"done\"}]}",
            "{\"target_coverage\": [{\"status\": \"changed\", \"paths\": [\"a.md\"]}]}",
            "{\"target_coverage\": [{\"target\": \"\", \"status\": \"changed\", \"paths\": [\"a.md\"]}]}",
            "{\"target_coverage\": [{\"target\": \"a.md\", \"status\": \"changed\"}]}",
            "{\"target_coverage\": [{\"target\": \"a.md\", \"status\": \"changed\", \"paths\": []}]}",
            "{\"target_coverage\": [{\"target\": \"a.md\", \"status\": \"changed\", \"paths\": [\"a.md\"], \"reason\": \"x\"}]}",
            "{\"target_coverage\": [{\"target\": \"a.md\", \"status\": \"unchanged\"}]}",
            "{\"target_coverage\": [{\"target\": \"a.md\", \"status\": \"unchanged\", \"reason\": \"a b c d\", \"paths\": [\"a.md\"]}]}",
            "{\"target_coverage\": [{\"target\": \"a.md\", \"status\": \"unchanged\", \"reason\": 7}]}",
            "{\"target_coverage\": [\"a.md\"]}",
            "{\"usage\": {\"input_tokens\": -5}}",
            "{\"target_coverage\": [] ",
        ];
        let rendered: Vec<String> = errors.iter().map(|json| shape_error(json)).collect();
        assert_snapshot!(rendered.join("\n"), @r#"
            evidence.json: the file is empty; expected an evidence object like {"target_coverage": [...]}
            evidence.json:1:1: invalid type: sequence, expected an evidence object like {"target_coverage": [...]}
            evidence.json:1:31: unknown field `notes`, expected `target_coverage` or `usage`
            evidence.json:1:20: invalid type: map, expected a list of target coverage entries
            evidence.json:3:51: entry 1: unknown field `reasn`, expected one of `target`, `status`, `paths`, `reason`
            evidence.json:1:56: entry 0: unknown variant `done`, expected `changed` or `unchanged`
            evidence.json:1:61: entry 0: missing field `target`
            evidence.json:1:75: entry 0: "target" is empty
            evidence.json:1:60: entry 0: target "a.md": status "changed" requires "paths": the changed paths under the target
            evidence.json:1:73: entry 0: target "a.md": status "changed" requires a non-empty "paths" list
            evidence.json:1:94: entry 0: target "a.md": status "changed" takes "paths", not "reason" (the diff speaks for itself)
            evidence.json:1:62: entry 0: target "a.md": status "unchanged" requires "reason": why the target needed no change
            evidence.json:1:102: entry 0: target "a.md": status "unchanged" takes "reason", not "paths"
            evidence.json:1:74: entry 0: invalid type: integer `7`, expected a string
            evidence.json:1:27: entry 0: invalid type: string "a.md", expected an entry object like {"target": ..., "status": ..., "reason"/"paths": ...}
            evidence.json:1:29: invalid value: integer `-5`, expected u64
            evidence.json:1:23: EOF while parsing an object
            "#);
    }

    #[test]
    fn sources_render() {
        let file = Source::File {
            path: "evidence.json".to_owned(),
            index: 2,
        };
        assert_eq!(file.to_string(), "evidence.json: entry 2");
        let short = Source::Trailer {
            commit: "abc".to_owned(),
        };
        assert_eq!(short.to_string(), "commit abc trailer");
    }
}
