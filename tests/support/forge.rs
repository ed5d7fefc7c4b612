//! Forged run records: what anyone who can push to a remote can do to a run's record there.
//!
//! A record is an ordinary commit under `refs/baton/runs/<id>/record`; a forger rewrites its
//! `state.json` (and adds, replaces or removes other files of its tree) with git's plumbing and
//! moves the ref, the old record as the new commit's parent, so that a clone that fetched the
//! old one sees the forged one as a newer save. Nothing here goes through git-baton.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use super::hermetic;

/// Rewrites run `id`'s record in the bare repository `bare`: `edit` changes its `state.json`,
/// then each of `files` is written (`Some(bytes)`) or removed (`None`) at its path in the
/// record's tree. Returns the forged commit.
pub fn forge_record(
    bare: &Path,
    id: &str,
    edit: impl FnOnce(&mut Value),
    files: &[(&str, Option<&[u8]>)],
) -> String {
    let scratch = tempfile::tempdir().unwrap();
    let home = scratch.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let index = scratch.path().join("index");
    let git_with = |args: &[&str], input: &[u8]| -> String {
        let mut cmd = Command::new("git");
        cmd.arg("--git-dir").arg(bare).args(args);
        hermetic(&mut cmd, &home);
        cmd.env("GIT_INDEX_FILE", &index)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let git = |args: &[&str]| git_with(args, b"");
    let blob = |bytes: &[u8]| -> String {
        let path = scratch.path().join("blob");
        std::fs::write(&path, bytes).unwrap();
        git(&["hash-object", "-w", path.to_str().unwrap()])
    };
    let refname = format!("refs/baton/runs/{id}/record");
    let old = git(&["rev-parse", "--verify", &refname]);
    git(&["read-tree", &old]);
    let mut state: Value =
        serde_json::from_str(&git(&["cat-file", "blob", &format!("{old}:state.json")])).unwrap();
    edit(&mut state);
    let json = serde_json::to_vec_pretty(&state).unwrap();
    let state_blob = blob(&json);
    git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("100644,{state_blob},state.json"),
    ]);
    for (path, bytes) in files {
        match bytes {
            Some(bytes) => {
                let id = blob(bytes);
                git(&[
                    "update-index",
                    "--add",
                    "--cacheinfo",
                    &format!("100644,{id},{path}"),
                ]);
            }
            None => {
                // Mode 0 removes the entry; `--force-remove` would want a work tree.
                let line = format!("0 {}\t{path}\n", "0".repeat(40));
                git_with(&["update-index", "--index-info"], line.as_bytes());
            }
        }
    }
    let tree = git(&["write-tree"]);
    let new = git(&["commit-tree", &tree, "-p", &old, "-m", "forged"]);
    git(&["update-ref", &refname, &new, &old]);
    new
}
