//! Properties of the transition function over generated event sequences.

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
        Just(crash()),
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
