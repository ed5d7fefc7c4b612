//! The diff engine: the cumulative diff of a worktree against a base commit and the diff of two
//! commits, scoped to path prefixes. It holds the one-pass worktree walk ([`walk`]), the index
//! as git reads it ([`index`], [`sparse`]), trees and packs ([`tree`]), the merge of the index
//! with the base tree ([`index_vs_base`]), untracked names ([`untracked`]) and the worktree diff
//! that puts them together ([`worktree`]). It knows nothing of runs or targets, and is held to
//! `git` by the differential tests (`tests/diff_oracle*`) and measured by `benches/diff.rs`, so
//! that it could become a crate of its own with them.
//!
//! The rest of `git` reaches it through [`super::Repo::worktree_changes`] and
//! [`super::Repo::tree_changes`].

pub(super) mod index;
mod index_vs_base;
mod reader;
pub(super) mod scope;
mod sparse;
pub(super) mod tree;
mod untracked;
#[cfg(unix)]
mod walk;
pub(super) mod worktree;

// What the engine's modules take from the rest of `git` (as `super::…`).
use super::{GitError, Result, path_string};
