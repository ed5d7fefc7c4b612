//! The reviewer's page of a run: coverage per target with paths or reasons, contradictions, who
//! changed what in each attempt, and the diffstat of the work.

use std::fmt::Write;

use crate::coverage::TargetStatus;
use crate::report::status::{duration, word};
use crate::report::{escape, width};
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
    pub added: usize,
    pub removed: usize,
    pub binary: bool,
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
                    TargetStatus::Changed => escape::line(&t.paths.join(", ")).into_owned(),
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
                    escape::line(&c.paths.join(", "))
                );
            }
        }
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
            Some(p) => escape::line(&p.join(", ")).into_owned(),
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
        added += s.added;
        removed += s.removed;
        let detail = if s.binary {
            "binary".to_string()
        } else {
            format!("+{} -{}", s.added, s.removed)
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

/// Lines added and removed between two versions of a file.
pub fn stat(path: &str, before: Option<&[u8]>, after: Option<&[u8]>) -> Stat {
    let binary = before.is_some_and(|d| d.contains(&0)) || after.is_some_and(|d| d.contains(&0));
    if binary {
        return Stat {
            path: path.into(),
            added: 0,
            removed: 0,
            binary,
        };
    }
    let old = String::from_utf8_lossy(before.unwrap_or_default());
    let new = String::from_utf8_lossy(after.unwrap_or_default());
    let diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref());
    let (mut added, mut removed) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => added += 1,
            similar::ChangeTag::Delete => removed += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    Stat {
        path: path.into(),
        added,
        removed,
        binary,
    }
}
