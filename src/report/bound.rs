//! Bounds on how much a report prints, whatever a pull request or an agent put into it.
//!
//! Each untrusted string is cut by [`super::escape::line`] and each column by
//! [`super::width::MAX_COLUMN`]; here a list of paths is cut to what fits a line, and a whole
//! report to what a CI log or a job summary should hold, with a line that says how much was
//! left out. JSON is exact and never cut.

/// The most bytes of the text report (and so of the log part of the `github` format) before its
/// verdict.
pub const MAX_TEXT_BYTES: usize = 1024 * 1024;

/// The most bytes of the Markdown report: GitHub refuses a job summary over 1 MiB per step.
pub const MAX_MARKDOWN_BYTES: usize = 512 * 1024;

/// The most characters of a list of paths on one line (a target's changed paths).
pub const MAX_LIST_CHARS: usize = 2000;

/// `items`, each rendered by `show`, joined by `, ` as long as the line stays within
/// [`MAX_LIST_CHARS`]; what does not fit is counted: `a, b, … and 29998 more`.
pub fn joined(items: &[String], show: impl Fn(&str) -> String) -> String {
    let mut out = String::new();
    let mut chars = 0;
    for (n, item) in items.iter().enumerate() {
        let shown = show(item);
        let len = shown.chars().count();
        if n > 0 && chars + 2 + len > MAX_LIST_CHARS {
            out.push_str(&format!(", … and {} more", items.len() - n));
            return out;
        }
        if n > 0 {
            out.push_str(", ");
            chars += 2;
        }
        out.push_str(&shown);
        chars += len;
    }
    out
}

/// `text` cut after the last whole line that fits in `limit` bytes; when anything is cut, `note`
/// says how much, given the lines and bytes left out, on a line of its own.
pub fn cap(mut text: String, limit: usize, note: impl Fn(usize, usize) -> String) -> String {
    if text.len() <= limit {
        return text;
    }
    // A byte search: whatever follows a newline starts a character.
    let cut = text.as_bytes()[..limit]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |at| at + 1);
    let rest = &text[cut..];
    let lines = rest.lines().count();
    let note = note(lines, rest.len());
    text.truncate(cut);
    text.push_str(&note);
    if !note.ends_with('\n') {
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_cut_where_the_line_is_full_and_the_rest_counted() {
        let few: Vec<String> = ["a", "b"].map(String::from).to_vec();
        assert_eq!(joined(&few, |s| s.to_uppercase()), "A, B");
        let many: Vec<String> = (0..10_000).map(|i| format!("src/f{i:05}.rs")).collect();
        let line = joined(&many, str::to_string);
        assert!(
            line.starts_with("src/f00000.rs, src/f00001.rs, "),
            "{line:.40}"
        );
        assert!(
            line.chars().count() <= MAX_LIST_CHARS + 30,
            "{}",
            line.len()
        );
        let shown = line.matches(".rs").count();
        assert!(
            line.ends_with(&format!(", … and {} more", 10_000 - shown)),
            "{line}"
        );
        // One item is shown however long it is (it is cut where it is escaped).
        let one = vec!["x".repeat(5000)];
        assert_eq!(joined(&one, str::to_string).len(), 5000);
    }

    #[test]
    fn a_report_is_cut_after_whole_lines_with_a_note() {
        let text = "one\ntwo\nthree\n".to_string();
        assert_eq!(cap(text.clone(), 100, |_, _| unreachable!()), text);
        let note = |lines: usize, bytes: usize| format!("[{lines} lines, {bytes} bytes left out]");
        assert_eq!(
            cap(text.clone(), 9, note),
            "one\ntwo\n[1 lines, 6 bytes left out]\n"
        );
        assert_eq!(
            cap(text.clone(), 7, note),
            "one\n[2 lines, 10 bytes left out]\n"
        );
        assert_eq!(cap(text, 2, note), "[3 lines, 14 bytes left out]\n");
    }
}
