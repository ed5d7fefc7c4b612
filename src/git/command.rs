//! The one place git-baton runs git as a child process.
//!
//! git-baton is itself started by git (`git baton …`), from hooks, or with `git --git-dir=…`, and
//! so inherits whatever repository-local variables its caller set: `GIT_DIR`, `GIT_WORK_TREE`,
//! `GIT_INDEX_FILE`, `GIT_OBJECT_DIRECTORY`, `GIT_CONFIG_PARAMETERS`… A child git that inherits
//! them works on the caller's repository, index or object store instead of the one git-baton
//! means — `GIT_INDEX_FILE=… git baton finish` once wrote its index there. Git itself clears the
//! same list ([`LOCAL_ENV_VARS`], what `git rev-parse --local-env-vars` prints) before it enters
//! another repository, such as a submodule; every command built here does the same, names its
//! repository with `--git-dir` (and `--work-tree` where it needs one), reads nothing from stdin,
//! and fails with an error that names the command, its exit status and what it wrote to stderr.
//!
//! Every command also runs with `core.hooksPath` set to [`NO_HOOKS`], so that none of the
//! user's hooks runs: they are there for the user's own git commands, and a run's snapshot or
//! removal is not one (`update-ref` and `worktree remove` would otherwise trigger
//! `reference-transaction`, `read-tree` and `add` `post-index-change`). gix, in process, runs no
//! hooks either. The actor's own git commands in its worktree are the user's business and run
//! the user's hooks as usual.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{CommandFailed, GitError, Result};

/// The repository-local environment variables of git 2.47 (`git rev-parse --local-env-vars`):
/// each redirects git to another repository, worktree, index, object store or configuration.
/// A test compares this list with the installed git's.
pub const LOCAL_ENV_VARS: [&str; 15] = [
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
];

/// The variables a process started on behalf of a repository must not inherit, for callers that
/// start other programs in a worktree (an actor's environment, for instance): [`LOCAL_ENV_VARS`],
/// and whatever else the installed git lists, asked once per process — a git newer than this
/// list may redirect more.
pub fn local_env_vars() -> &'static [&'static str] {
    static ALL: OnceLock<Vec<&'static str>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = LOCAL_ENV_VARS.to_vec();
        let mut cmd = Command::new("git");
        for var in LOCAL_ENV_VARS {
            cmd.env_remove(var);
        }
        let listed = cmd
            .args(["rev-parse", "--local-env-vars"])
            .current_dir(std::env::temp_dir())
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        if let Ok(out) = listed
            && out.status.success()
        {
            for name in String::from_utf8_lossy(&out.stdout).lines().map(str::trim) {
                let plausible = name.starts_with("GIT_")
                    && name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
                if plausible && !all.contains(&name) {
                    // Once per process, a handful of bytes: kept for its life.
                    all.push(Box::leak(name.to_owned().into_boxed_str()));
                }
            }
        }
        all
    })
}

/// The error of a command that ran and exited non-zero.
pub(super) fn failed(command: String, at: PathBuf, out: &std::process::Output) -> GitError {
    GitError::Command(Box::new(CommandFailed {
        command,
        at,
        status: out.status.to_string(),
        stderr: excerpt(&out.stderr),
    }))
}

