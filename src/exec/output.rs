//! The child's stdout and stderr: one thread per pipe copies every chunk to its log file (and to
//! our own stream when echoing), scans for rate-limit patterns and keeps the stderr tail.
//!
//! The log keeps only the head and the tail of a long stream ([`CappedLog`]), but the scanner,
//! the echo and the stderr tail see every byte: a rate-limit message in the dropped middle is
//! still recognised.
//!
//! What a reader has learned is shared as it learns it rather than returned at the end, so that
//! a reader blocked on a pipe that someone outside the group still holds can be abandoned without
//! losing it.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::log::CappedLog;

const CHUNK: usize = 8192;
const TAIL_BYTES: usize = 2048;
const TAIL_LINES: usize = 20;

pub(super) struct StreamReader {
    thread: JoinHandle<()>,
    shared: Arc<Mutex<Shared>>,
    abandoned: Arc<AtomicBool>,
}

#[derive(Default)]
struct Shared {
    matched: Option<String>,
    tail: Option<VecDeque<u8>>,
    log_error: Option<io::Error>,
    cut: bool,
}

/// What a reader learned, once it is done (or abandoned).
pub(super) struct Drained {
    /// The first rate-limit pattern seen, as configured.
    pub matched: Option<String>,
    /// Empty unless the tail was kept.
    pub tail: String,
    pub log_error: Option<io::Error>,
    /// The log file no longer holds the whole stream (`log_limit`).
    pub cut: bool,
}

impl StreamReader {
    pub(super) fn spawn(
        pipe: impl Read + Send + 'static,
        log: CappedLog,
        echo: Option<Box<dyn Write + Send>>,
        scanner: Scanner,
        keep_tail: bool,
    ) -> StreamReader {
        let shared = Arc::new(Mutex::new(Shared {
            tail: keep_tail.then(VecDeque::new),
            ..Shared::default()
        }));
        let abandoned = Arc::new(AtomicBool::new(false));
        let thread = std::thread::spawn({
            let shared = Arc::clone(&shared);
            let abandoned = Arc::clone(&abandoned);
            move || copy(pipe, log, echo, scanner, &shared, &abandoned)
        });
        StreamReader {
            thread,
            shared,
            abandoned,
        }
    }

    pub(super) fn log_failed(&self) -> bool {
        lock(&self.shared).log_error.is_some()
    }

