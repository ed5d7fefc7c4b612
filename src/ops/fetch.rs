//! `fetch`: bring a remote's runs into this clone's remote-tracking refs (no run here changes).

use crate::run::remote::{self, Fetched};

use super::{Result, Workspace};

#[derive(Debug)]
pub struct FetchOutcome {
    pub remote: String,
    /// What changed, by run id.
    pub changes: Vec<(String, Fetched)>,
}

/// Fetches every run of `remote` (default: `remote:` of the configuration).
pub fn fetch(ws: &Workspace, remote: Option<&str>) -> Result<FetchOutcome> {
    let remote = match remote {
        Some(remote) => remote.to_owned(),
        None => ws.config()?.remote,
    };
    let changes = remote::fetch(&ws.repo, &remote)?;
    Ok(FetchOutcome { remote, changes })
}
