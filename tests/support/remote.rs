//! Machines that share a remote, for the tests of runs that travel through git (issue 10): one
//! bare repository, reached by `file://` or by `git daemon` on 127.0.0.1, and clones of it,
//! each in a temporary directory of its own with its own HOME and hermetic git environment.
//!
//! Machines run git-baton on the real clock: a lease is a span of real time that two machines
//! compare, which the injected clock of [`TestRepo::baton`] (one hour further per command, per
//! repository) cannot express. Their commits carry real dates too, so two machines that record
//! the same thing still make different commits, as real machines do.

use std::ffi::OsStr;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::fixture::Fixture;
use super::{Run, TestRepo, hermetic};

/// How long `git daemon` gets to start listening.
const DAEMON_START: Duration = Duration::from_secs(10);

/// The variables of the injected clock and of pinned commit dates, which machines go without.
const INJECTED: [&str; 4] = [
    "GIT_BATON_TIMESTAMP",
    "GIT_BATON_RANDOMNESS_SEED",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_DATE",
];

/// How a machine reaches the shared repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `file://` URL of the bare repository.
    File,
    /// `git://127.0.0.1:<port>/origin.git`, served by `git daemon` with pushing enabled.
    Daemon,
}

/// The shared bare repository, `origin.git`, made from a fixture, and the daemon serving it.
pub struct Origin {
    /// Declared first, so that it is dropped (stopped) before the repository it serves.
    _daemon: Option<Daemon>,
    /// The repository the fixture was committed in; its temporary directory holds `origin.git`.
    seed: TestRepo,
    pub bare: PathBuf,
    pub url: String,
}

impl Origin {
    /// The fixture committed, cloned bare, and served over `transport`. `Err` says why the
    /// transport is not available on this machine (no `git daemon`), for the test to print as
    /// `skipped: …`.
    pub fn new(fixture: Fixture, transport: Transport) -> Result<Origin, String> {
        let seed = fixture.commit();
        let bare = seed.tmp().join("origin.git");
        seed.git([
            "clone",
            "-q",
            "--bare",
            seed.root.to_str().unwrap(),
            bare.to_str().unwrap(),
        ]);
        let (url, daemon) = match transport {
            Transport::File => (format!("file://{}", bare.display()), None),
            Transport::Daemon => {
                let daemon = Daemon::start(seed.tmp(), &seed.home)?;
                let url = format!("git://127.0.0.1:{}/origin.git", daemon.port);
                (url, Some(daemon))
            }
        };
        Ok(Origin {
            _daemon: daemon,
            seed,
            bare,
            url,
        })
    }

    /// The pid of the `git daemon` serving the origin, if one does.
    pub fn daemon_pid(&self) -> Option<u32> {
        self._daemon.as_ref().map(Daemon::pid)
    }

    /// A new machine: a clone of the origin in a temporary directory of its own.
    pub fn machine(&self) -> TestRepo {
        TestRepo::clone_of(&self.url)
    }

    /// Runs git in the bare repository (`for-each-ref`, `cat-file` …) and returns its stdout.
    pub fn git<I, S>(&self, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.seed.git_in(&self.bare, args)
    }

    /// The commit `rev` names in the bare repository, if it names one.
    pub fn rev(&self, rev: &str) -> Option<String> {
        let out = self
            .seed
            .git_output(&self.bare, ["rev-parse", "--verify", "-q", rev]);
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// The names of the origin's refs under `prefix`, sorted.
    pub fn refs(&self, prefix: &str) -> Vec<String> {
        let out = self.git(["for-each-ref", "--format=%(refname)", prefix]);
        out.lines().map(String::from).collect()
    }
}

impl TestRepo {
    /// A clone of `url` (on branch `main`) in a new temporary directory, with its own HOME.
    pub fn clone_of(url: &str) -> TestRepo {
        let tmp = tempfile::Builder::new()
            .prefix("baton-machine")
            .tempdir()
            .unwrap();
        let repo = TestRepo::in_tempdir(tmp);
        repo.git_in(repo.tmp(), ["clone", "-q", url, "repo"]);
        repo
    }

    /// The command that runs git-baton in `dir` as a machine does: the hermetic environment on
    /// the real clock, with fresh ids and commits dated now (see the module documentation).
    pub fn live_command<I, S>(&self, dir: &Path, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.hermetic_baton(dir, &[], args);
        for name in INJECTED {
            cmd.env_remove(name);
        }
        cmd
    }

