//! The real agent CLIs (Claude Code, Codex) driven offline against a scripted mock model server
//! on 127.0.0.1: first on their own, to pin down what they send and print (and to capture the
//! parser fixtures under testdata/agents/), then through the real `git baton` binary.
//!
//! Every test that needs a CLI skips by name when it is not installed (see [`cli`]).

pub mod cli;
pub mod mock;

mod mock_server;

mod harness;

mod claude;
mod codex;

mod e2e;
mod incident;
mod sandbox;

/// Writes a CLI's real output to testdata/agents/<agent>/<name> when `GIT_BATON_AGENT_CAPTURE=1`:
/// the parser fixtures are re-captured from the pinned CLIs, never written by hand.
fn capture(agent: &str, name: &str, output: &str) {
    if std::env::var_os("GIT_BATON_AGENT_CAPTURE").is_none_or(|v| v != "1") {
        return;
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/agents")
        .join(agent);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), output).unwrap();
}
