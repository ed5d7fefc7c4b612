//! `notify:` — one command git-baton runs, with a JSON document on its stdin, when a run stops
//! where a person is wanted: `blocked`, `failed`, `review`, or on hold (`rate_limited`). See
//! docs/notify.md. The command is written as a check's is (an argv, or a `shell:` line, read by
//! [`super::checks::command_of`]), alone as a list or in a mapping with a `timeout` and the
//! events it is `on`.
//!
//! Unlike `checks:`, the user configuration may set it — a desktop notification is one person's
//! business — and the user's replaces the repository's.

use std::time::Duration;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

use super::checks::{command_of, timeout_of};
use super::{ConfigError, DurationValue, closest};
use crate::state::RunStatus;

/// How long the command runs before it is killed with its process group, unless it says
/// otherwise: a notification is sent in seconds, and the run's lock is held meanwhile.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// What a run became that a person may want to hear of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum NotifyEvent {
    /// The gate (or a check, or the Stop hook) blocked the latest attempt.
    Blocked,
    /// The latest attempt failed.
    Failed,
    /// Every stage succeeded: the run waits for its reviewer.
    Review,
    /// The latest attempt was rate limited and no `fallback:` actor takes over: the run waits
    /// for the limit to lift.
    Hold,
}

impl NotifyEvent {
    pub const ALL: [NotifyEvent; 4] = [
        NotifyEvent::Blocked,
        NotifyEvent::Failed,
        NotifyEvent::Review,
        NotifyEvent::Hold,
    ];

    /// The name `on:` and the document use.
    pub fn name(self) -> &'static str {
        match self {
            NotifyEvent::Blocked => "blocked",
            NotifyEvent::Failed => "failed",
            NotifyEvent::Review => "review",
            NotifyEvent::Hold => "hold",
        }
    }

    /// The event a run that became `status` is; `None` for the statuses nobody is told of.
    pub fn of_status(status: RunStatus) -> Option<NotifyEvent> {
        match status {
            RunStatus::Blocked => Some(NotifyEvent::Blocked),
            RunStatus::Failed => Some(NotifyEvent::Failed),
            RunStatus::Review => Some(NotifyEvent::Review),
            RunStatus::RateLimited => Some(NotifyEvent::Hold),
            _ => None,
        }
    }
}

/// The `notify:` command as git-baton runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notify {
    /// The argv, run without a shell; a `shell:` one is `sh -c <text>`.
    pub command: Vec<String>,
    pub timeout: Duration,
    /// The events it runs for, in the order written; all four unless `on:` says otherwise.
    pub on: Vec<NotifyEvent>,
    /// Where it was defined, `file:line:column`, for messages.
    pub origin: String,
}

impl Notify {
    pub fn wants(&self, event: NotifyEvent) -> bool {
        self.on.contains(&event)
    }
}

/// `notify:` as written: an argv alone, or a mapping — or a scalar, refused where it is.
pub(super) enum RawNotify {
    Argv(Vec<String>),
    Full(Box<RawNotifyMap>),
    Scalar(String),
}

/// `notify:` as a mapping.
#[derive(Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(super) struct RawNotifyMap {
    /// The program and its arguments (argv, never a shell string), run in the main worktree
    /// with the document on stdin. No placeholders are expanded; the `BATON_*` variables are
    /// set.
    #[cfg_attr(test, schemars(with = "Option<Vec<String>>", length(min = 1)))]
    command: Option<Spanned<Vec<String>>>,
    /// A shell command line, run as `sh -c` — only when written so; give `command` or `shell`.
    #[cfg_attr(test, schemars(with = "Option<String>"))]
    shell: Option<Spanned<String>>,
    /// How long it may run before it is killed with its process group: seconds or a duration
    /// (`10s`, `1m`); default `30s`.
    #[cfg_attr(test, schemars(with = "Option<DurationValue>"))]
    timeout: Option<Spanned<DurationValue>>,
    /// The events it runs for (default: all of them).
    #[cfg_attr(test, schemars(with = "Option<Vec<NotifyEvent>>"))]
    on: Option<Spanned<Vec<Spanned<String>>>>,
}

