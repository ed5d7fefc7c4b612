//! `fallback:` — which actor takes over a rate-limited stage, and the record of why.

use crate::state::{FallbackFrom, Outcome, Stage};

/// The actor to hand a rate-limited stage to, with the record of why: the first actor of the
/// stage's `fallback:` not yet tried in the current chain — the latest attempt and the
/// attempts before it that fallbacks started. Each actor is tried at most once per chain, so a
/// chain ends after at most `fallback.len() + 1` attempts.
pub(super) fn next_fallback(stage: &Stage) -> Option<(String, FallbackFrom)> {
    let latest = stage.attempts.last()?;
    if latest.outcome != Some(Outcome::RateLimited) || stage.fallback.is_empty() {
        return None;
    }
    let mut tried = Vec::new();
    for attempt in stage.attempts.iter().rev() {
        tried.push(attempt.actor.as_str());
        if attempt.fallback_from.is_none() {
            break;
        }
    }
    let next = stage
        .fallback
        .iter()
        .find(|a| !tried.contains(&a.as_str()))?;
    Some((
        next.clone(),
        FallbackFrom {
            attempt: latest.n,
            actor: latest.actor.clone(),
            reason: latest
                .error
                .clone()
                .unwrap_or_else(|| Outcome::RateLimited.name().to_string()),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::transition::{AttemptEnd, Event, apply};
    use crate::state::{RunState, fixture};

    /// Starts an attempt of the executor by `actor` (as a fallback when `fallback` says so) and
    /// ends it with `outcome`.
    fn attempt(state: &RunState, actor: &str, fallback: bool, outcome: Outcome) -> RunState {
        let fallback_from = fallback.then(|| next_fallback(&state.stages()[0]).unwrap().1);
        let s = apply(
            state,
            Event::AttemptStarted {
                stage: 0,
                actor: actor.into(),
                dir: "d".into(),
                cleared_env: Vec::new(),
                fallback_from,
            },
            fixture::at(1),
        )
        .unwrap();
        apply(
            &s,
            Event::attempt_ended(AttemptEnd {
                outcome,
                error: Some(format!("{actor} ended")),
                ..AttemptEnd::default()
            }),
            fixture::at(2),
        )
        .unwrap()
    }

    fn with_fallback(list: &[&str]) -> RunState {
        let mut state = fixture::run();
        let mut json: serde_json::Value =
            serde_json::from_slice(&crate::state::store::to_json(&state)).unwrap();
        json["stages"][0]["fallback"] = serde_json::json!(list);
        state = crate::state::store::parse(json.to_string().as_bytes()).unwrap();
        state
    }

    fn next(state: &RunState) -> Option<String> {
        next_fallback(&state.stages()[0]).map(|(actor, _)| actor)
    }

    #[test]
    fn each_actor_is_tried_once_per_chain() {
        // The stage's own actor `a` is in its list too: it started the chain, so it is skipped.
        let s = with_fallback(&["b", "a", "c"]);
        assert_eq!(next(&s), None, "nothing ended yet");
        let s = attempt(&s, "a", false, Outcome::RateLimited);
        assert_eq!(next(&s), Some("b".into()));
        let (_, from) = next_fallback(&s.stages()[0]).unwrap();
        assert_eq!(
            (from.attempt, from.actor.as_str(), from.reason.as_str()),
            (1, "a", "a ended")
        );
        let s = attempt(&s, "b", true, Outcome::RateLimited);
        assert_eq!(next(&s), Some("c".into()));
        let s = attempt(&s, "c", true, Outcome::RateLimited);
        assert_eq!(next(&s), None, "every actor of the chain was tried");
        // A resume starts a new chain, which may use every actor again.
        let s = attempt(&s, "a", false, Outcome::RateLimited);
        assert_eq!(next(&s), Some("b".into()));
    }

    #[test]
    fn only_a_rate_limit_falls_back() {
        let s = with_fallback(&["b"]);
        for outcome in [Outcome::Failed, Outcome::Blocked, Outcome::Interrupted] {
            assert_eq!(next(&attempt(&s, "a", false, outcome)), None, "{outcome:?}");
        }
        let plain = attempt(&fixture::run(), "a", false, Outcome::RateLimited);
        assert_eq!(next(&plain), None, "no fallback list, no fallback");
    }
}
