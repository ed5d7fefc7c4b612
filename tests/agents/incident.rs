//! The incident of issue 8, replayed with the real agents and the presets `git baton init`
//! writes: Claude Code changes one of two targets and hits a 429; Codex, resumed, answers "done"
//! and changes nothing, however often its Stop hook names the target; Claude Code, resumed, says "done" too early, and its Stop hook
//! (`git baton check --hook claude-stop`) tells it which target is still uncovered, so it
//! finishes in the same session and the run reaches `review` with every attempt's usage.
//!
//! The same incident with Gemini CLI and with opencode as the second agent: resumed after the
//! 429, each answers "done" with docs/b.md untouched and the attempt is `blocked` (Gemini after
//! its `AfterAgent` hook named the target three times; opencode, which has no hook that can keep
//! it working, by the gate after it exits 0); resumed once more, the same agent edits docs/b.md,
//! the run reaches `review`, and `git baton finish` puts both documents on the run's branch.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::cli;
use super::e2e::{
    TURN, claude_edits, claude_edits_then_429, f64_of, new_text, same_amount, turn, u64_of,
};
use super::harness::{AgentRepo, attempt};
use super::hooks::{gemini_write, link_gemini_extension};
use super::mock::Turn;

#[test]
fn rate_limited_then_blocked_then_finished_by_the_stop_hook() {
    let (Some(_), Some(_)) = (cli::agent("claude"), cli::agent("codex")) else {
        return;
    };
    // 1. Claude Code edits docs/a.md, then the API answers 429.
    let (ar, id) = claude_edits_then_429();
    let (state, first) = ar.rate_limited(&id, 1);
    assert!(
        first["error"]
            .as_str()
            .unwrap()
            .starts_with("rate limited (claude-json: "),
        "{first:#}"
    );
    assert_eq!(
        u64_of(&first["usage"]["input_tokens"]),
        2 * TURN.input,
        "{first:#}"
    );
    let first_cost = ar.claude_cost(&id, 1);
    assert!(same_amount(f64_of(&first["usage"]["cost_usd"]), first_cost));
    let worktree = ar.worktree(&state);
    assert_eq!(
        std::fs::read_to_string(worktree.join("docs/a.md")).unwrap(),
        new_text("docs/a.md")
    );

    // 2. The limit lifts; Codex, resumed, answers "done" and changes nothing — again each of
    //    the 3 times its Stop hook names docs/b.md — and the gate blocks.
    let before = ar.mock.scripted().len();
    ar.mock.lift_error();
    ar.mock.extend((0..4).map(|_| turn(Turn::text("done"))));
    let run = ar.baton(&["resume", &id, "--actor", "executor=codex"]);
    assert_eq!(run.code, 1, "{run}");
    let state = ar.status(&id);
    assert_eq!(state["status"], "blocked", "{state:#}");
    let second = attempt(&state, 2);
    assert_eq!(
        (&second["actor"], &second["outcome"]),
        (&"codex".into(), &"blocked".into())
    );
    assert_eq!(second["exit_code"], 0, "{second:#}");
    assert_eq!(second["hook_blocks"], 3, "{second:#}");
    assert_eq!(
        u64_of(&second["usage"]["input_tokens"]),
        4 * TURN.input,
        "{second:#}"
    );
    assert!(second["usage"]["cost_usd"].is_null(), "{second:#}");
    let uncovered: Vec<&Value> = state["coverage"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] == "uncovered")
        .map(|t| &t["target"])
        .collect();
    assert_eq!(uncovered, ["docs/b.md"]);
    // Codex got the resume prompt: what is done, what is not.
    let codex_request = &ar.mock.scripted()[before];
    assert_eq!(codex_request.path, "/v1/responses");
    assert!(
        codex_request.body.contains("resumed attempt"),
        "{}",
        codex_request.body
    );

    // 3. Claude Code, resumed, stops early; the Stop hook blocks once naming docs/b.md; it
    //    edits docs/b.md and stops again, and the hook lets it.
    let before = ar.mock.scripted().len();
    let mut rest = vec![turn(Turn::text("done"))];
    rest.extend(claude_edits("docs/b.md"));
    rest.push(turn(Turn::text("docs/b.md states the new rule too.")));
    ar.mock.extend(rest);
    let run = ar.baton(&["resume", &id, "--actor", "executor=claude"]);
    assert_eq!(run.code, 0, "{run}");
    let state = ar.status(&id);
    assert_eq!(state["status"], "review", "{state:#}");
    assert_eq!(
        std::fs::read_to_string(worktree.join("docs/b.md")).unwrap(),
        new_text("docs/b.md")
    );
    assert_eq!(ar.mock.overruns(), 0);
    let sent = &ar.mock.scripted()[before..];
    assert_eq!(sent.len(), 4);
    // The request after the early "done" carries the hook's reason, which names the target.
    assert!(!sent[0].body.contains("Stop hook feedback"));
    let feedback = sent[1]
        .body
        .split(r"Stop hook feedback:\n")
        .nth(1)
        .and_then(|rest| rest.split("</system-reminder>").next())
        .unwrap_or_else(|| panic!("no Stop hook feedback in {}", sent[1].body));
    assert!(feedback.contains("docs/b.md"), "{feedback}");
    let session = sent[0].header("x-claude-code-session-id");
    assert!(
        sent.iter()
            .all(|r| r.header("x-claude-code-session-id") == session)
    );
    let third = attempt(&state, 3);
    assert_eq!(
        (&third["actor"], &third["outcome"]),
        (&"claude".into(), &"succeeded".into())
    );
    assert_eq!(third["hook_blocks"], 1, "{third:#}");
    assert_eq!(third["agent"]["session_id"].as_str(), session, "{third:#}");
    assert_eq!(
        u64_of(&third["usage"]["input_tokens"]),
        4 * TURN.input,
        "{third:#}"
    );
    let third_cost = ar.claude_cost(&id, 3);
    assert!(same_amount(f64_of(&third["usage"]["cost_usd"]), third_cost));

    // `status`: the measured totals of all three attempts.
    let (input, output) = (10 * TURN.input, 10 * TURN.output);
    let cost = first_cost + third_cost;
    assert_eq!(u64_of(&state["usage"]["input_tokens"]), input);
    assert_eq!(u64_of(&state["usage"]["output_tokens"]), output);
    assert!(
        same_amount(f64_of(&state["usage"]["cost_usd"]), cost),
        "{state:#}"
    );
    assert_eq!(state["usage"]["attempts_without_usage"], 0);
    let text = ar.baton(&["status", &id]);
    let total = format!(
        "total as the actors reported it: {input} input + {output} output tokens, ${cost:.2}"
    );
    assert!(text.stdout.contains(&total), "no {total:?} in\n{text}");
}

