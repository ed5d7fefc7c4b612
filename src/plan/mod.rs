//! Plans: markdown files whose YAML frontmatter declares the targets of the work.
//!
//! A plan looks like this:
//!
//! ```text
//! ---
//! id: parser-rewrite            # optional, defaults to the file stem
//! title: Rewrite the parser     # optional
//! targets:                      # paths the work must touch
//!   - src/parser/               # a directory: anything below it
//!   - docs/parser.md            # a file
//!   - tests/**/*_golden.txt     # a glob: `*` stays within a directory, `**` crosses them
//!   - "*.md"                    # quoted, because YAML reads a leading `*` as an alias
//! stages: [design, code, docs]  # optional
//! trivial: counts               # optional: whitespace-only changes are the work (see `trivial`)
//! ---
//! # Free-form markdown for the agent
//! ```
//!
//! [`parse`] is pure (no file system, no git) so that every rule can be tested on strings, and
//! strict: a plan is a promise about which paths the work touches, so anything ambiguous is an
//! error pointing at the exact line and column of the plan file rather than a silent guess.

mod checks;
pub mod derive;
mod frontmatter;
#[cfg(test)]
pub(crate) mod schema;
mod target;
#[cfg(test)]
mod tests;
mod trivial;

use std::collections::HashMap;

use serde::Serialize;
use serde_saphyr::Spanned;

use crate::suggest::edit_distance;
pub use checks::{MAX_NAME as MAX_CHECK_NAME, PlanCheck, is_check_name};
use frontmatter::{Fenced, Node, Pos};
pub use target::{Target, TargetKind, protected_pattern};
pub use trivial::Trivial;

/// A parsed plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// Frontmatter `id`, or the file stem of the plan file; matches `[a-z0-9][a-z0-9._-]*`.
    pub id: String,
    pub title: Option<String>,
    /// In declaration order.
    pub targets: Vec<Target>,
    /// Paths the plan protects besides the configuration's (`protect:`): no attempt may change
    /// them unless a target names them.
    #[serde(skip)]
    pub protect: Vec<Target>,
    #[serde(skip)]
    pub stages: Option<Vec<String>>,
    /// Line and column of each entry of `stages`, for errors found against the configuration.
    #[serde(skip)]
    pub stage_positions: Vec<(usize, usize)>,
    /// The markdown after the closing `---` line, verbatim.
    #[serde(skip)]
    pub body: String,
    /// The 1-based line of the plan file that `body` starts on.
    #[serde(skip)]
    pub body_line: usize,
    /// The frontmatter's `trivial:`, for every target that does not say its own
    /// ([`Target::trivial`]).
    #[serde(skip)]
    pub trivial: Trivial,
    /// Runner checks the plan adds to its gated stages (`checks:`, docs/checks.md).
    #[serde(skip)]
    pub checks: Vec<PlanCheck>,
}

impl Plan {
    /// Whether a change of only whitespace, line endings or file mode counts for `target`.
    #[must_use]
    pub fn trivial_counts(&self, target: &Target) -> bool {
        target.trivial.unwrap_or(self.trivial).counts()
    }
}

/// Why a plan was rejected, located in the plan file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct PlanError {
    pub file: String,
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    pub message: String,
    pub hint: Option<String>,
}

impl PlanError {
    fn new(file: &str, pos: Pos, message: impl Into<String>) -> Self {
        Self {
            file: file.to_owned(),
            line: pos.line,
            column: pos.column,
            message: message.into(),
            hint: None,
        }
    }

    fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

const KNOWN_KEYS: [&str; 7] = [
    "id", "title", "targets", "stages", "protect", "checks", "trivial",
];
const MAX_ID_LEN: usize = 64;

/// Parses a plan file. `file` is only used in error messages and for the default id.
///
/// # Errors
///
/// The first violation of the plan rules in document order, located in the plan file.
pub fn parse(file: &str, text: &str) -> Result<Plan, PlanError> {
    let doc = Fenced::split(file, text)?;
    let root = doc.load()?;
    let root_pos = doc.pos(&root);
    let entries = match root.value {
        // `---\n---` and comment-only frontmatter: a plan without targets.
        Node::Null => Vec::new(),
        Node::Map(entries) => entries,
        other => {
            return Err(doc
                .error(
                    root_pos,
                    format!("plan frontmatter must be a mapping, found {}", other.kind()),
                )
                .with_hint("write `key: value` lines, e.g. `targets: [docs/a.md]`"));
        }
    };

    let mut id = None;
    let mut title = None;
    let mut targets = None;
    let mut stages = None;
    let mut trivial = None;
    let mut checks = None;
    let mut protect = None;
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (key, value) in &entries {
        let Node::Str(name) = &key.value else {
            return Err(doc
                .error(
                    doc.pos(key),
                    format!(
                        "plan frontmatter keys must be strings, found {}",
                        key.value.kind()
                    ),
                )
                .with_hint(known_keys_hint()));
        };
        let key_pos = doc.pos(key);
        // serde-saphyr rejects duplicate keys itself (and resolves `<<` merges); checking
        // again keeps the rule independent of its options and version.
        if let Some(first) = seen.insert(name.clone(), key_pos.line) {
            return Err(doc.error(
                key_pos,
                format!(
                    "duplicate key `{}` in plan frontmatter, first set on line {first}",
                    show(name)
                ),
            ));
        }
        match name.as_str() {
            "id" => id = Some(parse_id(&doc, key_pos, value)?),
            "title" => title = Some(expect_string(&doc, "title", key_pos, value)?),
            "targets" => targets = Some(parse_targets(&doc, key_pos, value)?),
            "stages" => stages = Some(parse_stages(&doc, key_pos, value)?),
            "checks" => checks = Some(checks::parse_checks(&doc, key_pos, value)?),
            "protect" => protect = Some(frontmatter::parse_protect(&doc, key_pos, value)?),
            "trivial" => trivial = Some(trivial::parse_value(&doc, key_pos, value)?),
            _ => return Err(unknown_key(&doc, key_pos, name)),
        }
    }

    let id = match id {
        Some(id) => id,
        None => default_id(&doc, file)?,
    };
    Ok(Plan {
        id,
        title,
        targets: targets.unwrap_or_default(),
        protect: protect.unwrap_or_default(),
        stage_positions: stages
            .as_ref()
            .map(|list: &Vec<(String, Pos)>| list.iter().map(|(_, p)| (p.line, p.column)).collect())
            .unwrap_or_default(),
        stages: stages.map(|list| list.into_iter().map(|(name, _)| name).collect()),
        body: doc.body.to_owned(),
        body_line: derive::body_first_line(text, doc.body),
        trivial: trivial.unwrap_or_default(),
        checks: checks.unwrap_or_default(),
    })
}

fn unknown_key(doc: &Fenced<'_>, pos: Pos, name: &str) -> PlanError {
    let error = doc.error(
        pos,
        format!("unknown key `{}` in plan frontmatter", show(name)),
    );
    match closest_key(name) {
        Some(known) => error.with_hint(format!("did you mean `{known}`?")),
        None => error.with_hint(known_keys_hint()),
    }
}

fn known_keys_hint() -> String {
    "known keys are `id`, `title`, `targets`, `stages`, `protect`, `checks` and `trivial`"
        .to_owned()
}

/// The known key a typo most likely meant, if any is close enough to be a useful suggestion.
fn closest_key(name: &str) -> Option<&'static str> {
    let lower = name.to_lowercase();
    KNOWN_KEYS
        .iter()
        .map(|known| (edit_distance(&lower, known), *known))
        .filter(|(distance, known)| {
            // One edit turns any short key into another short word, so be stricter there.
            let allowed = if known.len() <= 3 { 1 } else { 2 };
            *distance <= allowed && *distance < name.chars().count().max(known.len())
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, known)| known)
}

