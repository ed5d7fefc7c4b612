//! The real aider through the real `git baton`, with the actor exactly as `git baton init --agent
//! aider` writes it, against the mock's chat completions: an edit reaches `review` with aider's
//! usage and cost recorded, a 429 aider gives up on ends the attempt `rate_limited` although
//! aider exits 0, and neither leaves a file of aider's in the run's worktree or touches its
//! `.gitignore`. What aider printed is captured into testdata/agents/aider/ with
//! `GIT_BATON_AGENT_CAPTURE=1`.
//!
//! aider's model and edit format come from the environment (`AIDER_MODEL`, `AIDER_EDIT_FORMAT`:
//! [`cli::AgentEnv::vars`]), as a user's would from aider's own settings.

use std::path::Path;

use super::cli;
use super::e2e::assert_review_with_targets_edited;
use super::harness::{AgentRepo, TARGETS, assert_prompt, attempt};
use super::mock::{Script, Turn, Usage};

/// The tokens aider is told of: round figures, which it prints as they are (`20k`, `2.0k`).
const TURN: Usage = Usage {
    input: 20_000,
    output: 2_000,
    cache_read: 0,
};

/// What the repository ignores before the run; aider must leave it as it is.
const GITIGNORE: &str = "/build/\n";

/// The new text of a target, as in the other agents' tests.
fn new_text(target: &str) -> String {
    super::e2e::new_text(target)
}

/// One reply in aider's `whole` edit format: each file's path, then its whole new text fenced.
fn whole_edit(targets: &[&str]) -> Turn {
    let mut text = String::from("Both documents now state the new rule.\n\n");
    for target in targets {
        text.push_str(&format!("{target}\n```\n{}```\n\n", new_text(target)));
    }
    Turn::text(&text).with_usage(TURN)
}

/// A repository with a committed `.gitignore`, `.baton.yml` as `init --agent aider` wrote it,
/// committed unchanged, and a git identity in its configuration: aider writes one into the
/// repository's configuration when git has none (see
/// [`without_a_git_identity_aider_writes_one_and_the_guard_fails_the_attempt`]).
fn aider_repo(script: Script) -> AgentRepo {
    let ar = aider_repo_without_identity(script);
    ar.repo.git(["config", "user.name", "Test Author"]);
    ar.repo.git(["config", "user.email", "author@example.com"]);
    ar
}

/// [`aider_repo`] as a machine whose git knows no `user.name` or `user.email`.
fn aider_repo_without_identity(script: Script) -> AgentRepo {
    let ar = AgentRepo::new(script);
    ar.repo.write(".gitignore", GITIGNORE);
    let yml = ar.init_agent("aider");
    assert!(yml.contains("output: aider-text"), "{yml}");
    ar
}

/// Every path of the worktree whose name starts with `.aider`, at any depth (`.git` aside).
fn aider_files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    // Bounded: the test repository holds a handful of files.
    while let Some(dir) = stack.pop().filter(|_| found.len() < 100) {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == ".git" {
                continue;
            }
            if name.starts_with(".aider") {
                found.push(entry.path().display().to_string());
            }
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            }
        }
    }
    found
}

