//! A run driven through its stages: attempts, failures, crashes, pauses and the gate.

use super::*;

#[test]
fn a_full_run_reaches_review_then_finished() {
    let s = run();
    assert_eq!((s.status(), s.current_stage()), (RunStatus::Pending, None));
    let s = start(&s, 0, "a").unwrap();
    assert_eq!(s.status(), RunStatus::Running);
    assert_eq!(s.current_stage(), Some("executor"));
    assert_eq!(s.stages()[0].status(), StageStatus::Running);
    assert_eq!(s.updated_at(), at(10));
    let s = ok(&s);
    assert_eq!(
        (s.status(), s.current_stage()),
        (RunStatus::Running, Some("executor")),
        "between stages the run is still running, at the stage that just succeeded"
    );
    let s = ok(&start(&s, 1, "b").unwrap());
    assert_eq!(s.next_stage(), None);
    let s = apply(&s, Event::ReviewEntered, at(30)).unwrap();
    assert_eq!((s.status(), s.current_stage()), (RunStatus::Review, None));
    assert_eq!(s.usage().attempts_without_usage, 2);
    let s = apply(&s, Event::Finished, at(40)).unwrap();
    assert_eq!(s.status(), RunStatus::Finished);
    assert_eq!(s.updated_at(), at(40));
    s.check().unwrap();
}

/// A fallback names the attempt it takes over from: the stage's latest, by that actor,
/// ended rate limited. Anything else is refused, so the record cannot say what did not
/// happen.
#[test]
fn a_fallback_must_follow_a_rate_limited_attempt() {
    let fallback = |state: &RunState, attempt: u32, actor: &str| {
        apply(
            state,
            Event::AttemptStarted {
                stage: 0,
                actor: "b".into(),
                dir: "d".into(),
                cleared_env: Vec::new(),
                fallback_from: Some(FallbackFrom {
                    attempt,
                    actor: actor.into(),
                    reason: "rate limited".into(),
                }),
            },
            at(30),
        )
    };
    let failed = end(&start(&run(), 0, "a").unwrap(), Outcome::Failed).unwrap();
    assert!(matches!(
        fallback(&failed, 1, "a"),
        Err(TransitionError::NotAFallback { attempt: 1, .. })
    ));
    assert!(matches!(
        fallback(&run(), 1, "a"),
        Err(TransitionError::NotAFallback { .. })
    ));
    let limited = end(&start(&run(), 0, "a").unwrap(), Outcome::RateLimited).unwrap();
    assert!(
        fallback(&limited, 2, "a").is_err(),
        "not the latest attempt"
    );
    assert!(
        fallback(&limited, 1, "z").is_err(),
        "not that attempt's actor"
    );
    let s = fallback(&limited, 1, "a").unwrap();
    let attempt = s.stages()[0].attempts.last().unwrap();
    assert_eq!((attempt.n, attempt.actor.as_str()), (2, "b"));
    assert_eq!(attempt.fallback_from.as_ref().unwrap().attempt, 1);
    s.check().unwrap();
}

/// Totals say what they miss: attempts without usage or cost, outputs cut by `log_limit`.
#[test]
fn usage_totals_say_when_they_are_a_lower_bound() {
    let ended = |state: &RunState, usage: Option<Usage>, agent: Option<AgentOutput>| {
        let end = AttemptEnd {
            outcome: Outcome::RateLimited,
            usage,
            agent: agent.map(Box::new),
            ..AttemptEnd::default()
        };
        ended_as(&start(state, 0, "a").unwrap(), end)
    };
    let agent = |cut: bool| AgentOutput {
        format: crate::agent::output::Format::CodexJsonl,
        session_id: None,
        cache_read_input_tokens: Some(7),
        cache_creation_input_tokens: None,
        reasoning_output_tokens: Some(3),
        rate_limit_reset: None,
        unparsed: None,
        cut,
    };
    let tokens = Usage {
        input_tokens: Some(100),
        output_tokens: Some(10),
        ..Usage::default()
    };
    let s = ended(&run(), Some(tokens.clone()), Some(agent(false)));
    let t = s.usage();
    assert_eq!(
        (
            t.input_tokens,
            t.cache_read_input_tokens,
            t.reasoning_output_tokens
        ),
        (100, 7, 3)
    );
    assert_eq!((t.attempts_without_cost, t.lower_bound), (1, false));
    let s = ended(&s, Some(tokens), Some(agent(true)));
    let t = s.usage();
    assert_eq!(
        (t.input_tokens, t.attempts_cut, t.lower_bound),
        (200, 1, true)
    );
    let t = ended(&run(), None, None).usage();
    assert_eq!((t.attempts_without_usage, t.lower_bound), (1, true));
}

