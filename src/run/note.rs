//! What the layers below the command line have to say while they work, and the one way they
//! say it: a typed [`Note`] handed to the command layer's [`Sink`], which alone decides what
//! is printed, where and how.
//!
//! Notes are handed over as they happen, not collected: a rate-limit fallback belongs between
//! the two actors' output, a lease that could not be renewed is reported from the renewal
//! thread while the actor still runs, and a note that precedes an error must still be shown when
//! the error ends the command.

use std::fmt;
use std::io::Write;

use crate::term::Stream;

/// How much a note matters: the command layer shows it with this prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// A line of its own, without a prefix (`run <id>`, `pushed … to …`).
    Plain,
    Note,
    Warning,
    Error,
}

impl Level {
    /// The prefix the command layer puts before the note, `note:` and the like.
    pub fn prefix(self) -> Option<&'static str> {
        match self {
            Level::Plain => None,
            Level::Note => Some("note"),
            Level::Warning => Some("warning"),
            Level::Error => Some("error"),
        }
    }
}

/// Something a run's operations report on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// The run a command works on: the first line it prints.
    Run { run: String },
    /// A new run's worktree.
    Worktree { path: String },
    /// A path the plan's body names that no declared target covers (`PLAN:LINE:COL`).
    Untargeted {
        plan: String,
        line: usize,
        column: usize,
        target: String,
    },
    /// `--key` named an existing run, with its status label.
    ExistingKey { key: String, label: String },
    /// A new run exists, but its first record commit could not be written.
    NotRecordedYet { run: String, reason: String },
    /// What `git baton cycle` decided or did.
    Cycle(CycleNote),
    /// A rate-limited attempt hands its stage to the `fallback:` actor.
    FallingBack {
        attempt: u32,
        stage: String,
        actor: String,
    },
    /// An ungated (not enforced) coverage report could not be computed.
    CoverageMissing { message: String },
    /// No snapshot of an attempt that ended otherwise (a crash found on resume).
    SnapshotFailed {
        stage: String,
        n: u32,
        reason: String,
    },
    /// What preparing a resume did (crash recovery, a re-created worktree, …).
    Resumed(super::resume::ResumeNote),
    /// Catching up rebuilt a run this clone did not have from a remote.
    Rebuilt { remote: String },
    /// Catching up took a remote's newer record.
    TookNewer { remote: String },
    /// A save of a published run stayed here: the remote could not be reached.
    PublishFailed { run: String, reason: String },
    /// The renewal thread could not open the repository.
    RenewalNoRepository,
    /// The lease could not be renewed and is about to expire: the driver stops.
    LeaseExpiring { run: String, remote: String },
    /// The lease was lost to another machine: the driver stops.
    LeaseLost { reason: String },
    /// One renewal failed; the next one tries again.
    RenewalFailed { reason: String },
    /// Giving the lease back failed; it expires by itself.
    ReleaseFailed { run: String, reason: String },
    /// `push` without names skips a run the remote no longer has.
    NoLongerOn { run: String, remote: String },
    /// A run is on `remote` as it is here: `push` published it or found it there, or a
    /// published run's `finish` pushed it.
    Pushed {
        run: String,
        remote: String,
        how: Arrival,
    },
    /// The `notify:` command did not succeed (docs/notify.md); the run is as committed.
    NotifyFailed {
        run: String,
        event: String,
        /// As written: the argv joined, or the `shell:` line.
        command: String,
        /// Where `notify:` is defined, `file:line:column`.
        origin: String,
        reason: String,
        /// The run's `notify.log`.
        log: String,
    },
    /// The configuration could not be read to find the `notify:` command: nobody was told.
    NotifyUnread { run: String, reason: String },
}

/// How a run came to be on the remote, for [`Note::Pushed`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arrival {
    /// `push` published it; it is `status`.
    Now { status: String },
    /// `push` found the remote's record the same as this clone's.
    AlreadyThere,
    /// A published run was finished, and the finished record pushed.
    Finished,
}

