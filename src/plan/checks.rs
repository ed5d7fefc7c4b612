//! A plan's `checks:`: runner checks the plan adds for its own work (docs/checks.md), in the
//! shape of `.baton.yml`'s — a list of `name`, `command` (argv) or `shell`, and `timeout`.
//! Whether one redefines a check of the repository is decided against the configuration
//! (`config::checks`); here only its shape.

use std::time::Duration;

use serde_saphyr::Spanned;

use super::frontmatter::{Document, Node, Pos};
use super::{PlanError, expect_list, show, wrong_type};

/// The longest check name: it becomes part of a file name.
pub const MAX_NAME: usize = 64;

/// A check a plan adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanCheck {
    pub name: String,
    /// The argv; a `shell:` check is `sh -c <text>`.
    pub command: Vec<String>,
    /// `None`: the default of `config::checks`.
    pub timeout: Option<Duration>,
    /// Where its `name` is written, 1-based.
    pub line: usize,
    pub column: usize,
}

/// Whether `name` is a check name: `[a-z0-9][a-z0-9_-]*`, at most [`MAX_NAME`] characters — one
/// path component, safe in a file name.
pub fn is_check_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= MAX_NAME
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

const EXAMPLE: &str = "{ name: tests, command: [cargo, test] }";

pub(super) fn parse_checks(
    doc: &Document<'_>,
    key_pos: Pos,
    node: &Spanned<Node>,
) -> Result<Vec<PlanCheck>, PlanError> {
    let items = expect_list(doc, "checks", key_pos, EXAMPLE, node)?;
    let mut checks: Vec<PlanCheck> = Vec::with_capacity(items.len());
    for item in items {
        let check = parse_check(doc, item)?;
        if let Some(first) = checks.iter().find(|c| c.name == check.name) {
            return Err(doc
                .error(
                    Pos {
                        line: check.line,
                        column: check.column,
                    },
                    format!(
                        "check `{}` is defined twice, first on line {}",
                        check.name, first.line
                    ),
                )
                .with_hint("give each check its own name"));
        }
        checks.push(check);
    }
    Ok(checks)
}

fn parse_check(doc: &Document<'_>, item: &Spanned<Node>) -> Result<PlanCheck, PlanError> {
    let pos = doc.pos(item);
    let Node::Map(entries) = &item.value else {
        return Err(wrong_type(doc, item, "a check", "a mapping", false)
            .with_hint(format!("for example `- {EXAMPLE}`")));
    };
    let (mut name, mut command, mut shell, mut timeout) = (None, None, None, None);
    for (key, value) in entries {
        let key_pos = doc.pos(key);
        let key_name = match &key.value {
            Node::Str(k) => k.as_str(),
            _ => "",
        };
        let string = |what: &str| match &value.value {
            Node::Str(s) if !s.trim().is_empty() => Ok(s.clone()),
            Node::Str(_) | Node::Null => Err(doc.error(key_pos, format!("`{what}` is empty"))),
            _ => Err(wrong_type(
                doc,
                value,
                &format!("`{what}`"),
                "a string",
                true,
            )),
        };
        match key_name {
            "name" => name = Some((string("name")?, doc.pos(value))),
            "command" => command = Some(parse_argv(doc, key_pos, value)?),
            "shell" => shell = Some((string("shell")?, key_pos)),
            "timeout" => timeout = Some(parse_timeout(doc, key_pos, value)?),
            other => {
                return Err(doc
                    .error(key_pos, format!("unknown key `{}` in a check", show(other)))
                    .with_hint("a check's keys are `name`, `command`, `shell` and `timeout`"));
            }
        }
    }
    let Some((name, name_pos)) = name else {
        return Err(doc
            .error(pos, "a check has no `name`")
            .with_hint(format!("for example `- {EXAMPLE}`")));
    };
    if !is_check_name(&name) {
        return Err(doc
            .error(
                name_pos,
                format!(
                    "check name `{}` must match [a-z0-9][a-z0-9_-]*",
                    show(&name)
                ),
            )
            .with_hint(format!(
                "at most {MAX_NAME} characters: it names the check's log files"
            )));
    }
    let command = match (command, shell) {
        (Some(argv), None) => argv,
        (None, Some((text, _))) => vec!["sh".into(), "-c".into(), text],
        (Some(_), Some((_, shell_pos))) => {
            return Err(doc
                .error(
                    shell_pos,
                    format!("check `{name}` has both `command` and `shell`"),
                )
                .with_hint("give the argv as `command`, or a shell line as `shell`, not both"));
        }
        (None, None) => {
            return Err(doc
                .error(pos, format!("check `{name}` has no `command`"))
                .with_hint("give the argv (`command: [cargo, test]`) or a shell line (`shell: \"make check\"`)"));
        }
    };
    Ok(PlanCheck {
        name,
        command,
        timeout,
        line: name_pos.line,
        column: name_pos.column,
    })
}

fn parse_argv(
    doc: &Document<'_>,
    key_pos: Pos,
    node: &Spanned<Node>,
) -> Result<Vec<String>, PlanError> {
    let items = expect_list(doc, "command", key_pos, "cargo", node)?;
    let mut argv = Vec::with_capacity(items.len());
    for item in items {
        match &item.value {
            Node::Str(s) => argv.push(s.clone()),
            // Numbers and the like are arguments too (`[sleep, 5]`): their text as written.
            Node::Int | Node::Float | Node::Bool => match doc.raw(item) {
                Some(raw) => argv.push(raw.to_string()),
                None => return Err(wrong_type(doc, item, "an argument", "a string", true)),
            },
            _ => return Err(wrong_type(doc, item, "an argument", "a string", true)),
        }
    }
    if argv.first().is_none_or(|p| p.trim().is_empty()) {
        return Err(doc.error(key_pos, "`command` is empty").with_hint(
            "give the program and its arguments as a list, e.g. `command: [cargo, test]`",
        ));
    }
    Ok(argv)
}

fn parse_timeout(
    doc: &Document<'_>,
    key_pos: Pos,
    node: &Spanned<Node>,
) -> Result<Duration, PlanError> {
    let text = match &node.value {
        Node::Str(s) => s.as_str(),
        Node::Int => doc.raw(node).unwrap_or_default(),
        Node::Null => return Err(doc.error(key_pos, "`timeout` has no value")),
        _ => return Err(wrong_type(doc, node, "`timeout`", "a duration", false)),
    };
    crate::duration::parse(text).map_err(|reason| {
        doc.error(doc.pos(node), format!("invalid `timeout`: {reason}"))
            .with_hint(crate::duration::HINT)
    })
}