/// The incident's first step for a second agent `second`: Claude Code edits docs/a.md and hits
/// a 429 (`git baton init` wrote every installed CLI's preset, `second`'s among them); the limit
/// lifts. The repository, the run and its worktree.
fn claude_rate_limited_before(second: &str) -> (AgentRepo, String, PathBuf) {
    let (ar, id) = claude_edits_then_429();
    let yml = std::fs::read_to_string(ar.repo.path(".baton.yml")).unwrap();
    assert!(yml.contains(&format!("  {second}:\n")), "{yml}");
    let (state, _) = ar.rate_limited(&id, 1);
    let worktree = ar.worktree(&state);
    ar.mock.lift_error();
    (ar, id, worktree)
}

/// `resume` with `second` answering "done" `turns` times and changing nothing: the attempt is
/// `blocked` with docs/b.md the one uncovered target, after the agent's own hook blocked
/// `hook_blocks` times; the agent was given the resume prompt. The attempt.
fn resumed_and_blocked(
    ar: &AgentRepo,
    id: &str,
    second: &str,
    turns: usize,
    hook_blocks: Option<u64>,
) -> Value {
    let before = ar.mock.scripted().len();
    ar.mock.extend((0..turns).map(|_| turn(Turn::text("done"))));
    let run = ar.baton(&["resume", id, "--actor", &format!("executor={second}")]);
    assert_eq!(run.code, 1, "{run}");
    let state = ar.status(id);
    assert_eq!(state["status"], "blocked", "{state:#}");
    let a = attempt(&state, 2).clone();
    assert_eq!(
        (&a["actor"], &a["outcome"], &a["exit_code"]),
        (&second.into(), &"blocked".into(), &0.into()),
        "{a:#}"
    );
    assert_eq!(a["hook_blocks"].as_u64(), hook_blocks, "{a:#}");
    assert_eq!(
        u64_of(&a["usage"]["input_tokens"]),
        turns as u64 * TURN.input,
        "{a:#}"
    );
    let b = super::e2e::coverage_row(&state, "docs/b.md");
    assert_eq!(b["status"], "uncovered", "{state:#}");
    assert_eq!(
        super::e2e::coverage_row(&state, "docs/a.md")["status"],
        "changed"
    );
    let sent = &ar.mock.scripted()[before..];
    assert_eq!(sent.len(), turns, "{sent:?}");
    assert!(sent[0].body.contains("resumed attempt"), "{}", sent[0].body);
    assert_eq!(ar.mock.overruns(), 0);
    a
}

