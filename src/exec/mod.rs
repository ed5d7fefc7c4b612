//! Runs one attempt of one actor — any external command — and reports how it ended.
//!
//! This module knows nothing of runs, plans or git: the caller says what to run, where, with
//! which `BATON_*` variables and where the logs go, and gets back an [`Ended`] plus the facts
//! it was derived from. Four properties matter more than anything else here:
//!
//! - **Nothing the attempt started outlives it.** Every process of the attempt is found and
//!   ended before [`run`] returns — on a stop (SIGTERM, `grace`, SIGKILL) and also after the
//!   actor exits on its own — whatever it did to its session, process group or working
//!   directory. A background process that kept editing the worktree after the attempt was
//!   recorded would make the record a lie. How the processes are recognised, per platform:
//!   - *Linux*: by a token in their environment ([`TOKEN_VAR`]), by holding the attempt's
//!     output pipes, by the actor's process group, and by descent from any of those, with
//!     git-baton a child subreaper so that orphans stay in its process tree and those that lost
//!     every other mark are adopted as its children (see `contain.rs`). The token is written
//!     to the attempt directory before the actor starts, so after a crash of git-baton
//!     [`kill_leftovers`] finds them again. Escapes only a process that scrubs its environment,
//!     drops the pipes, leaves the group and loses its parent chain all at once and then leads
//!     a session of its own, or that runs a setuid program, or that a server already running
//!     starts for it.
//!   - *Other unix systems* (no `/proc`): the actor's process group only; a child that calls
//!     `setsid` or `setpgid` escapes, and nothing is found after a crash.
//! - **`run` always returns.** A grandchild that keeps the output pipes open must not block us
//!   forever: once the actor has exited the readers get a short moment to drain, then the
//!   attempt's processes are ended, and readers still blocked after that (a holder that escaped)
//!   are abandoned. Every wait is bounded.
//! - **The logs are kept up to the last byte read, within a limit.** Every chunk is written to
//!   the log file as it arrives, with no buffering on our side, so even a `kill -9` of
//!   git-baton leaves everything read so far on disk; past [`Invocation::log_limit`] the middle
//!   of a stream is dropped and the cut marked (`log.rs`), while rate-limit patterns are still
//!   matched against every byte.
//! - **Showing a log never reads it whole** ([`copy_log_text`], [`write_json_with_logs`]).

mod command;
mod contain;
mod ended;
mod group;
mod log;
mod output;

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};

pub use crate::signals::ignores as ignores_signal;
pub use command::{PLACEHOLDERS, check_command};
pub use contain::{TOKEN_VAR, kill_leftovers, live_leftovers};
pub use log::{Copied, DEFAULT_LOG_LIMIT, copy_log_text, write_json_with_logs};

use contain::Swept;
use ended::{outcome, read_agent_output};
use group::Group;
use log::CappedLog;
use output::{Scanner, StreamReader};

/// How often the main loop looks at the child, the stop request and the clock.
const POLL: Duration = Duration::from_millis(50);
/// How long the output readers may take to reach end-of-file once the leader has exited, before
/// the group is killed (and again after that, before they are abandoned).
const SETTLE: Duration = Duration::from_millis(250);

/// An actor as configured: how to start it and how to recognise that it was rate limited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActorSpec {
    pub name: String,
    /// The argv template, never a shell string. Each element may contain the placeholders of
    /// [`PLACEHOLDERS`] (`{prompt_file}`, …), expanded by [`run`]; a `{` that does not open a
    /// `{name}` made of letters, digits and `_` is literal. A program name without `/` is looked
    /// up on `PATH`; a relative path is resolved from the working directory of the attempt.
    pub command: Vec<String>,
    /// `true`: the child's stdin is the prompt file itself (its contents, then end-of-file);
    /// `false`: stdin is `/dev/null`, so an actor that waits for input fails instead of hanging.
    pub stdin_prompt: bool,
    /// Extra environment from the configuration; the invocation's `BATON_*` variables win.
    pub env: Vec<(String, String)>,
    pub timeout: Option<Duration>,
    pub rate_limit: RateLimitRules,
    /// What the actor prints, read after it exits for its verdict and usage.
    pub output: crate::agent::output::Format,
}

/// How an actor says "try again later".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RateLimitRules {
    pub exit_codes: Vec<i32>,
    /// Substrings of the attempt's stdout or stderr, matched ignoring ASCII case. Empty patterns
    /// never match (they would make every failure a rate limit).
    pub patterns: Vec<String>,
}

