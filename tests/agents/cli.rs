//! Finding the real agent CLIs, the skip rule, and the offline environment they run in.
//!
//! The CLIs come from `$GIT_BATON_AGENT_BIN` (directories, separated as in `PATH`), by default
//! `target/agents/node_modules/.bin` and `target/agents/aider-venv/bin`, where `.ci/run` installs
//! the pinned versions. A test whose
//! CLI is missing prints `skipped: <test>: <why>` and passes, so that the README's `cargo test`
//! works with only Rust and git — unless `GIT_BATON_REQUIRE_REAL_AGENTS=1` (set by `.ci/run`
//! after a successful install), where a missing CLI fails the test.
//!
//! Each test gets scratch `HOME` and `CODEX_HOME` directories and points every CLI at its own
//! mock model server on 127.0.0.1; nothing reaches the network.
#![allow(dead_code)]

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use super::mock::MockServer;

/// The directories holding the CLIs: npm's for Claude Code, Codex, opencode and Gemini CLI, the
/// virtual environment's for aider.
pub fn bin_dirs() -> Vec<PathBuf> {
    match std::env::var_os("GIT_BATON_AGENT_BIN") {
        Some(dirs) => std::env::split_paths(&dirs).collect(),
        None => {
            let agents = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/agents");
            vec![
                agents.join("node_modules/.bin"),
                agents.join("aider-venv/bin"),
            ]
        }
    }
}

/// The path of `name` (`claude`, `codex`, `aider`, `opencode`, `gemini`) in the first of [`bin_dirs`] holding it, or
/// why it cannot be used.
pub fn find(name: &str) -> Result<PathBuf, String> {
    let dirs = bin_dirs();
    if let Some(path) = dirs.iter().map(|d| d.join(name)).find(|p| p.is_file()) {
        return Ok(path);
    }
    let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    Err(format!(
        "{name} is not installed in {} (.ci/install-agents installs the pinned CLIs there; GIT_BATON_AGENT_BIN names other directories)",
        shown.join(", ")
    ))
}

/// Whether a missing CLI fails the test instead of skipping it.
pub fn required() -> bool {
    std::env::var_os("GIT_BATON_REQUIRE_REAL_AGENTS").is_some_and(|v| v == "1")
}

/// The CLI `name` for the running test: `Some(path)`, or `None` after printing
/// `skipped: <test>: <why>` when it is missing and not required; panics when it is required.
pub fn agent(name: &str) -> Option<PathBuf> {
    match find(name) {
        Ok(path) => Some(path),
        Err(why) if required() => {
            panic!("{why}, and GIT_BATON_REQUIRE_REAL_AGENTS=1 requires it")
        }
        Err(why) => {
            let thread = std::thread::current();
            let test = thread.name().unwrap_or("a real-agent test");
            // Straight to the stream, past the test harness's capture, so a skip is never silent.
            let _ = writeln!(std::io::stderr(), "skipped: {test}: {why}");
            None
        }
    }
}

/// The scratch homes and mock server address an agent runs with.
pub struct AgentEnv {
    pub home: PathBuf,
    pub codex_home: PathBuf,
    pub url: String,
    /// Claude Code signs in as a subscriber (an OAuth token) in this time zone, instead of
    /// with an API key: subscription limits are reported only to subscribers.
    subscription: Option<&'static str>,
}

/// Where opencode's npm registry points, on the mock: every request there is answered 404.
pub const NPM_REGISTRY: &str = "/npm";

/// The API key the CLIs send; the mock accepts anything.
pub const API_KEY: &str = "mock-key";

/// The model opencode is given: a provider of its own configuration (`OPENCODE_CONFIG_CONTENT`),
/// `@ai-sdk/anthropic` at the mock's `/v1/messages`, priced so that opencode reports a cost
/// (dollars per million tokens).
pub const OPENCODE_MODEL: &str = "mock/claude-mock";

/// The model Gemini CLI is told to use (its settings' `model.name`).
pub const GEMINI_MODEL: &str = "gemini-2.5-pro";

/// The model aider asks for: one litellm's bundled price list knows (so aider prints a cost),
/// through the `openai/` provider, which `OPENAI_API_BASE` points at the mock.
pub const AIDER_MODEL: &str = "openai/gpt-4o-mini";

impl AgentEnv {
    /// Scratch homes under `dir` (created) for an agent talking to `mock`; writes Codex's
    /// provider configuration.
    pub fn new(dir: &Path, mock: &MockServer) -> AgentEnv {
        AgentEnv::with_home(&dir.join("agent-home"), dir, mock)
    }