/// The error for a value of the wrong YAML type. Where a string was `expected`, scalars that
/// YAML read as something else (`123`, `yes`, `1.10`) get a hint to quote them.
fn wrong_type(
    doc: &Fenced<'_>,
    node: &Spanned<Node>,
    what: &str,
    expected: &str,
    expected_string: bool,
) -> PlanError {
    let found = match doc.raw(node) {
        Some(raw) => format!("{} `{}`", node.value.kind(), show(raw)),
        None => node.value.kind().to_owned(),
    };
    let error = doc.error(
        doc.pos(node),
        format!("{what} must be {expected}, found {found}"),
    );
    match (&node.value, doc.raw(node)) {
        (Node::Bool | Node::Int | Node::Float, Some(raw)) if expected_string => {
            error.with_hint(format!("quote it to make it a string: `\"{}\"`", show(raw)))
        }
        _ => error,
    }
}

/// The string value of `key`; a missing value is reported at the key, since YAML puts the
/// null node somewhere after the colon.
fn expect_string(
    doc: &Fenced<'_>,
    key: &str,
    key_pos: Pos,
    node: &Spanned<Node>,
) -> Result<String, PlanError> {
    match &node.value {
        Node::Str(s) => Ok(s.clone()),
        Node::Null => Err(doc.error(key_pos, format!("`{key}` has no value"))),
        _ => Err(wrong_type(doc, node, &format!("`{key}`"), "a string", true)),
    }
}

/// The entries of a list-valued key; `key` and `example` only feed the messages.
fn expect_list<'n>(
    doc: &Fenced<'_>,
    key: &str,
    key_pos: Pos,
    example: &str,
    node: &'n Spanned<Node>,
) -> Result<&'n [Spanned<Node>], PlanError> {
    match &node.value {
        Node::Seq(items) => Ok(items),
        // An empty `targets:` is more likely an unfinished plan than a deliberate "nothing".
        Node::Null => Err(doc
            .error(key_pos, format!("`{key}` has no value"))
            .with_hint(format!(
                "list one entry per line (`  - {example}`), or write `{key}: []`"
            ))),
        Node::Str(s) => Err(doc
            .error(
                doc.pos(node),
                format!("`{key}` must be a list, found string `{}`", show(s)),
            )
            .with_hint(format!("write it as a list: `{key}: [{}]`", show(s)))),
        _ => Err(wrong_type(doc, node, &format!("`{key}`"), "a list", false)),
    }
}

fn parse_targets(
    doc: &Fenced<'_>,
    key_pos: Pos,
    node: &Spanned<Node>,
) -> Result<Vec<Target>, PlanError> {
    let items = expect_list(doc, "targets", key_pos, "docs/a.md", node)?;
    let mut targets: Vec<Target> = Vec::with_capacity(items.len());
    let mut by_spec: HashMap<String, (usize, String)> = HashMap::new();
    for item in items {
        // A mapping is a target with options of its own; its path node is where it is.
        let in_mapping = matches!(item.value, Node::Map(_));
        let (node, own_trivial) = match &item.value {
            Node::Map(entries) => trivial::parse_target_map(doc, item, entries)?,
            _ => (item, None),
        };
        let pos = doc.pos(node);
        let raw = match &node.value {
            Node::Str(s) => s,
            Node::Null => return Err(doc.error(pos, "target is empty")),
            _ if in_mapping => {
                return Err(wrong_type(doc, node, "`path`", "a path string", true));
            }
            _ => return Err(wrong_type(doc, node, "target", "a path string", true)),
        };
        let mut target = Target::parse(raw, pos.line, pos.column).map_err(|rejection| {
            let error = doc.error(pos, rejection.message);
            match rejection.hint {
                Some(hint) => error.with_hint(hint),
                None => error,
            }
        })?;
        if let Some((line, first_raw)) = by_spec.get(&target.spec) {
            let message = if first_raw == raw {
                format!(
                    "duplicate target `{}`, already listed on line {line}",
                    show(raw)
                )
            } else {
                format!(
                    "duplicate target `{}`: line {line} already lists it as `{}`",
                    show(raw),
                    show(first_raw)
                )
            };
            return Err(doc.error(pos, message).with_hint("list each path once"));
        }
        by_spec.insert(target.spec.clone(), (pos.line, raw.clone()));
        target.trivial = own_trivial;
        targets.push(target);
    }
    Ok(targets)
}

