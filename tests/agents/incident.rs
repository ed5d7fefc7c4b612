//! The incident of issue 8, replayed with the real agents and the presets `git baton init`
//! writes: Claude Code changes one of two targets and hits a 429; Codex, resumed, answers "done"
//! and changes nothing, however often its Stop hook names the target; Claude Code, resumed, says "done" too early, and its Stop hook
//! (`git baton check --hook claude-stop`) tells it which target is still uncovered, so it
//! finishes in the same session and the run reaches `review` with every attempt's usage.

use serde_json::Value;

use super::cli;
use super::e2e::{
    TURN, claude_edits, claude_edits_then_429, f64_of, new_text, same_amount, turn, u64_of,
};
use super::harness::attempt;
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
