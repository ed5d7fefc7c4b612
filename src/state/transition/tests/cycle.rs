//! The cycle's events (held, released, resumed by a cycle, stopped by it) and `check_event`.

use super::*;

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
    let crashed_between = apply(&ok(&start(&run(), 0, "a").unwrap()), crash(), at(9)).unwrap();
    assert_eq!(crashed_between.status(), RunStatus::Interrupted);
    assert!(!crashed_between.stopped_by_hand());
    let crashed_in = apply(&start(&run(), 0, "a").unwrap(), crash(), at(9)).unwrap();
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
