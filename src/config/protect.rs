//! `protect:` in `.baton.yml`: paths no attempt may change unless the run's plan targets them,
//! on top of the defaults — the plan file, `.baton.yml` itself and the usual CI configuration
//! files ([`DEFAULT_PROTECTED`]). The list is only ever added to: an empty `protect:` or an entry
//! that tries to unprotect (`!path`) is an error, so no configuration can switch the rule off.

use serde_saphyr::Spanned;

use super::ConfigError;
use crate::plan::protected_pattern as parse_entry;

/// The paths protected in every repository, each with what it is (for messages): git-baton's own
/// configuration, and where the common CI services read their pipelines from. A plan that
/// targets one of them may change it.
pub const DEFAULT_PROTECTED: [(&str, &str); 14] = [
    (super::FILE_NAME, "git-baton's configuration"),
    (".github/workflows/", "CI configuration"),
    (".github/actions/", "CI configuration"),
    (".gitlab-ci.yml", "CI configuration"),
    (".gitlab/ci/", "CI configuration"),
    (".circleci/", "CI configuration"),
    ("azure-pipelines.yml", "CI configuration"),
    ("Jenkinsfile", "CI configuration"),
    (".buildkite/", "CI configuration"),
    (".travis.yml", "CI configuration"),
    ("bitbucket-pipelines.yml", "CI configuration"),
    (".drone.yml", "CI configuration"),
    (".woodpecker.yml", "CI configuration"),
    (".woodpecker/", "CI configuration"),
];

/// The `protect:` key of `file`, added to `protect` (normalized specs, each once).
pub(super) fn apply(
    protect: &mut Vec<String>,
    file: &str,
    list: Spanned<Vec<Spanned<String>>>,
) -> Result<(), ConfigError> {
    let invalid = |line: u64, column: u64, message: String, hint: Option<String>| {
        ConfigError::at(file, (line, column), message, hint)
    };
    if list.value.is_empty() {
        return Err(invalid(
            list.referenced.line(),
            list.referenced.column(),
            "`protect` is empty: it adds paths to the protected ones, and cannot remove any".into(),
            Some("list paths to protect besides the defaults, or remove the key".into()),
        ));
    }
    for entry in list.value {
        let target = parse_entry(&entry.value).map_err(|(message, hint)| {
            invalid(
                entry.referenced.line(),
                entry.referenced.column(),
                message,
                hint,
            )
        })?;
        if !protect.contains(&target.spec) {
            protect.push(target.spec);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_as_targets_and_an_unprotecting_one_is_refused() {
        assert_eq!(parse_entry("deploy/").unwrap().spec, "deploy/");
        assert_eq!(parse_entry("./Makefile").unwrap().spec, "Makefile");
        assert!(parse_entry("ops/**/*.tf").unwrap().matches("ops/a/b.tf"));
        let (message, _) = parse_entry("!.baton.yml").unwrap_err();
        assert!(message.contains("can only add"), "{message}");
        let (message, _) = parse_entry("/etc").unwrap_err();
        assert_eq!(message, "protected path `/etc` is an absolute path");
    }

    #[test]
    fn the_configuration_adds_paths_and_cannot_empty_the_list() {
        let config =
            crate::config::parse(".baton.yml", "protect: [deploy/, ./Makefile, deploy]\n").unwrap();
        assert_eq!(config.protect, ["deploy/", "Makefile", "deploy"]);
        let err = |text: &str| {
            crate::config::parse(".baton.yml", text)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err("plans_dir: plans\nprotect: []\n"),
            ".baton.yml:2:10: `protect` is empty: it adds paths to the protected ones, and \
             cannot remove any"
        );
        assert_eq!(
            err("protect:\n  - deploy/\n  - \"!.baton.yml\"\n"),
            ".baton.yml:3:5: `!.baton.yml` would unprotect a path: `protect` can only add paths"
        );
        assert!(err("protect: deploy/\n").starts_with(".baton.yml:1:10: "));
    }

    #[test]
    fn every_default_is_a_valid_pattern() {
        for (spec, _) in DEFAULT_PROTECTED {
            assert_eq!(parse_entry(spec).unwrap().spec, spec);
        }
    }
}
