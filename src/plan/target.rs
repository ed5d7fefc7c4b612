//! Targets: the repository paths a plan says the work must touch, and how changed paths are
//! matched against them.
//!
//! A target names paths the way a git pathspec does: `crates` is the path `crates` and everything
//! below it (`git diff -- crates`), whether it is a file or a directory; `crates/` is only the
//! directory's contents; a glob matches what it matches.

use globset::{GlobBuilder, GlobMatcher};
use serde::{Serialize, Serializer};

use super::show;

/// How a target spec matches changed paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetKind {
    /// A path and everything below it, as git reads a pathspec: the file `src/lib.rs`, or every
    /// path below the directory `crates`.
    Path,
    /// Any path below a directory; the spec ends with `/`.
    Dir,
    /// A glob in which `*` stays within one path component and `**` crosses them.
    Glob,
}

/// One entry of a plan's `targets` list.
#[derive(Debug, Clone)]
pub struct Target {
    /// Normalized: `docs/a.md`, `src/parser/` (a directory keeps its `/`), `tests/**/*.txt`.
    pub spec: String,
    pub kind: TargetKind,
    /// 1-based line of the entry in the plan file.
    pub line: usize,
    /// 1-based column (in characters) of the entry's value.
    pub column: usize,
    /// Compiled once at parse time so that an invalid glob is a plan error, not a runtime one.
    matcher: Option<GlobMatcher>,
}

/// Why a raw target was refused; `plan` adds the location.
pub(super) struct Rejection {
    pub message: String,
    pub hint: Option<String>,
}

impl Rejection {
    fn new(message: String, hint: Option<String>) -> Self {
        Self { message, hint }
    }
}

/// Parses one entry of a `protect:` list (the configuration's or a plan's) as a path pattern,
/// read as a target is: a path and what is below it, a directory ending in `/`, or a glob.
/// `!path` is refused: the list only ever adds protected paths. Returns the message and hint
/// of a refusal.
pub fn protected_pattern(raw: &str) -> Result<Target, (String, Option<String>)> {
    if let Some(rest) = raw.trim_start().strip_prefix('!') {
        return Err((
            format!("`!{rest}` would unprotect a path: `protect` can only add paths"),
            Some("a plan that targets a protected path may change it".into()),
        ));
    }
    Target::pattern(raw).map_err(|(message, hint)| {
        let message = match message.strip_prefix("target ") {
            Some(rest) => format!("protected path {rest}"),
            None => message,
        };
        (message, hint)
    })
}

/// Characters that make a spec a glob. A lone `]` or `}` matches itself in globset.
fn is_glob_char(c: char) -> bool {
    matches!(c, '*' | '?' | '[' | '{')
}

