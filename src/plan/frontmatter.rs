//! Splitting a plan into frontmatter and body, and loading the frontmatter as a YAML tree
//! whose every node knows where it came from.
//!
//! The frontmatter is loaded into a generic tree ([`Node`]) rather than straight into a typed
//! struct so that wrong types, unknown keys and bad values are reported by `plan` with its own
//! wording, while serde-saphyr's [`Spanned`] supplies the line and column of every key and
//! entry. serde-saphyr itself only reports what only a YAML parser can: syntax errors,
//! duplicate keys, unknown aliases and resource limits.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{Error as YamlError, MessageFormatter, Spanned, UserMessageFormatter};

use super::{PlanError, show};

/// A 1-based position in the plan file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Pos {
    pub line: usize,
    pub column: usize,
}

/// Where facts about the frontmatter as a whole are reported: its opening fence.
pub(super) const OPENING: Pos = Pos { line: 1, column: 1 };

/// The frontmatter's YAML starts on the line after the opening fence.
const YAML_LINE_OFFSET: usize = 1;

/// The schema needs three levels (mapping, list, string); the limit keeps recursion in
/// [`Node`]'s deserializer shallow whatever the input.
const MAX_DEPTH: usize = 16;

const MINIMAL_PLAN: &str =
    "a plan starts with a frontmatter block, e.g.\n---\ntargets:\n  - docs/a.md\n---";

/// A plan file cut at its frontmatter fences.
pub(super) struct Fenced<'a> {
    file: &'a str,
    /// The text between the fence lines, including its line breaks.
    yaml: &'a str,
    closing_line: usize,
    pub body: &'a str,
}

impl<'a> Fenced<'a> {
    pub fn split(file: &'a str, text: &'a str) -> Result<Self, PlanError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut lines = text.split_inclusive('\n');
        let Some(first) = lines.next() else {
            return Err(PlanError::new(
                file,
                OPENING,
                "plan is empty; it must start with a `---` line",
            )
            .with_hint(MINIMAL_PLAN));
        };
        if !is_fence(first) {
            return Err(PlanError::new(
                file,
                OPENING,
                format!(
                    "plan must start with a `---` frontmatter line, found `{}`",
                    show(strip_line_break(first))
                ),
            )
            .with_hint(MINIMAL_PLAN));
        }
        let yaml_start = first.len();
        let mut offset = yaml_start;
        for (index, line) in lines.enumerate() {
            if is_fence(line) {
                return Ok(Self {
                    file,
                    yaml: &text[yaml_start..offset],
                    closing_line: index + 2,
                    body: &text[offset + line.len()..],
                });
            }
            offset += line.len();
        }
        Err(
            PlanError::new(file, OPENING, "frontmatter opened by `---` is never closed")
                .with_hint("end the frontmatter with a line containing only `---`"),
        )
    }

    pub fn load(&self) -> Result<Spanned<Node>, PlanError> {
        let options = serde_saphyr::options! {
            budget: serde_saphyr::budget! { max_depth: MAX_DEPTH },
        };
        serde_saphyr::from_str_with_options(self.yaml, options).map_err(|e| self.yaml_error(&e))
    }

    pub fn error(&self, pos: Pos, message: impl Into<String>) -> PlanError {
        PlanError::new(self.file, pos, message)
    }

    /// Where `node` is used: for an alias, the alias rather than its anchor.
    pub fn pos<T>(&self, node: &Spanned<T>) -> Pos {
        self.pos_of(node.referenced)
    }

    /// The source text of a scalar, so messages can quote `1.10` rather than `1.1`.
    pub fn raw(&self, node: &Spanned<Node>) -> Option<&'a str> {
        if matches!(node.value, Node::Seq(_) | Node::Map(_)) {
            return None;
        }
        let span = node.defined.span();
        let start = usize::try_from(span.byte_offset()?).ok()?;
        let len = usize::try_from(span.byte_len()?).ok()?;
        let raw = self.yaml.get(start..start.checked_add(len)?)?;
        (!raw.is_empty()).then_some(raw)
    }

    fn pos_of(&self, location: serde_saphyr::Location) -> Pos {
        let (Ok(line), Ok(column)) = (
            usize::try_from(location.line()),
            usize::try_from(location.column()),
        ) else {
            return OPENING;
        };
        if line == 0 {
            return OPENING;
        }
        // End-of-input errors are reported past the last YAML line; the closing fence is
        // the nearest line the user can act on.
        Pos {
            line: line.saturating_add(YAML_LINE_OFFSET).min(self.closing_line),
            column: column.max(1),
        }
    }

    fn yaml_error(&self, error: &YamlError) -> PlanError {
        let pos = error.location().map_or(OPENING, |l| self.pos_of(l));
        let mut inner = error;
        while let YamlError::AliasError { error, .. } | YamlError::WithSnippet { error, .. } = inner
        {
            inner = error;
        }
        let message = match inner {
            YamlError::DuplicateMappingKey { key: Some(key), .. } => {
                format!("duplicate key `{}` in plan frontmatter", show(key))
            }
            YamlError::DuplicateMappingKey { key: None, .. } => {
                "duplicate key in plan frontmatter".to_owned()
            }
            _ => format!(
                "invalid yaml in plan frontmatter: {}",
                show(&lowercase_first(
                    &UserMessageFormatter.format_message(inner)
                ))
            ),
        };
        let error = PlanError::new(self.file, pos, message);
        if matches!(inner, YamlError::DuplicateMappingKey { .. }) {
            return error;
        }
        match quoting_hint(self.line(pos.line)) {
            Some(hint) => error.with_hint(hint),
            None => error,
        }
    }

    /// A line of the frontmatter by its plan file line number.
    fn line(&self, file_line: usize) -> Option<&'a str> {
        let index = file_line.checked_sub(YAML_LINE_OFFSET + 1)?;
        self.yaml.lines().nth(index)
    }
}

