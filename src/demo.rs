//! `git baton demo`: the incident git-baton exists for, replayed in a throw-away repository.
//!
//! The demo builds a temporary repository — three documents, a plan that targets them, and a
//! `.baton.yml` whose actors are *demo actors*: short sh scripts that play the agents' parts —
//! and drives it with the real binary in child processes, with the commands a user would type.
//! Each step's exit code and the RunState it leaves (`status --json`) are checked as it goes, so
//! the demo doubles as a smoke test: a step that deviates stops it with an `error:` naming the
//! step.
//!
//! It needs nothing but `git` and `sh`. The children run in a hermetic environment (cleared, a
//! temporary HOME, no system or global git configuration, a fixed identity), so neither the
//! user's git configuration nor their personal git-baton actors change what happens. The
//! temporary directory honours `TMPDIR` and is removed at the end, run worktrees included (they
//! live inside the demo repository), unless the user asked to keep it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use crate::exec::ExecError;
use crate::files::io_reason;
use crate::hermetic::{Hermetic, Person};
/// The plan of the demo, repo-relative.
pub const PLAN: &str = "plans/cdfd-grade-review.md";
/// The plan's targets, in its order.
pub const TARGETS: [&str; 3] = [
    "docs/cdfd-overview.md",
    "docs/cdfd-check.md",
    "docs/cdfd-action.md",
];
/// The reason the `diligent` demo actor records for the target it leaves unchanged.
pub const REASON: &str = "already states the new grading rule in section 3";
/// The printed line that names the demo repository (tests read the path from it).
pub const REPOSITORY_LINE: &str = "demo repository: ";

const OVERVIEW: &str = "\
# CDFD overview

A CDFD change is described by three documents: this overview, the check
(docs/cdfd-check.md) and the action (docs/cdfd-action.md).

## 1. Grading

Every document is graded A, B or C by one reviewer.
";

const CHECK: &str = "\
# CDFD check

## 1. What is checked

Each change is checked against its acceptance criteria.

## 2. Grading

The check is graded A, B or C by one reviewer.
";

const ACTION: &str = "\
# CDFD action

## 1. Scope

The action lists the follow-up work of a change.

## 2. Owners

Every follow-up has one owner.

## 3. Grading

The action is graded A, B or C and every grade is confirmed by two reviewers.
";

const PLAN_TEXT: &str = "\
---
id: cdfd-grade-review
title: Grade review of the CDFD documents
targets:
  - docs/cdfd-overview.md
  - docs/cdfd-check.md
  - docs/cdfd-action.md
---
# Apply the new grading rule to the three CDFD documents

The new grading rule: every grade is confirmed by two reviewers. Update each document that
still says a grade is given by one reviewer.
";

const CONFIG: &str = "\
# Written by `git baton demo`. The actors below are DEMO ACTORS: short sh scripts in
# demo-actors/ that play the agents of the incident. They are not real agents; a real
# configuration names agent CLIs here (see the README).
actors:
  partial:
    command: [sh, demo-actors/partial.sh]
    rate_limit: { exit_codes: [75] }
  lazy:
    command: [sh, demo-actors/lazy.sh]
  diligent:
    command: [sh, demo-actors/diligent.sh]
  writer:
    command: [sh, demo-actors/writer.sh]
pipeline:
  - { stage: executor, actor: partial, gate: coverage }
  - { stage: reporter, actor: writer }
";

const PARTIAL: &str = r##"#!/bin/sh
# DEMO ACTOR, written by `git baton demo`: a script that plays an agent, not a real agent.
#
# Plays the first agent of the incident: it applies the new grading rule to one document of
# three, then hits its provider's rate limit and exits 75 (.baton.yml declares exit code 75 a
# rate limit). Everything goes to stderr, the way agent CLIs report progress.
set -eu
echo "partial: applying the new grading rule to docs/cdfd-overview.md" >&2
sed 's/by one reviewer\./and every grade is confirmed by two reviewers./' \
  docs/cdfd-overview.md > docs/cdfd-overview.md.new
mv docs/cdfd-overview.md.new docs/cdfd-overview.md
echo "partial: error: rate limit reached for this account; try again in 5 hours" >&2
exit 75
"##;

