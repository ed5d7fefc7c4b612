//! `git baton demo`: replays the incident git-baton exists for, in a throw-away repository.

use std::io::Write;

use clap::Args;

use super::{CliError, Ending};

/// Replay the incident git-baton exists for, in a temporary repository.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Keep the demo repository and say where it is.
    #[arg(long)]
    pub keep: bool,
}

pub fn cmd_demo(args: DemoArgs, out: &mut dyn Write) -> Result<Ending, CliError> {
    let options = crate::demo::Options { keep: args.keep };
    crate::demo::replay(&options, out, &mut |problem| {
        crate::term::errln!("warning: {problem}")
    })?;
    Ok(Ending::Done)
}
