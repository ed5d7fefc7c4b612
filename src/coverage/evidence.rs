//! Evidence files: what an agent claims about each target, parsed with every shape error
//! located at its entry.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// What an evidence entry says about its target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Claim {
    /// The work changed these paths under the target; checked against the diff.
    Changed { paths: Vec<String> },
    /// The target needed no change, for this reason.
    Unchanged { reason: String },
}

/// Where an evidence entry came from, so that a problem can point at it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// Entry `index` (0-based) of `target_coverage` in the evidence file `path`.
    File { path: String, index: usize },
    /// A `Baton-Unchanged` trailer of the commit with this full hex id.
    Trailer { commit: String },
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::File { path, index } => write!(f, "{path}: entry {index}"),
            Source::Trailer { commit } => {
                let short = commit.get(..7).unwrap_or(commit);
                write!(f, "commit {short} trailer")
            }
        }
    }
}

/// One claim about one target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct EvidenceEntry {
    pub target: String,
    #[serde(flatten)]
    pub claim: Claim,
    pub source: Source,
}

/// What the agent reports the stage cost. Not checked; carried for the record. Unknown keys are
/// accepted because agents add fields faster than this struct does.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Usage {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

/// A parsed evidence file.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Evidence {
    pub entries: Vec<EvidenceEntry>,
    pub usage: Option<Usage>,
}

/// An evidence file that is not shaped like one. Semantic problems (unknown targets, bad
/// reasons, ...) are not errors but [`Problem`](super::Problem)s of the [`Report`](super::Report).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}{}: {message}", location(*.position))]
pub struct EvidenceError {
    pub path: String,
    /// 1-based line and column, when the JSON parser knew them.
    pub position: Option<(usize, usize)>,
    pub message: String,
}

/// Why an evidence file over [`MAX_EVIDENCE_BYTES`] is refused, for every caller that refuses one.
#[must_use]
pub fn too_large_message() -> String {
    format!(
        "the file is larger than {} MiB, the limit for an evidence file; give one short entry per target",
        MAX_EVIDENCE_BYTES / (1024 * 1024)
    )
}

fn location(position: Option<(usize, usize)>) -> String {
    match position {
        Some((line, column)) => format!(":{line}:{column}"),
        None => String::new(),
    }
}

/// The largest evidence file accepted, in bytes (1 MiB): a few thousand entries with reasons of
/// the longest acceptable length. Callers that read the file stop there ([`crate::files`]'s
/// `read_limited`), and [`parse_evidence`] refuses longer text, so no agent or pull request can
/// make the gate hold or print more.
pub const MAX_EVIDENCE_BYTES: u64 = 1024 * 1024;

/// Parses an evidence file:
///
/// ```json
/// {"target_coverage": [
///     {"target": "docs/a.md", "status": "changed", "paths": ["docs/a.md"]},
///     {"target": "src/parser/", "status": "unchanged", "reason": "the grammar did not change"}
///  ],
///  "usage": {"input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.02, "model": "m"}}
/// ```
///
/// `target_coverage` and `usage` are optional; other top-level or entry keys are errors, since a
/// misspelled key would otherwise silently drop a claim.
///
/// # Errors
///
/// An [`EvidenceError`] when the text is not JSON or not shaped like an evidence file; it
/// names the entry and, when known, the line and column.
pub fn parse_evidence(path: &str, text: &str) -> Result<Evidence, EvidenceError> {
    if text.len() as u64 > MAX_EVIDENCE_BYTES {
        return Err(EvidenceError {
            path: path.to_owned(),
            position: None,
            message: too_large_message(),
        });
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        // An agent that was interrupted before writing anything leaves exactly this behind;
        // serde_json's "EOF while parsing a value" would not say so.
        return Err(EvidenceError {
            path: path.to_owned(),
            position: None,
            message: format!("the file is empty; expected {}", RawEvidence::EXPECTING),
        });
    }
    let raw: Object<RawEvidence> = serde_json::from_str(text).map_err(|e| {
        let full = e.to_string();
        let position = (e.line() != 0).then(|| (e.line(), e.column()));
        let message = match position {
            Some((line, column)) => full
                .strip_suffix(&format!(" at line {line} column {column}"))
                .unwrap_or(&full)
                .to_owned(),
            None => full,
        };
        EvidenceError {
            path: path.to_owned(),
            position: position.map(|(line, column)| (line, char_column(text, line, column))),
            message,
        }
    })?;
    let raw = raw.0;
    let entries = raw
        .target_coverage
        .map(|entries| entries.0)
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(index, (target, claim))| EvidenceEntry {
            target,
            claim,
            source: Source::File {
                path: path.to_owned(),
                index,
            },
        })
        .collect();
    Ok(Evidence {
        entries,
        usage: raw.usage,
    })
}

