//! Presets: the actor entry of `.baton.yml` for each agent CLI git-baton knows, and the
//! commented file `git baton init` writes from them (pure data and rendering, no I/O).
//!
//! Each preset is the agent's current non-interactive invocation, checked against the real CLI
//! (docs/agents.md names the versions): how the prompt reaches it, which
//! `output:` parser reads what it prints, and the text it prints when it is rate limited. Two
//! facts shape them more than any other:
//!
//! - Agents must be able to record why a target needed no change without touching `.git`
//!   themselves: the presets allow exactly the two agent-side commands, `git baton unchanged`
//!   and `git baton check`, and nothing else beyond what the agent's edit mode already allows.
//! - A sandbox decides where an agent may write. Codex's `workspace-write` sandbox refuses the
//!   main repository's `.git` from a linked worktree, where those commands write, so its preset
//!   grants `{attempt_dir}` — the attempt's own files — with `--add-dir`, and no more: granting
//!   the whole `.git` would let the agent change its `config`, and so what git runs for the
//!   driver and the user (a clean filter, an fsmonitor hook).

use super::output::Format;
use crate::yaml;

/// The Claude Code Stop hook: `git baton check` in hook form (see docs/agents.md).
pub const CLAUDE_STOP_HOOK: &str = "git baton check --hook claude-stop";
/// The Codex Stop hook: the same, in Codex's hook protocol.
pub const CODEX_STOP_HOOK: &str = "git baton check --hook codex-stop";
/// The Gemini CLI AfterAgent hook (shipped as the extension in packaging/gemini).
pub const GEMINI_AFTER_AGENT_HOOK: &str = "git baton check --hook gemini-after-agent";

/// Codex's Stop hook as a `-c` override: an inline `[hooks]` table of the session's own
/// configuration layer, nothing written to the worktree or to `~/.codex`.
const CODEX_HOOKS: &str =
    r#"hooks.Stop=[{hooks=[{type="command",command="git baton check --hook codex-stop"}]}]"#;

/// What Claude Code may run besides editing files: the two agent-side commands, nothing else.
///
/// `check` is allowed in its two exact forms only: a prefix rule would let the agent run the
/// Stop hook's form (`check --hook claude-stop`) itself, spending the hook's blocks and faking
/// how often the hook kept it working.
pub const CLAUDE_ALLOWED_TOOLS: [&str; 3] = [
    "Bash(git baton unchanged:*)",
    "Bash(git baton check)",
    "Bash(git baton check --json)",
];

/// What Gemini CLI may run besides editing: `git baton unchanged …`. Its `--allowed-tools`
/// rules are prefixes (`run_shell_command(git baton check)` approves `git baton check --hook
/// claude-stop` too: gemini 0.61.0 matches `"command":"<prefix>` followed by a space or the
/// closing quote), and an exact rule needs a policy file, so
/// `check` is left out rather than approved in every form.
pub const GEMINI_ALLOWED_TOOL: &str = "run_shell_command(git baton unchanged)";

/// opencode's permission rules (`OPENCODE_PERMISSION`, JSON merged over its configuration's
/// `permission`): the last matching rule wins, so `*` denies every shell command first and the
/// two agent-side commands are allowed after it, `check` in its two exact forms only (as for
/// Claude Code).
pub const OPENCODE_PERMISSION: &str = r#"{"bash":{"*":"deny","git baton unchanged *":"allow","git baton check":"allow","git baton check --json":"allow"}}"#;

