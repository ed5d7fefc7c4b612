//! Prompt templates: the `{{name}}` placeholders a configured prompt may use, filling them, and
//! finding a misspelt one (pure).
//!
//! Its own module because both sides need it: the configuration checks a template when it is
//! read, so a typo fails before any agent runs, and the pipeline fills it for each attempt.

/// The names a prompt template may use as `{{name}}`; see docs/config.md.
pub const PLACEHOLDERS: [&str; 9] = [
    "title", "resume", "plan", "targets", "coverage", "evidence", "run_id", "stage", "attempt",
];

/// Replaces every `{{name}}` by its value; anything else is kept as written.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() * 2);
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}").and_then(|end| {
            let name = after[..end].trim();
            values
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (end, *v))
        }) {
            Some((end, value)) => {
                out.push_str(value);
                rest = &after[end + 2..];
            }
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The first `{{name}}` in `template` that is not a placeholder: its 1-based line, column and
/// name. Checked when the configuration is read, so a typo fails before any agent runs.
pub fn unknown_placeholder(template: &str) -> Option<(usize, usize, String)> {
    for (i, line) in template.lines().enumerate() {
        let mut offset = 0;
        while let Some(start) = line[offset..].find("{{") {
            let at = offset + start;
            let Some(end) = line[at + 2..].find("}}") else {
                break;
            };
            let name = line[at + 2..at + 2 + end].trim();
            if !PLACEHOLDERS.contains(&name) {
                return Some((i + 1, line[..at].chars().count() + 1, name.to_string()));
            }
            offset = at + 2 + end + 2;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_fill_known_placeholders_and_keep_other_braces() {
        let values = [("plan", "PLAN"), ("stage", "executor")];
        assert_eq!(
            fill(
                "a {{plan}} b {{ stage }} {\"json\": {}} {{other}} {{",
                &values
            ),
            "a PLAN b executor {\"json\": {}} {{other}} {{"
        );
        assert_eq!(
            unknown_placeholder("x {{plan}}\n  {{plna}}"),
            Some((2, 3, "plna".into()))
        );
        assert_eq!(unknown_placeholder("{{resume}}{{evidence}}"), None);
    }
}
