//! Which commands page their output, and with what: the part of git's pager rule that needs the
//! repository (`core.pager`); starting the pager is [`crate::term::pager`]'s.

use std::io::Write;
use std::path::Path;

use super::Command;
use crate::term::pager::{self, Pager};

/// The pager for `command`'s output and the writer that feeds it, when `command` is `diff`,
/// `log` or `review` (not as JSON), stdout is a terminal and `--no-pager` was not given. A pager
/// that cannot be started is no pager: the output goes to the terminal instead.
pub(super) fn for_command(
    command: &Command,
    no_pager: bool,
    cwd: &Path,
) -> Option<(Pager, Box<dyn Write + Send>)> {
    let paged = match command {
        Command::Diff(_) | Command::Review(_) => true,
        Command::Log(args) => !args.json,
        _ => false,
    };
    if !paged || no_pager || !pager::possible() {
        return None;
    }
    // `GIT_PAGER` wins over `core.pager`: then the repository need not be opened for it.
    let core = if std::env::var("GIT_PAGER").is_ok() {
        None
    } else {
        crate::git::Repo::discover(cwd)
            .ok()
            .and_then(|repo| repo.config_string("core.pager"))
    };
    let program = pager::command(core)?;
    pager::start(&program, matches!(command, Command::Log(_))).ok()
}
