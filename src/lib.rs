//! git-baton: a stage of coding-agent work counts as succeeded only when the repository proves it.
//!
//! The crate is split the way the data flows:
//!
//! - [`plan`] parses a plan (markdown + YAML frontmatter) into targets, with spans for errors (pure);
//! - [`git`] is the only module that touches git: discovery, revisions and the cumulative diff;
//! - [`coverage`] applies the coverage rule to a diff, the targets and the evidence (pure);
//! - [`config`] reads `.baton.yml`;
//! - [`report`] renders coverage reports as text, JSON, GitHub annotations and Markdown;
//! - [`verify`] runs the coverage gate over plans, a diff and evidence;
//! - [`demo`] replays the incident git-baton exists for, with the real binary and demo actors;
//! - [`cli`] translates command lines into calls of the above, and [`error`] maps failures to
//!   one `error:` line, `hint:` lines and an exit code.

pub mod cli;
pub mod config;
pub mod coverage;
pub mod demo;
pub mod error;
pub mod exec;
pub mod files;
pub mod git;
pub mod plan;
pub mod report;
pub mod run;
pub mod state;
pub mod suggest;
pub mod verify;
