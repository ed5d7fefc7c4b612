//! The protocol side of `git baton mcp`: an MCP server (Model Context Protocol, through the
//! official `rmcp` SDK) that offers the agent-side commands as tools — `check`, `unchanged` and
//! `status` — so that an agent that speaks MCP records its reasons and asks the gate through
//! tool calls instead of a shell.
//!
//! This module knows the tools' names, descriptions and input schemas, and the framing: one
//! JSON-RPC message per line on the streams it is given, until the client closes its end. What
//! a tool does is a [`Tools`] implementation's business — the command layer's, which calls the
//! very functions the commands call, so that a tool and its command cannot answer differently.
//! A tool that ran answers a JSON document as text; one that was refused answers a tool error
//! (`isError`) whose text is the command's `error:` and `hint:` lines. Arguments that do not
//! match a tool's schema are the protocol's invalid-params error, as the SDK words it.

use std::sync::Arc;

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};

/// The longest request line read: far above any tool call's, far below what would hurt.
pub const MAX_REQUEST_LINE: usize = 1024 * 1024;

/// What a tool answers: the document it prints as JSON, or its refusal, worded as the command
/// line words it (`error: …` and `hint: …` lines).
pub type Answer = Result<Value, String>;

/// What each tool does, for the run whose worktree the server serves.
pub trait Tools: Send + Sync + 'static {
    /// What the gate would say if the attempt ended now (`git baton check --json`), with the
    /// runner checks' results when `checks` (`--checks`).
    fn check(&self, checks: bool) -> Answer;
    /// Records why `target` needed no change (`git baton unchanged TARGET REASON`).
    fn unchanged(&self, target: &str, reason: &str) -> Answer;
    /// The run the worktree belongs to (`git baton status --json RUN`).
    fn status(&self) -> Answer;
}

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("cannot start the MCP server")]
    Runtime(#[source] std::io::Error),
    /// The client sent something else before its `initialize`, or closed the connection.
    #[error("the MCP client's handshake failed: {0}")]
    Handshake(String),
    #[error("the MCP connection ended abnormally: {0}")]
    Ended(String),
}

/// Serves `tools` on `input` and `output` until the client closes `input`. Requests are
/// answered one at a time, on the calling thread: a tool call is a few file reads and writes.
pub fn serve<R, W>(tools: impl Tools, input: R, output: W) -> Result<(), McpError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    // The SDK's own timeouts need the timer; no I/O driver: stdin and stdout are read and
    // written on the runtime's blocking threads.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(McpError::Runtime)?;
    let server = Server::new(Arc::new(tools));
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_server(input, output)
        .with_max_line_length(MAX_REQUEST_LINE);
    let result = runtime.block_on(async move {
        let running = server
            .serve(transport)
            .await
            .map_err(|e| McpError::Handshake(e.to_string()))?;
        running
            .waiting()
            .await
            .map(drop)
            .map_err(|e| McpError::Ended(e.to_string()))
    });
    // A read of the process's stdin left pending cannot be cancelled: do not wait for it.
    runtime.shutdown_background();
    result
}

/// The tools' arguments: what the schemas say, and what a call must send.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct UnchangedParams {
    /// The target exactly as the plan lists it.
    target: String,
    /// Why it needed no change: specific enough for a reviewer to check (at least 3 words and
    /// 15 characters, no placeholder).
    reason: String,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct CheckParams {
    /// Also run the runner checks of the attempt's stage now, for information: only
    /// git-baton's own run of them, after the agent exits, counts.
    #[serde(default)]
    checks: bool,
}

#[derive(Clone)]
struct Server {
    tools: Arc<dyn Tools>,
    tool_router: ToolRouter<Server>,
}

impl Server {
    fn new(tools: Arc<dyn Tools>) -> Server {
        Server {
            tools,
            tool_router: Server::tool_router(),
        }
    }
}

