use super::*;
use crate::state::fixture::{at, run};
use crate::state::{ErrorKind, StageStatus};

fn lease(holder: &str, until: i64) -> Lease {
    Lease {
        holder: holder.into(),
        host: format!("{holder}.example"),
        taken_at: at(0),
        until: at(until),
    }
}

#[test]
fn a_lease_in_force_refuses_another_holder_and_an_expired_one_is_taken_over() {
    let state = apply(&run(), Event::LeaseTaken(lease("a", 60)), at(1)).unwrap();
    assert_eq!(
        state.updated_at(),
        run().updated_at(),
        "a lease is not an event of the run"
    );
    let held = apply(&state, Event::LeaseTaken(lease("b", 120)), at(59)).unwrap_err();
    assert!(matches!(held, TransitionError::LeaseHeld { ref lease, .. } if lease.holder == "a"));
    assert!(
        held.to_string().contains("leased by a on a.example until"),
        "{held}"
    );
    // Its own holder takes it again at any time, without a takeover.
    let again = apply(&state, Event::LeaseTaken(lease("a", 90)), at(59)).unwrap();
    assert!(again.takeovers().is_empty());

    let taken = apply(&state, Event::LeaseTaken(lease("b", 120)), at(61)).unwrap();
    assert_eq!(taken.lease().unwrap().holder, "b");
    let takeover = &taken.takeovers()[0];
    assert_eq!(
        (
            takeover.from_holder.as_str(),
            takeover.expired_at,
            takeover.holder.as_str()
        ),
        ("a", at(60), "b")
    );
    assert_eq!(takeover.at, at(61));

    // The old holder can neither renew nor release what it lost.
    let renew = |holder: &str| Event::LeaseRenewed {
        holder: holder.into(),
        until: at(500),
    };
    assert!(matches!(
        apply(&taken, renew("a"), at(62)),
        Err(TransitionError::LeaseLost { .. })
    ));
    let release = |holder: &str| Event::LeaseReleased {
        holder: holder.into(),
    };
    assert_eq!(
        apply(&taken, release("a"), at(62)).unwrap().lease(),
        taken.lease()
    );
    assert_eq!(
        apply(&taken, renew("b"), at(62))
            .unwrap()
            .lease()
            .unwrap()
            .until,
        at(500)
    );
    assert!(
        apply(&taken, release("b"), at(62))
            .unwrap()
            .lease()
            .is_none()
    );
}

#[test]
fn publishing_records_the_remote_and_nothing_else() {
    let published = apply(
        &run(),
        Event::Published {
            remote: "origin".into(),
        },
        at(5),
    )
    .unwrap();
    assert_eq!(published.remote(), Some("origin"));
    assert_eq!(published.status(), run().status());
    assert_eq!(published.updated_at(), run().updated_at());
}

fn start(state: &RunState, stage: usize, actor: &str) -> Result<RunState, TransitionError> {
    let n = state.stages()[stage].next_attempt();
    let dir = format!("attempts/{}-{n}", state.stages()[stage].name);
    apply(
        state,
        Event::AttemptStarted {
            stage,
            actor: actor.into(),
            dir,
            cleared_env: Vec::new(),
            fallback_from: None,
        },
        at(10),
    )
}

fn end(state: &RunState, outcome: Outcome) -> Result<RunState, TransitionError> {
    apply(
        state,
        Event::attempt_ended(AttemptEnd {
            outcome,
            duration_ms: Some(5),
            exit_code: Some(0),
            ..AttemptEnd::default()
        }),
        at(20),
    )
}

fn ok(state: &RunState) -> RunState {
    end(state, Outcome::Succeeded).unwrap()
}

/// Executor and reporter both succeeded; the run waits to enter review.
fn all_done() -> RunState {
    let s = ok(&start(&run(), 0, "a").unwrap());
    ok(&start(&s, 1, "b").unwrap())
}