#[test]
fn a_failure_keeps_the_stage_current_and_the_next_attempt_is_resumed() {
    let s = ended_as(
        &start(&run(), 0, "a").unwrap(),
        AttemptEnd {
            outcome: Outcome::RateLimited,
            exit_code: Some(75),
            error: Some("rate limit: matched `usage limit`".into()),
            usage: Some(Usage {
                input_tokens: Some(10),
                cost_usd: Some(0.5),
                ..Usage::default()
            }),
            ..AttemptEnd::default()
        },
    );
    assert_eq!(s.status(), RunStatus::RateLimited);
    assert_eq!(s.current_stage(), Some("executor"));
    let err = s.error().unwrap();
    assert_eq!(
        (err.kind, err.stage.as_str(), err.message.as_str()),
        (
            ErrorKind::RateLimited,
            "executor",
            "rate limit: matched `usage limit`"
        )
    );
    assert_eq!(s.stages()[0].next_attempt(), 2);
    let s = start(&s, 0, "other").unwrap();
    let attempt = s.stages()[0].attempts.last().unwrap();
    assert_eq!((attempt.n, attempt.resumed()), (2, true));
    assert_eq!(s.stages()[0].actor(), "other");
    assert_eq!(
        s.stages()[0].configured_actor,
        "a",
        "the pipeline is unchanged"
    );
    assert_eq!(s.error(), None);
    let s = ended_as(
        &s,
        AttemptEnd {
            outcome: Outcome::Succeeded,
            usage: Some(Usage {
                input_tokens: Some(5),
                ..Usage::default()
            }),
            ..AttemptEnd::default()
        },
    );
    assert_eq!(s.usage().input_tokens, 15);
    assert_eq!(s.usage().cost_usd, 0.5);
}

#[test]
fn an_actor_that_cannot_start_is_an_exec_error() {
    let s = ended_as(
        &start(&run(), 0, "a").unwrap(),
        AttemptEnd {
            exec_error: true,
            error: Some("not found".into()),
            ..AttemptEnd::default()
        },
    );
    assert_eq!(s.status(), RunStatus::Failed);
    assert_eq!(s.error().map(|e| e.kind), Some(ErrorKind::Exec));
}

#[test]
fn a_crash_closes_the_open_attempt_without_a_duration() {
    let s = start(&run(), 0, "a").unwrap();
    let s = apply(&s, crash(), at(90)).unwrap();
    let attempt = &s.stages()[0].attempts[0];
    assert_eq!(attempt.outcome, Some(Outcome::Interrupted));
    assert_eq!(attempt.cause, Some(Cause::Crash));
    assert_eq!(attempt.ended_at, Some(at(90)));
    assert_eq!(attempt.duration_ms, None);
    assert_eq!(s.status(), RunStatus::Interrupted);
    assert_eq!(s.error().map(|e| e.kind), Some(ErrorKind::Interrupted));
    assert_eq!(
        apply(&s, crash(), at(91)).unwrap_err(),
        TransitionError::NotRunning {
            run: s.run_id.clone(),
            status: RunStatus::Interrupted
        },
        "nothing is running any more"
    );
}

#[test]
fn a_crash_between_stages_leaves_the_next_stage_current() {
    let s = ok(&start(&run(), 0, "a").unwrap());
    let s = apply(&s, crash(), at(30)).unwrap();
    assert_eq!(s.status(), RunStatus::Interrupted);
    assert_eq!(s.current_stage(), Some("reporter"));
    let err = s.error().unwrap();
    assert_eq!(
        (err.kind, err.stage.as_str()),
        (ErrorKind::Interrupted, "reporter")
    );
    // Resuming clears the halt: the run is running, with no error.
    let s = start(&s, 1, "b").unwrap();
    assert_eq!((s.halt(), s.error()), (None, None));
}

#[test]
fn a_crash_after_the_last_stage_halts_without_naming_a_stage() {
    let s = apply(&all_done(), crash(), at(30)).unwrap();
    assert_eq!(
        (s.status(), s.current_stage(), s.error()),
        (RunStatus::Interrupted, None, None)
    );
    let s = apply(&s, Event::ReviewEntered, at(40)).unwrap();
    assert_eq!(s.status(), RunStatus::Review);
}

#[test]
fn pause_and_halt_name_the_stage_to_run_next() {
    let s = ok(&start(&run(), 0, "a").unwrap());
    let paused = apply(&s, Event::Paused, at(30)).unwrap();
    assert_eq!(paused.status(), RunStatus::Paused);
    assert_eq!(paused.current_stage(), Some("reporter"));
    assert_eq!(paused.error(), None);
    let halted = apply(
        &paused,
        Event::Halted {
            message: "stopped by request before this stage started".into(),
        },
        at(40),
    )
    .unwrap();
    assert_eq!(halted.current_stage(), Some("reporter"));
    assert_eq!(
        halted.error().map(|e| (e.kind, e.message)),
        Some((
            ErrorKind::Interrupted,
            "stopped by request before this stage started".to_string()
        ))
    );
}

#[test]
fn the_latest_gate_is_the_runs_coverage() {
    // The attempt open in `s` ends with `outcome` and a gate that `passed` or not.
    let gated = |s: &RunState, outcome, passed, t| {
        let coverage = Report {
            verified: true,
            passed,
            targets: Vec::new(),
            problems: Vec::new(),
            contradictions: Vec::new(),
        };
        let end = AttemptEnd {
            outcome,
            coverage: Some(coverage),
            ..AttemptEnd::default()
        };
        apply(s, Event::attempt_ended(end), at(t)).unwrap()
    };
    let s = gated(&start(&run(), 0, "a").unwrap(), Outcome::Blocked, false, 20);
    assert_eq!(s.coverage().map(|r| r.passed), Some(false));
    let s = gated(&start(&s, 0, "a").unwrap(), Outcome::Succeeded, true, 30);
    let s = ok(&start(&s, 1, "b").unwrap());
    assert_eq!(
        s.coverage().map(|r| r.passed),
        Some(true),
        "an ungated stage after it does not hide it"
    );
}