    /// Like [`Self::new`] with `home` as HOME (a test repository's, shared with git-baton).
    pub fn with_home(home: &Path, dir: &Path, mock: &MockServer) -> AgentEnv {
        let home = home.to_path_buf();
        let codex_home = dir.join("codex-home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&codex_home).unwrap();
        let env = AgentEnv {
            home,
            codex_home,
            url: mock.url(),
            subscription: None,
        };
        std::fs::write(env.codex_home.join("config.toml"), env.codex_config()).unwrap();
        // aider fetches litellm's price list from GitHub unless its cache is fresh and not
        // empty; one without the model keeps it offline, on the list litellm ships.
        // Gemini CLI: an API key with a custom base URL needs the auth type chosen in its
        // settings; one attempt per request (a 429 is otherwise retried for about 232 s); the
        // model named, so that no router request picks one; nothing reported home.
        let gemini = env.home.join(".gemini");
        std::fs::create_dir_all(&gemini).unwrap();
        std::fs::write(
            gemini.join("settings.json"),
            serde_json::json!({
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "general": {"maxAttempts": 1, "disableAutoUpdate": true},
                "model": {"name": GEMINI_MODEL},
                "telemetry": {"enabled": false},
                "privacy": {"usageStatisticsEnabled": false}
            })
            .to_string(),
        )
        .unwrap();
        let caches = env.home.join(".aider/caches");
        std::fs::create_dir_all(&caches).unwrap();
        std::fs::write(
            caches.join("model_prices_and_context_window.json"),
            r#"{"sample_spec": {}}"#,
        )
        .unwrap();
        env
    }

    /// The same environment with Claude Code signed in as a subscriber, in time zone `tz`.
    pub fn subscription(mut self, tz: &'static str) -> AgentEnv {
        self.subscription = Some(tz);
        self
    }

    /// A provider named `mock` at the mock server; one retry, so that a 429 ends the turn
    /// within seconds instead of after Codex's default backoff.
    fn codex_config(&self) -> String {
        format!(
            "model = \"gpt-5.5\"\n\
             model_provider = \"mock\"\n\
             [model_providers.mock]\n\
             name = \"mock\"\n\
             base_url = \"{}/v1\"\n\
             wire_api = \"responses\"\n\
             env_key = \"MOCK_API_KEY\"\n\
             request_max_retries = 1\n\
             stream_max_retries = 1\n",
            self.url
        )
    }

    /// opencode's configuration: the mock provider and model, nothing shared or updated.
    fn opencode_config(&self) -> String {
        serde_json::json!({
            "provider": {"mock": {
                "npm": "@ai-sdk/anthropic",
                "name": "mock",
                "options": {"baseURL": format!("{}/v1", self.url), "apiKey": API_KEY},
                "models": {"claude-mock": {
                    "name": "claude-mock",
                    "cost": {"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75}
                }}
            }},
            "model": OPENCODE_MODEL,
            "small_model": OPENCODE_MODEL,
            "autoupdate": false,
            "share": "disabled"
        })
        .to_string()
    }

    /// The variables the CLIs need to run offline against the mock.
    pub fn vars(&self) -> Vec<(&'static str, OsString)> {
        let auth: [(&'static str, OsString); 2] = match self.subscription {
            None => [("ANTHROPIC_API_KEY", API_KEY.into()), ("TZ", "UTC".into())],
            Some(tz) => [
                ("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-mock".into()),
                ("TZ", tz.into()),
            ],
        };
        let mut vars = vec![
            ("HOME", self.home.clone().into()),
            ("CODEX_HOME", self.codex_home.clone().into()),
            ("ANTHROPIC_BASE_URL", self.url.clone().into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("DISABLE_TELEMETRY", "1".into()),
            ("MOCK_API_KEY", API_KEY.into()),
            ("NO_COLOR", "1".into()),
            // aider: litellm's OpenAI provider at the mock, and the model and edit format,
            // which the preset leaves to aider's own settings.
            ("OPENAI_API_BASE", format!("{}/v1", self.url).into()),
            ("OPENAI_API_KEY", API_KEY.into()),
            ("AIDER_MODEL", AIDER_MODEL.into()),
            ("AIDER_EDIT_FORMAT", "whole".into()),
            // opencode: its provider at the mock; no models.dev catalog, no update check, no
            // LSP downloads. It installs `@opencode-ai/plugin` into its configuration directory
            // on every start, from npm's registry: `npm_config_registry` points that at the
            // mock, which answers 404 (opencode logs the failure and goes on).
            ("OPENCODE_CONFIG_CONTENT", self.opencode_config().into()),
            ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
            ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1".into()),
            ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1".into()),
            ("OPENCODE_DISABLE_SHARE", "1".into()),
            (
                "npm_config_registry",
                format!("{}{NPM_REGISTRY}/", self.url).into(),
            ),
            // Gemini CLI: the key and the mock's base URL (settings in `~/.gemini`, above).
            ("GEMINI_API_KEY", API_KEY.into()),
            ("GOOGLE_GEMINI_BASE_URL", self.url.clone().into()),
        ];
        vars.extend(auth);
        vars
    }

    /// Runs `program args` in `dir` with only PATH and [`Self::vars`], stdin closed; kills it
    /// and panics after `timeout`.
    pub fn run(&self, program: &Path, args: &[&str], dir: &Path, timeout: Duration) -> Output {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(dir)
            .env_clear()
            .envs(std::env::var_os("PATH").map(|p| ("PATH", p)))
            .envs(self.vars())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = cmd.spawn().unwrap();
        wait(child, timeout)
    }
}

/// Waits for `child`; kills it and panics after `timeout`, so a hang fails instead of hanging.
pub fn wait(child: std::process::Child, timeout: Duration) -> Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("{pid} did not exit within {timeout:?}");
        }
    }
}
