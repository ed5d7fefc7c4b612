//! `git baton demo`: the incident git-baton exists for, replayed in a throw-away repository.
//!
//! The demo builds a temporary repository — three documents, a plan that targets them, and a
//! `.baton.yml` whose actors are *demo actors*: short sh scripts that play the agents' parts —
//! and drives it with the real binary in child processes, with the commands a user would type.
//! Each step's exit code and the RunState it leaves (`status --json`) are checked as it goes, so
//! the demo doubles as a smoke test: a step that deviates stops it with an `error:` naming the
//! step.
//!
//! It needs nothing but `git` and `sh`. The children run in a hermetic environment (cleared, a
//! temporary HOME, no system or global git configuration, a fixed identity), so neither the
//! user's git configuration nor their personal git-baton actors change what happens. The
//! temporary directory honours `TMPDIR` and is removed at the end, run worktrees included (they
//! live inside the demo repository), unless the user asked to keep it.

mod sandbox;
mod script;
mod steps;

use std::io::Write;
use std::path::PathBuf;

use crate::exec::ExecError;
use crate::files::io_reason;

use sandbox::Sandbox;
use steps::Demo;

/// The plan of the demo, repo-relative.
pub const PLAN: &str = "plans/cdfd-grade-review.md";
/// The plan's targets, in its order.
pub const TARGETS: [&str; 3] = [
    "docs/cdfd-overview.md",
    "docs/cdfd-check.md",
    "docs/cdfd-action.md",
];
/// The reason the `diligent` demo actor records for the target it leaves unchanged.
pub const REASON: &str = "already states the new grading rule in section 3";
/// The printed line that names the demo repository (tests read the path from it).
pub const REPOSITORY_LINE: &str = "demo repository: ";

pub struct Options {
    /// Keep the temporary directory and say where it is.
    pub keep: bool,
}

/// Why the demo did not complete. [`DemoError::Deviated`] means git-baton did not behave as the
/// incident's script says; the others, that the demo could not be set up or run.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// `removed`: the demo repository was removed afterwards (so `--keep` would help).
    #[error("demo step `{step}` deviated: {problem}")]
    Deviated {
        step: String,
        problem: String,
        removed: bool,
    },
    #[error("the demo was interrupted")]
    Interrupted,
    #[error(transparent)]
    Signals(#[from] ExecError),
    #[error("cannot find the git-baton binary: {0}")]
    NoBinary(#[source] std::io::Error),
    #[error("cannot create a temporary directory in {}: {}", .dir.display(), io_reason(.source))]
    TempDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create {}: {}", .path.display(), io_reason(.source))]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the demo's git configuration: {0}")]
    GitConfig(#[source] std::io::Error),
    #[error("cannot run git: {0}")]
    NoGit(#[source] std::io::Error),
    #[error("demo setup: `git {args}` failed: {stderr}")]
    Setup { args: String, stderr: String },
    /// `action` is `create` or `write`; `file` is repo-relative.
    #[error("cannot {action} {file}: {source}")]
    File {
        action: &'static str,
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("demo: cannot run `{line}`: {source}")]
    Spawn {
        line: String,
        #[source]
        source: std::io::Error,
    },
    #[error("could not remove the demo directory {dir}: {}", io_reason(.source))]
    Cleanup {
        dir: String,
        #[source]
        source: std::io::Error,
    },
}

/// Runs the demo, narrating to `out`. `Ok` means every step went as the incident says it
/// should under git-baton; a step that deviates is [`DemoError::Deviated`], naming the step.
/// A sandbox that could not be removed after a failed step is told to `warn`: the step's error
/// is what the demo ends with.
pub fn replay(
    options: &Options,
    out: &mut dyn Write,
    warn: &mut dyn FnMut(String),
) -> Result<(), DemoError> {
    let interrupted = crate::exec::interrupt_flag()?;
    let sandbox = Sandbox::create(options.keep)?;
    let mut demo = Demo {
        sandbox,
        out,
        interrupted,
    };
    let result = demo.steps();
    let Demo { sandbox, out, .. } = demo;
    let result = match result {
        Ok(()) => sandbox.finish(out),
        Err(mut err) => {
            let cleanup = sandbox.finish(out);
            let _ = out.flush();
            match cleanup {
                Ok(()) => {
                    if let DemoError::Deviated { removed, .. } = &mut err {
                        *removed = !options.keep;
                    }
                }
                Err(problem) => warn(problem.to_string()),
            }
            Err(err)
        }
    };
    let _ = out.flush();
    result
}

#[cfg(test)]
mod tests {
    use super::script::*;
    use super::*;

    #[test]
    fn the_demo_plan_and_configuration_are_valid() {
        let plan = crate::plan::parse(PLAN, PLAN_TEXT).unwrap();
        let targets: Vec<&str> = plan.targets.iter().map(|t| t.spec.as_str()).collect();
        assert_eq!(targets, TARGETS);
        let config = crate::config::parse(".baton.yml", CONFIG).unwrap();
        assert_eq!(config.actors["partial"].rate_limit_exit_codes, [75]);
        assert!(config.pipeline[0].gated && !config.pipeline[1].gated);
    }

    #[test]
    fn the_diligent_actors_evidence_passes_the_gate() {
        let start = DILIGENT.find("<<'EOF'\n").unwrap() + "<<'EOF'\n".len();
        let end = start + DILIGENT[start..].find("\nEOF\n").unwrap();
        let evidence = crate::coverage::parse_evidence("evidence", &DILIGENT[start..end]).unwrap();
        let plan = crate::plan::parse(PLAN, PLAN_TEXT).unwrap();
        let changed = vec![TARGETS[1].to_string(), TARGETS[0].to_string()];
        let report = crate::coverage::evaluate(&plan.targets, &changed, &evidence.entries, &[]);
        assert!(report.passed, "{report:?}");
        let action = report
            .targets
            .iter()
            .find(|t| t.target == TARGETS[2])
            .unwrap();
        assert_eq!(action.reason.as_deref(), Some(REASON));
        // The reason is true of the document.
        assert!(ACTION.contains("## 3. Grading") && ACTION.contains("two reviewers"));
    }

    #[test]
    fn every_demo_actor_says_it_is_one() {
        for (path, text) in FILES.iter().filter(|(p, _)| p.starts_with("demo-actors/")) {
            assert!(text.contains("DEMO ACTOR"), "{path}");
            assert!(CONFIG.contains(path), "{path} is not configured");
        }
    }
}
