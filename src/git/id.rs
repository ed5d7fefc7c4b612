//! Object ids as the rest of the crate sees them.
//!
//! gix's `ObjectId` stays inside this module tree; everything above it (the RunState, runs,
//! commands, reports) holds a [`CommitId`], which is parsed once — when it is read from a
//! revision, from git or from a RunState — and is then known to be a well-formed id.

use std::fmt;
use std::str::FromStr;

use gix::ObjectId;

/// The id of a commit (or of any object git-baton records by id, such as a snapshot commit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CommitId(ObjectId);

/// A string that is not a full hexadecimal object id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a full object id")]
pub struct BadCommitId(pub String);

impl CommitId {
    pub(in crate::git) fn from_gix(id: ObjectId) -> CommitId {
        CommitId(id)
    }

    pub(in crate::git) fn gix(self) -> ObjectId {
        self.0
    }
}

impl CommitId {
    /// The first 12 hex digits, as reports show ids.
    pub fn short(&self) -> String {
        short_hex(&self.0.to_string()).to_owned()
    }
}

/// The first 12 characters of a commit id written out (in JSON, in a trailer), as reports show
/// ids; an id shorter than that as it is.
pub fn short_hex(hex: &str) -> &str {
    hex.get(..12).unwrap_or(hex)
}

/// The id git gives `bytes` as a blob (what `git hash-object` prints); `None` only if the
/// collision-detecting SHA-1 finds the bytes crafted to collide.
pub fn blob_id(bytes: &[u8]) -> Option<String> {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes)
        .ok()
        .map(|id| id.to_string())
}

impl fmt::Display for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl FromStr for CommitId {
    type Err = BadCommitId;

    fn from_str(hex: &str) -> Result<CommitId, BadCommitId> {
        ObjectId::from_hex(hex.as_bytes())
            .map(CommitId)
            .map_err(|_| BadCommitId(hex.to_string()))
    }
}

impl serde::Serialize for CommitId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// For the JSON Schemas of the documents that name commits: a full hex object id (SHA-1, the
/// one object format this build reads).
#[cfg(test)]
impl schemars::JsonSchema for CommitId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CommitId".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A full commit id, 40 lowercase hex digits.",
            "type": "string",
            "pattern": "^[0-9a-f]{40}$"
        })
    }
}

impl<'de> serde::Deserialize<'de> for CommitId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<CommitId, D::Error> {
        let hex = String::deserialize(d)?;
        hex.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_prints_and_round_trips_through_json() {
        let hex = "0123456789abcdef0123456789abcdef01234567";
        let id: CommitId = hex.parse().unwrap();
        assert_eq!(id.to_string(), hex);
        assert_eq!(id.short(), "0123456789ab");
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, format!("\"{hex}\""));
        assert_eq!(serde_json::from_str::<CommitId>(&json).unwrap(), id);
    }

    #[test]
    fn refuses_what_is_not_a_full_id() {
        for bad in [
            "",
            "main",
            "0123",
            "zz23456789abcdef0123456789abcdef01234567",
        ] {
            assert_eq!(bad.parse::<CommitId>(), Err(BadCommitId(bad.to_string())));
        }
        assert!(serde_json::from_str::<CommitId>("\"HEAD\"").is_err());
    }
}
