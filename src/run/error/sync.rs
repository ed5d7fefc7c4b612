//! What stops a run's record from moving between this clone and a remote: a lost
//! compare-and-swap, a lease, records or branches that went different ways, and records this
//! clone refuses.

use super::list_paths;

#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The compare-and-swap of a push was lost: the remote moved since this clone last saw it.
    #[error("run {run}: {remote} holds a newer record than this clone last saw{}", match .by {
        Some(by) => format!(" (advanced by {by})"),
        None => String::new(),
    })]
    LostRace {
        run: String,
        remote: String,
        by: Option<String>,
    },
    #[error(
        "run {run}: its lease could not be renewed in time; the driver stopped so that another \
         machine may take the run over"
    )]
    LeaseExpired { run: String },
    #[error(
        "run {run}: its records here and on {remote} have diverged: both advanced since they last agreed"
    )]
    Diverged { run: String, remote: String },
    #[error("run {run}: {remote} holds a newer record than this clone")]
    Behind { run: String, remote: String },
    #[error("run {run}: its worktree {worktree} holds work that no record has: {}", list_paths(.paths))]
    UnrecordedWork {
        run: String,
        worktree: String,
        paths: Vec<String>,
    },
    #[error("run {run}: branch {branch} here and on {remote} have gone different ways")]
    BranchConflict {
        run: String,
        branch: String,
        remote: String,
    },
    #[error("run {run}: the record {remote} holds cannot be read: {message}")]
    BadRemoteRecord {
        run: String,
        remote: String,
        message: String,
    },
    /// A remote's record that git-baton could not have written: it breaks an invariant every
    /// run is created with (docs/state.md, "Who is trusted for what").
    #[error("run {run}: the record {remote} holds is refused: {broken}")]
    UntrustedRecord {
        run: String,
        remote: String,
        broken: String,
    },
    /// Catching up would write the remote's work over files this clone ignores.
    #[error(
        "run {run}: the remote's newer snapshot has files where its worktree {worktree} holds \
         files this clone ignores, which catching up would overwrite: {}",
        list_paths(.paths)
    )]
    IgnoredInTheWay {
        run: String,
        worktree: String,
        paths: Vec<String>,
    },
}
