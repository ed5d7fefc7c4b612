//! Configuration: `.baton.yml` at the repository root (committed), overlaid by the user's
//! `$XDG_CONFIG_HOME/git-baton/config.yml` for personal actor commands and notifications.
//!
//! Strict on purpose: an unknown key or an actor name that does not exist is an error located
//! at its line and column. A typo in a gate's configuration must not silently change what the
//! gate checks or which program runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_saphyr::Spanned;

use crate::state::{CoverageMode, StagePolicy};
use crate::suggest::edit_distance;

pub mod checks;
pub mod notify;
mod protect;
mod raw;
mod read;
mod schema;

#[cfg(test)]
pub(crate) use raw::json_schema;
use raw::*;
use read::{apply_pipeline, apply_settings, read_actor, refuse_repo_only};

pub use checks::CheckSpec;
pub use notify::{Notify, NotifyEvent};
pub use protect::DEFAULT_PROTECTED;

pub const FILE_NAME: &str = ".baton.yml";

/// The default worktree root, relative to the main worktree (see docs/config.md for why).
pub const DEFAULT_WORKTREE_ROOT: &str = ".baton/worktrees";
/// A lease outlives a stalled network call or two, and a dead machine's run waits no longer
/// than a coffee break.
pub const DEFAULT_LEASE: Duration = crate::state::DEFAULT_LEASE;
pub const DEFAULT_REMOTE: &str = "origin";

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Where `verify` looks for plans when none are named: repo-relative, no trailing `/`.
    pub plans_dir: String,
    pub actors: BTreeMap<String, Actor>,
    pub pipeline: Vec<StagePolicy>,
    pub coverage: CoverageMode,
    /// As written: relative to the main worktree, or absolute.
    pub worktree_root: String,
    /// Prompt templates replacing the built-in layout (see docs/config.md).
    pub prompts: Prompts,
    /// Refuse to run a plan that declares no targets (its work could never be verified).
    pub require_targets: bool,
    /// Give a plan that declares no targets the paths its body names (`derive_targets: body`).
    pub derive_targets: bool,
    /// Bytes of each of an attempt's output streams kept in its log (head and tail).
    pub log_limit: u64,
    /// How long a lease on a published run lasts unless renewed (`lease:`).
    pub lease: Duration,
    /// Push a published run after every save (`sync: push`).
    pub sync_push: bool,
    /// The remote `sync: push` publishes new runs to, and `push`/`fetch` use by default.
    pub remote: String,
    /// Runner checks for every gated stage (top-level `checks:`, docs/checks.md).
    pub checks: Vec<CheckSpec>,
    /// Each stage's own `checks:`, by stage name.
    pub stage_checks: BTreeMap<String, Vec<CheckSpec>>,
    /// The command run when a run becomes blocked, failed, review or rate limited (`notify:`,
    /// docs/notify.md); the user's replaces the repository's.
    pub notify: Option<Notify>,
    /// Paths no attempt may change unless its plan targets them, besides
    /// [`DEFAULT_PROTECTED`] and the plan file (`protect:`), as normalized target specs.
    pub protect: Vec<String>,
    /// The files the configuration came from, for messages.
    pub sources: Vec<String>,
    /// Where each stage's `actor:` was written (file, line, column), for errors found later.
    pipeline_spans: BTreeMap<String, (String, u64, u64)>,
    /// Where `worktree_root` was written, when it was.
    worktree_root_span: Option<(String, u64, u64)>,
    /// Where each name of each stage's `fallback:` was written, in list order.
    fallback_spans: BTreeMap<String, Vec<(String, u64, u64)>>,
}

