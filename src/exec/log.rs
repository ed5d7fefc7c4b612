//! An attempt's log files: written with a cap, read back in bounded memory.
//!
//! Writing ([`CappedLog`]): every chunk goes to the file as it arrives, so a crash of git-baton
//! loses nothing already read. Once a stream has produced more than its limit, the file is
//! rewritten to the first half of the limit, a marker line saying how many bytes were dropped,
//! and the last half — through a temporary file and a rename, so that a reader or a crash sees
//! one consistent file or the other. The rewrite happens each time another half limit has
//! arrived, which costs about two bytes copied per byte of output beyond the limit and lets the
//! file reach one and a half times the limit in between; at the end of the stream it is cut to
//! the limit exactly (plus the marker).
//!
//! Reading ([`copy_log_text`], [`write_json_with_logs`]): in chunks, decoding invalid UTF-8 the
//! way `String::from_utf8_lossy` does, so that showing a log never holds it whole in memory.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// What a stream keeps unless the configuration says otherwise (`log_limit:`).
pub const DEFAULT_LOG_LIMIT: u64 = 8 * 1024 * 1024;

/// The least output beyond the limit that triggers a rewrite, so that tiny limits do not
/// rewrite the file on every chunk.
const MIN_SLACK: u64 = 64 * 1024;
const READ_CHUNK: usize = 64 * 1024;

/// A log file that keeps the head and the tail of its stream.
pub(super) struct CappedLog {
    path: PathBuf,
    file: File,
    /// Bytes kept from the start of the stream, and from its end.
    head: u64,
    tail: u64,
    /// The file's length.
    len: u64,
    /// Where the part after the head (and the marker, once there is one) starts in the file.
    region: u64,
    /// Bytes of the stream no longer in the file.
    dropped: u64,
}

impl CappedLog {
    /// `file` is the freshly created, empty log at `path`; `limit` bytes of the stream are kept.
    pub(super) fn new(path: &Path, file: File, limit: u64) -> CappedLog {
        let head = limit / 2;
        CappedLog {
            path: path.to_owned(),
            file,
            head,
            tail: limit - head,
            len: 0,
            region: head,
            dropped: 0,
        }
    }

    /// Whether part of the stream is no longer in the file.
    pub(super) fn is_cut(&self) -> bool {
        self.dropped > 0
    }

    pub(super) fn write(&mut self, chunk: &[u8]) -> io::Result<()> {
        self.file.write_all(chunk)?;
        self.len += chunk.len() as u64;
        if self.len.saturating_sub(self.region) > self.tail + self.tail.max(MIN_SLACK) {
            self.cut()?;
        }
        Ok(())
    }

    /// The stream has ended: keep exactly its head and its tail.
    pub(super) fn finish(&mut self) -> io::Result<()> {
        if self.len.saturating_sub(self.region) > self.tail {
            self.cut()?;
        }
        Ok(())
    }

    /// Rewrites the file as head, marker, tail.
    fn cut(&mut self) -> io::Result<()> {
        self.dropped += self.len - self.region - self.tail;
        let mut old = crate::files::open_regular(&self.path)?;
        let head_ends_line = self.head == 0 || {
            let mut last = [0u8];
            old.seek(SeekFrom::Start(self.head - 1))?;
            old.read_exact(&mut last)?;
            last[0] == b'\n'
        };
        let marker = format!(
            "{}[git-baton: {} bytes of this stream dropped here; the log keeps its first {} and \
             its last {} bytes (log_limit)]\n",
            if head_ends_line { "" } else { "\n" },
            self.dropped,
            self.head,
            self.tail
        );
        let dir = self
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut new = crate::files::temporary_in(dir)?;
        old.seek(SeekFrom::Start(0))?;
        copy_exactly(&mut old, new.as_file_mut(), self.head)?;
        new.write_all(marker.as_bytes())?;
        old.seek(SeekFrom::Start(self.len - self.tail))?;
        copy_exactly(&mut old, new.as_file_mut(), self.tail)?;
        self.file = new.persist(&self.path).map_err(|e| e.error)?;
        self.region = self.head + marker.len() as u64;
        self.len = self.region + self.tail;
        Ok(())
    }
}

/// The words of the marker line that no output is expected to contain.
const MARKER_WORDS: &str = " bytes of this stream dropped here; the log keeps its first ";

/// The text of a cut log as its head and its tail, the marker line between them left out;
/// `None` when the text holds no marker.
pub(super) fn split_at_cut(text: &str) -> Option<(&str, &str)> {
    let words = text.find(MARKER_WORDS)?;
    let start = text[..words].rfind("[git-baton: ")?;
    let end = text[words..]
        .find("(log_limit)]")
        .map(|at| words + at + "(log_limit)]".len())?;
    // The marker starts a line of its own; the newline before it (the head's own, or one added
    // with the marker) is left out: it ends the head's last line either way.
    let head = text[..start].strip_suffix('\n').unwrap_or(&text[..start]);
    let tail = text[end..].strip_prefix('\n').unwrap_or(&text[end..]);
    Some((head, tail))
}

