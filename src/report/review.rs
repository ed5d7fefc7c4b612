//! The reviewer's page of a run: coverage per target with paths or reasons, contradictions, who
//! changed what in each attempt, and the diffstat of the work.

use std::fmt::Write;

use crate::coverage::{TargetReport, TargetStatus};
use crate::git::{Contents, Unshowable, unshowable};
use crate::report::status::{self, duration, word};
use crate::report::{escape, rows, width};
use crate::state::RunState;

/// One attempt as the review shows it: who, how it ended, and the paths it changed.
pub struct AttemptChanges {
    pub stage: String,
    pub n: u32,
    pub actor: String,
    pub outcome: String,
    pub duration_ms: Option<u64>,
    /// `None` when the attempt has no snapshot to compare.
    pub paths: Option<Vec<String>>,
}

/// Lines added and removed per path, base → worktree now.
pub struct Stat {
    pub path: String,
    pub lines: Lines,
}

/// What the diffstat says of one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lines {
    Counted {
        added: usize,
        removed: usize,
    },
    /// Either side is binary (git's rule: a NUL in its first 8,000 bytes).
    Binary,
    /// Either side is larger than [`crate::git::CONTENTS_LIMIT`]: the larger side's size.
    Large(u64),
    /// The worktree holds something git cannot store there: its kind.
    Special(&'static str),
}

/// `stats_source` says what the diffstat compares (`worktree now`, `branch`).
pub fn render(
    state: &RunState,
    attempts: &[AttemptChanges],
    stats: &[Stat],
    stats_source: &str,
) -> String {
    let mut out = String::new();
    heading(&mut out, state);
    coverage(&mut out, state);
    checks(&mut out, state);
    attempt_lines(&mut out, attempts);
    diffstat(&mut out, stats, stats_source);
    let _ = writeln!(out, "\nnext: {}", next(state));
    out
}

/// The run, its status and its plan's title, then where the work is.
fn heading(out: &mut String, state: &RunState) {
    let _ = writeln!(
        out,
        "review of run {} ({}){}",
        state.run_id,
        word(state.status()),
        rows::title(state)
    );
    let _ = writeln!(out, "  plan      {}", escape::line(&state.plan.path));
    status::where_lines(out, state);
}

/// The gate's verdict per target, with the paths or the reason of each, and the contradictions
/// between the reasons given and the diff.
fn coverage(out: &mut String, state: &RunState) {
    let _ = writeln!(out, "\ncoverage{}", status::derived_note(state));
    match state.coverage() {
        _ if state.plan.targets.is_empty() => {
            let _ = writeln!(
                out,
                "  not verified: {}; review the whole diff",
                status::no_targets(state)
            );
        }
        None => {
            let _ = writeln!(out, "  no gate has run yet");
        }
        Some(report) => {
            rows::targets(out, &report.targets, "  ", target_detail);
            for c in &report.contradictions {
                let _ = writeln!(
                    out,
                    "  note: {} calls `{}` unchanged (\"{}\"), but the diff changed {}",
                    escape::line(&c.source.to_string()),
                    escape::line(&c.target),
                    escape::line(&c.reason),
                    rows::paths(&c.paths)
                );
            }
        }
    }
}

/// What the review says of one target: the paths that cover it, or why it needed none.
fn target_detail(t: &TargetReport) -> String {
    match t.status {
        TargetStatus::Changed => rows::paths(&t.paths),
        TargetStatus::Unchanged => format!("needed no change, because: {}", rows::reason(t)),
        TargetStatus::Uncovered => "UNCOVERED".into(),
        TargetStatus::Missing => {
            format!("MISSING: names no path{}", super::gate::did_you_mean(t))
        }
        TargetStatus::Touched => format!(
            "TOUCHED: {}: {}",
            super::gate::TOUCHED_DETAIL,
            rows::paths(&t.paths)
        ),
    }
}

/// The runner's checks of the latest attempt that ran them, when any did.
fn checks(out: &mut String, state: &RunState) {
    if !state.checks().is_empty() {
        let _ = writeln!(out, "\nchecks: {}", status::checks_verdict(state));
        status::checks_lines(out, state, "  ");
    }
}

/// One line per attempt: who ran it, how it ended, how long it took and what it changed.
fn attempt_lines(out: &mut String, attempts: &[AttemptChanges]) {
    let _ = writeln!(
        out,
        "\nattempts (what each changed against the snapshot before it)"
    );
    for a in attempts {
        let took = a.duration_ms.map(duration).unwrap_or_else(|| "-".into());
        let changed = match &a.paths {
            None => "no snapshot".to_string(),
            Some(p) if p.is_empty() => "changed nothing".to_string(),
            Some(p) => rows::paths(p),
        };
        let _ = writeln!(
            out,
            "  {} #{:<2} {} {} {took:>8}  {changed}",
            width::left(&a.stage, 10),
            a.n,
            width::left(&a.actor, 10),
            width::status(&a.outcome, 13),
        );
    }
}

