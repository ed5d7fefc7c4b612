//! The packaging in packaging/, loaded into the real CLIs offline: the Claude Code plugin
//! passes `claude plugin validate` and, loaded with `--plugin-dir` into an actor that has no
//! `--settings` or `--allowedTools` of its own, its Stop hook keeps Claude working through a
//! run; the Gemini CLI extension passes `gemini extensions validate` and installs from its
//! local path (its hook at work: tests/agents/hooks.rs); the Codex hooks file is the preset's
//! hook and Codex reads it from a `CODEX_HOME`. Each test runs twice: on packaging/ itself, and
//! on what `git baton init --packaging DIR` wrote outside the repository (the files an installed
//! git-baton carries).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use super::cli;
use super::e2e::{claude_edits, new_text, turn};
use super::harness::{AgentRepo, TARGETS, attempt};
use super::mock::{Script, Turn};

const REASON: &str = "docs/b.md only links to docs/a.md for the rule";

const TIMEOUT: Duration = Duration::from_secs(60);

/// Where the packaging a test loads comes from.
#[derive(Clone, Copy)]
enum Source {
    /// The repository's packaging/ directory.
    Repository,
    /// The directory `git baton init --packaging DIR --agent NAME` writes, outside the
    /// repository.
    Written,
}

/// `dir` (claude-code, gemini, codex: the directory of `agent`'s host files) from `source`.
fn packaging(ar: &AgentRepo, source: Source, agent: &str, dir: &str) -> PathBuf {
    match source {
        Source::Repository => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("packaging")
            .join(dir),
        Source::Written => {
            let out = ar.repo.tmp().join("written");
            let shown = out.display().to_string();
            let init = ar.baton(&["init", "--packaging", &shown, "--agent", agent]);
            assert_eq!(init.code, 0, "{init}");
            assert!(!ar.repo.path(".baton.yml").exists(), "{init}");
            out.join(dir)
        }
    }
}

