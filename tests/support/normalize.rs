//! Snapshot normalisers: what differs from one run to the next (run ids, base commits,
//! timestamps, durations) shown by name, so that snapshots of run output are stable.

use super::Run;

/// Replaces what differs between runs: the run id, the base commit, RFC 3339 timestamps (and
/// the minute-precision form of `list`) and durations. A duration and the spaces before it
/// become `<DUR>` right-aligned in the same width, so that table columns stay aligned.
pub fn normalize(text: &str, id: &str, base: &str) -> String {
    let mut text = text.to_string();
    if !id.is_empty() {
        text = text.replace(id, "<ID>");
    }
    if !base.is_empty() {
        text = text.replace(base, "<BASE>").replace(&base[..12], "<BASE>");
    }
    let text = replace_timestamps(&text);
    text.split('\n')
        .map(replace_durations)
        .collect::<Vec<_>>()
        .join("\n")
}

fn replace_durations(line: &str) -> String {
    let mut line = line.to_string();
    // Tokens with their byte ranges, replaced from the end so earlier ranges stay valid.
    let mut tokens = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                tokens.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    for (s, e) in tokens.into_iter().rev() {
        let token = &line[s..e];
        let core = token.trim_end_matches([')', ',']);
        if !is_duration(core) {
            continue;
        }
        let end = s + core.len();
        let from = line[..s].trim_end_matches(' ').len();
        let width = end - from;
        if width >= 6 {
            line.replace_range(from..end, &format!("{:>width$}", "<DUR>"));
        } else {
            line.replace_range(s..end, "<DUR>");
        }
    }
    line
}

/// `45ms`, `2.3s`.
fn is_duration(token: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(n) = token.strip_suffix("ms") {
        return digits(n);
    }
    match token.strip_suffix('s').and_then(|n| n.split_once('.')) {
        Some((a, b)) => digits(a) && digits(b),
        None => false,
    }
}

/// `2026-01-01T00:00:00.123Z` and `2026-01-01 00:00` become `<TIME>`.
fn replace_timestamps(text: &str) -> String {
    let b = text.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let date = (0..4).all(|k| digit(i + k))
            && at(i + 4, b'-')
            && digit(i + 5)
            && digit(i + 6)
            && at(i + 7, b'-')
            && digit(i + 8)
            && digit(i + 9)
            && (at(i + 10, b'T') || at(i + 10, b' '))
            && digit(i + 11)
            && digit(i + 12)
            && at(i + 13, b':')
            && digit(i + 14)
            && digit(i + 15);
        if date {
            let mut j = i + 16;
            if at(j, b':') && digit(j + 1) && digit(j + 2) {
                j += 3;
                if at(j, b'.') {
                    j += 1;
                    while digit(j) {
                        j += 1;
                    }
                }
                if at(j, b'Z') {
                    j += 1;
                }
            }
            out.push_str("<TIME>");
            i = j;
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

pub fn shown(run: &Run, id: &str, base: &str) -> String {
    normalize(run.to_string().trim_end(), id, base)
}
