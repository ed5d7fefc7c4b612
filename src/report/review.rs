//! The reviewer's page of a run: coverage per target with paths or reasons, contradictions, who
//! changed what in each attempt, and the diffstat of the work.

use std::fmt::Write;

use crate::coverage::TargetStatus;
use crate::git::{Contents, Unshowable, unshowable};
use crate::report::status::{duration, word};
use crate::report::{bound, escape, width};
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
    let title = state
        .plan
        .title
        .as_deref()
        .map(|t| format!(" — {}", escape::line(t)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "review of run {} ({}){title}",
        state.run_id,
        word(state.status())
    );
    let _ = writeln!(out, "  plan      {}", escape::line(&state.plan.path));
    crate::report::status::where_lines(&mut out, state);

    let _ = writeln!(
        out,
        "\ncoverage{}",
        crate::report::status::derived_note(state)
    );
    match state.coverage() {
        _ if state.plan.targets.is_empty() => {
            let _ = writeln!(
                out,
                "  not verified: {}; review the whole diff",
                crate::report::status::no_targets(state)
            );
        }
        None => {
            let _ = writeln!(out, "  no gate has run yet");
        }
        Some(report) => {
            let targets: Vec<_> = report
                .targets
                .iter()
                .map(|t| escape::line(&t.target))
                .collect();
            let cells = width::widest(targets.iter().map(|t| t.as_ref()));
            for (t, target) in report.targets.iter().zip(&targets) {
                let detail = match t.status {
                    TargetStatus::Changed => {
                        bound::joined(&t.paths, |p| escape::line(p).into_owned())
                    }
                    TargetStatus::Unchanged => format!(
                        "needed no change, because: {}{}",
                        escape::line(t.reason.as_deref().unwrap_or("")),
                        t.reason_source
                            .as_ref()
                            .map(|s| format!(" ({})", escape::line(&s.to_string())))
                            .unwrap_or_default()
                    ),
                    TargetStatus::Uncovered => "UNCOVERED".into(),
                    TargetStatus::Missing => {
                        format!("MISSING: names no path{}", super::gate::did_you_mean(t))
                    }
                };
                let status = width::status(&word(t.status), 10);
                let target = width::left(target, cells);
                let _ = writeln!(out, "  {status} {target}  {detail}");
            }
            for c in &report.contradictions {
                let _ = writeln!(
                    out,
                    "  note: {} calls `{}` unchanged (\"{}\"), but the diff changed {}",
                    escape::line(&c.source.to_string()),
                    escape::line(&c.target),
                    escape::line(&c.reason),
                    bound::joined(&c.paths, |p| escape::line(p).into_owned())
                );
            }
        }
    }

    if !state.checks().is_empty() {
        let _ = writeln!(
            out,
            "\nchecks: {}",
            crate::report::status::checks_verdict(state)
        );
        crate::report::status::checks_lines(&mut out, state, "  ");
    }

    let _ = writeln!(
        out,
        "\nattempts (what each changed against the snapshot before it)"
    );
    for a in attempts {
        let took = a.duration_ms.map(duration).unwrap_or_else(|| "-".into());
        let changed = match &a.paths {
            None => "no snapshot".to_string(),
            Some(p) if p.is_empty() => "changed nothing".to_string(),
            Some(p) => bound::joined(p, |p| escape::line(p).into_owned()),
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
    let next = if state.status() == crate::state::RunStatus::Review {
        format!(
            "git baton finish {}   (commits the rest with its reasons), then merge branch {}",
            state.run_id, state.branch
        )
    } else {
        crate::report::status::next_command(state, false)
    };
    let _ = writeln!(out, "\nnext: {next}");
    out
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