/// One attempt to run: the actor plus everything that differs from one attempt to the next.
pub struct Invocation<'a> {
    pub actor: &'a ActorSpec,
    /// The child's current directory.
    pub workdir: &'a Path,
    /// `BATON_*` variables, set by the caller; they override the inherited and actor environment.
    pub env: Vec<(String, String)>,
    /// Inherited variables the child must not see (git's repository variables, which would send
    /// the actor's git commands to another repository); removed before the actor's configured
    /// environment and [`Invocation::env`] are applied.
    pub clear_env: &'a [&'a str],
    /// Values of the placeholders in the command, e.g. `("prompt_file", "/…/prompt.md")`;
    /// `None`: the command is run as written, braces and all (a runner check's, whose shell
    /// line may well say `${HOME}`).
    pub placeholders: Option<Vec<(&'static str, String)>>,
    pub prompt_file: &'a Path,
    /// Created or truncated; they receive every byte the child writes, as it is written.
    pub stdout_log: &'a Path,
    pub stderr_log: &'a Path,
    /// Where the child's output on each stream is also copied as it arrives, if anywhere: the
    /// command layer decides (see [`no_echo`]).
    pub echo: &'a dyn Fn(crate::term::Stream) -> Option<Box<dyn std::io::Write + Send>>,
    /// Polled about every 50 ms: another process asked to stop this run.
    pub stop_requested: &'a dyn Fn() -> bool,
    /// Set by our SIGINT/SIGTERM/SIGHUP handler (see [`interrupt_flag`]).
    pub interrupted: &'a AtomicBool,
    /// Time between SIGTERM to the attempt's processes and SIGKILL.
    pub grace: Duration,
    /// Where to record the attempt's token before the child is spawned, so that whoever finds
    /// this process dead later can stop what the attempt left running ([`kill_leftovers`]).
    pub token_file: Option<&'a Path>,
    /// Where to record the child's pid (also its process group id) once it runs; what versions
    /// without a token file relied on.
    pub pid_file: Option<&'a Path>,
    /// Bytes of each stream kept in its log: the first and the last half of them, with a marker
    /// line in between saying how much was dropped.
    pub log_limit: u64,
}

/// How an attempt ended, as far as the actor is concerned; the caller may still apply a gate.
///
/// For an actor with an `output:` format, what its output says weighs first: a structured rate
/// limit is [`Ended::RateLimited`] and a structured failure is a failure, whatever the exit
/// code (Codex has printed `turn.failed` and exited 0). Output that could not be read decides
/// nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Exit code 0 and no structured failure — even if a rate-limit pattern appeared in the
    /// output: an actor that recovered from a rate limit by itself did its work.
    Succeeded,
    /// A non-zero exit, death by a signal we did not send, or a structured failure.
    Failed {
        exit_code: Option<i32>,
        signal: Option<i32>,
    },
    /// A structured rate limit in the output (`matched` names it: `claude-json: API Error: …`),
    /// or a failure with an exit code listed in the rules, or with a pattern in the output.
    /// `matched` is then `exit code N` or the pattern as configured; the exit code is checked
    /// first.
    RateLimited {
        exit_code: Option<i32>,
        matched: String,
    },
    /// We stopped it, however it then exited.
    Interrupted { cause: StopCause },
}

/// Why we stopped an attempt (a crash of git-baton itself is recorded by whoever notices it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopCause {
    /// A SIGINT, SIGTERM or SIGHUP to git-baton, or a stop requested by another process.
    Manual,
    /// The actor's timeout elapsed.
    Timeout,
}

