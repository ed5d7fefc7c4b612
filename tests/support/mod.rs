//! The hermetic test harness: real git repositories in temporary directories, git and the
//! git-baton binary run in the library's hermetic environment ([`git_baton::hermetic`]: a
//! cleared environment, a temporary HOME, no system or global git configuration and pinned
//! dates), so every run sees the same world.
//!
//! git-baton itself also gets its testing hooks (docs/state.md): the n-th command of a test
//! reads its clock from `GIT_BATON_TIMESTAMP` = n hours after the pinned date and draws its run
//! ids from `GIT_BATON_RANDOMNESS_SEED` = n, so run ids, timestamps and durations repeat from
//! one run of the suite to the next and outputs are compared whole.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use git_baton::hermetic::{Hermetic, Person};

mod fixture;
pub mod forge;
pub mod remote;

pub use fixture::plan_text;

/// The fake agent of `testdata/agents`: a script whose arguments are the verbs it performs.
pub const AGENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/agents/fake-agent.sh");

/// How long a test waits for something that must happen (a process to start or end, a file to
/// appear): long enough for any sane machine under load, short enough that a hang fails the
/// test rather than the CI job.
pub const LIVENESS: Duration = Duration::from_secs(60);

/// The number in the environment variable `name`, else `default`: the bounds the suite's loops
/// take from CI (`FUZZ_CASES`, `CRASH_TRIALS`, `PROPTEST_CASES`).
pub fn env_number<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The seed in the environment variable `name`, else a fresh one: callers print it, so that any
/// run can be replayed.
pub fn env_seed(name: &str) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let set = std::env::var(name).ok().and_then(|v| v.parse().ok());
    set.unwrap_or_else(|| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.finish()
    })
}

/// xorshift64*: enough randomness for kill moments and debris, and replayable from its seed.
pub struct Rng(u64);

impl Rng {
    /// Seeded by `CRASH_SEED`, else afresh; the seed is printed under `test`'s name so that a
    /// failing run can be replayed.
    pub fn seeded(test: &str) -> (Rng, u64) {
        let seed = env_seed("CRASH_SEED");
        println!("{test}: CRASH_SEED={seed}");
        (Rng(seed | 1), seed)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }
}

/// `PATH` with the directory of the binary under test first, so that `git baton …` in a script
/// or an actor runs it.
pub fn path_with_baton() -> std::ffi::OsString {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_git-baton")).parent().unwrap();
    let mut path = std::ffi::OsString::from(bin_dir);
    if let Some(rest) = std::env::var_os("PATH") {
        path.push(":");
        path.push(rest);
    }
    path
}

/// Waits until `path` holds a complete line (what a script writes ends with a newline), at
/// most [`LIVENESS`], and returns it trimmed.
pub fn wait_for_line(path: &Path) -> String {
    let deadline = std::time::Instant::now() + LIVENESS;
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text.trim().to_string();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} did not appear within {LIVENESS:?}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The environment every child process gets, and nothing else (plus PATH to find git and sh).
fn hermetic(cmd: &mut Command, home: &Path) {
    Hermetic::new(home)
        .identity(
            Person::new("Test Author", "author@example.com"),
            Person::new("Test Committer", "committer@example.com"),
        )
        .apply(cmd);
}

pub struct TestRepo {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    /// git-baton commands started so far.
    commands: AtomicU32,
}

/// Whatever a test started through its repository ends with it, whether the test passed,
/// failed or panicked: every process whose environment names this repository's HOME (which
/// every git, git-baton, actor and daemon started here inherits; nothing else has it) is killed
/// before the temporary directory goes.
impl Drop for TestRepo {
    fn drop(&mut self) {
        end_processes_of(&self.home);
    }
}