/// `git status --porcelain --ignored` in the worktree: what changed, untracked or ignored.
fn worktree_status(worktree: &Path) -> String {
    let out = std::process::Command::new("git")
        .args([
            "status",
            "--porcelain",
            "--ignored",
            "--untracked-files=all",
        ])
        .current_dir(worktree)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// aider's files stayed out of the worktree: none there, `.gitignore` as committed, nothing
/// changed but `changed`.
fn assert_worktree_clean_of_aider(worktree: &Path, changed: &[&str]) {
    assert_eq!(aider_files(worktree), Vec::<String>::new());
    assert_eq!(
        std::fs::read_to_string(worktree.join(".gitignore")).unwrap(),
        GITIGNORE
    );
    let expected: String = changed.iter().map(|p| format!(" M {p}\n")).collect();
    assert_eq!(worktree_status(worktree), expected);
}

/// The session cost aider printed last ("Cost: $X message, $Y session."), as printed.
fn printed_session_cost(stdout: &str) -> f64 {
    let (_, after) = stdout
        .rsplit_once(" message, $")
        .unwrap_or_else(|| panic!("aider printed no cost:\n{stdout}"));
    let amount = after.split_whitespace().next().unwrap_or_default();
    amount
        .parse()
        .unwrap_or_else(|e| panic!("{amount:?} is not an amount ({e}) in:\n{stdout}"))
}

#[test]
fn aider_preset_edits_both_targets_and_the_run_reaches_review_with_usage() {
    let Some(_) = cli::agent("aider") else { return };
    let ar = aider_repo(Script(vec![whole_edit(&TARGETS)]));
    let (id, stdout) = ar.run_rule("aider", "e2e-edit.txt", 0);
    let state = assert_review_with_targets_edited(&ar, &id);
    assert_worktree_clean_of_aider(&ar.worktree(&state), &TARGETS);
    assert_eq!(ar.mock.overruns(), 0, "{stdout}");

    // One non-streamed chat completion, carrying the prompt and the targets aider added.
    let sent = ar.mock.scripted();
    assert_eq!(sent.len(), 1, "{stdout}");
    assert_eq!(sent[0].path, "/v1/chat/completions");
    assert_eq!(sent[0].header("authorization"), Some("Bearer mock-key"));
    let body = sent[0].json();
    assert!(
        body["stream"].is_null() || body["stream"] == false,
        "{body}"
    );
    assert_eq!(
        body["model"],
        cli::AIDER_MODEL.trim_start_matches("openai/")
    );
    // The targets' text went along.
    assert_prompt(&sent[0], "The old rule.");

    // aider's usage line is what the attempt records; its cost is aider's own figure.
    assert!(
        stdout.contains("Tokens: 20k sent, 2.0k received."),
        "{stdout}"
    );
    let a = attempt(&state, 1);
    assert_eq!(a["outcome"], "succeeded", "{a:#}");
    assert_eq!(a["exit_code"], 0, "{a:#}");
    assert_eq!(a["usage_source"], "output", "{a:#}");
    assert_eq!(a["usage"]["input_tokens"], TURN.input, "{a:#}");
    assert_eq!(a["usage"]["output_tokens"], TURN.output, "{a:#}");
    let cost = a["usage"]["cost_usd"].as_f64().unwrap();
    assert!(cost > 0.0, "{a:#}");
    assert!((cost - printed_session_cost(&stdout)).abs() < 1e-9, "{a:#}");
    assert_eq!(a["usage"]["model"], cli::AIDER_MODEL, "{a:#}");
    assert_eq!(a["agent"]["format"], "aider-text", "{a:#}");
    assert!(a["agent"]["unparsed"].is_null(), "{a:#}");

    // Its chat history went to the attempt's directory.
    let history = ar.repo.path(&format!(
        ".git/baton/runs/{id}/attempts/executor-1/aider.chat.history.md"
    ));
    let history =
        std::fs::read_to_string(&history).unwrap_or_else(|e| panic!("{}: {e}", history.display()));
    assert!(history.contains("Replace the old rule"), "{history}");
}

#[test]
fn a_429_aider_gives_up_on_ends_the_attempt_rate_limited_despite_its_exit_0() {
    let Some(_) = cli::agent("aider") else { return };
    // `retry-after-ms` makes the OpenAI SDK's two retries of each try immediate; aider's own
    // nine tries wait 0.25 s doubling to 32 s whatever the server says (aider 0.86.2 has no
    // setting for it), so this test takes about 64 s.
    let ar = aider_repo(Script(vec![Turn::rate_limited(&[("retry-after-ms", "1")])]));
    let (id, stdout) = ar.run_rule("aider", "e2e-429.txt", 1);
    // aider exits 0 when it gives up.
    let (state, a) = ar.rate_limited(&id, 0);
    let error = a["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "rate limited (aider-text: litellm.RateLimitError: RateLimitError: OpenAIException - \
             This request would exceed your account's rate limit."
        ),
        "{error}"
    );
    assert!(
        stdout.contains("The API provider has rate limited you."),
        "{stdout}"
    );
    // Nine tries of aider's, each with the SDK's two retries.
    assert_eq!(ar.mock.scripted().len(), 27, "{stdout}");
    assert!(a["usage"].is_null(), "no answer, no usage: {a:#}");
    assert_worktree_clean_of_aider(&ar.worktree(&state), &[]);
}

/// aider, finding no git identity, writes `user.name "Your Name"` into the repository's
/// configuration (aider 0.86.2, `aider/main.py`). An attempt may not change the git
/// configuration, whoever asked for it: the attempt fails naming the file, although aider's
/// edit was complete — which docs/agents.md tells aider's users to avoid with an identity.
#[test]
fn without_a_git_identity_aider_writes_one_and_the_guard_fails_the_attempt() {
    let Some(_) = cli::agent("aider") else { return };
    let ar = aider_repo_without_identity(Script(vec![whole_edit(&TARGETS)]));
    let run = ar.baton(&["run", "plans/rule.md"]);
    let id = run.run_id();
    let stdout = ar.stdout(&id, 1);
    assert_eq!(run.code, 1, "{run}\n--- aider's stdout\n{stdout}");
    let state = ar.status(&id);
    let a = attempt(&state, 1);
    assert_eq!(a["outcome"], "failed", "{a:#}");
    let kinds: Vec<&str> = a["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["git_config"], "{a:#}");
    assert_eq!(state["error"]["kind"], "violation", "{state:#}");
}
