//! Renderers: a verification as text for people, JSON for scripts, GitHub workflow commands,
//! Markdown and SARIF for CI; a run's status, review, list and logs. Each is a pure function from the result
//! to a `String`; the caller decides where it goes.
//!
//! Text that agents and pull requests wrote reaches none of these outputs raw: the human formats
//! pass it through [`escape::line`], Markdown through [`markdown::text`] and [`markdown::code`],
//! GitHub workflow commands through their own escaping as well; JSON is exact.

pub mod bound;
pub mod check;
pub mod diff;
pub mod escape;
mod gate;
mod github;
pub mod list;
pub mod log;
pub mod markdown;
pub mod review;
pub mod rows;
mod sarif;
pub mod status;
pub mod targets;
pub mod width;

pub use gate::{VERIFY_SCHEMA_VERSION, VerifyJson, json, text};
pub use github::{GITHUB_ANNOTATION_LIMIT, github, stop_token};
pub use markdown::markdown;
pub use sarif::sarif;