    /// Runs git-baton in the repository on the real clock; see [`Self::live_command`].
    pub fn live<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.live_command(&self.root, args).output().unwrap();
        Run::new(out, &[(self.tmp(), "$TMP")])
    }

    /// Starts git-baton in the repository on the real clock and returns at once, stdout and
    /// stderr piped; collect it with [`TestRepo::baton_wait`].
    pub fn live_spawn<I, S>(&self, args: I) -> Child
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.live_command(&self.root, args);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd.spawn().unwrap()
    }

    /// Runs `sh -c script` in the repository like [`TestRepo::shell`], on the real clock.
    pub fn live_shell(&self, script: &str) -> Run {
        let out = self.live_shell_command(script).output().unwrap();
        Run::new(out, &[(self.tmp(), "$TMP")])
    }

    /// The command [`TestRepo::live_shell`] runs, to be spawned.
    pub fn live_shell_command(&self, script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]).current_dir(&self.root);
        hermetic(&mut cmd, &self.home);
        for name in INJECTED {
            cmd.env_remove(name);
        }
        cmd.env("PATH", super::path_with_baton());
        cmd
    }
}

/// `git daemon` serving the bare repositories under a directory on 127.0.0.1, pushing enabled;
/// killed when dropped.
pub struct Daemon {
    child: Child,
    pub port: u16,
}

impl Daemon {
    /// Starts the daemon on a free port and waits until it accepts connections.
    fn start(base_path: &Path, home: &Path) -> Result<Daemon, String> {
        let exec_path = Command::new("git").arg("--exec-path").output();
        let exec_path = match exec_path {
            Ok(out) if out.status.success() => {
                PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
            }
            _ => return Err("`git --exec-path` failed".to_owned()),
        };
        if !exec_path.join("git-daemon").is_file() {
            return Err(format!(
                "git daemon is not installed (no git-daemon in {})",
                exec_path.display()
            ));
        }
        // The port is free when we ask; another process may take it before the daemon binds
        // it, so a daemon that exits at once is started again on another port.
        let mut last_error = String::new();
        for _ in 0..3 {
            let port = {
                let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
                listener.local_addr().map_err(|e| e.to_string())?.port()
            };
            // `git-daemon` itself, not `git daemon`: the `git` wrapper would be the child we
            // know, and killing it would leave the daemon serving on.
            let mut cmd = Command::new(exec_path.join("git-daemon"));
            cmd.args([
                "--reuseaddr",
                "--export-all",
                "--enable=receive-pack",
                "--informative-errors",
                "--listen=127.0.0.1",
            ])
            .arg(format!("--port={port}"))
            .arg(format!("--base-path={}", base_path.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
            hermetic(&mut cmd, home);
            // A group of its own, with the children it forks for each connection: dropping the
            // daemon kills the whole group.
            std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
            let child = cmd.spawn().map_err(|e| format!("git daemon: {e}"))?;
            let mut daemon = Daemon { child, port };
            match daemon.wait_listening() {
                Ok(()) => return Ok(daemon),
                Err(e) => last_error = e,
            }
        }
        Err(last_error)
    }

    /// Bounded: connection attempts every 20 ms for [`DAEMON_START`].
    fn wait_listening(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + DAEMON_START;
        loop {
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("git daemon on port {} exited: {status}", self.port));
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "git daemon did not listen on port {} within {DAEMON_START:?}",
                    self.port
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Daemon {
    /// The daemon's pid, which is also its process group's id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// Kills the daemon's process group (the daemon and what it forked for its connections), then
/// reaps the daemon: nothing it started outlives the test, even one that panicked.
impl Drop for Daemon {
    fn drop(&mut self) {
        kill_group(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// SIGKILL to the process group `pgid`.
pub fn kill_group(pgid: u32) {
    if let Some(pid) = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// A remote that accepts every connection on 127.0.0.1 and never answers: git waits on it for
/// as long as the connection stays open. Dropped, it closes the connections and stops
/// listening.
pub struct Silent {
    pub port: u16,
    accepted: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Silent {
    pub fn new() -> Silent {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (accepted, stop) = (Arc::clone(&accepted), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut held = Vec::new();
                for conn in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(conn) = conn {
                        held.push(conn);
                        accepted.fetch_add(1, Ordering::SeqCst);
                    }
                }
            })
        };
        Silent {
            port,
            accepted,
            stop,
            thread: Some(thread),
        }
    }

    /// `git://127.0.0.1:<port>/origin.git`.
    pub fn url(&self) -> String {
        format!("git://127.0.0.1:{}/origin.git", self.port)
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wakes the accepting thread, which then sees `stop`.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
