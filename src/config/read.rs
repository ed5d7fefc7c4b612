//! Each part of a configuration file read into the [`Config`], checked where it is written:
//! the keys the user configuration may not set, the settings, an actor, the pipeline.

use super::*;

/// A located error in `file`.
fn invalid(
    file: &str,
    line: u64,
    column: u64,
    message: String,
    hint: Option<String>,
) -> ConfigError {
    ConfigError::at(file, (line, column), message, hint)
}

/// The keys a user configuration may set: the rest (the pipeline, the gate policy) belong to the
/// repository, so that every clone gates the same way.
pub(super) const PERSONAL: [&str; 2] = ["actors", "notify"];

/// The user configuration may only define actors and `notify`: its first other key is refused
/// where it is written.
pub(super) fn refuse_repo_only(file: &str, text: &str) -> Result<(), ConfigError> {
    // The values are skipped through `deserialize_any`, which by default refuses a non-finite
    // float (`1e999`, `.nan`) that a string field takes as written.
    let mut options = serde_saphyr::Options::default();
    options.non_finite_float_policy = serde_saphyr::NonFiniteFloatPolicy::PassThrough;
    let TopKeys(keys) =
        serde_saphyr::from_str_with_options(text, options).map_err(|err| located(file, &err))?;
    // Keys merged in with `<<` come after the ones written: the first is the first written.
    let first = keys
        .iter()
        .filter(|k| !PERSONAL.contains(&k.value.as_str()))
        .min_by_key(|k| (k.referenced.line(), k.referenced.column()));
    match first {
        Some(key) => Err(ConfigError::at(
            file,
            (key.referenced.line(), key.referenced.column()),
            format!(
                "`{}` belongs in the repository's {FILE_NAME}, not in the user configuration",
                key.value
            ),
            Some("the user configuration may only define `actors` and `notify`".into()),
        )),
        None => Ok(()),
    }
}

/// The top-level keys of a configuration file in the order they are written, each where it is.
struct TopKeys(Vec<Spanned<String>>);

impl<'de> serde::Deserialize<'de> for TopKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TopKeys, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = TopKeys;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a mapping")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<TopKeys, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(TopKeys(keys))
            }
        }
        d.deserialize_map(Keys)
    }
}

/// The settings of `raw` besides actors, checks and the pipeline, each checked where it is.
pub(super) fn apply_settings(
    config: &mut Config,
    file: &str,
    raw: RawFile,
) -> Result<(), ConfigError> {
    let invalid = |line, column, message, hint| invalid(file, line, column, message, hint);
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
    Ok(())
}

/// The actor `name` as `file` defines it, checked.
pub(super) fn read_actor(
    file: &str,
    name: &str,
    actor: Spanned<RawActor>,
) -> Result<Actor, ConfigError> {
    let invalid = |line, column, message, hint| invalid(file, line, column, message, hint);
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
        name: name.to_owned(),
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
    Ok(Actor {
        command: raw.command,
        stdin_prompt: matches!(raw.stdin, Some(StdinMode::Prompt)),
        env: raw.env.unwrap_or_default().into_iter().collect(),
        timeout,
        rate_limit_exit_codes: rate_limit.exit_codes,
        rate_limit_patterns: rate_limit.patterns,
        model: raw.model,
        provider: raw.provider,
        account: raw.account.filter(|a| !a.trim().is_empty()),
        output: raw.output.unwrap_or_default(),
        source: file.into(),
    })
}

/// The pipeline as `file` defines it, checked: it replaces any earlier one.
pub(super) fn apply_pipeline(
    config: &mut Config,
    file: &str,
    pipeline: Vec<Spanned<RawStage>>,
) -> Result<(), ConfigError> {
    let invalid = |line, column, message, hint| invalid(file, line, column, message, hint);
    let mut stages: Vec<StagePolicy> = Vec::new();
    config.stage_checks.clear();
    for entry in pipeline {
        let entry = entry.value;
        let name = &entry.stage;
        let valid = name
            .value
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase())
            && name
                .value
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
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
    Ok(())
}