/// Kills `child` and, when it leads a process group of its own (`grouped`), that group (whose
/// members outlive it, if any, the group still names); and reaps it.
fn stop(child: &mut std::process::Child, grouped: bool) {
    #[cfg(unix)]
    if grouped
        && let Ok(pid) = i32::try_from(child.id())
        && let Some(pid) = rustix::process::Pid::from_raw(pid)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// How long a command that git-baton forwarded a signal to, and what it started, get to end
/// before they are killed: as long as an actor gets.
pub const GRACE: Duration = Duration::from_secs(5);

/// Forwards `signal` to `child` and every process it started (its descendants, and its group
/// when it leads one), waits up to [`GRACE`] for it to end, then kills what is left of all of
/// them and reaps it. Descendants are looked for until the child ends, so that one started
/// meanwhile gets the signal too; one that outlived the child was seen before, and is killed.
fn forward(child: &mut std::process::Child, signal: i32, grouped: bool) {
    use crate::procs::{self, Proc};
    use rustix::process::{Pid, Signal};
    let Some(pid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) else {
        stop(child, grouped);
        return;
    };
    let signal = Signal::from_named_raw(signal).unwrap_or(Signal::TERM);
    let mut seen: Vec<Proc> = Vec::new();
    let reach = |seen: &mut Vec<Proc>| {
        for proc in procs::descendants(pid.as_raw_nonzero().get()) {
            if !seen
                .iter()
                .any(|s| s.pid == proc.pid && s.start == proc.start)
            {
                procs::signal(&proc, signal);
                seen.push(proc);
            }
        }
    };
    reach(&mut seen);
    // The child is not reaped yet, so its pid still names it.
    let _ = rustix::process::kill_process(pid, signal);
    if grouped {
        let _ = rustix::process::kill_process_group(pid, signal);
    }
    let until = Instant::now() + GRACE;
    while matches!(child.try_wait(), Ok(None)) && Instant::now() < until {
        reach(&mut seen);
        std::thread::sleep(Duration::from_millis(20));
    }
    for proc in &seen {
        if !procs::ended(proc) {
            procs::signal(proc, Signal::KILL);
        }
    }
    stop(child, grouped);
}

/// The hooks directory of every git child: a path under which no file can exist, so that git
/// finds no hook to run.
const NO_HOOKS: &str = "core.hooksPath=/dev/null";

/// How many bytes of a failed command's stderr an error keeps.
const STDERR_EXCERPT: usize = 1000;

/// A git command about to run on one named repository.
pub(super) struct Git {
    cmd: Command,
    /// The arguments after the repository options, as the error shows them.
    shown: Vec<String>,
    /// What the command reads on stdin; nothing when `None`.
    input: Option<Vec<u8>>,
    /// Where it runs: the worktree, or the git directory when there is none.
    at: PathBuf,
    /// Talks to a remote, and so may wait for ever: a signal to git-baton is forwarded to it.
    network: bool,
}

impl Git {
    /// git on the repository whose git directory is `git_dir`, with no worktree (refs, objects,
    /// the worktree registry).
    pub fn at_git_dir(git_dir: &Path) -> Git {
        let mut cmd = base_command(git_dir);
        cmd.arg(prefixed("--git-dir=", git_dir));
        Git {
            cmd,
            shown: Vec::new(),
            input: None,
            at: git_dir.to_path_buf(),
            network: false,
        }
    }

    /// git on the worktree `worktree`, whose own git directory is `git_dir`, run from its top so
    /// that pathspecs are relative to it.
    pub fn at_worktree(git_dir: &Path, worktree: &Path) -> Git {
        let mut cmd = base_command(worktree);
        cmd.arg(prefixed("--git-dir=", git_dir))
            .arg(prefixed("--work-tree=", worktree));
        Git {
            cmd,
            shown: Vec::new(),
            input: None,
            at: worktree.to_path_buf(),
            network: false,
        }
    }

    /// Runs it from `dir` instead: where relative paths the user gave (a remote's URL, say)
    /// mean what they mean to the user's own git commands.
    pub fn run_in(mut self, dir: &Path) -> Git {
        self.cmd.current_dir(dir);
        dir.clone_into(&mut self.at);
        self
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Git {
        self.shown.push(arg.as_ref().to_string_lossy().into_owned());
        self.cmd.arg(arg);
        self
    }

    pub fn args<I, S>(self, args: I) -> Git
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        args.into_iter().fold(self, Git::arg)
    }

    /// Sets a variable for this command only; git-baton's own choices (a scratch index, the
    /// identity of a snapshot) are the only environment it adds.
    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Git {
        self.cmd.env(key, value);
        self
    }

    /// Marks a command that talks to a remote (`fetch`, `push`): one that may wait for as long
    /// as the remote keeps the connection open, and so is given the signals git-baton gets (see
    /// [`Self::finish_within`]).
    pub fn network(mut self) -> Git {
        self.network = true;
        self
    }

    /// Gives the command `bytes` on stdin (`update-ref --stdin`): git-baton's own input, never
    /// the user's terminal.
    pub fn input(mut self, bytes: Vec<u8>) -> Git {
        self.input = Some(bytes);
        self
    }

    /// Runs the command and returns its stdout, trimmed; a failure to start it or a non-zero
    /// exit is an error naming the command.
    pub fn output(self) -> Result<String> {
        self.output_within(None)
    }

    /// Runs the command for its effect.
    pub fn run(self) -> Result<()> {
        self.output().map(drop)
    }

    /// [`Self::run`], stopped at `deadline` if there is one (see [`Self::finish_within`]).
    pub fn run_within(self, deadline: Option<Instant>) -> Result<()> {
        self.output_within(deadline).map(drop)
    }

    fn output_within(self, deadline: Option<Instant>) -> Result<String> {
        let (command, at, out) = self.finish_within(deadline)?;
        if !out.status.success() {
            return Err(failed(command, at, &out));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Runs the command to its end, whatever its exit status: its command line, where it ran,
    /// and what it printed.
    pub fn finish(self) -> Result<(String, PathBuf, std::process::Output)> {
        self.finish_within(None)
    }

    /// [`Self::finish`], stopped at `deadline` if there is one, with every process it started
    /// (an `ssh`, a `receive-pack`): for network commands that must not outlive something, such
    /// as a lease, since git waits on a remote that hangs for as long as the connection stays
    /// open. A stopped command is [`GitError::TimedOut`]; a push may then have reached the
    /// remote or not.
    ///
    /// A signal to git-baton while the command runs (see [`crate::signals`]) is forwarded to a
    /// [network](Self::network) command and what it started, which get [`GRACE`] to end before
    /// they are killed; a local command, which ends by itself, is waited for. Either is then
    /// [`GitError::Interrupted`], unless a driver owns the signals and winds down itself: then a
    /// local command's result stands.
    pub fn finish_within(
        mut self,
        deadline: Option<Instant>,
    ) -> Result<(String, PathBuf, std::process::Output)> {
        let command = self.command_line();
        let spawn_failed = |source| GitError::Spawn {
            command: command.clone(),
            source,
        };
        let interrupted = |signal| GitError::Interrupted {
            command: command.clone(),
            signal: crate::signals::name(signal),
        };
        if deadline.is_some_and(|at| Instant::now() >= at) {
            return Err(GitError::TimedOut { command });
        }
        let waiting = crate::signals::Waiting::start(self.network).map_err(interrupted)?;
        #[cfg(unix)]
        if deadline.is_some() {
            // A group of its own, so that a stop reaches whatever it started too.
            std::os::unix::process::CommandExt::process_group(&mut self.cmd, 0);
        }
        let input = self.input.take();
        let mut child = self
            .cmd
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(spawn_failed)?;
        // Written and read from threads: a child that fills its stdout pipe before reading all
        // of stdin, or its stderr pipe while we read stdout, would otherwise wait on us while we
        // wait on it.
        let mut stdin = child.stdin.take();
        let writer = input.map(|bytes| {
            std::thread::spawn(move || {
                use std::io::Write;
                stdin.as_mut().map(|s| s.write_all(&bytes))
            })
        });
        let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_end(&mut bytes);
                }
                let _ = tx.send(bytes);
            });
            rx
        };
        let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
        let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
        // A local command ends by itself: waited for as it is. One that may wait for ever is
        // polled, from every millisecond up to every 50, so that a signal or the deadline is
        // seen within 50 ms.
        let polled = self.network || deadline.is_some();
        let mut pause = Duration::from_millis(1);
        let status = loop {
            if !polled {
                break child.wait().map_err(spawn_failed)?;
            }
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {}
                Err(err) => {
                    stop(&mut child, deadline.is_some());
                    return Err(spawn_failed(err));
                }
            }
            if self.network
                && let Some(signal) = waiting.since()
            {
                forward(&mut child, signal, deadline.is_some());
                return Err(interrupted(signal));
            }
            if deadline.is_some_and(|at| Instant::now() >= at) {
                stop(&mut child, true);
                return Err(GitError::TimedOut { command });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        };
        if let Some(signal) = waiting.since()
            && !crate::signals::owned()
        {
            return Err(interrupted(signal));
        }
        drop(waiting);
        // With a deadline, nothing waits much past it: the writer and the readers are left to
        // end with the pipes, which a process git left running may hold after git exited (its
        // group is not killed then: git, reaped, no longer reserves the group's id). A moment's
        // grace lets the readers of a git that exited just before the deadline finish.
        let collect = |rx: std::sync::mpsc::Receiver<Vec<u8>>| match deadline {
            None => rx.recv().unwrap_or_default(),
            Some(deadline) => rx
                .recv_timeout(
                    deadline
                        .saturating_duration_since(Instant::now())
                        .max(Duration::from_millis(200)),
                )
                .unwrap_or_default(),
        };
        if let Some(writer) = writer
            && deadline.is_none()
        {
            let _ = writer.join();
        }
        let stdout = collect(stdout);
        let stderr = collect(stderr);
        let out = std::process::Output {
            status,
            stdout,
            stderr,
        };
        Ok((command, self.at, out))
    }

    fn command_line(&self) -> String {
        let mut line = String::from("git");
        for arg in &self.shown {
            line.push(' ');
            line.push_str(arg);
        }
        line
    }
}

