//! `git baton mcp`, spoken to over stdio as an MCP client speaks (one JSON-RPC message per
//! line), in a real run's worktree while its driver holds the run's lock: the tool list, the
//! tools answering what the commands print with `--json`, the commands' refusals as tool
//! errors, bad requests answered or skipped, never a hang. Every read has a deadline.

use std::io::{BufRead, BufReader, Write as _};
use std::process::{ChildStdin, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};

use serde_json::json;

use super::agent_side::{REASON, Waiting, assert_review_with_the_reason};
use super::*;

/// A `git baton mcp` process and the client's side of its stdio.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Client {
    /// `git baton mcp ARGS` started in `dir`.
    fn start(repo: &TestRepo, dir: &Path, args: &[&str]) -> Client {
        let mut all = vec!["mcp"];
        all.extend(args);
        let mut cmd = repo.baton_command(dir, &[], &all);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            lines,
            next_id: 1,
        }
    }

    fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message the server writes, within [`LIVENESS`].
    fn next(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(LIVENESS)
            .unwrap_or_else(|e| panic!("no answer from git baton mcp within {LIVENESS:?}: {e}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Sends a request and returns the server's answer to it.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&message.to_string());
        let answer = self.next();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }

    /// The handshake of an MCP client.
    fn initialize(&mut self) -> Value {
        let answer = self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "git-baton-tests", "version": "0"}}),
        );
        self.send_line(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        );
        answer
    }

    /// `tools/call`: whether it was a tool error, and its text.
    fn call(&mut self, name: &str, arguments: Value) -> (bool, String) {
        let answer = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        let result = &answer["result"];
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text content: {answer}"));
        (result["isError"] == true, text.to_owned())
    }

    /// A call that must succeed, its JSON document.
    fn call_ok(&mut self, name: &str, arguments: Value) -> Value {
        let (is_error, text) = self.call(name, arguments);
        assert!(!is_error, "{name} failed: {text}");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }

    /// Closes stdin, as a client does at the end; the server's exit, within [`LIVENESS`].
    fn close(mut self) -> ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + LIVENESS;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "git baton mcp did not exit within {LIVENESS:?} of its stdin closing"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn evidence_targets(path: &Path) -> Vec<String> {
    let written: Value = serde_json::from_str(&text(path)).unwrap();
    written["target_coverage"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["target"].as_str().unwrap(),
                e["reason"].as_str().unwrap()
            )
        })
        .collect()
}

