//! The plan frontmatter as a type, for the JSON Schema editors validate plans with
//! (docs/schemas/plan.schema.json). The parser reads the frontmatter node by node to locate
//! every error, so this type only describes it; a test holds its fields to the keys the
//! parser knows.

use schemars::JsonSchema;

/// The YAML frontmatter of a git-baton plan: the block between the `---` lines at the top of
/// the markdown file. See docs/plan-format.md.
#[derive(JsonSchema)]
#[schemars(title = "git-baton plan frontmatter")]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct Frontmatter {
    /// The plan's id (default: the file stem): lowercase letters, digits, `.`, `_`, `-`.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9._-]*$"), length(max = 64))]
    id: Option<String>,
    /// A title for people.
    title: Option<String>,
    /// The repository paths the work must touch: files, directories (ending with `/`) and
    /// globs (`*` within a path component, `**` across them).
    targets: Option<Vec<String>>,
    /// The pipeline stages this plan runs, by name (default: all of them).
    stages: Option<Vec<String>>,
    /// Paths no attempt of the run may change unless a target names them, added to those of
    /// `.baton.yml` and the defaults (the plan file, `.baton.yml`, CI configuration). A plan
    /// can add protected paths, never remove one.
    #[schemars(length(min = 1))]
    protect: Option<Vec<String>>,
    /// Runner checks this plan adds to its gated stages, after the repository's; a plan may
    /// not redefine one of the repository's (docs/checks.md).
    checks: Option<Vec<Check>>,
}

/// A command git-baton runs in the run's worktree after the actor exits; a failing one blocks
/// the attempt.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Check {
    /// The check's name: lowercase letters, digits, `_`, `-`.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9_-]*$"), length(max = 64))]
    name: String,
    /// The program and its arguments (argv, never a shell string).
    #[schemars(length(min = 1))]
    command: Option<Vec<String>>,
    /// A shell command line, run as `sh -c`; give `command` or `shell`.
    shell: Option<String>,
    /// How long it may run before it is killed: seconds or a duration (`90s`, `10m`); default
    /// `10m`.
    timeout: Option<Timeout>,
}

/// Seconds, or a duration as text.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum Timeout {
    #[schemars(extend("minimum" = 1))]
    Seconds(u64),
    Text(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_has_the_keys_the_parser_knows() {
        let schema = serde_json::to_value(schemars::schema_for!(Frontmatter)).unwrap();
        let properties: Vec<&str> = schema["properties"]
            .as_object()
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let mut known = super::super::KNOWN_KEYS.to_vec();
        known.sort_unstable();
        let mut properties = properties;
        properties.sort_unstable();
        assert_eq!(properties, known);
        assert_eq!(
            schema["properties"]["id"]["maxLength"],
            super::super::MAX_ID_LEN
        );
    }
}