fn strip_line_break(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

fn is_fence(line: &str) -> bool {
    strip_line_break(line).trim_end_matches([' ', '\t']) == "---"
}

fn lowercase_first(s: &str) -> String {
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        // Leave acronyms such as `YAML` alone.
        (Some(first), second)
            if first.is_uppercase() && !second.is_some_and(char::is_uppercase) =>
        {
            first.to_lowercase().chain(s.chars().skip(1)).collect()
        }
        _ => s.to_owned(),
    }
}

/// Globs are the usual cause of YAML syntax errors in plans: a value starting with `*` is an
/// alias, one starting with `[` or `{` a flow collection. Suggest quoting when the offending
/// line's value starts with such an indicator.
fn quoting_hint(line: Option<&str>) -> Option<String> {
    let line = line?.trim();
    // After a key, `[` and `{` more likely open a list or mapping that went wrong.
    let (prefix, value, indicators) = if let Some(item) = line.strip_prefix("- ") {
        ("- ", item.trim_start(), "*&![{@`%")
    } else {
        let (key, value) = line.split_once(": ")?;
        (&line[..key.len() + 2], value.trim_start(), "*&!@`%")
    };
    let value = match value.find(" #") {
        Some(comment) => value[..comment].trim_end(),
        None => value,
    };
    let first = value.chars().next()?;
    if !indicators.contains(first) {
        return None;
    }
    let quoted = value.replace('\\', "\\\\").replace('"', "\\\"");
    Some(format!(
        "a leading `{first}` means something else in YAML; quote the value: `{}\"{}\"`",
        show(prefix),
        show(&quoted)
    ))
}

/// A YAML node of any shape. Scalars other than strings keep no value: the plan schema has
/// no use for them beyond saying what was found instead of a string.
#[derive(Debug)]
pub(super) enum Node {
    Null,
    Bool,
    Int,
    Float,
    Bytes,
    Str(String),
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(Spanned<Node>, Spanned<Node>)>),
}

impl Node {
    /// What the node is, for "found ..." messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Node::Null => "nothing",
            Node::Bool => "a boolean",
            Node::Int => "an integer",
            Node::Float => "a number",
            Node::Bytes => "binary data",
            Node::Str(_) => "a string",
            Node::Seq(_) => "a list",
            Node::Map(_) => "a mapping",
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

/// Visits of the scalars whose kind is all a plan's reader needs: each gives its kind of node, no
/// value (an error quotes the value as written, [`Fenced::raw`]).
macro_rules! scalar_kinds {
    ($($visit:ident($value:ty) => $kind:ident,)*) => {
        $(fn $visit<E>(self, _: $value) -> Result<Node, E> {
            Ok(Node::$kind)
        })*
    };
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML node")
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        Node::deserialize(deserializer)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        Node::deserialize(deserializer)
    }

    scalar_kinds! {
        visit_bool(bool) => Bool,
        visit_i64(i64) => Int,
        visit_i128(i128) => Int,
        visit_u64(u64) => Int,
        visit_u128(u128) => Int,
        visit_f64(f64) => Float,
    }

    fn visit_str<E>(self, s: &str) -> Result<Node, E> {
        Ok(Node::Str(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Node, E> {
        Ok(Node::Str(s))
    }

    fn visit_bytes<E>(self, _: &[u8]) -> Result<Node, E> {
        Ok(Node::Bytes)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Node::Map(entries))
    }
}

/// The plan's `protect:` list: path patterns, read as targets are, that no attempt may change
/// unless a target names them. A plan can only add to the protected paths, so an empty list or
/// an entry that would unprotect one (`!path`) is refused rather than read as "nothing".
pub(super) fn parse_protect(
    doc: &Fenced<'_>,
    key_pos: Pos,
    node: &Spanned<Node>,
) -> Result<Vec<super::Target>, PlanError> {
    if matches!(node.value, Node::Null) {
        return Err(doc
            .error(key_pos, "`protect` has no value")
            .with_hint("list one path per line (`  - deploy/`), or remove the key"));
    }
    let items = super::expect_list(doc, "protect", key_pos, "deploy/", node)?;
    if items.is_empty() {
        return Err(doc
            .error(
                key_pos,
                "`protect: []` cannot empty the protected paths: a plan can only add to them",
            )
            .with_hint("list paths to protect besides the defaults, or remove the key"));
    }
    let mut out: Vec<super::Target> = Vec::with_capacity(items.len());
    for item in items {
        let pos = doc.pos(item);
        let raw = match &item.value {
            Node::Str(s) => s,
            Node::Null => return Err(doc.error(pos, "protected path is empty")),
            _ => {
                return Err(super::wrong_type(
                    doc,
                    item,
                    "protected path",
                    "a path string",
                    true,
                ));
            }
        };
        let target = super::protected_pattern(raw).map_err(|(message, hint)| {
            let error = doc.error(pos, message);
            match hint {
                Some(hint) => error.with_hint(hint),
                None => error,
            }
        })?;
        if !out.iter().any(|t| t.spec == target.spec) {
            out.push(target);
        }
    }
    Ok(out)
}