/// What [`run`] observed.
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    pub outcome: Ended,
    /// The leader's exit code, `None` if a signal ended it (or it never started).
    pub exit_code: Option<i32>,
    /// The signal that ended the leader, whoever sent it.
    pub signal: Option<i32>,
    /// From the start of the child to the end of the leader (including any grace period).
    pub duration: Duration,
    /// The last 20 lines of stderr, at most 2 KiB, decoded lossily.
    pub stderr_tail: String,
    /// What the actor's output says, for an actor with an `output:` format other than `text`
    /// that ran to its end (not for an attempt we stopped).
    pub agent: Option<crate::agent::output::Reading>,
}

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("actor `{actor}` has an empty command")]
    EmptyCommand { actor: String },
    #[error("unknown placeholder `{{{name}}}` in the command of actor `{actor}`")]
    UnknownPlaceholder { actor: String, name: String },
    #[error("actor `{actor}`: command `{program}` not found")]
    NotFound { actor: String, program: String },
    #[error("actor `{actor}`: command `{program}` cannot be executed: permission denied")]
    NotExecutable { actor: String, program: String },
    #[error("actor `{actor}`: cannot start `{program}`: {source}")]
    Spawn {
        actor: String,
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("actor `{actor}`: cannot run in {}: {source}", .path.display())]
    Workdir {
        actor: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("actor `{actor}`: cannot read prompt {}: {source}", .path.display())]
    Prompt {
        actor: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("actor `{actor}`: cannot write log {}: {source}", .path.display())]
    Log {
        actor: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("actor `{actor}`: cannot wait for `{program}`: {source}")]
    Wait {
        actor: String,
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("cannot install the SIGINT/SIGTERM/SIGHUP handlers: {source}")]
    Signals {
        #[source]
        source: io::Error,
    },
    #[error("actor `{actor}`: cannot record the attempt's token in {}: {source}", .path.display())]
    Record {
        actor: String,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read the token of a crashed attempt in {}: {source}", .path.display())]
    TokenFile {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{count} process(es) of the attempt are still running after repeated SIGKILL")]
    Survivors { count: usize, token: String },
}

impl ExecError {
    /// What the user can do next.
    pub fn hint(&self) -> Option<String> {
        match self {
            ExecError::NotFound { actor, .. } => Some(format!(
                "install it, or fix the `command` of actor `{actor}` in .baton.yml \
                 (a name without `/` is looked up on PATH)"
            )),
            ExecError::NotExecutable { program, .. } => Some(format!(
                "make it executable (`chmod +x {program}`) or fix the actor's `command`"
            )),
            ExecError::UnknownPlaceholder { .. } => Some(format!(
                "the placeholders are {}",
                PLACEHOLDERS.map(|name| format!("{{{name}}}")).join(", ")
            )),
            ExecError::Survivors { token, .. } => Some(format!(
                "they may be stuck in the kernel; `grep -l {TOKEN_VAR}={token} /proc/*/environ` \
                 lists them"
            )),
            _ => None,
        }
    }
}

/// An [`Invocation::echo`] that echoes nothing: the output goes to the logs only.
pub fn no_echo(_: crate::term::Stream) -> Option<Box<dyn std::io::Write + Send>> {
    None
}

/// Runs one attempt of `inv.actor` to its end and classifies it.
///
/// Errors are reserved for attempts that could not be run as asked (bad command, missing
/// program, unwritable log); anything the actor does is an [`Ended`]. If a log cannot be
/// written mid-attempt, the attempt is stopped like an interruption — its output could no longer
/// be kept — and the error is returned.
pub fn run(inv: &Invocation) -> Result<Ran, ExecError> {
    let actor = inv.actor;
    let argv = argv(inv)?;
    check_workdir(inv)?;
    let stdin = stdin(inv)?;
    let stdout_log = create_log(actor, inv.stdout_log)?;
    let stderr_log = create_log(actor, inv.stderr_log)?;

    // A stop that arrived before the start: do not start an actor only to kill it.
    if stop_wanted(inv) {
        return Ok(Ran {
            outcome: Ended::Interrupted {
                cause: StopCause::Manual,
            },
            exit_code: None,
            signal: None,
            duration: Duration::ZERO,
            stderr_tail: String::new(),
            agent: None,
        });
    }

    let program = &argv[0];
    let token = contain::new_token();
    record_token(inv, &token)?;
    // Orphans of the attempt re-parent to us, not to init: they stay where we look for them.
    contain::become_subreaper();
    let mut child = command(inv, &argv, stdin, &token)
        .spawn()
        .map_err(|err| spawn_error(actor, program, err))?;
    let started = Instant::now();
    if let Some(path) = inv.pid_file {
        // Best effort: the token file is what a later cleanup relies on.
        let _ = crate::files::write_atomic(path, format!("{}\n", child.id()).as_bytes());
    }
    let pipes = own_pipes(&child);
    let stdout = child.stdout.take().map(|pipe| {
        let log = CappedLog::new(inv.stdout_log, stdout_log, inv.log_limit);
        reader(inv, pipe, log, crate::term::Stream::Stdout)
    });
    let stderr = child.stderr.take().map(|pipe| {
        let log = CappedLog::new(inv.stderr_log, stderr_log, inv.log_limit);
        reader(inv, pipe, log, crate::term::Stream::Stderr)
    });
    let readers: Vec<&StreamReader> = stdout.iter().chain(&stderr).collect();
    let mut group = Group::new(child, &token, pipes);
    let wait_error = |source| ExecError::Wait {
        actor: actor.name.clone(),
        program: program.clone(),
        source,
    };

    let stop = watch(inv, &group, &readers, started).map_err(wait_error)?;
    let duration = started.elapsed();
    let (status, swept) = wind_down(&mut group, &readers, &stop, inv.grace).map_err(wait_error)?;
    let mut stdout = stdout.map(StreamReader::finish);
    let mut stderr = stderr.map(StreamReader::finish);
    if let Swept::Survivors(count) = swept {
        // Whatever they do from now on happens after the attempt: it cannot be recorded as
        // the attempt's work, so the attempt is not recorded as having done any.
        return Err(ExecError::Survivors { count, token });
    }
    check_logs(inv, &mut stdout, &mut stderr)?;

    let agent = match stop {
        None => read_agent_output(actor.output, inv, &stdout, &stderr),
        Some(_) => None,
    };
    Ok(Ran {
        outcome: outcome(actor, stop, status, agent.as_ref(), [&stdout, &stderr]),
        exit_code: status.code(),
        signal: status.signal(),
        duration,
        stderr_tail: stderr.map(|drained| drained.tail).unwrap_or_default(),
        agent,
    })
}

/// The argv to run: the actor's command with the placeholders expanded, when there are values
/// for them.
fn argv(inv: &Invocation) -> Result<Vec<String>, ExecError> {
    let actor = inv.actor;
    match &inv.placeholders {
        Some(values) => command::expand(actor, values),
        None if actor.command.is_empty() => Err(ExecError::EmptyCommand {
            actor: actor.name.clone(),
        }),
        None => Ok(actor.command.clone()),
    }
}

/// The prompt file for an actor that reads its prompt on stdin; nothing for the others.
fn stdin(inv: &Invocation) -> Result<Stdio, ExecError> {
    let actor = inv.actor;
    if !actor.stdin_prompt {
        return Ok(Stdio::null());
    }
    // The file itself rather than a pipe we feed: the child reads it at its own pace and
    // there is no writer to block on an actor that never reads.
    let file = File::open(inv.prompt_file).map_err(|source| ExecError::Prompt {
        actor: actor.name.clone(),
        path: inv.prompt_file.to_owned(),
        source,
    })?;
    Ok(Stdio::from(file))
}

/// Writes the attempt's token where the caller keeps it, if it does.
fn record_token(inv: &Invocation, token: &str) -> Result<(), ExecError> {
    let Some(path) = inv.token_file else {
        return Ok(());
    };
    // Before the child exists: whenever one of its processes can be running, a later
    // git-baton can find it by this token.
    crate::files::write_atomic(path, format!("{token}\n").as_bytes()).map_err(|failed| {
        ExecError::Record {
            actor: inv.actor.name.clone(),
            path: path.to_owned(),
            source: failed.source,
        }
    })
}

/// The actor's command: in the workdir, in a process group of its own, with its environment
/// and the attempt's token.
fn command(inv: &Invocation, argv: &[String], stdin: Stdio, token: &str) -> Command {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(inv.workdir)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group: a Ctrl-C in the terminal reaches only us, and we can signal the actor
        // together with everything it started.
        .process_group(0);
    for key in inv.clear_env {
        cmd.env_remove(key);
    }
    for (key, value) in inv.actor.env.iter().chain(&inv.env) {
        cmd.env(key, value);
    }
    cmd.env(TOKEN_VAR, token);
    cmd
}

/// The pipes of the child's stdout and stderr, as the process table names them.
fn own_pipes(child: &std::process::Child) -> Vec<u64> {
    [
        child.stdout.as_ref().map(|p| p.as_raw_fd()),
        child.stderr.as_ref().map(|p| p.as_raw_fd()),
    ]
    .into_iter()
    .flatten()
    .filter_map(crate::procs::own_pipe)
    .collect()
}

/// The thread that copies one of the child's streams to its log (and its echo), scanning it for
/// the actor's rate-limit patterns; stderr's keeps its tail.
fn reader(
    inv: &Invocation,
    pipe: impl io::Read + Send + 'static,
    log: CappedLog,
    stream: crate::term::Stream,
) -> StreamReader {
    let echo = (inv.echo)(stream);
    let scanner = Scanner::new(&inv.actor.rate_limit.patterns);
    StreamReader::spawn(
        pipe,
        log,
        echo,
        scanner,
        stream == crate::term::Stream::Stderr,
    )
}

/// Waits for the leader to exit, or stops the attempt — a log that cannot be written, a stop
/// asked for, the timeout — and says why it was stopped.
fn watch(
    inv: &Invocation,
    group: &Group,
    readers: &[&StreamReader],
    started: Instant,
) -> io::Result<Option<Stop>> {
    // Past what the clock can hold there is no deadline to keep (the configuration refuses
    // more than a week; a caller of the library may not).
    let deadline = inv
        .actor
        .timeout
        .and_then(|timeout| started.checked_add(timeout));
    let stop = loop {
        if group.exited()? {
            break None;
        }
        if readers.iter().any(|reader| reader.log_failed()) {
            break Some(Stop::LogFailed);
        }
        if stop_wanted(inv) {
            break Some(Stop::StopCause(StopCause::Manual));
        }
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            break Some(Stop::StopCause(StopCause::Timeout));
        }
        std::thread::sleep(POLL);
    };
    if stop.is_some() {
        group.terminate(inv.grace)?;
    }
    Ok(stop)
}
/// Ends what is left of the attempt once its leader is gone, and reaps the leader.
///
/// The leader is not reaped until then, so its group id cannot be reused yet. Whatever still
/// holds the pipes gets a moment to finish writing; then everything left of the attempt is
/// ended — with a grace period of its own unless the stop already gave it one.
fn wind_down(
    group: &mut Group,
    readers: &[&StreamReader],
    stop: &Option<Stop>,
    grace: Duration,
) -> io::Result<(ExitStatus, Swept)> {
    StreamReader::settle(readers, SETTLE);
    let swept = group.sweep(stop.is_none().then_some(grace));
    StreamReader::settle(readers, SETTLE);
    let status = group.reap()?;
    Ok((status, swept))
}