const LAZY: &str = r##"#!/bin/sh
# DEMO ACTOR, written by `git baton demo`: a script that plays an agent, not a real agent.
#
# Plays the resumed agent of the incident: it has none of its predecessor's context, sees a
# worktree where a document was already edited, concludes the work is done, changes nothing
# and exits 0.
set -eu
echo "lazy: reading the plan and the worktree"
echo "lazy: docs/cdfd-overview.md already has the new grading rule"
echo "lazy: the work looks done"
exit 0
"##;

const DILIGENT: &str = r##"#!/bin/sh
# DEMO ACTOR, written by `git baton demo`: a script that plays an agent, not a real agent.
#
# Plays a careful agent resuming someone else's work: it re-checks every target, applies the
# new grading rule to docs/cdfd-check.md, and writes an evidence file ($BATON_EVIDENCE_FILE)
# saying why docs/cdfd-action.md needs no change, with made-up usage figures.
set -eu
echo "diligent: re-checking every target of the plan"
echo "diligent: docs/cdfd-overview.md already has the new grading rule"
sed 's/by one reviewer\./and every grade is confirmed by two reviewers./' \
  docs/cdfd-check.md > docs/cdfd-check.md.new
mv docs/cdfd-check.md.new docs/cdfd-check.md
echo "diligent: docs/cdfd-check.md: applied the new grading rule"
echo "diligent: docs/cdfd-action.md: no change needed, recording why in the evidence file"
cat > "$BATON_EVIDENCE_FILE" <<'EOF'
{
  "target_coverage": [
    {"target": "docs/cdfd-action.md", "status": "unchanged",
     "reason": "already states the new grading rule in section 3"}
  ],
  "usage": {"input_tokens": 12000, "output_tokens": 3400, "cost_usd": 0.41,
            "model": "demo", "provider": "demo"}
}
EOF
exit 0
"##;

const WRITER: &str = r##"#!/bin/sh
# DEMO ACTOR, written by `git baton demo`: a script that plays an agent, not a real agent.
#
# Plays the reporter: writes a short report of the run to reports/cdfd-grade-review.md (not a
# target of the plan), from the coverage section of its prompt ($BATON_PROMPT_FILE).
set -eu
mkdir -p reports
{
  echo "# Report: grade review of the CDFD documents"
  echo
  echo "Coverage of the work, as git-baton gave it to the reporter:"
  sed -n '/^## Coverage of the work so far/,/^## /{/^## /!p;}' "$BATON_PROMPT_FILE"
} > reports/cdfd-grade-review.md
echo "writer: wrote reports/cdfd-grade-review.md"
exit 0
"##;

/// The files of the demo repository, all committed as its base commit.
const FILES: &[(&str, &str)] = &[
    ("docs/cdfd-overview.md", OVERVIEW),
    ("docs/cdfd-check.md", CHECK),
    ("docs/cdfd-action.md", ACTION),
    (PLAN, PLAN_TEXT),
    (".baton.yml", CONFIG),
    ("demo-actors/partial.sh", PARTIAL),
    ("demo-actors/lazy.sh", LAZY),
    ("demo-actors/diligent.sh", DILIGENT),
    ("demo-actors/writer.sh", WRITER),
];

pub struct Options {
    /// Keep the temporary directory and say where it is.
    pub keep: bool,
}

