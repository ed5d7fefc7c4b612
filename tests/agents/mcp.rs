//! `git baton mcp` started by the real Claude Code, Codex, Gemini CLI and opencode, configured as
//! docs/agents.md says ("The MCP server"), in a run's attempt: the mock model calls the server's `unchanged` tool
//! for a target the plan does not have (a tool error the model reads, nothing recorded), then
//! for `docs/b.md` with a reason, and edits `docs/a.md`; the reason lands in the attempt's
//! evidence and the run reaches `review` with `docs/b.md` covered by it.

use serde_json::{Value, json};

use super::cli;
use super::e2e::{claude_edits, codex_edits, coverage_row, new_text, turn};
use super::harness::{AgentRepo, attempt};
use super::mock::{Request, Script, Turn};
use super::opencode::{assert_offline, opencode_repo, write};

const REASON: &str = "already states that grades are A to F in its first section";

/// Claude Code's flags for the server: its configuration inline (no file in the worktree), no
/// other server, and its tools allowed (`mcp__<server>__<tool>`).
const CLAUDE_MCP: [&str; 5] = [
    "mcp__baton__unchanged",
    "mcp__baton__check",
    "--mcp-config",
    r#"{"mcpServers":{"baton":{"command":"git","args":["baton","mcp"]}}}"#,
    "--strict-mcp-config",
];

/// Codex's: the server in its configuration, given with `-c` (its tools are the namespace
/// `mcp__baton`).
const CODEX_MCP: [&str; 4] = [
    "-c",
    "mcp_servers.baton.command=\"git\"",
    "-c",
    "mcp_servers.baton.args=[\"baton\", \"mcp\"]",
];

/// For models that can search for tools (the suite's `gpt-5.5`), Codex 0.171.0 offers MCP tools
/// only through its `tool_search` (played by the test below); with a model it has no metadata
/// for, it offers them upfront.
const CODEX_UPFRONT_TOOLS: [&str; 2] = ["-c", "model=\"gpt-4.1\""];

/// `items` as YAML list items of an actor's `command:`.
fn yaml_items(items: &[&str]) -> String {
    items
        .iter()
        .map(|i| format!("      - {}\n", serde_json::to_string(i).unwrap()))
        .collect()
}

/// `yml` (as `init` wrote it) with `items` inserted into `actor`'s command before its item
/// `before`.
fn insert_args(yml: &str, actor: &str, before: &str, items: &[&str]) -> String {
    let block = yml
        .find(&format!("  {actor}:\n"))
        .unwrap_or_else(|| panic!("no {actor} in\n{yml}"));
    let at = block
        + yml[block..]
            .find(&format!("      - {before}\n"))
            .unwrap_or_else(|| panic!("no {before} in {actor}'s command:\n{yml}"));
    format!("{}{}{}", &yml[..at], yaml_items(items), &yml[at..])
}

/// The model's turns: two calls of the server's `unchanged` tool (named `tool` by the CLI), for
/// `docs/bb.md` and then `docs/b.md`, the `edits` of `docs/a.md` in the CLI's own tools, and
/// its last words.
fn mcp_script(tool: &str, edits: impl IntoIterator<Item = Turn>) -> Vec<Turn> {
    let mut script = vec![
        turn(Turn::tool(
            tool,
            json!({"target": "docs/bb.md", "reason": REASON}),
        )),
        turn(Turn::tool(
            tool,
            json!({"target": "docs/b.md", "reason": REASON}),
        )),
    ];
    script.extend(edits);
    script.push(turn(Turn::text(
        "docs/a.md states the rule; docs/b.md already did.",
    )));
    script
}

/// The evidence the attempt wrote: its `target_coverage` entries as `target: reason`.
fn evidence_entries(ar: &AgentRepo, id: &str) -> Vec<String> {
    let path = ar.repo.path(&format!(
        ".git/baton/runs/{id}/attempts/executor-1/evidence.json"
    ));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let evidence: Value = serde_json::from_str(&text).unwrap();
    evidence["target_coverage"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{}: {} ({})",
                e["target"].as_str().unwrap(),
                e["reason"].as_str().unwrap(),
                e["status"].as_str().unwrap()
            )
        })
        .collect()
}

/// The run reached review with `docs/a.md` changed and `docs/b.md` covered by the reason the
/// model sent through the server; the refused target left no trace.
fn assert_reason_landed(ar: &AgentRepo, id: &str) -> Value {
    let state = ar.status(id);
    assert_eq!(state["status"], "review", "{state:#}");
    assert_eq!(
        std::fs::read_to_string(ar.worktree(&state).join("docs/a.md")).unwrap(),
        new_text("docs/a.md")
    );
    assert_eq!(
        evidence_entries(ar, id),
        [format!("docs/b.md: {REASON} (unchanged)")]
    );
    let row = coverage_row(&state, "docs/b.md");
    assert_eq!(row["status"], "unchanged", "{row:#}");
    assert_eq!(row["reason"], REASON, "{row:#}");
    assert_eq!(coverage_row(&state, "docs/a.md")["status"], "changed");
    assert_eq!(attempt(&state, 1)["outcome"], "succeeded");
    assert_eq!(ar.mock.overruns(), 0);
    state
}

