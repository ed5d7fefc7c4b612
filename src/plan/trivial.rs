//! `trivial:`: whether a change of only whitespace, line endings or file mode counts as the work.
//!
//! By default it does not: such a target is `touched` and fails the gate (docs/coverage.md). A
//! plan whose work is exactly that (a reformat, a line-ending fix, `chmod +x`) says
//! `trivial: counts` in its frontmatter, or on one target written as a mapping:
//!
//! ```text
//! targets:
//!   - src/lib.rs                          # a plain string, as always
//!   - {path: scripts/run.sh, trivial: counts}
//!   - path: .editorconfig
//!     trivial: counts
//! ```
//!
//! A target's own value wins over the plan's, so `trivial: touched` on a target keeps the rule for
//! it inside a plan that says `counts`.

use serde::Serialize;
use serde_saphyr::Spanned;

use super::frontmatter::{Fenced, Node, Pos};
use super::{PlanError, show, wrong_type};

/// What a change of only whitespace, line endings or file mode is worth to a target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Trivial {
    /// It does not count: the target is `touched`, which fails the gate.
    #[default]
    Touched,
    /// It counts as a change: the plan's work is exactly such a change.
    Counts,
}

impl Trivial {
    #[must_use]
    pub fn counts(self) -> bool {
        self == Trivial::Counts
    }
}

const VALUES_HINT: &str = "`trivial` is `counts` (a change of only whitespace, line endings or \
                           file mode is the work) or `touched` (it is not, the default)";

pub(super) const TARGET_FORM_HINT: &str = "a target is a path string, or a mapping with `path` \
                                           and `trivial`: `{path: docs/a.md, trivial: counts}`";

/// The value of a `trivial:` key, at the plan's top level or on one target.
pub(super) fn parse_value(
    doc: &Fenced<'_>,
    key_pos: Pos,
    node: &Spanned<Node>,
) -> Result<Trivial, PlanError> {
    match &node.value {
        Node::Str(s) if s == "counts" => Ok(Trivial::Counts),
        Node::Str(s) if s == "touched" => Ok(Trivial::Touched),
        Node::Str(s) => Err(doc
            .error(
                doc.pos(node),
                format!(
                    "`trivial` must be `counts` or `touched`, found `{}`",
                    show(s)
                ),
            )
            .with_hint(VALUES_HINT)),
        Node::Null => Err(doc
            .error(key_pos, "`trivial` has no value")
            .with_hint(VALUES_HINT)),
        _ => Err(
            wrong_type(doc, node, "`trivial`", "`counts` or `touched`", false)
                .with_hint(VALUES_HINT),
        ),
    }
}

/// A target written as a mapping: its path (the string node, whose position is the target's)
/// and its own `trivial`, if it says one.
pub(super) fn parse_target_map<'n>(
    doc: &Fenced<'_>,
    item: &'n Spanned<Node>,
    entries: &'n [(Spanned<Node>, Spanned<Node>)],
) -> Result<(&'n Spanned<Node>, Option<Trivial>), PlanError> {
    let mut path = None;
    let mut trivial = None;
    for (key, value) in entries {
        let key_pos = doc.pos(key);
        match &key.value {
            Node::Str(name) if name == "path" => path = Some(value),
            Node::Str(name) if name == "trivial" => {
                trivial = Some(parse_value(doc, key_pos, value)?);
            }
            Node::Str(name) => {
                return Err(doc
                    .error(
                        key_pos,
                        format!("unknown key `{}` in a target mapping", show(name)),
                    )
                    .with_hint(TARGET_FORM_HINT));
            }
            other => {
                return Err(doc
                    .error(
                        key_pos,
                        format!(
                            "target mapping keys must be strings, found {}",
                            other.kind()
                        ),
                    )
                    .with_hint(TARGET_FORM_HINT));
            }
        }
    }
    match path {
        Some(path) => Ok((path, trivial)),
        None => Err(doc
            .error(doc.pos(item), "target mapping has no `path`")
            .with_hint(TARGET_FORM_HINT)),
    }
}
