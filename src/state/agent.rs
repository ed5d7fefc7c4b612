//! What an attempt records about its agent's output (actors with an `output:` other than
//! `text`) and about the fallback that started it. Additive: every field is optional in the
//! file, absent in files written before it existed, and omitted when empty, so schema version 2
//! reads them and older git-baton versions read past them (see docs/state.md).

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::agent::output::Format;

/// Where an attempt's `usage` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum UsageSource {
    /// The agent's own output (`output:` of the actor).
    Output,
    /// The `usage` object of the evidence file.
    Evidence,
}

/// What was read from the agent's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct AgentOutput {
    /// The actor's `output:` when the attempt ran.
    pub format: Format,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Tokens the agent counts apart from `usage.input_tokens`/`output_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_output_tokens: Option<u64>,
    /// When the rate limit that ended the attempt lifts, as far as the output says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit_reset: Option<RateLimitReset>,
    /// Why the output could not be read as its format; nothing else was taken from it then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unparsed: Option<String>,
    /// `log_limit` cut the output: what its dropped middle held (usage of some turns) is missing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

/// The reset of a rate limit: the agent's words, and the instant when they give one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct RateLimitReset {
    /// As the agent wrote it: `3pm (Europe/Berlin)`, `in 4 days 6 hours 37 minutes`.
    pub text: String,
    /// An epoch in the output, or a wait added to the attempt's end; absent for a clock time
    /// without a date, which is not guessed into an instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Timestamp>,
}

/// Why an attempt was started by `fallback:` rather than by the pipeline or a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct FallbackFrom {
    /// The attempt of the same stage that ended rate limited.
    pub attempt: u32,
    pub actor: String,
    /// That attempt's error message.
    pub reason: String,
}
