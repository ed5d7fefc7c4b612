//! `checks:` — commands git-baton itself runs in a run's worktree after the actor exits and
//! before the gate decides (docs/checks.md). Top-level checks apply to every gated stage; a
//! stage's own `checks:` to that stage, gated or not; a plan may add checks of its own to the
//! gated stages, never redefine the repository's.

use std::time::Duration;

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::{Config, ConfigError, DurationValue, parse_duration};
use crate::plan::{Plan, PlanCheck, PlanError};
use crate::state::checks::{MAX_NAME, is_check_name};

/// How long a check runs before it is killed, unless it says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// A check as git-baton runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckSpec {
    pub name: String,
    /// The argv, run without a shell; a `shell:` check is `sh -c <text>`.
    pub command: Vec<String>,
    pub timeout: Duration,
    /// Where it was defined, `file:line:column`, for messages.
    pub origin: String,
}

/// One entry of a `checks:` list.
#[derive(Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct RawCheck {
    /// The check's name: `[a-z0-9][a-z0-9_-]*`, at most 64 characters; unique among the
    /// checks that apply to a stage.
    #[cfg_attr(test, schemars(with = "String"))]
    name: Spanned<String>,
    /// The program and its arguments (argv, never a shell string), run in the run's worktree.
    /// No placeholders are expanded; the `BATON_*` variables are set.
    #[cfg_attr(test, schemars(with = "Option<Vec<String>>", length(min = 1)))]
    command: Option<Spanned<Vec<String>>>,
    /// A shell command line, run as `sh -c` — only when written so; give `command` or `shell`.
    #[cfg_attr(test, schemars(with = "Option<String>"))]
    shell: Option<Spanned<String>>,
    /// How long it may run before it is killed with its process group: seconds or a duration
    /// (`90s`, `10m`); default `10m`.
    #[cfg_attr(test, schemars(with = "Option<DurationValue>"))]
    timeout: Option<Spanned<DurationValue>>,
}

/// Reads a `checks:` list of `file`; `taken` holds names already defined that these may not
/// reuse (the top-level checks, for a stage's).
pub(super) fn read(
    file: &str,
    raw: Vec<Spanned<RawCheck>>,
    taken: &[CheckSpec],
) -> Result<Vec<CheckSpec>, ConfigError> {
    let mut checks: Vec<CheckSpec> = Vec::new();
    for entry in raw {
        let at = |line: u64, column: u64| (file.to_string(), line, column);
        let entry_at = at(entry.referenced.line(), entry.referenced.column());
        let raw = entry.value;
        let name = raw.name.value.clone();
        let name_at = at(raw.name.referenced.line(), raw.name.referenced.column());
        if !is_check_name(&name) {
            return Err(invalid(
                name_at,
                format!(
                    "check name `{}` must match [a-z0-9][a-z0-9_-]*",
                    name.escape_debug()
                ),
                &format!("at most {MAX_NAME} characters: it names the check's log files"),
            ));
        }
        if let Some(first) = checks.iter().chain(taken).find(|c| c.name == name) {
            return Err(invalid(
                name_at,
                format!("check `{name}` is defined twice, first at {}", first.origin),
                "give each check its own name",
            ));
        }
        let what = format!("check `{name}`");
        let command = command_of(file, &what, entry_at, raw.command, raw.shell)?;
        let timeout = timeout_of(file, &what, raw.timeout, DEFAULT_TIMEOUT)?;
        let (file, line, column) = name_at;
        checks.push(CheckSpec {
            name,
            command,
            timeout,
            origin: format!("{file}:{line}:{column}"),
        });
    }
    Ok(checks)
}

/// The argv of a command git-baton runs (a check, `notify:`), written as `command` (argv) or
/// `shell` (a line run by `sh -c`), exactly one of them; `what` names it in messages (``check
/// `tests` ``), `entry_at` is where its entry starts (`file`, line, column).
pub(super) fn command_of(
    file: &str,
    what: &str,
    entry_at: (String, u64, u64),
    command: Option<Spanned<Vec<String>>>,
    shell: Option<Spanned<String>>,
) -> Result<Vec<String>, ConfigError> {
    let at = |value: (u64, u64)| (file.to_string(), value.0, value.1);
    let span = |s: &serde_saphyr::Location| (s.line(), s.column());
    match (command, shell) {
        (Some(command), None) => {
            if command.value.first().is_none_or(|p| p.trim().is_empty()) {
                return Err(invalid(
                    at(span(&command.referenced)),
                    format!("{what} has an empty `command`"),
                    "give the program and its arguments as a list, e.g. `command: [cargo, test]`",
                ));
            }
            Ok(command.value)
        }
        (None, Some(shell)) if !shell.value.trim().is_empty() => {
            Ok(vec!["sh".into(), "-c".into(), shell.value])
        }
        (None, Some(shell)) => Err(invalid(
            at(span(&shell.referenced)),
            format!("{what} has an empty `shell`"),
            "",
        )),
        (Some(_), Some(shell)) => Err(invalid(
            at(span(&shell.referenced)),
            format!("{what} has both `command` and `shell`"),
            "give the argv as `command`, or a shell line as `shell`, not both",
        )),
        (None, None) => Err(invalid(
            entry_at,
            format!("{what} has no `command`"),
            "give the argv (`command: [cargo, test]`) or a shell line (`shell: \"make check\"`)",
        )),
    }
}

