//! Configuration: `.baton.yml` at the repository root (committed), overlaid by the user's
//! `$XDG_CONFIG_HOME/git-baton/config.yml` for personal actor commands.
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
mod protect;
mod raw;
mod schema;

#[cfg(test)]
pub(crate) use raw::json_schema;
use raw::*;

pub use checks::Check;
pub use protect::DEFAULT_PROTECTED;

pub const FILE_NAME: &str = ".baton.yml";

/// The default worktree root, relative to the main worktree (see docs/config.md for why).
pub const DEFAULT_WORKTREE_ROOT: &str = ".baton/worktrees";
/// A lease outlives a stalled network call or two, and a dead machine's run waits no longer
/// than a coffee break.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(5 * 60);
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
    pub checks: Vec<Check>,
    /// Each stage's own `checks:`, by stage name.
    pub stage_checks: BTreeMap<String, Vec<Check>>,
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
        ConfigError::Invalid {
            file,
            line,
            column,
            message,
            hint: Some(hint),
        }
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
    match crate::files::read_regular_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(ConfigError::Read {
            file: shown.into(),
            reason: crate::files::io_reason(&err),
        }),
    }
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

/// Layers one file over `config`. The user file may only add or replace actors: the pipeline
/// and the gate policy belong to the repository, so every clone gates the same way.
fn apply(config: &mut Config, file: &str, text: &str, user: bool) -> Result<(), ConfigError> {
    config.sources.push(file.into());
    if text.trim().is_empty() {
        return Ok(());
    }
    let raw: RawFile = serde_saphyr::from_str(text).map_err(|err| located(file, &err))?;
    let invalid =
        |line: u64, column: u64, message: String, hint: Option<String>| ConfigError::Invalid {
            file: file.into(),
            line,
            column,
            message,
            hint,
        };
    if user {
        let repo_only = [
            ("plans_dir", raw.plans_dir.is_some()),
            ("pipeline", raw.pipeline.is_some()),
            ("coverage", raw.coverage.is_some()),
            ("worktree_root", raw.worktree_root.is_some()),
            ("prompts", raw.prompts.is_some()),
            ("require_targets", raw.require_targets.is_some()),
            ("derive_targets", raw.derive_targets.is_some()),
            ("log_limit", raw.log_limit.is_some()),
            ("lease", raw.lease.is_some()),
            ("sync", raw.sync.is_some()),
            ("remote", raw.remote.is_some()),
            ("checks", raw.checks.is_some()),
            ("protect", raw.protect.is_some()),
        ];
        if let Some((key, _)) = repo_only.iter().find(|(_, set)| *set) {
            return Err(invalid(
                line_of_key(text, key),
                1,
                format!(
                    "`{key}` belongs in the repository's {FILE_NAME}, not in the user configuration"
                ),
                Some("the user configuration may only define `actors`".into()),
            ));
        }
    }
    if let Some(dir) = raw.plans_dir {
        // `./plans`, `plans/` and `plans//` name one directory; written differently, they must not
        // make discovery look for a prefix that no path has.
        let normalized: Vec<&str> = dir
            .value
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        if normalized.is_empty() || dir.value.starts_with('/') || normalized.contains(&"..") {
            return Err(invalid(
                dir.referenced.line(),
                dir.referenced.column(),
                format!(
                    "`plans_dir` must be a repo-relative directory, not `{}`",
                    dir.value
                ),
                Some("for example `plans_dir: plans`".into()),
            ));
        }
        config.plans_dir = normalized.join("/");
    }
    if let Some(root) = raw.worktree_root {
        config.worktree_root_span = Some((
            file.to_string(),
            root.referenced.line(),
            root.referenced.column(),
        ));
        config.worktree_root = root.value;
    }
    if let Some(mode) = raw.coverage {
        config.coverage = mode;
    }
    if let Some(require) = raw.require_targets {
        config.require_targets = require;
    }
    if let Some(derive) = raw.derive_targets {
        config.derive_targets = derive == DeriveTargets::Body;
    }
    if let Some(lease) = raw.lease {
        let value = parse_duration(&lease.value)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| {
                invalid(
                    lease.referenced.line(),
                    lease.referenced.column(),
                    "`lease` must be a duration greater than zero".into(),
                    Some(DURATION_HINT.into()),
                )
            })?;
        config.lease = value;
    }
    if let Some(list) = raw.protect {
        protect::apply(&mut config.protect, file, list)?;
    }
    if let Some(sync) = raw.sync {
        config.sync_push = sync.value == SyncMode::Push;
    }
    if let Some(remote) = raw.remote {
        let name = remote.value.trim();
        if name.is_empty() || name.starts_with('-') || name.contains(char::is_whitespace) {
            return Err(invalid(
                remote.referenced.line(),
                remote.referenced.column(),
                format!("`remote` must name a git remote, not `{}`", remote.value),
                Some("for example `remote: origin`".into()),
            ));
        }
        config.remote = name.to_owned();
    }
    if let Some(limit) = raw.log_limit {
        config.log_limit = parse_size(&limit.value).ok_or_else(|| {
            invalid(
                limit.referenced.line(),
                limit.referenced.column(),
                "`log_limit` must be a size greater than zero".into(),
                Some(
                    "use bytes (`8388608`) or a number with a unit: `512KiB`, `8MiB`, `1GiB`"
                        .into(),
                ),
            )
        })?;
    }
    for (name, actor) in raw.actors.unwrap_or_default() {
        let (line, column) = (actor.referenced.line(), actor.referenced.column());
        let raw = actor.value;
        if raw.command.is_empty() || raw.command[0].trim().is_empty() {
            return Err(invalid(
                line,
                column,
                format!("actor `{name}` has an empty `command`"),
                Some("give the program and its arguments as a list, e.g. `command: [codex, exec, \"{prompt_file}\"]`".into()),
            ));
        }
        let timeout = match raw.timeout {
            None => None,
            Some(t) => Some(parse_duration(&t.value).map_err(|reason| {
                invalid(
                    t.referenced.line(),
                    t.referenced.column(),
                    format!("actor `{name}` has an invalid `timeout`: {reason}"),
                    Some(DURATION_HINT.into()),
                )
            })?),
        };
        let rate_limit = raw.rate_limit.unwrap_or(RawRateLimit {
            exit_codes: Vec::new(),
            patterns: Vec::new(),
        });
        let spec = crate::exec::ActorSpec {
            name: name.clone(),
            command: raw.command.clone(),
            stdin_prompt: false,
            env: Vec::new(),
            timeout: None,
            rate_limit: crate::exec::RateLimitRules::default(),
            output: crate::agent::output::Format::Text,
        };
        if let Err(err) = crate::exec::check_command(&spec) {
            return Err(invalid(line, column, err.to_string(), err.hint()));
        }
        config.actors.insert(
            name,
            Actor {
                command: raw.command,
                stdin_prompt: matches!(raw.stdin, Some(StdinMode::Prompt)),
                env: raw.env.unwrap_or_default().into_iter().collect(),
                timeout,
                rate_limit_exit_codes: rate_limit.exit_codes,
                rate_limit_patterns: rate_limit.patterns,
                model: raw.model,
                provider: raw.provider,
                output: raw.output.unwrap_or_default(),
                source: file.into(),
            },
        );
    }
    if let Some(list) = raw.checks {
        config.checks = checks::read(file, list, &[])?;
    }
    if let Some(pipeline) = raw.pipeline {
        let mut stages: Vec<StagePolicy> = Vec::new();
        config.stage_checks.clear();
        for entry in pipeline {
            let entry = entry.value;
            let name = &entry.stage;
            let valid =
                name.value
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_lowercase())
                    && name.value.chars().all(|c| {
                        c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-'
                    });
            if !valid {
                return Err(invalid(
                    name.referenced.line(),
                    name.referenced.column(),
                    format!("stage name `{}` must match [a-z][a-z0-9_-]*", name.value),
                    None,
                ));
            }
            if stages.iter().any(|s| s.stage == name.value) {
                return Err(invalid(
                    name.referenced.line(),
                    name.referenced.column(),
                    format!("stage `{}` appears twice in the pipeline", name.value),
                    None,
                ));
            }
            let gated = match &entry.gate {
                None => false,
                Some(g) if g.value == "coverage" => true,
                Some(g) => {
                    return Err(invalid(
                        g.referenced.line(),
                        g.referenced.column(),
                        format!("unknown gate `{}` for stage `{}`", g.value, name.value),
                        Some("the one gate is `coverage`".into()),
                    ));
                }
            };
            config.pipeline_spans.insert(
                name.value.clone(),
                (
                    file.to_string(),
                    entry.actor.referenced.line(),
                    entry.actor.referenced.column(),
                ),
            );
            let fallback = entry.fallback.unwrap_or_default();
            for (i, actor) in fallback.iter().enumerate() {
                if fallback[..i].iter().any(|a| a.value == actor.value) {
                    return Err(invalid(
                        actor.referenced.line(),
                        actor.referenced.column(),
                        format!(
                            "actor `{}` appears twice in the `fallback` of stage `{}`",
                            actor.value, name.value
                        ),
                        Some("each actor is tried at most once per rate-limited stage".into()),
                    ));
                }
            }
            config.fallback_spans.insert(
                name.value.clone(),
                fallback
                    .iter()
                    .map(|a| (file.to_string(), a.referenced.line(), a.referenced.column()))
                    .collect(),
            );
            if let Some(list) = entry.checks {
                let own = checks::read(file, list, &config.checks)?;
                config.stage_checks.insert(name.value.clone(), own);
            }
            stages.push(StagePolicy {
                stage: name.value.clone(),
                actor: entry.actor.value.clone(),
                gated,
                fallback: fallback.into_iter().map(|a| a.value).collect(),
            });
        }
        config.pipeline = stages;
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
        ConfigError::Invalid {
            file,
            line,
            column,
            message,
            hint: Some(hint),
        }
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
    ConfigError::Invalid {
        file: file.into(),
        line,
        column,
        message,
        hint,
    }
}

fn line_of_key(text: &str, key: &str) -> u64 {
    text.lines()
        .position(|l| l.trim_start().starts_with(&format!("{key}:")))
        .map_or(1, |i| i as u64 + 1)
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
