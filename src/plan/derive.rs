//! Targets derived from a plan's body: the repository paths its markdown names.
//!
//! Plans written from a register or a ticket often declare no `targets` (the incident's own plan
//! had none), yet their text names the files the work is about. This module finds those names
//! and decides which of them are targets. It is pure: the caller says, through a closure, what
//! exists at the run's base, so every rule is tested on strings.
//!
//! The rules, in the order they apply (docs/plan-format.md, "Derived targets", says the same):
//!
//! - Where a path may be named: an inline code span (`` `docs/a.md` ``), the destination of an
//!   inline link (`[the overview](../docs/a.md)`) or of a reference definition
//!   (`[ov]: ../docs/a.md`), and a bare word of prose that looks like a path (`docs/a.md`,
//!   `Cargo.toml`).
//! - What is never read: fenced code blocks (they show commands and output, not what to change),
//!   HTML comments, image destinations (a picture shown is not a file to edit) and autolinks.
//! - What a mention is refused for: a URL (`scheme://`, `mailto:`, `www.`), an absolute or
//!   home-relative path, a path that leaves the repository through `..`, a glob (`*`, `?`, `{`;
//!   `[` too, but in a code span), anything under `.git/`, whitespace inside a code span (a
//!   command, not a path). A code span with brackets (`pages/[id].tsx`) names a target only
//!   when the base has that very path.
//! - How a mention becomes a path: a link destination is relative to the plan's own directory
//!   (as markdown renders it; `/x` is the repository root), a code span or a bare word is
//!   relative to the repository root. `./` and `..` are resolved, a `#fragment` or `?query` is
//!   dropped, and so is a `:line` or `:line:column` suffix (`src/lib.rs:42`).
//! - Which paths are targets: one that exists at the base (a file, or a directory, which
//!   becomes a `dir/` target); or one that does not exist yet but whose parent directory does,
//!   when its directory is named with it (`docs/new.md`), or, at the root, when it is written
//!   `./NAME` in a code span or linked as `/NAME` — a bare `state.json` names a file that lives
//!   elsewhere more often than one to create at the root.
//!   A mention with a directory in it that names nothing is reported as not found; a file name
//!   without one that names nothing is just a word.

use super::target::{Target, TargetKind};

/// Where in the markdown a path was named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Form {
    CodeSpan,
    Link,
    Prose,
}

impl Form {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Form::CodeSpan => "code span",
            Form::Link => "link",
            Form::Prose => "prose",
        }
    }
}

/// One path named by the body, normalized to repository-relative form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// Repository-relative, `/`-separated, without `./`; a trailing `/` when written so.
    pub path: String,
    /// 1-based line in the plan file.
    pub line: usize,
    /// 1-based column (in characters) in the plan file.
    pub column: usize,
    pub form: Form,
    /// Written relative to the root explicitly (`./CHANGELOG.md`, a link to `/CHANGELOG.md`).
    pub rooted: bool,
}

/// What the base holds at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existence {
    File,
    Dir,
    /// Nothing at the path, but its parent directory exists (the root counts).
    ParentDir,
    Nothing,
}

/// A target derived from the body, with where it was first named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Derived {
    pub target: Target,
    pub mention: Mention,
    /// Whether the base already has the path (a file to change) or not (one to create).
    pub exists: bool,
}

/// The outcome of a derivation: the targets, and the mentions that were no target and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Derivation {
    pub targets: Vec<Derived>,
    pub not_found: Vec<Mention>,
}

