//! `state.json`: the versioned codec of a RunState, and the bounded reads of the store's own
//! files.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::super::{RunState, SCHEMA_VERSION};
use super::{Result, StoreError, io, write_atomic};

/// `state.json` as written: the schema version, then the RunState's stored facts.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(title = "git-baton state.json"))]
pub(crate) struct Versioned<'a> {
    schema_version: u32,
    #[serde(flatten)]
    state: &'a RunState,
}

/// The bytes of `state.json` for `state`, in the current schema version.
pub fn to_json(state: &RunState) -> Vec<u8> {
    let versioned = Versioned {
        schema_version: SCHEMA_VERSION,
        state,
    };
    let mut text = serde_json::to_vec_pretty(&versioned).expect("RunState serializes");
    text.push(b'\n');
    text
}

pub fn save_in(dir: &Path, state: &RunState) -> Result<()> {
    write_atomic(&dir.join("state.json"), &to_json(state))
}

/// The most bytes a `state.json` may have: far beyond what a run's state grows to (coverage
/// reports keep a bounded number of paths), and what a run's record carries whole.
pub const STATE_LIMIT: u64 = 64 << 20;

/// Reads one of the store's own files, at most `limit` bytes of it: a regular file only, so
/// that a named pipe planted at its path is refused unread instead of blocking for ever.
pub(super) fn read_own(path: &Path, limit: u64) -> Result<Vec<u8>> {
    match crate::files::read_limited_regular(path, limit) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(StoreError::Io {
            action: "read",
            path: path.to_path_buf(),
            reason: format!("it holds more than {limit} bytes"),
        }),
        Err(err) => Err(io("read", path)(err)),
    }
}

/// Reads the `state.json` at `path`, of any schema version this git-baton knows.
pub fn load(path: &Path) -> Result<RunState> {
    let bytes = read_own(path, STATE_LIMIT)?;
    parse(&bytes).map_err(|message| StoreError::Corrupt {
        path: path.to_path_buf(),
        message,
    })
}

/// The RunState in the text of a `state.json` of any known schema version, or what is wrong with
/// it (the caller names the file).
pub fn parse(bytes: &[u8]) -> Result<RunState, String> {
    #[derive(Deserialize)]
    struct Version {
        schema_version: u32,
    }
    let version: Version =
        serde_json::from_slice(bytes).map_err(|e| format!("not a RunState: {e}"))?;
    let state = match version.schema_version {
        1 => super::super::v1::read(bytes)?,
        // Version 3 added fields that version 2 files lack and read as absent.
        2 | SCHEMA_VERSION => {
            serde_json::from_slice(bytes).map_err(|e| format!("not a RunState: {e}"))?
        }
        other => {
            return Err(format!(
                "schema_version {other} is not supported by this git-baton (it reads 1 to {SCHEMA_VERSION})"
            ));
        }
    };
    let state: RunState = state;
    state.check().map_err(|e| e.to_string())?;
    Ok(state)
}