// What the hand-written reader of `RawNotify` accepts, for the schema.
/// The command: its argv alone, or a mapping with `command` or `shell`.
#[cfg(test)]
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub(super) enum RawNotifySchema {
    /// The program and its arguments (argv, never a shell string).
    Argv(#[schemars(length(min = 1))] Vec<String>),
    Full(Box<RawNotifyMap>),
}

// Read by hand rather than `#[serde(untagged)]`: an untagged enum buffers the value, which
// loses the locations of what is inside it and turns every mistake in the mapping into "did not
// match any variant".
impl<'de> Deserialize<'de> for RawNotify {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RawNotify, D::Error> {
        struct Either;
        impl<'de> Visitor<'de> for Either {
            type Value = RawNotify;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a command (a list of the program and its arguments) or a mapping")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawNotify, A::Error> {
                let mut argv = Vec::new();
                while let Some(arg) = seq.next_element::<String>()? {
                    argv.push(arg);
                }
                Ok(RawNotify::Argv(argv))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawNotify, A::Error> {
                RawNotifyMap::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|map| RawNotify::Full(Box::new(map)))
            }

            // A scalar is refused by `read`, at its own line and column, which an error raised
            // here would not have.
            fn visit_str<E: de::Error>(self, text: &str) -> Result<RawNotify, E> {
                Ok(RawNotify::Scalar(format!("`{}`", text.escape_debug())))
            }

            fn visit_bool<E: de::Error>(self, value: bool) -> Result<RawNotify, E> {
                Ok(RawNotify::Scalar(format!("`{value}`")))
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<RawNotify, E> {
                Ok(RawNotify::Scalar(format!("`{value}`")))
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<RawNotify, E> {
                Ok(RawNotify::Scalar(format!("`{value}`")))
            }

            fn visit_f64<E: de::Error>(self, value: f64) -> Result<RawNotify, E> {
                Ok(RawNotify::Scalar(format!("`{value}`")))
            }

            fn visit_unit<E: de::Error>(self) -> Result<RawNotify, E> {
                Ok(RawNotify::Scalar("nothing".into()))
            }

            fn visit_none<E: de::Error>(self) -> Result<RawNotify, E> {
                self.visit_unit()
            }
        }
        deserializer.deserialize_any(Either)
    }
}

/// Reads `notify:` of `file`.
pub(super) fn read(file: &str, raw: Spanned<RawNotify>) -> Result<Notify, ConfigError> {
    const WHAT: &str = "`notify`";
    let at = (
        file.to_string(),
        raw.referenced.line(),
        raw.referenced.column(),
    );
    let origin = format!("{}:{}:{}", at.0, at.1, at.2);
    let map = match raw.value {
        RawNotify::Argv(argv) => {
            let command = Spanned::new(argv, raw.referenced, raw.defined);
            return Ok(Notify {
                command: command_of(file, WHAT, at, Some(command), None)?,
                timeout: DEFAULT_TIMEOUT,
                on: NotifyEvent::ALL.to_vec(),
                origin,
            });
        }
        RawNotify::Full(map) => map,
        RawNotify::Scalar(shown) => {
            return Err(ConfigError::Invalid {
                file: at.0,
                line: at.1,
                column: at.2,
                message: format!("{WHAT} must be a command, not {shown}"),
                hint: Some(
                    "give the argv as a list (`notify: [notify-send, git-baton]`) or a shell line \
                     (`notify: { shell: \"my-notifier\" }`)"
                        .into(),
                ),
            });
        }
    };
    let command = command_of(file, WHAT, at, map.command, map.shell)?;
    let timeout = timeout_of(file, WHAT, map.timeout, DEFAULT_TIMEOUT)?;
    let on = match map.on {
        None => NotifyEvent::ALL.to_vec(),
        Some(list) => events(file, list.value)?,
    };
    Ok(Notify {
        command,
        timeout,
        on,
        origin,
    })
}

/// The events `on:` names: each a known one, and once.
fn events(file: &str, names: Vec<Spanned<String>>) -> Result<Vec<NotifyEvent>, ConfigError> {
    let known: Vec<&str> = NotifyEvent::ALL.iter().map(|e| e.name()).collect();
    let mut on: Vec<NotifyEvent> = Vec::new();
    for name in names {
        let invalid = |message: String, hint: String| ConfigError::Invalid {
            file: file.into(),
            line: name.referenced.line(),
            column: name.referenced.column(),
            message,
            hint: Some(hint),
        };
        let Some(event) = NotifyEvent::ALL
            .into_iter()
            .find(|e| e.name() == name.value)
        else {
            let hint = match closest(&name.value, &known) {
                Some(near) => format!("did you mean `{near}`?"),
                None => format!("the events are {}", known.join(", ")),
            };
            return Err(invalid(
                format!(
                    "unknown event `{}` in `notify.on`",
                    name.value.escape_debug()
                ),
                hint,
            ));
        };
        if on.contains(&event) {
            return Err(invalid(
                format!("event `{}` appears twice in `notify.on`", event.name()),
                "name each event once".into(),
            ));
        }
        on.push(event);
    }
    Ok(on)
}

#[cfg(test)]
mod tests {
    use super::super::tests::err;
    use super::super::{Config, apply, parse};
    use super::*;

    fn notify(text: &str) -> Notify {
        parse(".baton.yml", text).unwrap().notify.unwrap()
    }

    #[test]
    fn an_argv_a_shell_line_or_a_mapping() {
        let argv = notify("notify: [notify-send, git-baton]\n");
        assert_eq!(
            argv,
            Notify {
                command: vec!["notify-send".into(), "git-baton".into()],
                timeout: DEFAULT_TIMEOUT,
                on: NotifyEvent::ALL.to_vec(),
                origin: ".baton.yml:1:9".into(),
            }
        );
        let shell = notify("notify:\n  shell: 'curl -sd @- \"$HOOK\"'\n  timeout: 5s\n");
        assert_eq!(shell.command, ["sh", "-c", "curl -sd @- \"$HOOK\""]);
        assert_eq!(shell.timeout, Duration::from_secs(5));
        assert_eq!(shell.origin, ".baton.yml:2:3");
        let some = notify("notify: { command: [x], on: [review, hold] }\n");
        assert_eq!(some.on, [NotifyEvent::Review, NotifyEvent::Hold]);
        assert!(some.wants(NotifyEvent::Hold) && !some.wants(NotifyEvent::Failed));
        assert!(notify("notify: { command: [x], on: [] }\n").on.is_empty());
        assert_eq!(parse(".baton.yml", "").unwrap().notify, None);
        // Written empty, as any key: not set.
        assert_eq!(parse(".baton.yml", "notify:\n").unwrap().notify, None);
    }

    #[test]
    fn the_statuses_a_person_is_told_of() {
        let told: Vec<(RunStatus, NotifyEvent)> = [
            RunStatus::Pending,
            RunStatus::Queued,
            RunStatus::Running,
            RunStatus::Paused,
            RunStatus::Interrupted,
            RunStatus::Failed,
            RunStatus::RateLimited,
            RunStatus::Blocked,
            RunStatus::Review,
            RunStatus::Finished,
        ]
        .into_iter()
        .filter_map(|s| NotifyEvent::of_status(s).map(|e| (s, e)))
        .collect();
        assert_eq!(
            told,
            [
                (RunStatus::Failed, NotifyEvent::Failed),
                (RunStatus::RateLimited, NotifyEvent::Hold),
                (RunStatus::Blocked, NotifyEvent::Blocked),
                (RunStatus::Review, NotifyEvent::Review),
            ]
        );
    }

    #[test]
    fn malformed_notify_is_located() {
        insta::assert_snapshot!(err("notify: { command: [x], on: [blocked, reveiw] }\n"), @r"
        .baton.yml:1:39: unknown event `reveiw` in `notify.on`
        hint: did you mean `review`?
        ");
        insta::assert_snapshot!(err("notify: { command: [x], on: [rate_limited] }\n"), @r"
        .baton.yml:1:30: unknown event `rate_limited` in `notify.on`
        hint: the events are blocked, failed, review, hold
        ");
        insta::assert_snapshot!(err("notify: { command: [x], on: [hold, hold] }\n"), @r"
        .baton.yml:1:36: event `hold` appears twice in `notify.on`
        hint: name each event once
        ");
        insta::assert_snapshot!(err("notify: []\n"), @r"
        .baton.yml:1:9: `notify` has an empty `command`
        hint: give the program and its arguments as a list, e.g. `command: [cargo, test]`
        ");
        insta::assert_snapshot!(err("notify: { timeout: 5s }\n"), @r#"
        .baton.yml:1:9: `notify` has no `command`
        hint: give the argv (`command: [cargo, test]`) or a shell line (`shell: "make check"`)
        "#);
        insta::assert_snapshot!(err("notify: { command: [x], shell: y }\n"), @r"
        .baton.yml:1:32: `notify` has both `command` and `shell`
        hint: give the argv as `command`, or a shell line as `shell`, not both
        ");
        insta::assert_snapshot!(err("notify: { command: [x], timeout: 0 }\n"), @r"
        .baton.yml:1:34: `notify` has an invalid `timeout`: it must be greater than zero
        hint: use seconds (`900`) or units as in `90s`, `30m`, `1h30m`, `2 hours`
        ");
        insta::assert_snapshot!(err("notify: { comand: [x] }\n"), @r"
        .baton.yml:1:11: unknown field `comand`, expected one of command, shell, timeout, on
        hint: did you mean `command`?
        ");
        insta::assert_snapshot!(err("notify: notify-send\n"), @r#"
        .baton.yml:1:9: `notify` must be a command, not `notify-send`
        hint: give the argv as a list (`notify: [notify-send, git-baton]`) or a shell line (`notify: { shell: "my-notifier" }`)
        "#);
        insta::assert_snapshot!(err("notify: true\n"), @r#"
        .baton.yml:1:9: `notify` must be a command, not `true`
        hint: give the argv as a list (`notify: [notify-send, git-baton]`) or a shell line (`notify: { shell: "my-notifier" }`)
        "#);
        insta::assert_snapshot!(err("notify: { command: [x], on: hold }\n"), @".baton.yml:1:29: expected sequence start");
    }

    #[test]
    fn the_user_configuration_may_notify_and_replaces_the_repositorys() {
        let mut config = Config::default();
        apply(&mut config, ".baton.yml", "notify: [repo-notify]\n", false).unwrap();
        apply(
            &mut config,
            "user.yml",
            "notify: { command: [mine], on: [review] }\n",
            true,
        )
        .unwrap();
        let notify = config.notify.unwrap();
        assert_eq!(notify.command, ["mine"]);
        assert_eq!(notify.origin, "user.yml:1:9");
    }
}
