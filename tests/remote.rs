//! Runs that travel between machines through a git remote (issue 10): clones of one bare
//! repository stand in for machines, reached by `file://` and by `git daemon` on 127.0.0.1,
//! and the real `git-baton` binary pushes, fetches, resumes and finishes runs in them.
//!
//! A test binary of its own, next to tests/tests.rs, sharing its harness (tests/support).

#[path = "support/mod.rs"]
mod support;

#[path = "remote/mod.rs"]
mod remote;
