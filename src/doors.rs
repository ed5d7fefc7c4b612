//! The doors, and the tests that keep them: the one way a run changes, and the one module that
//! prints.
//!
//! [`layers`](crate) keeps imports pointing down; these keep two promises the layers alone
//! cannot. A run changes only through its session (`run::session`): its commit is the one
//! caller of the transition function, and only the session persists a RunState (through the
//! store and the record, and under the lease through the remote). And nothing below `cli`
//! prints: the layers hand typed notes and outcomes up, and the command line decides what is
//! shown — so a second `error:` policy cannot grow in a background thread. Nor does a module
//! below it choose a hint that names a git-baton command (its `fn hint` / `fn hints`): only the
//! command line knows the command line.
//!
//! Each rule names the files where a use is allowed, with the reason; a use anywhere else fails
//! the test with its file and line.

use crate::testing::{code_only, functions, without_comments};

/// A rule: code that matches `needle` may appear only in files under one of `allowed`.
struct Door {
    needle: &'static str,
    allowed: &'static [&'static str],
    why: &'static str,
}

const DOORS: &[Door] = &[
    Door {
        needle: "transition::apply",
        allowed: &["state/transition", "run/session/mod.rs"],
        why: "a run changes only through its session's commit",
    },
    Door {
        needle: "transition::{apply",
        allowed: &["state/transition", "run/session/mod.rs"],
        why: "a run changes only through its session's commit",
    },
    Door {
        needle: "record::save(",
        allowed: &["run/session/", "run/record.rs"],
        why: "only the session persists a RunState",
    },
    Door {
        needle: "remote::publish",
        allowed: &["run/session/"],
        why: "only the session publishes a RunState (and so writes it after the push)",
    },
    Door {
        // The store's writer of `state.json`. Creation writes the first state before any
        // session can exist; `record::save` is the session's own (kept by the door above);
        // `run::remote` writes what the session's publish pushed, and the record a catch-up
        // (the session's first step) takes from a remote.
        needle: "save_in(",
        allowed: &[
            "state/store/",
            "run/session/",
            "run/record.rs",
            "run/create.rs",
            "run/remote/",
        ],
        why: "only the session persists a RunState",
    },
    Door {
        needle: "session::published_as(",
        allowed: &["run/session/", "run/remote/"],
        why: "a remote's record is renamed for this clone only by catching up",
    },
];

/// What prints to the process's streams; only `cli` (and `term`, which implements it) may.
const PRINTING: &[&str] = &[
    "errln!",
    "err!(",
    "write_err(",
    "term::stdout(",
    "term::stderr(",
    "term::stdout_raw(",
    "term::echo(",
    "status::show(",
];

/// The `fn hint` and `fn hints` of `source` whose body names a git-baton command, a string
/// continued across lines (`git \` then `baton`) included; comments do not count.
fn hints_naming_commands(file: &str, source: &str) -> Vec<String> {
    let text = without_comments(source);
    let lines: Vec<&str> = text.lines().collect();
    functions(&code_only(source))
        .into_iter()
        .filter(|(name, _, _)| name == "hint" || name == "hints")
        .filter(|&(_, first, count)| {
            let body: Vec<&str> = lines[first - 1..first - 1 + count]
                .iter()
                .map(|line| line.trim().trim_end_matches('\\'))
                .collect();
            let words = body.join(" ");
            words
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .contains("git baton")
        })
        .map(|(_, first, _)| {
            format!(
                "{file}:{first}: a hint that names a git-baton command: only cli chooses those \
                 (cli/hints.rs)"
            )
        })
        .collect()
}

