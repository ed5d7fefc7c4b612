//! Talking to a remote: fetching refs into a private namespace, and pushing several refs as one
//! compare-and-swap.
//!
//! Both run `git` itself, so that every transport, credential helper and `url.*.insteadOf` the
//! user set up works as it does for their own pushes. A push is `--atomic` (all refs or none)
//! and every ref carries `--force-with-lease=<ref>:<expected>`: the remote accepts the update
//! only if the ref still holds what this clone last saw, which is the compare-and-swap.

use super::command::Git;
use super::{CommitId, GitError, Repo, Result};

/// One ref to set (or delete, with `new: None`) on the remote, if it still holds `expected`
/// (`None`: if it does not exist).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefUpdate {
    pub name: String,
    pub new: Option<CommitId>,
    pub expected: Option<CommitId>,
}

/// How a push ended, when git could talk to the remote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// Every ref was updated (or already held its new value).
    Done,
    /// The remote refused: a ref no longer held what was expected. Nothing was updated. The
    /// refs named are the ones git said were stale or rejected.
    Rejected { refs: Vec<String> },
}

impl Repo {
    /// The URL of the remote `name`, or an error naming it when there is no such remote.
    pub fn remote_url(&self, name: &str) -> Result<String> {
        Git::at_git_dir(self.common_dir())
            .args(["remote", "get-url", name])
            .output()
            .map_err(|_| GitError::UnknownRemote {
                remote: name.to_owned(),
            })
    }

    /// git on this repository, run from the top of its worktree, as the user's `git fetch` and
    /// `git push` are: a relative URL (`../origin.git`) is relative to it. Never interactive.
    fn at_top(&self) -> Result<Git> {
        let absolute =
            |dir: &std::path::Path| dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        Ok(Git::at_git_dir(&absolute(self.common_dir()))
            .run_in(&absolute(self.workdir()?))
            // Pushes also happen beside a running agent (lease renewals): git must never stop
            // to ask for a password on the terminal; a credential helper answers, or it fails.
            .env("GIT_TERMINAL_PROMPT", "0")
            .network())
    }
    /// Fetches `refspecs` from `remote`, deleting local refs under their destinations that the
    /// remote no longer has; stopped at `deadline`, if there is one.
    pub fn fetch(
        &self,
        remote: &str,
        refspecs: &[String],
        deadline: Option<std::time::Instant>,
    ) -> Result<()> {
        self.remote_url(remote)?;
        self.at_top()?
            .args([
                "fetch",
                "--quiet",
                "--prune",
                "--no-tags",
                "--no-write-fetch-head",
            ])
            .arg("--no-recurse-submodules")
            .arg(remote)
            .args(refspecs)
            .run_within(deadline)
    }

    /// Pushes `updates` to `remote` in one atomic push; see [`Pushed`]. Stopped at `deadline`, if
    /// there is one: the remote may then have taken the push or not.
    pub fn push_atomic(
        &self,
        remote: &str,
        updates: &[RefUpdate],
        deadline: Option<std::time::Instant>,
    ) -> Result<Pushed> {
        self.remote_url(remote)?;
        if updates.is_empty() {
            return Ok(Pushed::Done);
        }
        let mut git = self.at_top()?.args([
            "push",
            "--atomic",
            "--porcelain",
            "--no-verify",
            "--no-recurse-submodules",
        ]);
        for update in updates {
            let expected = update.expected.map(|id| id.to_string()).unwrap_or_default();
            git = git.arg(format!("--force-with-lease={}:{expected}", update.name));
        }
        git = git.arg(remote);
        for update in updates {
            let src = update.new.map(|id| id.to_string()).unwrap_or_default();
            git = git.arg(format!("{src}:{}", update.name));
        }
        let (command, at, out) = git.finish_within(deadline)?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if out.status.success() {
            return Ok(Pushed::Done);
        }
        let rejected = rejected_refs(&stdout, &String::from_utf8_lossy(&out.stderr));
        if !rejected.is_empty() {
            return Ok(Pushed::Rejected { refs: rejected });
        }
        Err(super::command::failed(command, at, &out))
    }
}

/// The refs `git push --porcelain` reports as refused because the remote moved: a stale lease,
/// a non-fast-forward, or the rest of an atomic push that one of those sank. Any of them means
/// the compare-and-swap was lost; other failures (no connection, no permission) are not.
fn rejected_refs(porcelain: &str, stderr: &str) -> Vec<String> {
    // The remote's own compare-and-swap, lost to a push that took the ref while this one ran,
    // shows on stderr only (`cannot lock ref …: is at X but expected Y`); the ref's line then
    // says `atomic transaction failed`.
    let mut lost = stderr
        .lines()
        .any(|l| l.contains("cannot lock ref") && l.contains("but expected"));
    let mut refs = Vec::new();
    for line in porcelain.lines() {
        let mut fields = line.split('\t');
        let (Some("!"), Some(spec), Some(summary)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let name = spec.rsplit(':').next().unwrap_or(spec).to_owned();
        // The client-side check (`stale info`, `fetch first`, …) catches a remote that moved
        // before the push began.
        if summary.contains("stale info")
            || summary.contains("fetch first")
            || summary.contains("non-fast-forward")
            || summary.contains("already exists")
            || (lost && summary.contains("atomic transaction failed"))
        {
            lost = true;
            refs.push(name);
        }
    }
    if lost { refs } else { Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::rejected_refs;

    #[test]
    fn a_stale_lease_is_a_lost_race_and_other_failures_are_not() {
        let lost = "To ../remote.git\n\
            !\t1111111111111111111111111111111111111111:refs/baton/runs/r1/record\t[rejected] (stale info)\n\
            !\t2222222222222222222222222222222222222222:refs/heads/baton/r1\t[rejected] (atomic push failed)\n\
            Done\n";
        assert_eq!(rejected_refs(lost, ""), vec!["refs/baton/runs/r1/record"]);

        // What git 2.47 prints when another push took the ref between the check and the update.
        let raced = "To ../r.git\n\
            !\t1111111111111111111111111111111111111111:refs/baton/runs/r1/record\t[remote rejected] (atomic transaction failed)\n\
            Done\n";
        let stderr = "remote: error: cannot lock ref 'refs/baton/runs/r1/record': is at \
            2222222222222222222222222222222222222222 but expected \
            3333333333333333333333333333333333333333        \nerror: failed to push some refs to '../r.git'\n";
        assert_eq!(
            rejected_refs(raced, stderr),
            vec!["refs/baton/runs/r1/record"]
        );
        assert!(rejected_refs(raced, "error: disk full\n").is_empty());

        let denied = "To ../remote.git\n\
            !\t1111111111111111111111111111111111111111:refs/baton/runs/r1/record\t[remote rejected] (pre-receive hook declined)\n";
        assert!(rejected_refs(denied, "").is_empty());
    }
}