impl Config {
    /// An error about `worktree_root`, located where it was written (or, for the default, at
    /// the top of the repository's configuration file).
    pub fn worktree_root_error(&self, message: String, hint: String) -> ConfigError {
        let (file, line, column) = self
            .worktree_root_span
            .clone()
            .unwrap_or_else(|| (FILE_NAME.to_string(), 1, 1));
        ConfigError::at(file, (line, column), message, Some(hint))
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            plans_dir: "plans".into(),
            actors: BTreeMap::new(),
            pipeline: Vec::new(),
            coverage: CoverageMode::Always,
            worktree_root: DEFAULT_WORKTREE_ROOT.into(),
            prompts: Prompts::default(),
            require_targets: false,
            derive_targets: false,
            log_limit: crate::exec::DEFAULT_LOG_LIMIT,
            lease: DEFAULT_LEASE,
            sync_push: false,
            remote: DEFAULT_REMOTE.into(),
            checks: Vec::new(),
            stage_checks: BTreeMap::new(),
            notify: None,
            protect: Vec::new(),
            sources: Vec::new(),
            pipeline_spans: BTreeMap::new(),
            worktree_root_span: None,
            fallback_spans: BTreeMap::new(),
        }
    }
}

/// Prompt templates: the text of the files `prompts.fresh` and `prompts.resume` name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prompts {
    pub fresh: Option<String>,
    /// For resumed attempts; falls back to `fresh`, then to the built-in layout.
    pub resume: Option<String>,
}