/// Why the demo did not complete. [`DemoError::Deviated`] means git-baton did not behave as the
/// incident's script says; the others, that the demo could not be set up or run.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// `removed`: the demo repository was removed afterwards (so `--keep` would help).
    #[error("demo step `{step}` deviated: {problem}")]
    Deviated {
        step: String,
        problem: String,
        removed: bool,
    },
    #[error("the demo was interrupted")]
    Interrupted,
    #[error(transparent)]
    Signals(#[from] ExecError),
    #[error("cannot find the git-baton binary: {0}")]
    NoBinary(#[source] std::io::Error),
    #[error("cannot create a temporary directory in {}: {}", .dir.display(), io_reason(.source))]
    TempDir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create {}: {}", .path.display(), io_reason(.source))]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the demo's git configuration: {0}")]
    GitConfig(#[source] std::io::Error),
    #[error("cannot run git: {0}")]
    NoGit(#[source] std::io::Error),
    #[error("demo setup: `git {args}` failed: {stderr}")]
    Setup { args: String, stderr: String },
    /// `action` is `create` or `write`; `file` is repo-relative.
    #[error("cannot {action} {file}: {source}")]
    File {
        action: &'static str,
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("demo: cannot run `{line}`: {source}")]
    Spawn {
        line: String,
        #[source]
        source: std::io::Error,
    },
    #[error("could not remove the demo directory {dir}: {}", io_reason(.source))]
    Cleanup {
        dir: String,
        #[source]
        source: std::io::Error,
    },
}

impl DemoError {
    /// What to do next, for this variant.
    pub fn hints(&self) -> Vec<String> {
        let hint = match self {
            DemoError::Deviated { removed: true, .. } => {
                "run `git baton demo --keep` to keep the demo repository and look at the run"
            }
            DemoError::TempDir { .. } => "set TMPDIR to a writable directory",
            DemoError::NoGit(err) if err.kind() == std::io::ErrorKind::NotFound => {
                "the demo needs git on PATH"
            }
            _ => return Vec::new(),
        };
        vec![hint.to_string()]
    }
}

/// Runs the demo, narrating to `out`. `Ok` means every step went as the incident says it
/// should under git-baton; a step that deviates is [`DemoError::Deviated`], naming the step.
/// A sandbox that could not be removed after a failed step is told to `warn`: the step's error
/// is what the demo ends with.
pub fn replay(
    options: &Options,
    out: &mut dyn Write,
    warn: &mut dyn FnMut(String),
) -> Result<(), DemoError> {
    let interrupted = crate::exec::interrupt_flag()?;
    let sandbox = Sandbox::create(options.keep)?;
    let mut demo = Demo {
        sandbox,
        out,
        interrupted,
    };
    let result = demo.steps();
    let Demo { sandbox, out, .. } = demo;
    let result = match result {
        Ok(()) => sandbox.finish(out),
        Err(mut err) => {
            let cleanup = sandbox.finish(out);
            let _ = out.flush();
            match cleanup {
                Ok(()) => {
                    if let DemoError::Deviated { removed, .. } = &mut err {
                        *removed = !options.keep;
                    }
                }
                Err(problem) => warn(problem.to_string()),
            }
            Err(err)
        }
    };
    let _ = out.flush();
    result
}

/// The temporary directory: the demo repository and the children's HOME.
struct Sandbox {
    dir: tempfile::TempDir,
    keep: bool,
    /// The demo repository.
    repo: PathBuf,
    home: PathBuf,
    /// This very binary: the demo shows the real thing.
    exe: PathBuf,
}

impl Sandbox {
    fn create(keep: bool) -> Result<Sandbox, DemoError> {
        let exe = std::env::current_exe().map_err(DemoError::NoBinary)?;
        let dir = tempfile::Builder::new()
            .prefix("git-baton-demo.")
            .disable_cleanup(keep)
            .tempdir()
            .map_err(|source| DemoError::TempDir {
                dir: std::env::temp_dir(),
                source,
            })?;
        // Canonical, so that the paths git and git-baton print agree with ours (/tmp may be a
        // symbolic link, as on macOS).
        let root = dir
            .path()
            .canonicalize()
            .unwrap_or_else(|_| dir.path().to_path_buf());
        let sandbox = Sandbox {
            repo: root.join("repo"),
            home: root.join("home"),
            dir,
            keep,
            exe,
        };
        let created = |path: &Path| {
            std::fs::create_dir_all(path).map_err(|source| DemoError::CreateDir {
                path: path.to_path_buf(),
                source,
            })
        };
        created(&sandbox.repo)?;
        created(&sandbox.home.join(".config"))?;
        std::fs::write(sandbox.home.join(".gitconfig"), "").map_err(DemoError::GitConfig)?;
        Ok(sandbox)
    }

    /// A command run in the demo repository with the hermetic environment and nothing else
    /// (besides PATH, to find git and sh, and TMPDIR).
    fn command(&self, program: &Path) -> Command {
        let demo = Person::new("git-baton demo", "demo@git-baton.invalid");
        let mut cmd = Hermetic::new(&self.home)
            .identity(demo.clone(), demo)
            .unpinned_dates()
            .keep("TMPDIR")
            .command(program);
        cmd.current_dir(&self.repo).stdin(Stdio::null());
        cmd
    }

    /// Runs git quietly; its failure is an environment problem.
    fn git(&self, args: &[&str]) -> Result<(), DemoError> {
        let mut cmd = self.command(Path::new("git"));
        cmd.args(args)
            // The base commit is the same in every demo.
            .envs(crate::hermetic::pinned_dates());
        let output = cmd.output().map_err(DemoError::NoGit)?;
        if !output.status.success() {
            return Err(DemoError::Setup {
                args: args.join(" "),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
            });
        }
        Ok(())
    }

    /// Writes the files and commits them as the base.
    fn populate(&self) -> Result<(), DemoError> {
        self.git(&["init", "-q"])?;
        // Not `init -b`: older gits lack it, and the user's init.defaultBranch is not read.
        self.git(&["symbolic-ref", "HEAD", "refs/heads/main"])?;
        for (rel, text) in FILES {
            let path = self.repo.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|source| DemoError::File {
                    action: "create",
                    file: rel.to_string(),
                    source,
                })?;
            }
            std::fs::write(&path, text).map_err(|source| DemoError::File {
                action: "write",
                file: rel.to_string(),
                source,
            })?;
        }
        self.git(&["add", "-A"])?;
        self.git(&[
            "commit",
            "-q",
            "-m",
            "CDFD documents, a grade-review plan, demo actors",
        ])
    }

    /// Removes the directory, or says where it is kept.
    fn finish(self, out: &mut dyn Write) -> Result<(), DemoError> {
        if self.keep {
            let repo = self.repo.display();
            let _ = writeln!(out, "\nThe demo repository is kept in {repo}. Look around:");
            let _ = writeln!(out, "  cd {repo} && git baton status");
            return Ok(());
        }
        let shown = self.dir.path().display().to_string();
        match self.dir.close() {
            Ok(()) => {
                let _ = writeln!(out, "\nThe demo repository has been removed.");
                Ok(())
            }
            Err(source) => Err(DemoError::Cleanup { dir: shown, source }),
        }
    }
}

