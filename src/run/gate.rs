//! The coverage gate of the pipeline: the evidence an attempt wrote, the report of the run's
//! work against its targets, and the line that says what blocked a stage.
//!
//! The verdict of an attempt is judged on the attempt's snapshot — the commit that records the
//! worktree as the attempt left it and that travels to other machines — never on the live
//! worktree, where a process the attempt left behind could still be writing. Only `git baton
//! check`, asked during an attempt, reads the live worktree: it advises, it does not decide.

use std::path::Path;

use crate::coverage::{self, Report, TargetStatus};
use crate::git::{CommitId, GitError, Repo, Scope};
use crate::plan::{Plan, Target};
use crate::state::{RunState, trust};
use crate::verify::trivial::{self, NewSide, Sides};

use super::worktree::open_run_worktree;

/// The evidence an actor wrote: `Ok(None)` when it wrote none, `Err` when it is not evidence.
pub(crate) fn read_evidence(
    path: &Path,
    shown: &str,
) -> Result<Option<coverage::Evidence>, String> {
    read_evidence_text(path, shown)?
        .map(|text| parse_evidence(shown, &text))
        .transpose()
}

/// The text of an evidence file, bounded, as an agent could write any amount (see
/// coverage::MAX_EVIDENCE_BYTES): `Ok(None)` when there is none.
pub(crate) fn read_evidence_text(path: &Path, shown: &str) -> Result<Option<String>, String> {
    // An agent could make it a named pipe or a link to a device: regular files only.
    match crate::files::read_limited_regular(path, coverage::MAX_EVIDENCE_BYTES) {
        Ok(None) => Err(format!(
            "invalid evidence: {shown}: {}",
            coverage::too_large_message()
        )),
        Ok(Some(bytes)) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| format!("invalid evidence: {shown}: the file is not UTF-8")),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(format!("cannot read the evidence file: {err}")),
    }
}

/// Evidence text read with [`read_evidence_text`], checked as the gate checks it.
pub(crate) fn parse_evidence(shown: &str, text: &str) -> Result<coverage::Evidence, String> {
    coverage::parse_evidence(shown, text).map_err(|e| format!("invalid evidence: {e}"))
}

/// One line for `error.message`: what blocked the stage.
pub fn blocked_message(report: &Report) -> String {
    let total = report.targets.len();
    let mut parts = Vec::new();
    for (status, targets) in report.failing_by_status() {
        let what = match status {
            TargetStatus::Uncovered => "uncovered",
            TargetStatus::Missing => "name no path",
            TargetStatus::Touched => "touched only in whitespace, line endings or mode",
            TargetStatus::Changed | TargetStatus::Unchanged => continue,
        };
        parts.push(format!(
            "coverage gate: {} of {total} targets {what}: {}",
            targets.len(),
            targets.join(", ")
        ));
    }
    for p in &report.problems {
        parts.push(format!("{}: {}", p.source, p.message));
    }
    parts.join("; ")
}

/// Where the gate reads the run's work.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Work {
    /// The live worktree: `git baton check` during an attempt.
    Worktree,
    /// The snapshot commit an attempt ended with: the attempt's verdict.
    Snapshot(CommitId),
}

/// The coverage report of the run's work against the targets of `plan`, with the reasons of
/// `evidence`. Any failure to compute it is the gate's failure, reported as a message, never a
/// reason to leave the attempt open.
pub(crate) fn gate(
    repo: &Repo,
    state: &RunState,
    plan: &Plan,
    evidence: &Result<Option<coverage::Evidence>, String>,
    work: Work,
) -> Result<Report, String> {
    let targets = &plan.targets;
    let entries = match evidence {
        Err(message) => return Err(message.clone()),
        Ok(evidence) => evidence
            .as_ref()
            .map(|e| e.entries.clone())
            .unwrap_or_default(),
    };
    if targets.is_empty() {
        return Ok(coverage::evaluate(targets, &[], &entries, &[]));
    }
    let scope = Scope::prefixes(targets.iter().map(Target::scope));
    let worktree = open_run_worktree(repo, state).map_err(|e| format!("coverage gate: {e}"))?;
    let changed = match work {
        Work::Worktree => worktree.worktree_changes(state.base, &scope),
        Work::Snapshot(snapshot) => worktree.tree_changes(state.base, snapshot, &scope),
    }
    .map_err(|e| format!("coverage gate: cannot compute the diff: {e}"))?;
    let mut report = coverage::evaluate(targets, &changed, &entries, &[]);
    let snapshot;
    let places = match work {
        Work::Worktree => crate::verify::missing::Places {
            commits: &[state.base],
            worktree: Some(Path::new(&state.worktree)),
        },
        Work::Snapshot(commit) => {
            snapshot = [state.base, commit];
            crate::verify::missing::Places {
                commits: &snapshot,
                worktree: None,
            }
        }
    };
    crate::verify::missing::mark_missing(&worktree, &mut report, targets, &places)
        .map_err(|e| format!("coverage gate: cannot look up the uncovered targets: {e}"))?;
    // A change of only whitespace, line endings or mode does not count (coverage::trivial).
    let new_side = match work {
        Work::Worktree => NewSide::Worktree(Path::new(&state.worktree)),
        Work::Snapshot(commit) => NewSide::Commit(commit),
    };
    trivial::mark_touched(
        &mut report,
        plan,
        &mut Sides::new(&worktree, state.base, new_side),
    )
    .map_err(|e| format!("coverage gate: cannot compare the changed targets: {e}"))?;
    Ok(report)
}

