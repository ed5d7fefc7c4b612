//! Strings written as YAML scalars, for the YAML that git-baton prints for people to paste or keep
//! (`git baton targets`, the actors `git baton init` writes): bare where YAML reads the text back
//! as the same string, else quoted.

use std::fmt::Write;

/// `text` as a block or flow scalar that YAML readers take as the string `text`.
pub fn scalar(text: &str) -> String {
    if plain(text) {
        text.to_owned()
    } else {
        quoted(text)
    }
}

/// `text` quoted: single quotes, where nothing but `'` is escaped (so JSON inside stays as
/// written), unless it holds a character [`escaped`] writes as an escape, which only double
/// quotes have.
pub fn quoted(text: &str) -> String {
    if text.chars().any(escaped) {
        double_quoted(text)
    } else {
        format!("'{}'", text.replace('\'', "''"))
    }
}

/// Whether a character is written as an escape: a control character (LF and CR would be
/// folded, a tab beside a line break trimmed; the rest are outside YAML's printable set), a line
/// or paragraph separator (a line break to YAML 1.1 readers), a BOM (which a reader may drop),
/// or U+FFFE and U+FFFF (outside the printable set).
fn escaped(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
        )
}

/// A double-quoted scalar, with YAML's own escapes (JSON's would leave DEL and the C1 controls
/// as they are, which YAML readers refuse).
fn double_quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if escaped(c) => {
                let n = u32::from(c);
                let _ = if n <= 0xff {
                    write!(out, "\\x{n:02X}")
                } else {
                    write!(out, "\\u{n:04X}")
                };
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Whether `text` reads back as itself unquoted: only letters, digits and `-_./=+` (none of
/// YAML's indicators or separators), a first character that opens a plain scalar, and neither
/// a document marker nor a word, number or date that YAML 1.2 or 1.1 resolves to something other
/// than a string.
fn plain(text: &str) -> bool {
    let safe = text
        .chars()
        .all(|c| c.is_alphanumeric() || "-_./=+".contains(c));
    let opens = match text.chars().next() {
        Some(c) => c.is_alphanumeric() || c == '_' || c == '.' || (c == '-' && text.len() > 1),
        None => false,
    };
    let marker = text.starts_with("---") || text.starts_with("...");
    safe && opens && !marker && !resolves_to_other_than_string(text)
}

/// The words of YAML 1.2's core schema and of YAML 1.1's (`yes`, `on`), and anything that could
/// be one of their numbers or dates. A number is recognized loosely (it opens with a digit or a
/// dot, after an optional sign, and holds nothing but hex digits and `_.:+-xo`), so some strings
/// are quoted that need not be: quoting is always safe, and `2024.md` (an `m`) and `.hidden`
/// stay bare.
fn resolves_to_other_than_string(text: &str) -> bool {
    const WORDS: &[&str] = &["true", "false", "null", "yes", "no", "on", "off", "y", "n"];
    let lower = text.to_ascii_lowercase();
    if WORDS.contains(&lower.as_str()) {
        return true;
    }
    let unsigned = lower.strip_prefix(['-', '+']).unwrap_or(&lower);
    if [".inf", ".nan"].contains(&unsigned) || unsigned.chars().all(|c| c == '.') {
        return true;
    }
    // YAML 1.1's float also opens with a dot alone: `.e+1`, `..5`.
    let opens_number = unsigned.starts_with(|c: char| c.is_ascii_digit() || c == '.');
    opens_number
        && unsigned
            .chars()
            .all(|c| c.is_ascii_hexdigit() || "_.:+-xo".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BARE: &[&str] = &[
        "claude",
        "-p",
        "--output-format",
        "docs/a.md",
        ".github/workflows/",
        "-x.md",
        "2024.md",
        "true.md",
        "ünï/é.md",
        "--max-turns=30",
        "1.2.3-beta",
        "0xdeadbeefs",
        ".hidden",
    ];

    const QUOTED: &[(&str, &str)] = &[
        ("-", "'-'"),
        ("", "''"),
        ("{prompt_file}", "'{prompt_file}'"),
        ("Bash(git baton check:*)", "'Bash(git baton check:*)'"),
        ("@scope/pkg.json", "'@scope/pkg.json'"),
        ("a,b.md", "'a,b.md'"),
        ("You've hit", "'You''ve hit'"),
        ("no", "'no'"),
        ("True", "'True'"),
        ("NULL", "'NULL'"),
        ("2024", "'2024'"),
        ("0", "'0'"),
        ("-1", "'-1'"),
        ("+1", "'+1'"),
        ("1.5", "'1.5'"),
        (".5", "'.5'"),
        ("1e3", "'1e3'"),
        ("6.02E+23", "'6.02E+23'"),
        ("1_000", "'1_000'"),
        ("0x1F", "'0x1F'"),
        ("0x1_F", "'0x1_F'"),
        ("0x_1f", "'0x_1f'"),
        ("0o17", "'0o17'"),
        ("0o1_7", "'0o1_7'"),
        ("0b1_0", "'0b1_0'"),
        ("2024-01-01", "'2024-01-01'"),
        ("2001-12-14", "'2001-12-14'"),
        ("-.inf", "'-.inf'"),
        (".NaN", "'.NaN'"),
        (".", "'.'"),
        ("..", "'..'"),
        (".e+1", "'.e+1'"),
        ("-..5", "'-..5'"),
        ("---", "'---'"),
        ("...", "'...'"),
        ("a\nb", "\"a\\nb\""),
        ("tab\there", "\"tab\\there\""),
        ("cr\r", "\"cr\\r\""),
        ("nul\0", "\"nul\\0\""),
        ("del\u{7f}", "\"del\\x7F\""),
        ("c1\u{9b}x", "\"c1\\x9Bx\""),
        ("nel\u{85}", "\"nel\\N\""),
        ("ls\u{2028}ps\u{2029}", "\"ls\\Lps\\P\""),
        ("\u{feff}bom", "\"\\uFEFFbom\""),
        ("non\u{fffe}\u{ffff}", "\"non\\uFFFE\\uFFFF\""),
        ("\"q\" \\ \u{1b}[0m", "\"\\\"q\\\" \\\\ \\x1B[0m\""),
    ];

    #[test]
    fn plain_only_where_yaml_reads_the_text_as_written() {
        for text in BARE {
            assert_eq!(scalar(text), *text, "{text:?}");
        }
        for (text, written) in QUOTED {
            assert_eq!(scalar(text), *written, "{text:?}");
        }
    }

    /// `text`, written as a scalar in a block sequence and in a flow one, as the YAML reader of
    /// the configuration and plans reads it back.
    fn read_back(text: &str) -> Vec<Vec<serde_json::Value>> {
        let written = scalar(text);
        [format!("- {written}\n"), format!("[{written}]\n")]
            .iter()
            .map(|doc| {
                serde_saphyr::from_str(doc).unwrap_or_else(|e| panic!("{doc:?} is not read: {e}"))
            })
            .collect()
    }

    /// The YAML reader the configuration and plans are read with is the oracle: every scalar,
    /// bare or quoted, in a block sequence and in a flow one, reads back as its string.
    #[test]
    fn every_scalar_reads_back_as_its_string() {
        let texts = BARE.iter().copied().chain(QUOTED.iter().map(|(t, _)| *t));
        for text in texts {
            for read in read_back(text) {
                assert_eq!(read, [serde_json::Value::from(text)], "{text:?}");
            }
        }
    }

    proptest::proptest! {
        /// Any string at all, path-like or not, reads back as itself.
        #[test]
        fn any_string_reads_back_as_itself(
            text in "(\\PC|[\\x00-\\x1f\\x7f-\\x9f'\"\\\\]|[\u{2028}\u{2029}\u{feff}\u{fffe}\u{ffff}]){0,24}"
        ) {
            for read in read_back(&text) {
                proptest::prop_assert_eq!(read, [serde_json::Value::from(text.as_str())]);
            }
        }

        /// Strings of digits, signs, dots and the letters of numbers and of some words (not all
        /// of them: the words are pinned by the table) read back as themselves.
        #[test]
        fn plain_looking_strings_read_back_as_themselves(
            text in "[-+._=/0-9a-fA-FxXoObBeEnNyYtT]{1,12}"
        ) {
            for read in read_back(&text) {
                proptest::prop_assert_eq!(read, [serde_json::Value::from(text.as_str())]);
            }
        }
    }
}
