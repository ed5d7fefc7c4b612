//! What a run leaves for its reviewer: `result.json` and `result.md` in the run directory.

use std::path::Path;

use crate::coverage::{self, Report};
use crate::git::CommitId;
use crate::state::RunState;
use crate::state::store;

use super::RunError;

/// `result.json` and `result.md` in the run directory: the coverage of the run and every
/// "needed no change, because …", for the reviewer.
pub fn write_result(run_dir: &Path, state: &RunState) -> Result<(), RunError> {
    #[derive(serde::Serialize)]
    struct ResultFile<'a> {
        run_id: &'a str,
        status: crate::state::RunStatus,
        plan: &'a crate::state::PlanRef,
        base: CommitId,
        branch: &'a str,
        coverage: Option<&'a Report>,
    }
    let result = ResultFile {
        run_id: &state.run_id,
        status: state.status(),
        plan: &state.plan,
        base: state.base,
        branch: &state.branch,
        coverage: state.coverage(),
    };
    let mut json = serde_json::to_vec_pretty(&result).expect("serializes");
    json.push(b'\n');
    store::write_atomic(&run_dir.join("result.json"), &json)?;
    let mut md = format!(
        "# Result of run {}\n\nPlan `{}` ({}), branch `{}`.\n\n",
        state.run_id, state.plan.path, state.plan.id, state.branch
    );
    match state.coverage() {
        None if state.plan.targets.is_empty() => {
            md.push_str("The plan declares no targets: coverage was not verified.\n")
        }
        None => md.push_str("No coverage gate ran in this run.\n"),
        Some(report) => {
            md.push_str("| target | status | paths or reason |\n|---|---|---|\n");
            // Paths and reasons are the agent's: escaped so that none leaves its cell.
            use crate::report::markdown::{code, text};
            for t in &report.targets {
                let detail = match t.status {
                    coverage::TargetStatus::Changed => t
                        .paths
                        .iter()
                        .map(|p| code(p))
                        .collect::<Vec<_>>()
                        .join(", "),
                    coverage::TargetStatus::Unchanged => format!(
                        "needed no change, because: {}",
                        text(t.reason.as_deref().unwrap_or(""))
                    ),
                    coverage::TargetStatus::Uncovered => "uncovered".into(),
                    coverage::TargetStatus::Missing => "names no path".into(),
                };
                let status = crate::report::status::word(t.status);
                md.push_str(&format!("| {} | {status} | {detail} |\n", code(&t.target)));
            }
        }
    }
    Ok(store::write_atomic(
        &run_dir.join("result.md"),
        md.as_bytes(),
    )?)
}