impl Note {
    pub fn level(&self) -> Level {
        match self {
            Note::Cycle(note) => note.level(),
            Note::Run { .. } | Note::Worktree { .. } | Note::Pushed { .. } => Level::Plain,
            Note::ExistingKey { .. }
            | Note::FallingBack { .. }
            | Note::Resumed(_)
            | Note::Rebuilt { .. }
            | Note::TookNewer { .. }
            | Note::NoLongerOn { .. } => Level::Note,
            Note::NotRecordedYet { .. }
            | Note::Untargeted { .. }
            | Note::CoverageMissing { .. }
            | Note::SnapshotFailed { .. }
            | Note::PublishFailed { .. }
            | Note::RenewalNoRepository
            | Note::RenewalFailed { .. }
            | Note::ReleaseFailed { .. }
            | Note::NotifyFailed { .. }
            | Note::NotifyUnread { .. } => Level::Warning,
            Note::LeaseExpiring { .. } | Note::LeaseLost { .. } => Level::Error,
        }
    }
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Cycle(note) => note.fmt(f),
            Note::Run { run } => write!(f, "run {run}"),
            Note::Worktree { path } => write!(f, "worktree {path}"),
            Note::ExistingKey { key, label } => write!(
                f,
                "key `{key}` names this existing run ({label}); not creating another"
            ),
            Note::Untargeted {
                plan,
                line,
                column,
                target,
            } => write!(
                f,
                "{plan}:{line}:{column}: the body names `{target}`, which no target covers"
            ),
            Note::NotRecordedYet { run, reason } => {
                write!(f, "run {run}: could not record it in git yet: {reason}")
            }
            Note::FallingBack {
                attempt,
                stage,
                actor,
            } => write!(
                f,
                "attempt {attempt} of stage {stage} was rate limited; falling back to actor `{actor}`"
            ),
            Note::CoverageMissing { message } => write!(
                f,
                "the coverage report of this attempt is missing: {message}"
            ),
            Note::SnapshotFailed { stage, n, reason } => write!(
                f,
                "could not snapshot attempt {n} of stage {stage}: {reason}"
            ),
            Note::Resumed(note) => write!(f, "{note}"),
            Note::Rebuilt { remote } => write!(f, "rebuilt the run from {remote}"),
            Note::TookNewer { remote } => write!(f, "took the newer record of {remote}"),
            Note::PublishFailed { run, reason } => {
                write!(f, "could not publish run {run}: {reason}")
            }
            Note::RenewalNoRepository => {
                write!(f, "cannot renew the lease: cannot open the repository")
            }
            Note::LeaseExpiring { run, remote } => write!(
                f,
                "run {run}: the lease could not be renewed on {remote} and is about to expire; \
                 stopping so that another machine can take the run over"
            ),
            Note::LeaseLost { reason } => write!(f, "{reason}"),
            Note::RenewalFailed { reason } => write!(f, "could not renew the lease: {reason}"),
            Note::ReleaseFailed { run, reason } => write!(
                f,
                "could not release the lease on run {run}: {reason}; it expires by itself"
            ),
            Note::NoLongerOn { run, remote } => write!(
                f,
                "{run} is no longer on {remote}; name it to publish it again"
            ),
            Note::Pushed { run, remote, how } => match how {
                Arrival::Now { status } => write!(f, "pushed {run} to {remote} ({status})"),
                Arrival::AlreadyThere => write!(f, "{run} is up to date on {remote}"),
                Arrival::Finished => write!(f, "pushed run {run} to {remote}"),
            },
            Note::NotifyFailed {
                run,
                event,
                command,
                origin,
                reason,
                log,
            } => write!(
                f,
                "run {run} is {event}, but `notify` ({origin}) did not succeed: `{command}`: \
                 {reason}; its output is in {log}"
            ),
            Note::NotifyUnread { run, reason } => write!(
                f,
                "run {run}: cannot read the configuration to notify: {reason}"
            ),
        }
    }
}

/// The command layer's side: where notes go, and the terminal an attempt may show itself on.
/// It is shared with the lease's renewal thread, hence `Sync`.
pub trait Sink: Sync {
    fn note(&self, note: Note);

    /// Where an actor's output on `stream` is echoed as it arrives, if anywhere.
    fn echo(&self, _stream: Stream) -> Option<Box<dyn Write + Send>> {
        None
    }

    /// Shows that attempt `n` of `stage` by `actor` runs, until the returned guard is dropped.
    fn running(&self, _stage: &str, _actor: &str, _n: u32) -> Option<Box<dyn Send>> {
        None
    }
}

/// A sink that drops every note: for callers with no one to tell (tests, tools).
pub struct Silent;