fn review() -> RunState {
    apply(&all_done(), Event::ReviewEntered, at(30)).unwrap()
}

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
        let s = start(state, 0, "a").unwrap();
        apply(
            &s,
            Event::attempt_ended(AttemptEnd {
                outcome: Outcome::RateLimited,
                usage,
                agent: agent.map(Box::new),
                ..AttemptEnd::default()
            }),
            at(20),
        )
        .unwrap()
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
    let s = start(&run(), 0, "a").unwrap();
    let s = apply(
        &s,
        Event::attempt_ended(AttemptEnd {
            outcome: Outcome::RateLimited,
            exit_code: Some(75),
            error: Some("rate limit: matched `usage limit`".into()),
            usage: Some(Usage {
                input_tokens: Some(10),
                cost_usd: Some(0.5),
                ..Usage::default()
            }),
            ..AttemptEnd::default()
        }),
        at(20),
    )
    .unwrap();
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
    let s = apply(
        &s,
        Event::attempt_ended(AttemptEnd {
            outcome: Outcome::Succeeded,
            usage: Some(Usage {
                input_tokens: Some(5),
                ..Usage::default()
            }),
            ..AttemptEnd::default()
        }),
        at(30),
    )
    .unwrap();
    assert_eq!(s.usage().input_tokens, 15);
    assert_eq!(s.usage().cost_usd, 0.5);
}

#[test]
fn an_actor_that_cannot_start_is_an_exec_error() {
    let s = start(&run(), 0, "a").unwrap();
    let s = apply(
        &s,
        Event::attempt_ended(AttemptEnd {
            exec_error: true,
            error: Some("not found".into()),
            ..AttemptEnd::default()
        }),
        at(20),
    )
    .unwrap();
    assert_eq!(s.status(), RunStatus::Failed);
    assert_eq!(s.error().map(|e| e.kind), Some(ErrorKind::Exec));
}

