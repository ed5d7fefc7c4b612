//! Reasons: whether an `unchanged` claim says why in a way that can be checked.
//!
//! The gate cannot judge whether a reason is true, only whether it is the kind of answer that
//! can be checked. A reason is trimmed and then acceptable when it
//!
//! - is not empty ([`ProblemKind::EmptyReason`]);
//! - has at most [`MAX_REASON_CHARS`] characters ([`ProblemKind::ReasonTooLong`]): a reason is a
//!   sentence or two for a reviewer, and every report echoes it, so an agent's or a pull
//!   request's megabytes must not reach the terminal, the RunState or a CI log;
//! - holds no control character but the tab ([`ProblemKind::ControlCharacter`], located by
//!   [`control_character`]): a reason travels into the `finish` commit as a one-line
//!   `Baton-Unchanged` trailer, where git refuses a NUL, a line break would be folded into
//!   something else than what passed the gate, and an ESC or a BEL would reach every later
//!   reader of `git log` raw. A tab survives that trip unchanged, so it is kept;
//! - is not a placeholder ([`ProblemKind::PlaceholderReason`]): lowercased, with `-` and `_`
//!   read as spaces, whitespace collapsed and non-alphanumeric characters stripped from both
//!   ends, it is neither empty (`...`, `?`) nor one of [`PLACEHOLDER_REASONS`] normalized the
//!   same way;
//! - has at least [`MIN_REASON_WORDS`] words and [`MIN_REASON_CHARS`] characters
//!   ([`ProblemKind::ReasonTooShort`]).
//!
//! Placeholders are checked before length so that `n/a` is reported as what it is. A placeholder
//! padded to length ("no change needed here") passes: the list catches habits, not intent.

use super::ProblemKind;

/// Minimum number of whitespace-separated words in an acceptable reason.
pub const MIN_REASON_WORDS: usize = 3;

/// Minimum number of characters (after trimming) in an acceptable reason.
pub const MIN_REASON_CHARS: usize = 15;

/// Maximum number of characters (after trimming) in an acceptable reason.
pub const MAX_REASON_CHARS: usize = 2000;

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

