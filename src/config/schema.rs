//! The keys of each mapping of `.baton.yml`, taken from the serde types that read it, so that a
//! "did you mean" hint offers the keys of the mapping the typo is in and can never drift from
//! what the parser accepts.
//!
//! An unknown key fails deserialization with serde's `unknown_field(key, FIELDS)`, whose
//! `FIELDS` is the derived field list of the very struct being read; serde-saphyr keeps both in
//! a structured error, and [`unknown_key_hint`] works from them, never from the message text.
//! [`fields_of`] reads the same lists from the types directly, for the tests that hold the two
//! together.

#[cfg(test)]
use serde::de::{self, Deserialize, Deserializer, Visitor};

use super::closest;

/// The hint for `key`, unknown in a mapping whose keys are `known`: the closest known key, or
/// all of them.
pub(super) fn unknown_key_hint(key: &str, known: &[&str]) -> String {
    match closest(key, known) {
        Some(k) => format!("did you mean `{k}`?"),
        None => format!("known keys: {}", known.join(", ")),
    }
}

/// The field names of a struct with a derived `Deserialize`: the derive hands them to
/// `deserialize_struct`, where a recording deserializer keeps them and stops.
#[cfg(test)]
fn fields_of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Recorder(&mut fields));
    fields
}

#[cfg(test)]
struct Recorder<'a>(&'a mut &'static [&'static str]);

#[cfg(test)]
impl<'de> Deserializer<'de> for Recorder<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(de::Error::custom("fields recorded"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::super::{
        Config, RawActor, RawFile, RawPrompts, RawRateLimit, RawStage, apply, parse,
    };
    use super::*;

    fn err(text: &str) -> String {
        let e = parse(".baton.yml", text).unwrap_err();
        format!("{e}\nhint: {}", e.hint().unwrap_or_default())
    }

    #[test]
    fn the_field_lists_are_the_types() {
        let file = fields_of::<RawFile>();
        assert_eq!(
            file,
            [
                "plans_dir",
                "actors",
                "pipeline",
                "coverage",
                "worktree_root",
                "prompts",
                "require_targets",
                "derive_targets",
                "log_limit",
                "lease",
                "sync",
                "remote",
                "checks",
                "protect",
                "notify"
            ]
        );
        assert_eq!(fields_of::<RawPrompts>(), ["fresh", "resume"]);
        assert_eq!(fields_of::<RawRateLimit>(), ["exit_codes", "patterns"]);
        assert_eq!(
            fields_of::<RawStage>(),
            ["stage", "actor", "gate", "fallback", "checks"]
        );
        assert_eq!(fields_of::<RawActor>().len(), 9);
    }

    /// An unknown key is told against the fields of the type that reads its own mapping: a
    /// near typo gets its neighbour, a key with none gets the whole list.
    #[test]
    fn every_mapping_offers_its_own_keys() {
        /// `text` with `KEY` where the key goes and `ACTOR` for a defined actor; `at` is where
        /// the key stands, `typo` is near `meant`; `T` reads the mapping.
        fn case<'de, T: Deserialize<'de>>(text: &str, at: &str, typo: &str, meant: &str) {
            let text = text.replace("ACTOR", "actors:\n  a:\n    command: [x]\n");
            let fields = fields_of::<T>().join(", ");
            let unknown = |key: &str| {
                format!(".baton.yml:{at}: unknown field `{key}`, expected one of {fields}\nhint: ")
            };
            let far = "zzzzzzzz";
            assert_eq!(
                err(&text.replace("KEY", typo)),
                format!("{}did you mean `{meant}`?", unknown(typo))
            );
            assert_eq!(
                err(&text.replace("KEY", far)),
                format!("{}known keys: {fields}", unknown(far))
            );
        }
        case::<RawFile>("KEY: 1\n", "1:1", "require_target", "require_targets");
        case::<RawPrompts>("prompts:\n  KEY: x\n", "2:3", "fresch", "fresh");
        case::<RawActor>("ACTOR    KEY: 30m\n", "4:5", "timout", "timeout");
        let rate_limit = "ACTOR    rate_limit: { KEY: [75] }\n";
        case::<RawRateLimit>(rate_limit, "4:19", "exit_code", "exit_codes");
        let stage = "ACTORpipeline:\n  - { stage: s, actor: a, KEY: a }\n";
        case::<RawStage>(stage, "5:27", "actr", "actor");
    }

    /// A key the user configuration may not set is refused where it is written, whatever its
    /// value (an empty one too) and however the file is written: the first such key in the
    /// file.
    #[test]
    fn the_user_configuration_refuses_its_first_repository_key_where_it_stands() {
        let refused = |text: &str| {
            apply(&mut Config::default(), "user.yml", text, true)
                .unwrap_err()
                .to_string()
        };
        let belongs = "belongs in the repository's .baton.yml, not in the user configuration";
        assert_eq!(
            refused("actors: {}\nplans_dir:\n"),
            format!("user.yml:2:1: `plans_dir` {belongs}")
        );
        assert_eq!(
            refused("{actors: {}, lease: 5m, coverage: always}\n"),
            format!("user.yml:1:14: `lease` {belongs}")
        );
        assert_eq!(
            refused("remote: x\n\"checks\": []\n"),
            format!("user.yml:1:1: `remote` {belongs}")
        );
        // Keys merged in with `<<` are read after the written ones.
        assert_eq!(
            refused("<<: {plans_dir: x}\nlease: 5m\n"),
            format!("user.yml:1:5: `plans_dir` {belongs}")
        );
        let accepted = |text: &str| apply(&mut Config::default(), "user.yml", text, true).unwrap();
        accepted("notify: {command: [x]}\nactors: {}\n");
        // Values that only a string field reads as written are no reason to refuse the file.
        accepted(
            "actors:\n  b: {command: [sleep, 1e999], model: .inf, env: {X: .nan}}\n  \
             c: {command: [x, 99999999999999999999999999999999999999999999]}\n",
        );
    }

    /// The user configuration may set `actors` and `notify` and nothing else: every other
    /// top-level key of the schema is refused there by name, including keys added after this
    /// test was written (a key with no sample value here fails it).
    #[test]
    fn the_user_configuration_refuses_every_repository_key() {
        let samples = [
            ("plans_dir", "p"),
            ("pipeline", "[]"),
            ("coverage", "always"),
            ("worktree_root", "w"),
            ("prompts", "{}"),
            ("require_targets", "true"),
            ("derive_targets", "body"),
            ("log_limit", "1MiB"),
            ("lease", "5m"),
            ("sync", "push"),
            ("remote", "origin"),
            ("checks", "[]"),
            ("protect", "[deploy/]"),
        ];
        for key in fields_of::<RawFile>()
            .iter()
            .filter(|k| !crate::config::read::PERSONAL.contains(k))
        {
            let (_, value) = samples
                .iter()
                .find(|(k, _)| k == key)
                .unwrap_or_else(|| panic!("no sample value for the new key `{key}`"));
            let text = format!("actors: {{}}\n{key}: {value}\n");
            let e = apply(&mut Config::default(), "user.yml", &text, true).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "user.yml:2:1: `{key}` belongs in the repository's .baton.yml, not in the user configuration"
                )
            );
        }
    }
}