impl Prompts {
    /// The template for an attempt, if one is configured.
    pub fn for_attempt(&self, resumed: bool) -> Option<&str> {
        if resumed {
            self.resume.as_deref().or(self.fresh.as_deref())
        } else {
            self.fresh.as_deref()
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Actor {
    pub command: Vec<String>,
    /// Write the prompt to the actor's stdin (otherwise stdin is empty).
    pub stdin_prompt: bool,
    pub env: Vec<(String, String)>,
    pub timeout: Option<Duration>,
    pub rate_limit_exit_codes: Vec<i32>,
    pub rate_limit_patterns: Vec<String>,
    pub model: Option<String>,
    pub provider: Option<String>,
    /// The account its rate limits count against (`account:`), when not its own name.
    pub account: Option<String>,
    /// What the actor prints on stdout, read for usage, session and verdict (`output:`).
    pub output: crate::agent::output::Format,
    /// The file that defined it (the user file overrides the repository's).
    pub source: String,
}

impl Actor {
    /// What the exec layer runs for this actor, named `name`.
    pub fn spec(&self, name: &str) -> crate::exec::ActorSpec {
        crate::exec::ActorSpec {
            name: name.to_owned(),
            command: self.command.clone(),
            stdin_prompt: self.stdin_prompt,
            env: self.env.clone(),
            timeout: self.timeout,
            rate_limit: crate::exec::RateLimitRules {
                exit_codes: self.rate_limit_exit_codes.clone(),
                patterns: self.rate_limit_patterns.clone(),
            },
            output: self.output,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {file}: {reason}")]
    Read { file: String, reason: String },
    #[error("{file}:{line}:{column}: {message}")]
    Invalid {
        file: String,
        line: u64,
        column: u64,
        message: String,
        hint: Option<String>,
    },
}

impl ConfigError {
    /// A located error in `file`.
    pub(crate) fn at(
        file: impl Into<String>,
        (line, column): (u64, u64),
        message: String,
        hint: Option<String>,
    ) -> ConfigError {
        ConfigError::Invalid {
            file: file.into(),
            line,
            column,
            message,
            hint,
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            ConfigError::Invalid { hint, .. } => hint.clone(),
            ConfigError::Read { .. } => None,
        }
    }
}

/// The user's overlay file: `$XDG_CONFIG_HOME/git-baton/config.yml`, else
/// `~/.config/git-baton/config.yml`.
pub fn user_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("git-baton").join("config.yml"))
}

/// Reads `.baton.yml` from the top of `workdir` and the user's overlay; missing files are empty.
pub fn load(workdir: &Path) -> Result<Config, ConfigError> {
    let mut config = Config::default();
    if let Some(text) = read_optional(&workdir.join(FILE_NAME), FILE_NAME)? {
        apply(&mut config, FILE_NAME, &text, false)?;
        load_prompts(&mut config, workdir, &text)?;
    }
    if let Some(path) = user_file() {
        let shown = path.display().to_string();
        if let Some(text) = read_optional(&path, &shown)? {
            apply(&mut config, &shown, &text, true)?;
        }
    }
    validate_pipeline(&config)?;
    Ok(config)
}

fn read_optional(path: &Path, shown: &str) -> Result<Option<String>, ConfigError> {
    crate::files::if_present(crate::files::read_regular_string(path)).map_err(|err| {
        ConfigError::Read {
            file: shown.into(),
            reason: crate::files::io_reason(&err),
        }
    })
}

/// Parses one configuration text (pure); `file` names it in messages.
pub fn parse(file: &str, text: &str) -> Result<Config, ConfigError> {
    let config = parse_committed(file, text)?;
    validate_pipeline(&config)?;
    Ok(config)
}

/// The repository's configuration as committed, from its text alone: no user overlay, no prompt
/// files read, and no check that needs either (a pipeline's actors may be defined by the user).
/// For the gate, which reads it from a commit it trusts rather than from the worktree.
pub fn parse_committed(file: &str, text: &str) -> Result<Config, ConfigError> {
    let mut config = Config::default();
    apply(&mut config, file, text, false)?;
    Ok(config)
}

/// Layers one file over `config`. The user file may only add or replace actors and `notify`:
/// the pipeline and the gate policy belong to the repository, so every clone gates the same way.
fn apply(config: &mut Config, file: &str, text: &str, user: bool) -> Result<(), ConfigError> {
    config.sources.push(file.into());
    if text.trim().is_empty() {
        return Ok(());
    }
    let mut raw: RawFile = serde_saphyr::from_str(text).map_err(|err| located(file, &err))?;
    if user {
        refuse_repo_only(file, text)?;
    }
    let actors = raw.actors.take().unwrap_or_default();
    let pipeline = raw.pipeline.take();
    let checks_list = raw.checks.take();
    let notify = raw.notify.take();
    apply_settings(config, file, raw)?;
    if let Some(notify) = notify {
        config.notify = Some(notify::read(file, notify)?);
    }
    for (name, actor) in actors {
        let actor = read_actor(file, &name, actor)?;
        config.actors.insert(name, actor);
    }
    if let Some(list) = checks_list {
        config.checks = checks::read(file, list, &[])?;
    }
    if let Some(pipeline) = pipeline {
        apply_pipeline(config, file, pipeline)?;
    }
    Ok(())
}

/// Reads the prompt templates `.baton.yml` names (paths relative to the repository root) and
/// checks their placeholders, so a typo fails before any agent runs.
fn load_prompts(config: &mut Config, workdir: &Path, text: &str) -> Result<(), ConfigError> {
    let raw: RawFile = serde_saphyr::from_str(text).map_err(|err| located(FILE_NAME, &err))?;
    let Some(prompts) = raw.prompts else {
        return Ok(());
    };
    let read = |entry: Option<Spanned<String>>| -> Result<Option<String>, ConfigError> {
        let Some(entry) = entry else { return Ok(None) };
        let path = workdir.join(&entry.value);
        let template =
            crate::files::read_regular_string(&path).map_err(|err| ConfigError::Invalid {
                file: FILE_NAME.into(),
                line: entry.referenced.line(),
                column: entry.referenced.column(),
                message: format!(
                    "cannot read the prompt template `{}`: {}",
                    entry.value,
                    crate::files::io_reason(&err)
                ),
                hint: Some("give a path relative to the repository root".into()),
            })?;
        if let Some((line, column, name)) = crate::template::unknown_placeholder(&template) {
            return Err(ConfigError::Invalid {
                file: entry.value.clone(),
                line: line as u64,
                column: column as u64,
                message: format!("unknown placeholder `{{{{{name}}}}}` in prompt template"),
                hint: Some(format!(
                    "the placeholders are {}",
                    crate::template::PLACEHOLDERS
                        .map(|p| format!("{{{{{p}}}}}"))
                        .join(", ")
                )),
            });
        }
        Ok(Some(template))
    };
    config.prompts = Prompts {
        fresh: read(prompts.fresh)?,
        resume: read(prompts.resume)?,
    };
    Ok(())
}

/// Every pipeline stage names a defined actor; checked after the user overlay, which may be
/// where the actor is defined.
fn validate_pipeline(config: &Config) -> Result<(), ConfigError> {
    let unknown = |actor: &str, span: Option<(String, u64, u64)>, message: String| {
        let (file, line, column) = span.unwrap_or_else(|| (FILE_NAME.to_string(), 1, 1));
        let names: Vec<&str> = config.actors.keys().map(String::as_str).collect();
        let hint = match closest(actor, &names) {
            Some(known) => format!("did you mean `{known}`?"),
            None if names.is_empty() => {
                "define it under `actors:` (here or in the user configuration)".into()
            }
            None => format!("defined actors: {}", names.join(", ")),
        };
        ConfigError::at(file, (line, column), message, Some(hint))
    };
    for stage in &config.pipeline {
        if !config.actors.contains_key(&stage.actor) {
            return Err(unknown(
                &stage.actor,
                config.pipeline_spans.get(&stage.stage).cloned(),
                format!(
                    "unknown actor `{}` for stage `{}`",
                    stage.actor, stage.stage
                ),
            ));
        }
        let spans = config.fallback_spans.get(&stage.stage);
        for (i, actor) in stage.fallback.iter().enumerate() {
            if !config.actors.contains_key(actor) {
                return Err(unknown(
                    actor,
                    spans.and_then(|s| s.get(i)).cloned(),
                    format!(
                        "unknown actor `{actor}` in the `fallback` of stage `{}`",
                        stage.stage
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// How a duration may be written, for the hint under an invalid one.
const DURATION_HINT: &str = crate::duration::HINT;

/// A positive duration of at most a week: plain seconds (a YAML number, or text of digits
/// alone), or what [`crate::duration::parse`] accepts.
fn parse_duration(value: &DurationValue) -> Result<Duration, String> {
    match value {
        DurationValue::Seconds(s) => {
            crate::duration::check(Duration::from_secs(*s), &s.to_string())
        }
        DurationValue::Text(text) => crate::duration::parse(text),
    }
}

/// Bytes: a number, or a number with a binary unit (`K`/`KiB`, `M`/`MiB`, `G`/`GiB`).
fn parse_size(value: &SizeValue) -> Option<u64> {
    let bytes = match value {
        SizeValue::Bytes(n) => *n,
        SizeValue::Text(text) => {
            let text = text.trim();
            let (number, unit) = text.split_at(
                text.find(|c: char| !c.is_ascii_digit())
                    .unwrap_or(text.len()),
            );
            let n: u64 = number.parse().ok()?;
            let shift = match unit.trim() {
                "" | "B" => 0,
                "K" | "KiB" => 10,
                "M" | "MiB" => 20,
                "G" | "GiB" => 30,
                _ => return None,
            };
            n.checked_mul(1 << shift)?
        }
    };
    (bytes > 0).then_some(bytes)
}

fn located(file: &str, err: &serde_saphyr::Error) -> ConfigError {
    let (line, column) = err.location().map_or((1, 1), |l| (l.line(), l.column()));
    let rendered = err.without_snippet().to_string();
    // The location goes in front, the way compilers and git print it.
    let message = match rendered.rfind(" at line ") {
        Some(at) => rendered[..at].to_string(),
        None => rendered,
    };
    // The keys of the mapping the unknown key is in: serde names them with the key, from the
    // type that reads that mapping.
    let hint = match err.without_snippet() {
        serde_saphyr::Error::SerdeUnknownField {
            field, expected, ..
        } => Some(schema::unknown_key_hint(field, expected)),
        _ => None,
    };
    ConfigError::at(file, (line, column), message, hint)
}

/// The known name within a small edit distance of `name`, for "did you mean" hints.
pub fn closest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (edit_distance(name, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 3) && *d < k.len().max(name.len()).min(k.len()))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests;
