//! Arguments several commands share, declared once and flattened into each command's `Args`.

use clap::Args;

/// The run a command acts on.
#[derive(Debug, Args)]
pub struct RunArg {
    /// The run: its id or any unique prefix.
    #[arg(value_name = "RUN")]
    pub run: String,
}

/// The attempt `log` and `diff` show.
#[derive(Debug, Args)]
pub struct AttemptArgs {
    /// The stage (default: the latest stage that ran; with --attempt, the gated stage).
    #[arg(long, value_name = "STAGE")]
    pub stage: Option<String>,

    /// The attempt number within the stage (default: its latest).
    #[arg(long, value_name = "N")]
    pub attempt: Option<u32>,
}

/// `--actor STAGE=NAME`.
pub fn parse_actor(value: &str) -> Result<(String, String), String> {
    match value.split_once('=') {
        Some((stage, actor)) if !stage.is_empty() && !actor.is_empty() => {
            Ok((stage.to_string(), actor.to_string()))
        }
        _ => Err(format!("expected STAGE=NAME, got `{value}`")),
    }
}
