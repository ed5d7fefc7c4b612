//! The shape the architecture promises (docs/architecture.md), held by tests that read the
//! crate's own source: no file over [`MAX_FILE_LINES`] lines, unit-test files too; no function
//! over [`MAX_FN_LINES`]; and each public type name defined once, so that a name in a message, a
//! doc or a review means one thing. `Result`, `Error` and `Options` are module-scoped by
//! convention and may repeat.
//!
//! The source is read through [`code_only`], which blanks comments, strings and character
//! literals, so that a brace or a `fn` in a string or a doc comment counts for nothing.
//! The reader's own test is here too: these are the rules that depend on it most.

use std::collections::BTreeMap;

use crate::testing::{after_visibility, code_only, functions, sources};

const MAX_FILE_LINES: usize = 700;
const MAX_FN_LINES: usize = 150;

/// Names that each module may define for itself.
const SCOPED_NAMES: [&str; 3] = ["Result", "Error", "Options"];

/// The public types `code` defines (`pub struct`, `enum`, `trait`, `type`, `union`, with any
/// visibility), each with its line.
fn public_types(code: &str) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let Some(rest) = after_visibility(line.trim_start()) else {
            continue;
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
