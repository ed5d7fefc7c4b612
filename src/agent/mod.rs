//! What git-baton knows about the real coding agents (Claude Code, Codex CLI, Gemini CLI, aider,
//! opencode), apart from running them: the presets `git baton init` writes ([`preset`]), the host files of
//! `packaging/` that `init --packaging` writes ([`packaging`]), and how to read what they print
//! ([`output`]).
//!
//! Pure: no I/O. The exec layer hands [`output::parse`] the text of an attempt's stdout log and
//! decides the attempt's outcome from the verdict; the run layer records the rest. See
//! docs/agents.md for each agent's invocation and docs/state.md for what an attempt records.

pub mod output;
pub mod packaging;
pub mod preset;
