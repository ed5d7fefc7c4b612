//! A plan's `checks:`: runner checks the plan adds for its own work (docs/checks.md), in the
//! shape of `.baton.yml`'s — a list of `name`, `command` (argv) or `shell`, and `timeout`.
//! Whether one redefines a check of the repository is decided against the configuration
//! (`config::checks`); here only its shape.

use std::time::Duration;

use serde_saphyr::Spanned;

use super::frontmatter::{Fenced, Node, Pos};
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
    doc: &Fenced<'_>,
    key_pos: Pos,
    node: &Spanned<Node>,
) -> Result<Vec<PlanCheck>, PlanError> {
    if let Node::Str(text) = &node.value {
        return Err(doc
            .error(
                doc.pos(node),
                format!(
                    "`checks` must be a list of checks, found string `{}`",
                    show(text)
                ),
            )
            .with_hint(format!("for example `checks: [{EXAMPLE}]`")));
    }
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

fn parse_check(doc: &Fenced<'_>, item: &Spanned<Node>) -> Result<PlanCheck, PlanError> {
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
    doc: &Fenced<'_>,
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
    doc: &Fenced<'_>,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn err(frontmatter: &str) -> String {
        let text = format!("---\n{frontmatter}---\n");
        let e = crate::plan::parse("plans/p.md", &text).unwrap_err();
        match e.hint {
            Some(ref h) => format!("{e}\nhint: {h}"),
            None => e.to_string(),
        }
    }

    #[test]
    fn a_plan_adds_checks() {
        let plan = crate::plan::parse(
            "plans/p.md",
            "---\nchecks:\n  - { name: parser, command: [cargo, test, parser], timeout: 90 }\n  - name: docs\n    shell: make docs\n    timeout: 2m\n---\n",
        )
        .unwrap();
        assert_eq!(
            plan.checks,
            [
                PlanCheck {
                    name: "parser".into(),
                    command: vec!["cargo".into(), "test".into(), "parser".into()],
                    timeout: Some(Duration::from_secs(90)),
                    line: 3,
                    column: 13,
                },
                PlanCheck {
                    name: "docs".into(),
                    command: vec!["sh".into(), "-c".into(), "make docs".into()],
                    timeout: Some(Duration::from_secs(120)),
                    line: 4,
                    column: 11,
                },
            ]
        );
    }

    #[test]
    fn malformed_plan_checks_are_located() {
        insta::assert_snapshot!(err("checks: cargo test\n"), @r"
            plans/p.md:2:9: `checks` must be a list of checks, found string `cargo test`
            hint: for example `checks: [{ name: tests, command: [cargo, test] }]`
            ");
        insta::assert_snapshot!(err("checks:\n  - cargo test\n"), @r"
            plans/p.md:3:5: a check must be a mapping, found a string `cargo test`
            hint: for example `- { name: tests, command: [cargo, test] }`
            ");
        insta::assert_snapshot!(err("checks:\n  - { command: [x] }\n"), @r"
            plans/p.md:3:5: a check has no `name`
            hint: for example `- { name: tests, command: [cargo, test] }`
            ");
        insta::assert_snapshot!(err("checks:\n  - { name: A/b, command: [x] }\n"), @r"
            plans/p.md:3:13: check name `A/b` must match [a-z0-9][a-z0-9_-]*
            hint: at most 64 characters: it names the check's log files
            ");
        insta::assert_snapshot!(err("checks:\n  - { name: t, command: [] }\n"), @r"
            plans/p.md:3:16: `command` is empty
            hint: give the program and its arguments as a list, e.g. `command: [cargo, test]`
            ");
        insta::assert_snapshot!(err("checks:\n  - { name: t, command: [x], shell: run }\n"), @r"
            plans/p.md:3:30: check `t` has both `command` and `shell`
            hint: give the argv as `command`, or a shell line as `shell`, not both
            ");
        insta::assert_snapshot!(err("checks:\n  - { name: t, command: [x], timeout: 0 }\n"), @r"
            plans/p.md:3:39: invalid `timeout`: it must be greater than zero
            hint: use seconds (`900`) or units as in `90s`, `30m`, `1h30m`, `2 hours`
            ");
        insta::assert_snapshot!(err("checks:\n  - { name: t, command: [x], when: always }\n"), @r"
            plans/p.md:3:30: unknown key `when` in a check
            hint: a check's keys are `name`, `command`, `shell` and `timeout`
            ");
        insta::assert_snapshot!(err("checks:\n  - { name: t, command: [x] }\n  - { name: t, shell: run }\n"), @r"
            plans/p.md:4:13: check `t` is defined twice, first on line 3
            hint: give each check its own name
            ");
    }
}
