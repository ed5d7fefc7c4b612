//! The plans `run PLAN…` names: each argument a plan file, or a glob the shell left as it was
//! (quoted, `'plans/*.md'`, or a shell that does not expand), expanded here relative to the
//! current directory as a shell would: files only, sorted by name, `*` not crossing `/`, names
//! starting with `.` only where the pattern itself starts a component with `.`. The walk is
//! bounded, so that a pattern under a huge tree stops with an error instead of reading it all.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

/// How many directory entries one pattern may read before its walk stops.
pub const WALK_LIMIT: usize = 20_000;

#[derive(Debug, thiserror::Error)]
pub enum PlansError {
    #[error("no plan matches `{pattern}`")]
    NoMatch { pattern: String },
    #[error("invalid glob `{pattern}`: {reason}")]
    BadGlob { pattern: String, reason: String },
    #[error(
        "`{pattern}` reads more than {limit} entries under `{base}`: name the plans more narrowly"
    )]
    TooMany {
        pattern: String,
        base: String,
        limit: usize,
    },
    #[error("cannot read directory `{}` for `{pattern}`", .path.display())]
    Io {
        pattern: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The plan files `args` name, relative to `cwd` as named: a name that exists, or has no glob
/// character, as it is; a glob as the files it matches, sorted. A file named twice is kept once,
/// where it was first named.
pub fn expand(cwd: &Path, args: &[PathBuf]) -> Result<Vec<PathBuf>, PlansError> {
    let mut plans: Vec<PathBuf> = Vec::new();
    for arg in args {
        let found = match arg.to_str() {
            Some(pattern) if is_glob(pattern) && !cwd.join(arg).exists() => {
                matching(cwd, pattern, WALK_LIMIT)?
            }
            _ => vec![arg.clone()],
        };
        for plan in found {
            if !plans.contains(&plan) {
                plans.push(plan);
            }
        }
    }
    Ok(plans)
}

/// Whether `text` holds a character that makes it a glob (as a plan's targets do).
fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '[', '{'])
}

/// `pattern` cut where its first component with a glob character starts: the directory to walk
/// (empty for the current one) and the pattern below it.
fn split(pattern: &str) -> (PathBuf, String) {
    let mut base = PathBuf::new();
    let mut rest: Vec<&str> = Vec::new();
    for part in pattern.split('/') {
        if rest.is_empty() && !is_glob(part) {
            match part {
                "" if base.as_os_str().is_empty() => base.push("/"),
                "" => {}
                _ => base.push(part),
            }
        } else if !part.is_empty() {
            rest.push(part);
        }
    }
    (base, rest.join("/"))
}

/// The files under `cwd` that `pattern` matches, as paths relative to `cwd`, sorted.
fn matching(cwd: &Path, pattern: &str, limit: usize) -> Result<Vec<PathBuf>, PlansError> {
    let (base, rest) = split(pattern);
    let glob = GlobBuilder::new(&rest)
        .literal_separator(true)
        .build()
        .map_err(|err| PlansError::BadGlob {
            pattern: pattern.to_owned(),
            reason: err.kind().to_string(),
        })?;
    let walk = Walk {
        matcher: glob.compile_matcher(),
        // `**` reaches any depth; otherwise no deeper than the pattern's components.
        depth: match rest.contains("**") {
            true => usize::MAX,
            false => rest.split('/').count(),
        },
        hidden: rest.split('/').any(|part| part.starts_with('.')),
        limit,
    };
    let mut found = Vec::new();
    let mut read = 0;
    walk.dir(&cwd.join(&base), Path::new(""), 1, &mut read, &mut found)
        .map_err(|err| match err {
            Stop::Io(path, source) => PlansError::Io {
                pattern: pattern.to_owned(),
                path,
                source,
            },
            Stop::Limit => PlansError::TooMany {
                pattern: pattern.to_owned(),
                base: shown(&base),
                limit,
            },
        })?;
    if found.is_empty() {
        return Err(PlansError::NoMatch {
            pattern: pattern.to_owned(),
        });
    }
    found.sort();
    Ok(found.into_iter().map(|rel| base.join(rel)).collect())
}

/// The walk's base as a message names it: `.` for the current directory.
fn shown(base: &Path) -> String {
    match base.as_os_str().is_empty() {
        true => ".".to_owned(),
        false => base.display().to_string(),
    }
}

struct Walk {
    matcher: GlobMatcher,
    depth: usize,
    hidden: bool,
    limit: usize,
}