/// What a shown command printed (stdout and stderr as they interleaved) and how it ended.
struct Shown {
    code: Option<i32>,
    text: String,
}

struct Demo<'a> {
    sandbox: Sandbox,
    out: &'a mut dyn Write,
    interrupted: Arc<AtomicBool>,
}

/// A step of the demo that deviated from the incident's script.
fn deviated(step: &str, problem: impl std::fmt::Display) -> DemoError {
    DemoError::Deviated {
        step: step.to_string(),
        problem: problem.to_string(),
        removed: false,
    }
}

impl Demo<'_> {
    fn say(&mut self, text: &str) {
        let _ = writeln!(self.out, "{text}");
        let _ = self.out.flush();
    }

    /// A numbered step's heading and narration.
    fn step(&mut self, heading: &str, narration: &str) {
        self.say(&format!("\n== {heading}\n"));
        if !narration.is_empty() {
            self.say(narration);
            self.say("");
        }
    }

    fn check_interrupted(&self) -> Result<(), DemoError> {
        if self.interrupted.load(Ordering::SeqCst) {
            return Err(DemoError::Interrupted);
        }
        Ok(())
    }

    /// Runs `git baton ARGS` in the demo repository, showing the command, everything it
    /// printed in the order it printed it, and its exit code.
    fn show(&mut self, args: &[&str]) -> Result<Shown, DemoError> {
        let line = format!("git baton {}", args.join(" "));
        self.say(&format!("$ {line}"));
        let shown = self.capture(args).map_err(|source| DemoError::Spawn {
            line: line.clone(),
            source,
        })?;
        let _ = self.out.write_all(shown.text.as_bytes());
        if !shown.text.is_empty() && !shown.text.ends_with('\n') {
            let _ = writeln!(self.out);
        }
        match shown.code {
            Some(code) => self.say(&format!("(exit {code})")),
            None => self.say("(killed by a signal)"),
        }
        self.check_interrupted()?;
        Ok(shown)
    }

    /// Both output streams through one pipe, so they interleave as on a terminal.
    fn capture(&self, args: &[&str]) -> std::io::Result<Shown> {
        let (mut reader, writer) = std::io::pipe()?;
        let mut child = {
            let mut cmd = self.sandbox.command(&self.sandbox.exe);
            cmd.args(args).stdout(writer.try_clone()?).stderr(writer);
            cmd.spawn()?
            // `cmd` and its copies of the pipe's write end are dropped here: the read below
            // ends when the child (and whatever it started) has closed its own.
        };
        let mut bytes = Vec::new();
        let read = reader.read_to_end(&mut bytes);
        let status = child.wait()?;
        read?;
        Ok(Shown {
            code: status.code(),
            text: String::from_utf8_lossy(&bytes).into_owned(),
        })
    }

    /// The run's RunState as `git baton status --json` prints it (not shown).
    fn state(&self, step: &str, run: Option<&str>) -> Result<Value, DemoError> {
        let mut cmd = self.sandbox.command(&self.sandbox.exe);
        cmd.args(["status", "--json"]).args(run);
        let output = cmd
            .output()
            .map_err(|e| deviated(step, format!("cannot run `git baton status --json`: {e}")))?;
        if !output.status.success() {
            return Err(deviated(
                step,
                format!(
                    "`git baton status --json` failed afterwards: {}",
                    String::from_utf8_lossy(&output.stderr).trim()
                ),
            ));
        }
        serde_json::from_slice(&output.stdout).map_err(|e| {
            deviated(
                step,
                format!("`git baton status --json` did not print JSON: {e}"),
            )
        })
    }

    fn steps(&mut self) -> Result<(), DemoError> {
        self.say(
            "git baton demo: a replay of the incident git-baton exists for.\n\
             \n\
             A plan asks for three documents to be fixed. The first agent fixes one of them and\n\
             is rate-limited. The work is resumed by another agent, which has none of the first\n\
             one's context: it sees an edited document, decides the work is done, changes\n\
             nothing and exits 0 — and the pipeline records success. Below, the same happens in\n\
             a throw-away repository, driven by the real git-baton.\n\
             \n\
             The agents are played by DEMO ACTORS: short sh scripts in demo-actors/ (partial,\n\
             lazy, diligent, writer). They are not real agents; .baton.yml names them the way a\n\
             real configuration names agent CLIs.",
        );
        self.sandbox.populate()?;
        let repo = self.sandbox.repo.display().to_string();
        self.say(&format!("\n{REPOSITORY_LINE}{repo}"));
        self.say(&format!(
            "  {PLAN}   the plan; its targets:\n{}",
            TARGETS
                .iter()
                .map(|t| format!("    {t}"))
                .collect::<Vec<_>>()
                .join("\n")
        ));
        self.say(
            "  .baton.yml    pipeline: executor (coverage gate) -> reporter\n  \
             demo-actors/  partial.sh, lazy.sh, diligent.sh, writer.sh",
        );
        self.check_interrupted()?;

        // 1. The first agent: one document of three, then a rate limit.
        self.step(
            "1. The first agent fixes one document of three, then hits a rate limit",
            "`git baton run` gives the run its own branch and worktree and starts the executor\n\
             stage with the demo actor `partial`. It edits docs/cdfd-overview.md, prints a\n\
             rate-limit message and exits 75, which .baton.yml declares a rate limit.",
        );
        let step = format!("git baton run {PLAN}");
        let shown = self.show(&["run", PLAN])?;
        expect_exit(&step, &shown, 1)?;
        let state = self.state(&step, None)?;
        let id = str_at(&state, "run_id").to_string();
        expect_eq(&step, "status", str_at(&state, "status"), "rate_limited")?;
        let executor = stage(&state, "executor");
        expect_eq(&step, "executor attempts", attempts(executor).len(), 1)?;
        expect_eq(
            &step,
            "executor attempt 1 outcome",
            str_at(&attempts(executor)[0], "outcome"),
            "rate_limited",
        )?;

        // 2. The resumed agent changes nothing and exits 0: the gate blocks it.
        self.step(
            "2. Another agent resumes, changes nothing, exits 0 — and is blocked",
            "`git baton resume` re-runs the executor stage, this time with the demo actor `lazy`.\n\
             Like the incident's second agent, it sees an edited document, says the work looks\n\
             done, changes nothing and exits 0. The coverage gate checks the repository, not the\n\
             exit code: two targets have no change and no reason, so the stage is blocked.",
        );
        let step = format!("git baton resume {id} --actor executor=lazy");
        let shown = self.show(&["resume", &id, "--actor", "executor=lazy"])?;
        expect_exit(&step, &shown, 1)?;
        let state = self.state(&step, Some(&id))?;
        expect_eq(&step, "status", str_at(&state, "status"), "blocked")?;
        let lazy = attempts(stage(&state, "executor"))
            .last()
            .cloned()
            .unwrap_or(Value::Null);
        expect_eq(&step, "the attempt's actor", str_at(&lazy, "actor"), "lazy")?;
        expect_eq(
            &step,
            "the actor's exit code",
            lazy.get("exit_code").and_then(Value::as_i64),
            Some(0),
        )?;
        expect_eq(
            &step,
            "the attempt's outcome",
            str_at(&lazy, "outcome"),
            "blocked",
        )?;
        expect_coverage(
            &step,
            &state,
            &[("changed", None), ("uncovered", None), ("uncovered", None)],
        )?;
        for target in &TARGETS[1..] {
            if !shown.text.contains(target) {
                return Err(deviated(
                    &step,
                    format!("its output does not name {target}"),
                ));
            }
        }

        // 3. What the record says.
        self.step(
            "3. What the run's record says",
            "The RunState keeps every attempt. `git baton status` shows them with the gate's\n\
             verdict, and `git baton diff` shows what the latest attempt changed compared with\n\
             the attempt before it.",
        );
        let step = format!("git baton status {id}");
        let shown = self.show(&["status", &id])?;
        expect_exit(&step, &shown, 0)?;
        self.say("");
        let step = format!("git baton diff {id}");
        let shown = self.show(&["diff", &id])?;
        expect_exit(&step, &shown, 0)?;
        if !shown.text.contains("changed nothing") {
            return Err(deviated(
                &step,
                "its output does not say \"changed nothing\"",
            ));
        }

        // 4. A diligent agent finishes the work.
        self.step(
            "4. A third agent finishes the work, and says why one document needs no change",
            "Resumed with the demo actor `diligent`: it edits docs/cdfd-check.md and, in its\n\
             evidence file, gives the reason docs/cdfd-action.md needs no change. Every target is\n\
             now changed or explained, so the gate passes; the reporter stage (demo actor\n\
             `writer`) writes its report, and the run waits for a person in `review`. The same\n\
             file reports the agent's token usage (made-up figures here): git-baton totals what\n\
             agents report and measures none of it.",
        );
        let step = format!("git baton resume {id} --actor executor=diligent");
        let shown = self.show(&["resume", &id, "--actor", "executor=diligent"])?;
        expect_exit(&step, &shown, 0)?;
        let state = self.state(&step, Some(&id))?;
        expect_eq(&step, "status", str_at(&state, "status"), "review")?;
        expect_eq(
            &step,
            "reporter stage status",
            str_at(stage(&state, "reporter"), "status"),
            "succeeded",
        )?;
        expect_coverage(
            &step,
            &state,
            &[
                ("changed", None),
                ("changed", None),
                ("unchanged", Some(REASON)),
            ],
        )?;

        // 5. What the reviewer sees.
        self.final_result(&id)?;

        self.say("\n== Done\n");
        self.say(
            "The attempt that changed nothing was blocked instead of recorded as a success; the\n\
             attempt that covered every target, with a reason for the one it left alone, passed.\n\
             Nothing is merged: the run's branch waits for review.",
        );
        Ok(())
    }

    /// Shows what the reviewer gets: `git baton review`.
    fn final_result(&mut self, id: &str) -> Result<(), DemoError> {
        self.step(
            "5. What the reviewer sees",
            "Every target with its change, or with the reason it needed no change:",
        );
        let step = format!("git baton review {id}");
        let shown = self.show(&["review", id])?;
        expect_exit(&step, &shown, 0)?;
        if !shown.text.contains(REASON) {
            return Err(deviated(
                &step,
                format!("its output lacks the reason \"{REASON}\""),
            ));
        }
        Ok(())
    }
}