/// Kills every live process of ours whose environment has `HOME=<home>`, in bounded rounds
/// (one may have started another meanwhile), and waits (boundedly) until they are gone.
pub fn end_processes_of(home: &Path) {
    use git_baton::procs;
    let entry = format!("HOME={}", home.display());
    for _ in 0..5 {
        let Ok(all) = procs::list() else { return };
        let found: Vec<procs::Proc> = all
            .into_iter()
            .filter(|p| !p.zombie && procs::environ_has(p.pid, &entry))
            .collect();
        if found.is_empty() {
            return;
        }
        for proc in &found {
            procs::signal(proc, rustix::process::Signal::KILL);
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !found.iter().all(procs::ended) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl TestRepo {
    /// An empty repository on branch `main`.
    pub fn new() -> TestRepo {
        TestRepo::new_in(&std::env::temp_dir())
    }

    /// An empty repository on branch `main` in a new temporary directory under `parent`: for
    /// tests where being outside `/tmp` matters (an agent's sandbox leaves `/tmp` writable).
    pub fn new_in(parent: &Path) -> TestRepo {
        std::fs::create_dir_all(parent).unwrap();
        let tmp = tempfile::Builder::new()
            .prefix("baton-test")
            .tempdir_in(parent)
            .unwrap();
        let repo = TestRepo::in_tempdir(tmp);
        std::fs::create_dir_all(&repo.root).unwrap();
        repo.git(["init", "-q"]);
        repo
    }

    /// A repository to be at `repo/` of `tmp` (not made yet), with its HOME at `home/`, whose
    /// git configuration names `main` the default branch.
    fn in_tempdir(tmp: tempfile::TempDir) -> TestRepo {
        // Canonical so that paths printed by git and by us agree even where /tmp is a symlink.
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("repo");
        let home = base.join("home");
        std::fs::create_dir_all(home.join(".config")).unwrap();
        std::fs::write(home.join(".gitconfig"), "[init]\n\tdefaultBranch = main\n").unwrap();
        TestRepo {
            _tmp: tmp,
            root,
            home,
            commands: AtomicU32::new(0),
        }
    }

    /// The temporary directory that holds the repository, for siblings such as linked worktrees.
    pub fn tmp(&self) -> &Path {
        self.root.parent().unwrap()
    }

    /// `text` with the temporary directory written `$TMP`, as git-baton's output is shown.
    pub fn mask(&self, text: &str) -> String {
        text.replace(&self.tmp().display().to_string(), "$TMP")
    }

    /// A path or command git-baton printed, with `$TMP` back to the temporary directory.
    pub fn unmask(&self, shown: &str) -> String {
        shown.replace("$TMP", &self.tmp().display().to_string())
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn write(&self, rel: &str, content: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    /// Runs git in the repository and returns its stdout; panics with git's stderr on failure.
    pub fn git<I, S>(&self, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.git_in(&self.root, args)
    }

    pub fn git_in<I, S>(&self, dir: &Path, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.git_output(dir, args);
        assert!(
            out.status.success(),
            "git failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Runs git and returns whatever happened, for operations that may legitimately fail.
    pub fn git_output<I, S>(&self, dir: &Path, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new("git");
        cmd.args(args).current_dir(dir);
        hermetic(&mut cmd, &self.home);
        cmd.output().unwrap()
    }

    pub fn commit_all(&self, message: &str) {
        self.git(["add", "-A"]);
        self.git(["commit", "-q", "--allow-empty", "-m", message]);
    }

    /// Adds the repository at `sub` as a submodule at `path` (`git submodule add`, the file
    /// transport allowed for it), staged, not committed.
    pub fn add_submodule(&self, sub: &Path, path: &str) {
        self.git([
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            sub.to_str().unwrap(),
            path,
        ]);
    }

    /// A commit of what is staged (often nothing), its message a subject and a body: where a
    /// test's work is the message, as a `Baton-Unchanged` trailer is.
    pub fn commit_message(&self, subject: &str, body: &str) {
        self.git(["commit", "-q", "--allow-empty", "-m", subject, "-m", body]);
    }

    /// git's own answer to "what is the cumulative diff against REV":
    /// `git diff --no-renames --name-only REV` ∪ `git ls-files --others --exclude-standard`.
    ///
    /// The diff reads the index expanded to a full one (`index.sparse=false`): a sparse index is
    /// only a compressed form of the same entries, and git 2.47's diff of a sparse index aborts
    /// on an assertion when a sparse directory entry stands where the base has a file
    /// (`show_modified: S_ISSPARSEDIR(old) == S_ISSPARSEDIR(new)`).
    pub fn oracle(&self, dir: &Path, rev: &str) -> Vec<String> {
        let mut paths: Vec<String> = Vec::new();
        for args in [
            vec![
                "-c",
                "core.quotePath=false",
                "-c",
                "index.sparse=false",
                "-c",
                "advice.sparseIndexExpanded=false",
                "diff",
                "--no-renames",
                "--name-only",
                "-z",
                rev,
            ],
            vec!["ls-files", "-z", "--others", "--exclude-standard"],
        ] {
            let out = self.git_in(dir, args);
            paths.extend(out.split('\0').filter(|p| !p.is_empty()).map(String::from));
        }
        paths.sort();
        paths.dedup();
        paths
    }

    /// Runs the real git-baton binary in `dir` with the hermetic environment.
    pub fn baton_in<I, S>(&self, dir: &Path, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.baton_env(dir, args, &[])
    }

    /// The clock and id seed of the next git-baton command: see the module documentation.
    fn next_clock(&self, cmd: &mut Command) {
        let n = self.commands.fetch_add(1, Ordering::Relaxed);
        let start: jiff::Timestamp = git_baton::hermetic::PINNED_DATE.parse().unwrap();
        let at = start + jiff::SignedDuration::from_hours(i64::from(n));
        cmd.env("GIT_BATON_TIMESTAMP", at.to_string())
            .env("GIT_BATON_RANDOMNESS_SEED", n.to_string());
    }

    /// Like [`Self::baton_in`], with extra environment variables (`GITHUB_STEP_SUMMARY`,
    /// `GIT_CEILING_DIRECTORIES`, ...) on top of the hermetic ones.
    pub fn baton_env<I, S>(&self, dir: &Path, args: I, env: &[(&str, &OsStr)]) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.baton_command(dir, &[], args);
        cmd.envs(env.iter().copied());
        let out = cmd.output().unwrap();
        Run::new(out, &[(self.tmp(), "$TMP")])
    }

    /// Starts the real git-baton binary in `dir` with the hermetic environment (plus `env`) and
    /// returns at once, stdout and stderr piped: for tests that signal or race the process.
    pub fn baton_spawn<I, S>(&self, dir: &Path, args: I, env: &[(&str, &OsStr)]) -> Child
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.baton_command(dir, &[], args);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .envs(env.iter().copied());
        cmd.spawn().unwrap()
    }

    /// The command that runs the real git-baton binary in `dir` with the hermetic environment and
    /// the next clock, for tests that choose its streams themselves. A non-empty `wrapper` is
    /// the program that starts the binary, with its first arguments (`sh -c '…; exec "$@"' sh`):
    /// the binary's path and `args` follow them.
    pub fn baton_command<I, S>(&self, dir: &Path, wrapper: &[&str], args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.hermetic_baton(dir, wrapper, args);
        self.next_clock(&mut cmd);
        cmd
    }

    /// [`Self::baton_command`] without a clock: the hermetic environment only.
    fn hermetic_baton<I, S>(&self, dir: &Path, wrapper: &[&str], args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let bin = env!("CARGO_BIN_EXE_git-baton");
        let mut cmd = match wrapper {
            [] => Command::new(bin),
            [program, first @ ..] => {
                let mut cmd = Command::new(program);
                cmd.args(first).arg(bin);
                cmd
            }
        };
        cmd.args(args).current_dir(dir);
        hermetic(&mut cmd, &self.home);
        cmd
    }

    /// Waits for a process started by [`Self::baton_spawn`] and collects it as a [`Run`]; kills
    /// it and panics if it is still running after `timeout`, so a hang fails instead of hanging.
    pub fn baton_wait(&self, child: Child, timeout: Duration) -> Run {
        let pid = child.id();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        match rx.recv_timeout(timeout) {
            Ok(out) => Run::new(out.unwrap(), &[(self.tmp(), "$TMP")]),
            Err(_) => {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
                panic!("git-baton (pid {pid}) did not exit within {timeout:?}");
            }
        }
    }

    /// Runs `script` with `sh -e` in the repository, in the hermetic environment with the
    /// git-baton binary first on PATH, so that `git baton …` in it runs the binary under test:
    /// for commands git-baton prints for people to run.
    pub fn shell(&self, script: &str) -> Run {
        let mut cmd = Command::new("sh");
        cmd.args(["-e", "-c", script]).current_dir(&self.root);
        hermetic(&mut cmd, &self.home);
        cmd.env("PATH", path_with_baton());
        Run::new(cmd.output().unwrap(), &[(self.tmp(), "$TMP")])
    }

    pub fn baton<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.baton_in(&self.root, args)
    }

    /// `git baton run PLAN`, which must exit `code`: the new run's id, and what it printed.
    #[track_caller]
    pub fn run_plan(&self, plan: &str, code: i32) -> (String, Run) {
        let run = self.baton(["run", plan]);
        assert_eq!(run.code, code, "{run}");
        (run.run_id(), run)
    }
}

/// One run of the binary, rendered for a snapshot: exit code, stdout and stderr together.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The one `error:` line of stderr (a failure prints exactly one), after asserting that
    /// the command exited `code`.
    #[track_caller]
    pub fn the_error(&self, code: i32) -> &str {
        assert_eq!(self.code, code, "{self}");
        let errors: Vec<&str> = self
            .stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .collect();
        assert_eq!(errors.len(), 1, "{self}");
        errors[0]
    }

    /// The run id from the first line of stderr, which must be `run <id>`.
    pub fn run_id(&self) -> String {
        let first = self.stderr.lines().next().unwrap_or_default();
        let id = first
            .strip_prefix("run ")
            .unwrap_or_else(|| panic!("the first stderr line is not `run <id>`:\n{self}"));
        assert!(
            id.len() == 10 && id.chars().all(|c| c.is_ascii_alphanumeric()),
            "not a run id: {id:?}"
        );
        id.to_string()
    }

    /// A finished process's output, each `(path, name)` of `replacements` written as `name`.
    pub fn new(out: Output, replacements: &[(&Path, &str)]) -> Run {
        let clean = |bytes: &[u8]| {
            let mut text = String::from_utf8_lossy(bytes).into_owned();
            for (path, name) in replacements {
                text = text.replace(&path.display().to_string(), name);
            }
            text
        };
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: clean(&out.stdout),
            stderr: clean(&out.stderr),
        }
    }

    /// The same run with `from` replaced by `to` in stdout and stderr, e.g. to name commit ids.
    pub fn replace(&self, from: &str, to: &str) -> Run {
        Run {
            code: self.code,
            stdout: self.stdout.replace(from, to),
            stderr: self.stderr.replace(from, to),
        }
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "exit: {}", self.code)?;
        if !self.stdout.is_empty() {
            writeln!(f, "--- stdout\n{}", self.stdout.trim_end())?;
        }
        if !self.stderr.is_empty() {
            writeln!(f, "--- stderr\n{}", self.stderr.trim_end())?;
        }
        Ok(())
    }
}

/// The run's worktree as `status --json` names it: the harness shows the test's temporary
/// directory as `$TMP`, and the worktree must be under `repo`'s.
pub fn worktree_of(repo: &TestRepo, state: &serde_json::Value) -> PathBuf {
    let shown = state["worktree"].as_str().unwrap();
    let rel = shown
        .strip_prefix("$TMP/")
        .unwrap_or_else(|| panic!("the worktree is not in this test's directory: {shown}"));
    repo.tmp().join(rel)
}

/// Stage `name` of a run's state as `status --json` prints it.
pub fn stage<'a>(state: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    state["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no stage {name} in {state:#}"))
}

