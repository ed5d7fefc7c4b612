//! The argv template of an actor: `{name}` placeholders, expanded element by element.
//!
//! There is no shell and no quoting: a value lands in exactly the argument that named it, spaces
//! and all, and is not itself scanned for placeholders (a path containing `{x}` stays as it is).

use super::{ActorSpec, ExecError};

/// Every placeholder a caller of [`super::run`] may supply.
pub const PLACEHOLDERS: [&str; 8] = [
    "prompt_file",
    "evidence_file",
    "attempt_dir",
    "worktree",
    "git_common_dir",
    "run_id",
    "stage",
    "attempt",
];

/// Checks an actor's command without running it (e.g. when the configuration is loaded): not
/// empty, and only known placeholders.
pub fn check_command(actor: &ActorSpec) -> Result<(), ExecError> {
    let values: Vec<(&'static str, String)> = PLACEHOLDERS
        .iter()
        .map(|name| (*name, String::new()))
        .collect();
    expand(actor, &values).map(drop)
}

/// The argv with every placeholder replaced by its value from `values`.
pub(super) fn expand(
    actor: &ActorSpec,
    values: &[(&'static str, String)],
) -> Result<Vec<String>, ExecError> {
    if actor.command.is_empty() {
        return Err(ExecError::EmptyCommand {
            actor: actor.name.clone(),
        });
    }
    actor
        .command
        .iter()
        .map(|arg| {
            expand_arg(arg, values).map_err(|name| ExecError::UnknownPlaceholder {
                actor: actor.name.clone(),
                name: name.to_owned(),
            })
        })
        .collect()
}

/// Expands one argument; `Err` carries the name of a placeholder without a value.
fn expand_arg<'a>(arg: &'a str, values: &[(&'static str, String)]) -> Result<String, &'a str> {
    let mut out = String::with_capacity(arg.len());
    let mut rest = arg;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name = after.find('}').map(|close| &after[..close]);
        match name.filter(|name| is_placeholder_name(name)) {
            Some(name) => {
                let (_, value) = values.iter().find(|(key, _)| *key == name).ok_or(name)?;
                out.push_str(value);
                rest = &after[name.len() + 1..];
            }
            // Not a placeholder (JSON, shell-like `${x}` text…): keep the brace.
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

fn is_placeholder_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> Vec<(&'static str, String)> {
        vec![("stage", "review".into()), ("attempt", "2".into())]
    }

    #[test]
    fn placeholders_expand_anywhere_in_an_argument() {
        let got = expand_arg("--x={stage}/{attempt}{stage}", &values());
        assert_eq!(got.as_deref(), Ok("--x=review/2review"));
    }

    #[test]
    fn braces_that_are_not_placeholders_stay() {
        for arg in [
            "{\"a\": 1}",
            "{}",
            "${ HOME }",
            "{",
            "}{",
            "{a-b}",
            "{{stage}",
        ] {
            let want = arg.replace("{stage}", "review");
            assert_eq!(
                expand_arg(arg, &values()).as_deref(),
                Ok(want.as_str()),
                "{arg}"
            );
        }
    }

    #[test]
    fn values_are_not_rescanned() {
        let values = vec![("stage", "{attempt}".into())];
        assert_eq!(expand_arg("{stage}", &values).as_deref(), Ok("{attempt}"));
    }

    #[test]
    fn unknown_placeholders_are_named() {
        assert_eq!(expand_arg("a{stag}b", &values()), Err("stag"));
    }

    #[test]
    fn check_knows_every_placeholder() {
        let mut actor = ActorSpec {
            name: "x".into(),
            command: PLACEHOLDERS.iter().map(|p| format!("{{{p}}}")).collect(),
            stdin_prompt: false,
            env: Vec::new(),
            timeout: None,
            rate_limit: Default::default(),
            output: Default::default(),
        };
        assert!(check_command(&actor).is_ok());
        actor.command.push("{worktre}".into());
        let err = check_command(&actor).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown placeholder `{worktre}` in the command of actor `x`"
        );
    }
}
