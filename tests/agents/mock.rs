//! A scripted mock model server on 127.0.0.1, std only, for driving the real agent CLIs offline.
//!
//! It speaks just enough HTTP/1.1 (keep-alive, `Content-Length` or chunked request bodies) for
//! Claude Code (`POST /v1/messages`, Anthropic's server-sent events), Codex
//! (`POST /v1/responses`, OpenAI's Responses events), aider (`POST /v1/chat/completions`,
//! OpenAI's chat completions, one JSON object or, when asked to stream, `chat.completion.chunk`
//! events) and Gemini CLI (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`, one
//! `candidates` chunk with its `usageMetadata`). A [`Script`] is the list of the model's turns in
//! order, whichever CLI asks: each request that carries a tool list (the agent's main loop)
//! takes the next turn and gets it rendered in the protocol it asked in, so one script can serve
//! Claude Code, then Codex, then Claude Code again. Requests without tools (a CLI's side
//! requests, such as a title) get a short fixed answer and take no turn — except chat
//! completions, where aider sends its edits as text and never a tool list: every one of them
//! takes a turn. An error turn, once reached, answers every later scripted request in the same protocol too — a rate limit does
//! not lift between retries — while the other protocol's requests go on with the script, as
//! another provider would: a stage can fall back from a rate-limited Claude Code to Codex.
//! A request past the end of the script gets a 400 the CLI does not retry, and is counted, so a
//! test fails on an agent that asked more than the script expected instead of hanging.
//!
//! Every request is recorded (method, path, headers, body) so that tests assert what the CLI
//! sent: the prompt, the tool results, the Stop hook's reason.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// Connections one server accepts at most; the CLIs open a handful each.
const MAX_CONNECTIONS: usize = 1_000;
/// Requests served on one keep-alive connection at most.
const MAX_REQUESTS_PER_CONNECTION: usize = 1_000;
/// The largest request head (request line and headers) read.
const MAX_HEAD: usize = 64 * 1024;
/// The largest request body read; Claude Code's first request is about 50 KiB.
const MAX_BODY: usize = 16 * 1024 * 1024;
/// How long an idle keep-alive connection is kept open.
const IDLE: Duration = Duration::from_secs(120);

/// Token counts one turn reports; the CLIs sum them into their usage totals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
}

impl Default for Usage {
    fn default() -> Usage {
        Usage {
            input: 100,
            output: 20,
            cache_read: 0,
        }
    }
}

/// One turn of the model.
#[derive(Clone, Debug)]
pub enum Turn {
    /// A text answer that ends the model's turn.
    Text { text: String, usage: Usage },
    /// A tool call: `input` is Claude Code's `tool_use.input`, or for Codex the object whose JSON
    /// text becomes the `function_call`'s `arguments`.
    Tool {
        name: String,
        input: Value,
        usage: Usage,
    },
    /// An HTTP error with these headers and JSON body, for this request and every later one in
    /// the same protocol.
    Error {
        status: u16,
        headers: Vec<(String, String)>,
        body: Value,
    },
}

impl Turn {
    pub fn text(text: &str) -> Turn {
        Turn::Text {
            text: text.to_string(),
            usage: Usage::default(),
        }
    }

    pub fn tool(name: &str, input: Value) -> Turn {
        Turn::Tool {
            name: name.to_string(),
            input,
            usage: Usage::default(),
        }
    }

    /// Claude Code's `Write` tool: creates or overwrites `file_path` (absolute) with `content`.
    pub fn claude_write(file_path: &std::path::Path, content: &str) -> Turn {
        Turn::tool(
            "Write",
            json!({"file_path": file_path.display().to_string(), "content": content}),
        )
    }

    /// Codex's `exec_command` tool: runs `cmd` in its sandbox, in the working directory.
    pub fn codex_exec(cmd: &str) -> Turn {
        Turn::tool("exec_command", json!({"cmd": cmd}))
    }