/// serde_json counts the bytes read on the line; editors, and plan and configuration errors,
/// count characters, from 1 (serde_json says 0 at a line start).
fn char_column(text: &str, line: usize, column: usize) -> usize {
    let chars = text
        .split('\n')
        .nth(line.saturating_sub(1))
        .map_or(column, |l| {
            l.char_indices().take_while(|(at, _)| *at < column).count()
        });
    chars.max(1)
}

/// A git-baton evidence file (`BATON_EVIDENCE_FILE`, `verify --evidence`): what an agent says
/// about each target of the plan. See docs/coverage.md.
#[derive(Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(title = "git-baton evidence"))]
#[serde(deny_unknown_fields)]
struct RawEvidence {
    /// One entry per target: the paths that changed it, or why it needed no change.
    #[serde(default)]
    #[cfg_attr(test, schemars(with = "Option<Vec<RawEntry>>"))]
    target_coverage: Option<RawEntries>,
    /// What the agent reports the stage cost; carried for the record, not checked.
    #[serde(default)]
    usage: Option<Usage>,
}

/// The shape rules of [`RawEntry::validate`] that serde cannot express, as schema rules.
#[cfg(test)]
fn entry_rules(schema: &mut schemars::Schema) {
    schema.insert(
        "oneOf".into(),
        serde_json::json!([
            {
                "properties": { "status": { "const": "changed" },
                                "paths": { "type": "array", "minItems": 1 } },
                "required": ["paths"],
                "not": { "required": ["reason"] }
            },
            {
                "properties": { "status": { "const": "unchanged" },
                                "reason": { "type": "string" } },
                "required": ["reason"],
                "not": { "required": ["paths"] }
            }
        ]),
    );
}

struct RawEntries(Vec<(String, Claim)>);

/// Derived struct deserializers also accept a JSON array of the fields in order; evidence is
/// written by agents, and a positional entry is far more likely a mistake than a shorthand.
struct Object<T>(T);

trait Described {
    const EXPECTING: &'static str;

    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

impl Described for RawEvidence {
    const EXPECTING: &'static str = "an evidence object like {\"target_coverage\": [...]}";

    /// `usage` is carried into every attempt's record, which stays bounded: its names are
    /// names, not documents.
    fn validate(&self) -> Result<(), String> {
        let Some(usage) = &self.usage else {
            return Ok(());
        };
        for (field, value) in [("model", &usage.model), ("provider", &usage.provider)] {
            if let Some(value) = value
                && value.chars().count() > USAGE_NAME_LIMIT
            {
                return Err(format!(
                    "usage.{field} is {} characters long, more than the {USAGE_NAME_LIMIT} a name may have",
                    value.chars().count()
                ));
            }
        }
        Ok(())
    }
}

/// The most characters of a name in `usage` (`model`, `provider`).
pub const USAGE_NAME_LIMIT: usize = 200;

impl Described for RawEntry {
    const EXPECTING: &'static str =
        "an entry object like {\"target\": ..., \"status\": ..., \"reason\"/\"paths\": ...}";

    fn validate(&self) -> Result<(), String> {
        RawEntry::validate(self)
    }
}

impl<'de, T: Deserialize<'de> + Described> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Described> Visitor<'de> for ObjectVisitor<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(T::EXPECTING)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
                let value = T::deserialize(MapAccessDeserializer::new(map))?;
                value.validate().map_err(de::Error::custom)?;
                Ok(Object(value))
            }
        }
        deserializer.deserialize_map(ObjectVisitor(PhantomData))
    }
}