/// One agent CLI's actor entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// The actor's name in `.baton.yml`, and what `git baton init --agent` takes.
    pub name: &'static str,
    /// The program looked up on `PATH` to decide whether the agent is installed.
    pub program: &'static str,
    /// The product's name, for comments and messages.
    pub title: &'static str,
    /// Comment lines written above the entry: how the prompt is passed, where the agent may
    /// write, what to adjust.
    pub notes: &'static [&'static str],
    /// The argv template (placeholders as in docs/config.md).
    pub command: &'static [&'static str],
    /// Extra environment variables of the actor (`env:`).
    pub env: &'static [(&'static str, &'static str)],
    /// The prompt goes to the agent's stdin.
    pub stdin_prompt: bool,
    /// The actor's `output:` (which parser reads what the agent prints).
    pub output: Format,
    pub rate_limit_exit_codes: &'static [i32],
    /// Substrings of the agent's output that mean "rate limited" when it exits non-zero.
    pub rate_limit_patterns: &'static [&'static str],
}

/// The settings Claude Code gets through `--settings`: the Stop hook, nothing written to the
/// worktree.
const CLAUDE_SETTINGS: &str = r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"git baton check --hook claude-stop"}]}]}}"#;

/// Every preset, in the order `init` writes them; the first one found is the pipeline's actor.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "claude",
        program: "claude",
        title: "Claude Code",
        notes: &[
            "Print mode; the prompt on stdin. acceptEdits lets it edit files in the worktree and",
            "nowhere else; --allowedTools lets it run exactly `git baton unchanged` and",
            "`git baton check`. The Stop hook (--settings, no file in the worktree) runs",
            "`git baton check --hook claude-stop`: while a target is uncovered Claude is told",
            "which and keeps working in the same session, up to 3 times per attempt",
            "(add `--max-blocks N` to the hook command to change that).",
            "stream-json: the same result object as json, last, after events that carry a",
            "subscription limit's reset (resetsAt). A rate limit exits 1: output `claude-json`",
            "reads `api_error_status: 429`; the patterns catch it where the output is not read.",
        ],
        command: &[
            "claude",
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            CLAUDE_ALLOWED_TOOLS[0],
            CLAUDE_ALLOWED_TOOLS[1],
            CLAUDE_ALLOWED_TOOLS[2],
            "--settings",
            CLAUDE_SETTINGS,
        ],
        env: &[],
        stdin_prompt: true,
        output: Format::ClaudeJson,
        rate_limit_exit_codes: &[],
        // JSON keys as stream-json prints them, never words: the stream carries what the agent
        // wrote and read (a document about rate limits), but only as JSON strings, where a `"`
        // is escaped, so these match Claude Code's own fields alone.
        rate_limit_patterns: &[r#""api_error_status":429"#, r#""error":"rate_limit""#],
    },
    Preset {
        name: "codex",
        program: "codex",
        title: "Codex CLI",
        notes: &[
            "`codex exec`, the prompt on stdin (`-`; without a prompt it would wait for stdin).",
            "The workspace-write sandbox lets it write the worktree; --add-dir grants the",
            "attempt's own directory, where `git baton unchanged` writes, and nothing more of",
            "the repository's .git (so its own `git commit` is refused: git-baton snapshots",
            "and `finish` commits the work).",
            "allow_login_shell=false: its commands keep the PATH git-baton runs with (a login",
            "shell's profile would reset it, and `git baton` would not be found).",
            "The Stop hook (-c hooks.Stop, nothing written) runs `git baton check --hook",
            "codex-stop`: while a target is uncovered Codex is told which and keeps working,",
            "up to 3 times per attempt. Codex runs a hook only once it is trusted, and trust is",
            "kept per hook in ~/.codex; --dangerously-bypass-hook-trust runs it without, and",
            "runs your other enabled hooks untrusted too: drop it (and the hook is skipped)",
            "if that is not what you want.",
            "A rate limit exits 1: output `codex-jsonl` reads `turn.failed`.",
        ],
        command: &[
            "codex",
            "exec",
            "--json",
            "--sandbox",
            "workspace-write",
            "--add-dir",
            "{attempt_dir}",
            "-c",
            "allow_login_shell=false",
            "-c",
            CODEX_HOOKS,
            "--dangerously-bypass-hook-trust",
            "-",
        ],
        env: &[],
        stdin_prompt: true,
        output: Format::CodexJsonl,
        rate_limit_exit_codes: &[],
        rate_limit_patterns: &["429 Too Many Requests", "hit your usage limit"],
    },
    Preset {
        name: "gemini",
        program: "gemini",
        title: "Gemini CLI",
        notes: &[
            "Headless mode: the prompt on stdin, with -p appended to it. --skip-trust keeps",
            "auto_edit (in an untrusted folder Gemini exits 55 instead). auto_edit approves",
            "edits; --allowed-tools approves `git baton unchanged …` and no other shell",
            "command. Its rules are prefixes, so `git baton check` is not approved: its",
            "prefix would approve the hooks' `check --hook …` too. Gemini takes no hook on",
            "its command line: install the extension in packaging/gemini (`gemini extensions",
            "link packaging/gemini`) for its AfterAgent hook, which keeps Gemini working",
            "while a target is uncovered (up to 3 times). stream-json keeps the tokens of the",
            "turns before an error. It exits with the HTTP status modulo 256: 173 is a 429",
            "(41 no authentication, 42 input error, 53 turn limit, 144 a 400).",
        ],
        command: &[
            "gemini",
            "--output-format",
            "stream-json",
            "--skip-trust",
            "--approval-mode",
            "auto_edit",
            "--allowed-tools",
            GEMINI_ALLOWED_TOOL,
            "-p",
            "Carry out the task above.",
        ],
        env: &[],
        stdin_prompt: true,
        output: Format::GeminiStreamJson,
        rate_limit_exit_codes: &[173],
        rate_limit_patterns: &["RESOURCE_EXHAUSTED", "Quota exceeded", "status 429"],
    },
    Preset {
        name: "aider",
        program: "aider",
        title: "aider",
        notes: &[
            "One message from the prompt file, then exit; --yes-always answers its questions.",
            "Nothing of aider's in the worktree: no commits (auto and dirty), no .gitignore",
            "entry, its history files in the attempt's directory, no repository map (whose",
            "cache would be a directory in the worktree); BROWSER=true keeps --yes-always from",
            "opening the links of an error message. aider does not run shell commands",
            "unattended, so it cannot record a reason: it must change every target, or the",
            "gate blocks the attempt. It exits 0 even when rate limited: output `aider-text`",
            "reads its last API error and its rounded usage lines. The model comes from aider's",
            "own settings (--model, AIDER_MODEL or .aider.conf.yml).",
        ],
        command: &[
            "aider",
            "--message-file",
            "{prompt_file}",
            "--yes-always",
            "--no-auto-commits",
            "--no-dirty-commits",
            "--no-gitignore",
            "--map-tokens",
            "0",
            "--chat-history-file",
            "{attempt_dir}/aider.chat.history.md",
            "--input-history-file",
            "{attempt_dir}/aider.input.history",
            "--no-pretty",
            "--no-stream",
            "--no-check-update",
            "--no-show-release-notes",
            "--no-show-model-warnings",
            "--no-detect-urls",
            "--no-analytics",
        ],
        env: &[("BROWSER", "true")],
        stdin_prompt: false,
        output: Format::AiderText,
        rate_limit_exit_codes: &[],
        rate_limit_patterns: &["litellm.RateLimitError", "rate limited you"],
    },
    Preset {
        name: "opencode",
        program: "opencode",
        title: "opencode",
        notes: &[
            "`opencode run` with JSON events on stdout, the prompt on stdin. OPENCODE_PERMISSION",
            "(merged over your own permission rules) denies every shell command but exactly the",
            "two agent-side commands; edits stay allowed. A denied command is reported to the",
            "model, which goes on; a rule that would ask is rejected (nobody can answer) and",
            "ends the run with exit 0, and the gate decides. A rate limit exits 1: output",
            "`opencode-jsonl` reads its `error` event (statusCode 429, or a quota).",
        ],
        command: &["opencode", "run", "--format", "json"],
        env: &[("OPENCODE_PERMISSION", OPENCODE_PERMISSION)],
        stdin_prompt: true,
        output: Format::OpencodeJsonl,
        rate_limit_exit_codes: &[],
        rate_limit_patterns: &[
            "\"statusCode\":429",
            "rate limit",
            "exceeded your current quota",
        ],
    },
];

