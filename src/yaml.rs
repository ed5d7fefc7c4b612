//! Strings written as YAML scalars, for the YAML that git-baton prints for people to paste or keep
//! (`git baton targets`, the actors `git baton init` writes): bare where YAML reads the text back
//! as the same string, else quoted.

/// `text` as a block or flow scalar that any YAML reader takes as the string `text`.
pub fn scalar(text: &str) -> String {
    if plain(text) {
        text.to_owned()
    } else {
        quoted(text)
    }
}

/// `text` quoted: single quotes, where nothing but `'` is escaped (so JSON inside stays as
/// written), unless it holds a control character, which only double quotes carry.
pub fn quoted(text: &str) -> String {
    if text.chars().any(char::is_control) {
        // JSON's string syntax is YAML's double-quoted scalar.
        serde_json::to_string(text).unwrap_or_else(|_| format!("{text:?}"))
    } else {
        format!("'{}'", text.replace('\'', "''"))
    }
}

/// Whether `text` reads back as itself unquoted: only characters no YAML syntax uses, a first
/// character that opens a plain scalar, and neither a document marker nor a word or number that
/// YAML 1.2 or 1.1 would resolve to something other than a string.
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

/// The words and numbers of YAML 1.2's core schema and of YAML 1.1's (`yes`, `on`, `1_000`),
/// which other readers of a pasted file may still follow.
fn resolves_to_other_than_string(text: &str) -> bool {
    const WORDS: &[&str] = &[
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "~",
    ];
    let lower = text.to_ascii_lowercase();
    if WORDS.contains(&lower.as_str()) {
        return true;
    }
    let unsigned = lower.trim_start_matches(['-', '+']);
    if [".inf", ".nan"].contains(&unsigned) {
        return true;
    }
    let (mantissa, exponent) = match unsigned.split_once('e') {
        Some((m, e)) => (m, Some(e.trim_start_matches(['-', '+']))),
        None => (unsigned, None),
    };
    let numeric = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_digit() || c == '_' || c == '.')
    };
    let radix = ["0x", "0o", "0b"].iter().any(|p| {
        unsigned
            .strip_prefix(p)
            .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_hexdigit()))
    });
    radix
        || (mantissa.chars().any(|c| c.is_ascii_digit())
            && numeric(mantissa)
            && exponent.is_none_or(|e| !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())))
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
        ("-1", "'-1'"),
        ("+1", "'+1'"),
        ("1.5", "'1.5'"),
        (".5", "'.5'"),
        ("1e3", "'1e3'"),
        ("6.02E+23", "'6.02E+23'"),
        ("1_000", "'1_000'"),
        ("0x1F", "'0x1F'"),
        ("0o17", "'0o17'"),
        ("-.inf", "'-.inf'"),
        (".NaN", "'.NaN'"),
        ("---", "'---'"),
        ("...", "'...'"),
        ("a\nb", "\"a\\nb\""),
        ("tab\there", "\"tab\\there\""),
    ];

    #[test]
    fn plain_only_where_yaml_reads_the_text_as_written() {
        for text in BARE {
            assert_eq!(scalar(text), *text);
        }
        for (text, written) in QUOTED {
            assert_eq!(scalar(text), *written, "{text:?}");
        }
    }

    /// The YAML reader the configuration and plans are read with is the oracle: every scalar,
    /// bare or quoted, in a block sequence and in a flow one, reads back as its string.
    #[test]
    fn every_scalar_reads_back_as_its_string() {
        let texts = BARE.iter().copied().chain(QUOTED.iter().map(|(t, _)| *t));
        for text in texts {
            let block = format!("- {}\n", scalar(text));
            let flow = format!("[{}]\n", scalar(text));
            for doc in [block, flow] {
                let read: Vec<serde_json::Value> = serde_saphyr::from_str(&doc).unwrap();
                assert_eq!(read, [serde_json::Value::from(text)], "{doc:?}");
            }
        }
    }
}