fn copy_exactly(from: &mut File, to: &mut File, n: u64) -> io::Result<()> {
    let copied = io::copy(&mut from.take(n), to)?;
    if copied != n {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the log file is shorter than what was written to it",
        ));
    }
    Ok(())
}

/// What [`copy_log_text`] showed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Copied {
    /// Bytes of the file shown (0: missing or empty).
    pub bytes: u64,
    pub ends_with_newline: bool,
}

/// Copies the log at `path` to `out` as text. A missing or unreadable file shows as empty, and
/// a read or write error ends the text where it happened, as if the file ended there: what was
/// shown is what is reported.
pub fn copy_log_text(path: &Path, out: &mut dyn Write) -> Copied {
    let mut shown = Copied::default();
    let _ = decode_lossy(path, |text, bytes| {
        out.write_all(text.as_bytes())?;
        shown.bytes += bytes as u64;
        if let Some(last) = text.chars().next_back() {
            shown.ends_with_newline = last == '\n';
        }
        Ok(())
    });
    shown
}

/// Writes `value` (a JSON object) pretty-printed, with one string member per `(key, path)` of
/// `logs` holding that log's text, each streamed from its file.
pub fn write_json_with_logs(
    mut value: serde_json::Value,
    logs: &[(&str, &Path)],
    out: &mut dyn Write,
) -> io::Result<()> {
    let Some(object) = value.as_object_mut() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a JSON object",
        ));
    };
    // A placeholder no other value can contain: a NUL and a random nonce.
    let nonce = super::contain::new_token();
    let placeholders: Vec<String> = (0..logs.len())
        .map(|i| format!("\0git-baton-log-{nonce}-{i}"))
        .collect();
    for ((key, _), placeholder) in logs.iter().zip(&placeholders) {
        object.insert((*key).to_string(), placeholder.clone().into());
    }
    let text = serde_json::to_string_pretty(&value).map_err(io::Error::other)?;
    let mut slots: Vec<(usize, usize, &Path)> = Vec::new();
    for ((_, path), placeholder) in logs.iter().zip(&placeholders) {
        let quoted = serde_json::to_string(placeholder).map_err(io::Error::other)?;
        if let Some(at) = text.find(&quoted) {
            slots.push((at, at + quoted.len(), path));
        }
    }
    slots.sort_by_key(|(at, ..)| *at);
    let mut from = 0;
    for (start, end, path) in slots {
        out.write_all(&text.as_bytes()[from..start])?;
        out.write_all(b"\"")?;
        // A read error ends the string where it happened; a write error ends everything.
        let mut write_error = None;
        let _ = decode_lossy(path, |piece, _| {
            let quoted = serde_json::to_string(piece).map_err(io::Error::other)?;
            out.write_all(&quoted.as_bytes()[1..quoted.len() - 1])
                .map_err(|err| {
                    let kind = err.kind();
                    write_error = Some(err);
                    io::Error::from(kind)
                })
        });
        if let Some(err) = write_error {
            return Err(err);
        }
        out.write_all(b"\"")?;
        from = end;
    }
    out.write_all(&text.as_bytes()[from..])?;
    out.write_all(b"\n")
}

