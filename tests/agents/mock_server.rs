//! The mock model server on its own, over a plain socket: what it answers in each protocol, the
//! side requests that take no turn, the sticky error and the end of the script.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::json;

use super::mock::{MockServer, Script, Turn, Usage};

/// Sends one POST with a JSON body on a fresh connection and returns (status, head, body).
fn post(server: &MockServer, path: &str, body: &serde_json::Value) -> (u16, String, String) {
    let addr = server.url().trim_start_matches("http://").to_string();
    let mut conn = TcpStream::connect(&addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let body = body.to_string();
    write!(
        conn,
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // The server keeps the connection alive; read exactly the head and content-length.
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") && raw.len() < 65536 {
        conn.read_exact(&mut byte).unwrap();
        raw.push(byte[0]);
    }
    let head = String::from_utf8(raw).unwrap();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut body = vec![0; len];
    conn.read_exact(&mut body).unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head, String::from_utf8(body).unwrap())
}

/// The `data:` payloads of an event stream, parsed.
fn events(sse: &str) -> Vec<serde_json::Value> {
    sse.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

#[test]
fn anthropic_turns_stream_in_order_and_side_requests_take_none() {
    let server = MockServer::start(Script(vec![
        Turn::tool("Write", json!({"file_path": "/x/a.txt", "content": "A\n"})),
        Turn::text("done").with_usage(Usage {
            input: 7,
            output: 3,
            cache_read: 2,
        }),
    ]));
    let tools = json!({"model": "claude-test", "stream": true, "tools": [{"name": "Write"}]});
    let (status, head, body) = post(&server, "/v1/messages?beta=true", &tools);
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    let ev = events(&body);
    let types: Vec<&str> = ev.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    assert_eq!(ev[0]["message"]["model"], "claude-test");
    assert_eq!(ev[1]["content_block"]["name"], "Write");
    let input: serde_json::Value =
        serde_json::from_str(ev[2]["delta"]["partial_json"].as_str().unwrap()).unwrap();
    assert_eq!(input["content"], "A\n");
    assert_eq!(ev[4]["delta"]["stop_reason"], "tool_use");

    // A side request without tools gets "ok" and leaves the script where it was.
    let (status, _, body) = post(&server, "/v1/messages", &json!({"model": "m"}));
    assert_eq!(status, 200);
    assert_eq!(events(&body)[2]["delta"]["text"], "ok");
    assert_eq!(server.played(), 1);

    let (_, _, body) = post(&server, "/v1/messages", &tools);
    let ev = events(&body);
    assert_eq!(ev[2]["delta"]["text"], "done");
    assert_eq!(ev[0]["message"]["usage"]["input_tokens"], 7);
    assert_eq!(ev[0]["message"]["usage"]["cache_read_input_tokens"], 2);
    assert_eq!(ev[4]["usage"]["output_tokens"], 3);
    assert_eq!(ev[4]["delta"]["stop_reason"], "end_turn");

    // Past the end: a 400 and an overrun, never a hang.
    let (status, _, body) = post(&server, "/v1/messages", &tools);
    assert_eq!(status, 400, "{body}");
    assert_eq!(server.overruns(), 1);
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(server.scripted().len(), 3);
    assert_eq!(requests[0].path, "/v1/messages?beta=true");
    assert_eq!(requests[0].json()["model"], "claude-test");
}

#[test]
fn openai_turns_are_response_events_and_a_429_sticks_to_its_protocol() {
    let server = MockServer::start(Script(vec![
        Turn::codex_exec("echo hi > a.txt"),
        Turn::rate_limited(&[("retry-after", "42")]),
        Turn::text("the other provider"),
    ]));
    let tools = json!({"model": "gpt-test", "stream": true, "tools": [{"name": "exec_command"}]});
    let (status, _, body) = post(&server, "/v1/responses", &tools);
    assert_eq!(status, 200);
    let ev = events(&body);
    let types: Vec<&str> = ev.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "response.created",
            "response.output_item.done",
            "response.completed"
        ]
    );
    let item = &ev[1]["item"];
    assert_eq!(item["type"], "function_call");
    assert_eq!(item["name"], "exec_command");
    let args: serde_json::Value =
        serde_json::from_str(item["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args["cmd"], "echo hi > a.txt");
    assert_eq!(ev[2]["response"]["usage"]["input_tokens"], 100);
    assert_eq!(ev[2]["response"]["model"], "gpt-test");

    for _ in 0..3 {
        let (status, head, body) = post(&server, "/v1/responses", &tools);
        assert_eq!(status, 429);
        assert!(head.contains("retry-after: 42"), "{head}");
        assert!(body.contains("rate_limit"), "{body}");
    }
    assert_eq!(server.played(), 2);
    // The other protocol is another provider: its requests go on with the script.
    let anthropic = json!({"model": "m", "tools": [{"name": "Write"}]});
    let (status, _, body) = post(&server, "/v1/messages", &anthropic);
    assert_eq!(status, 200);
    assert_eq!(events(&body)[2]["delta"]["text"], "the other provider");
    assert_eq!(server.played(), 3);
    let (status, _, _) = post(&server, "/v1/responses", &tools);
    assert_eq!(status, 429);
    server.extend([Turn::text("after the lift")]);
    server.lift_error();
    let (_, _, body) = post(&server, "/v1/responses", &tools);
    assert_eq!(
        events(&body)[1]["item"]["content"][0]["text"],
        "after the lift"
    );

    let (status, _, _) = post(&server, "/v1/other", &tools);
    assert_eq!(status, 404);
}

#[test]
fn chat_completions_answer_every_request_with_a_turn_in_json_or_chunks() {
    let server = MockServer::start(Script(vec![
        Turn::text("docs/a.md\n```\nA\n```\n").with_usage(Usage {
            input: 1234,
            output: 56,
            cache_read: 200,
        }),
        Turn::text("streamed"),
        Turn::tool("Write", json!({})),
        Turn::rate_limited(&[("retry-after-ms", "1")]),
    ]));
    // No tools: aider's edits are text, and every request takes a turn.
    let plain = json!({"model": "gpt-test", "messages": [{"role": "user", "content": "edit"}]});
    let (status, head, body) = post(&server, "/v1/chat/completions", &plain);
    assert_eq!(status, 200);
    assert!(head.contains("content-type: application/json"), "{head}");
    let reply: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(reply["object"], "chat.completion");
    assert_eq!(reply["model"], "gpt-test");
    assert_eq!(
        reply["choices"][0]["message"]["content"],
        "docs/a.md\n```\nA\n```\n"
    );
    assert_eq!(reply["choices"][0]["finish_reason"], "stop");
    assert_eq!(reply["usage"]["prompt_tokens"], 1234);
    assert_eq!(reply["usage"]["completion_tokens"], 56);
    assert_eq!(
        reply["usage"]["prompt_tokens_details"]["cached_tokens"],
        200
    );
    assert_eq!(server.played(), 1);

    // Asked to stream: chunks, then the usage, then [DONE].
    let streamed = json!({"model": "gpt-test", "stream": true, "messages": []});
    let (status, head, body) = post(&server, "/v1/chat/completions", &streamed);
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    assert!(body.trim_end().ends_with("data: [DONE]"), "{body}");
    let chunks: Vec<serde_json::Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(chunks[0]["choices"][0]["delta"]["content"], "streamed");
    assert_eq!(chunks[1]["choices"][0]["finish_reason"], "stop");
    assert_eq!(chunks[2]["usage"]["prompt_tokens"], 100);

    // A tool call scripted for a chat completion is refused and counted, never sent.
    let (status, _, body) = post(&server, "/v1/chat/completions", &plain);
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("tool call (Write)"), "{body}");
    assert_eq!(server.overruns(), 1);

    // The 429 sticks, with its header.
    for _ in 0..3 {
        let (status, head, body) = post(&server, "/v1/chat/completions", &plain);
        assert_eq!(status, 429);
        assert!(head.contains("retry-after-ms: 1"), "{head}");
        assert!(body.contains("rate limit"), "{body}");
    }
    assert_eq!(server.scripted().len(), 6);
}

