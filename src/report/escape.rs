//! Untrusted text made safe to print: the one function every human format passes it through.
//!
//! Reasons, target names, paths from a diff, evidence text and commit trailers are written by
//! agents or by a pull request. Printed raw, a NUL or an ESC sequence rewrites the reader's
//! terminal, a carriage return or a newline forges a line of the report (or, in a CI log, a
//! workflow command of its own), and a bidirectional override makes a path read as another.
//! [`line`] keeps such text on the one line it was given and shows every character that could
//! do any of that as a visible escape:
//!
//! - the C0 controls, DEL and the C1 controls: `\0`, `\t`, `\n`, `\r`, else `\u{1b}`;
//! - bidirectional formatting (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), the
//!   invisible characters that make two strings look alike (U+200B–U+200D, U+2060–U+2064,
//!   U+FEFF), the line and paragraph separators U+2028 and U+2029, the interlinear annotation
//!   characters U+FFF9–U+FFFB and the tag characters U+E0000–U+E007F: `\u{202e}`;
//! - `##` before `[` or before letters and `[`, as in `##[error]` or `##vso[task.setvariable]`:
//!   the legacy GitHub Actions and the Azure Pipelines runners act on such a command anywhere in
//!   a line, so the second `#` becomes `\u{23}`.
//!
//! Everything else, backslashes included, is printed as it is: the escapes are for reading,
//! and JSON is the exact form. A string that needs no escape is returned borrowed.
//!
//! And it keeps the text bounded: past [`MAX_SHOWN_CHARS`] characters (more than any path a
//! file system takes) a string is cut and the rest counted, so that a 100 KB target name costs
//! a report a few kilobytes, however many times the report shows it.

use std::borrow::Cow;

/// The most characters of one untrusted string a human format shows; the rest is counted.
pub const MAX_SHOWN_CHARS: usize = 4096;

/// `text` on one line, with every character listed in the module documentation escaped, cut
/// after [`MAX_SHOWN_CHARS`] characters.
#[must_use]
pub fn line(text: &str) -> Cow<'_, str> {
    let Some((cut, _)) = text.char_indices().nth(MAX_SHOWN_CHARS) else {
        return escape(text);
    };
    let rest = text[cut..].chars().count();
    let mut out = escape(&text[..cut]).into_owned();
    out.push_str(&format!("… ({rest} more characters)"));
    Cow::Owned(out)
}

fn escape(text: &str) -> Cow<'_, str> {
    if !text
        .char_indices()
        .any(|(i, c)| needs_escape(c) || starts_runner_command(&text[i..]))
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, c) in text.char_indices() {
        match c {
            '\0' => out.push_str("\\0"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            // The second `#` of a runner command prefix.
            '#' if i > 0 && starts_runner_command(&text[i - 1..]) => out.push_str("\\u{23}"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`line`] with the line breaks and tabs kept: for multi-line messages whose layout is the
/// program's own (an error with its hints) but whose words may not be.
#[must_use]
pub fn lines(text: &str) -> String {
    text.split('\n')
        .map(|l| {
            l.split('\t')
                .map(|part| line(part).into_owned())
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn needs_escape(c: char) -> bool {
    matches!(
        u32::from(c),
        0x00..=0x1f
            | 0x7f..=0x9f
            | 0x061c
            | 0x200b..=0x200f
            | 0x2028..=0x202e
            | 0x2060..=0x2064
            | 0x2066..=0x2069
            | 0xfeff
            | 0xfff9..=0xfffb
            | 0xe0000..=0xe007f
    )
}

/// `##[` or `##` + ASCII letters + `[` at the start of `text`.
fn starts_runner_command(text: &str) -> bool {
    let Some(rest) = text.strip_prefix("##") else {
        return false;
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    rest.starts_with('[')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        for text in [
            "",
            "docs/a.md",
            "docs/日本語/新しい.md",
            r"a\n is two characters here",
            "# heading, ## sub, ##word without bracket, #[x]",
            "emoji with a variation selector ❤️",
        ] {
            assert!(
                matches!(line(text), Cow::Borrowed(t) if t == text),
                "{text}"
            );
        }
    }

    #[test]
    fn controls_bidi_and_invisibles_become_visible() {
        let hostile = "a\0b\tc\nd\re\u{1b}[2Jf\u{7f}g\u{85}h\u{9b}i\u{202e}j\u{2066}k\u{200b}l\u{feff}m\u{2028}n\u{e0041}o";
        assert_eq!(
            line(hostile),
            r"a\0b\tc\nd\re\u{1b}[2Jf\u{7f}g\u{85}h\u{9b}i\u{202e}j\u{2066}k\u{200b}l\u{feff}m\u{2028}n\u{e0041}o"
        );
        // Every escaped character, however many, leaves one line with no control in it.
        let all: String = (0u32..=0x10ffff)
            .filter_map(char::from_u32)
            .filter(|c| needs_escape(*c))
            .collect();
        let escaped = line(&all);
        assert!(!escaped.chars().any(needs_escape), "{escaped}");
    }

    #[test]
    fn runner_command_prefixes_are_broken_anywhere_in_a_line() {
        assert_eq!(
            line("ok ##[add-mask]x and ##vso[task.setvariable variable=a]b"),
            r"ok #\u{23}[add-mask]x and #\u{23}vso[task.setvariable variable=a]b"
        );
        assert_eq!(line("###[x]"), r"##\u{23}[x]");
        assert_eq!(line("##teamcity[message]"), r"#\u{23}teamcity[message]");
    }

    #[test]
    fn long_text_is_cut_and_the_rest_counted() {
        let exact = "é".repeat(MAX_SHOWN_CHARS);
        assert!(matches!(line(&exact), Cow::Borrowed(_)));
        let long = format!("{exact}\u{1b}abc");
        let shown = line(&long);
        assert_eq!(shown, format!("{exact}… (4 more characters)"));
        // Escapes before the cut are still made.
        let hostile = format!("\u{1b}{}", "a".repeat(100_000));
        let shown = line(&hostile);
        assert!(shown.starts_with("\\u{1b}aaa"), "{shown:.20}");
        assert!(shown.ends_with("… (95905 more characters)"), "{shown}");
        assert!(shown.len() < MAX_SHOWN_CHARS + 100);
    }

    #[test]
    fn lines_keep_their_breaks_and_escape_the_rest() {
        assert_eq!(
            lines("first \u{1b}[31m\n\n\tsecond\r"),
            "first \\u{1b}[31m\n\n\tsecond\\r"
        );
    }
}