/// Feeds the file's text to `each` in pieces, with how many bytes of the file each covers.
/// Invalid sequences become U+FFFD as in `String::from_utf8_lossy`, including a sequence cut
/// by the end of the file; a sequence cut by a chunk boundary is carried to the next chunk.
fn decode_lossy(
    path: &Path,
    mut each: impl FnMut(&str, usize) -> io::Result<()>,
) -> io::Result<()> {
    let mut file = crate::files::open_regular(path)?;
    let mut buf = vec![0u8; READ_CHUNK];
    let mut carried = 0;
    loop {
        let n = match file.read(&mut buf[carried..]) {
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        let eof = n == 0;
        let filled = carried + n;
        let mut rest = &buf[..filled];
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    each(text, rest.len())?;
                    rest = &[];
                    break;
                }
                Err(err) => {
                    let (valid, after) = rest.split_at(err.valid_up_to());
                    if !valid.is_empty() {
                        // Checked just above.
                        each(std::str::from_utf8(valid).unwrap_or_default(), valid.len())?;
                    }
                    match err.error_len() {
                        Some(bad) => {
                            each("\u{FFFD}", bad)?;
                            rest = &after[bad..];
                        }
                        None if eof => {
                            each("\u{FFFD}", after.len())?;
                            rest = &[];
                            break;
                        }
                        None => {
                            rest = after;
                            break;
                        }
                    }
                }
            }
        }
        if eof {
            return Ok(());
        }
        carried = rest.len();
        let start = filled - carried;
        buf.copy_within(start..filled, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(limit: u64) -> (tempfile::TempDir, PathBuf, CappedLog) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stdout.log");
        let file = File::create(&path).unwrap();
        let log = CappedLog::new(&path, file, limit);
        (dir, path, log)
    }

    #[test]
    fn a_stream_within_the_limit_is_kept_whole() {
        let (_dir, path, mut log) = log(1000);
        for _ in 0..10 {
            log.write(&[b'a'; 100]).unwrap();
        }
        log.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), vec![b'a'; 1000]);
    }

    #[test]
    fn a_longer_stream_keeps_head_marker_and_tail_at_every_moment() {
        let limit = 2 * MIN_SLACK;
        let (_dir, path, mut log) = log(limit);
        let stream: Vec<u8> = (0..10 * limit).map(|i| (i % 251) as u8).collect();
        for chunk in stream.chunks(7000) {
            log.write(chunk).unwrap();
            // Bounded while the stream runs, not only at its end.
            let len = std::fs::metadata(&path).unwrap().len();
            assert!(len <= limit + limit / 2 + 7000 + 200, "{len}");
        }
        log.finish().unwrap();
        let kept = std::fs::read(&path).unwrap();
        let half = (limit / 2) as usize;
        let dropped = stream.len() - 2 * half;
        let marker = format!(
            "\n[git-baton: {dropped} bytes of this stream dropped here; the log keeps its first \
             {half} and its last {half} bytes (log_limit)]\n"
        );
        let mut want = stream[..half].to_vec();
        want.extend(marker.as_bytes());
        want.extend(&stream[stream.len() - half..]);
        assert!(kept == want, "the log is head, marker, tail");
    }

    #[test]
    fn the_marker_starts_its_own_line_only_when_needed() {
        let (_dir, path, mut log) = log(4);
        log.write(b"a\nbcdefg\n").unwrap();
        log.finish().unwrap();
        let kept = std::fs::read_to_string(&path).unwrap();
        assert!(kept.starts_with("a\n[git-baton: 5 bytes"), "{kept}");
        assert!(kept.ends_with("bytes (log_limit)]\ng\n"), "{kept}");
    }

    #[test]
    fn a_cut_log_splits_into_head_and_tail() {
        let (_dir, path, mut log) = log(4);
        log.write(b"a\nb").unwrap();
        assert!(!log.is_cut());
        log.write(b"cdefg\n").unwrap();
        log.finish().unwrap();
        assert!(log.is_cut());
        let kept = std::fs::read_to_string(&path).unwrap();
        assert_eq!(split_at_cut(&kept), Some(("a", "g\n")));
        assert_eq!(split_at_cut("no marker\n"), None);
    }

    /// The pieces `decode_lossy` yields, joined, and what `copy_log_text` says it showed.
    fn decode(bytes: &[u8]) -> (String, Copied) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, bytes).unwrap();
        let mut out = Vec::new();
        let mut pieces = String::new();
        decode_lossy(&path, |text, _| {
            pieces.push_str(text);
            Ok(())
        })
        .unwrap();
        let shown = copy_log_text(&path, &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), pieces);
        (pieces, shown)
    }

    #[test]
    fn text_is_decoded_like_from_utf8_lossy_across_chunk_boundaries() {
        // Multi-byte characters and invalid bytes straddling the 64 KiB chunk boundary.
        for offset in 0..4 {
            let mut bytes = vec![b'x'; READ_CHUNK - offset];
            bytes.extend("é€😀".as_bytes());
            bytes.extend([0xff, b'a', 0xe2, 0x82, b'b', 0xf0, 0x9f]);
            let (text, shown) = decode(&bytes);
            assert_eq!(text, String::from_utf8_lossy(&bytes), "offset {offset}");
            assert_eq!(shown.bytes, bytes.len() as u64);
            assert!(!shown.ends_with_newline);
        }
        let (text, shown) = decode(b"");
        assert_eq!((text.as_str(), shown), ("", Copied::default()));
        let (_, shown) = decode(b"line\n");
        assert!(shown.ends_with_newline);
    }

    #[test]
    fn logs_are_spliced_into_json_as_strings() {
        let dir = tempfile::tempdir().unwrap();
        let out_log = dir.path().join("stdout.log");
        std::fs::write(&out_log, b"say \"hi\"\n\x01\xff").unwrap();
        let missing = dir.path().join("stderr.log");
        let value = serde_json::json!({"run_id": "r", "attempt": {"error": "\u{0}git-baton-log"}});
        let mut out = Vec::new();
        write_json_with_logs(
            value.clone(),
            &[("stdout", &out_log), ("stderr", &missing)],
            &mut out,
        )
        .unwrap();
        let mut want = value;
        want["stdout"] = "say \"hi\"\n\u{1}\u{FFFD}".into();
        want["stderr"] = "".into();
        let want = serde_json::to_string_pretty(&want).unwrap() + "\n";
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }
}
