//! The pager for long output (`diff`, `log`, `review`), chosen and started as git does it.
//!
//! The command is `GIT_PAGER`, else `core.pager`, else `PAGER`, else `less`; an empty one or
//! `cat` means no pager. It runs through `sh -c` with our stdout as its own, `LESS=FRX` and
//! `LV=-c` unless those are set (quit when the text fits the screen, pass colour through, leave
//! the text on the screen), and is only started when stdout is a terminal. A pager that quits
//! before reading everything is not an error: the writes after it fail with EPIPE and are
//! dropped like every write to a stream that is gone. While it runs, Ctrl-C is the pager's:
//! git-baton ignores SIGINT until the pager has exited, so that the pager is never left alone
//! on a terminal the shell has taken back.

use std::io::{self, Write};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::Stream;

/// The pager git would pick: `GIT_PAGER`, `core_pager`, `PAGER`, `less`; `None` for none.
pub fn command(core_pager: Option<String>) -> Option<String> {
    choose(
        std::env::var("GIT_PAGER").ok(),
        core_pager,
        std::env::var("PAGER").ok(),
    )
}

fn choose(
    git_pager: Option<String>,
    core: Option<String>,
    pager: Option<String>,
) -> Option<String> {
    let chosen = git_pager
        .or(core)
        .or(pager)
        .unwrap_or_else(|| "less".to_string());
    let trimmed = chosen.trim();
    (!trimmed.is_empty() && trimmed != "cat").then_some(chosen)
}

/// Whether a pager may be started at all: stdout is a terminal.
pub fn possible() -> bool {
    Stream::Stdout.is_terminal()
}

/// A running pager; [`Pager::finish`] waits for it.
pub struct Pager {
    child: Child,
    /// Our SIGINT handler while the pager runs: it only sets a flag nobody reads.
    sigint: Option<signal_hook::SigId>,
}

/// Starts `command` and returns it with the writer for its input: colour kept when it would
/// have reached our stdout, stripped otherwise, and every byte as it is for `raw` output (an
/// actor's log).
pub fn start(command: &str, raw: bool) -> io::Result<(Pager, Box<dyn Write + Send>)> {
    let colour = super::colour::wanted(Stream::Stdout);
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(command).stdin(Stdio::piped());
    for (key, value) in [("LESS", "FRX"), ("LV", "-c")] {
        if std::env::var_os(key).is_none() {
            cmd.env(key, value);
        }
    }
    cmd.env("GIT_PAGER_IN_USE", "true");
    let mut child = cmd.spawn()?;
    let Some(input) = child.stdin.take() else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(io::Error::other("the pager has no input"));
    };
    let sigint = signal_hook::flag::register(
        signal_hook::consts::SIGINT,
        Arc::new(AtomicBool::new(false)),
    )
    .ok();
    let input: Box<dyn Write + Send> = if raw {
        Box::new(input)
    } else {
        super::colour::styled(input, colour)
    };
    Ok((Pager { child, sigint }, input))
}

impl Pager {
    /// Waits for the pager to exit, after `input` (its writer, dropped here) has ended.
    pub fn finish(mut self, input: Box<dyn Write + Send>) {
        drop(input);
        let _ = self.child.wait();
        if let Some(id) = self.sigint.take() {
            signal_hook::low_level::unregister(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_pager_then_core_pager_then_pager_then_less() {
        let s = |v: &str| Some(v.to_string());
        assert_eq!(choose(s("a"), s("b"), s("c")), s("a"));
        assert_eq!(choose(None, s("b"), s("c")), s("b"));
        assert_eq!(choose(None, None, s("c")), s("c"));
        assert_eq!(choose(None, None, None), s("less"));
    }

    #[test]
    fn an_empty_pager_or_cat_means_none() {
        let s = |v: &str| Some(v.to_string());
        assert_eq!(choose(s(""), s("b"), None), None);
        assert_eq!(choose(None, s(" cat "), s("c")), None);
        assert_eq!(choose(None, s("less -S"), None), s("less -S"));
    }
}