impl Sink for Silent {
    fn note(&self, _note: Note) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_word_what_happened_and_say_how_much_it_matters() {
        let note = Note::FallingBack {
            attempt: 2,
            stage: "executor".into(),
            actor: "spare".into(),
        };
        assert_eq!(note.level().prefix(), Some("note"));
        assert_eq!(
            note.to_string(),
            "attempt 2 of stage executor was rate limited; falling back to actor `spare`"
        );
        let same = Note::Pushed {
            run: "abc".into(),
            remote: "origin".into(),
            how: Arrival::AlreadyThere,
        };
        assert_eq!(same.level(), Level::Plain);
        assert_eq!(same.to_string(), "abc is up to date on origin");
    }
}

/// What `git baton cycle` says as it goes: one line per decision that changed, per resume it
/// starts and ends, and each line a resume it drives prints, tagged with its run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CycleNote {
    Decided {
        run: String,
        decision: super::schedule::Decision,
    },
    Resuming {
        run: String,
        /// The fallback actor the resume uses instead of the stage's own.
        actor: Option<String>,
    },
    Said {
        run: String,
        line: String,
    },
    Ended {
        run: String,
        /// The resume's exit code; `None` when a signal ended it.
        code: Option<i32>,
        status: Option<crate::state::RunStatus>,
    },
    /// A signal stopped the cycle; this many resumes are being stopped.
    Stopping {
        driving: usize,
    },
    /// Nothing is due: the cycle looks again at `until`.
    Sleeping {
        until: jiff::Timestamp,
    },
    /// The cycle's stop interrupted the run, but that could not be recorded: the next cycle
    /// takes it for a person's stop.
    NotMarked {
        run: String,
        reason: String,
    },
}

impl CycleNote {
    fn level(&self) -> Level {
        match self {
            CycleNote::Ended { code, .. } if !matches!(code, Some(0..=1)) => Level::Warning,
            CycleNote::NotMarked { .. } => Level::Warning,
            _ => Level::Plain,
        }
    }
}

impl fmt::Display for CycleNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use super::schedule::Decision;
        match self {
            CycleNote::Decided { run, decision } => match decision {
                Decision::Resume { why, .. } => write!(f, "cycle: {run}: due: {why}"),
                Decision::Wait {
                    until: Some(until),
                    why,
                } => write!(f, "cycle: {run}: waits until {until}: {why}"),
                Decision::Wait { until: None, why } => {
                    write!(f, "cycle: {run}: waits for a person: {why}")
                }
                Decision::Skip { why } => write!(f, "cycle: {run}: left alone: {why}"),
            },
            CycleNote::Resuming { run, actor: None } => write!(f, "cycle: {run}: resuming"),
            CycleNote::Resuming {
                run,
                actor: Some(actor),
            } => write!(f, "cycle: {run}: resuming with {actor}"),
            CycleNote::Said { run, line } => write!(f, "{run} | {line}"),
            CycleNote::Ended { run, code, status } => {
                let status = status.map_or("unknown".to_owned(), |s| s.to_string());
                match code {
                    Some(0 | 1) => write!(f, "cycle: {run}: resume ended, the run is {status}"),
                    Some(2) => write!(
                        f,
                        "cycle: {run}: resume refused (exit 2), the run is {status}; this cycle does not retry it"
                    ),
                    Some(3) => write!(
                        f,
                        "cycle: {run}: busy (exit 3): another process or machine drives it"
                    ),
                    Some(130) => write!(f, "cycle: {run}: resume interrupted, the run is {status}"),
                    Some(code) => {
                        write!(f, "cycle: {run}: resume exited {code}, the run is {status}")
                    }
                    None => write!(
                        f,
                        "cycle: {run}: resume killed by a signal, the run is {status}"
                    ),
                }
            }
            CycleNote::Stopping { driving } => write!(
                f,
                "cycle: stopping: {driving} resume(s) are stopped at a safe point"
            ),
            CycleNote::Sleeping { until } => {
                write!(f, "cycle: nothing is due; next look at {until}")
            }
            CycleNote::NotMarked { run, reason } => write!(
                f,
                "cycle: {run}: could not record that the cycle's stop interrupted it ({reason}); \
                 the next cycle leaves it alone: resume it by hand"
            ),
        }
    }
}
