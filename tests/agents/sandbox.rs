//! Codex records a reason with `git baton unchanged` from inside its `workspace-write` sandbox.
//! The sandbox lets Codex write its working directory and `/tmp` only, and the reason goes to the
//! main repository's `.git`: the repository here lies outside `/tmp` (under Cargo's target
//! directory), where the preset's `--add-dir {attempt_dir}` is what lets the command write —
//! the same run without that grant is the control. By default Codex runs commands in a login
//! shell, whose profile resets `PATH`; the preset's `-c allow_login_shell=false` keeps the `PATH`
//! git-baton ran with, so `git baton` is found with no profile file in the test's HOME.

use std::path::{Path, PathBuf};

use super::cli;
use super::e2e::{codex_edits, new_text, turn};
use super::harness::{AgentRepo, attempt};
use super::mock::{Script, Turn};

const REASON: &str = "already says that grades run from A to F, in its second paragraph";

/// A directory outside `/tmp` for the repository: Cargo's target directory, unless the checkout
/// itself lies under `/tmp` (as a CI clone may), then `/var/tmp`, which the sandbox does not
/// leave writable either.
fn outside_tmp() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    if target.starts_with("/tmp") {
        Path::new("/var/tmp").join("git-baton-agent-tests")
    } else {
        target.join("agents")
    }
}

/// Codex changes docs/a.md and records docs/b.md unchanged, in a run of the `codex` preset as
/// `init` wrote it, or with its `--add-dir {attempt_dir}` taken out.
fn run_codex(grant_git_dir: bool) -> Option<(AgentRepo, String)> {
    cli::agent("codex")?;
    let mut script = vec![
        codex_edits("docs/a.md"),
        turn(Turn::codex_exec(&format!(
            "git baton unchanged docs/b.md '{REASON}'"
        ))),
        turn(Turn::text("docs/a.md changed; docs/b.md needed no change.")),
    ];
    if !grant_git_dir {
        // The reason was refused, so the preset's Stop hook blocks its 3 times; the model
        // answers each with the same words, and the hook then lets Codex stop.
        script.extend((0..3).map(|_| turn(Turn::text("docs/b.md needed no change."))));
    }
    let ar = AgentRepo::new_in(&outside_tmp(), Script(script));
    let yml = ar.init();
    assert!(yml.contains("      - allow_login_shell=false\n"), "{yml}");
    let grant = "      - --add-dir\n      - '{attempt_dir}'\n";
    assert!(yml.contains(grant), "{yml}");
    if !grant_git_dir {
        ar.repo.write(".baton.yml", &yml.replace(grant, ""));
        ar.repo.commit_all("codex without --add-dir");
    }
    let run = ar.baton(&["run", "plans/rule.md", "--actor", "executor=codex"]);
    let id = run.run_id();
    Some((ar, id))
}

#[test]
fn codex_records_a_reason_through_git_baton_unchanged_with_the_preset_grant() {
    let Some((ar, id)) = run_codex(true) else {
        return;
    };
    let state = ar.status(&id);
    assert!(ar.repo.root.starts_with(outside_tmp()));
    assert_eq!(
        state["status"],
        "review",
        "{state:#}\n{}",
        ar.stdout(&id, 1)
    );
    assert_eq!(
        std::fs::read_to_string(ar.worktree(&state).join("docs/a.md")).unwrap(),
        new_text("docs/a.md")
    );
    let b = state["coverage"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["target"] == "docs/b.md")
        .unwrap();
    assert_eq!(b["status"], "unchanged", "{b:#}");
    assert_eq!(b["reason"], REASON, "{b:#}");
    assert_eq!(attempt(&state, 1)["outcome"], "succeeded");
    let outputs = command_outputs(&ar);
    assert_eq!(outputs.len(), 2, "{outputs:#?}");
    assert!(
        outputs[1].contains("Process exited with code 0"),
        "{}",
        outputs[1]
    );
}

#[test]
fn without_the_grant_codexs_sandbox_refuses_git_baton_unchanged() {
    let Some((ar, id)) = run_codex(false) else {
        return;
    };
    let state = ar.status(&id);
    assert_eq!(state["status"], "blocked", "{state:#}");
    // The Stop hook ran outside the sandbox (it wrote its count) and kept Codex working up to
    // its limit; the gate after Codex exited decided.
    assert_eq!(attempt(&state, 1)["hook_blocks"], 3, "{state:#}");
    assert_eq!(ar.mock.overruns(), 0);
    // The command ran (git-baton was found) and failed on the sandbox's read-only .git. What
    // Codex sent the model is the evidence: `codex exec --json` itself sometimes leaves out the
    // events of a command that ends within milliseconds.
    let outputs = command_outputs(&ar);
    assert_eq!(outputs.len(), 2, "{outputs:#?}");
    assert!(
        outputs[1].contains("Process exited with code 2"),
        "{}",
        outputs[1]
    );
    assert!(
        outputs[1].contains("agent.lock: read-only file system"),
        "{}",
        outputs[1]
    );
    assert!(
        !outputs[1].contains("is not a git command"),
        "{}",
        outputs[1]
    );
    let uncovered: Vec<_> = state["coverage"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] == "uncovered")
        .map(|t| t["target"].as_str().unwrap())
        .collect();
    assert_eq!(uncovered, ["docs/b.md"]);
}

/// The output of every command Codex ran, as it sent them back to the model, in order.
fn command_outputs(ar: &AgentRepo) -> Vec<String> {
    let last = ar.mock.scripted().pop().expect("Codex sent no request");
    last.json()["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| item["output"].as_str().unwrap_or_default().to_string())
        .collect()
}