/// Runs `program args` in the repository with the agents' environment: exit code and the
/// output of both streams.
fn run(ar: &AgentRepo, program: &Path, args: &[&str]) -> (i32, String) {
    let out = ar.env.run(program, args, &ar.repo.path("."), TIMEOUT);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn the_claude_code_plugin_validates_and_its_stop_hook_keeps_claude_working() {
    claude_code_plugin(Source::Repository);
}

#[test]
fn the_claude_code_plugin_init_packaging_writes_validates_and_keeps_claude_working() {
    claude_code_plugin(Source::Written);
}

fn claude_code_plugin(source: Source) {
    let Some(claude) = cli::agent("claude") else {
        return;
    };
    let mut script = claude_edits("docs/a.md").to_vec();
    script.push(turn(Turn::text("done")));
    // After the block: a reason for docs/b.md with `git baton unchanged`.
    script.push(turn(Turn::tool(
        "Bash",
        json!({"command": format!("git baton unchanged docs/b.md '{REASON}'")}),
    )));
    script.push(turn(Turn::text(
        "docs/a.md states the rule; docs/b.md defers to it.",
    )));
    let ar = AgentRepo::new(Script(script));
    let plugin = packaging(&ar, source, "claude", "claude-code");
    let (code, text) = run(
        &ar,
        &claude,
        &["plugin", "validate", &plugin.display().to_string()],
    );
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(r#"hooks: Stop command "git baton check --hook claude-stop""#),
        "{text}"
    );
    // The preset's invocation without its `--settings` (the hook): only the plugin can keep
    // Claude working. Its `--allowedTools` stay: a plugin cannot grant permissions (a
    // `settings.json` at the plugin's root with `permissions.allow` is not applied by 2.1.332:
    // the command "requires approval").
    let yml = format!(
        "actors:\n  claude:\n    command: [claude, -p, --output-format, stream-json, --verbose, \
         --permission-mode, acceptEdits, --allowedTools, 'Bash(git baton unchanged:*)', \
         'Bash(git baton check)', 'Bash(git baton check --json)', --plugin-dir, '{}']\n    \
         stdin: prompt\n    output: claude-json\npipeline:\n  - \
         {{ stage: executor, actor: claude, gate: coverage }}\n",
        plugin.display()
    );
    std::fs::write(ar.repo.path(".baton.yml"), yml).unwrap();
    ar.repo.commit_all("the plugin's actor");
    let run = ar.baton(&["run", "plans/rule.md"]);
    let id = run.run_id();
    assert_eq!(run.code, 0, "{run}\n{}", ar.stdout(&id, 1));
    let state = ar.status(&id);
    assert_eq!(state["status"], "review", "{state:#}");
    let worktree = ar.worktree(&state);
    assert_eq!(
        std::fs::read_to_string(worktree.join(TARGETS[0])).unwrap(),
        new_text(TARGETS[0])
    );
    let b = super::e2e::coverage_row(&state, TARGETS[1]);
    assert_eq!(
        (&b["status"], &b["reason"]),
        (&"unchanged".into(), &REASON.into()),
        "{b:#}"
    );
    assert_eq!(attempt(&state, 1)["hook_blocks"], 1, "{state:#}");
    let sent = ar.mock.scripted();
    assert_eq!(sent.len(), 5);
    assert!(
        sent[3].body.contains("uncovered: docs/b.md."),
        "{}",
        sent[3].body
    );
}

#[test]
fn the_gemini_extension_validates_and_installs_from_its_path() {
    gemini_extension(Source::Repository);
}

#[test]
fn the_gemini_extension_init_packaging_writes_validates_and_installs_from_its_path() {
    gemini_extension(Source::Written);
}

fn gemini_extension(source: Source) {
    let Some(gemini) = cli::agent("gemini") else {
        return;
    };
    let ar = AgentRepo::new(Script(vec![]));
    let extension = packaging(&ar, source, "gemini", "gemini");
    let shown = extension.display().to_string();
    let (code, text) = run(&ar, &gemini, &["extensions", "validate", &shown]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("successfully validated"), "{text}");
    // `extensions install` of a local path does not finish offline (measured: still running
    // after 60 s with gemini 0.61.0); `link` does, and loads the same directory.
    let (code, text) = run(&ar, &gemini, &["extensions", "link", &shown, "--consent"]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = run(&ar, &gemini, &["extensions", "list"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("git-baton (0.1.0)"), "{text}");
    assert!(text.contains(&format!("Path: {shown}")), "{text}");
    let hooks: serde_json::Value =
        serde_json::from_slice(&std::fs::read(extension.join("hooks/hooks.json")).unwrap())
            .unwrap();
    assert_eq!(
        hooks["hooks"]["AfterAgent"][0]["hooks"][0]["command"],
        json!("git baton check --hook gemini-after-agent")
    );
}

#[test]
fn the_codex_hooks_file_keeps_codex_working_from_codex_home() {
    codex_hooks_file(Source::Repository);
}

#[test]
fn the_codex_hooks_file_init_packaging_writes_keeps_codex_working_from_codex_home() {
    codex_hooks_file(Source::Written);
}

fn codex_hooks_file(source: Source) {
    let Some(_) = cli::agent("codex") else { return };
    let ar = AgentRepo::new(Script(vec![
        super::e2e::codex_edits("docs/a.md"),
        turn(Turn::text("done")),
        super::e2e::codex_edits("docs/b.md"),
        turn(Turn::text("Both documents state the new rule.")),
    ]));
    std::fs::copy(
        packaging(&ar, source, "codex", "codex").join("hooks.json"),
        ar.env.codex_home.join("hooks.json"),
    )
    .unwrap();
    // The preset's invocation without its `-c hooks.Stop`: only the file can keep Codex going.
    // The hook runs untrusted (nobody reviewed it in this CODEX_HOME), so the flag stays.
    let yml = "actors:\n  codex:\n    command: [codex, exec, --json, --sandbox, workspace-write, \
               --add-dir, '{attempt_dir}', -c, allow_login_shell=false, \
               --dangerously-bypass-hook-trust, '-']\n    stdin: prompt\n    \
               output: codex-jsonl\npipeline:\n  - { stage: executor, actor: codex, gate: coverage }\n";
    std::fs::write(ar.repo.path(".baton.yml"), yml).unwrap();
    ar.repo.commit_all("the hooks file's actor");
    let run = ar.baton(&["run", "plans/rule.md"]);
    let id = run.run_id();
    assert_eq!(run.code, 0, "{run}\n{}", ar.stdout(&id, 1));
    let state = ar.status(&id);
    assert_eq!(state["status"], "review", "{state:#}");
    assert_eq!(attempt(&state, 1)["hook_blocks"], 1, "{state:#}");
    let sent = ar.mock.scripted();
    assert_eq!(sent.len(), 4);
    assert!(
        sent[2].body.contains("uncovered: docs/b.md."),
        "{}",
        sent[2].body
    );
}
