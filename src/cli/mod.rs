//! The command line: one file per command, each a clap `Args` struct (its doc comment is the
//! help text) and a `run` function that translates arguments into a call of the domain.
//! No business logic lives here.

mod verify;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::{CliError, Exit};

/// git-baton: a stage of coding-agent work counts as succeeded only when the repository proves it.
///
/// Plans declare `targets`, the paths the work must touch. git-baton checks the repository
/// against that declared intent: every target must have a changed path, or a recorded, specific
/// reason why it needed no change.
#[derive(Debug, Parser)]
#[command(
    name = "git-baton",
    bin_name = "git baton",
    version,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Verify(verify::VerifyArgs),
}

/// Parses the process arguments, runs the command and maps the outcome to an exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints usage errors as `error: …` with exit 2, and help/version with exit 0.
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() {
                Exit::Input as u8
            } else {
                0
            });
        }
    };
    match run(cli) {
        Ok(exit) => exit.into(),
        Err(err) => {
            err.print(&mut std::io::stderr().lock());
            err.exit.into()
        }
    }
}

pub fn run(cli: Cli) -> Result<Exit, CliError> {
    let cwd = std::env::current_dir()
        .map_err(|err| CliError::input(format!("cannot read the current directory: {err}")))?;
    let mut stdout = std::io::stdout().lock();
    let exit = match cli.command {
        Command::Verify(args) => verify::run(&cwd, args, &mut stdout)?,
    };
    // A closed pipe (`| head`) is not a failure of the gate.
    let _ = stdout.flush();
    Ok(exit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// The help of every command, so that help-text drift shows up in review (docs/cli.md
    /// quotes it).
    #[test]
    fn help_text() {
        let mut cli = Cli::command().term_width(100);
        let mut all = cli.render_long_help().to_string();
        for sub in cli.get_subcommands_mut() {
            let name = sub.get_name().to_string();
            let help = sub
                .clone()
                .term_width(100)
                .bin_name(format!("git baton {name}"))
                .render_long_help();
            all.push_str(&format!("\n===== git baton {name} --help\n{help}"));
        }
        insta::assert_snapshot!(all);
    }
}
