//! The gate inside the agent's loop, with the real CLIs and the presets `git baton init`
//! writes: the scripted model says "done" with docs/b.md untouched, the CLI's own end-of-turn
//! hook (`git baton check --hook <kind>`) blocks once naming docs/b.md, the model edits it, and
//! the run reaches `review` with the attempt's `hook_blocks` 1. Codex runs its `Stop` hook from
//! the preset's `-c hooks.Stop`; Gemini CLI its `AfterAgent` hook from the extension in
//! packaging/gemini, linked into the test's home.

use serde_json::{Value, json};

use super::cli;
use super::e2e::{assert_review_with_targets_edited, codex_edits, new_text, turn};
use super::harness::{AgentRepo, attempt};
use super::mock::{Script, Turn};
use crate::support::Run;

/// The body of the first request that carries the hook's reason, and its index.
fn hook_feedback(bodies: &[String]) -> Option<(usize, &str)> {
    bodies
        .iter()
        .enumerate()
        .find(|(_, b)| b.contains("the coverage gate would block this attempt"))
        .map(|(i, b)| (i, b.as_str()))
}

/// The run reached review with both targets changed and the hook's one block recorded.
fn assert_finished_after_one_block(ar: &AgentRepo, id: &str) -> Value {
    let state = assert_review_with_targets_edited(ar, id);
    let a = attempt(&state, 1);
    assert_eq!(a["outcome"], "succeeded", "{a:#}");
    assert_eq!(a["hook_blocks"], 1, "{a:#}");
    state
}

/// The run `run` (exit 0) reached review after the CLI's hook blocked once: four requests to
/// the model, the hook's reason in the third, after the early "done". Returns the run's id,
/// `agent`'s stdout in attempt 1 and the body of the request that carried the reason.
fn assert_kept_working_after_one_block(
    ar: &AgentRepo,
    run: &Run,
    agent: &str,
) -> (String, String, String) {
    let id = run.run_id();
    let stdout = ar.attempt_log(&id, "stdout");
    let stderr = ar.attempt_log(&id, "stderr");
    assert_eq!(
        run.code, 0,
        "{run}\n--- {agent}'s stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    assert_finished_after_one_block(ar, &id);
    assert_eq!(ar.mock.overruns(), 0, "{stdout}");
    let bodies: Vec<String> = ar.mock.scripted().into_iter().map(|r| r.body).collect();
    assert_eq!(bodies.len(), 4, "{stdout}");
    let (at, body) = hook_feedback(&bodies).unwrap_or_else(|| panic!("no hook reason sent"));
    assert_eq!(at, 2, "{body}");
    let body = body.to_owned();
    (id, stdout, body)
}

#[test]
fn codex_keeps_working_when_its_stop_hook_names_an_uncovered_target() {
    let Some(_) = cli::agent("codex") else { return };
    let ar = AgentRepo::new(Script(vec![
        codex_edits("docs/a.md"),
        turn(Turn::text("done")),
        codex_edits("docs/b.md"),
        turn(Turn::text("Both documents state the new rule.")),
    ]));
    ar.init();
    let run = ar.baton(&["run", "plans/rule.md", "--actor", "executor=codex"]);
    let (id, stdout, body) = assert_kept_working_after_one_block(&ar, &run, "codex");
    let reason = body
        .split("the coverage gate would block this attempt")
        .nth(1)
        .unwrap();
    assert!(
        reason.contains("uncovered: docs/b.md."),
        "{}",
        &reason[..reason.len().min(400)]
    );
    // One Codex session throughout: the hook kept it going, nothing restarted it.
    let sessions: Vec<_> = ar
        .mock
        .scripted()
        .iter()
        .map(|r| r.header("session-id").map(String::from))
        .collect();
    assert!(sessions.iter().all(|s| *s == sessions[0]), "{sessions:?}");
    // The hook read Codex's input: its count names the thread.
    assert_eq!(hook_session(&ar, &id), sessions[0], "{stdout}");
}

/// The session id the hook recorded beside its count, from the CLI's hook input.
fn hook_session(ar: &AgentRepo, id: &str) -> Option<String> {
    let path = ar.repo.path(&format!(
        ".git/baton/runs/{id}/attempts/executor-1/stop-hook.json"
    ));
    let record: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    record["session_id"].as_str().map(String::from)
}

/// The extension as shipped, linked into the test's home (`gemini extensions link`, no network).
pub(super) fn link_gemini_extension(ar: &AgentRepo) {
    let gemini = cli::agent("gemini").unwrap();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/gemini");
    let out = ar.env.run(
        &gemini,
        &[
            "extensions",
            "link",
            &dir.display().to_string(),
            "--consent",
        ],
        &ar.repo.path("."),
        std::time::Duration::from_secs(60),
    );
    assert!(
        out.status.success(),
        "gemini extensions link: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

pub(super) fn gemini_write(target: &str) -> Turn {
    turn(Turn::tool(
        "write_file",
        json!({"file_path": target, "content": new_text(target)}),
    ))
}

#[test]
fn gemini_keeps_working_when_its_after_agent_hook_names_an_uncovered_target() {
    let Some(_) = cli::agent("gemini") else {
        return;
    };
    let ar = AgentRepo::new(Script(vec![
        gemini_write("docs/a.md"),
        turn(Turn::text("done")),
        gemini_write("docs/b.md"),
        turn(Turn::text("Both documents state the new rule.")),
    ]));
    link_gemini_extension(&ar);
    ar.init_agent("gemini");
    let run = ar.baton(&["run", "plans/rule.md"]);
    let (id, stdout, body) = assert_kept_working_after_one_block(&ar, &run, "gemini");
    assert!(body.contains("uncovered: docs/b.md."), "{body}");
    let init: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(init["type"], "init", "{stdout}");
    assert_eq!(
        hook_session(&ar, &id).as_deref(),
        init["session_id"].as_str(),
        "{stdout}"
    );
}
