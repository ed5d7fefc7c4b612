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

/// `state` after its open attempt ended as `end` says, at 20.
fn ended_as(state: &RunState, end: AttemptEnd) -> RunState {
    apply(state, Event::attempt_ended(end), at(20)).unwrap()
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

/// A crash found with nothing recorded of the worktree.
fn crash() -> Event {
    Event::CrashFound {
        snapshot: None,
        hook_blocks: None,
        unrecorded: Vec::new(),
    }
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

mod cycle;
mod illegal;
mod lifecycle;
mod properties;
