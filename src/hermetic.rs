//! The hermetic environment for child processes (git, and git-baton itself) that must see the
//! same world on every machine: the demo, the integration tests and the benchmarks share it.
//!
//! The caller's environment is cleared except for `PATH` (to find git and sh) and whatever is
//! kept on purpose; `HOME` and `XDG_CONFIG_HOME` point into a directory the caller owns, so no
//! user configuration, credential helper or hook of the machine leaks in; there is no system git
//! configuration and the global one is a file of the caller's choice; the identity is fixed, and
//! so are, unless asked otherwise, the author and committer dates, so that commit ids repeat
//! from one run to the next; `LC_ALL=C` and `TZ=UTC` make messages and times the same
//! everywhere.
//!
//! git-branchless keeps its test harness in its library for the same reason: one definition of
//! "hermetic", used by everything that needs it, instead of copies that drift apart.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The date every commit made with pinned dates carries.
pub const PINNED_DATE: &str = "2026-01-01T00:00:00Z";

/// A name and an email address, as git records them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub name: String,
    pub email: String,
}

impl Person {
    #[must_use]
    pub fn new(name: &str, email: &str) -> Person {
        Person {
            name: name.to_owned(),
            email: email.to_owned(),
        }
    }
}

/// The hermetic environment; [`Hermetic::apply`] gives it to a command.
#[derive(Debug, Clone)]
pub struct Hermetic {
    home: PathBuf,
    global_config: PathBuf,
    author: Person,
    committer: Person,
    pinned_dates: bool,
    kept: Vec<&'static str>,
}

impl Hermetic {
    /// `HOME` at `home` (with `home/.config` as `XDG_CONFIG_HOME` and `home/.gitconfig` as the
    /// global git configuration), `git-baton <git-baton@localhost>` as author and committer,
    /// pinned dates, and nothing of the caller's environment but `PATH`.
    #[must_use]
    pub fn new(home: &Path) -> Hermetic {
        let someone = Person::new("git-baton", "git-baton@localhost");
        Hermetic {
            home: home.to_owned(),
            global_config: home.join(".gitconfig"),
            author: someone.clone(),
            committer: someone,
            pinned_dates: true,
            kept: vec!["PATH"],
        }
    }

    /// Who authors and who commits.
    #[must_use]
    pub fn identity(mut self, author: Person, committer: Person) -> Hermetic {
        self.author = author;
        self.committer = committer;
        self
    }

    /// Another global git configuration file than `home/.gitconfig` (`/dev/null` for none).
    #[must_use]
    pub fn global_config(mut self, path: impl Into<PathBuf>) -> Hermetic {
        self.global_config = path.into();
        self
    }

    /// Leaves the dates to git (the current time): for commits whose ids need not repeat.
    #[must_use]
    pub fn unpinned_dates(mut self) -> Hermetic {
        self.pinned_dates = false;
        self
    }

    /// Passes the caller's variable `name` through, when it is set (`TMPDIR`, `RUST_BACKTRACE`).
    #[must_use]
    pub fn keep(mut self, name: &'static str) -> Hermetic {
        self.kept.push(name);
        self
    }

    /// The directory `HOME` names.
    #[must_use]
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// A command for `program` with this environment and no other.
    #[must_use]
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        self.apply(&mut cmd);
        cmd
    }

    /// Clears `cmd`'s environment and sets this one. Variables the caller sets on `cmd`
    /// afterwards are added on top.
    pub fn apply<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        cmd.env_clear();
        for (name, value) in self.vars() {
            cmd.env(name, value);
        }
        cmd
    }

    /// The variables [`Hermetic::apply`] sets, in order.
    #[must_use]
    pub fn vars(&self) -> Vec<(&'static str, OsString)> {
        let mut vars: Vec<(&'static str, OsString)> = self
            .kept
            .iter()
            .filter_map(|name| std::env::var_os(name).map(|value| (*name, value)))
            .collect();
        let home = &self.home;
        vars.extend([
            ("HOME", home.as_os_str().to_owned()),
            ("XDG_CONFIG_HOME", home.join(".config").into_os_string()),
            ("GIT_CONFIG_NOSYSTEM", "1".into()),
            (
                "GIT_CONFIG_GLOBAL",
                self.global_config.clone().into_os_string(),
            ),
            ("GIT_AUTHOR_NAME", self.author.name.clone().into()),
            ("GIT_AUTHOR_EMAIL", self.author.email.clone().into()),
            ("GIT_COMMITTER_NAME", self.committer.name.clone().into()),
            ("GIT_COMMITTER_EMAIL", self.committer.email.clone().into()),
            ("LC_ALL", "C".into()),
            ("TZ", "UTC".into()),
        ]);
        if self.pinned_dates {
            vars.extend(pinned_dates());
        }
        vars
    }
}

/// `GIT_AUTHOR_DATE` and `GIT_COMMITTER_DATE` at [`PINNED_DATE`], for a command of an
/// environment with unpinned dates that must still make a commit whose id repeats.
#[must_use]
pub fn pinned_dates() -> [(&'static str, OsString); 2] {
    [
        ("GIT_AUTHOR_DATE", PINNED_DATE.into()),
        ("GIT_COMMITTER_DATE", PINNED_DATE.into()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(env: &Hermetic) -> Vec<&'static str> {
        env.vars().into_iter().map(|(name, _)| name).collect()
    }

    #[test]
    fn a_command_sees_only_the_hermetic_environment() {
        let env = Hermetic::new(Path::new("/h"));
        let cmd = env.command("git");
        let set: Vec<(String, String)> = cmd
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v?.to_str()?.to_owned())))
            .filter(|(k, _)| k != "PATH")
            .collect();
        let expected = [
            ("HOME", "/h"),
            ("XDG_CONFIG_HOME", "/h/.config"),
            ("GIT_CONFIG_NOSYSTEM", "1"),
            ("GIT_CONFIG_GLOBAL", "/h/.gitconfig"),
            ("GIT_AUTHOR_NAME", "git-baton"),
            ("GIT_AUTHOR_EMAIL", "git-baton@localhost"),
            ("GIT_COMMITTER_NAME", "git-baton"),
            ("GIT_COMMITTER_EMAIL", "git-baton@localhost"),
            ("LC_ALL", "C"),
            ("TZ", "UTC"),
            ("GIT_AUTHOR_DATE", PINNED_DATE),
            ("GIT_COMMITTER_DATE", PINNED_DATE),
        ];
        let mut expected: Vec<(String, String)> = expected
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let mut set = set;
        set.sort();
        expected.sort();
        assert_eq!(set, expected);
    }

    #[test]
    fn options_change_identity_configuration_dates_and_what_is_kept() {
        let env = Hermetic::new(Path::new("/h"))
            .identity(Person::new("A", "a@x"), Person::new("C", "c@x"))
            .global_config("/dev/null")
            .unpinned_dates()
            .keep("GIT_BATON_HERMETIC_SURELY_UNSET");
        let vars = env.vars();
        let get = |name: &str| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_str().unwrap().to_owned())
        };
        assert_eq!(get("GIT_AUTHOR_NAME").as_deref(), Some("A"));
        assert_eq!(get("GIT_COMMITTER_EMAIL").as_deref(), Some("c@x"));
        assert_eq!(get("GIT_CONFIG_GLOBAL").as_deref(), Some("/dev/null"));
        assert!(!names(&env).contains(&"GIT_AUTHOR_DATE"));
        // A kept variable that the caller does not set is not set either.
        assert!(!names(&env).contains(&"GIT_BATON_HERMETIC_SURELY_UNSET"));
    }
}