impl Target {
    /// Validates and normalizes one `targets` entry as written in the plan.
    pub(super) fn parse(raw: &str, line: usize, column: usize) -> Result<Self, Rejection> {
        let shown = show(raw);
        if raw.trim().is_empty() {
            return Err(Rejection::new("target is empty".to_owned(), None));
        }
        // Quoted YAML strings keep surrounding whitespace; it is never part of a real path
        // someone meant, and trimming it silently would hide a copy-paste accident.
        let trimmed = raw.trim();
        if trimmed != raw {
            return Err(Rejection::new(
                format!("target `{shown}` has leading or trailing whitespace"),
                Some(format!("remove it: `{}`", show(trimmed))),
            ));
        }
        if raw.chars().any(char::is_control) {
            return Err(Rejection::new(
                format!("target `{shown}` contains a control character"),
                None,
            ));
        }
        // A `Baton-Unchanged: <target>: <reason>` trailer ends the target at the first `: `, so
        // no trailer could name this target and `finish` would record its reason for another.
        if raw.contains(": ") {
            return Err(Rejection::new(
                format!(
                    "target `{shown}` contains `: `, which no `Baton-Unchanged` trailer can name"
                ),
                Some(format!(
                    "match the space with a glob: `{}`",
                    show(&raw.replace(": ", ":[ ]"))
                )),
            ));
        }
        if raw.starts_with('/') {
            return Err(Rejection::new(
                format!("target `{shown}` is an absolute path"),
                Some(format!(
                    "targets are relative to the repository root: `{}`",
                    show(raw.trim_start_matches('/'))
                )),
            ));
        }
        if raw.contains('\\') {
            return Err(Rejection::new(
                format!("target `{shown}` contains a backslash"),
                Some(format!(
                    "use '/' separators: `{}`",
                    show(&raw.replace('\\', "/"))
                )),
            ));
        }

        let last = raw.rsplit('/').next().unwrap_or_default();
        let components: Vec<&str> = raw
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        if components.contains(&"..") {
            return Err(Rejection::new(
                format!("target `{shown}` contains a `..` component"),
                Some("targets name paths inside the repository, relative to its root".to_owned()),
            ));
        }
        if components.iter().any(|c| c.eq_ignore_ascii_case(".git")) {
            return Err(Rejection::new(
                format!("target `{shown}` points into the `.git` directory"),
                Some("git's own files are never part of a change; remove this target".to_owned()),
            ));
        }
        if components.is_empty() || is_everything_glob(&components) {
            return Err(Rejection::new(
                format!("target `{shown}` names the whole repository"),
                Some("list the paths the work must touch".to_owned()),
            ));
        }

        let is_dir = last.is_empty() || last == ".";
        let joined = components.join("/");
        if !joined.contains(is_glob_char) {
            let (spec, kind) = if is_dir {
                (format!("{joined}/"), TargetKind::Dir)
            } else {
                (joined, TargetKind::Path)
            };
            return Ok(Self {
                spec,
                kind,
                line,
                column,
                matcher: None,
            });
        }

        // A glob ending in `/` names directories; a changed path matches when it is below one.
        let (spec, pattern) = if is_dir {
            (format!("{joined}/"), format!("{joined}/**"))
        } else {
            (joined.clone(), joined)
        };
        let glob = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| {
                Rejection::new(
                    format!("invalid glob `{shown}`: {}", e.kind()),
                    Some(
                        "to match `[`, `{`, `*` or `?` literally, wrap it in brackets, e.g. `[[]`"
                            .to_owned(),
                    ),
                )
            })?;
        Ok(Self {
            spec,
            kind: TargetKind::Glob,
            line,
            column,
            matcher: Some(glob.compile_matcher()),
        })
    }

    /// Parses a path pattern written outside a plan's `targets` (`protect:`), read as a target
    /// is; a refusal gives its message and hint, which name it a target.
    pub fn pattern(raw: &str) -> Result<Self, (String, Option<String>)> {
        Self::parse(raw, 0, 0).map_err(|r| (r.message, r.hint))
    }

    /// Whether a changed file, given as a repository-relative `/`-separated path, is covered.
    #[must_use]
    pub fn matches(&self, path: &str) -> bool {
        match self.kind {
            TargetKind::Path => is_at_or_below(path, &self.spec),
            TargetKind::Dir => path.starts_with(&self.spec),
            TargetKind::Glob => {
                self.matcher.as_ref().is_some_and(|m| m.is_match(path))
                    // File names like `pages/[id].tsx` read as globs but usually mean
                    // themselves; matching the literal path too keeps such targets satisfiable.
                    || self.literal_matches(path)
            }
        }
    }

    fn literal_matches(&self, path: &str) -> bool {
        if self.spec.ends_with('/') {
            path.starts_with(&self.spec)
        } else {
            path == self.spec
        }
    }

    /// The longest literal path prefix that contains every path the target can match: the
    /// path itself, the directory without its `/`, or a glob's leading literal directories
    /// (`""` when the first component already has a glob character).
    #[must_use]
    pub fn scope(&self) -> &str {
        match self.kind {
            TargetKind::Path => &self.spec,
            TargetKind::Dir => self.spec.strip_suffix('/').unwrap_or(&self.spec),
            TargetKind::Glob => {
                let mut end = 0;
                let mut start = 0;
                for (slash, _) in self.spec.match_indices('/') {
                    if self.spec[start..slash].contains(|c| is_glob_char(c) || c == '\\') {
                        break;
                    }
                    end = slash;
                    start = slash + 1;
                }
                &self.spec[..end]
            }
        }
    }
}

/// `path` is `spec` or below it (`crates/a.rs` for `crates`, not `crates-old/a.rs`).
fn is_at_or_below(path: &str, spec: &str) -> bool {
    path.strip_prefix(spec)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// `**`, `**/*` and the like: globs that cover every path, which defeats the purpose of a
/// target as surely as `.` does.
fn is_everything_glob(components: &[&str]) -> bool {
    match components.split_last() {
        Some((&"**", rest)) => rest.iter().all(|c| *c == "**"),
        Some((&"*", rest)) => !rest.is_empty() && rest.iter().all(|c| *c == "**"),
        _ => false,
    }
}

/// The matcher is derived from `spec`, so it takes no part in equality.
impl PartialEq for Target {
    fn eq(&self, other: &Self) -> bool {
        self.spec == other.spec
            && self.kind == other.kind
            && self.line == other.line
            && self.column == other.column
    }
}

impl Eq for Target {}

/// A target serializes as its normalized spec.
impl Serialize for Target {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.spec)
    }
}