fn expect_exit(step: &str, shown: &Shown, want: i32) -> Result<(), DemoError> {
    match shown.code {
        Some(code) if code == want => Ok(()),
        Some(code) => Err(deviated(
            step,
            format!("expected exit {want}, got exit {code}"),
        )),
        None => Err(deviated(
            step,
            format!("expected exit {want}, but it was killed by a signal"),
        )),
    }
}

fn expect_eq<T: PartialEq + std::fmt::Debug>(
    step: &str,
    what: &str,
    got: T,
    want: T,
) -> Result<(), DemoError> {
    if got == want {
        return Ok(());
    }
    Err(deviated(
        step,
        format!("expected {what} {want:?} in `status --json`, got {got:?}"),
    ))
}

/// Each target's status, in plan order, and where given its reason.
fn expect_coverage(
    step: &str,
    state: &Value,
    want: &[(&str, Option<&str>); 3],
) -> Result<(), DemoError> {
    for (target, (status, reason)) in TARGETS.iter().zip(want) {
        let entry = state
            .pointer("/coverage/targets")
            .and_then(Value::as_array)
            .and_then(|all| all.iter().find(|t| str_at(t, "target") == *target))
            .cloned()
            .unwrap_or(Value::Null);
        expect_eq(
            step,
            &format!("coverage of {target}"),
            str_at(&entry, "status"),
            status,
        )?;
        if let Some(reason) = reason {
            expect_eq(
                step,
                &format!("the reason for {target}"),
                str_at(&entry, "reason"),
                reason,
            )?;
        }
    }
    Ok(())
}