/// What the work did to one target.
#[derive(Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(transform = entry_rules))]
#[serde(deny_unknown_fields)]
struct RawEntry {
    /// The target, as the plan lists it.
    target: String,
    /// `changed` (give `paths`) or `unchanged` (give `reason`).
    status: RawStatus,
    /// With `changed`: the changed paths under the target; checked against the diff.
    #[serde(default)]
    paths: Option<Vec<String>>,
    /// With `unchanged`: why the target needed no change, specific to it.
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
enum RawStatus {
    Changed,
    Unchanged,
}

impl RawEntry {
    /// The shape rules serde cannot express. Checked while the entry's object is still being
    /// read, so that serde_json locates the error at the entry (its closing brace) rather than
    /// wherever it had got to by the time the entry was complete.
    fn validate(&self) -> Result<(), String> {
        if self.target.trim().is_empty() {
            return Err("\"target\" is empty".into());
        }
        let problem = match (&self.status, &self.paths, &self.reason) {
            (RawStatus::Changed, _, Some(_)) => {
                "status \"changed\" takes \"paths\", not \"reason\" (the diff speaks for itself)"
            }
            (RawStatus::Changed, None, None) => {
                "status \"changed\" requires \"paths\": the changed paths under the target"
            }
            (RawStatus::Changed, Some(paths), None) if paths.is_empty() => {
                "status \"changed\" requires a non-empty \"paths\" list"
            }
            (RawStatus::Unchanged, Some(_), _) => {
                "status \"unchanged\" takes \"reason\", not \"paths\""
            }
            (RawStatus::Unchanged, None, None) => {
                "status \"unchanged\" requires \"reason\": why the target needed no change"
            }
            _ => return Ok(()),
        };
        Err(format!("target {:?}: {problem}", self.target))
    }

    /// Only called on a validated entry.
    fn into_claim(self) -> (String, Claim) {
        let claim = match self.status {
            RawStatus::Changed => Claim::Changed {
                paths: self.paths.unwrap_or_default(),
            },
            RawStatus::Unchanged => Claim::Unchanged {
                reason: self.reason.unwrap_or_default(),
            },
        };
        (self.target, claim)
    }
}

// A hand-written sequence visitor so that every error names the entry it is about; serde_json
// keeps the position of the inner error when it is wrapped in a custom message.
impl<'de> Deserialize<'de> for RawEntries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = RawEntries;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of target coverage entries")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawEntries, A::Error> {
                let mut entries = Vec::new();
                loop {
                    let index = entries.len();
                    match seq.next_element::<Object<RawEntry>>() {
                        Ok(Some(Object(raw))) => entries.push(raw.into_claim()),
                        Ok(None) => return Ok(RawEntries(entries)),
                        Err(e) => {
                            return Err(de::Error::custom(format_args!("entry {index}: {e}")));
                        }
                    }
                }
            }
        }
        deserializer.deserialize_seq(EntriesVisitor)
    }
}