/// The plain-command example every written file ends with.
const PLAIN: &[&str] = &[
    "  # Any command is an actor. A plain command records a target that needs no change with",
    "  # `git baton unchanged <TARGET> <REASON>` (run in the worktree), or by writing JSON to",
    "  # $BATON_EVIDENCE_FILE (docs/plan-format.md); exit 75 here means \"rate limited\".",
    "  script:",
    "    command: [./scripts/agent.sh, \"{prompt_file}\"]",
    "    rate_limit: { exit_codes: [75] }",
];

/// The preset named `name`.
pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// Every preset's name, for "did you mean" and help.
pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

/// The `.baton.yml` `init` writes: one actor per preset in `chosen` (in that order; the first
/// runs the gated stage), the plain-command example, and a pipeline.
pub fn render(chosen: &[&Preset], found_on_path: bool) -> String {
    let mut out = String::new();
    out.push_str(
        "# git-baton configuration (docs/config.md); agents and their flags: docs/agents.md.\n",
    );
    if chosen.is_empty() {
        out.push_str("# No agent CLI was found on PATH; `git baton init --agent NAME --force`\n");
        out.push_str(&format!(
            "# writes a preset for one of: {}.\n",
            names().join(", ")
        ));
    } else if found_on_path {
        out.push_str("# One preset per agent CLI found on PATH.\n");
    }
    out.push_str("actors:\n");
    for preset in chosen {
        render_preset(&mut out, preset);
    }
    for line in PLAIN {
        out.push_str(line);
        out.push('\n');
    }
    let executor = chosen.first().map_or("script", |p| p.name);
    out.push_str(
        "\n# A stage succeeds only when every plan target changed or has a recorded reason.\n",
    );
    if let [first, rest @ ..] = chosen
        && !rest.is_empty()
    {
        let rest: Vec<&str> = rest.iter().map(|p| p.name).collect();
        out.push_str(&format!(
            "# To hand the stage to another agent when {} is rate limited, add to it:\n#   fallback: [{}]\n",
            first.name,
            rest.join(", ")
        ));
    }
    out.push_str("pipeline:\n");
    out.push_str(&format!(
        "  - {{ stage: executor, actor: {executor}, gate: coverage }}\n"
    ));
    out
}

