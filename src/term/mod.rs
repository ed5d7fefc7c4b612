//! git-baton's own stdout and stderr: every byte it writes to them goes through here, and no
//! write can panic or change what a command does.
//!
//! `print!`, `eprintln!` and friends panic when their stream is gone ("failed printing to
//! stderr: Broken pipe", exit 101). Streams do go away: `git baton run … 2>&1 | head -1` closes
//! the pipe after one line, and a closed SSH session hangs the terminal up. Rust ignores SIGPIPE,
//! so a closed pipe comes back from `write` as EPIPE, a hung-up terminal as EIO; here either is
//! dropped, because a run must be driven and recorded the same whether anyone still reads its
//! output or not. The print macros are denied crate-wide (`clippy::print_stdout`,
//! `clippy::print_stderr` in `lib.rs`), and a test below keeps the raw stream handles here.
//!
//! Writers that want to stop early when the reader has gone (a log streamed to `| head`) take
//! [`stdout`] as an `io::Write` and see the error themselves.
//!
//! What else a terminal gets, each in its own module: colour ([`colour`]: reports paint their
//! words, the streams strip the paint where it is not wanted), the status line under a running
//! stage ([`status`], which every write here goes around), and the pager ([`pager`]).

pub mod colour;
pub mod pager;
pub mod status;

use std::fmt;
use std::io::{self, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

pub use colour::{Paint, paint};

static QUIET: AtomicBool = AtomicBool::new(false);

/// How the command line asked the terminal to behave; set once, before any output.
#[derive(Debug, Clone, Copy, Default)]
pub struct Settings {
    pub colour: colour::When,
    /// `--quiet`: no status line, and the actors' output only in their logs.
    pub quiet: bool,
}

/// Applies `settings` for the rest of the process.
pub fn configure(settings: Settings) {
    colour::configure(settings.colour);
    QUIET.store(settings.quiet, Ordering::Relaxed);
}

/// `--quiet` was given.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Which of the process's streams a write is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    fn is_terminal(self) -> bool {
        match self {
            Stream::Stdout => io::stdout().is_terminal(),
            Stream::Stderr => io::stderr().is_terminal(),
        }
    }
}

/// One of the process's streams as a writer: its bytes go around the status line, if one is
/// shown, and reach the stream unbuffered.
pub struct Raw {
    stream: Stream,
    /// What it writes is what an actor prints as it runs: the status line is told that the
    /// actor spoke.
    live_actor: bool,
}

impl Raw {
    fn new(stream: Stream) -> Raw {
        Raw {
            stream,
            live_actor: false,
        }
    }
}

impl Write for Raw {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        status::around(self.stream, buf, self.live_actor)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        flush_raw(self.stream)
    }
}

/// anstream's colour choice for `stream`, given the global one.
fn choice_for(stream: Stream) -> anstream::ColorChoice {
    match stream {
        Stream::Stdout => anstream::AutoStream::choice(&io::stdout()),
        Stream::Stderr => anstream::AutoStream::choice(&io::stderr()),
    }
}

/// What reaches `stream` on the raw handle: the one place that names the process's streams.
fn write_raw(stream: Stream, buf: &[u8]) -> io::Result<()> {
    match stream {
        Stream::Stdout => io::stdout().lock().write_all(buf),
        Stream::Stderr => io::stderr().lock().write_all(buf),
    }
}

fn flush_raw(stream: Stream) -> io::Result<()> {
    match stream {
        Stream::Stdout => io::stdout().flush(),
        Stream::Stderr => io::stderr().flush(),
    }
}

/// The width of the terminal stderr is, in columns.
fn stderr_width() -> Option<usize> {
    terminal_size::terminal_size_of(io::stderr()).map(|(w, _)| usize::from(w.0))
}

/// The process's stdout for a command's output, for writers that handle their own errors:
/// colour as [`colour`] decides for it.
pub fn stdout() -> Box<dyn Write + Send> {
    colour::styled(Raw::new(Stream::Stdout), colour::wanted(Stream::Stdout))
}

/// The process's stderr, likewise.
pub fn stderr() -> Box<dyn Write + Send> {
    colour::styled(Raw::new(Stream::Stderr), colour::wanted(Stream::Stderr))
}

/// The process's stdout with every byte as given: for what is not ours to restyle (a stored
/// actor log, a completion script).
pub fn stdout_raw() -> Box<dyn Write + Send> {
    Box::new(Raw::new(Stream::Stdout))
}

/// The process's stdin and stdout as async streams, for a protocol that owns both while it runs
/// (`git baton mcp`): its reads and writes return their errors, and nothing else writes to
/// stdout meanwhile.
pub fn protocol_stdio() -> (tokio::io::Stdin, tokio::io::Stdout) {
    (tokio::io::stdin(), tokio::io::stdout())
}

/// Where an actor's output is echoed as it arrives: the stream as it is, the status line kept
/// below it and told that the actor spoke.
pub fn echo(stream: Stream) -> Box<dyn Write + Send> {
    Box::new(Raw {
        stream,
        live_actor: true,
    })
}

/// Writes `args` to stderr in one write, ignoring a stream that is gone.
pub fn write_err(args: fmt::Arguments<'_>) {
    let text = args.to_string();
    let _ = stderr().write_all(text.as_bytes());
}

/// `eprintln!` that never panics: a line on stderr, or nothing when stderr is gone.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::term::write_err(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprint!` that never panics.
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::term::write_err(format_args!($($arg)*))
    };
}

pub(crate) use {err, errln};