/// The first error either log hit, if any: the attempt's output could not all be kept.
fn check_logs(
    inv: &Invocation,
    stdout: &mut Option<output::Drained>,
    stderr: &mut Option<output::Drained>,
) -> Result<(), ExecError> {
    for (drained, path) in [(stdout, inv.stdout_log), (stderr, inv.stderr_log)] {
        if let Some(source) = drained.as_mut().and_then(|d| d.log_error.take()) {
            return Err(ExecError::Log {
                actor: inv.actor.name.clone(),
                path: path.to_owned(),
                source,
            });
        }
    }
    Ok(())
}

/// The flag our SIGINT, SIGTERM and SIGHUP handlers set, registered on the first call
/// ([`crate::signals::interrupt_flag`]).
///
/// From then on those signals no longer end git-baton: whoever holds the flag must look at it
/// (as [`run`] does through [`Invocation::interrupted`]) and wind down, so that an interrupted
/// attempt is stopped and recorded rather than orphaned.
///
/// SIGHUP (the terminal went away: a closed SSH session, a closed terminal window) counts as an
/// interruption like the other two: nobody is left to watch the run, and the convention for a
/// process that should outlive its terminal is to be started so (`nohup`, `setsid`, tmux). So a
/// SIGHUP that was already ignored when git-baton started (`nohup git baton run …`) stays
/// ignored, and the run goes on.
pub fn interrupt_flag() -> Result<Arc<AtomicBool>, ExecError> {
    crate::signals::interrupt_flag().map_err(|source| ExecError::Signals { source })
}

