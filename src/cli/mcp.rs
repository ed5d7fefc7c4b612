//! `git baton mcp`: the agent-side commands as the tools of an MCP server on stdio, for agents
//! that speak the Model Context Protocol. The protocol is [`crate::mcp`]'s; the tools here are
//! the commands' own functions, so a tool answers what its command prints with `--json`, and
//! refuses with the command's `error:` and `hint:` lines.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{CliError, Ending, Listed, Workspace};
use crate::mcp::{Answer, Tools};

/// Serve the agent-side commands over MCP (for the agent, inside a run's worktree).
///
/// An MCP server (Model Context Protocol, one JSON-RPC message per line on stdin and stdout)
/// whose tools are `check` (what the gate would say now, like `check --json`), `unchanged`
/// (record why a target needed no change, like `unchanged TARGET REASON`) and `status` (the
/// run the worktree belongs to, like `status --json`). Agent CLIs start it in their working
/// directory, the run's worktree; each call finds the run and its open attempt anew, as the
/// commands do, and a refusal is a tool error carrying the command's `error:` and `hint:`
/// lines. It runs until the client closes stdin; docs/agents.md has each CLI's configuration.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// The run's worktree, if not the current directory.
    #[arg(long, value_name = "DIR")]
    pub worktree: Option<PathBuf>,
}

pub fn cmd_mcp(cwd: &Path, args: McpArgs, _out: &mut dyn Write) -> Result<Ending, CliError> {
    let dir = match args.worktree {
        Some(dir) => cwd.join(dir),
        None => cwd.to_path_buf(),
    };
    if !dir.is_dir() {
        return Err(CliError::input(format!(
            "cannot serve the worktree `{}`: not a directory",
            dir.display()
        )));
    }
    // stdout is the protocol's from here on: nothing else may write to it.
    let (input, output) = crate::term::protocol_stdio();
    crate::mcp::serve(Worktree { dir }, input, output)
        .map_err(|err| CliError::new(super::Class::Input, err))?;
    Ok(Ending::Done)
}

/// The tools, for the run whose worktree is `dir`.
struct Worktree {
    dir: PathBuf,
}

/// A refusal as the command line prints it.
fn refusal(err: CliError) -> String {
    let mut text = Vec::new();
    err.print(&mut text);
    String::from_utf8_lossy(&text).trim_end().to_owned()
}

impl Tools for Worktree {
    fn check(&self, checks: bool) -> Answer {
        super::check::verdict(&self.dir, checks)
            .map(|verdict| verdict.json())
            .map_err(refusal)
    }

    fn unchanged(&self, target: &str, reason: &str) -> Answer {
        super::unchanged::record(&self.dir, target, reason)
            .map(|recorded| recorded.json())
            .map_err(refusal)
    }

    fn status(&self) -> Answer {
        let status = || -> Result<serde_json::Value, CliError> {
            let ctx = Workspace::open(&self.dir)?;
            let state = crate::run::agent_side::run_of_worktree(&ctx.repo, &ctx.store)?;
            let run = Listed::Here(state);
            // As `status` reads them: the attempt that ended last on an account decides.
            let holds = super::Holds::read(&ctx)?;
            Ok(serde_json::to_value(run.json(&ctx, &holds)).unwrap_or_default())
        };
        status().map_err(refusal)
    }
}