/// The paths a plan body names. `first_line` is the plan-file line the body starts on;
/// `plan_dir` is the plan file's repository-relative directory (`""` at the root), against which
/// link destinations resolve.
#[must_use]
pub fn mentions(body: &str, first_line: usize, plan_dir: &str) -> Vec<Mention> {
    let mut found = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut in_comment = false;
    for (index, raw_line) in body.lines().enumerate() {
        let line_no = first_line + index;
        let trimmed = raw_line.trim_start();
        if let Some((ch, len)) = fence {
            if fence_of(trimmed).is_some_and(|(c, l)| c == ch && l >= len)
                && trimmed.trim_start_matches(ch).trim().is_empty()
            {
                fence = None;
            }
            continue;
        }
        if let Some(open) = fence_of(trimmed) {
            fence = Some(open);
            continue;
        }
        let mut line = blank_comments(raw_line, &mut in_comment);
        if let Some(def) = reference_definition(&line) {
            push(&mut found, def.0, line_no, def.1, Form::Link, plan_dir);
            continue;
        }
        for (text, col) in take_code_spans(&mut line) {
            push(&mut found, &text, line_no, col, Form::CodeSpan, plan_dir);
        }
        for (text, col) in take_links(&mut line) {
            push(&mut found, &text, line_no, col, Form::Link, plan_dir);
        }
        for (text, col) in words(&line) {
            push(&mut found, text, line_no, col, Form::Prose, plan_dir);
        }
    }
    // Spans, links and prose are taken from a line in that order; report them as written.
    found.sort_by_key(|m| (m.line, m.column));
    found
}

/// Decides which mentions are targets. Each path becomes one target, located where it was
/// first named; `exists` says what the base holds at a repository-relative path.
pub fn derive(mentions: &[Mention], mut exists: impl FnMut(&str) -> Existence) -> Derivation {
    let mut out = Derivation::default();
    let mut seen = std::collections::HashSet::new();
    for mention in mentions {
        let bare = mention.path.trim_end_matches('/');
        if !seen.insert(bare.to_owned()) {
            continue;
        }
        // A file the work creates counts only when its directory is named with it: code spans
        // of bare file names (`state.json`) mostly name files that live elsewhere.
        let deliberate = bare.contains('/') || mention.rooted;
        // A name with brackets reads as a glob as a target: taken only for a path the base has,
        // which the target then matches literally (as a declared `pages/[id].tsx` does).
        let bracketed = bare.contains(['[', ']']);
        let (spec, existed) = match exists(bare) {
            Existence::File if !mention.path.ends_with('/') => (bare.to_owned(), true),
            Existence::Dir => (format!("{bare}/"), true),
            Existence::ParentDir if deliberate && !bracketed => (mention.path.clone(), false),
            // A file name that is no path here (`node.js`, `state.json` elsewhere) is just a
            // word; a path with a directory that names nothing is worth saying (a typo).
            _ if !deliberate => continue,
            _ => {
                out.not_found.push(mention.clone());
                continue;
            }
        };
        // A name that is no valid glob (`[a-0].tsx`) is matched literally by escaping its `[`s.
        let parsed =
            Target::parse(&spec, mention.line, mention.column).or_else(|e| match bracketed {
                true => Target::parse(&spec.replace('[', "[[]"), mention.line, mention.column),
                false => Err(e),
            });
        match parsed {
            Ok(target) if target.kind != TargetKind::Glob || bracketed => {
                out.targets.push(Derived {
                    target,
                    mention: mention.clone(),
                    exists: existed,
                })
            }
            _ => out.not_found.push(mention.clone()),
        }
    }
    out
}

/// The plan-file line a plan's body starts on, given the whole text and the body (a suffix).
#[must_use]
pub fn body_first_line(text: &str, body: &str) -> usize {
    let head = text.len().saturating_sub(body.len());
    text.get(..head).map_or(0, |h| h.matches('\n').count()) + 1
}

fn push(out: &mut Vec<Mention>, raw: &str, line: usize, column: usize, form: Form, dir: &str) {
    if let Some(path) = normalize(raw, form, dir) {
        let rooted = form != Form::Prose && (raw.starts_with("./") || raw.starts_with('/'));
        out.push(Mention {
            rooted: rooted && !path.contains('/'),
            path,
            line,
            column,
            form,
        });
    }
}

