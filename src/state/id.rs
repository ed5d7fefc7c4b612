//! Run ids: ten characters of lowercase Crockford base32, seven for the creation time in seconds
//! (so ids sort by creation) and three of noise. Parsed once, where a name becomes an id (a
//! directory under `runs/`, a RunState, a resolved prefix); a [`RunId`] is then known to be one.

use std::fmt;
use std::str::FromStr;

/// The digits of an id, in order: `0-9` and the letters of Crockford base32 (no `i l o u`).
const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
const TIME_DIGITS: usize = 7;
const NOISE_DIGITS: usize = 3;
const LEN: usize = TIME_DIGITS + NOISE_DIGITS;

/// The id of a run.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RunId(String);

/// A string that is not a run id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a run id (ten characters of 0-9 and lowercase letters other than i, l, o, u)"
)]
pub struct BadRunId(pub String);

impl RunId {
    /// The id of a run created `secs` seconds after the epoch, with `noise` choosing among the
    /// runs of one second.
    pub fn generate(secs: u64, noise: u64) -> RunId {
        let mut id = String::with_capacity(LEN);
        for shift in (0..TIME_DIGITS).rev() {
            id.push(ALPHABET[((secs >> (shift * 5)) & 31) as usize] as char);
        }
        let mut noise = noise;
        for _ in 0..NOISE_DIGITS {
            id.push(ALPHABET[(noise & 31) as usize] as char);
            noise >>= 5;
        }
        RunId(id)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for RunId {
    type Err = BadRunId;

    fn from_str(s: &str) -> Result<RunId, BadRunId> {
        if s.len() == LEN && s.bytes().all(|b| ALPHABET.contains(&b)) {
            Ok(RunId(s.to_string()))
        } else {
            Err(BadRunId(s.to_string()))
        }
    }
}

/// Ids are spliced into paths, ref names and messages as text.
impl std::ops::Deref for RunId {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for RunId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl AsRef<std::path::Path> for RunId {
    fn as_ref(&self) -> &std::path::Path {
        self.0.as_ref()
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for RunId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for RunId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for RunId {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl serde::Serialize for RunId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// For the JSON Schemas of the documents that name runs: [`LEN`] characters of [`ALPHABET`].
#[cfg(test)]
impl schemars::JsonSchema for RunId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RunId".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let alphabet = std::str::from_utf8(ALPHABET).expect("ASCII");
        schemars::json_schema!({
            "description": "A run id.",
            "type": "string",
            "pattern": format!("^[{alphabet}]{{{LEN}}}$")
        })
    }
}

impl<'de> serde::Deserialize<'de> for RunId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RunId, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sort_by_creation_time_and_parse_back() {
        let early = RunId::generate(1_700_000_000, 0);
        let late = RunId::generate(1_700_000_001, u64::MAX);
        assert_eq!(
            (early.as_str(), late.as_str()),
            ("1jn7w80000", "1jn7w81zzz")
        );
        assert!(early < late);
        assert_eq!(late.to_string().parse::<RunId>(), Ok(late));
    }

    /// The encoding is version 1's: run `1ngvbzkqq5` of testdata/state/v1/review.json was
    /// created at 2026-11-30T17:18:43.682Z.
    #[test]
    fn the_time_part_is_encoded_as_before() {
        let created: jiff::Timestamp = "2026-11-30T17:18:43.682Z".parse().unwrap();
        let id = RunId::generate(created.as_second() as u64, 0);
        assert_eq!(&id[..7], "1ngvbzk");
    }

    #[test]
    fn parsing_refuses_what_git_baton_never_makes() {
        for bad in [
            "",
            "1ngvbzkqq",
            "1ngvbzkqq55",
            "1NGVBZKQQ5",
            "1ngvbzkqqi",
            "../../etc",
        ] {
            assert_eq!(bad.parse::<RunId>(), Err(BadRunId(bad.into())), "{bad}");
        }
        assert!("1ngvbzkqq5".parse::<RunId>().is_ok());
    }

    #[test]
    fn json_holds_the_plain_string_and_refuses_a_bad_one() {
        let id: RunId = "1ngvbzkqq5".parse().unwrap();
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"1ngvbzkqq5\"");
        assert_eq!(serde_json::from_str::<RunId>("\"1ngvbzkqq5\"").unwrap(), id);
        assert!(serde_json::from_str::<RunId>("\"nope\"").is_err());
    }
}
