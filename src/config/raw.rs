//! The types that read `.baton.yml` and the user's overlay, as written: what [`super::apply`]
//! turns into a [`super::Config`]. Their doc comments are the descriptions the JSON Schema gives
//! editors (docs/schemas/baton.schema.json).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::state::CoverageMode;

use super::{checks, notify};

// The types below read `.baton.yml`; their doc comments are also the descriptions editors show
// from the JSON Schema generated from them (docs/schemas/baton.schema.json). `Spanned` values
// are their inner value in the file, hence the `schemars(with = …)`.

/// git-baton's configuration: `.baton.yml` at the repository root, or the user's
/// `config.yml`, which may only define `actors` and `notify`. See docs/config.md.
#[derive(Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(title = ".baton.yml"))]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    /// Where `verify` looks for changed plans: a repo-relative directory (default `plans`).
    #[cfg_attr(test, schemars(with = "Option<String>"))]
    pub(super) plans_dir: Option<Spanned<String>>,
    /// The programs that do a stage's work, by name.
    #[cfg_attr(test, schemars(with = "Option<BTreeMap<String, RawActor>>"))]
    pub(super) actors: Option<BTreeMap<String, Spanned<RawActor>>>,
    /// The stages a run executes, in order.
    #[cfg_attr(test, schemars(with = "Option<Vec<RawStage>>"))]
    pub(super) pipeline: Option<Vec<Spanned<RawStage>>>,
    /// Which attempts of a gated stage the coverage gate checks (default `always`).
    pub(super) coverage: Option<CoverageMode>,
    /// Where run worktrees go: relative to the main worktree, or absolute (default
    /// `.baton/worktrees`).
    #[cfg_attr(test, schemars(with = "Option<String>"))]
    pub(super) worktree_root: Option<Spanned<String>>,
    /// Prompt templates replacing the built-in prompt layout.
    pub(super) prompts: Option<RawPrompts>,
    /// Refuse to run a plan that declares no targets (default false).
    pub(super) require_targets: Option<bool>,
    /// `body`: a plan that declares no targets runs with the paths its body names, as
    /// `git baton targets` shows them; `off` (the default): it runs unverified.
    pub(super) derive_targets: Option<DeriveTargets>,
    /// Bytes of each output stream an attempt's log keeps: bytes, or a number with a binary
    /// unit (`512KiB`, `8MiB`, `1GiB`); default `8MiB`.
    #[cfg_attr(test, schemars(with = "Option<SizeValue>"))]
    pub(super) log_limit: Option<Spanned<SizeValue>>,
    /// How long a lease on a published run lasts unless its driver renews it: seconds or a
    /// duration (`90s`, `5m`); default `5m`.
    #[cfg_attr(test, schemars(with = "Option<DurationValue>"))]
    pub(super) lease: Option<Spanned<DurationValue>>,
    /// `push`: publish a run to `remote` after every save; `off` (the default): only
    /// `git baton push` and the lease publish it.
    #[cfg_attr(test, schemars(with = "Option<SyncMode>"))]
    pub(super) sync: Option<Spanned<SyncMode>>,
    /// The remote runs are published to and fetched from by default (default `origin`).
    #[cfg_attr(test, schemars(with = "Option<String>"))]
    pub(super) remote: Option<Spanned<String>>,
    /// Commands git-baton runs in the run's worktree after the actor of every gated stage
    /// exits, before the gate decides; a failing one blocks the attempt (docs/checks.md).
    #[cfg_attr(test, schemars(with = "Option<Vec<checks::RawCheck>>"))]
    pub(super) checks: Option<Vec<Spanned<checks::RawCheck>>>,
    /// Paths no attempt may change unless the run's plan targets them, added to the defaults
    /// (the plan file, `.baton.yml`, the usual CI configuration files); never empty.
    #[cfg_attr(test, schemars(with = "Option<Vec<String>>"))]
    pub(super) protect: Option<Spanned<Vec<Spanned<String>>>>,
    /// A command run with a JSON document on stdin when a run becomes `blocked`, `failed`,
    /// `review` or goes on hold (`rate_limited`): an argv, or a mapping with `command` or
    /// `shell`, `timeout` and `on` (docs/notify.md). The user configuration may set it too.
    #[cfg_attr(test, schemars(with = "Option<notify::RawNotifySchema>"))]
    pub(super) notify: Option<Spanned<notify::RawNotify>>,
}

/// Whether a run is pushed after every save.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(super) enum SyncMode {
    Off,
    Push,
}

/// Where a plan without `targets` gets them from.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(super) enum DeriveTargets {
    Off,
    Body,
}

