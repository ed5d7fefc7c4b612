//! `.baton.yml`, the committed configuration at the repository root.
//!
//! This version knows the key the verify gate reads (`plans_dir`); the keys that drive runs
//! (`actors`, `pipeline`, `coverage`, `worktree_root`) are accepted so a full configuration
//! already validates, and are read by the run machinery. Any other key is a located error: a
//! typo in a gate's configuration must not silently change what the gate checks.

use std::path::Path;

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::suggest::edit_distance;

pub const FILE_NAME: &str = ".baton.yml";
const KNOWN_KEYS: &[&str] = &[
    "plans_dir",
    "actors",
    "pipeline",
    "coverage",
    "worktree_root",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Where `verify` looks for plans when none are named: repo-relative, no trailing `/`.
    pub plans_dir: String,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            plans_dir: "plans".into(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {file}: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    plans_dir: Option<String>,
    actors: Option<IgnoredAny>,
    pipeline: Option<IgnoredAny>,
    coverage: Option<IgnoredAny>,
    worktree_root: Option<IgnoredAny>,
}

/// Reads `.baton.yml` from the top of `workdir`; a missing file is the default configuration.
pub fn load(workdir: &Path) -> Result<Config, ConfigError> {
    let path = workdir.join(FILE_NAME);
    match std::fs::read_to_string(&path) {
        Ok(text) => parse(FILE_NAME, &text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(source) => Err(ConfigError::Read {
            file: FILE_NAME.into(),
            source,
        }),
    }
}

/// Parses configuration text (pure); `file` names it in messages.
pub fn parse(file: &str, text: &str) -> Result<Config, ConfigError> {
    if text.trim().is_empty() {
        return Ok(Config::default());
    }
    let raw: Raw = serde_saphyr::from_str(text).map_err(|err| located(file, &err))?;
    let _ = (raw.actors, raw.pipeline, raw.coverage, raw.worktree_root);
    let mut config = Config::default();
    if let Some(dir) = raw.plans_dir {
        let trimmed = dir.trim_matches('/');
        if trimmed.is_empty() || dir.starts_with('/') || trimmed.split('/').any(|c| c == "..") {
            return Err(ConfigError::Invalid {
                file: file.into(),
                line: line_of_key(text, "plans_dir"),
                column: 1,
                message: format!("`plans_dir` must be a repo-relative directory, not `{dir}`"),
                hint: Some("for example `plans_dir: plans`".into()),
            });
        }
        config.plans_dir = trimmed.to_string();
    }
    Ok(config)
}

fn located(file: &str, err: &serde_saphyr::Error) -> ConfigError {
    let (line, column) = err.location().map_or((1, 1), |l| (l.line(), l.column()));
    let rendered = err.without_snippet().to_string();
    // The location goes in front, the way compilers and git print it.
    let message = match rendered.rfind(" at line ") {
        Some(at) => rendered[..at].to_string(),
        None => rendered,
    };
    let hint = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split('`').next())
        .map(|key| match closest(key, KNOWN_KEYS) {
            Some(known) => format!("did you mean `{known}`?"),
            None => format!("known keys: {}", KNOWN_KEYS.join(", ")),
        });
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
        .filter(|(d, k)| *d <= 2.max(k.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        let e = parse(".baton.yml", text).unwrap_err();
        match e.hint() {
            Some(h) => format!("{e}\nhint: {h}"),
            None => e.to_string(),
        }
    }

    #[test]
    fn defaults_and_plans_dir() {
        assert_eq!(parse(".baton.yml", "").unwrap().plans_dir, "plans");
        assert_eq!(
            parse(".baton.yml", "plans_dir: work/plans/\n")
                .unwrap()
                .plans_dir,
            "work/plans"
        );
        let full = "actors:\n  a: {command: [x]}\npipeline:\n  - {stage: executor, actor: a}\ncoverage: always\n";
        assert_eq!(parse(".baton.yml", full).unwrap(), Config::default());
    }

    #[test]
    fn errors_are_located() {
        insta::assert_snapshot!(err("plans_dir: plans\nplan_dir: x\n"), @r"
        .baton.yml:2:1: unknown field `plan_dir`, expected one of plans_dir, actors, pipeline, coverage, worktree_root
        hint: did you mean `plans_dir`?
        ");
        insta::assert_snapshot!(err("plans_dir: [a]\n"), @".baton.yml:1:12: expected string scalar");
        insta::assert_snapshot!(err("plans_dir: ../up\n"), @r"
        .baton.yml:1:1: `plans_dir` must be a repo-relative directory, not `../up`
        hint: for example `plans_dir: plans`
        ");
    }
}