/// A gated verdict that the work at a snapshot no longer passes.
pub(crate) struct BrokenVerdict {
    /// The index of the gated stage whose verdict broke.
    pub stage: usize,
    /// The targets uncovered now.
    pub uncovered: Vec<String>,
    /// The targets changed now only in whitespace, line endings or file mode.
    pub touched: Vec<String>,
    /// The first problem of the report judged again, if any.
    pub problem: Option<String>,
}

/// Judges every gated verdict of `state` again on `snapshot`: the targets against the diff from
/// the base, with the reasons those stages' attempts recorded, each checked again. The first
/// verdict that does not pass, if any.
pub(crate) fn judge_verdicts(
    repo: &Repo,
    state: &RunState,
    plan: &Plan,
    snapshot: CommitId,
) -> Result<Option<BrokenVerdict>, GitError> {
    let targets = &plan.targets;
    let verdicts = trust::gated_verdicts(state);
    if targets.is_empty() || verdicts.is_empty() {
        return Ok(None);
    }
    let scope = Scope::prefixes(targets.iter().map(Target::scope));
    let changed = repo.tree_changes(state.base, snapshot, &scope)?;
    let mut sides = Sides::new(repo, state.base, NewSide::Commit(snapshot));
    for (stage, attempt) in verdicts {
        let reasons = trust::recorded_reasons(attempt.coverage.as_ref(), &attempt.dir);
        let mut report = coverage::evaluate(targets, &changed, &reasons, &[]);
        // A change of only whitespace or mode does not count on the snapshot either.
        trivial::mark_touched(&mut report, plan, &mut sides).map_err(|err| match err {
            crate::verify::VerifyError::Git(err) => err,
            other => GitError::Operation {
                action: "compare the changed targets".into(),
                message: other.to_string(),
            },
        })?;
        if !report.passed {
            return Ok(Some(BrokenVerdict {
                stage,
                uncovered: report
                    .targets
                    .iter()
                    .filter(|row| row.status == TargetStatus::Uncovered)
                    .map(|row| row.target.clone())
                    .collect(),
                touched: report.touched().map(|row| row.target.clone()).collect(),
                problem: report.problems.first().map(|p| p.message.clone()),
            }));
        }
    }
    Ok(None)
}

/// After a stage the gate does not hold: why its work, `snapshot`, no longer passes the verdict
/// of a gated stage before it, if it does not. A later stage (a reporter, a formatter) could
/// otherwise revert a target the gate counted, and the run would still reach review.
pub(crate) fn undone(
    repo: &Repo,
    state: &RunState,
    plan: &Plan,
    snapshot: CommitId,
) -> Result<Option<String>, String> {
    let broken = judge_verdicts(repo, state, plan, snapshot)
        .map_err(|e| format!("coverage gate: cannot compute the diff: {e}"))?;
    Ok(broken.map(|b| {
        let mut said = format!(
            "coverage gate: this stage undid work the gate of stage `{}` counted",
            state.stages()[b.stage].name
        );
        if !b.uncovered.is_empty() || b.touched.is_empty() {
            said.push_str(&format!("; uncovered now: {}", b.uncovered.join(", ")));
        }
        if !b.touched.is_empty() {
            said.push_str(&format!(
                "; touched only in whitespace, line endings or mode now: {}",
                b.touched.join(", ")
            ));
        }
        if let Some(problem) = b.problem {
            said.push_str(&format!("; {problem}"));
        }
        said
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blocked_stage_lists_each_kind_of_failing_target_then_the_problems() {
        let plan = crate::plan::parse(
            "plans/p.md",
            "---\ntargets: [a.md, b.md, c.md, d.md]\n---\n",
        )
        .unwrap();
        let evidence = coverage::parse_evidence(
            "evidence.json",
            r#"{"target_coverage": [{"target": "x.md", "status": "changed", "paths": ["x.md"]}]}"#,
        )
        .unwrap();
        let mut report =
            coverage::evaluate(&plan.targets, &["d.md".into()], &evidence.entries, &[]);
        report.targets[1].status = TargetStatus::Missing;
        report.targets[2].status = TargetStatus::Touched;
        assert_eq!(
            blocked_message(&report),
            "coverage gate: 1 of 4 targets uncovered: a.md; \
             coverage gate: 1 of 4 targets name no path: b.md; \
             coverage gate: 1 of 4 targets touched only in whitespace, line endings or mode: c.md; \
             evidence.json: entry 0: target \"x.md\" is not declared by the plan; did you mean \
             \"a.md\"?"
        );
    }
}
