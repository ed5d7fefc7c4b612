//! The steps of the demo: each command a user would type, run in the sandbox and checked
//! against the incident's script as it goes.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use super::sandbox::Sandbox;
use super::{DemoError, PLAN, REASON, REPOSITORY_LINE, TARGETS};

/// What a shown command printed (stdout and stderr as they interleaved) and how it ended.
pub(super) struct Captured {
    pub(super) code: Option<i32>,
    pub(super) text: String,
}

pub(super) struct Demo<'a> {
    pub(super) sandbox: Sandbox,
    pub(super) out: &'a mut dyn Write,
    pub(super) interrupted: Arc<AtomicBool>,
}

/// A step of the demo that deviated from the incident's script.
pub(super) fn deviated(step: &str, problem: impl std::fmt::Display) -> DemoError {
    DemoError::Deviated {
        step: step.to_string(),
        problem: problem.to_string(),
        removed: false,
    }
}

impl Demo<'_> {
    pub(super) fn say(&mut self, text: &str) {
        let _ = writeln!(self.out, "{text}");
        let _ = self.out.flush();
    }

    /// A numbered step's heading and narration.
    pub(super) fn step(&mut self, heading: &str, narration: &str) {
        self.say(&format!("\n== {heading}\n"));
        if !narration.is_empty() {
            self.say(narration);
            self.say("");
        }
    }

    pub(super) fn check_interrupted(&self) -> Result<(), DemoError> {
        if self.interrupted.load(Ordering::SeqCst) {
            return Err(DemoError::Interrupted);
        }
        Ok(())
    }

    /// Runs `git baton ARGS` in the demo repository, showing the command, everything it
    /// printed in the order it printed it, and its exit code.
    pub(super) fn show(&mut self, args: &[&str]) -> Result<Captured, DemoError> {
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
    pub(super) fn capture(&self, args: &[&str]) -> std::io::Result<Captured> {
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
        Ok(Captured {
            code: status.code(),
            text: String::from_utf8_lossy(&bytes).into_owned(),
        })
    }

    /// The run's RunState as `git baton status --json` prints it (not shown).
    pub(super) fn state(&self, step: &str, run: Option<&str>) -> Result<Value, DemoError> {
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

    pub(super) fn steps(&mut self) -> Result<(), DemoError> {
        self.introduce()?;
        let id = self.first_agent()?;
        self.lazy_agent(&id)?;
        self.the_record(&id)?;
        self.diligent_agent(&id)?;
        self.final_result(&id)?;
        self.done();
        Ok(())
    }

    /// What the demo replays, and the sandbox repository it sets up: the plan, its targets, the
    /// pipeline and the demo actors.
    fn introduce(&mut self) -> Result<(), DemoError> {
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
        self.check_interrupted()
    }

    /// 1. The first agent: one document of three, then a rate limit. Returns the run's id.
    fn first_agent(&mut self) -> Result<String, DemoError> {
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
        Ok(id)
    }

    /// 2. The resumed agent changes nothing and exits 0: the gate blocks it.
    fn lazy_agent(&mut self, id: &str) -> Result<(), DemoError> {
        self.step(
            "2. Another agent resumes, changes nothing, exits 0 — and is blocked",
            "`git baton resume` re-runs the executor stage, this time with the demo actor `lazy`.\n\
             Like the incident's second agent, it sees an edited document, says the work looks\n\
             done, changes nothing and exits 0. The coverage gate checks the repository, not the\n\
             exit code: two targets have no change and no reason, so the stage is blocked.",
        );
        let step = format!("git baton resume {id} --actor executor=lazy");
        let shown = self.show(&["resume", id, "--actor", "executor=lazy"])?;
        expect_exit(&step, &shown, 1)?;
        let state = self.state(&step, Some(id))?;
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
        Ok(())
    }

    /// 3. What the record says: the status, and what the latest attempt changed.
    fn the_record(&mut self, id: &str) -> Result<(), DemoError> {
        self.step(
            "3. What the run's record says",
            "The RunState keeps every attempt. `git baton status` shows them with the gate's\n\
             verdict, and `git baton diff` shows what the latest attempt changed compared with\n\
             the attempt before it.",
        );
        let step = format!("git baton status {id}");
        let shown = self.show(&["status", id])?;
        expect_exit(&step, &shown, 0)?;
        self.say("");
        let step = format!("git baton diff {id}");
        let shown = self.show(&["diff", id])?;
        expect_exit(&step, &shown, 0)?;
        if !shown.text.contains("changed nothing") {
            return Err(deviated(
                &step,
                "its output does not say \"changed nothing\"",
            ));
        }
        Ok(())
    }

    /// 4. A diligent agent finishes the work, with a reason for the target it leaves alone.
    fn diligent_agent(&mut self, id: &str) -> Result<(), DemoError> {
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
        let shown = self.show(&["resume", id, "--actor", "executor=diligent"])?;
        expect_exit(&step, &shown, 0)?;
        let state = self.state(&step, Some(id))?;
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
        )
    }

    /// What the demo showed.
    fn done(&mut self) {
        self.say("\n== Done\n");
        self.say(
            "The attempt that changed nothing was blocked instead of recorded as a success; the\n\
             attempt that covered every target, with a reason for the one it left alone, passed.\n\
             Nothing is merged: the run's branch waits for review.",
        );
    }

    /// Shows what the reviewer gets: `git baton review`.
    pub(super) fn final_result(&mut self, id: &str) -> Result<(), DemoError> {
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

pub(super) fn expect_exit(step: &str, shown: &Captured, want: i32) -> Result<(), DemoError> {
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

pub(super) fn expect_eq<T: PartialEq + std::fmt::Debug>(
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
pub(super) fn expect_coverage(
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

pub(super) fn str_at<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

pub(super) fn stage<'v>(state: &'v Value, name: &str) -> &'v Value {
    state
        .get("stages")
        .and_then(Value::as_array)
        .and_then(|stages| stages.iter().find(|s| str_at(s, "name") == name))
        .unwrap_or(&Value::Null)
}

pub(super) fn attempts(stage: &Value) -> &[Value] {
    stage
        .get("attempts")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}