fn str_at<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn stage<'v>(state: &'v Value, name: &str) -> &'v Value {
    state
        .get("stages")
        .and_then(Value::as_array)
        .and_then(|stages| stages.iter().find(|s| str_at(s, "name") == name))
        .unwrap_or(&Value::Null)
}

fn attempts(stage: &Value) -> &[Value] {
    stage
        .get("attempts")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_plan_and_configuration_are_valid() {
        let plan = crate::plan::parse(PLAN, PLAN_TEXT).unwrap();
        let targets: Vec<&str> = plan.targets.iter().map(|t| t.spec.as_str()).collect();
        assert_eq!(targets, TARGETS);
        let config = crate::config::parse(".baton.yml", CONFIG).unwrap();
        assert_eq!(config.actors["partial"].rate_limit_exit_codes, [75]);
        assert!(config.pipeline[0].gated && !config.pipeline[1].gated);
    }

    #[test]
    fn the_diligent_actors_evidence_passes_the_gate() {
        let start = DILIGENT.find("<<'EOF'\n").unwrap() + "<<'EOF'\n".len();
        let end = start + DILIGENT[start..].find("\nEOF\n").unwrap();
        let evidence = crate::coverage::parse_evidence("evidence", &DILIGENT[start..end]).unwrap();
        let plan = crate::plan::parse(PLAN, PLAN_TEXT).unwrap();
        let changed = vec![TARGETS[1].to_string(), TARGETS[0].to_string()];
        let report = crate::coverage::evaluate(&plan.targets, &changed, &evidence.entries, &[]);
        assert!(report.passed, "{report:?}");
        let action = report
            .targets
            .iter()
            .find(|t| t.target == TARGETS[2])
            .unwrap();
        assert_eq!(action.reason.as_deref(), Some(REASON));
        // The reason is true of the document.
        assert!(ACTION.contains("## 3. Grading") && ACTION.contains("two reviewers"));
    }

    #[test]
    fn every_demo_actor_says_it_is_one() {
        for (path, text) in FILES.iter().filter(|(p, _)| p.starts_with("demo-actors/")) {
            assert!(text.contains("DEMO ACTOR"), "{path}");
            assert!(CONFIG.contains(path), "{path} is not configured");
        }
    }
}
