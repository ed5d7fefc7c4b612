//! The status line under a running stage: stage, actor, attempt, time elapsed and time since the
//! actor last printed, redrawn every second on the terminal's last line while the actor's output
//! scrolls above it.
//!
//! Shown only when stderr is a terminal (where it is drawn) and `--quiet` was not given. Every
//! write through [`super`] goes around it: the line is erased, the bytes written, and the line
//! drawn again — but only while the cursor is at the start of a line, so that an actor printing
//! half a line ("thinking…") is never split by it. The actor's logs never see it: they are
//! written from the pipes, before any echo. The line is erased when its [`StatusLine`] is dropped,
//! which every way out of an attempt does (its end, an interruption, an error, a panic); a
//! hung-up terminal or a closed stream makes the writes fail, and they are dropped like every
//! other write here.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use unicode_width::UnicodeWidthChar;

use super::{Stream, write_raw};

/// Erase the line the cursor is on and return to its start.
const ERASE: &[u8] = b"\r\x1b[K";
const TICK: Duration = Duration::from_secs(1);

/// What the line says, and where the terminal's cursor is.
struct Line {
    stage: String,
    actor: String,
    attempt: u32,
    started: Instant,
    last_output: Option<Instant>,
    /// The line is on the screen now.
    drawn: bool,
    /// The last byte written to the terminal ended a line (or nothing was written yet).
    at_line_start: bool,
}

static LINE: Mutex<Option<Line>> = Mutex::new(None);

fn line() -> MutexGuard<'static, Option<Line>> {
    // A writer that panicked mid-write left nothing that matters half-updated.
    LINE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The status line while it lives; erased when dropped.
pub struct StatusLine {
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
}

/// Shows the status line for one attempt, if stderr is a terminal and `--quiet` was not given.
pub fn show(stage: &str, actor: &str, attempt: u32) -> Option<StatusLine> {
    if super::quiet() || !Stream::Stderr.is_terminal() {
        return None;
    }
    *line() = Some(Line {
        stage: stage.to_string(),
        actor: actor.to_string(),
        attempt,
        started: Instant::now(),
        last_output: None,
        drawn: false,
        at_line_start: true,
    });
    let stop = Arc::new(AtomicBool::new(false));
    let ticker = std::thread::Builder::new()
        .name("status-line".into())
        .spawn({
            let stop = Arc::clone(&stop);
            move || {
                while !stop.load(Ordering::SeqCst) {
                    if let Some(line) = line().as_mut() {
                        redraw(line);
                    }
                    // Short sleeps: dropping the line must not wait a whole tick.
                    let next = Instant::now() + TICK;
                    while !stop.load(Ordering::SeqCst) && Instant::now() < next {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
            }
        })
        .ok();
    Some(StatusLine { stop, ticker })
}

impl Drop for StatusLine {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(ticker) = self.ticker.take() {
            let _ = ticker.join();
        }
        if let Some(line) = line().take()
            && line.drawn
        {
            let _ = write_raw(Stream::Stderr, ERASE);
        }
    }
}

/// Writes `buf` to `stream` around the status line, if one is shown; `live_actor`: the actor
/// spoke, which resets the time since its last output.
pub(super) fn around(stream: Stream, buf: &[u8], live_actor: bool) -> io::Result<()> {
    let mut guard = line();
    let Some(line) = guard.as_mut() else {
        drop(guard);
        return write_raw(stream, buf);
    };
    if live_actor {
        line.last_output = Some(Instant::now());
    }
    if buf.is_empty() {
        return Ok(());
    }
    if line.drawn {
        line.drawn = false;
        let _ = write_raw(Stream::Stderr, ERASE);
    }
    // Flushed before the line is drawn again, or the line could land inside the bytes.
    let written = write_raw(stream, buf).and_then(|()| super::flush_raw(stream));
    // Only what reaches the terminal moves its cursor.
    if stream == Stream::Stderr || stream.is_terminal() {
        line.at_line_start = buf.ends_with(b"\n");
    }
    redraw(line);
    written
}

fn redraw(line: &mut Line) {
    if !line.at_line_start {
        return;
    }
    let width = super::stderr_width().unwrap_or(80);
    let mut bytes = ERASE.to_vec();
    bytes.extend(fit(&text(line, Instant::now()), width.saturating_sub(1)).as_bytes());
    if write_raw(Stream::Stderr, &bytes).is_ok() {
        line.drawn = true;
    }
}

/// What the line says at `now`.
fn text(line: &Line, now: Instant) -> String {
    let elapsed = clock(now.saturating_duration_since(line.started));
    let quiet = match line.last_output {
        Some(at) => format!(
            "last output {} ago",
            clock(now.saturating_duration_since(at))
        ),
        None => "no output yet".to_string(),
    };
    format!(
        "{} · {} · attempt {} · {elapsed} · {quiet}",
        line.stage, line.actor, line.attempt
    )
}

/// `1h02m03s`, `2m05s`, `7s`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, s) => format!("{h}h{m:02}m{s:02}s"),
    }
}

/// `text` cut to `width` columns: a line that wraps could no longer be erased whole. Control
/// characters (from a stage or actor name) are dropped.
fn fit(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars().filter(|c| !c.is_control()) {
        let w = c.width().unwrap_or(0);
        if used + w > width {
            break;
        }
        used += w;
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_attempt_and_its_times() {
        let started = Instant::now();
        let mut line = Line {
            stage: "executor".into(),
            actor: "claude".into(),
            attempt: 2,
            started,
            last_output: None,
            drawn: false,
            at_line_start: true,
        };
        let now = started + Duration::from_secs(125);
        assert_eq!(
            text(&line, now),
            "executor · claude · attempt 2 · 2m05s · no output yet"
        );
        line.last_output = Some(started + Duration::from_secs(118));
        assert_eq!(
            text(&line, now),
            "executor · claude · attempt 2 · 2m05s · last output 7s ago"
        );
        assert_eq!(clock(Duration::from_secs(3723)), "1h02m03s");
    }

    #[test]
    fn the_line_fits_the_terminal_in_columns_not_bytes() {
        assert_eq!(fit("stage 日本語 x", 10), "stage 日本");
        assert_eq!(fit("ab\x1b[31mc", 10), "ab[31mc");
        assert_eq!(fit("abc", 0), "");
    }
}
