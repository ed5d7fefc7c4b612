//! The crate's own source as the tests that read it need it: with comments (and literals)
//! blanked at the same lines and columns, and its functions found by their braces.

/// `source` with every comment, string and character literal replaced by spaces, newlines
/// kept: what is left is code, at the same lines and columns.
pub(crate) fn code_only(source: &str) -> String {
    blanked(source, true)
}

/// `source` with every comment replaced by spaces, newlines kept; strings and character
/// literals stay (a `//` in a string is no comment).
pub(crate) fn without_comments(source: &str) -> String {
    blanked(source, false)
}

fn blanked(source: &str, literals: bool) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        // A literal's prefix (`b`, `r`, `c`) is one only where no identifier runs into it.
        let prefix_allowed = !is_ident_char(i.checked_sub(1).map(|p| chars[p]));
        let comment = c == '/' && matches!(next, Some('/' | '*'));
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
            if comment || literals {
                out.extend(chars[i..end].iter().map(|&c| blank(c)));
            } else {
                out.extend(&chars[i..end]);
            }
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
pub(crate) fn functions(code: &str) -> Vec<(String, usize, usize)> {
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
    rest = after_visibility(rest).unwrap_or(rest);
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

/// What follows the visibility (`pub`, `pub(crate)`, `pub(in path)`, …) that `item` starts
/// with, if it starts with one.
pub(crate) fn after_visibility(item: &str) -> Option<&str> {
    let public = item.strip_prefix("pub")?;
    let rest = match public.trim_start().strip_prefix('(') {
        Some(scoped) => scoped.split_once(')').map_or("", |(_, after)| after),
        None => public,
    };
    Some(rest.trim_start())
}
