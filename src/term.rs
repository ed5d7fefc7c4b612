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

use std::fmt;
use std::io::{self, Write};

/// The process's stdout, for writers that handle their own errors.
pub fn stdout() -> io::Stdout {
    io::stdout()
}

/// The process's stderr, for writers that handle their own errors.
pub fn stderr() -> io::Stderr {
    io::stderr()
}

/// Writes `args` to stderr in one locked write, ignoring a stream that is gone.
pub fn write_err(args: fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(args);
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

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// The print macros are denied by clippy; what clippy does not see is a raw handle written
    /// with `.unwrap()` or `?` somewhere. Only this module names the process's streams.
    #[test]
    fn only_this_module_names_the_process_streams() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let mut found = Vec::new();
        for file in files {
            if file.ends_with("term.rs") || file.ends_with("main.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or(line);
                if ["io::stdout()", "io::stderr()", "print!(", "println!("]
                    .iter()
                    .any(|raw| code.contains(raw))
                {
                    found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
        assert!(
            found.is_empty(),
            "write through crate::term instead:\n{}",
            found.join("\n")
        );
    }
}