    /// A 429 in the shape of the protocol's rate-limit error, with these extra headers.
    pub fn rate_limited(headers: &[(&str, &str)]) -> Turn {
        Turn::Error {
            status: 429,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: json!({
                "type": "error",
                "error": {
                    "type": "rate_limit_error",
                    "code": "rate_limit_exceeded",
                    "message": "This request would exceed your account's rate limit. Please try again later."
                }
            }),
        }
    }

    /// The same turn reporting these token counts.
    pub fn with_usage(mut self, new: Usage) -> Turn {
        match &mut self {
            Turn::Text { usage, .. } | Turn::Tool { usage, .. } => *usage = new,
            Turn::Error { .. } => {}
        }
        self
    }
}

/// The model's turns, in order.
#[derive(Clone, Debug, Default)]
pub struct Script(pub Vec<Turn>);

/// One request as the CLI sent it.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// The request target, query included (`/v1/messages?beta=true`).
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// Whether it took a turn of the script (it carried tools).
    pub scripted: bool,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

#[derive(Default)]
struct State {
    turns: Vec<Turn>,
    next: usize,
    /// The error turn reached and the protocol it was reached in, whose later scripted
    /// requests it answers.
    sticky: Option<(Wire, Turn)>,
    requests: Vec<Request>,
    overruns: usize,
    /// Headers sent with every answer that plays a text or tool turn (the API's rate-limit
    /// headers on a success).
    success_headers: Vec<(String, String)>,
}

/// A running server; dropping it stops accepting connections.
pub struct MockServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
}

impl MockServer {
    /// Starts a server on 127.0.0.1 at a free port that plays `script`.
    pub fn start(script: Script) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State {
            turns: script.0,
            ..State::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (Arc::clone(&state), Arc::clone(&stop));
        std::thread::spawn(move || {
            for conn in listener.incoming().take(MAX_CONNECTIONS) {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let s = Arc::clone(&s);
                std::thread::spawn(move || serve(conn, &s));
            }
        });
        MockServer { addr, state, stop }
    }

    /// `http://127.0.0.1:PORT`, the base URL without a path.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.state.lock().unwrap().requests.clone()
    }

    /// The requests that took a turn of the script (or its sticky error), in order.
    pub fn scripted(&self) -> Vec<Request> {
        self.requests().into_iter().filter(|r| r.scripted).collect()
    }

    /// How many turns of the script have been played.
    pub fn played(&self) -> usize {
        self.state.lock().unwrap().next
    }

    /// How many scripted requests came after the script's end.
    pub fn overruns(&self) -> usize {
        self.state.lock().unwrap().overruns
    }

    /// Appends turns to the script, for a test that goes on with the same server.
    pub fn extend(&self, turns: impl IntoIterator<Item = Turn>) {
        let mut state = self.state.lock().unwrap();
        state.turns.extend(turns);
    }

    /// Sends `headers` with every later answer that plays a text or tool turn, as the API sends
    /// its rate-limit headers (`anthropic-ratelimit-unified-*`) on a success.
    pub fn success_headers(&self, headers: &[(&str, &str)]) {
        self.state.lock().unwrap().success_headers = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    }

    /// Lifts a sticky error: the next scripted request takes the next turn again.
    pub fn lift_error(&self) {
        self.state.lock().unwrap().sticky = None;
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so that it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

/// Serves the requests of one connection until it closes, idles out or errs.
fn serve(conn: TcpStream, state: &Mutex<State>) {
    let _ = conn.set_read_timeout(Some(IDLE));
    let Ok(mut writer) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    for _ in 0..MAX_REQUESTS_PER_CONNECTION {
        let Some(request) = read_request(&mut reader) else {
            return;
        };
        let response = respond(request, state);
        if writer
            .write_all(&response)
            .and_then(|()| writer.flush())
            .is_err()
        {
            return;
        }
    }
}

/// Reads one request; `None` at the end of the connection or on anything malformed.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut head = Vec::new();
    // Lines up to the blank one; each read is bounded by the head's budget.
    while head.len() < MAX_HEAD {
        let mut line = Vec::new();
        let n = reader
            .by_ref()
            .take((MAX_HEAD - head.len()) as u64)
            .read_until(b'\n', &mut line)
            .ok()?;
        if n == 0 {
            return None;
        }
        if line == b"\r\n" || line == b"\n" {
            break;
        }
        head.extend_from_slice(&line);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.lines();
    let mut first = lines.next()?.split_whitespace();
    let method = first.next()?.to_string();
    let path = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let get = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v);
    let body = if get("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        read_chunked(reader)?
    } else {
        let len: usize = get("content-length").map_or(Some(0), |v| v.parse().ok())?;
        if len > MAX_BODY {
            return None;
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body).ok()?;
        body
    };
    Some(Request {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
        scripted: false,
    })
}

