//! What every RunState holds true, checked wherever one comes from outside [`super::transition`]:
//! on load (of either schema version) and at creation. The transitions keep these invariants;
//! a file that breaks one was edited by hand or by something else, and is refused rather than
//! driven into a state nobody can explain.

use super::{RunState, RunStatus};

/// A RunState that no sequence of transitions produces.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("inconsistent RunState: {0}")]
pub struct InvalidState(pub String);

impl RunState {
    pub(crate) fn check(&self) -> Result<(), InvalidState> {
        let bad = |what: String| Err(InvalidState(what));
        if self.stages.is_empty() {
            return bad("it has no stages".into());
        }
        for (i, stage) in self.stages.iter().enumerate() {
            if self.stages[..i].iter().any(|s| s.name == stage.name) {
                return bad(format!("stage `{}` appears twice", stage.name));
            }
        }
        if let Some(stop) = &self.policy.stop_after
            && self.stage(stop).is_none()
        {
            return bad(format!(
                "policy.stop_after names stage `{stop}`, which it does not have"
            ));
        }
        let mut earlier_unfinished: Option<&str> = None;
        for stage in &self.stages {
            if let Some(unfinished) = earlier_unfinished
                && !stage.attempts.is_empty()
            {
                return bad(format!(
                    "stage `{}` has attempts although stage `{unfinished}` before it has not succeeded",
                    stage.name
                ));
            }
            for (k, attempt) in stage.attempts.iter().enumerate() {
                if attempt.n as usize != k + 1 {
                    return bad(format!(
                        "attempt #{} of stage `{}` is numbered {}",
                        k + 1,
                        stage.name,
                        attempt.n
                    ));
                }
                let last = k + 1 == stage.attempts.len();
                if !last && matches!(attempt.outcome, None | Some(super::Outcome::Succeeded)) {
                    return bad(format!(
                        "attempt {} of stage `{}` is {} but is not the stage's latest",
                        attempt.n,
                        stage.name,
                        attempt.outcome.map_or("open", |o| o.name())
                    ));
                }
            }
            if stage.status() != super::StageStatus::Succeeded {
                earlier_unfinished.get_or_insert(&stage.name);
            }
        }
        self.check_status()
    }

    /// The run's status against its attempts and halt.
    fn check_status(&self) -> Result<(), InvalidState> {
        let latest = self.latest_attempt().map(|(_, a)| a);
        let open = latest.is_some_and(|a| a.is_open());
        let outcome = latest.and_then(|a| a.outcome);
        let status = self.status;
        let problem = match status {
            _ if self.halt.is_some() && status != RunStatus::Interrupted => {
                Some("it has a halt, which only an interrupted run has".to_string())
            }
            _ if open && status != RunStatus::Running => {
                Some("an attempt is open, which only a running run has".into())
            }
            RunStatus::Pending if latest.is_some() => Some("it has attempts".into()),
            RunStatus::Running if latest.is_none() => Some("no attempt has started".into()),
            RunStatus::Running if !open && outcome != Some(super::Outcome::Succeeded) => {
                Some("its latest attempt neither runs nor succeeded, so nothing is running".into())
            }
            RunStatus::Paused if self.next_stage().is_none() => {
                Some("every stage succeeded, so there is nothing to pause before".into())
            }
            RunStatus::Review | RunStatus::Finished if self.next_stage().is_some() => {
                let stage = &self.stages[self.next_stage().unwrap_or(0)];
                Some(format!("stage `{}` has not succeeded", stage.name))
            }
            RunStatus::Interrupted if self.halt.is_none() => (outcome
                != Some(super::Outcome::Interrupted))
            .then(|| "neither its latest attempt nor a halt says what interrupted it".into()),
            RunStatus::Failed | RunStatus::RateLimited | RunStatus::Blocked => {
                let expected = match status {
                    RunStatus::Failed => super::Outcome::Failed,
                    RunStatus::RateLimited => super::Outcome::RateLimited,
                    _ => super::Outcome::Blocked,
                };
                (outcome != Some(expected)).then(|| {
                    format!(
                        "its latest attempt is {}",
                        outcome.map_or(if open { "open" } else { "missing" }, |o| o.name())
                    )
                })
            }
            _ => None,
        };
        match problem {
            Some(problem) => Err(InvalidState(format!("the run is {status} but {problem}"))),
            None => Ok(()),
        }
    }
}