/// Lines added and removed per path, with the total.
fn diffstat(out: &mut String, stats: &[Stat], stats_source: &str) {
    let _ = writeln!(out, "\ndiffstat (base → {stats_source})");
    if stats.is_empty() {
        let _ = writeln!(out, "  no changes");
    }
    let paths: Vec<_> = stats.iter().map(|s| escape::line(&s.path)).collect();
    let cells = width::widest(paths.iter().map(|p| p.as_ref()));
    let (mut added, mut removed) = (0, 0);
    for (s, path) in stats.iter().zip(&paths) {
        let detail = match &s.lines {
            Lines::Counted {
                added: a,
                removed: r,
            } => {
                added += a;
                removed += r;
                format!("+{a} -{r}")
            }
            Lines::Binary => "binary".to_string(),
            Lines::Large(bytes) => format!("{}, lines not counted", size(*bytes)),
            Lines::Special(kind) => format!("{kind}: not a file git can store"),
        };
        let _ = writeln!(out, "  {} | {detail}", width::left(path, cells));
    }
    if !stats.is_empty() {
        let _ = writeln!(out, "  {} path(s), +{added} -{removed}", stats.len());
    }
}

/// What to type next: for a run in review, how to finish and merge it.
fn next(state: &RunState) -> String {
    if state.status() == crate::state::RunStatus::Review {
        format!(
            "git baton finish {}   (commits the rest with its reasons), then merge branch {}",
            state.run_id, state.branch
        )
    } else {
        status::next_command(state, false)
    }
}

/// A size in bytes as people read it: `1.0 GiB`, `9.5 MiB`, `812 bytes`.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// Lines added and removed between two versions of a file (`None`: absent on that side), as
/// far as they were read (see [`Contents`]).
pub fn stat(path: &str, before: Option<&Contents>, after: Option<&Contents>) -> Stat {
    let lines = match unshowable([before, after]) {
        Some(Unshowable::Special(kind)) => Lines::Special(kind),
        Some(Unshowable::Binary) => Lines::Binary,
        Some(Unshowable::Large(bytes)) => Lines::Large(bytes),
        None => {
            let text = |side: Option<&Contents>| match side {
                Some(Contents::Bytes(bytes)) => String::from_utf8_lossy(bytes).into_owned(),
                _ => String::new(),
            };
            let (old, new) = (text(before), text(after));
            let diff = similar::TextDiff::from_lines(old.as_str(), new.as_str());
            let (mut added, mut removed) = (0, 0);
            for change in diff.iter_all_changes() {
                match change.tag() {
                    similar::ChangeTag::Insert => added += 1,
                    similar::ChangeTag::Delete => removed += 1,
                    similar::ChangeTag::Equal => {}
                }
            }
            Lines::Counted { added, removed }
        }
    };
    Stat {
        path: path.into(),
        lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_diffstat_counts_lines_only_of_what_was_read() {
        let bytes = |s: &str| Contents::Bytes(s.as_bytes().to_vec());
        fn lines(before: Option<&Contents>, after: Option<&Contents>) -> Lines {
            stat("p", before, after).lines
        }
        assert_eq!(
            lines(Some(&bytes("a\nb\n")), Some(&bytes("a\nc\nd\n"))),
            Lines::Counted {
                added: 2,
                removed: 1
            }
        );
        assert_eq!(
            lines(None, Some(&bytes("x\n"))),
            Lines::Counted {
                added: 1,
                removed: 0
            }
        );
        assert_eq!(lines(Some(&bytes("a\0")), None), Lines::Binary);
        assert_eq!(lines(None, Some(&Contents::Binary)), Lines::Binary);
        assert_eq!(
            lines(Some(&bytes("a\n")), Some(&Contents::Large(1 << 30))),
            Lines::Large(1 << 30)
        );
        assert_eq!(
            lines(
                Some(&bytes("a\n")),
                Some(&Contents::Special("named pipe (FIFO)"))
            ),
            Lines::Special("named pipe (FIFO)")
        );
        assert_eq!(size(812), "812 bytes");
        assert_eq!(size(9 * 1024 * 1024 + 512 * 1024), "9.5 MiB");
        assert_eq!(size(1 << 30), "1.0 GiB");
    }
}