#[test]
fn a_crash_closes_the_open_attempt_without_a_duration() {
    let s = start(&run(), 0, "a").unwrap();
    let s = apply(
        &s,
        Event::CrashFound {
            snapshot: None,
            hook_blocks: None,
            unrecorded: Vec::new(),
        },
        at(90),
    )
    .unwrap();
    let attempt = &s.stages()[0].attempts[0];
    assert_eq!(attempt.outcome, Some(Outcome::Interrupted));
    assert_eq!(attempt.cause, Some(Cause::Crash));
    assert_eq!(attempt.ended_at, Some(at(90)));
    assert_eq!(attempt.duration_ms, None);
    assert_eq!(s.status(), RunStatus::Interrupted);
    assert_eq!(s.error().map(|e| e.kind), Some(ErrorKind::Interrupted));
    assert_eq!(
        apply(
            &s,
            Event::CrashFound {
                snapshot: None,
                hook_blocks: None,
                unrecorded: Vec::new(),
            },
            at(91)
        )
        .unwrap_err(),
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
    let s = apply(
        &s,
        Event::CrashFound {
            snapshot: None,
            hook_blocks: None,
            unrecorded: Vec::new(),
        },
        at(30),
    )
    .unwrap();
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
    let s = apply(
        &all_done(),
        Event::CrashFound {
            snapshot: None,
            hook_blocks: None,
            unrecorded: Vec::new(),
        },
        at(30),
    )
    .unwrap();
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
    let s = start(&run(), 0, "a").unwrap();
    let report = |passed| Report {
        verified: true,
        passed,
        targets: Vec::new(),
        problems: Vec::new(),
        contradictions: Vec::new(),
    };
    let s = apply(
        &s,
        Event::attempt_ended(AttemptEnd {
            outcome: Outcome::Blocked,
            coverage: Some(report(false)),
            ..AttemptEnd::default()
        }),
        at(20),
    )
    .unwrap();
    assert_eq!(s.coverage().map(|r| r.passed), Some(false));
    let s = start(&s, 0, "a").unwrap();
    let s = apply(
        &s,
        Event::attempt_ended(AttemptEnd {
            outcome: Outcome::Succeeded,
            coverage: Some(report(true)),
            ..AttemptEnd::default()
        }),
        at(30),
    )
    .unwrap();
    let s = ok(&start(&s, 1, "b").unwrap());
    assert_eq!(
        s.coverage().map(|r| r.passed),
        Some(true),
        "an ungated stage after it does not hide it"
    );
}

// --- Illegal moves, one by one: each is refused with what the state holds.

#[test]
fn starting_an_attempt_while_one_is_open_is_refused() {
    let s = start(&run(), 0, "a").unwrap();
    let err = start(&s, 0, "a").unwrap_err();
    assert_eq!(
        err.to_string(),
        "run 1ngvbzkqq5: starting an attempt while attempt 1 of stage executor is still open"
    );
}

#[test]
fn starting_a_stage_out_of_order_is_refused() {
    let err = start(&run(), 1, "b").unwrap_err();
    assert_eq!(
        err.to_string(),
        "run 1ngvbzkqq5: stage reporter cannot start: the stage to run next is executor"
    );
    let s = ok(&start(&run(), 0, "a").unwrap());
    let err = start(&s, 0, "a").unwrap_err();
    assert!(
        matches!(&err, TransitionError::NotNextStage { stage, .. } if stage == "executor"),
        "a succeeded stage never runs again: {err}"
    );
    let err = start(&all_done(), 0, "a").unwrap_err();
    assert!(err.to_string().ends_with("every stage succeeded"), "{err}");
}

#[test]
fn starting_an_unknown_stage_is_refused() {
    let err = start_index(&run(), 7);
    assert_eq!(err.to_string(), "run 1ngvbzkqq5 has no stage #7: it has 2");
}

fn start_index(state: &RunState, stage: usize) -> TransitionError {
    apply(
        state,
        Event::AttemptStarted {
            stage,
            actor: "a".into(),
            dir: "d".into(),
            cleared_env: Vec::new(),
            fallback_from: None,
        },
        at(10),
    )
    .unwrap_err()
}

#[test]
fn ending_an_attempt_when_none_is_open_is_refused() {
    for s in [run(), ok(&start(&run(), 0, "a").unwrap()), review()] {
        let status = s.status();
        assert_eq!(
            end(&s, Outcome::Succeeded).unwrap_err(),
            TransitionError::NoOpenAttempt {
                run: s.run_id.clone(),
                status
            }
        );
    }
    assert_eq!(
        end(&run(), Outcome::Failed).unwrap_err().to_string(),
        "run 1ngvbzkqq5 is pending and has no open attempt to end"
    );
}

#[test]
fn a_crash_of_a_run_that_is_not_running_is_refused() {
    for s in [run(), review()] {
        assert!(matches!(
            apply(
                &s,
                Event::CrashFound {
                    snapshot: None,
                    hook_blocks: None,
                    unrecorded: Vec::new(),
                },
                at(1)
            ),
            Err(TransitionError::NotRunning { .. })
        ));
    }
}

#[test]
fn pausing_or_halting_during_an_attempt_is_refused() {
    let s = start(&run(), 0, "a").unwrap();
    for event in [
        Event::Paused,
        Event::Halted {
            message: "m".into(),
        },
        Event::ReviewEntered,
        Event::Finished,
    ] {
        assert!(apply(&s, event.clone(), at(1)).is_err(), "{event:?}");
    }
    assert_eq!(
        apply(&s, Event::Paused, at(1)).unwrap_err().to_string(),
        "run 1ngvbzkqq5: pausing while attempt 1 of stage executor is still open"
    );
}

#[test]
fn pausing_with_no_stage_left_is_refused() {
    assert_eq!(
        apply(&all_done(), Event::Paused, at(1))
            .unwrap_err()
            .to_string(),
        "run 1ngvbzkqq5: every stage succeeded, so there is no stage to pause before"
    );
}

#[test]
fn entering_review_with_a_stage_left_is_refused() {
    let s = ok(&start(&run(), 0, "a").unwrap());
    assert_eq!(
        apply(&s, Event::ReviewEntered, at(1))
            .unwrap_err()
            .to_string(),
        "run 1ngvbzkqq5 cannot enter review: stage reporter has not succeeded"
    );
}

#[test]
fn finishing_a_run_that_is_not_in_review_is_refused() {
    for s in [
        run(),
        all_done(),
        apply(&review(), Event::Finished, at(1)).unwrap(),
    ] {
        let err = apply(&s, Event::Finished, at(2)).unwrap_err();
        assert!(matches!(err, TransitionError::NotInReview { .. }), "{err}");
    }
    assert_eq!(
        apply(&all_done(), Event::Finished, at(2))
            .unwrap_err()
            .to_string(),
        "run 1ngvbzkqq5 is running, not in review: only a run whose stages all succeeded can be finished"
    );
}

#[test]
fn nothing_moves_a_run_in_review_or_finished_but_finishing() {
    let finished = apply(&review(), Event::Finished, at(50)).unwrap();
    for s in [review(), finished] {
        for event in [
            Event::Paused,
            Event::Halted {
                message: "m".into(),
            },
            Event::ReviewEntered,
        ] {
            let err = apply(&s, event.clone(), at(60)).unwrap_err();
            assert!(
                matches!(err, TransitionError::Settled { .. }),
                "{event:?}: {err}"
            );
        }
        assert!(matches!(
            start(&s, 0, "a"),
            Err(TransitionError::Settled { .. })
        ));
    }
}

#[test]
fn resuming_a_run_in_review_or_finished_is_refused() {
    assert_eq!(check_resumable(&all_done()), Ok(()));
    let finished = apply(&review(), Event::Finished, at(50)).unwrap();
    assert_eq!(
        check_resumable(&finished).unwrap_err().to_string(),
        "run 1ngvbzkqq5 is in finished: there is nothing to resume"
    );
    assert!(check_resumable(&review()).is_err());
}

#[test]
fn a_refused_event_leaves_the_state_as_it_was() {
    let s = start(&run(), 0, "a").unwrap();
    let before = s.clone();
    let _ = apply(&s, Event::Paused, at(99));
    assert_eq!(s, before);
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    fn event() -> impl Strategy<Value = Event> {
        let outcome = prop_oneof![
            Just(Outcome::Succeeded),
            Just(Outcome::Failed),
            Just(Outcome::RateLimited),
            Just(Outcome::Interrupted),
            Just(Outcome::Blocked),
        ];
        prop_oneof![
            (0..3usize).prop_map(|stage| Event::AttemptStarted {
                stage,
                actor: "x".into(),
                dir: "d".into(),
                cleared_env: Vec::new(),
                fallback_from: None,
            }),
            (outcome, any::<bool>()).prop_map(|(outcome, exec_error)| {
                Event::attempt_ended(AttemptEnd {
                    outcome,
                    exec_error,
                    ..AttemptEnd::default()
                })
            }),
            Just(Event::CrashFound {
                snapshot: None,
                hook_blocks: None,
                unrecorded: Vec::new(),
            }),
            Just(Event::Paused),
            Just(Event::Halted {
                message: "m".into()
            }),
            Just(Event::ReviewEntered),
            Just(Event::Finished),
            Just(Event::Published {
                remote: "origin".into()
            }),
            (0..2usize, 0..100i64).prop_map(|(h, until)| Event::LeaseTaken(Lease {
                holder: ["a", "b"][h].into(),
                host: "h".into(),
                taken_at: at(0),
                until: at(until),
            })),
            (0..2usize).prop_map(|h| Event::LeaseReleased {
                holder: ["a", "b"][h].into()
            }),
        ]
    }

    proptest! {
        /// Whatever events arrive in whatever order, every state `apply` accepts keeps the
        /// invariants a loaded file is checked against, and survives a save and a load.
        #[test]
        fn accepted_events_keep_the_invariants(events in prop::collection::vec(event(), 0..40)) {
            let mut state = run();
            for (i, event) in events.into_iter().enumerate() {
                if let Ok(next) = apply(&state, event, at(i as i64)) {
                    prop_assert_eq!(next.check(), Ok(()));
                    state = next;
                }
            }
            let text = serde_json::to_string(&state).unwrap();
            let back: RunState = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(back, state);
        }
    }
}

#[test]
fn a_held_run_refuses_cycle_until_released_and_release_restarts_the_count() {
    let state = apply(&run(), Event::CycleResumed { max_resumes: 3 }, at(1)).unwrap();
    assert_eq!(state.cycle().resumes, 1);
    assert_eq!(
        state.updated_at(),
        run().updated_at(),
        "bookkeeping, not an event"
    );
    let held = apply(
        &state,
        Event::Held {
            reason: Some("waiting for the API key".into()),
        },
        at(2),
    )
    .unwrap();
    assert_eq!(held.cycle().held.as_ref().unwrap().at, at(2));
    assert!(matches!(
        apply(&held, Event::CycleResumed { max_resumes: 3 }, at(3)),
        Err(TransitionError::HeldByHand { .. })
    ));
    let again = apply(&held, Event::Held { reason: None }, at(3)).unwrap_err();
    assert!(again.to_string().contains("already held"), "{again}");
    let released = apply(&held, Event::Released, at(4)).unwrap();
    assert!(released.cycle().is_empty());
    assert!(matches!(
        apply(&released, Event::Released, at(5)),
        Err(TransitionError::NotHeld { .. })
    ));
    // A settled run has nothing for cycle to do, and nothing to hold.
    assert!(matches!(
        apply(&review(), Event::Held { reason: None }, at(6)),
        Err(TransitionError::Settled { .. })
    ));
    assert!(matches!(
        apply(&review(), Event::CycleResumed { max_resumes: 3 }, at(6)),
        Err(TransitionError::Settled { .. })
    ));
}

#[test]
fn a_stage_that_succeeds_sets_the_cycle_resume_count_back_to_zero() {
    let mut state = run();
    for second in 1..=2 {
        state = apply(&state, Event::CycleResumed { max_resumes: 3 }, at(second)).unwrap();
        state = start(&state, 0, "a").unwrap();
        state = end(&state, Outcome::RateLimited).unwrap();
    }
    assert_eq!(state.cycle().resumes, 2, "failures keep counting");
    state = apply(&state, Event::CycleResumed { max_resumes: 3 }, at(3)).unwrap();
    state = ok(&start(&state, 0, "a").unwrap());
    assert_eq!(state.cycle().resumes, 0);
}

#[test]
fn only_a_persons_stop_counts_as_stopped_by_hand() {
    let halted = |state: &RunState| {
        apply(
            state,
            Event::Halted {
                message: "stopped by request before this stage started".into(),
            },
            at(9),
        )
        .unwrap()
    };
    assert!(halted(&run()).stopped_by_hand());
    assert!(
        apply(&run(), Event::Paused, at(9))
            .unwrap()
            .stopped_by_hand()
    );
    let crashed_between = apply(
        &ok(&start(&run(), 0, "a").unwrap()),
        Event::CrashFound {
            snapshot: None,
            hook_blocks: None,
            unrecorded: Vec::new(),
        },
        at(9),
    )
    .unwrap();
    assert_eq!(crashed_between.status(), RunStatus::Interrupted);
    assert!(!crashed_between.stopped_by_hand());
    let crashed_in = apply(
        &start(&run(), 0, "a").unwrap(),
        Event::CrashFound {
            snapshot: None,
            hook_blocks: None,
            unrecorded: Vec::new(),
        },
        at(9),
    )
    .unwrap();
    assert!(!crashed_in.stopped_by_hand());
    let limited = end(&start(&run(), 0, "a").unwrap(), Outcome::RateLimited).unwrap();
    assert!(!limited.stopped_by_hand());
}

#[test]
fn a_run_stopped_by_its_cycle_is_not_stopped_by_hand_until_its_next_attempt() {
    let mut state = start(&run(), 0, "a").unwrap();
    state = apply(
        &state,
        Event::attempt_ended(AttemptEnd {
            outcome: Outcome::Interrupted,
            cause: Some(Cause::Manual),
            ..AttemptEnd::default()
        }),
        at(11),
    )
    .unwrap();
    assert!(state.stopped_by_hand());
    let stopped = apply(&state, Event::CycleStopped, at(12)).unwrap();
    assert!(!stopped.stopped_by_hand());
    assert!(matches!(
        apply(&run(), Event::CycleStopped, at(12)),
        Err(TransitionError::NotInterrupted { .. })
    ));
    let resumed = start(&stopped, 0, "a").unwrap();
    assert_eq!(resumed.cycle().stopped, None);
}

#[test]
fn check_event_says_what_apply_would_and_changes_nothing() {
    let state = run();
    let hold = Event::Held { reason: None };
    check_event(&state, &hold).unwrap();
    assert_eq!(state, run(), "nothing changed");
    let held = apply(&state, hold.clone(), at(1)).unwrap();
    assert_eq!(
        check_event(&held, &hold).unwrap_err(),
        apply(&held, hold, at(2)).unwrap_err()
    );
    assert!(matches!(
        check_event(&review(), &Event::Released),
        Err(TransitionError::NotHeld { .. })
    ));
}
