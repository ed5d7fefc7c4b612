//! The shape the architecture promises (docs/architecture.md), held by tests that read the
//! crate's own source: no file over [`MAX_FILE_LINES`] lines, unit-test files too; no function
//! over [`MAX_FN_LINES`]; and each public type name defined once, so that a name in a message, a
//! doc or a review means one thing. `Result`, `Error` and `Options` are module-scoped by
//! convention and may repeat.
//!
//! The source is read through [`code_only`], which blanks comments, strings and character
//! literals, so that a brace or a `fn` in a string or a doc comment counts for nothing.

use std::collections::BTreeMap;

use crate::testing::sources;

const MAX_FILE_LINES: usize = 700;
const MAX_FN_LINES: usize = 150;

/// Names that each module may define for itself.
const SCOPED_NAMES: [&str; 3] = ["Result", "Error", "Options"];

/// `source` with every comment, string and character literal replaced by spaces, newlines
/// kept: what is left is code, at the same lines and columns.
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        // A literal's prefix (`b`, `r`, `c`) is one only where no identifier runs into it.
        let prefix_allowed = !is_ident_char(i.checked_sub(1).map(|p| chars[p]));
        let end = if c == '/' && next == Some('/') {
            chars[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(chars.len(), |n| i + n)
        } else if c == '/' && next == Some('*') {
            block_comment_end(&chars, i)
        } else if c == '"' {
            string_end(&chars, i)
        } else if c == '\'' {
            char_literal_end(&chars, i).unwrap_or(i)
        } else if prefix_allowed && matches!(c, 'b' | 'c') && next == Some('"') {
            string_end(&chars, i + 1)
        } else if prefix_allowed && c == 'b' && next == Some('\'') {
            char_literal_end(&chars, i + 1).unwrap_or(i)
        } else if prefix_allowed && c == 'r' {
            raw_string_end(&chars, i).unwrap_or(i)
        } else if prefix_allowed && matches!(c, 'b' | 'c') && next == Some('r') {
            raw_string_end(&chars, i + 1).unwrap_or(i)
        } else {
            i
        };
        if end > i {
            out.extend(chars[i..end].iter().map(|&c| blank(c)));
            i = end;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident_char(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Past the end of the (nestable) block comment opening at `i`.
fn block_comment_end(chars: &[char], i: usize) -> usize {
    let (mut depth, mut j) = (0usize, i);
    while j + 1 < chars.len() {
        match (chars[j], chars[j + 1]) {
            ('/', '*') => {
                depth += 1;
                j += 2;
            }
            ('*', '/') => {
                depth -= 1;
                j += 2;
                if depth == 0 {
                    return j;
                }
            }
            _ => j += 1,
        }
    }
    chars.len()
}

/// Past the closing quote of the string whose opening quote is at `open`.
fn string_end(chars: &[char], open: usize) -> usize {
    let mut j = open + 1;
    while j < chars.len() {
        match chars[j] {
            '\\' => j += 2,
            '"' => return j + 1,
            _ => j += 1,
        }
    }
    chars.len()
}

/// Past the end of a raw string `r#"…"#` whose `r` is at `r`; `None` when no raw string
/// starts there (an identifier that begins with `r`).
fn raw_string_end(chars: &[char], r: usize) -> Option<usize> {
    if chars.get(r) != Some(&'r') {
        return None;
    }
    let hashes = chars[r + 1..].iter().take_while(|&&c| c == '#').count();
    let quote = r + 1 + hashes;
    if chars.get(quote) != Some(&'"') {
        return None;
    }
    let mut j = quote + 1;
    while j < chars.len() {
        if chars[j] == '"'
            && chars[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
}

/// Past the end of the character literal at `i`; `None` for a lifetime or a label.
fn char_literal_end(chars: &[char], i: usize) -> Option<usize> {
    match chars.get(i + 1)? {
        // The escaped character may itself be a quote: the closing one comes after it.
        '\\' => {
            let close = chars.get(i + 3..)?.iter().position(|&c| c == '\'')?;
            Some(i + 3 + close + 1)
        }
        _ if chars.get(i + 2) == Some(&'\'') => Some(i + 3),
        _ => None,
    }
}

/// Each function of `code` (as [`code_only`] left it) with a body: its name, its first line
/// (1-based) and how many lines it spans, signature and closing brace included.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let starts: Vec<usize> = std::iter::once(0)
        .chain(code.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let Some(at) = fn_keyword(line) else {
            continue;
        };
        let name: String = line[at + 3..]
            .chars()
            .take_while(|&c| c.is_alphanumeric() || c == '_')
            .collect();
        let Some(open) = body_open(bytes, starts[n] + at) else {
            continue;
        };
        let close = matching_brace(bytes, open);
        let last = starts.partition_point(|&s| s <= close);
        found.push((name, n + 1, last - n));
    }
    found
}

/// Where `fn ` stands in `line` when the line declares a function: after any attributes, a
/// visibility (`pub`, `pub(crate)`, `pub(in path)`, …) and qualifiers.
fn fn_keyword(line: &str) -> Option<usize> {
    let mut rest = line.trim_start();
    while let Some(attribute) = rest.strip_prefix("#[") {
        rest = attribute
            .split_once(']')
            .map_or("", |(_, after)| after)
            .trim_start();
    }
    if let Some(public) = rest.strip_prefix("pub") {
        rest = match public.trim_start().strip_prefix('(') {
            Some(scoped) => scoped.split_once(')').map_or("", |(_, after)| after),
            None => public,
        }
        .trim_start();
    }
    for qualifier in ["const ", "async ", "unsafe ", "extern "] {
        rest = rest.strip_prefix(qualifier).unwrap_or(rest).trim_start();
    }
    rest.starts_with("fn ").then(|| line.len() - rest.len())
}

/// The body's `{` of the function whose `fn` is at `from`: the first `{` outside brackets and
/// generics (where a const argument's block may stand), unless a `;` ends a declaration first.
fn body_open(code: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, &b) in code.iter().enumerate().skip(from) {
        match b {
            b'(' | b'[' | b'<' => depth += 1,
            // `->` is no closing angle bracket.
            b'>' if code[i - 1] == b'-' => {}
            b')' | b']' | b'>' => depth -= 1,
            b'{' if depth == 0 => return Some(i),
            b'{' => depth += 1,
            b'}' => depth -= 1,
            b';' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

fn matching_brace(code: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, &b) in code.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// The public types `code` defines (`pub struct`, `enum`, `trait`, `type`, `union`, with any
/// visibility), each with its line.
fn public_types(code: &str) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let rest = line.trim_start();
        let Some(rest) = rest.strip_prefix("pub") else {
            continue;
        };
        let rest = match rest.strip_prefix('(') {
            Some(scoped) => scoped.split_once(')').map_or("", |(_, after)| after),
            None => rest,
        };
        let mut words = rest.split_whitespace();
        if let (Some("struct" | "enum" | "trait" | "type" | "union"), Some(name)) =
            (words.next(), words.next())
        {
            let name: String = name
                .chars()
                .take_while(|&c| c.is_alphanumeric() || c == '_')
                .collect();
            found.push((name, n + 1));
        }
    }
    found
}

#[test]
fn no_file_is_over_the_limit() {
    let long: Vec<String> = sources()
        .iter()
        .map(|(file, text)| (file, text.lines().count()))
        .filter(|&(_, lines)| lines > MAX_FILE_LINES)
        .map(|(file, lines)| format!("{file}: {lines} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "over {MAX_FILE_LINES} lines (split by concept):\n{}",
        long.join("\n")
    );
}

#[test]
fn no_function_is_over_the_limit() {
    let mut long = Vec::new();
    for (file, text) in sources() {
        for (name, line, lines) in functions(&code_only(&text)) {
            if lines > MAX_FN_LINES {
                long.push(format!("{file}:{line}: fn {name}: {lines} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn each_public_type_name_is_defined_once() {
    let mut places: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (file, text) in sources() {
        for (name, line) in public_types(&code_only(&text)) {
            places
                .entry(name)
                .or_default()
                .push(format!("{file}:{line}"));
        }
    }
    let twice: Vec<String> = places
        .into_iter()
        .filter(|(name, at)| at.len() > 1 && !SCOPED_NAMES.contains(&name.as_str()))
        .map(|(name, at)| format!("{name}: {}", at.join(", ")))
        .collect();
    assert!(
        twice.is_empty(),
        "defined more than once:\n{}",
        twice.join("\n")
    );
}

#[test]
fn the_reader_sees_code_only() {
    let source = r##"
/// fn in_a_doc() {
pub fn real<'a>(x: &'a str, y: [u8; 2]) -> char {
    let s = "fn in_a_string() { \" }";
    let r = r#"pub struct InARawString { "#;
    /* a /* nested */ comment { */
    'label: loop { break 'label; }
    if x.is_empty() { '{' } else if y[0] == b'}' { '\'' } else { '\u{7b}' }
}
pub(crate) trait Door;
pub(super) enum Kind { A }
pub struct Unit;
fn declared(&self);
fn raw_ident(r: u8, br: u8) -> u8 { r + br }
pub(in crate::git) fn scoped() -> Array<{ N }> where T: Fn() -> u8 {
    let c = c"}"; let x = 1;// {
}
#[test] fn one_line() { cr#"{"#; }
"##;
    let code = code_only(source);
    assert_eq!(code.lines().count(), source.lines().count());
    assert!(
        !code.contains("in_a_doc") && !code.contains("in_a_string"),
        "{code}"
    );
    assert!(
        !code.contains("InARawString") && !code.contains("nested"),
        "{code}"
    );
    assert_eq!(
        functions(&code),
        [
            ("real".to_string(), 3, 7),
            ("raw_ident".to_string(), 14, 1),
            ("scoped".to_string(), 15, 3),
            ("one_line".to_string(), 18, 1)
        ]
    );
    let types: Vec<String> = public_types(&code).into_iter().map(|(n, _)| n).collect();
    assert_eq!(types, ["Door", "Kind", "Unit"]);
}