/// The JSON Schema of an evidence file, from the types that read it.
#[cfg(test)]
pub(crate) fn json_schema() -> schemars::Schema {
    schemars::schema_for!(RawEvidence)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::test_support::*;
    use insta::{assert_json_snapshot, assert_snapshot};

    #[test]
    fn evidence_parses_with_usage() {
        let evidence = parse_evidence(
            "ev.json",
            "\u{feff}{\"target_coverage\": [{\"target\": \"a.md\", \"status\": \"changed\", \"paths\": [\"a.md\"]}],
              \"usage\": {\"input_tokens\": 1200, \"output_tokens\": 300, \"cost_usd\": 0.02,
                        \"model\": \"m\", \"cache_tokens\": 5}}",
        )
        .expect("parses");
        assert_json_snapshot!(evidence, @r#"
            {
              "entries": [
                {
                  "target": "a.md",
                  "status": "changed",
                  "paths": [
                    "a.md"
                  ],
                  "source": {
                    "kind": "file",
                    "path": "ev.json",
                    "index": 0
                  }
                }
              ],
              "usage": {
                "input_tokens": 1200,
                "output_tokens": 300,
                "cost_usd": 0.02,
                "model": "m"
              }
            }
            "#);
        assert_eq!(
            parse_evidence("e", "{}").expect("parses"),
            Evidence::default()
        );
        assert_eq!(
            parse_evidence("e", r#"{"target_coverage": null, "usage": null}"#).expect("parses"),
            Evidence::default()
        );
    }

    #[test]
    fn evidence_shape_errors() {
        let errors = [
            "",
            "[]",
            "{\"target_coverage\": [], \"notes\": \"hi\"}",
            "{\"target_coverage\": {}}",
            "{\"target_coverage\": [\n  {\"target\": \"a.md\", \"status\": \"unchanged\", \"reason\": \"a real reason here\"},\n  {\"target\": \"b.md\", \"status\": \"unchanged\", \"reasn\": \"typo\"}\n]}",
            "{\"target_coverage\": [{\"target\": \"a.md\", \"status\": \"done\"}]}",
            "{\"target_coverage\": [{\"status\": \"changed\", \"paths\": [\"a.md\"]}]}",
            "{\"target_coverage\": [{\"target\": \"\", \"status\": \"changed\", \"paths\": [\"a.md\"]}]}",
            "{\"target_coverage\": [{\"target\": \"a.md\", \"status\": \"changed\"}]}",
            "{\"target_coverage\": [{\"target\": \"a.md\", \"status\": \"changed\", \"paths\": []}]}",
            "{\"target_coverage\": [{\"target\": \"a.md\", \"status\": \"changed\", \"paths\": [\"a.md\"], \"reason\": \"x\"}]}",
            "{\"target_coverage\": [{\"target\": \"a.md\", \"status\": \"unchanged\"}]}",
            "{\"target_coverage\": [{\"target\": \"a.md\", \"status\": \"unchanged\", \"reason\": \"a b c d\", \"paths\": [\"a.md\"]}]}",
            "{\"target_coverage\": [{\"target\": \"a.md\", \"status\": \"unchanged\", \"reason\": 7}]}",
            "{\"target_coverage\": [\"a.md\"]}",
            "{\"usage\": {\"input_tokens\": -5}}",
            "{\"target_coverage\": [] ",
        ];
        let rendered: Vec<String> = errors.iter().map(|json| shape_error(json)).collect();
        assert_snapshot!(rendered.join("\n"), @r#"
            evidence.json: the file is empty; expected an evidence object like {"target_coverage": [...]}
            evidence.json:1:1: invalid type: sequence, expected an evidence object like {"target_coverage": [...]}
            evidence.json:1:31: unknown field `notes`, expected `target_coverage` or `usage`
            evidence.json:1:20: invalid type: map, expected a list of target coverage entries
            evidence.json:3:51: entry 1: unknown field `reasn`, expected one of `target`, `status`, `paths`, `reason`
            evidence.json:1:56: entry 0: unknown variant `done`, expected `changed` or `unchanged`
            evidence.json:1:61: entry 0: missing field `target`
            evidence.json:1:75: entry 0: "target" is empty
            evidence.json:1:60: entry 0: target "a.md": status "changed" requires "paths": the changed paths under the target
            evidence.json:1:73: entry 0: target "a.md": status "changed" requires a non-empty "paths" list
            evidence.json:1:94: entry 0: target "a.md": status "changed" takes "paths", not "reason" (the diff speaks for itself)
            evidence.json:1:62: entry 0: target "a.md": status "unchanged" requires "reason": why the target needed no change
            evidence.json:1:102: entry 0: target "a.md": status "unchanged" takes "reason", not "paths"
            evidence.json:1:74: entry 0: invalid type: integer `7`, expected a string
            evidence.json:1:27: entry 0: invalid type: string "a.md", expected an entry object like {"target": ..., "status": ..., "reason"/"paths": ...}
            evidence.json:1:29: invalid value: integer `-5`, expected u64
            evidence.json:1:23: EOF while parsing an object
            "#);
    }

    /// `usage` names go into every attempt's record: one longer than a name is refused.
    #[test]
    fn an_overlong_usage_name_is_refused() {
        let at_limit = "m".repeat(USAGE_NAME_LIMIT);
        let fine = format!("{{\"usage\": {{\"model\": \"{at_limit}\"}}}}");
        assert_eq!(
            parse_evidence("evidence.json", &fine)
                .unwrap()
                .usage
                .unwrap()
                .model,
            Some(at_limit)
        );
        let long = format!("{{\"usage\": {{\"provider\": \"{}\"}}}}", "ü".repeat(201));
        assert_eq!(
            shape_error(&long),
            "evidence.json:1:228: usage.provider is 201 characters long, more than the 200 a name may have"
        );
    }

    #[test]
    fn evidence_over_the_limit_is_refused_unparsed() {
        let limit = usize::try_from(MAX_EVIDENCE_BYTES).unwrap();
        let entry =
            r#"{"target": "a.md", "status": "unchanged", "reason": "kept as it was before"}"#;
        let mut text = String::from("{\"target_coverage\": [");
        text.push_str(entry);
        text.push_str("]}");
        let padded = format!("{text}{}", " ".repeat(limit - text.len()));
        assert_eq!(padded.len(), limit);
        assert_eq!(
            parse_evidence("e", &padded)
                .expect("at the limit")
                .entries
                .len(),
            1
        );
        let over = format!("{padded} ");
        assert_snapshot!(parse_evidence("e", &over).unwrap_err(), @"e: the file is larger than 1 MiB, the limit for an evidence file; give one short entry per target");
    }

    #[test]
    fn sources_render() {
        let file = Source::File {
            path: "evidence.json".to_owned(),
            index: 2,
        };
        assert_eq!(file.to_string(), "evidence.json: entry 2");
        let short = Source::Trailer {
            commit: "abc".to_owned(),
        };
        assert_eq!(short.to_string(), "commit abc trailer");
    }
}