/// A fence opener (```` ``` ```` or `~~~`, three or more) at the start of a trimmed line.
fn fence_of(trimmed: &str) -> Option<(char, usize)> {
    let ch = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = trimmed.chars().take_while(|c| *c == ch).count();
    (len >= 3).then_some((ch, len))
}

/// The line with the parts inside `<!-- … -->` replaced by spaces (so columns stay right);
/// `in_comment` carries an open comment to the next line.
fn blank_comments(line: &str, in_comment: &mut bool) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while !rest.is_empty() {
        if *in_comment {
            match rest.find("-->") {
                Some(end) => {
                    out.extend(std::iter::repeat_n(' ', rest[..end + 3].chars().count()));
                    rest = &rest[end + 3..];
                    *in_comment = false;
                }
                None => {
                    out.extend(std::iter::repeat_n(' ', rest.chars().count()));
                    rest = "";
                }
            }
        } else {
            match rest.find("<!--") {
                Some(start) => {
                    out.push_str(&rest[..start]);
                    rest = &rest[start..];
                    *in_comment = true;
                }
                None => {
                    out.push_str(rest);
                    rest = "";
                }
            }
        }
    }
    out
}

/// `[label]: destination "title"` at the start of a line: the destination and its column.
fn reference_definition(line: &str) -> Option<(&str, usize)> {
    let indent = line.len() - line.trim_start().len();
    if indent > 3 {
        return None;
    }
    let rest = line[indent..].strip_prefix('[')?;
    let close = rest.find("]:")?;
    if close == 0 || rest[..close].contains('[') {
        return None;
    }
    let after = &rest[close + 2..];
    let dest = after.trim_start();
    let dest = dest.split_whitespace().next()?;
    let dest = dest
        .strip_prefix('<')
        .and_then(|d| d.strip_suffix('>'))
        .unwrap_or(dest);
    let offset = line.len() - after.trim_start().len();
    Some((dest, column_of(line, offset)))
}

/// Removes the inline code spans of a line (replacing them by spaces) and returns their
/// contents with the column of each content.
fn take_code_spans(line: &mut String) -> Vec<(String, usize)> {
    let mut spans = Vec::new();
    let bytes = line.as_bytes().to_vec();
    let mut columns = Columns::new(line);
    // Lengths of backtick runs that no run after some point closes: none after any later point
    // either, so an opener of that length is skipped without scanning the rest of the line
    // again (a line of many lone backticks stays linear).
    let mut unclosed = std::collections::HashSet::new();
    let mut i = 0;
    let mut blank = Vec::new();
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
        let open_end = i + run;
        if unclosed.contains(&run) {
            i = open_end;
            continue;
        }
        let mut j = open_end;
        let mut close = None;
        while j < bytes.len() {
            if bytes[j] == b'`' {
                let len = bytes[j..].iter().take_while(|b| **b == b'`').count();
                if len == run {
                    close = Some(j);
                    break;
                }
                j += len;
            } else {
                j += 1;
            }
        }
        let Some(close) = close else {
            unclosed.insert(run);
            i = open_end;
            continue;
        };
        let content = &line[open_end..close];
        let lead = content.len() - content.trim_start().len();
        spans.push((content.trim().to_owned(), columns.at(open_end + lead)));
        blank.push((i, close + run));
        i = close + run;
    }
    blank_ranges(line, &blank);
    spans
}

