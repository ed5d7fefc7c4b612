//! A repository running the real agents through the real `git baton` binary: a plan with two
//! targets, the scripted mock model server, the scratch homes, and `PATH` holding the git-baton
//! binary under test (so that `git baton …` inside the agent runs it) and the agent CLIs.
#![allow(dead_code)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::cli::{self, AgentEnv};
use super::mock::{MockServer, Request, Script};
use crate::support::{Run, TestRepo};

/// The plan every end-to-end run carries out: two documents to change.
pub const PLAN: &str = "\
---
title: State the new grading rule
targets:
  - docs/a.md
  - docs/b.md
---
# State the new grading rule

Replace the old rule in both documents with: grades are A to F.
";

pub const TARGETS: [&str; 2] = ["docs/a.md", "docs/b.md"];

pub struct AgentRepo {
    pub repo: TestRepo,
    pub mock: MockServer,
    pub env: AgentEnv,
}

impl AgentRepo {
    /// The two documents and the plan committed on `main`, without `.baton.yml` yet, and a mock
    /// server that plays `script`.
    pub fn new(script: Script) -> AgentRepo {
        AgentRepo::new_in(&std::env::temp_dir(), script)
    }

    /// Like [`Self::new`], with the repository in a temporary directory under `parent`.
    pub fn new_in(parent: &Path, script: Script) -> AgentRepo {
        let repo = TestRepo::with()
            .files(&[
                ("docs/a.md", "# A\n\nThe old rule.\n"),
                ("docs/b.md", "# B\n\nThe old rule.\n"),
                ("plans/rule.md", PLAN),
            ])
            .commit_in(parent);
        let mock = MockServer::start(script);
        let env = AgentEnv::with_home(&repo.home, repo.tmp(), &mock);
        AgentRepo { repo, mock, env }
    }

    /// The same repository with Claude Code signed in as a subscriber in time zone `tz`.
    pub fn subscriber(mut self, tz: &'static str) -> AgentRepo {
        self.env = self.env.subscription(tz);
        self
    }

    /// `git baton init` with both CLIs on `PATH`, which must write the Claude Code and Codex
    /// presets, Claude Code's first (the gated stage's actor); the file is committed as written.
    pub fn init(&self) -> String {
        let run = self.baton(&["init"]);
        assert_eq!(run.code, 0, "{run}");
        let yml = std::fs::read_to_string(self.repo.path(".baton.yml")).unwrap();
        for actor in ["  claude:\n", "  codex:\n"] {
            assert!(
                yml.contains(actor),
                "no {actor:?} preset in .baton.yml:\n{yml}"
            );
        }
        assert!(
            yml.contains("{ stage: executor, actor: claude, gate: coverage }"),
            "{yml}"
        );
        self.repo.commit_all("git baton init");
        yml
    }

    /// `git baton init --agent AGENT`, which must write `agent`'s preset as the gated stage's
    /// actor; the file is committed as written, and returned.
    pub fn init_agent(&self, agent: &str) -> String {
        let run = self.baton(&["init", "--agent", agent]);
        assert_eq!(run.code, 0, "{run}");
        let yml = std::fs::read_to_string(self.repo.path(".baton.yml")).unwrap();
        assert!(
            yml.contains(&format!(
                "{{ stage: executor, actor: {agent}, gate: coverage }}"
            )),
            "{yml}"
        );
        self.repo
            .commit_all(&format!("git baton init --agent {agent}"));
        yml
    }

    /// What attempt 1 of run `id` printed on `stream` (`stdout`, `stderr`), the test's temporary
    /// directory written `$TMP`; a log that cannot be read is a line that says so, for the
    /// assertion that shows it.
    pub fn attempt_log(&self, id: &str, stream: &str) -> String {
        self.read_log(id, stream)
            .map_or_else(|unread| unread, |text| self.repo.mask(&text))
    }

    /// `git baton run plans/rule.md`, which must exit `code`: the run's id and its attempt's
    /// stdout, captured as the fixture `name` of `agent` (see [`Self::captured_stdout`]) and
    /// shown when the exit code is another.
    #[track_caller]
    pub fn run_rule(&self, agent: &str, name: &str, code: i32) -> (String, String) {
        let run = self.baton(&["run", "plans/rule.md"]);
        let id = run.run_id();
        let stdout = self.captured_stdout(&id, agent, name);
        assert_eq!(run.code, code, "{run}\n--- {agent}'s stdout\n{stdout}");
        (id, stdout)
    }

    /// Run `id`'s `status --json`, which must say `status`, and its attempt 1.
    #[track_caller]
    pub fn ended_as(&self, id: &str, status: &str) -> (Value, Value) {
        let state = self.status(id);
        assert_eq!(state["status"], status, "{state:#}");
        let a = attempt(&state, 1).clone();
        (state, a)
    }

