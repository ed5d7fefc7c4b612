//! What git-baton knows about real coding agents (Claude Code, Codex CLI, Gemini CLI, aider,
//! opencode): the presets `git baton init` writes ([`preset`]). docs/agents.md says, agent by
//! agent, how each is invoked, what git-baton reads from its output and where it may write.

pub mod preset;