/// A command's `timeout`, `default` when none is written; `what` names it in messages.
pub(super) fn timeout_of(
    file: &str,
    what: &str,
    timeout: Option<Spanned<DurationValue>>,
    default: Duration,
) -> Result<Duration, ConfigError> {
    let Some(t) = timeout else {
        return Ok(default);
    };
    parse_duration(&t.value).map_err(|reason| {
        invalid(
            (file.to_string(), t.referenced.line(), t.referenced.column()),
            format!("{what} has an invalid `timeout`: {reason}"),
            crate::duration::HINT,
        )
    })
}

/// A located error; an empty `hint` is none.
fn invalid((file, line, column): (String, u64, u64), message: String, hint: &str) -> ConfigError {
    ConfigError::at(
        file,
        (line, column),
        message,
        (!hint.is_empty()).then(|| hint.to_string()),
    )
}

/// A plan's checks as git-baton runs them.
fn from_plan(plan_file: &str, check: &PlanCheck) -> CheckSpec {
    CheckSpec {
        name: check.name.clone(),
        command: check.command.clone(),
        timeout: check.timeout.unwrap_or(DEFAULT_TIMEOUT),
        origin: format!("{plan_file}:{}:{}", check.line, check.column),
    }
}

impl Config {
    /// Every check the repository defines, top-level and per stage.
    fn repo_checks(&self) -> impl Iterator<Item = &CheckSpec> {
        self.checks
            .iter()
            .chain(self.stage_checks.values().flatten())
    }

    /// The checks an attempt of `stage` runs, in order: the top-level ones when it is gated,
    /// its own, then — when it is gated — the plan's (`plan_file` names the plan in messages).
    /// A plan check named like one of the repository's is left out: the repository's stands
    /// (creation refuses such a plan, see [`Config::plan_check_conflict`]).
    pub fn checks_for(
        &self,
        stage: &str,
        gated: bool,
        plan: &Plan,
        plan_file: &str,
    ) -> Vec<CheckSpec> {
        let mut checks: Vec<CheckSpec> = Vec::new();
        if gated {
            checks.extend(self.checks.iter().cloned());
        }
        checks.extend(self.stage_checks.get(stage).into_iter().flatten().cloned());
        if gated {
            let repo: Vec<&str> = self.repo_checks().map(|c| c.name.as_str()).collect();
            checks.extend(
                plan.checks
                    .iter()
                    .filter(|c| !repo.contains(&c.name.as_str()))
                    .map(|c| from_plan(plan_file, c)),
            );
        }
        checks
    }