enum Stop {
    Io(PathBuf, std::io::Error),
    Limit,
}

impl Walk {
    /// Adds the files below `dir` (`rel` below the walk's base) that match, descending into
    /// directories but not into symbolic links to them, so that a link cycle cannot loop.
    fn dir(
        &self,
        dir: &Path,
        rel: &Path,
        depth: usize,
        read: &mut usize,
        found: &mut Vec<PathBuf>,
    ) -> Result<(), Stop> {
        let entries = std::fs::read_dir(dir).map_err(|err| Stop::Io(dir.to_path_buf(), err))?;
        for entry in entries {
            *read += 1;
            if *read > self.limit {
                return Err(Stop::Limit);
            }
            let entry = entry.map_err(|err| Stop::Io(dir.to_path_buf(), err))?;
            let name = entry.file_name();
            if !self.hidden && name.to_string_lossy().starts_with('.') {
                continue;
            }
            let path = rel.join(&name);
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if depth < self.depth {
                    self.dir(&entry.path(), &path, depth + 1, read, found)?;
                }
            } else if entry.path().is_file() && self.matcher.is_match(&path) {
                found.push(path);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_is_cut_at_its_first_glob_component() {
        assert_eq!(split("plans/*.md"), (PathBuf::from("plans"), "*.md".into()));
        assert_eq!(split("*.md"), (PathBuf::new(), "*.md".into()));
        assert_eq!(
            split("a/b/{x,y}/c*.md"),
            (PathBuf::from("a/b"), "{x,y}/c*.md".into())
        );
        assert_eq!(
            split("/tmp/p/*.md"),
            (PathBuf::from("/tmp/p"), "*.md".into())
        );
        assert_eq!(
            split("plans//**/*.md"),
            (PathBuf::from("plans"), "**/*.md".into())
        );
    }

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        dir
    }

    fn names(found: Vec<PathBuf>) -> Vec<String> {
        found.iter().map(|p| p.display().to_string()).collect()
    }

    #[test]
    fn globs_match_files_as_a_shell_would_sorted() {
        let dir = tree(&[
            "plans/b.md",
            "plans/a.md",
            "plans/.hidden.md",
            "plans/sub/c.md",
            "plans/notes.txt",
            "other/d.md",
        ]);
        let cwd = dir.path();
        let expanded = |args: &[&str]| {
            let args: Vec<PathBuf> = args.iter().map(PathBuf::from).collect();
            expand(cwd, &args).map(names)
        };
        assert_eq!(
            expanded(&["plans/*.md"]).unwrap(),
            ["plans/a.md", "plans/b.md"]
        );
        assert_eq!(
            expanded(&["plans/**/*.md"]).unwrap(),
            ["plans/a.md", "plans/b.md", "plans/sub/c.md"]
        );
        assert_eq!(expanded(&["plans/.*.md"]).unwrap(), ["plans/.hidden.md"]);
        assert_eq!(expanded(&["*/d.md"]).unwrap(), ["other/d.md"]);
        // Named twice, kept once, where first named; a name without glob characters as it is.
        assert_eq!(
            expanded(&["plans/b.md", "plans/*.md", "missing.md"]).unwrap(),
            ["plans/b.md", "plans/a.md", "missing.md"]
        );
        let none = expanded(&["plans/*.yml"]).unwrap_err();
        assert_eq!(none.to_string(), "no plan matches `plans/*.yml`");
        let bad = expanded(&["plans/[.md"]).unwrap_err();
        assert!(
            bad.to_string().starts_with("invalid glob `plans/[.md`"),
            "{bad}"
        );
    }

    #[test]
    fn a_file_whose_name_looks_like_a_glob_is_that_file() {
        let dir = tree(&["plans/[draft].md", "plans/d.md"]);
        let args = [PathBuf::from("plans/[draft].md")];
        assert_eq!(
            names(expand(dir.path(), &args).unwrap()),
            ["plans/[draft].md"]
        );
    }

    #[test]
    fn the_walk_stops_at_its_limit() {
        let files: Vec<String> = (0..30).map(|n| format!("p/{n}.md")).collect();
        let dir = tree(&files.iter().map(String::as_str).collect::<Vec<_>>());
        let err = matching(dir.path(), "p/*.md", 10).unwrap_err();
        assert_eq!(
            err.to_string(),
            "`p/*.md` reads more than 10 entries under `p`: name the plans more narrowly"
        );
        assert_eq!(matching(dir.path(), "p/*.md", 30).unwrap().len(), 30);
    }
}
