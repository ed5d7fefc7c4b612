//! Fuzzing the `.baton.yml` parser: never a panic, every refusal at a line and column of the
//! file, and every accepted configuration written out again (as plain YAML) parses to the same
//! configuration.

use git_baton::config::{self, Config};

use super::{Lines, Verdict, fuzz_text, located, yaml_quoted};

const FILE: &str = ".baton.yml";

#[test]
fn fuzz_config_parser() {
    fuzz_text("config", "config", check);
}

fn check(text: &str) -> Result<Verdict, String> {
    match config::parse(FILE, text) {
        Ok(config) => round_trip(&config),
        Err(err) => match &err {
            config::ConfigError::Invalid {
                file,
                line,
                column,
                message,
                ..
            } => {
                if file != FILE || message.trim().is_empty() {
                    return Err(format!("a refusal without its file or message: {err:?}"));
                }
                located(text, Lines::Yaml, FILE, (*line, *column), &err.to_string())
            }
            _ => Err(format!(
                "parsing a text refused it without a location: {err}"
            )),
        },
    }
}

fn list(items: impl IntoIterator<Item = String>) -> String {
    format!("[{}]", items.into_iter().collect::<Vec<_>>().join(", "))
}

/// The configuration as the plainest YAML that says the same.
fn write(config: &Config) -> String {
    let mut text = format!(
        "plans_dir: {}\nworktree_root: {}\ncoverage: {}\nrequire_targets: {}\nactors:\n",
        yaml_quoted(&config.plans_dir),
        yaml_quoted(&config.worktree_root),
        serde_json::to_value(config.coverage)
            .unwrap()
            .as_str()
            .unwrap(),
        config.require_targets,
    );
    if config.actors.is_empty() {
        text.push_str("  {}\n");
    }
    for (name, actor) in &config.actors {
        text.push_str(&format!("  {}:\n", yaml_quoted(name)));
        text.push_str(&format!(
            "    command: {}\n",
            list(actor.command.iter().map(|a| yaml_quoted(a)))
        ));
        let stdin = if actor.stdin_prompt { "prompt" } else { "none" };
        text.push_str(&format!("    stdin: {stdin}\n"));
        let env = actor
            .env
            .iter()
            .map(|(k, v)| format!("{}: {}", yaml_quoted(k), yaml_quoted(v)));
        text.push_str(&format!(
            "    env: {{{}}}\n",
            env.collect::<Vec<_>>().join(", ")
        ));
        if let Some(timeout) = actor.timeout {
            text.push_str(&format!("    timeout: {}\n", timeout.as_secs()));
        }
        text.push_str(&format!(
            "    rate_limit: {{exit_codes: {}, patterns: {}}}\n",
            list(actor.rate_limit_exit_codes.iter().map(i32::to_string)),
            list(actor.rate_limit_patterns.iter().map(|p| yaml_quoted(p))),
        ));
        for (key, value) in [("model", &actor.model), ("provider", &actor.provider)] {
            if let Some(value) = value {
                text.push_str(&format!("    {key}: {}\n", yaml_quoted(value)));
            }
        }
    }
    text.push_str(if config.pipeline.is_empty() {
        "pipeline: []\n"
    } else {
        "pipeline:\n"
    });
    for stage in &config.pipeline {
        text.push_str(&format!(
            "  - {{stage: {}, actor: {}{}}}\n",
            yaml_quoted(&stage.stage),
            yaml_quoted(&stage.actor),
            if stage.gated { ", gate: coverage" } else { "" }
        ));
    }
    text
}

fn round_trip(config: &Config) -> Result<Verdict, String> {
    let text = write(config);
    let again = config::parse(FILE, &text).map_err(|err| {
        format!("the accepted configuration, written out again, is refused: {err}\n{text}")
    })?;
    // Everything but where each value was written.
    let same = again.plans_dir == config.plans_dir
        && again.worktree_root == config.worktree_root
        && again.coverage == config.coverage
        && again.require_targets == config.require_targets
        && again.pipeline == config.pipeline
        && again.actors == config.actors;
    if !same {
        return Err(format!(
            "the accepted configuration reads back differently:\n{config:#?}\nwritten as\n{text}\nreads as\n{again:#?}"
        ));
    }
    Ok(Verdict::RoundTripped)
}