/// Checks a reason against the policy of the module documentation.
///
/// # Errors
///
/// The [`ProblemKind`] (`EmptyReason`, `ReasonTooLong`, `ControlCharacter`,
/// `PlaceholderReason` or `ReasonTooShort`) of a reason that is not acceptable.
pub fn check_reason(reason: &str) -> Result<(), ProblemKind> {
    let trimmed = reason.trim();
    if trimmed.is_empty() {
        return Err(ProblemKind::EmptyReason);
    }
    // Before anything that copies the text: `nth` stops counting at the limit.
    if trimmed.chars().nth(MAX_REASON_CHARS).is_some() {
        return Err(ProblemKind::ReasonTooLong);
    }
    if control_character(trimmed).is_some() {
        return Err(ProblemKind::ControlCharacter);
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

/// The first control character of `reason` that a reason may not hold (any but the tab), with
/// its 1-based position in characters: where an error points.
#[must_use]
pub fn control_character(reason: &str) -> Option<(usize, char)> {
    reason
        .chars()
        .enumerate()
        .find(|(_, c)| c.is_control() && *c != '\t')
        .map(|(at, c)| (at + 1, c))
}

/// `character N (U+XXXX)`: where [`control_character`] found one, without printing it.
#[must_use]
pub fn control_character_at(reason: &str) -> String {
    match control_character(reason) {
        Some((at, c)) => format!("character {at} (U+{:04X})", u32::from(c)),
        None => "no character".to_owned(),
    }
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

#[cfg(test)]
mod tests {
    use crate::coverage::test_support::*;
    use crate::coverage::*;
    use insta::assert_snapshot;

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
        let longest = format!("{} end", "word ".repeat(MAX_REASON_CHARS / 5 - 1));
        assert_eq!(longest.chars().count(), MAX_REASON_CHARS - 1);
        assert_eq!(check_reason(&format!(" {longest}! \n")), Ok(()));
        assert_eq!(
            check_reason(&format!("{longest}!!")),
            Err(ProblemKind::ReasonTooLong)
        );
        // Characters, not bytes: 2,000 three-byte characters are within the limit.
        let wide = format!("é {}", "語".repeat(MAX_REASON_CHARS - 4));
        assert_eq!(check_reason(&format!("{wide} x")), Ok(()));
        assert_eq!(
            check_reason(&format!("{wide} xy")),
            Err(ProblemKind::ReasonTooLong)
        );
    }

    /// Every control character but the tab is refused wherever it is, and located by character;
    /// a tab is plain whitespace.
    #[test]
    fn control_characters_are_refused_and_located() {
        let good = "the grading rule in section three";
        for c in (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32) {
            let at_start = format!("{c}{good}");
            let inside = format!("the {c} grading rule in section three");
            let expected = if c == '\t' {
                Ok(())
            } else {
                Err(ProblemKind::ControlCharacter)
            };
            assert_eq!(check_reason(&inside), expected, "U+{:04X}", u32::from(c));
            if c == '\t' || c.is_whitespace() {
                // Leading whitespace is trimmed before the rule looks.
                continue;
            }
            assert_eq!(check_reason(&at_start), expected, "U+{:04X}", u32::from(c));
            assert_eq!(control_character(&at_start), Some((1, c)));
        }
        assert_eq!(check_reason("the\tgrading rule in\tsection three"), Ok(()));
        assert_eq!(
            control_character_at("nul \u{0} and a long enough reason"),
            "character 5 (U+0000)"
        );
        assert_eq!(control_character_at("é \u{9b}"), "character 3 (U+009B)");
        assert_eq!(control_character("plain text"), None);
        // A line break inside is refused; one at an end is trimmed like any whitespace.
        assert_eq!(
            check_reason("two\nlines of a reason here"),
            Err(ProblemKind::ControlCharacter)
        );
        assert_eq!(check_reason(&format!("{good}\r\n")), Ok(()));
    }

    /// Each kind of unacceptable reason is a problem of its own that names the reason (but for
    /// an empty one), and leaves its target uncovered.
    #[test]
    fn placeholder_short_and_empty_reasons_fail_the_gate() {
        let targets = plan_targets(&["docs/a.md", "docs/b.md", "docs/c.md", "docs/d.md"]);
        let entries = evidence(
            r#"{"target_coverage": [
                {"target": "docs/a.md", "status": "unchanged", "reason": "N/A."},
                {"target": "docs/b.md", "status": "unchanged", "reason": "No change needed"},
                {"target": "docs/c.md", "status": "unchanged", "reason": "it is fine"},
                {"target": "docs/d.md", "status": "unchanged", "reason": "   "}
            ]}"#,
        );
        let report = evaluate(&targets, &[], &entries, &[]);
        assert!(!report.passed && report.verified && report.contradictions.is_empty());
        let rows: Vec<String> = report
            .targets
            .iter()
            .map(|row| format!("{row:?}"))
            .collect();
        assert_snapshot!(rows.join("\n"), @r#"
        TargetReport { target: "docs/a.md", status: Uncovered, paths: [], paths_omitted: 0, reason: None, reason_source: None, line: 2, suggestion: None }
        TargetReport { target: "docs/b.md", status: Uncovered, paths: [], paths_omitted: 0, reason: None, reason_source: None, line: 2, suggestion: None }
        TargetReport { target: "docs/c.md", status: Uncovered, paths: [], paths_omitted: 0, reason: None, reason_source: None, line: 2, suggestion: None }
        TargetReport { target: "docs/d.md", status: Uncovered, paths: [], paths_omitted: 0, reason: None, reason_source: None, line: 2, suggestion: None }
        "#);
        let problems: Vec<String> = report
            .problems
            .iter()
            .map(|p| format!("{} | {} | {:?} | {}", p.target, p.source, p.kind, p.message))
            .collect();
        assert_snapshot!(problems.join("\n"), @r#"
        docs/a.md | evidence.json: entry 0 | PlaceholderReason | reason "N/A." for target "docs/a.md" is a placeholder: give a specific reason why it needed no change
        docs/b.md | evidence.json: entry 1 | PlaceholderReason | reason "No change needed" for target "docs/b.md" is a placeholder: give a specific reason why it needed no change
        docs/c.md | evidence.json: entry 2 | ReasonTooShort | reason "it is fine" for target "docs/c.md" is too short: give a specific reason (at least 3 words)
        docs/d.md | evidence.json: entry 3 | EmptyReason | reason for target "docs/d.md" is empty: give a specific reason (at least 3 words) why it needed no change
        "#);
    }
}