/// A tool's answer as the protocol carries it.
fn result(answer: Answer) -> CallToolResult {
    match answer {
        Ok(document) => {
            let mut text = serde_json::to_string_pretty(&document).expect("serializes");
            text.push('\n');
            CallToolResult::success(vec![ContentBlock::text(text)])
        }
        Err(refusal) => CallToolResult::error(vec![ContentBlock::text(refusal)]),
    }
}

#[tool_router]
impl Server {
    #[tool(
        name = "check",
        description = "What the coverage gate would say if this attempt ended now: the same \
                       evidence, diff and rule as the gate that runs when the agent exits (like \
                       `git baton check --json`). `passed` is the verdict; `coverage.targets` \
                       lists each target as changed, unchanged (with its reason) or uncovered.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    fn check(&self, Parameters(params): Parameters<CheckParams>) -> CallToolResult {
        result(self.tools.check(params.checks))
    }

    #[tool(
        name = "unchanged",
        description = "Record why a target of the plan needed no change, in this attempt's \
                       evidence, where the coverage gate reads it when the agent exits (like \
                       `git baton unchanged TARGET REASON`). Refused, with nothing recorded, for \
                       a target the plan does not list, a placeholder or too-short reason, or a \
                       target that already has a reason in this attempt.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    fn unchanged(&self, Parameters(params): Parameters<UnchangedParams>) -> CallToolResult {
        result(self.tools.unchanged(&params.target, &params.reason))
    }

    #[tool(
        name = "status",
        description = "The git-baton run this worktree belongs to: its status, stages and \
                       attempts, and coverage (like `git baton status --json`).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    fn status(&self) -> CallToolResult {
        result(self.tools.status())
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("git-baton", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "git-baton's agent-side commands for the running attempt of this worktree's \
                 run: `unchanged` records why a target needed no change, `check` says what the \
                 coverage gate would say now, `status` shows the run.",
            )
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::*;

    /// Tools that remember their calls and refuse one target.
    #[derive(Default)]
    struct Fake {
        calls: Arc<Mutex<Vec<String>>>,
    }

    impl Tools for Fake {
        fn check(&self, checks: bool) -> Answer {
            self.calls.lock().unwrap().push(format!("check {checks}"));
            Ok(json!({"passed": false}))
        }
        fn unchanged(&self, target: &str, reason: &str) -> Answer {
            self.calls
                .lock()
                .unwrap()
                .push(format!("unchanged {target} {reason}"));
            match target {
                "docs/a.md" => Ok(json!({"target": target})),
                _ => Err(format!(
                    "error: unknown target `{target}`\nhint: did you mean `docs/a.md`?"
                )),
            }
        }
        fn status(&self) -> Answer {
            Ok(json!({"status": "running"}))
        }
    }

    /// Plays `requests` (one JSON-RPC message each) against the server over an in-memory pipe,
    /// then closes it; the answers, in order, and the tools' calls.
    fn exchange(requests: &[Value]) -> (Vec<Value>, Vec<String>) {
        let fake = Fake::default();
        let calls = fake.calls.clone();
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        let serving = std::thread::spawn(move || serve(fake, server_read, server_write));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let expected = requests.iter().filter(|r| r.get("id").is_some()).count();
        let answers = runtime.block_on(async {
            let (read, mut write) = tokio::io::split(client);
            for request in requests {
                let mut line = request.to_string();
                line.push('\n');
                write.write_all(line.as_bytes()).await.unwrap();
            }
            let mut lines = BufReader::new(read).lines();
            let mut answers = Vec::new();
            while answers.len() < expected {
                let line =
                    tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line())
                        .await
                        .expect("the server answers within 10 s")
                        .unwrap()
                        .expect("the server answers every request");
                answers.push(serde_json::from_str(&line).unwrap());
            }
            drop(write);
            drop(lines);
            answers
        });
        serving.join().unwrap().unwrap();
        let calls = calls.lock().unwrap().clone();
        (answers, calls)
    }

    fn initialize() -> [Value; 2] {
        [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ]
    }

    fn call(id: u64, name: &str, arguments: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}})
    }

    #[test]
    fn the_three_tools_are_listed_with_their_schemas() {
        let mut requests = initialize().to_vec();
        requests.push(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        let (answers, _) = exchange(&requests);
        assert_eq!(answers[0]["result"]["serverInfo"]["name"], "git-baton");
        assert_eq!(answers[0]["result"]["protocolVersion"], "2025-06-18");
        let tools = answers[1]["result"]["tools"].as_array().unwrap();
        let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        names.sort();
        assert_eq!(names, ["check", "status", "unchanged"]);
        let unchanged = tools.iter().find(|t| t["name"] == "unchanged").unwrap();
        let mut required: Vec<&str> = unchanged["inputSchema"]["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        required.sort();
        assert_eq!(required, ["reason", "target"]);
        assert_eq!(
            unchanged["inputSchema"]["properties"]["target"]["type"],
            "string"
        );
        let check = tools.iter().find(|t| t["name"] == "check").unwrap();
        assert_eq!(
            check["inputSchema"]["properties"]["checks"]["type"],
            "boolean"
        );
        assert_eq!(check["annotations"]["readOnlyHint"], true);
    }

    #[test]
    fn a_call_answers_json_text_and_a_refusal_is_a_tool_error() {
        let mut requests = initialize().to_vec();
        requests.push(call(
            2,
            "unchanged",
            json!({"target": "docs/a.md", "reason": "already states the rule"}),
        ));
        requests.push(call(
            3,
            "unchanged",
            json!({"target": "docs/c.md", "reason": "already states the rule"}),
        ));
        requests.push(call(4, "check", json!({})));
        requests.push(call(5, "status", json!({})));
        let (answers, calls) = exchange(&requests);
        let text = |a: &Value| {
            a["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        assert_eq!(answers[1]["result"]["isError"], false, "{}", answers[1]);
        let doc: Value = serde_json::from_str(&text(&answers[1])).unwrap();
        assert_eq!(doc, json!({"target": "docs/a.md"}));
        assert_eq!(answers[2]["result"]["isError"], true, "{}", answers[2]);
        assert_eq!(
            text(&answers[2]),
            "error: unknown target `docs/c.md`\nhint: did you mean `docs/a.md`?"
        );
        let doc: Value = serde_json::from_str(&text(&answers[3])).unwrap();
        assert_eq!(doc["passed"], false);
        let doc: Value = serde_json::from_str(&text(&answers[4])).unwrap();
        assert_eq!(doc["status"], "running");
        assert_eq!(
            calls,
            [
                "unchanged docs/a.md already states the rule",
                "unchanged docs/c.md already states the rule",
                "check false",
            ]
        );
    }

    #[test]
    fn arguments_off_the_schema_are_tool_errors_and_unknown_names_protocol_errors() {
        let mut requests = initialize().to_vec();
        requests.push(call(2, "unchanged", json!({"target": "docs/a.md"})));
        requests.push(call(
            3,
            "unchanged",
            json!({"target": 7, "reason": "x y z w"}),
        ));
        requests.push(call(4, "finish", json!({})));
        requests.push(json!({"jsonrpc": "2.0", "id": 5, "method": "no/such/method"}));
        let (answers, calls) = exchange(&requests);
        // The model can correct its call: the SDK's words, as a tool error.
        assert_eq!(answers[1]["result"]["isError"], true, "{}", answers[1]);
        assert_eq!(
            answers[1]["result"]["content"][0]["text"],
            "failed to deserialize parameters: missing field `reason`"
        );
        assert_eq!(answers[2]["result"]["isError"], true, "{}", answers[2]);
        assert_eq!(answers[3]["error"]["code"], -32602, "{}", answers[3]);
        assert_eq!(answers[4]["error"]["code"], -32601, "{}", answers[4]);
        assert!(calls.is_empty(), "{calls:?}");
    }
}