fn render_preset(out: &mut String, preset: &Preset) {
    out.push_str(&format!("  # {} (`{}`).\n", preset.title, preset.program));
    for note in preset.notes {
        out.push_str(&format!("  # {note}\n"));
    }
    out.push_str(&format!("  {}:\n    command:\n", preset.name));
    for arg in preset.command {
        out.push_str(&format!("      - {}\n", yaml::scalar(arg)));
    }
    if preset.stdin_prompt {
        out.push_str("    stdin: prompt\n");
    }
    if !preset.env.is_empty() {
        let vars: Vec<String> = preset
            .env
            .iter()
            .map(|(k, v)| format!("{k}: {}", yaml::quoted(v)))
            .collect();
        out.push_str(&format!("    env: {{ {} }}\n", vars.join(", ")));
    }
    out.push_str(&format!("    output: {}\n", preset.output.name()));
    let codes: Vec<String> = preset
        .rate_limit_exit_codes
        .iter()
        .map(i32::to_string)
        .collect();
    let patterns: Vec<String> = preset
        .rate_limit_patterns
        .iter()
        .map(|p| yaml::quoted(p))
        .collect();
    out.push_str("    rate_limit:\n");
    if !codes.is_empty() {
        out.push_str(&format!("      exit_codes: [{}]\n", codes.join(", ")));
    }
    out.push_str(&format!("      patterns: [{}]\n", patterns.join(", ")));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_has_a_unique_name_and_rate_limit_patterns() {
        let mut names = names();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PRESETS.len());
        for preset in PRESETS {
            assert!(!preset.rate_limit_patterns.is_empty(), "{}", preset.name);
        }
    }

    /// Each limit message measured with a real CLI (or in public reports) is caught by a
    /// pattern of its preset, the way exec matches them (a substring, ASCII case ignored).
    #[test]
    fn patterns_catch_the_measured_limit_messages() {
        let caught = |name: &str, message: &str| {
            find(name).unwrap().rate_limit_patterns.iter().any(|p| {
                message
                    .to_ascii_lowercase()
                    .contains(&p.to_ascii_lowercase())
            })
        };
        // Every line of Claude Code's stream-json that reports the 429 (an API key's, a
        // subscriber's), and none of the others.
        for (stream, limit_lines) in [
            (
                include_str!("../../testdata/agents/claude/e2e-stream-429.jsonl"),
                2,
            ),
            (
                include_str!("../../testdata/agents/claude/e2e-stream-usage-limit.jsonl"),
                2,
            ),
            (
                include_str!("../../testdata/agents/claude/e2e-stream-text.jsonl"),
                0,
            ),
        ] {
            let caught_lines = stream.lines().filter(|l| caught("claude", l)).count();
            assert_eq!(caught_lines, limit_lines, "{stream}");
        }
        // What the agent wrote about limits reaches the stream as a JSON string: not caught.
        let written = serde_json::json!({"type": "assistant", "content":
            "an error {\"api_error_status\":429, \"error\":\"rate_limit\"}: You've hit your limit"});
        assert!(!caught("claude", &written.to_string()));
        for message in [
            "litellm.RateLimitError: RateLimitError: OpenAIException - This request would ",
            "The API provider has rate limited you. Try again later or check your quotas.",
        ] {
            assert!(caught("aider", message), "{message}");
        }
        for message in [
            r#"{"type":"error","error":{"name":"APIError","data":{"message":"x","statusCode":429}}}"#,
            "Too Many Requests: {\"error\": {\"message\": \"You exceeded your current quota, please",
        ] {
            assert!(caught("opencode", message), "{message}");
        }
        for message in [
            "exceeded retry limit, last status: 429 Too Many Requests",
            "You\u{2019}ve hit your usage limit. Upgrade to Pro or try again at Dec 1st, 2026 4:00 PM.",
        ] {
            assert!(caught("codex", message), "{message}");
        }
    }

    /// The hook in the settings JSON is the one the docs name, and the JSON is JSON.
    #[test]
    fn claude_settings_carry_the_stop_hook() {
        let settings: serde_json::Value = serde_json::from_str(CLAUDE_SETTINGS).unwrap();
        assert_eq!(
            settings["hooks"]["Stop"][0]["hooks"][0]["command"],
            CLAUDE_STOP_HOOK
        );
        let claude = find("claude").unwrap();
        assert!(claude.command.contains(&CLAUDE_SETTINGS));
        assert!(!claude.command.iter().any(|a| a.contains("full-auto")));
    }

    /// Codex gets its Stop hook as an inline `[hooks]` table naming the docs' command, and the
    /// flag without which an untrusted hook is skipped without a word.
    #[test]
    fn codex_carries_the_stop_hook() {
        let codex = find("codex").unwrap();
        let at = codex
            .command
            .iter()
            .position(|a| *a == CODEX_HOOKS)
            .unwrap();
        assert_eq!(codex.command[at - 1], "-c");
        assert!(CODEX_HOOKS.contains(&format!("command=\"{CODEX_STOP_HOOK}\"")));
        assert!(codex.command.contains(&"--dangerously-bypass-hook-trust"));
        assert_eq!(
            codex.command.last(),
            Some(&"-"),
            "the prompt on stdin stays last"
        );
    }

    /// aider writes its history files where its flags say and nowhere else of the worktree:
    /// every file it is told about is in the attempt's directory.
    #[test]
    fn aider_keeps_its_files_out_of_the_worktree() {
        let aider = find("aider").unwrap();
        for flag in ["--no-gitignore", "--no-auto-commits", "--no-dirty-commits"] {
            assert!(aider.command.contains(&flag), "{flag}");
        }
        let map = aider
            .command
            .iter()
            .position(|a| *a == "--map-tokens")
            .unwrap();
        assert_eq!(
            aider.command[map + 1],
            "0",
            "the repository map caches in the worktree"
        );
        for flag in ["--chat-history-file", "--input-history-file"] {
            let at = aider.command.iter().position(|a| *a == flag).unwrap();
            assert!(
                aider.command[at + 1].starts_with("{attempt_dir}/"),
                "{flag}"
            );
        }
        assert_eq!(aider.output, Format::AiderText);
        let text = render(&[aider], false);
        assert!(text.contains("    env: { BROWSER: 'true' }\n"), "{text}");
    }

    /// opencode's rules are JSON whose last `bash` rules allow exactly the agent-side commands,
    /// after a `*` that denies the rest, and they reach opencode through its environment.
    #[test]
    fn opencode_permits_exactly_the_agent_side_commands() {
        let rules: serde_json::Value = serde_json::from_str(OPENCODE_PERMISSION).unwrap();
        let bash = rules["bash"].as_object().unwrap();
        let mut allowed: Vec<&str> = bash
            .iter()
            .filter(|(_, v)| *v == "allow")
            .map(|(k, _)| k.as_str())
            .collect();
        allowed.sort_unstable();
        assert_eq!(
            allowed,
            [
                "git baton check",
                "git baton check --json",
                "git baton unchanged *"
            ]
        );
        assert_eq!(bash.len(), 4);
        assert_eq!(bash["*"], "deny");
        // The order opencode reads them in: the deny first, so that the allows win.
        let deny = OPENCODE_PERMISSION.find(r#""*":"deny""#).unwrap();
        assert!(
            allowed
                .iter()
                .all(|a| OPENCODE_PERMISSION.find(a).unwrap() > deny)
        );
        let opencode = find("opencode").unwrap();
        assert_eq!(
            opencode.env,
            &[("OPENCODE_PERMISSION", OPENCODE_PERMISSION)]
        );
        assert!(opencode.stdin_prompt);
        assert_eq!(opencode.output, Format::OpencodeJsonl);
        let text = render(&[opencode], false);
        assert!(
            text.contains(&format!(
                "    env: {{ OPENCODE_PERMISSION: '{OPENCODE_PERMISSION}' }}\n"
            )),
            "{text}"
        );
    }

    /// Gemini's one rule is a prefix of the `unchanged` command and of no form of `check`.
    #[test]
    fn gemini_approves_no_form_of_check() {
        let gemini = find("gemini").unwrap();
        let rules: Vec<&&str> = gemini
            .command
            .iter()
            .filter(|a| a.starts_with("run_shell_command("))
            .collect();
        assert_eq!(rules, [&GEMINI_ALLOWED_TOOL]);
        assert!(!GEMINI_ALLOWED_TOOL.contains("check"));
        assert_eq!(gemini.rate_limit_exit_codes, &[429 % 256]);
    }

    #[test]
    fn the_first_chosen_preset_runs_the_gated_stage() {
        let text = render(&[find("codex").unwrap(), find("claude").unwrap()], true);
        assert!(text.contains("actor: codex, gate: coverage"), "{text}");
        assert!(text.contains("#   fallback: [claude]\n"), "{text}");
        let text = render(&[], true);
        assert!(text.contains("actor: script, gate: coverage"), "{text}");
        assert!(text.contains("No agent CLI was found on PATH"), "{text}");
    }
}
