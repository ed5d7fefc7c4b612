//! Colour: reports paint the words a reader must not miss (uncovered, blocked, rate-limited),
//! and the stream they are written to keeps or strips the paint.
//!
//! Painting is always ANSI, through anstyle; whether it reaches the terminal is decided per
//! stream by anstream, as `--color` asks: `always`, `never`, or `auto` (the default), which
//! colours a terminal unless `NO_COLOR` is set, and anything when `CLICOLOR_FORCE` is (`NO_COLOR`
//! wins when both are) — the conventions of no-color.org and bixense.com/clicolors, as anstream
//! reads them. JSON is never
//! painted: nothing that serializes calls [`paint`]. The library leaves painting off until the
//! command line turns it on, so that what it renders for tests and files stays plain.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use anstream::ColorChoice;
use anstyle::{AnsiColor, Style};

use super::Stream;

/// `--color`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    // A terminal, unless NO_COLOR is set; anything, when CLICOLOR_FORCE is.
    #[default]
    Auto,
    Always,
    Never,
}

static PAINTING: AtomicBool = AtomicBool::new(false);

pub(super) fn configure(when: When) {
    let choice = match when {
        When::Auto => ColorChoice::Auto,
        When::Always => ColorChoice::Always,
        When::Never => ColorChoice::Never,
    };
    choice.write_global();
    PAINTING.store(true, Ordering::Relaxed);
}

/// What a painted word means to the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    /// Work missing or refused: uncovered targets, a blocked stage, a failure.
    Bad,
    /// Wait and try again: rate limits, interruptions, stale runs.
    Warn,
    /// Done and proven: covered targets, succeeded stages.
    Good,
    /// Secondary text: headings of tables.
    Dim,
}

impl Paint {
    fn style(self) -> Style {
        match self {
            Paint::Bad => Style::new().fg_color(Some(AnsiColor::Red.into())).bold(),
            Paint::Warn => Style::new().fg_color(Some(AnsiColor::Yellow.into())),
            Paint::Good => Style::new().fg_color(Some(AnsiColor::Green.into())),
            Paint::Dim => Style::new().dimmed(),
        }
    }

    /// The paint a status or outcome word gets, if any: `blocked`, `rate_limited`, ….
    pub fn for_word(word: &str) -> Option<Paint> {
        let word = word.trim();
        if word.ends_with("(stale)") {
            return Some(Paint::Warn);
        }
        match word.replace(['_', '-', ' '], "").as_str() {
            "blocked" | "uncovered" | "failed" | "crashed" | "notcovered" | "missing"
            | "touched" => Some(Paint::Bad),
            "ratelimited" | "interrupted" | "stale" | "paused" | "timeout" => Some(Paint::Warn),
            "succeeded" | "changed" | "unchanged" | "covered" | "passed" | "finished" => {
                Some(Paint::Good)
            }
            _ => None,
        }
    }
}

/// `text` in `paint`, if painting is on. Pad before painting: the escapes have no width.
pub fn paint(paint: Paint, text: &str) -> String {
    if !PAINTING.load(Ordering::Relaxed) || text.is_empty() {
        return text.to_string();
    }
    let style = paint.style();
    format!("{style}{text}{style:#}")
}

/// `word` painted as [`Paint::for_word`] says, or as it is.
pub fn word(word: &str) -> String {
    match Paint::for_word(word) {
        Some(p) => paint(p, word),
        None => word.to_string(),
    }
}

/// Whether paint written to `stream` reaches it: anstream's answer for the global choice.
pub(super) fn wanted(stream: Stream) -> bool {
    super::choice_for(stream) != ColorChoice::Never
}

/// `out` as is when paint is wanted, else with every escape sequence stripped.
pub(super) fn styled<W: Write + Send + 'static>(out: W, colour: bool) -> Box<dyn Write + Send> {
    if colour {
        Box::new(out)
    } else {
        Box::new(Strip {
            out,
            state: anstream::adapter::StripBytes::new(),
        })
    }
}

/// A writer that drops escape sequences, also one split across writes.
struct Strip<W> {
    out: W,
    state: anstream::adapter::StripBytes,
}

impl<W: Write> Write for Strip<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // One write of the whole printable text: the status line goes around each write.
        let text: Vec<u8> = self.state.strip_next(buf).flatten().copied().collect();
        if !text.is_empty() {
            self.out.write_all(&text)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_that_must_stand_out_are_painted() {
        assert_eq!(Paint::for_word("blocked"), Some(Paint::Bad));
        assert_eq!(Paint::for_word("uncovered"), Some(Paint::Bad));
        assert_eq!(Paint::for_word("rate_limited"), Some(Paint::Warn));
        assert_eq!(Paint::for_word("rate-limited "), Some(Paint::Warn));
        assert_eq!(Paint::for_word("running (stale)"), Some(Paint::Warn));
        assert_eq!(Paint::for_word("running"), None);
        assert_eq!(Paint::for_word("succeeded"), Some(Paint::Good));
        assert_eq!(Paint::for_word("pending"), None);
    }
}