fn base_command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    for var in local_env_vars() {
        cmd.env_remove(var);
    }
    cmd.arg("-c").arg(NO_HOOKS).current_dir(dir);
    cmd
}

fn prefixed(option: &str, path: &Path) -> OsString {
    let mut arg = OsString::from(option);
    arg.push(path.as_os_str());
    arg
}

/// The start of what a command wrote to stderr, whole lines where they fit.
fn excerpt(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let text = text.trim();
    if text.len() <= STDERR_EXCERPT {
        return text.to_string();
    }
    let mut cut = STDERR_EXCERPT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &text[..cut];
    let head = head.rfind('\n').map_or(head, |at| &head[..at]);
    format!("{head}\n…")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command that outlives its deadline is stopped with what it started: here a shell
    /// alias whose `sleep` writes its pid first, so that the test can see it is gone.
    #[test]
    fn a_deadline_stops_the_command_and_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let alias = format!(
            "alias.hang=!sh -c 'echo $$ >\"{}\"; exec sleep 30'",
            pid_file.display()
        );
        let started = Instant::now();
        let err = Git::at_git_dir(dir.path())
            .args(["-c", &alias, "hang"])
            .run_within(Some(Instant::now() + Duration::from_secs(2)))
            .unwrap_err();
        assert!(matches!(err, GitError::TimedOut { .. }), "{err}");
        assert!(err.to_string().contains("did not finish in time"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(20));
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let stat = format!("/proc/{}/stat", pid.trim());
        // Gone, or a zombie nobody reaped yet (its parent was killed with it); a signal takes
        // a moment to land, so the check is repeated for a while.
        let alive = || {
            std::fs::read_to_string(&stat).is_ok_and(|s| {
                s.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().next())
                    .is_some_and(|state| state != "Z" && state != "X")
            })
        };
        let until = Instant::now() + Duration::from_secs(10);
        while alive() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!alive(), "the command's child {} still runs", pid.trim());

        // Before its deadline, the command runs to its end as ever.
        let (_, _, out) = Git::at_git_dir(dir.path())
            .args(["-c", "alias.ok=!echo fine", "ok"])
            .finish_within(Some(Instant::now() + Duration::from_secs(60)))
            .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, b"fine\n");

        // A deadline already past starts nothing.
        let started = Instant::now();
        let err = Git::at_git_dir(dir.path())
            .args(["-c", "alias.hang=!sleep 30", "hang"])
            .run_within(Some(Instant::now()))
            .unwrap_err();
        assert!(matches!(err, GitError::TimedOut { .. }), "{err}");
        assert!(started.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn the_list_is_what_the_installed_git_clears() {
        let out = Command::new("git")
            .args(["rev-parse", "--local-env-vars"])
            .current_dir(std::env::temp_dir())
            .output()
            .expect("git runs");
        assert!(out.status.success(), "{out:?}");
        let mut theirs: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        let mut ours: Vec<String> = LOCAL_ENV_VARS.iter().map(|v| v.to_string()).collect();
        theirs.sort();
        ours.sort();
        assert_eq!(ours, theirs, "update LOCAL_ENV_VARS to this git's list");
    }

    #[test]
    fn every_command_clears_the_list_runs_no_hook_and_names_its_repository() {
        for git in [
            Git::at_git_dir(Path::new("/r/.git")),
            Git::at_worktree(Path::new("/r/.git/worktrees/w"), Path::new("/w")),
        ] {
            let git = git.arg("status");
            let removed: Vec<&OsStr> = git
                .cmd
                .get_envs()
                .filter(|(_, value)| value.is_none())
                .map(|(key, _)| key)
                .collect();
            for var in LOCAL_ENV_VARS {
                assert!(removed.contains(&OsStr::new(var)), "{var} is inherited");
            }
            let args: Vec<&OsStr> = git.cmd.get_args().collect();
            assert_eq!(args[..2], [OsStr::new("-c"), OsStr::new(NO_HOOKS)]);
            assert!(args[2].to_string_lossy().starts_with("--git-dir=/r/.git"));
            assert_eq!(git.command_line(), "git status");
        }
    }

    #[test]
    fn a_failure_names_the_command_its_status_and_its_stderr() {
        let dir = tempfile::tempdir().unwrap();
        let err = Git::at_git_dir(dir.path())
            .args(["rev-parse", "--verify", "no-such-ref"])
            .output()
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("git rev-parse --verify no-such-ref"),
            "{text}"
        );
        assert!(text.contains("exit status: 128"), "{text}");
        assert!(text.contains("not a git repository"), "{text}");
    }

    #[test]
    fn a_long_stderr_is_cut_at_a_line() {
        let long = "a line of error output\n".repeat(100);
        let cut = excerpt(long.as_bytes());
        assert!(cut.len() <= STDERR_EXCERPT + 4, "{}", cut.len());
        assert!(cut.ends_with("output\n…"), "{cut}");
        assert_eq!(excerpt(b"  short\n"), "short");
    }
}