/// The attempts of stage `name`.
pub fn attempts<'a>(state: &'a serde_json::Value, name: &str) -> &'a Vec<serde_json::Value> {
    stage(state, name)["attempts"].as_array().unwrap()
}

/// A field of every attempt of a stage, for one-line assertions.
pub fn attempt_field(state: &serde_json::Value, name: &str, field: &str) -> Vec<serde_json::Value> {
    attempts(state, name)
        .iter()
        .map(|a| a[field].clone())
        .collect()
}

/// Asserts the actor and the outcome of each of the executor's attempts, in order.
#[track_caller]
pub fn assert_executor_attempts(state: &serde_json::Value, expected: &[(&str, &str)]) {
    let actors: Vec<&str> = expected.iter().map(|(actor, _)| *actor).collect();
    let outcomes: Vec<&str> = expected.iter().map(|(_, outcome)| *outcome).collect();
    assert_eq!(
        attempt_field(state, "executor", "actor"),
        actors,
        "{state:#}"
    );
    assert_eq!(
        attempt_field(state, "executor", "outcome"),
        outcomes,
        "{state:#}"
    );
}

/// The script of an actor that, the first time any run calls it (no marker file in `dir` yet),
/// prints Claude Code's captured JSON for a usage limit resetting `secs` seconds from now and
/// exits 1; every later time it does the whole plan (a line more in `docs/a.md`, `b` and `c`).
pub fn limited_once_script(dir: &Path, secs: u32) -> String {
    let template = dir.join("limit.json");
    let capture = text(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/agents/claude/rate-limit-429.json"
    )));
    let from = "API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit";
    assert!(capture.contains(from));
    std::fs::write(
        &template,
        capture.replace(from, "Claude AI usage limit reached|RESET_EPOCH"),
    )
    .unwrap();
    let marker = dir.join("limited-once");
    format!(
        "if [ -e '{marker}' ]; then \
             for d in a b c; do echo done >> docs/$d.md; done; \
         else \
             touch '{marker}'; \
             sed \"s/RESET_EPOCH/$(( $(date +%s) + {secs} ))/\" '{template}'; \
             exit 1; \
         fi",
        marker = marker.display(),
        template = template.display(),
    )
}

/// The text of the file at `path`; a test fails naming it when it cannot be read.
pub fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}
