use super::*;
use crate::state::fixture::{at, run};
use crate::state::transition::{AttemptEnd, Event, apply};
use crate::state::{AgentOutput, RateLimitReset};

fn rules() -> Rules {
    Rules {
        max_resumes: 3,
        max_reset: SignedDuration::from_hours(7 * 24),
        accounts: BTreeMap::new(),
    }
}

fn seen(state: &RunState) -> Seen<'_> {
    Seen {
        state,
        stale: false,
        busy: false,
    }
}

/// `state` with an attempt of its next stage by `actor`, started at `start` and ended at
/// `start + 1` with `outcome`; a rate limit resets at `reset` (an epoch second of the fixture).
fn attempt(
    state: &RunState,
    actor: &str,
    start: i64,
    outcome: Outcome,
    reset: Option<i64>,
) -> RunState {
    let stage = state.next_stage().unwrap();
    let started = apply(
        state,
        Event::AttemptStarted {
            stage,
            actor: actor.into(),
            dir: format!("attempts/x-{start}"),
            cleared_env: Vec::new(),
            fallback_from: None,
        },
        at(start),
    )
    .unwrap();
    let agent = (outcome == Outcome::RateLimited).then(|| {
        Box::new(AgentOutput {
            format: crate::agent::output::Format::ClaudeJson,
            session_id: None,
            cache_read_input_tokens: None,
            cache_creation_input_tokens: None,
            reasoning_output_tokens: None,
            rate_limit_reset: Some(RateLimitReset {
                text: "3pm (Europe/Berlin)".into(),
                at: reset.map(at),
            }),
            unparsed: None,
            cut: false,
        })
    });
    apply(
        &started,
        Event::attempt_ended(AttemptEnd {
            outcome,
            agent,
            ..AttemptEnd::default()
        }),
        at(start + 1),
    )
    .unwrap()
}

fn queued() -> RunState {
    let mut state = run();
    // The fixture is pending; a queued run is the same run born queued.
    state = serde_json::from_value({
        let mut v = serde_json::to_value(&state).unwrap();
        v["status"] = "queued".into();
        v
    })
    .unwrap();
    state
}

#[test]
fn a_rate_limit_holds_its_account_until_the_reset_and_a_later_success_lifts_it() {
    let limited = attempt(&run(), "a", 10, Outcome::RateLimited, Some(100));
    let runs = [seen(&limited)];
    let holds = holds(&runs, &rules(), at(50));
    assert_eq!(holds["a"].until, at(100));
    assert_eq!(holds["a"].text, "3pm (Europe/Berlin)");
    assert!(
        super::holds(&runs, &rules(), at(100)).is_empty(),
        "over at the reset"
    );

    // Another run's later attempt on the same actor got through: the limit was over.
    let through = attempt(&run(), "a", 20, Outcome::Succeeded, None);
    let runs = [seen(&limited), seen(&through)];
    assert!(super::holds(&runs, &rules(), at(50)).is_empty());

    // An account shared by two actors is held for both.
    let mut shared = rules();
    shared.accounts.insert("a".into(), "team".into());
    shared.accounts.insert("b".into(), "team".into());
    let holds = super::holds(&[seen(&limited)], &shared, at(50));
    assert!(holds.contains_key("team") && holds.len() == 1);
    assert_eq!(shared.account("b"), "team");
}