/// The scripted requests after the first: what the model was sent back after each turn.
fn answers_after(sent: &[Request], turn: usize) -> &str {
    &sent
        .get(turn + 1)
        .unwrap_or_else(|| panic!("no request after turn {turn}"))
        .body
}

/// What the model was sent back after its call of `unchanged` for `docs/bb.md` (turn
/// `refused`) and after the next, for `docs/b.md`: the refusal with the command's `error:` and
/// `hint:` words, then the reason's acceptance as the tool's JSON. Returns the refusal, for the
/// form of tool error each CLI's protocol has.
fn assert_refused_then_recorded(sent: &[Request], refused: usize) -> &str {
    let refusal = answers_after(sent, refused);
    assert!(
        refusal.contains("error: unknown target `docs/bb.md`")
            && refusal.contains("did you mean `docs/b.md`?"),
        "{refusal}"
    );
    let accepted = answers_after(sent, refused + 1);
    assert!(accepted.contains(r#"\"recorded\": true"#), "{accepted}");
    refusal
}

/// The names of the tools a request offers the model (a tool with no name, such as Codex's
/// `tool_search`, by its type).
fn tool_names(request: &Request) -> Vec<String> {
    request.json()["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {}", request.body))
        .iter()
        .filter_map(|t| t["name"].as_str().or(t["type"].as_str()).map(String::from))
        .collect()
}

#[test]
fn claude_code_records_a_reason_through_the_mcp_server() {
    let Some(_) = cli::agent("claude") else {
        return;
    };
    let ar = AgentRepo::new(Script(mcp_script(
        "mcp__baton__unchanged",
        claude_edits("docs/a.md"),
    )));
    let yml = ar.init();
    ar.repo.write(
        ".baton.yml",
        &insert_args(&yml, "claude", "--settings", &CLAUDE_MCP),
    );
    ar.repo.commit_all("claude starts git baton mcp");
    let run = ar.baton(&["run", "plans/rule.md"]);
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    assert_reason_landed(&ar, &id);

    let sent = ar.mock.scripted();
    // The server's tools were offered to the model.
    assert!(
        sent[0].body.contains("mcp__baton__unchanged"),
        "{}",
        sent[0].body
    );
    // The refusal reached the model as a tool error.
    let refused = assert_refused_then_recorded(&sent, 0);
    assert!(refused.contains(r#""is_error":true"#), "{refused}");
}

#[test]
fn codex_records_a_reason_through_the_mcp_server() {
    let Some(_) = cli::agent("codex") else { return };
    let ar = AgentRepo::new(Script(mcp_script(
        "mcp__baton__unchanged",
        [codex_edits("docs/a.md")],
    )));
    let yml = ar.init();
    ar.repo.write(
        ".baton.yml",
        &insert_args(
            &yml,
            "codex",
            "'-'",
            &[&CODEX_MCP[..], &CODEX_UPFRONT_TOOLS[..]].concat(),
        ),
    );
    ar.repo.commit_all("codex starts git baton mcp");
    let run = ar.baton(&["run", "plans/rule.md", "--actor", "executor=codex"]);
    let sent = ar.mock.scripted();
    // The server's tools were offered to the model.
    let tools = tool_names(&sent[0]);
    assert!(tools.iter().any(|t| t == "mcp__baton"), "{tools:?}\n{run}");
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    assert_reason_landed(&ar, &id);
    assert_refused_then_recorded(&sent, 0);
}

/// Codex with the suite's `gpt-5.5`, a model it knows can search for tools: the server's tools
/// are not offered upfront, the model finds `unchanged` through Codex's `tool_search` first, and
/// then records the reason as with any other model.
#[test]
fn codex_finds_the_mcp_tools_through_its_tool_search() {
    let Some(_) = cli::agent("codex") else { return };
    let mut script = vec![turn(Turn::tool(
        "tool_search",
        json!({"query": "record a reason a git-baton target needs no change"}),
    ))];
    script.extend(mcp_script(
        "mcp__baton__unchanged",
        [codex_edits("docs/a.md")],
    ));
    let ar = AgentRepo::new(Script(script));
    let yml = ar.init();
    ar.repo
        .write(".baton.yml", &insert_args(&yml, "codex", "'-'", &CODEX_MCP));
    ar.repo.commit_all("codex starts git baton mcp");
    let run = ar.baton(&["run", "plans/rule.md", "--actor", "executor=codex"]);
    let sent = ar.mock.scripted();
    // Upfront: the search, not the server's tools.
    let first = tool_names(&sent[0]);
    assert!(first.iter().any(|t| t == "tool_search"), "{first:?}\n{run}");
    assert!(!first.iter().any(|t| t == "mcp__baton"), "{first:?}");
    // The search's answer names the server's `unchanged` tool.
    let found = sent[1].json();
    let output = found["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "tool_search_output")
        .unwrap_or_else(|| panic!("no tool_search_output in {found:#}"));
    assert_eq!(output["call_id"], "call_mock0001", "{output:#}");
    let baton = output["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "namespace" && t["name"] == "mcp__baton")
        .unwrap_or_else(|| panic!("the search found no mcp__baton: {output:#}"));
    let found: Vec<&str> = baton["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(found, ["unchanged", "check", "status"], "{output:#}");
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    assert_reason_landed(&ar, &id);
    assert_refused_then_recorded(&sent, 1);
}

/// Gemini CLI's: the server in the scratch home's `~/.gemini/settings.json` (`mcpServers`,
/// beside what [`cli::AgentEnv`] wrote there; Gemini 0.61.0 takes no server on its command
/// line), and its tools approved on the actor's command line (`mcp_<server>_<tool>`): headless,
/// Gemini offers the model no MCP tool that would need an approval.
const GEMINI_MCP_SERVER: &str = r#"{"command": "git", "args": ["baton", "mcp"]}"#;
const GEMINI_MCP: [&str; 4] = [
    "--allowed-tools",
    "mcp_baton_unchanged",
    "--allowed-tools",
    "mcp_baton_check",
];

/// The names of the functions a Gemini request offers the model.
fn gemini_tools(request: &Request) -> Vec<String> {
    request.json()["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["functionDeclarations"].as_array().into_iter().flatten())
        .filter_map(|f| f["name"].as_str().map(String::from))
        .collect()
}

#[test]
fn gemini_cli_records_a_reason_through_the_mcp_server() {
    let Some(_) = cli::agent("gemini") else {
        return;
    };
    let write = turn(Turn::tool(
        "write_file",
        json!({"file_path": "docs/a.md", "content": new_text("docs/a.md")}),
    ));
    let ar = AgentRepo::new(Script(mcp_script("mcp_baton_unchanged", [write])));
    let path = ar.env.home.join(".gemini/settings.json");
    let mut settings: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    settings["mcpServers"] =
        json!({"baton": serde_json::from_str::<Value>(GEMINI_MCP_SERVER).unwrap()});
    std::fs::write(&path, settings.to_string()).unwrap();
    let yml = ar.init_agent("gemini");
    ar.repo.write(
        ".baton.yml",
        &insert_args(&yml, "gemini", "-p", &GEMINI_MCP),
    );
    ar.repo.commit_all("gemini starts git baton mcp");
    let run = ar.baton(&["run", "plans/rule.md"]);
    let sent = ar.mock.scripted();
    // The approved tools of the server were offered to the model, and only those.
    let tools = gemini_tools(&sent[0]);
    let baton: Vec<&String> = tools.iter().filter(|t| t.starts_with("mcp_")).collect();
    assert_eq!(
        baton,
        ["mcp_baton_check", "mcp_baton_unchanged"],
        "{tools:?}\n{run}"
    );
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    assert_reason_landed(&ar, &id);
    assert_refused_then_recorded(&sent, 0);
}

/// opencode's: the server in its configuration's `mcp` (a `local` server, its command an array),
/// here the scratch home's global `~/.config/opencode/opencode.json`, which opencode merges with
/// the suite's `OPENCODE_CONFIG_CONTENT`. opencode 1.18.33 offers the tools as
/// `<server>_<tool>` and runs them without a permission rule.
const OPENCODE_MCP: &str =
    r#"{"mcp": {"baton": {"type": "local", "command": ["git", "baton", "mcp"]}}}"#;

#[test]
fn opencode_records_a_reason_through_the_mcp_server() {
    let Some(_) = cli::agent("opencode") else {
        return;
    };
    let ar = opencode_repo(Script(mcp_script("baton_unchanged", [write("docs/a.md")])));
    let dir = ar.env.home.join(".config/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("opencode.json"), OPENCODE_MCP).unwrap();
    let run = ar.baton(&["run", "plans/rule.md"]);
    let sent = ar.mock.scripted();
    // The server's tools were offered to the model beside opencode's own.
    let tools = tool_names(&sent[0]);
    let baton: Vec<&String> = tools.iter().filter(|t| t.starts_with("baton_")).collect();
    assert_eq!(
        baton,
        ["baton_check", "baton_status", "baton_unchanged"],
        "{tools:?}\n{run}"
    );
    assert_eq!(run.code, 0, "{run}");
    let id = run.run_id();
    assert_reason_landed(&ar, &id);
    // The server is a child of opencode's on stdio: the mock saw only the model's requests
    // and the npm registry's.
    assert_offline(&ar.mock);
    let refused = assert_refused_then_recorded(&sent, 0);
    assert!(refused.contains(r#""is_error":true"#), "{refused}");
}