    /// Attempt 1's stdout of run `id`, as read. With `GIT_BATON_AGENT_CAPTURE=1` it is also
    /// written as the fixture `name` of `agent`, with `$TMP` for the test's temporary directory
    /// so that no fixture names a path of the machine it ran on. A log that cannot be read is a
    /// line that says so, and never a fixture.
    pub fn captured_stdout(&self, id: &str, agent: &str, name: &str) -> String {
        match self.read_log(id, "stdout") {
            Ok(text) => {
                super::capture(agent, name, &self.repo.mask(&text));
                text
            }
            Err(unread) => unread,
        }
    }

    fn read_log(&self, id: &str, stream: &str) -> Result<String, String> {
        let path = self.repo.path(&format!(
            ".git/baton/runs/{id}/attempts/executor-1/{stream}.log"
        ));
        std::fs::read_to_string(&path).map_err(|err| {
            let shown = self.repo.mask(&path.display().to_string());
            format!("(cannot read {shown}: {err})")
        })
    }

    /// git-baton's directory, the CLIs' directory, then the caller's `PATH`.
    pub fn path_var(&self) -> OsString {
        let baton = Path::new(env!("CARGO_BIN_EXE_git-baton")).parent().unwrap();
        let mut dirs: Vec<PathBuf> = vec![baton.to_path_buf()];
        dirs.extend(cli::bin_dirs());
        dirs.extend(
            std::env::var_os("PATH")
                .iter()
                .flat_map(std::env::split_paths),
        );
        std::env::join_paths(dirs).unwrap()
    }

    /// `git baton ARGS` in the repository with the agents' offline environment.
    pub fn baton(&self, args: &[&str]) -> Run {
        let mut vars = self.env.vars();
        // The repository's HOME stays (the agents share it); the rest points at the mock.
        vars.retain(|(k, _)| *k != "HOME");
        vars.push(("PATH", self.path_var()));
        let env: Vec<(&str, &std::ffi::OsStr)> =
            vars.iter().map(|(k, v)| (*k, v.as_os_str())).collect();
        self.repo.baton_env(&self.repo.root, args, &env)
    }

    pub fn status(&self, id: &str) -> Value {
        let run = self.baton(&["status", "--json", id]);
        assert_eq!(run.code, 0, "{run}");
        run.json()
    }

    /// The state of run `id`, which a rate limit stopped in its first attempt, and that
    /// attempt: both `rate_limited`, the agent having exited `exit_code`.
    pub fn rate_limited(&self, id: &str, exit_code: i64) -> (Value, Value) {
        let (state, a) = self.ended_as(id, "rate_limited");
        assert_eq!(a["outcome"], "rate_limited", "{a:#}");
        assert_eq!(a["exit_code"], exit_code, "{a:#}");
        (state, a)
    }

    /// The run's worktree, from `status --json`.
    pub fn worktree(&self, state: &Value) -> PathBuf {
        let shown = state["worktree"].as_str().unwrap();
        let rel = shown.strip_prefix("$TMP/").unwrap();
        self.repo.tmp().join(rel)
    }

    /// What attempt `n` of the executor printed on stdout: the agent's own JSON.
    pub fn stdout(&self, id: &str, n: u32) -> String {
        let path = self.repo.path(&format!(
            ".git/baton/runs/{id}/attempts/executor-{n}/stdout.log"
        ));
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
    }

    /// The `result` object Claude Code printed last for attempt `n` (the preset's stream-json
    /// ends with the object `json` prints).
    pub fn claude_result(&self, id: &str, n: u32) -> Value {
        let out = self.stdout(id, n);
        let last = out.lines().rev().find(|l| !l.trim().is_empty());
        let json: Value = serde_json::from_str(last.unwrap_or_default()).unwrap_or_else(|e| {
            panic!("attempt {n} did not print Claude Code's JSON ({e}):\n{out}")
        });
        assert_eq!(json["type"], "result", "{out}");
        json
    }

    /// The cost Claude Code printed for attempt `n` (`total_cost_usd`): git-baton must record
    /// the agent's figure, which depends on the agent's own price list, not compute one.
    pub fn claude_cost(&self, id: &str, n: u32) -> f64 {
        let json = self.claude_result(id, n);
        let out = json.to_string();
        let cost = json["total_cost_usd"].as_f64().unwrap();
        assert!(cost > 0.0, "{out}");
        cost
    }
}

/// Asserts that `request`, the model's first, carries the plan's prompt (its instruction) and
/// `also`.
#[track_caller]
pub fn assert_prompt(request: &Request, also: &str) {
    for part in ["Replace the old rule", also] {
        assert!(
            request.body.contains(part),
            "no {part:?} in {}",
            request.body
        );
    }
}

/// The executor's attempt `n` (1-based).
pub fn attempt(state: &Value, n: usize) -> &Value {
    &attempts(state, "executor")[n - 1]
}

pub use crate::support::attempts;