/// Every use in `source` (the file `file`, relative to `src/`) that a door does not allow.
fn breaches(file: &str, source: &str) -> Vec<String> {
    let below_cli = !file.starts_with("cli/") && !file.starts_with("term/");
    let mut found = if below_cli {
        hints_naming_commands(file, source)
    } else {
        Vec::new()
    };
    for (n, code) in without_comments(source).lines().enumerate() {
        let n = n + 1;
        let squeezed: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        for door in DOORS {
            if squeezed.contains(door.needle)
                && !door.allowed.iter().any(|allowed| file.starts_with(allowed))
            {
                found.push(format!("{file}:{n}: `{}`: {}", door.needle, door.why));
            }
        }
        if below_cli && let Some(print) = PRINTING.iter().find(|p| squeezed.contains(*p)) {
            found.push(format!(
                "{file}:{n}: `{print}`: only cli prints; hand a note or an outcome up"
            ));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sources;

    #[test]
    fn runs_change_only_through_their_session_and_only_cli_prints() {
        let problems: Vec<String> = sources()
            .iter()
            .filter(|(file, _)| !["main.rs", "doors.rs"].contains(&file.as_str()))
            .flat_map(|(file, source)| breaches(file, source))
            .collect();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// The print macros are denied by clippy; what clippy does not see is a raw handle written
    /// with `.unwrap()` or `?` somewhere. Only `term` names the process's streams.
    #[test]
    fn only_term_names_the_process_streams() {
        let mut found = Vec::new();
        for (file, source) in sources() {
            if ["term/mod.rs", "main.rs", "doors.rs"].contains(&file.as_str()) {
                continue;
            }
            for (n, code) in without_comments(&source).lines().enumerate() {
                if ["io::stdout()", "io::stderr()", "print!(", "println!("]
                    .iter()
                    .any(|raw| code.contains(raw))
                {
                    found.push(format!("{file}:{}: {}", n + 1, code.trim()));
                }
            }
        }
        assert!(
            found.is_empty(),
            "write through crate::term instead:\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn a_use_outside_its_door_is_found_and_comments_are_not() {
        let driver = "\
// transition::apply is the session's
fn f() { *state = transition::apply(state, event, at)?; }
use crate::state::transition::{ apply, Event };
";
        assert_eq!(
            breaches("run/mod.rs", driver),
            [
                "run/mod.rs:2: `transition::apply`: a run changes only through its session's commit",
                "run/mod.rs:3: `transition::{apply`: a run changes only through its session's commit",
            ]
        );
        assert!(breaches("run/session/mod.rs", driver).is_empty());
        assert_eq!(
            breaches("run/lease.rs", "    errln!(\"warning: {err}\");"),
            ["run/lease.rs:1: `errln!`: only cli prints; hand a note or an outcome up"]
        );
        assert!(breaches("cli/run.rs", "errln!(\"run {id}\");").is_empty());
        assert_eq!(
            breaches("run/create.rs", "store::save_in(&dir, &state)?;").len(),
            0
        );
        assert_eq!(
            breaches("run/doctor/fix.rs", "store::save_in(&dir, &state)?;").len(),
            1
        );
    }

    #[test]
    fn a_hint_below_cli_that_names_a_command_is_found() {
        let error = r#"
impl E {
    pub fn hint(&self) -> Option<String> {
        // `git baton doctor` in a comment is no hint
        Some("run `git baton doctor`".into())
    }

    pub fn hints<'a>(&'a self) -> Vec<String> {
        vec!["the command `git \
              baton finish` writes it".into()]
    }
    fn hint(&self) -> &str { "`git baton run <PLAN>`" }
    fn hints(&self) -> Vec<String> { Vec::new() }
}
trait Hinted {
    fn hint(&self) -> Option<String>;
}
fn message() -> &'static str {
    "`git baton run` made it"
}
"#;
        let breach = |line: usize| {
            format!(
                "git/error.rs:{line}: a hint that names a git-baton command: only cli chooses \
                 those (cli/hints.rs)"
            )
        };
        assert_eq!(
            breaches("git/error.rs", error),
            [breach(3), breach(8), breach(12)]
        );
        assert!(breaches("cli/hints.rs", error).is_empty());
    }
}
