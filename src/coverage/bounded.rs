//! A coverage report bounded for keeping: the RunState records the gate's report of every
//! attempt, and the record carries the RunState to every clone. A report's changed paths grow
//! with the work (one attempt changing 30,000 files under one directory target), so a kept
//! report holds every changed target's first path and a bounded number of paths in all,
//! counting what it left out. Nothing is lost: the full list is the diff of the attempt's
//! snapshot against the base (`git baton diff`), and every verdict was made on the full list
//! before it was bounded.

use super::Report;

/// The most paths a kept report holds beyond each changed target's first.
pub const KEPT_PATHS: usize = 1000;

/// For `skip_serializing_if`: a count of nothing left out is not written.
pub(super) fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Keeps the first `n` of `paths` (at least one, when there are any) and returns how many it
/// left out; `budget` is what remains to share and shrinks by what was kept beyond the first.
fn keep(paths: &mut Vec<String>, budget: &mut usize) -> usize {
    if paths.is_empty() {
        return 0;
    }
    let kept = paths.len().min(1 + *budget);
    *budget -= kept - 1;
    let omitted = paths.len() - kept;
    paths.truncate(kept);
    omitted
}

impl Report {
    /// This report with at most `budget` paths beyond each row's first, shared in order over
    /// the targets and then the contradictions; each row counts what it left out. Verdicts,
    /// reasons and problems stay as they are.
    #[must_use]
    pub fn bounded(mut self, mut budget: usize) -> Report {
        for row in &mut self.targets {
            row.paths_omitted += keep(&mut row.paths, &mut budget);
        }
        for row in &mut self.contradictions {
            row.paths_omitted += keep(&mut row.paths, &mut budget);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use crate::coverage::evaluate;
    use crate::plan::Target;

    fn targets(specs: &[&str]) -> Vec<Target> {
        let plan = format!(
            "---\ntargets:\n{}---\n",
            specs
                .iter()
                .map(|s| format!("  - {s}\n"))
                .collect::<String>()
        );
        crate::plan::parse("p.md", &plan).unwrap().targets
    }

    #[test]
    fn every_changed_target_keeps_its_first_path_and_the_rest_share_the_budget() {
        let changed: Vec<String> = (0..50)
            .map(|i| format!("a/{i:02}"))
            .chain((0..5).map(|i| format!("b/{i}")))
            .chain(["c.md".to_string()])
            .collect();
        let report = evaluate(&targets(&["a/", "b/", "c.md", "d.md"]), &changed, &[], &[]);
        let full = report.clone();
        let bounded = report.bounded(10);
        let rows: Vec<(usize, usize)> = bounded
            .targets
            .iter()
            .map(|r| (r.paths.len(), r.paths_omitted))
            .collect();
        assert_eq!(rows, [(11, 39), (1, 4), (1, 0), (0, 0)]);
        assert_eq!(bounded.targets[0].paths[..], full.targets[0].paths[..11]);
        assert_eq!(
            (bounded.passed, bounded.verified),
            (full.passed, full.verified)
        );
        // A budget that holds everything leaves the report as it was.
        assert_eq!(full.clone().bounded(1000), full);
    }

    #[test]
    fn a_count_of_nothing_left_out_is_not_written() {
        let report = evaluate(&targets(&["a/"]), &["a/1".into(), "a/2".into()], &[], &[]);
        let whole = serde_json::to_string(&report).unwrap();
        assert!(!whole.contains("paths_omitted"), "{whole}");
        let cut = serde_json::to_string(&report.bounded(0)).unwrap();
        assert!(
            cut.contains(r#""paths":["a/1"],"paths_omitted":1"#),
            "{cut}"
        );
    }
}