/// Removes the inline links and images of a line (replacing them by spaces) and returns each
/// link's destination with its column; images are removed without a mention.
fn take_links(line: &mut String) -> Vec<(String, usize)> {
    let mut links = Vec::new();
    let mut blank = Vec::new();
    let mut columns = Columns::new(line);
    let mut search = 0;
    while let Some(found) = line[search..].find("](") {
        let open = search + found + 2;
        let Some(len) = line[open..].find(')') else {
            break;
        };
        let inside = &line[open..open + len];
        // The link's text starts after the previous link ended: ranges never overlap, so that
        // blanking one cannot move another into the middle of a character.
        let Some(start) = line[search..search + found].rfind('[').map(|i| search + i) else {
            // `](` with no `[` before it since the last link is no link.
            search = open;
            continue;
        };
        let image = start > 0 && line.as_bytes()[start - 1] == b'!';
        let dest = inside.split_whitespace().next().unwrap_or("");
        let dest = dest
            .strip_prefix('<')
            .and_then(|d| d.strip_suffix('>'))
            .unwrap_or(dest);
        if !image && !dest.is_empty() {
            let lead = inside.len() - inside.trim_start().len();
            links.push((dest.to_owned(), columns.at(open + lead)));
        }
        // The destination goes; the link text stays, since prose may name a path there too.
        blank.push((open - 2, open + len + 1));
        if image {
            blank.push((start - 1, open - 2));
        }
        search = open + len + 1;
    }
    blank_ranges(line, &blank);
    links
}

/// The whitespace-separated words of a line with their columns, surrounding punctuation
/// removed.
fn words(line: &str) -> Vec<(&str, usize)> {
    let mut out = Vec::new();
    let mut columns = Columns::new(line);
    let mut offset = 0;
    for word in line.split_whitespace() {
        let at = offset + line[offset..].find(word).unwrap_or(0);
        offset = at + word.len();
        // Quotes and brackets around a word, a sentence's full stop after it and `**bold**`
        // markers are not part of a path; `_x_` is emphasis only when both ends have it.
        let start = word.trim_start_matches(|c| is_edge_punct(c) || c == '*');
        let lead = word.len() - start.len();
        let mut core = start.trim_end_matches(|c| is_edge_punct(c) || c == '*' || c == '.');
        if core.len() > 2 && core.starts_with('_') && core.ends_with('_') {
            core = &core[1..core.len() - 1];
        }
        if !core.is_empty() {
            out.push((core, columns.at(at + lead)));
        }
    }
    out
}

fn is_edge_punct(c: char) -> bool {
    matches!(
        c,
        '(' | ')' | '[' | ']' | '{' | '}' | '"' | '\'' | ',' | ';' | '!' | '?' | '<' | '>' | ':'
    ) || c == '“'
        || c == '”'
        || c == '‘'
        || c == '’'
}

/// Replaces each byte range by one space per character, so that columns stay where they were:
/// the line is rebuilt once, in one pass (replacing each range in place moved the rest of the
/// line each time, quadratic for a long line of many spans). The ranges do not overlap.
fn blank_ranges(line: &mut String, ranges: &[(usize, usize)]) {
    if ranges.is_empty() {
        return;
    }
    let mut ranges = ranges.to_vec();
    ranges.sort_unstable_by_key(|r| r.0);
    let mut out = String::with_capacity(line.len());
    let mut kept = 0;
    for (start, end) in ranges {
        let start = start.max(kept);
        if end <= start {
            continue;
        }
        out.push_str(&line[kept..start]);
        out.extend(std::iter::repeat_n(' ', line[start..end].chars().count()));
        kept = end;
    }
    out.push_str(&line[kept..]);
    *line = out;
}

/// The 1-based column (in characters) of a byte offset of `line`.
fn column_of(line: &str, byte: usize) -> usize {
    line[..byte].chars().count() + 1
}

/// The columns of offsets in one line, each counted on from the one asked before: asked in
/// increasing order, as the scans of a line ask, the whole line is counted once, so a line of
/// megabytes costs its length, not its length times its words. An earlier offset is counted
/// from the start again.
struct Columns<'a> {
    line: &'a str,
    byte: usize,
    chars: usize,
}

impl<'a> Columns<'a> {
    fn new(line: &'a str) -> Self {
        Columns {
            line,
            byte: 0,
            chars: 0,
        }
    }

    /// The 1-based column of byte `byte`, as [`column_of`] gives it.
    fn at(&mut self, byte: usize) -> usize {
        if byte < self.byte {
            (self.byte, self.chars) = (0, 0);
        }
        self.chars += self.line[self.byte..byte].chars().count();
        self.byte = byte;
        self.chars + 1
    }
}