fn read_chunked(reader: &mut BufReader<TcpStream>) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    while body.len() <= MAX_BODY {
        let mut size = String::new();
        reader.by_ref().take(64).read_line(&mut size).ok()?;
        let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk).ok()?;
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
    None
}

/// Which wire protocol a request speaks, from its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wire {
    Anthropic,
    OpenAi,
    /// OpenAI's chat completions: every request is the agent's main loop.
    Chat,
    /// Gemini's `streamGenerateContent`; the model is in the path.
    Gemini,
}

fn respond(mut request: Request, state: &Mutex<State>) -> Vec<u8> {
    let wire = match (request.method.as_str(), request.path.split('?').next()) {
        ("POST", Some("/v1/messages")) => Wire::Anthropic,
        ("POST", Some("/v1/responses")) => Wire::OpenAi,
        ("POST", Some("/v1/chat/completions")) => Wire::Chat,
        ("POST", Some(p))
            if p.starts_with("/v1beta/models/") && p.ends_with(":streamGenerateContent") =>
        {
            Wire::Gemini
        }
        _ => {
            state.lock().unwrap().requests.push(request);
            return http(404, &[], "application/json", br#"{"error":"not found"}"#);
        }
    };
    let body = request.json();
    let model = match wire {
        Wire::Gemini => gemini_model(&request.path),
        _ => body["model"].as_str().unwrap_or("mock-model").to_string(),
    };
    let has_tools = wire == Wire::Chat || body["tools"].as_array().is_some_and(|t| !t.is_empty());
    let stream = body["stream"].as_bool().unwrap_or(false);
    let turn = {
        let mut st = state.lock().unwrap();
        request.scripted = has_tools;
        let turn = if !has_tools {
            Some(Turn::text("ok"))
        } else if let Some((_, err)) = st.sticky.as_ref().filter(|(w, _)| *w == wire) {
            Some(err.clone())
        } else if let Some(turn) = st.turns.get(st.next).cloned() {
            st.next += 1;
            if matches!(turn, Turn::Error { .. }) {
                st.sticky = Some((wire, turn.clone()));
            }
            Some(turn)
        } else {
            st.overruns += 1;
            None
        };
        st.requests.push(request);
        turn
    };
    let (n, extra) = {
        let st = state.lock().unwrap();
        (st.requests.len(), st.success_headers.clone())
    };
    let extra: Vec<(&str, &str)> = extra
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    if let (Wire::Chat, Some(Turn::Tool { name, .. })) = (wire, &turn) {
        // A script written for another CLI: refused like a request past the script's end.
        state.lock().unwrap().overruns += 1;
        let body = json!({"error": {"type": "invalid_request_error", "message": format!(
            "mock model server: a tool call ({name}) scripted for a chat completion, which \
             gets text turns only")}});
        return http(400, &[], "application/json", body.to_string().as_bytes());
    }
    match turn {
        None => {
            let body = json!({"type": "error", "error": {
                "type": "invalid_request_error",
                "message": "mock model server: the script has no more turns"}});
            http(400, &[], "application/json", body.to_string().as_bytes())
        }
        Some(Turn::Error {
            status,
            headers,
            body,
        }) => {
            let headers: Vec<(&str, &str)> = headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            http(
                status,
                &headers,
                "application/json",
                body.to_string().as_bytes(),
            )
        }
        Some(turn) => {
            let events = match wire {
                Wire::Anthropic => anthropic_events(&turn, &model, n),
                Wire::OpenAi => openai_events(&turn, &model, n),
                Wire::Chat if stream => {
                    let chunks = chat_chunks(&turn, &model, n);
                    return http(
                        200,
                        &extra,
                        "text/event-stream",
                        data_lines(&chunks).as_bytes(),
                    );
                }
                Wire::Chat => {
                    let body = chat_completion(&turn, &model, n).to_string();
                    return http(200, &extra, "application/json", body.as_bytes());
                }
                Wire::Gemini => {
                    let chunk = gemini_chunk(&turn, &model);
                    let body = format!("data: {chunk}\r\n\r\n");
                    return http(200, &extra, "text/event-stream", body.as_bytes());
                }
            };
            http(200, &extra, "text/event-stream", sse(&events).as_bytes())
        }
    }
}

fn http(status: u16, headers: &[(&str, &str)], content_type: &str, body: &[u8]) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        529 => "Overloaded",
        _ => "Status",
    };
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: keep-alive\r\n",
        body.len()
    );
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