fn parse_stages(
    doc: &Fenced<'_>,
    key_pos: Pos,
    node: &Spanned<Node>,
) -> Result<Vec<(String, Pos)>, PlanError> {
    let items = expect_list(doc, "stages", key_pos, "design", node)?;
    let mut stages = Vec::with_capacity(items.len());
    let mut lines: HashMap<&str, usize> = HashMap::new();
    for item in items {
        let pos = doc.pos(item);
        let name = match &item.value {
            Node::Str(s) if s.is_empty() => return Err(doc.error(pos, "stage is empty")),
            Node::Str(s) => s,
            Node::Null => return Err(doc.error(pos, "stage is empty")),
            _ => return Err(wrong_type(doc, item, "stage", "a string", true)),
        };
        if !is_stage_name(name) {
            return Err(doc
                .error(pos, format!("invalid stage name `{}`", show(name)))
                .with_hint(format!(
                    "stage names are a lowercase letter followed by lowercase letters, digits, \
                     `_` or `-`, e.g. `{}`",
                    suggest_name(name, false, "stage")
                )));
        }
        if let Some(line) = lines.insert(name, pos.line) {
            return Err(doc
                .error(
                    pos,
                    format!(
                        "duplicate stage `{}`, already listed on line {line}",
                        show(name)
                    ),
                )
                .with_hint("list each stage once"));
        }
        stages.push((name.clone(), pos));
    }
    Ok(stages)
}

fn parse_id(doc: &Fenced<'_>, key_pos: Pos, node: &Spanned<Node>) -> Result<String, PlanError> {
    let id = expect_string(doc, "id", key_pos, node)?;
    if is_id(&id) {
        return Ok(id);
    }
    let pos = doc.pos(node);
    if id.is_empty() {
        return Err(doc.error(pos, "`id` is empty"));
    }
    let message = if id.len() > MAX_ID_LEN {
        format!(
            "plan id `{}` is longer than {MAX_ID_LEN} characters",
            show(&id)
        )
    } else {
        format!("invalid plan id `{}`", show(&id))
    };
    Err(doc.error(pos, message).with_hint(format!(
        "ids are 1 to {MAX_ID_LEN} characters of `a-z`, `0-9`, `.`, `_` or `-`, starting \
             with a letter or digit, e.g. `{}`",
        suggest_name(&id, true, "plan")
    )))
}

fn default_id(doc: &Fenced<'_>, file: &str) -> Result<String, PlanError> {
    let stem = std::path::Path::new(file)
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    if is_id(&stem) {
        return Ok(stem);
    }
    Err(doc
        .error(
            frontmatter::OPENING,
            format!(
                "plan has no `id` and its file name `{}` is not a valid id",
                show(&stem)
            ),
        )
        .with_hint(format!(
            "add `id: {}` to the frontmatter (ids match [a-z0-9][a-z0-9._-]*)",
            suggest_name(&stem, true, "plan")
        )))
}

fn is_id(s: &str) -> bool {
    let mut chars = s.chars();
    s.len() <= MAX_ID_LEN
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
}

fn is_stage_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-'))
}

/// A valid name close to `s`, so hints can show something to copy rather than a grammar.
fn suggest_name(s: &str, leading_digit: bool, fallback: &str) -> String {
    let mut out = String::new();
    for c in s.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_start_matches(|c: char| c == '-' || (!leading_digit && c.is_ascii_digit()));
    let mut out: String = out.chars().take(MAX_ID_LEN).collect();
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        fallback.to_owned()
    } else {
        out
    }
}

/// A user-supplied value made safe to print between backticks on one terminal line.
fn show(s: &str) -> String {
    const MAX_CHARS: usize = 80;
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == MAX_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}