/// The tools in a running attempt: `unchanged` writes the attempt's evidence, `check` and
/// `status` answer what `check --json` and `status --json` print, refusals are tool errors with
/// the commands' `error:` and `hint:` lines and write nothing; the gate after the agent exits
/// takes the reasons.
#[test]
fn the_tools_record_and_check_like_the_commands_in_a_running_attempt() {
    let w = Waiting::start();
    let id = w.id.clone();
    let evidence = run_dir(&w.repo, &id).join("attempts/executor-1/evidence.json");
    let mut client = Client::start(&w.repo, &w.worktree, &[]);

    let init = client.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "git-baton", "{init}");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    let list = client.request("tools/list", json!({}));
    let mut names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["check", "status", "unchanged"]);

    // Refusals first: nothing is written.
    let (is_error, refusal) = client.call(
        "unchanged",
        json!({"target": "docs/bb.md", "reason": REASON}),
    );
    assert!(is_error);
    assert_eq!(
        refusal,
        format!(
            "error: unknown target `docs/bb.md`: the plan of run {id} has no such target\n\
             hint: did you mean `docs/b.md`?"
        )
    );
    let (is_error, refusal) = client.call(
        "unchanged",
        json!({"target": "docs/b.md", "reason": "No change needed."}),
    );
    assert!(is_error);
    assert_eq!(
        refusal,
        "error: reason for target `docs/b.md` refused: the reason is a placeholder\n\
         hint: say specifically why this target needed no change, e.g. \"already states the new rule in section 3\""
    );
    assert!(!evidence.exists(), "a refusal wrote the evidence file");

    let recorded = client.call_ok(
        "unchanged",
        json!({"target": "docs/b.md", "reason": REASON}),
    );
    assert_eq!(
        recorded,
        json!({"run_id": id, "stage": "executor", "attempt": 1, "target": "docs/b.md",
               "reason": REASON, "recorded": true})
    );
    assert_eq!(evidence_targets(&evidence), [format!("docs/b.md {REASON}")]);
    let (is_error, refusal) = client.call(
        "unchanged",
        json!({"target": "docs/b.md", "reason": REASON}),
    );
    assert!(is_error);
    assert!(
        refusal.starts_with("error: target `docs/b.md` already has an entry"),
        "{refusal}"
    );

    // `check` answers exactly what `check --json` prints; docs/c.md is still uncovered.
    let check = client.call_ok("check", json!({}));
    let printed = w.repo.baton_in(&w.worktree, ["check", "--json"]);
    assert_eq!(printed.code, 1, "{printed}");
    assert_eq!(check, printed.json());
    assert_eq!(check["passed"], false);
    let rows = coverage_rows(&check);
    assert_eq!(
        rows,
        [
            "docs/a.md changed",
            "docs/b.md unchanged",
            "docs/c.md uncovered"
        ]
    );

    // `status` is the run the worktree belongs to, as `status --json RUN` shows it there.
    let shown = client.call_ok("status", json!({}));
    let printed = w.repo.baton_in(&w.worktree, ["status", "--json", &id]);
    let tmp = w.repo.tmp().display().to_string();
    let shown_text = serde_json::to_string(&shown).unwrap().replace(&tmp, "$TMP");
    assert_eq!(
        serde_json::from_str::<Value>(&shown_text).unwrap(),
        printed.json()
    );
    assert_eq!(shown["status"], "running");

    // A line that is not JSON is skipped, and the server goes on answering.
    client.send_line("this is not a JSON-RPC message");
    let recorded = client.call_ok(
        "unchanged",
        json!({"target": "docs/c.md", "reason": "the old rule it states is unchanged by this plan"}),
    );
    assert_eq!(recorded["target"], "docs/c.md");
    assert_eq!(client.call_ok("check", json!({}))["passed"], true);
    assert!(client.close().success());

    let (repo, id, run) = w.release();
    assert_eq!(run.code, 0, "{run}");
    let state = status(&repo, &id);
    assert_review_with_the_reason(&state);
}

/// Started outside the run's worktree, the server still speaks the protocol and every tool
/// refuses as the command does there; `--worktree` names the worktree instead. A client that
/// skips the handshake gets an error answer and the server ends: it never waits for more.
#[test]
fn outside_a_worktree_the_tools_refuse_and_worktree_names_it() {
    let w = Waiting::start();
    let mut outside = Client::start(&w.repo, &w.repo.root, &[]);
    outside.initialize();
    for (tool, arguments) in [
        (
            "unchanged",
            json!({"target": "docs/b.md", "reason": REASON}),
        ),
        ("check", json!({})),
        ("status", json!({})),
    ] {
        let (is_error, refusal) = outside.call(tool, arguments);
        assert!(is_error, "{tool}: {refusal}");
        assert_eq!(
            refusal,
            format!(
                "error: {} is not in the worktree of a git-baton run\n\
                 hint: these commands are for the agent of a run, in the run's worktree (`git baton status` names it)",
                w.repo.root.display()
            ),
            "{tool}"
        );
    }
    assert!(outside.close().success());

    let worktree = w.worktree.display().to_string();
    let mut named = Client::start(&w.repo, &w.repo.root, &["--worktree", &worktree]);
    named.initialize();
    assert_eq!(named.call_ok("status", json!({}))["run_id"], w.id.as_str());
    assert!(named.close().success());

    // No handshake: the request is answered with an error, and at the end of its input the
    // server exits with the failed handshake (exit 2), having written nothing anywhere.
    let mut rude = Client::start(&w.repo, &w.worktree, &[]);
    let answer = rude.request("tools/call", json!({"name": "status", "arguments": {}}));
    assert!(answer["error"]["code"].is_i64(), "{answer}");
    assert_eq!(rude.close().code(), Some(2));

    let evidence = run_dir(&w.repo, &w.id).join("attempts/executor-1/evidence.json");
    assert!(!evidence.exists());
    let (_, _, run) = w.release();
    assert_eq!(run.code, 1, "{run}");
}
