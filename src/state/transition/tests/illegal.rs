//! Illegal moves, one by one: each is refused with what the state holds.

use super::*;

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
            apply(&s, crash(), at(1)),
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