/// Server-sent events: `event:` and `data:` lines, a blank line after each.
fn sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

/// Server-sent events without names, ended by `data: [DONE]`, as chat completions stream.
fn data_lines(chunks: &[Value]) -> String {
    let mut out: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

/// The text of a turn for chat completions: aider edits by writing its edit format into the
/// reply (a tool turn is refused before this, in [`respond`]).
fn chat_text(turn: &Turn) -> (&str, Usage) {
    match turn {
        Turn::Text { text, usage } => (text, *usage),
        Turn::Tool { .. } | Turn::Error { .. } => unreachable!("answered before the reply"),
    }
}

/// OpenAI's usage object; `prompt_tokens` counts the cached ones too, as OpenAI's does.
fn chat_usage(usage: Usage) -> Value {
    json!({"prompt_tokens": usage.input, "completion_tokens": usage.output,
           "total_tokens": usage.input + usage.output,
           "prompt_tokens_details": {"cached_tokens": usage.cache_read}})
}

fn chat_completion(turn: &Turn, model: &str, n: usize) -> Value {
    let (text, usage) = chat_text(turn);
    json!({"id": format!("chatcmpl-mock{n:04}"), "object": "chat.completion", "created": 0,
           "model": model,
           "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop"}],
           "usage": chat_usage(usage)})
}

/// The streamed form: the text in one delta, then the finish reason, then the usage.
fn chat_chunks(turn: &Turn, model: &str, n: usize) -> Vec<Value> {
    let (text, usage) = chat_text(turn);
    let chunk = |choices: Value, usage: Value| {
        json!({"id": format!("chatcmpl-mock{n:04}"), "object": "chat.completion.chunk",
               "created": 0, "model": model, "choices": choices, "usage": usage})
    };
    vec![
        chunk(
            json!([{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}]),
            Value::Null,
        ),
        chunk(
            json!([{"index": 0, "delta": {}, "finish_reason": "stop"}]),
            Value::Null,
        ),
        chunk(json!([]), chat_usage(usage)),
    ]
}

/// The model of a Gemini request's path (`/v1beta/models/<model>:streamGenerateContent`).
fn gemini_model(path: &str) -> String {
    let path = path.split('?').next().unwrap_or_default();
    path.trim_start_matches("/v1beta/models/")
        .trim_end_matches(":streamGenerateContent")
        .to_string()
}

