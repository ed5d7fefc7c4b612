//! The repository extensions (`extensions.*` of the repository's own config) git-baton can
//! honour. gix opens a repository whose refs are in the reftable format, or that declares an
//! extension nobody knows, as if it were an ordinary one, and every ref then looks missing:
//! such a repository is refused as what it is instead, by git's own rules of which extension
//! needs which `core.repositoryformatversion`.

use std::fmt;

/// What a repository asks that this build cannot give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnsupportedFormat {
    /// `extensions.refStorage` names a ref format other than `files` (git's `reftable`).
    RefFormat(String),
    /// `core.repositoryformatversion` above 1, which no git knows either.
    Version(i64),
    /// An extension git-baton cannot honour: one it does not know (under version 1, where git
    /// refuses it too), a version-1 one in a version-0 repository, or one it knows it cannot
    /// keep (`compatObjectFormat`: the objects it writes would lack their second names).
    Extension { key: String, value: String },
}

impl fmt::Display for UnsupportedFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnsupportedFormat::RefFormat(format) => {
                write!(f, "stores its refs in the {format} format")
            }
            UnsupportedFormat::Version(version) => {
                write!(f, "has repository format version {version}")
            }
            UnsupportedFormat::Extension { key, value } => {
                write!(f, "declares the extension `extensions.{key} = {value}`")
            }
        }
    }
}

impl UnsupportedFormat {
    pub fn hint(&self) -> String {
        match self {
            UnsupportedFormat::RefFormat(_) => "git-baton reads the `files` ref format, git's default; \
                 `git refs migrate --ref-format=files` converts a repository (git 2.46 or later)"
                .into(),
            UnsupportedFormat::Version(_) | UnsupportedFormat::Extension { .. } => {
                "`git config --local --get-regexp '^(core\\.repositoryformatversion|extensions\\.)'` \
                 shows what the repository declares"
                    .into()
            }
        }
    }
}

/// Extensions git honours in a repository of either version.
const ANY_VERSION: &[&str] = &["noop", "preciousobjects", "partialclone", "worktreeconfig"];
/// Extensions git honours only with `core.repositoryformatversion = 1`.
const VERSION_1: &[&str] = &[
    "noop-v1",
    "objectformat",
    "refstorage",
    "relativeworktrees",
    "compatobjectformat",
];

/// The first thing of `extensions` (name and value, as the repository's config has them) that
/// git-baton cannot honour, in a repository of format `version`; `None` when it can open it.
/// `objectFormat` passes here: opening the repository refused a format other than SHA-1.
pub fn refusal(version: i64, extensions: &[(String, String)]) -> Option<UnsupportedFormat> {
    if version > 1 {
        return Some(UnsupportedFormat::Version(version));
    }
    for (key, value) in extensions {
        let name = key.to_ascii_lowercase();
        let refused = || UnsupportedFormat::Extension {
            key: key.clone(),
            value: value.clone(),
        };
        if ANY_VERSION.contains(&name.as_str()) {
            continue;
        }
        if !VERSION_1.contains(&name.as_str()) {
            // git ignores unknown extensions in a version-0 repository, and refuses them in a
            // version-1 one.
            if version == 1 {
                return Some(refused());
            }
            continue;
        }
        if version == 0 {
            return Some(refused());
        }
        match name.as_str() {
            "refstorage" if !value.eq_ignore_ascii_case("files") => {
                return Some(UnsupportedFormat::RefFormat(value.clone()));
            }
            "compatobjectformat" => return Some(refused()),
            _ => {}
        }
    }
    None
}

/// [`refusal`] of what the repository's own config file declares: git reads the format from
/// there (the common directory's `config`), never from the global or worktree files.
pub(super) fn unsupported(repo: &gix::Repository) -> Option<UnsupportedFormat> {
    let config = repo.config_snapshot();
    let file = config.plumbing();
    let local = |section: &gix::config::file::SectionRef<'_>| {
        section.meta().source == gix::config::Source::Local
    };
    let version = file
        .sections_by_name("core")
        .into_iter()
        .flatten()
        .filter(local)
        .filter_map(|section| section.value("repositoryformatversion"))
        .last()
        .and_then(|value| value.to_string().trim().parse::<i64>().ok())
        .unwrap_or(0);
    let mut extensions = Vec::new();
    for section in file.sections_by_name("extensions").into_iter().flatten() {
        if !local(&section) || section.header().subsection_name().is_some() {
            continue;
        }
        for name in section.value_names() {
            let value = section
                .value(&name)
                .map(|v| v.to_string())
                .unwrap_or_default();
            extensions.push((name, value));
        }
    }
    refusal(version, &extensions)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn what_git_reads_the_same_way_passes() {
        for (version, pairs) in [
            (0, of(&[])),
            (
                0,
                of(&[("worktreeConfig", "true"), ("partialClone", "origin")]),
            ),
            (0, of(&[("someFutureThing", "x")])),
            (1, of(&[("objectFormat", "sha1"), ("refStorage", "files")])),
            (1, of(&[("noop-v1", "x"), ("relativeWorktrees", "true")])),
        ] {
            assert_eq!(refusal(version, &pairs), None, "{version} {pairs:?}");
        }
    }

    #[test]
    fn what_it_cannot_honour_is_named() {
        let ext = |k: &str, v: &str| UnsupportedFormat::Extension {
            key: k.into(),
            value: v.into(),
        };
        for (version, pairs, refused) in [
            (
                1,
                of(&[("refStorage", "reftable")]),
                UnsupportedFormat::RefFormat("reftable".into()),
            ),
            (2, of(&[]), UnsupportedFormat::Version(2)),
            (1, of(&[("futureThing", "on")]), ext("futureThing", "on")),
            (
                0,
                of(&[("refStorage", "files")]),
                ext("refStorage", "files"),
            ),
            (
                1,
                of(&[("compatObjectFormat", "sha256")]),
                ext("compatObjectFormat", "sha256"),
            ),
        ] {
            assert_eq!(
                refusal(version, &pairs),
                Some(refused),
                "{version} {pairs:?}"
            );
        }
        assert_eq!(
            UnsupportedFormat::RefFormat("reftable".into()).to_string(),
            "stores its refs in the reftable format"
        );
    }
}