    /// Waits until every reader has reached end-of-file, or `limit` has passed.
    pub(super) fn settle(readers: &[&StreamReader], limit: Duration) {
        let deadline = Instant::now() + limit;
        while readers.iter().any(|r| !r.thread.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Joins the thread if it is done; otherwise leaves it blocked on its pipe, to exit without
    /// writing anything more as soon as the pipe yields.
    pub(super) fn finish(self) -> Drained {
        if self.thread.is_finished() {
            let _ = self.thread.join();
        } else {
            self.abandoned.store(true, Ordering::SeqCst);
        }
        let mut shared = lock(&self.shared);
        Drained {
            matched: shared.matched.take(),
            tail: shared.tail.take().map(tail_text).unwrap_or_default(),
            log_error: shared.log_error.take(),
            cut: shared.cut,
        }
    }
}

fn copy(
    mut pipe: impl Read,
    mut log: CappedLog,
    mut echo: Option<Box<dyn Write + Send>>,
    mut scanner: Scanner,
    shared: &Mutex<Shared>,
    abandoned: &AtomicBool,
) {
    let mut buf = vec![0; CHUNK];
    loop {
        let n = match pipe.read(&mut buf) {
            Ok(n) if n > 0 => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            // The end of the stream (or of our means to read it): cut the log to its limit.
            _ => {
                let mut shared = lock(shared);
                if !abandoned.load(Ordering::SeqCst)
                    && shared.log_error.is_none()
                    && let Err(err) = log.finish()
                {
                    shared.log_error = Some(err);
                }
                shared.cut = log.is_cut();
                return;
            }
        };
        if abandoned.load(Ordering::SeqCst) {
            return;
        }
        let chunk = &buf[..n];
        let mut shared = lock(shared);
        // Straight to the file, unbuffered: what has been read must survive our own death.
        if shared.log_error.is_none()
            && let Err(err) = log.write(chunk)
        {
            shared.log_error = Some(err);
        }
        shared.cut = log.is_cut();
        // A closed terminal or pipe on our side must not cost the actor its log.
        if let Some(out) = &mut echo
            && out.write_all(chunk).and_then(|()| out.flush()).is_err()
        {
            echo = None;
        }
        if shared.matched.is_none()
            && let Some(pattern) = scanner.feed(chunk)
        {
            shared.matched = Some(pattern.to_owned());
        }
        if let Some(tail) = &mut shared.tail {
            let keep = &chunk[chunk.len().saturating_sub(TAIL_BYTES)..];
            tail.extend(keep);
            let excess = tail.len().saturating_sub(TAIL_BYTES);
            tail.drain(..excess);
        }
    }
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // A reader that panicked mid-chunk left nothing half-updated that matters here.
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The last [`TAIL_LINES`] lines of the kept bytes.
fn tail_text(tail: VecDeque<u8>) -> String {
    let bytes = Vec::from(tail);
    // The byte limit may have cut a character in two: start at the next whole one.
    let start = bytes
        .iter()
        .position(|b| b & 0b1100_0000 != 0b1000_0000)
        .unwrap_or(bytes.len());
    let text = String::from_utf8_lossy(&bytes[start..]);
    let text = text.trim_end_matches(['\n', '\r']);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
}

/// Finds rate-limit patterns in a stream that arrives in arbitrary chunks.
///
/// The comparison ignores ASCII case only, which covers the English messages actors print; a
/// rolling window of the previous chunk's last bytes catches a pattern split across chunks.
pub(super) struct Scanner {
    /// As configured, and lowercased.
    patterns: Vec<(String, Vec<u8>)>,
    window: Vec<u8>,
    /// Bytes carried over between chunks: one less than the longest pattern.
    carry: usize,
}

impl Scanner {
    pub(super) fn new(patterns: &[String]) -> Scanner {
        let patterns: Vec<(String, Vec<u8>)> = patterns
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| (p.clone(), p.as_bytes().to_ascii_lowercase()))
            .collect();
        let carry = patterns.iter().map(|(_, p)| p.len() - 1).max().unwrap_or(0);
        Scanner {
            patterns,
            window: Vec::new(),
            carry,
        }
    }

    /// The first pattern (in configuration order) found in the stream so far, with `chunk` the
    /// latest part of it.
    pub(super) fn feed(&mut self, chunk: &[u8]) -> Option<&str> {
        if self.patterns.is_empty() {
            return None;
        }
        self.window.extend(chunk.iter().map(u8::to_ascii_lowercase));
        let found = self
            .patterns
            .iter()
            .position(|(_, p)| self.window.windows(p.len()).any(|w| w == p.as_slice()));
        let excess = self.window.len().saturating_sub(self.carry);
        self.window.drain(..excess);
        found.map(|i| self.patterns[i].0.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(patterns: &[&str], chunks: &[&str]) -> Option<String> {
        let patterns: Vec<String> = patterns.iter().map(|p| p.to_string()).collect();
        let mut scanner = Scanner::new(&patterns);
        chunks
            .iter()
            .find_map(|chunk| scanner.feed(chunk.as_bytes()).map(str::to_owned))
    }

    #[test]
    fn patterns_match_across_chunks_ignoring_case() {
        let got = scan(&["Rate limit"], &["error: RATE", " LIM", "IT reached"]);
        assert_eq!(got.as_deref(), Some("Rate limit"));
        let got = scan(&["429"], &["status 4", "2", "9"]);
        assert_eq!(got.as_deref(), Some("429"));
    }

    #[test]
    fn near_misses_and_empty_patterns_do_not_match() {
        assert_eq!(scan(&["rate limit", ""], &["rate", "x limit"]), None);
        assert_eq!(scan(&[], &["anything"]), None);
    }

    #[test]
    fn the_window_forgets_what_no_pattern_can_span() {
        let patterns = vec!["abc".to_string()];
        let mut scanner = Scanner::new(&patterns);
        for chunk in ["xxxxxxxxxxxxxxxxa", "yyyyb", "c"] {
            assert_eq!(scanner.feed(chunk.as_bytes()), None);
        }
        assert_eq!(scanner.window.len(), 2);
    }

    #[test]
    fn tail_keeps_the_last_lines_and_whole_characters() {
        let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let tail = tail_text(text.bytes().collect());
        assert_eq!(tail.lines().count(), TAIL_LINES);
        assert!(tail.starts_with("line 11\n") && tail.ends_with("line 30"));

        // "é" is two bytes; a cut after its first byte must not show a replacement character.
        let cut: VecDeque<u8> = "é ok".as_bytes()[1..].iter().copied().collect();
        assert_eq!(tail_text(cut), " ok");
    }
}