/// `resume` with `second` playing `edit` (docs/b.md) and a last word: the run reaches `review`
/// with attempt 3 `succeeded`, and `finish` commits both documents on the run's branch.
fn resumed_and_finished(ar: &AgentRepo, id: &str, second: &str, edit: Turn, worktree: &Path) {
    ar.mock
        .extend([edit, turn(Turn::text("docs/b.md states the new rule too."))]);
    let run = ar.baton(&["resume", id, "--actor", &format!("executor={second}")]);
    assert_eq!(run.code, 0, "{run}");
    let state = super::e2e::assert_review_with_targets_edited(ar, id);
    let third = attempt(&state, 3);
    assert_eq!(
        (&third["actor"], &third["outcome"]),
        (&second.into(), &"succeeded".into()),
        "{third:#}"
    );
    assert_eq!(ar.mock.overruns(), 0);

    let run = ar.baton(&["finish", id]);
    assert_eq!(run.code, 0, "{run}");
    let state = ar.status(id);
    assert_eq!(state["status"], "finished", "{state:#}");
    let branch = state["branch"].as_str().unwrap();
    for target in super::harness::TARGETS {
        let shown = ar.repo.git(["show", &format!("{branch}:{target}")]);
        assert_eq!(shown, new_text(target), "{target} on {branch}");
    }
    // Nothing the branch lacks stayed behind, so the worktree went with the finish.
    assert!(!worktree.exists(), "{}", worktree.display());
}

#[test]
fn rate_limited_then_gemini_is_blocked_by_its_after_agent_hook_then_finishes() {
    let (Some(_), Some(_)) = (cli::agent("claude"), cli::agent("gemini")) else {
        return;
    };
    let (ar, id, worktree) = claude_rate_limited_before("gemini");
    link_gemini_extension(&ar);
    // The hook blocks three times (`--max-blocks`' default), then lets the fourth "done" end
    // the session, and the gate after it blocks the attempt.
    resumed_and_blocked(&ar, &id, "gemini", 4, Some(3));
    resumed_and_finished(&ar, &id, "gemini", gemini_write("docs/b.md"), &worktree);
}

#[test]
fn rate_limited_then_opencode_is_blocked_by_the_gate_then_finishes() {
    let (Some(_), Some(_)) = (cli::agent("claude"), cli::agent("opencode")) else {
        return;
    };
    let (ar, id, worktree) = claude_rate_limited_before("opencode");
    // opencode has no hook that can keep it working: its "done" ends the session with exit 0.
    resumed_and_blocked(&ar, &id, "opencode", 1, None);
    let edit = super::opencode::write("docs/b.md");
    resumed_and_finished(&ar, &id, "opencode", edit, &worktree);
    super::opencode::assert_offline(&ar.mock);
}
