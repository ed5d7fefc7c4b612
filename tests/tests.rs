//! The one integration test binary: every test drives real git repositories in temporary
//! directories, and the real `git-baton` binary where the CLI is under test.

mod support;

mod action;

mod completions;

mod crash_consistency;

mod demo;

mod diff_oracle;

mod git_env;

mod hooks;

mod exec;

mod runs;

mod verify;

mod fuzz;

mod agents;