/// A turn as one `streamGenerateContent` chunk: the text or the function call, then the usage,
/// whose `promptTokenCount` counts the cached tokens in, as Gemini's does.
fn gemini_chunk(turn: &Turn, model: &str) -> Value {
    let (part, usage) = match turn {
        Turn::Text { text, usage } => (json!({"text": text}), *usage),
        Turn::Tool { name, input, usage } => (
            json!({"functionCall": {"name": name, "args": input}}),
            *usage,
        ),
        Turn::Error { .. } => unreachable!("errors are answered before chunks"),
    };
    json!({"candidates": [{"content": {"parts": [part], "role": "model"},
                           "finishReason": "STOP", "index": 0}],
           "usageMetadata": {"promptTokenCount": usage.input + usage.cache_read,
                             "candidatesTokenCount": usage.output,
                             "cachedContentTokenCount": usage.cache_read,
                             "totalTokenCount": usage.input + usage.cache_read + usage.output},
           "modelVersion": model})
}

fn anthropic_events(turn: &Turn, model: &str, n: usize) -> Vec<(&'static str, Value)> {
    let (block, delta, stop_reason, usage) = match turn {
        Turn::Text { text, usage } => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": text}),
            "end_turn",
            *usage,
        ),
        Turn::Tool { name, input, usage } => (
            json!({"type": "tool_use", "id": format!("toolu_mock{n:04}"), "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
            "tool_use",
            *usage,
        ),
        Turn::Error { .. } => unreachable!("errors are answered before events"),
    };
    vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {
                "id": format!("msg_mock{n:04}"), "type": "message", "role": "assistant",
                "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": usage.input, "output_tokens": 1,
                          "cache_read_input_tokens": usage.cache_read,
                          "cache_creation_input_tokens": 0}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta",
                   "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                   "usage": {"output_tokens": usage.output}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]
}

fn openai_events(turn: &Turn, model: &str, n: usize) -> Vec<(&'static str, Value)> {
    let (item, usage) = match turn {
        Turn::Text { text, usage } => (
            json!({"type": "message", "id": format!("msg_mock{n:04}"), "role": "assistant",
                   "status": "completed",
                   "content": [{"type": "output_text", "text": text, "annotations": []}]}),
            *usage,
        ),
        // Codex's own tool search runs in the client: the model's call is an item of its own
        // type, answered by a `tool_search_output` that makes the tools found callable.
        Turn::Tool { name, input, usage } if name == "tool_search" => (
            json!({"type": "tool_search_call", "id": format!("ts_mock{n:04}"),
                   "call_id": format!("call_mock{n:04}"), "execution": "client",
                   "arguments": input, "status": "completed"}),
            *usage,
        ),
        Turn::Tool { name, input, usage } => {
            let mut item = json!({"type": "function_call", "id": format!("fc_mock{n:04}"),
                   "call_id": format!("call_mock{n:04}"), "name": name,
                   "arguments": input.to_string(), "status": "completed"});
            // Codex offers an MCP server's tools in a namespace, `mcp__<server>`: a call of
            // `mcp__<server>__<tool>` names the tool within it.
            if let Some((namespace, tool)) = name
                .strip_prefix("mcp__")
                .and_then(|rest| rest.split_once("__"))
            {
                item["namespace"] = format!("mcp__{namespace}").into();
                item["name"] = tool.into();
            }
            (item, *usage)
        }
        Turn::Error { .. } => unreachable!("errors are answered before events"),
    };
    let id = format!("resp_mock{n:04}");
    vec![
        (
            "response.created",
            json!({"type": "response.created", "response": {
                "id": id, "object": "response", "created_at": 0, "status": "in_progress",
                "model": model, "output": []}}),
        ),
        (
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            "response.completed",
            json!({"type": "response.completed", "response": {
                "id": id, "object": "response", "created_at": 0, "status": "completed",
                "model": model, "output": [item],
                "usage": {"input_tokens": usage.input,
                          "input_tokens_details": {"cached_tokens": usage.cache_read},
                          "output_tokens": usage.output,
                          "output_tokens_details": {"reasoning_tokens": 0},
                          "total_tokens": usage.input + usage.output}}}),
        ),
    ]
}
