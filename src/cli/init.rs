//! `git baton init`: writes a commented `.baton.yml` with a preset per agent CLI on `PATH`, or,
//! with `--packaging DIR`, the agents' host files of `packaging/` (`ops::packaging`).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{CliError, Ending, Workspace};
use crate::agent::preset::{self, Preset};

/// Write a commented .baton.yml for the agent CLIs found on PATH.
///
/// One actor per agent found (Claude Code `claude`, Codex `codex`, Gemini CLI `gemini`, `aider`,
/// `opencode`), each with its non-interactive invocation, how the prompt is passed, how its
/// output is read and its rate-limit rules, plus a plain-command example and a pipeline whose
/// gated stage runs the first agent found. docs/agents.md explains every flag.
///
/// With --packaging DIR it writes the agents' host files instead, for an installed git-baton
/// with no checkout of the repository: the Claude Code plugin, the Gemini CLI extension and the
/// Codex hooks file, into DIR/claude-code, DIR/gemini and DIR/codex, and no .baton.yml.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Write the preset of this agent only (claude, codex, gemini, aider, opencode), whether or
    /// not it is on PATH.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,

    /// Replace an existing .baton.yml (with --packaging: the files whose content differs).
    #[arg(long)]
    pub force: bool,

    /// Write the host files of the agents that have them (claude, gemini, codex; with --agent,
    /// that one's) below DIR instead of .baton.yml; an existing file with other content is
    /// refused without --force.
    #[arg(long, value_name = "DIR")]
    pub packaging: Option<PathBuf>,
}

pub fn cmd_init(cwd: &Path, args: InitArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    if let Some(dir) = &args.packaging {
        return write_packaging(cwd, dir, &args, out);
    }
    let ctx = Workspace::open(cwd)?;
    let chosen: Vec<&Preset> = match &args.agent {
        Some(name) => vec![preset::find(name).ok_or_else(|| unknown_agent(name))?],
        None => preset::PRESETS
            .iter()
            .filter(|p| on_path(p.program))
            .collect(),
    };
    let root = ctx.main_worktree()?;
    let path = root.join(crate::config::FILE_NAME);
    if path.exists() && !args.force {
        return Err(CliError::input(format!(
            "{} already exists in {}",
            crate::config::FILE_NAME,
            root.display()
        ))
        .hinted("`git baton init --force` replaces it (commit or copy it first)"));
    }
    let text = preset::render(&chosen, args.agent.is_none());
    crate::files::write_atomic(&path, text.as_bytes())
        .map_err(|e| CliError::input(e.to_string()))?;
    let names: Vec<&str> = chosen.iter().map(|p| p.name).collect();
    let _ = match (&args.agent, names.as_slice()) {
        (_, []) => writeln!(
            out,
            "wrote {}: no agent CLI found on PATH, only the plain-command example",
            path.display()
        ),
        (Some(_), [name]) if !on_path(chosen[0].program) => writeln!(
            out,
            "wrote {} with the preset `{name}` (note: `{}` is not on PATH)",
            path.display(),
            chosen[0].program
        ),
        _ => writeln!(
            out,
            "wrote {} with the preset(s) {}",
            path.display(),
            names.join(", ")
        ),
    };
    Ok(Ending::Done)
}

/// `init --packaging DIR`: the host files, one line per file written.
fn write_packaging(
    cwd: &Path,
    dir: &Path,
    args: &InitArgs,
    out: &mut dyn Write,
) -> Result<Ending, CliError> {
    use crate::agent::packaging;
    if let Some(name) = &args.agent {
        preset::find(name).ok_or_else(|| unknown_agent(name))?;
    }
    let files = packaging::files(args.agent.as_deref());
    if files.is_empty() {
        let name = args.agent.as_deref().unwrap_or_default();
        return Err(
            CliError::input(format!("the agent `{name}` has no host files to package")).hinted(
                format!(
                    "the agents with host files: {}",
                    packaging::agents().join(", ")
                ),
            ),
        );
    }
    let written =
        crate::ops::packaging::write(&cwd.join(dir), &files, args.force).map_err(|e| {
            let refused = matches!(e, crate::ops::packaging::Error::Differs { .. });
            let err = CliError::input(e.to_string());
            if !refused {
                return err;
            }
            let agent = args
                .agent
                .as_ref()
                .map(|a| format!(" --agent {a}"))
                .unwrap_or_default();
            err.hinted(format!(
                "`git baton init --packaging {}{agent} --force` replaces it (commit or copy it \
                 first)",
                dir.display()
            ))
        })?;
    for path in written {
        let _ = writeln!(out, "wrote {}", path.display());
    }
    Ok(Ending::Done)
}

fn unknown_agent(name: &str) -> CliError {
    let names = preset::names();
    let err = CliError::input(format!("unknown agent `{name}`"));
    match crate::config::closest(name, &names) {
        Some(known) => err.hinted(format!("did you mean `{known}`?")),
        None => err.hinted(format!("the agents with a preset: {}", names.join(", "))),
    }
}

/// Whether `program` is an executable file in a directory of `PATH`.
fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        std::fs::metadata(dir.join(program))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file `init` writes loads with the strict configuration loader, for every preset
    /// alone, all of them together, and none.
    #[test]
    fn every_written_file_loads() {
        let mut cases: Vec<Vec<&Preset>> = preset::PRESETS.iter().map(|p| vec![p]).collect();
        cases.push(preset::PRESETS.iter().collect());
        cases.push(Vec::new());
        for chosen in cases {
            let text = preset::render(&chosen, true);
            let config =
                crate::config::parse(".baton.yml", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            for p in &chosen {
                let actor = &config.actors[p.name];
                assert_eq!(actor.command, p.command, "{}", p.name);
                assert_eq!(actor.stdin_prompt, p.stdin_prompt, "{}", p.name);
                assert_eq!(actor.rate_limit_patterns, p.rate_limit_patterns);
                assert_eq!(actor.output, p.output, "{}", p.name);
            }
            let executor = chosen.first().map_or("script", |p| p.name);
            assert_eq!(config.pipeline[0].actor, executor);
            assert!(config.pipeline[0].gated);
            assert!(config.actors.contains_key("script"));
        }
    }
}
