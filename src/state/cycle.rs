//! What `git baton cycle` may do with a run, as the run records it: whether a person excluded
//! it (`git baton hold`), and how often `cycle` resumed it without the run getting anywhere.
//!
//! A rate limit's hold on an actor is not stored here: it is what the attempts already record
//! (`agent.rate_limit_reset.at`), read across every run by the scheduler.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// The run's standing with `cycle` (docs/state.md, `cycle`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct CycleFacts {
    /// Set by `git baton hold`: `cycle` leaves the run alone until `git baton release`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<Held>,
    /// Resumes `cycle` made since a stage last succeeded or the run was released; `cycle`
    /// stops resuming the run once this reaches its cap.
    #[serde(default, skip_serializing_if = "super::stage::is_zero_u32")]
    pub resumes: u32,
    /// When a `cycle` that was itself stopped (SIGINT, SIGTERM) stopped the run it drove: the
    /// run is `interrupted`, but not by a person, and a later `cycle` resumes it. Cleared when
    /// the next attempt starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Timestamp>,
}

impl CycleFacts {
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == CycleFacts::default()
    }
}

/// A person's exclusion of a run from `cycle`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Held {
    pub at: Timestamp,
    /// Why, as the person said it (`hold --reason`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
