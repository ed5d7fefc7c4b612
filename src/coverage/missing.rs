//! Targets that name nothing: a typo in a plan is not the agent's fault, and says so.
//!
//! The rule itself cannot tell an untouched path from one that does not exist; the callers,
//! which can look at the repository, mark the uncovered targets that match no path anywhere
//! (see `verify::missing`), with the existing path each most likely meant.

use super::{Report, TargetReport, TargetStatus};
use crate::suggest::edit_distance;

impl TargetStatus {
    /// The statuses that fail the gate, in the order the messages that list them follow.
    pub const FAILING: [TargetStatus; 3] = [
        TargetStatus::Uncovered,
        TargetStatus::Missing,
        TargetStatus::Touched,
    ];

    /// Whether a target with this status fails the gate.
    #[must_use]
    pub fn fails(self) -> bool {
        TargetStatus::FAILING.contains(&self)
    }
}

impl Report {
    /// The targets that name nothing.
    pub fn missing(&self) -> impl Iterator<Item = &TargetReport> {
        self.targets
            .iter()
            .filter(|row| row.status == TargetStatus::Missing)
    }

    /// Every target that fails the gate: uncovered, missing or touched.
    pub fn failing(&self) -> impl Iterator<Item = &TargetReport> {
        self.targets.iter().filter(|row| row.status.fails())
    }

    /// The failing targets by status, in the order of [`TargetStatus::FAILING`]: a status with
    /// no target is left out. What the messages that list what blocked a stage read.
    pub fn failing_by_status(&self) -> Vec<(TargetStatus, Vec<&str>)> {
        TargetStatus::FAILING
            .into_iter()
            .map(|status| {
                let targets = self.targets.iter().filter(|row| row.status == status);
                (status, targets.map(|row| row.target.as_str()).collect())
            })
            .filter(|(_, targets): &(_, Vec<&str>)| !targets.is_empty())
            .collect()
    }

    /// Marks row `i` as naming nothing, with the path it most likely meant. Only an uncovered row
    /// changes: a change or an accepted reason is what it was, so no plan that passed fails.
    pub fn mark_missing(&mut self, i: usize, suggestion: Option<String>) {
        if let Some(row) = self.targets.get_mut(i)
            && row.status == TargetStatus::Uncovered
        {
            row.status = TargetStatus::Missing;
            row.suggestion = suggestion;
        }
    }
}

/// The name among `candidates` that `name` most likely misspells: the same up to case, else the
/// nearest by edit distance when near enough to be a typo (a third of the name, at least one).
#[must_use]
pub fn closest_name<'a>(name: &str, candidates: &'a [String]) -> Option<&'a str> {
    if let Some(same) = candidates.iter().find(|c| c.eq_ignore_ascii_case(name)) {
        return Some(same);
    }
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, c)| c.as_str())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use crate::coverage::evaluate;

    #[test]
    fn only_uncovered_rows_become_missing_and_still_fail() {
        let targets = plan_targets(&["docs/a.md", "src/lib.rs", "crate"]);
        let mut report = evaluate(&targets, &diff(&["docs/a.md"]), &[], &[]);
        report.mark_missing(0, None);
        report.mark_missing(2, Some("crates".into()));
        assert_eq!(report.targets[0].status, TargetStatus::Changed);
        assert_eq!(report.targets[1].status, TargetStatus::Uncovered);
        assert_eq!(report.targets[2].status, TargetStatus::Missing);
        assert_eq!(report.targets[2].suggestion.as_deref(), Some("crates"));
        assert!(!report.passed);
        let failing: Vec<&str> = report.failing().map(|t| t.target.as_str()).collect();
        assert_eq!(failing, ["src/lib.rs", "crate"]);
        let json = serde_json::to_value(&report.targets[2]).unwrap();
        assert_eq!(json["status"], "missing");
        assert_eq!(json["suggestion"], "crates");
        // No suggestion, no field: the documents of other statuses are as they were.
        assert!(
            serde_json::to_value(&report.targets[1])
                .unwrap()
                .get("suggestion")
                .is_none()
        );
    }

    #[test]
    fn closest_names() {
        let names: Vec<String> = ["crates", "docs", "src", "README.md"]
            .map(String::from)
            .to_vec();
        assert_eq!(closest_name("crate", &names), Some("crates"));
        assert_eq!(closest_name("readme.md", &names), Some("README.md"));
        assert_eq!(closest_name("dcos", &names), Some("docs"));
        assert_eq!(closest_name("tests", &names), None);
        assert_eq!(closest_name("x", &names), None);
    }
}