    /// The first check of `plan` that names one of the repository's: a plan adds checks, it
    /// never replaces or weakens one.
    pub fn plan_check_conflict(&self, plan: &Plan, plan_file: &str) -> Option<PlanError> {
        plan.checks.iter().find_map(|check| {
            let repo = self.repo_checks().find(|c| c.name == check.name)?;
            Some(PlanError {
                file: plan_file.to_string(),
                line: check.line,
                column: check.column,
                message: format!(
                    "check `{}` is already defined by the repository at {}; a plan may add checks, not redefine them",
                    check.name, repo.origin
                ),
                hint: Some("give the plan's check another name".into()),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::super::tests::err;
    use super::*;

    const ACTORS: &str = "actors:\n  a: {command: [x]}\npipeline:\n  - stage: code\n    actor: a\n    gate: coverage\n";

    #[test]
    fn top_level_and_stage_checks() {
        let text = format!(
            "{ACTORS}    checks:\n      - {{ name: unit, command: [cargo, test, --lib], timeout: 90s }}\n  - {{ stage: docs, actor: a }}\nchecks:\n  - name: lint\n    shell: \"make lint && echo ${{HOME}}\"\n"
        );
        let c = parse(".baton.yml", &text).unwrap();
        assert_eq!(
            c.checks,
            [CheckSpec {
                name: "lint".into(),
                command: vec!["sh".into(), "-c".into(), "make lint && echo ${HOME}".into()],
                timeout: DEFAULT_TIMEOUT,
                origin: ".baton.yml:11:11".into(),
            }]
        );
        assert_eq!(
            c.stage_checks["code"][0].command,
            ["cargo", "test", "--lib"]
        );
        assert_eq!(c.stage_checks["code"][0].timeout, Duration::from_secs(90));
        let plan = crate::plan::parse(
            "plans/p.md",
            "---\nchecks:\n  - { name: mine, command: [true] }\n---\n",
        )
        .unwrap();
        let names = |stage: &str, gated: bool| -> Vec<String> {
            c.checks_for(stage, gated, &plan, "plans/p.md")
                .into_iter()
                .map(|c| c.name)
                .collect()
        };
        assert_eq!(names("code", true), ["lint", "unit", "mine"]);
        assert_eq!(names("docs", false), Vec::<String>::new());
        assert_eq!(c.plan_check_conflict(&plan, "plans/p.md"), None);
    }

    #[test]
    fn a_plan_may_not_redefine_a_repository_check() {
        let c = parse(
            ".baton.yml",
            &format!("{ACTORS}checks:\n  - {{ name: tests, command: [cargo, test] }}\n"),
        )
        .unwrap();
        let plan = crate::plan::parse(
            "plans/p.md",
            "---\nchecks:\n  - { name: tests, command: [\"true\"] }\n---\n",
        )
        .unwrap();
        let conflict = c.plan_check_conflict(&plan, "plans/p.md").unwrap();
        insta::assert_snapshot!(format!("{conflict}\nhint: {}", conflict.hint.clone().unwrap()), @r"
            plans/p.md:3:13: check `tests` is already defined by the repository at .baton.yml:8:13; a plan may add checks, not redefine them
            hint: give the plan's check another name
            ");
        // Whatever reaches an attempt, the repository's definition stands.
        let run = c.checks_for("code", true, &plan, "plans/p.md");
        assert_eq!(run.len(), 1);
        assert_eq!(run[0].command, ["cargo", "test"]);
    }

    #[test]
    fn malformed_checks_are_located() {
        insta::assert_snapshot!(err("checks:\n  - { name: Tests, command: [x] }\n"), @r"
            .baton.yml:2:13: check name `Tests` must match [a-z0-9][a-z0-9_-]*
            hint: at most 64 characters: it names the check's log files
            ");
        insta::assert_snapshot!(err("checks:\n  - { name: t, command: [] }\n"), @r"
            .baton.yml:2:25: check `t` has an empty `command`
            hint: give the program and its arguments as a list, e.g. `command: [cargo, test]`
            ");
        insta::assert_snapshot!(err("checks:\n  - { name: t }\n"), @r#"
            .baton.yml:2:5: check `t` has no `command`
            hint: give the argv (`command: [cargo, test]`) or a shell line (`shell: "make check"`)
            "#);
        insta::assert_snapshot!(err("checks:\n  - { name: t, command: [x], shell: y }\n"), @r"
            .baton.yml:2:37: check `t` has both `command` and `shell`
            hint: give the argv as `command`, or a shell line as `shell`, not both
            ");
        insta::assert_snapshot!(err("checks:\n  - { name: t, command: [x], timeout: soon }\n"), @r#"
            .baton.yml:2:39: check `t` has an invalid `timeout`: `soon`: failed to parse input in the "friendly" duration format: expected duration to start with a unit value (a decimal integer) after an optional sign, but no integer was found
            hint: use seconds (`900`) or units as in `90s`, `30m`, `1h30m`, `2 hours`
            "#);
        insta::assert_snapshot!(err("checks:\n  - { name: t, comand: [x] }\n"), @r"
            .baton.yml:2:16: unknown field `comand`, expected one of name, command, shell, timeout
            hint: did you mean `command`?
            ");
        insta::assert_snapshot!(err("checks:\n  - { name: t, command: [x] }\n  - { name: t, command: [y] }\n"), @r"
            .baton.yml:3:13: check `t` is defined twice, first at .baton.yml:2:13
            hint: give each check its own name
            ");
        insta::assert_snapshot!(err(&format!("{ACTORS}    checks: [{{ name: t, command: [y] }}]\nchecks:\n  - {{ name: t, command: [x] }}\n")), @r"
            .baton.yml:7:22: check `t` is defined twice, first at .baton.yml:9:13
            hint: give each check its own name
            ");
        insta::assert_snapshot!(err("checks: {tests: [x]}\n"), @".baton.yml:1:9: expected sequence start");
    }

    #[test]
    fn checks_belong_to_the_repository() {
        let mut config = crate::config::Config::default();
        let e = super::super::apply(
            &mut config,
            "user.yml",
            "checks:\n  - { name: t, command: [x] }\n",
            true,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("`checks` belongs in the repository's"),
            "{e}"
        );
    }
}
