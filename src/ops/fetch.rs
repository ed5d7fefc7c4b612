//! `fetch`: bring a remote's runs into this clone's remote-tracking refs (no run here changes).

use crate::run::remote::{self, Fetched};

use super::{Result, Workspace};

#[derive(Debug)]
pub struct FetchOutcome {
    pub remote: String,
    /// What changed, by run id.
    pub changes: Vec<(String, Fetched)>,
}

pub struct FetchOptions<'a> {
    /// The remote (default: `remote:` of the configuration).
    pub remote: Option<&'a str>,
}

/// Fetches every run of the remote.
pub fn fetch(ws: &Workspace, options: &FetchOptions) -> Result<FetchOutcome> {
    let remote = match options.remote {
        Some(remote) => remote.to_owned(),
        None => ws.config()?.remote,
    };
    let changes = remote::fetch(&ws.repo, &remote)?;
    Ok(FetchOutcome { remote, changes })
}