#[test]
fn gemini_turns_are_generate_content_chunks_with_the_model_of_the_path() {
    let server = MockServer::start(Script(vec![
        Turn::tool("write_file", json!({"file_path": "a.md", "content": "A\n"})),
        Turn::text("done").with_usage(Usage {
            input: 60,
            output: 5,
            cache_read: 40,
        }),
    ]));
    let path = "/v1beta/models/gemini-test:streamGenerateContent?alt=sse";
    let tools =
        json!({"contents": [], "tools": [{"functionDeclarations": [{"name": "write_file"}]}]});
    let (status, head, body) = post(&server, path, &tools);
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    let ev = events(&body);
    assert_eq!(ev.len(), 1, "{body}");
    let call = &ev[0]["candidates"][0]["content"]["parts"][0]["functionCall"];
    assert_eq!(call["name"], "write_file");
    assert_eq!(call["args"]["content"], "A\n");
    assert_eq!(ev[0]["modelVersion"], "gemini-test");

    let (_, _, body) = post(&server, path, &tools);
    let ev = events(&body);
    assert_eq!(
        ev[0]["candidates"][0]["content"]["parts"][0]["text"],
        "done"
    );
    // Gemini's prompt count holds the cached tokens.
    let usage = &ev[0]["usageMetadata"];
    assert_eq!(usage["promptTokenCount"], 100);
    assert_eq!(usage["cachedContentTokenCount"], 40);
    assert_eq!(usage["candidatesTokenCount"], 5);
    // Past the end: a 400, counted.
    let (status, _, _) = post(&server, path, &tools);
    assert_eq!(status, 400);
    assert_eq!(server.overruns(), 1);
}

#[test]
fn success_headers_go_with_every_answer_that_plays_a_turn() {
    let server = MockServer::start(Script(vec![Turn::text("one"), Turn::text("two")]));
    let tools = json!({"model": "m", "stream": true, "tools": [{"name": "Write"}]});
    let (_, head, _) = post(&server, "/v1/messages", &tools);
    assert!(!head.contains("anthropic-ratelimit"), "{head}");
    server.success_headers(&[
        ("anthropic-ratelimit-unified-status", "allowed_warning"),
        ("anthropic-ratelimit-unified-reset", "1796486400"),
    ]);
    let (status, head, body) = post(&server, "/v1/messages", &tools);
    assert_eq!(status, 200);
    assert!(
        head.contains("anthropic-ratelimit-unified-status: allowed_warning\r\n")
            && head.contains("anthropic-ratelimit-unified-reset: 1796486400\r\n"),
        "{head}"
    );
    assert_eq!(events(&body)[2]["delta"]["text"], "two");
}
