//! `git baton check`: what the coverage gate would say about the open attempt now, for the agent
//! inside a run's worktree; and its hook forms for the agent CLIs whose loop can be kept going
//! (Claude Code's and Codex's `Stop`, Gemini CLI's `AfterAgent`).

use std::io::{Read, Write};
use std::path::Path;

use clap::{Args, ValueEnum};

use super::{CliError, Ending, Workspace};
use crate::run::agent_side::{Check, Current, DEFAULT_MAX_BLOCKS, Hook, HookInput, MAX_HOOK_INPUT};
use crate::state::checks::CheckResult;

/// Show what the coverage gate would say now (for the agent, inside a run's worktree).
///
/// The same evidence, diff and rule as the gate that runs when the agent exits. Exit 0 when the
/// attempt would pass, 1 while a target is uncovered or the evidence has a problem, 2 outside a
/// run's worktree or when no attempt runs.
///
/// `--hook claude-stop` is the form Claude Code's Stop hook runs: it reads the hook's JSON on
/// stdin and, while a target is uncovered, prints {"decision":"block","reason":…} so that Claude
/// keeps working in the same session — at most --max-blocks times per attempt, then it lets
/// Claude stop. It exits 0 whenever it decides; when it cannot decide (not in a run, unreadable
/// input, a bad option or hook name) it prints the error and exits 1, which Claude Code treats as
/// a non-blocking error: the agent stops and the gate decides. It never exits 2, which Claude
/// Code would read as "block".
///
/// `--hook codex-stop` speaks Codex's Stop hook protocol (the same JSON as Claude Code's), and
/// `--hook gemini-after-agent` Gemini CLI's AfterAgent hook ({"decision":"deny","reason":…},
/// whose reason Gemini sends to the model as its next prompt). The same count and limit.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Print the verdict as JSON.
    #[arg(long, conflicts_with = "hook")]
    pub json: bool,

    /// Answer an agent's hook instead of a person.
    #[arg(long, value_enum, value_name = "AGENT")]
    pub hook: Option<HookKind>,

    /// Also run the runner checks of the attempt's stage now (docs/checks.md), for your
    /// information: only git-baton's own run of them, after the agent exits, counts.
    #[arg(long, conflicts_with = "hook")]
    pub checks: bool,

    /// With --hook: how often the hook may keep the agent working in one attempt.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_BLOCKS, requires = "hook")]
    pub max_blocks: u32,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum HookKind {
    /// Claude Code's `Stop` hook.
    ClaudeStop,
    /// Codex's `Stop` hook.
    CodexStop,
    /// Gemini CLI's `AfterAgent` hook.
    GeminiAfterAgent,
}

impl HookKind {
    /// The hook's answer on stdout, in its CLI's protocol. Each CLI reads a JSON object on
    /// stdout of a hook that exits 0; Claude Code and Codex block with `"block"`, Gemini with
    /// `"deny"`; a note is a `systemMessage`, shown to the person, in all three.
    pub fn answer(self, hook: &Hook) -> serde_json::Value {
        match (self, hook) {
            (HookKind::ClaudeStop | HookKind::CodexStop, Hook::Block { reason }) => {
                serde_json::json!({"decision": "block", "reason": reason})
            }
            (HookKind::GeminiAfterAgent, Hook::Block { reason }) => {
                serde_json::json!({"decision": "deny", "reason": reason})
            }
            (_, Hook::Allow { note: Some(note) }) => serde_json::json!({"systemMessage": note}),
            (_, Hook::Allow { note: None }) => serde_json::json!({}),
        }
    }
}

/// Whether a command line asks for a hook's answer (`check --hook …`), read from the raw
/// arguments (`args[0]` is the program) before clap parses them: in hook mode every failure,
/// a command line clap refuses included, is the non-blocking exit (see [`CheckArgs`]).
pub(super) fn hook_mode(args: &[std::ffi::OsString]) -> bool {
    let mut in_check = false;
    for arg in args.iter().skip(1).filter_map(|a| a.to_str()) {
        match arg {
            "--" => break,
            "check" => in_check = true,
            _ if in_check && (arg == "--hook" || arg.starts_with("--hook=")) => return true,
            _ => {}
        }
    }
    false
}