/// A mention as a repository-relative path, or `None` when it is no path of the repository.
fn normalize(raw: &str, form: Form, plan_dir: &str) -> Option<String> {
    if raw.is_empty() || raw.chars().any(char::is_whitespace) {
        return None;
    }
    let lower = raw.to_ascii_lowercase();
    if lower.contains("://") || lower.starts_with("mailto:") || lower.starts_with("www.") {
        return None;
    }
    let mut path = raw;
    if form == Form::Link {
        path = path.split(['#', '?']).next().unwrap_or("");
        if path.is_empty() {
            return None;
        }
    }
    path = strip_line_suffix(path);
    if path.starts_with('~') || path.starts_with('-') || path.contains('\\') {
        return None;
    }
    // A code span may name a file whose name has brackets (`pages/[id].tsx`, a route of
    // Next.js or SvelteKit): it is taken, and counts only if the base has it ([`derive`]).
    // Anywhere else, and with any other glob character, it is a pattern, not a name.
    let brackets_allowed = form == Form::CodeSpan;
    if path.contains(['*', '?', '{', '}']) || (!brackets_allowed && path.contains(['[', ']'])) {
        return None;
    }
    if !path
        .chars()
        .all(|c| is_path_char(c) || (brackets_allowed && matches!(c, '[' | ']')))
    {
        return None;
    }
    if form != Form::Link && path.starts_with('/') {
        return None;
    }
    if form == Form::Prose && !looks_like_path(path) {
        return None;
    }
    if form == Form::CodeSpan && !looks_like_path(path) {
        return None;
    }
    let base = if form == Form::Link && !path.starts_with('/') {
        plan_dir
    } else {
        ""
    };
    let dir = path.ends_with('/');
    let mut parts: Vec<&str> = base.split('/').filter(|c| !c.is_empty()).collect();
    for component in path.split('/') {
        match component {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    if parts.is_empty() || parts.iter().any(|c| c.eq_ignore_ascii_case(".git")) {
        return None;
    }
    let mut out = parts.join("/");
    if dir {
        out.push('/');
    }
    Some(out)
}

/// `src/lib.rs:42` and `src/lib.rs:42:7` name a place in `src/lib.rs`.
fn strip_line_suffix(path: &str) -> &str {
    let mut end = path;
    for _ in 0..2 {
        match end.rsplit_once(':') {
            Some((head, tail)) if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) => {
                end = head;
            }
            _ => break,
        }
    }
    end
}

/// `name` without what its `[…]` groups hold.
fn outside_brackets(name: &str) -> String {
    let mut depth = 0usize;
    name.chars()
        .filter(|c| {
            match c {
                '[' => depth += 1,
                ']' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect()
}

fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '+' | '@' | '=' | ',')
}

/// A word of prose or a code span names a path when it has a directory separator between two
/// names, ends in `/`, or ends in a file extension that starts with a letter (`Cargo.toml`;
/// not `e.g`, `1.2.3` or `v2`).
fn looks_like_path(word: &str) -> bool {
    let trimmed = word.trim_start_matches("./");
    // `main..HEAD` and `a...b` are revision ranges, not names; `[...slug]` (a catch-all route)
    // is a name.
    if trimmed
        .split('/')
        .map(outside_brackets)
        .any(|name| name.contains("..") && name != "..")
    {
        return false;
    }
    if trimmed.is_empty() || trimmed.starts_with("..") && !trimmed.starts_with("../") {
        return false;
    }
    let names: Vec<&str> = trimmed.split('/').filter(|c| !c.is_empty()).collect();
    if names.len() >= 2 && !trimmed.contains("//") {
        return names.iter().all(|n| n.chars().any(char::is_alphanumeric));
    }
    if trimmed.ends_with('/') && names.len() == 1 {
        return true;
    }
    let Some(last) = names.last() else {
        return false;
    };
    match last.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (2..=10).contains(&ext.len())
                && ext.starts_with(|c: char| c.is_ascii_alphabetic())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests;