enum Stop {
    StopCause(StopCause),
    LogFailed,
}

fn stop_wanted(inv: &Invocation) -> bool {
    inv.interrupted.load(Ordering::SeqCst) || (inv.stop_requested)()
}

/// A missing directory would otherwise surface from `spawn` as ENOENT, i.e. "command not found".
fn check_workdir(inv: &Invocation) -> Result<(), ExecError> {
    let error = |source| ExecError::Workdir {
        actor: inv.actor.name.clone(),
        path: inv.workdir.to_owned(),
        source,
    };
    let meta = std::fs::metadata(inv.workdir).map_err(error)?;
    if !meta.is_dir() {
        return Err(error(io::ErrorKind::NotADirectory.into()));
    }
    Ok(())
}

fn create_log(actor: &ActorSpec, path: &Path) -> Result<File, ExecError> {
    File::create(path).map_err(|source| ExecError::Log {
        actor: actor.name.clone(),
        path: path.to_owned(),
        source,
    })
}

fn spawn_error(actor: &ActorSpec, program: &str, err: io::Error) -> ExecError {
    let actor = actor.name.clone();
    let program = program.to_owned();
    match err.kind() {
        io::ErrorKind::NotFound => ExecError::NotFound { actor, program },
        io::ErrorKind::PermissionDenied => ExecError::NotExecutable { actor, program },
        _ => ExecError::Spawn {
            actor,
            program,
            source: err,
        },
    }
}
