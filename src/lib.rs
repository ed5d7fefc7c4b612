//! git-baton: a stage of coding-agent work counts as succeeded only when the repository proves it.
//!
//! The crate is split the way the data flows:
//!
//! - [`plan`] parses a plan (markdown + YAML frontmatter) into targets, with spans for errors (pure);
//! - [`git`] is the only module that touches git: discovery, revisions and the cumulative diff;
//! - [`agent`] reads what real coding agents print (usage, cost, session, rate limits) and holds
//!   the presets `git baton init` writes for them (pure);
//! - [`coverage`] applies the coverage rule to a diff, the targets and the evidence (pure);
//! - [`config`] reads `.baton.yml`;
//! - [`state`] holds the RunState, its transitions (pure) and its store (atomic writes, locks);
//! - [`exec`] runs one attempt of an actor: process group, logs, signals, timeouts;
//! - [`run`] creates runs (one transaction) and drives their stages through the gate; its
//!   [`run::session`] is the one way a run changes;
//! - [`ops`] holds one use case per command that changes a run, on the run session;
//! - [`mcp`] is the protocol side of `git baton mcp`: the agent-side commands as MCP tools;
//! - [`report`] renders coverage reports, run status and reviews as text, JSON, GitHub
//!   annotations and Markdown;
//! - [`verify`] runs the coverage gate over plans, a diff and evidence;
//! - [`demo`] replays the incident git-baton exists for, with the real binary and demo actors;
//! - [`hermetic`] is the environment that makes git the same everywhere, for the demo, the
//!   tests and the benchmarks;
//! - [`duration`] reads the durations the configuration and plans write (timeouts, leases);
//! - [`template`] is the `{{name}}` syntax of prompt templates, shared by `config` and `run`;
//! - [`term`] is git-baton's own stdout and stderr, where no write can panic;
//! - [`yaml`] writes strings as YAML scalars for what git-baton prints to paste or keep;
//! - [`procs`] is the process table and signals that reach no stranger, and [`signals`] is who
//!   takes SIGINT, SIGTERM and SIGHUP (a driver, or the wait on a child process);
//! - [`cli`] translates command lines into calls of the above; it alone prints (errors as one
//!   `error:` line and `hint:` lines, and the notes the layers below hand up), and decides exit
//!   codes.
//!
//! No module uses one above it; the layers, and the test that keeps them, are in `layers.rs`.
//!
//! The coverage rule in a few lines — the diff is the truth, evidence only supplies reasons:
//!
//! ```
//! use git_baton::coverage::{self, TargetStatus};
//!
//! let plan = git_baton::plan::parse(
//!     "plans/fix.md",
//!     "---\ntargets: [docs/a.md, docs/b.md, src/parser/]\n---\nFix them.\n",
//! )
//! .unwrap();
//! let changed = vec!["docs/a.md".to_string(), "src/parser/lex.rs".to_string()];
//! let evidence = coverage::parse_evidence(
//!     "evidence.json",
//!     r#"{"target_coverage": [{"target": "docs/b.md", "status": "unchanged",
//!         "reason": "already describes the new grammar in section 2"}]}"#,
//! )
//! .unwrap();
//! let report = coverage::evaluate(&plan.targets, &changed, &evidence.entries, &[]);
//! assert!(report.passed);
//! assert_eq!(report.targets[1].status, TargetStatus::Unchanged);
//!
//! // Without the reason, docs/b.md is uncovered and the gate fails.
//! let report = coverage::evaluate(&plan.targets, &changed, &[], &[]);
//! assert!(!report.passed);
//! assert_eq!(report.uncovered().map(|t| t.target.as_str()).collect::<Vec<_>>(), ["docs/b.md"]);
//! ```

// Writes to stdout and stderr go through `term`, where a closed stream cannot panic.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod agent;
pub mod cli;
pub mod config;
pub mod coverage;
pub mod demo;
pub mod duration;
pub mod exec;
pub mod files;
pub mod git;
pub mod hermetic;
pub mod mcp;
pub mod ops;
pub mod plan;
pub mod procs;
pub mod report;
pub mod run;
pub mod signals;
pub mod state;
pub mod suggest;
pub mod template;
pub mod term;
pub mod verify;
pub mod yaml;

#[cfg(test)]
mod doors;
#[cfg(test)]
mod layers;
#[cfg(test)]
mod shape;
#[cfg(test)]
mod testing;