/// Repo-relative template files; `{{name}}` placeholders are expanded.
#[derive(Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct RawPrompts {
    /// The template of a stage's first attempt.
    #[cfg_attr(test, schemars(with = "Option<String>"))]
    pub(super) fresh: Option<Spanned<String>>,
    /// The template of resumed attempts (default: `fresh`).
    #[cfg_attr(test, schemars(with = "Option<String>"))]
    pub(super) resume: Option<Spanned<String>>,
}

/// A program that does a stage's work.
#[derive(Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct RawActor {
    /// The program and its arguments (argv, never a shell string); `{prompt_file}`,
    /// `{evidence_file}`, `{worktree}`, `{run_id}`, `{stage}`, `{attempt}` are expanded.
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub(super) command: Vec<String>,
    /// `prompt`: the prompt file is the actor's stdin; `none` (default): stdin is empty.
    pub(super) stdin: Option<StdinMode>,
    /// Extra environment variables; the `BATON_*` variables always win.
    pub(super) env: Option<BTreeMap<String, String>>,
    /// How long an attempt may run before it is stopped: seconds (`900`), or units as in
    /// `90s`, `30m`, `1h30m`, `2 hours`.
    #[cfg_attr(test, schemars(with = "Option<DurationValue>"))]
    pub(super) timeout: Option<Spanned<DurationValue>>,
    /// What says the actor was rate limited.
    pub(super) rate_limit: Option<RawRateLimit>,
    /// Free-form metadata, recorded for the reader.
    pub(super) model: Option<String>,
    /// Free-form metadata, recorded for the reader.
    pub(super) provider: Option<String>,
    /// The account whose rate limits this actor's count against (default: the actor's name):
    /// `git baton cycle` holds every actor of an account when one of them is rate limited.
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub(super) account: Option<String>,
    pub(super) output: Option<crate::agent::output::Format>,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub(super) enum StdinMode {
    Prompt,
    None,
}

/// A duration: seconds, or text in jiff's friendly format (`90s`, `30m`, `1h30m`, `2 hours`).
#[derive(Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(untagged)]
pub(super) enum DurationValue {
    #[cfg_attr(test, schemars(extend("minimum" = 1)))]
    Seconds(u64),
    Text(String),
}

/// A size: bytes, or a number with a binary unit (`512KiB`, `8MiB`).
#[derive(Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(untagged)]
pub(super) enum SizeValue {
    #[cfg_attr(test, schemars(extend("minimum" = 1)))]
    Bytes(u64),
    #[cfg_attr(
        test,
        schemars(extend("pattern" = r"^\s*[0-9]+\s*(B|K|KiB|M|MiB|G|GiB)?\s*$"))
    )]
    Text(String),
}

/// What says an attempt that failed was rate limited.
#[derive(Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct RawRateLimit {
    /// Non-zero exit codes that mean "rate limited".
    #[serde(default)]
    pub(super) exit_codes: Vec<i32>,
    /// Substrings of the output (ASCII case ignored) that mean "rate limited" when the actor
    /// exits non-zero.
    #[serde(default)]
    pub(super) patterns: Vec<String>,
}

/// One stage of the pipeline.
#[derive(Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct RawStage {
    /// The stage's name.
    #[cfg_attr(test, schemars(with = "String"))]
    pub(super) stage: Spanned<String>,
    /// The actor (defined under `actors`) that does the stage's work.
    #[cfg_attr(test, schemars(with = "String"))]
    pub(super) actor: Spanned<String>,
    /// `coverage`: the coverage gate checks the stage's attempts.
    #[cfg_attr(test, schemars(with = "Option<Gate>"))]
    pub(super) gate: Option<Spanned<String>>,
    /// Actors that take over, in order, when an attempt of the stage ends rate limited.
    #[cfg_attr(test, schemars(with = "Option<Vec<String>>"))]
    pub(super) fallback: Option<Vec<Spanned<String>>>,
    /// Runner checks of this stage alone, gated or not, after the top-level ones.
    #[cfg_attr(test, schemars(with = "Option<Vec<checks::RawCheck>>"))]
    pub(super) checks: Option<Vec<Spanned<checks::RawCheck>>>,
}

// The gates a stage may have, for the schema only: `RawStage` reads `gate` as text, so that an
// unknown gate gets its own message.
/// A stage's gate: `coverage`, the coverage gate.
#[cfg(test)]
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
pub(super) enum Gate {
    Coverage,
}

/// The JSON Schema of `.baton.yml`, from the types that read it.
#[cfg(test)]
pub(crate) fn json_schema() -> schemars::Schema {
    schemars::schema_for!(RawFile)
}