pub fn cmd_check(cwd: &Path, args: CheckArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    match args.hook {
        Some(kind) => match hook(cwd, kind, args.max_blocks, out) {
            Ok(outcome) => Ok(outcome),
            Err(err) => {
                err.print(&mut crate::term::stderr());
                Ok(Ending::HookFailedOpen)
            }
        },
        None => {
            let verdict = verdict(cwd, args.checks)?;
            if args.json {
                super::write_json(out, &verdict.json());
            } else {
                let _ = out.write_all(crate::report::check::text(&verdict.check).as_bytes());
                if let Some(ran) = &verdict.ran {
                    let _ = out.write_all(crate::report::check::checks_text(ran).as_bytes());
                }
            }
            Ok(Ending::Checked {
                passed: verdict.passed(),
            })
        }
    }
}

/// What `check` finds: the gate's verdict on the open attempt now, and the runner checks' results
/// when asked for (`--checks`).
pub(super) struct Findings {
    check: Check,
    ran: Option<Vec<CheckResult>>,
}

impl Findings {
    /// The document `check --json` prints (and the MCP tool `check` answers).
    pub(super) fn json(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(&self.check).unwrap_or_default();
        if let Some(ran) = &self.ran {
            value["checks"] = serde_json::to_value(ran).unwrap_or_default();
        }
        value
    }

    fn passed(&self) -> bool {
        let checks_passed = self
            .ran
            .as_ref()
            .is_none_or(|ran| crate::state::checks::first_failed(ran).is_none());
        self.check.passed && checks_passed
    }
}

/// The verdict for the agent in `cwd`, a run's worktree.
pub(super) fn verdict(cwd: &Path, checks: bool) -> Result<Findings, CliError> {
    let ctx = Workspace::open(cwd)?;
    let current = Current::find(&ctx.repo, &ctx.store)?;
    let check = current.check(&ctx.repo);
    let ran = match checks {
        true => Some(crate::run::checks::for_agent(
            &current,
            &ctx.config()?,
            ctx.store.clock(),
        )?),
        false => None,
    };
    Ok(Findings { check, ran })
}

fn hook(
    cwd: &Path,
    kind: HookKind,
    max_blocks: u32,
    out: &mut dyn Write,
) -> Result<Ending, CliError> {
    let mut text = String::new();
    std::io::stdin()
        .take(MAX_HOOK_INPUT)
        .read_to_string(&mut text)
        .map_err(|e| CliError::input(format!("cannot read the hook's input: {e}")))?;
    let input = HookInput::parse(&text)?;
    let ctx = Workspace::open(cwd)?;
    let current = Current::find(&ctx.repo, &ctx.store)?;
    let check = current.check(&ctx.repo);
    let answer = kind.answer(&current.stop_hook(&check, &input, max_blocks)?);
    let _ = writeln!(out, "{answer}");
    Ok(Ending::Done)
}

#[cfg(test)]
mod tests {
    use super::{Hook, HookKind, hook_mode};

    #[test]
    fn each_kind_answers_in_its_clis_protocol() {
        let block = Hook::Block {
            reason: "cover docs/b.md".into(),
        };
        let blocked = |kind: HookKind| kind.answer(&block).to_string();
        assert_eq!(
            blocked(HookKind::ClaudeStop),
            r#"{"decision":"block","reason":"cover docs/b.md"}"#
        );
        assert_eq!(blocked(HookKind::CodexStop), blocked(HookKind::ClaudeStop));
        assert_eq!(
            blocked(HookKind::GeminiAfterAgent),
            r#"{"decision":"deny","reason":"cover docs/b.md"}"#
        );
        for kind in [
            HookKind::ClaudeStop,
            HookKind::CodexStop,
            HookKind::GeminiAfterAgent,
        ] {
            assert_eq!(kind.answer(&Hook::Allow { note: None }).to_string(), "{}");
            let note = Hook::Allow {
                note: Some("limit".into()),
            };
            assert_eq!(
                kind.answer(&note).to_string(),
                r#"{"systemMessage":"limit"}"#
            );
        }
    }

    fn line(args: &str) -> Vec<std::ffi::OsString> {
        std::iter::once("git-baton")
            .chain(args.split_whitespace())
            .map(Into::into)
            .collect()
    }

    #[test]
    fn hook_mode_is_told_from_the_raw_arguments() {
        for hooked in [
            "check --hook claude-stop",
            "check --hook=claude-stop --max-blocks 99999999999",
            "check --hook claude-stpo",
            "check --max-block 3 --hook claude-stop",
            "-C /missing check --hook claude-stop",
            "--color never check --json --hook claude-stop",
        ] {
            assert!(hook_mode(&line(hooked)), "{hooked}");
        }
        for plain in [
            "check",
            "check --json",
            "--hook claude-stop",
            "status --hook claude-stop",
            "check -- --hook",
            "check --hooks claude-stop",
        ] {
            assert!(!hook_mode(&line(plain)), "{plain}");
        }
    }
}