#[test]
fn a_queued_run_waits_while_its_actor_is_on_hold_and_starts_after() {
    let limited = attempt(&run(), "a", 10, Outcome::RateLimited, Some(100));
    let queue = queued();
    let runs = [seen(&limited), seen(&queue)];
    let now = at(50);
    let h = holds(&runs, &rules(), now);
    match decide(&seen(&queue), &h, &rules(), now) {
        Decision::Wait { until, why } => {
            assert_eq!(until, Some(at(100)));
            assert!(why.contains("a is on hold until"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    // The rate-limited run itself waits for its own reset.
    assert!(matches!(
        decide(&seen(&limited), &h, &rules(), now),
        Decision::Wait { until: Some(u), .. } if u == at(100)
    ));
    let later = at(101);
    let h = holds(&runs, &rules(), later);
    assert!(matches!(
        decide(&seen(&queue), &h, &rules(), later),
        Decision::Resume { actor: None, .. }
    ));
    assert!(matches!(
        decide(&seen(&limited), &h, &rules(), later),
        Decision::Resume { actor: None, .. }
    ));
}

#[test]
fn a_fallback_actor_not_on_hold_takes_the_stage_at_once() {
    let mut with_fallback = serde_json::to_value(run()).unwrap();
    with_fallback["stages"][0]["fallback"] = serde_json::json!(["codex"]);
    let base: RunState = serde_json::from_value(with_fallback).unwrap();
    let limited = attempt(&base, "a", 10, Outcome::RateLimited, Some(100));
    let now = at(50);
    let runs = [seen(&limited)];
    let h = holds(&runs, &rules(), now);
    assert_eq!(
        decide(&seen(&limited), &h, &rules(), now),
        Decision::Resume {
            actor: Some(("executor".into(), "codex".into())),
            why: "a is on hold; its fallback codex is not".into(),
        }
    );
}

#[test]
fn what_a_person_must_decide_is_never_resumed() {
    let now = at(500);
    let h = BTreeMap::new();
    let unknown = attempt(&run(), "a", 10, Outcome::RateLimited, None);
    assert!(matches!(
        decide(&seen(&unknown), &h, &rules(), now),
        Decision::Wait { until: None, ref why } if why.contains("names no instant")
    ));
    for outcome in [Outcome::Failed, Outcome::Blocked] {
        let state = attempt(&run(), "a", 10, outcome, None);
        assert!(matches!(
            decide(&seen(&state), &h, &rules(), now),
            Decision::Skip { .. }
        ));
    }
    let paused = apply(&run(), Event::Paused, at(1)).unwrap();
    assert!(matches!(
        decide(&seen(&paused), &h, &rules(), now),
        Decision::Skip { ref why } if why == "paused by hand"
    ));
    let stopped = apply(
        &run(),
        Event::Halted {
            message: "stopped by request".into(),
        },
        at(1),
    )
    .unwrap();
    assert!(matches!(
        decide(&seen(&stopped), &h, &rules(), now),
        Decision::Skip { ref why } if why == "stopped by hand"
    ));
    // ... unless it was the cycle that drove it that stopped it.
    let by_cycle = apply(&stopped, Event::CycleStopped, at(2)).unwrap();
    assert!(matches!(
        decide(&seen(&by_cycle), &h, &rules(), now),
        Decision::Resume { .. }
    ));
    let held = apply(
        &queued(),
        Event::Held {
            reason: Some("later".into()),
        },
        at(1),
    )
    .unwrap();
    assert!(matches!(
        decide(&seen(&held), &h, &rules(), now),
        Decision::Skip { ref why } if why.contains("held by hand") && why.ends_with(": later")
    ));
}

#[test]
fn crashed_runs_are_due_and_driven_ones_are_not() {
    let h = BTreeMap::new();
    let now = at(500);
    let running = apply(
        &run(),
        Event::AttemptStarted {
            stage: 0,
            actor: "a".into(),
            dir: "attempts/executor-1".into(),
            cleared_env: Vec::new(),
            fallback_from: None,
        },
        at(1),
    )
    .unwrap();
    let mut crashed = seen(&running);
    crashed.stale = true;
    assert!(matches!(
        decide(&crashed, &h, &rules(), now),
        Decision::Resume { .. }
    ));
    assert!(matches!(
        decide(&seen(&running), &h, &rules(), now),
        Decision::Skip { .. }
    ));
    let queue = queued();
    let mut busy = seen(&queue);
    busy.busy = true;
    assert!(matches!(
        decide(&busy, &h, &rules(), now),
        Decision::Skip { .. }
    ));
}

#[test]
fn a_run_that_keeps_failing_stops_being_resumed_at_the_cap() {
    let mut state = queued();
    for n in 0..3 {
        state = apply(&state, Event::CycleResumed { max_resumes: 3 }, at(n)).unwrap();
        state = attempt(
            &state,
            "a",
            10 + n * 10,
            Outcome::RateLimited,
            Some(15 + n * 10),
        );
    }
    let now = at(500);
    let decision = decide(&seen(&state), &BTreeMap::new(), &rules(), now);
    assert!(
        matches!(decision, Decision::Wait { until: None, ref why } if why.contains("3 times")),
        "{decision:?}"
    );
}

#[test]
fn a_reset_beyond_the_maximum_is_held_and_reported() {
    let far = attempt(&run(), "a", 10, Outcome::RateLimited, Some(30 * 86_400));
    let decision = decide(&seen(&far), &BTreeMap::new(), &rules(), at(50));
    match decision {
        Decision::Wait { until, why } => {
            assert_eq!(until, Some(at(30 * 86_400)));
            assert!(why.contains("beyond the 168h maximum"), "{why}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_next_due_time_is_the_earliest_wait() {
    let decisions = [
        Decision::wait(Some(at(9)), "x"),
        Decision::wait(None, "y"),
        Decision::wait(Some(at(3)), "z"),
        Decision::skip("w"),
    ];
    assert_eq!(next_due(&decisions), Some(at(3)));
}
