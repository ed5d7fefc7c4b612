//! The invariants of creation, against records forged one field at a time.

use std::path::Path;

use super::*;
use crate::coverage::TargetReport;
use crate::state::fixture::{at, run};
use crate::state::transition::{AttemptEnd, Event, apply};
use crate::state::{Outcome, RunStatus};

const PLAN: &str = "---\nid: p\ntargets:\n  - a.md\n---\nDo it.\n";

fn report(status: TargetStatus, reason: Option<&str>) -> Report {
    Report {
        verified: true,
        passed: status != TargetStatus::Uncovered,
        targets: vec![TargetReport {
            target: "a.md".into(),
            status,
            paths: match status {
                TargetStatus::Changed => vec!["a.md".into()],
                _ => Vec::new(),
            },
            paths_omitted: 0,
            reason: reason.map(String::from),
            reason_source: None,
            line: 4,
            suggestion: None,
        }],
        problems: Vec::new(),
        contradictions: Vec::new(),
    }
}

/// The fixture run after its gated executor stage ended `outcome` with `coverage`.
fn ended(outcome: Outcome, coverage: Option<Report>) -> RunState {
    let started = apply(
        &run(),
        Event::AttemptStarted {
            stage: 0,
            actor: "a".into(),
            dir: attempt_dir("executor", 1),
            cleared_env: Vec::new(),
            fallback_from: None,
        },
        at(1),
    )
    .unwrap();
    apply(
        &started,
        Event::attempt_ended(AttemptEnd {
            outcome,
            coverage,
            ..AttemptEnd::default()
        }),
        at(2),
    )
    .unwrap()
}

fn passed() -> RunState {
    ended(
        Outcome::Succeeded,
        Some(report(TargetStatus::Changed, None)),
    )
}

fn files(names: &[&'static str]) -> RecordFiles<'static> {
    RecordFiles {
        names: names.to_vec(),
        plan: Some(PLAN.as_bytes()),
    }
}

/// The configuration of the fixture's repository: the executor gated, every attempt.
fn configured() -> Configured<'static> {
    Configured {
        coverage: crate::state::CoverageMode::Always,
        gated: vec!["executor"],
        require_targets: false,
        checks: Vec::new(),
    }
}

fn broken(result: Result<(), Broken>) -> String {
    result.expect_err("refused").0
}

/// Why the record `state` with `files`, new to this clone, is refused under the fixture's
/// configuration.
fn refused(state: &RunState, files: &RecordFiles) -> String {
    broken(check_record(state, files, None, &configured()))
}

#[test]
fn what_git_baton_writes_is_taken() {
    check_claim(&run()).unwrap();
    check_claim(&passed()).unwrap();
    check_record(
        &passed(),
        &files(&["state.json", "plan.md", "attempts/executor-1/prompt.md"]),
        None,
        &configured(),
    )
    .unwrap();
    let ours = run();
    check_record(
        &passed(),
        &files(&["state.json"]),
        Some(&Ours {
            state: &ours,
            plan: Some(PLAN.as_bytes()),
        }),
        &configured(),
    )
    .unwrap();
}

#[test]
fn a_path_field_has_the_one_shape_creation_gives_it() {
    let mut state = run();
    for snapshot in [
        "../other/plan.md",
        "/etc/passwd",
        "attempts/plan.md",
        "plan.md/",
        "",
    ] {
        state.plan.snapshot = snapshot.into();
        assert!(
            state.plan_snapshot_in(Path::new("/r")).is_err(),
            "{snapshot}"
        );
        assert!(
            broken(check_claim(&state)).contains("plan.snapshot"),
            "{snapshot}"
        );
    }
    state.plan.snapshot = PLAN_SNAPSHOT.into();
    assert_eq!(
        state.plan_snapshot_in(Path::new("/r")).unwrap(),
        Path::new("/r/plan.md")
    );

    for dir in [
        "../1abcdefghj/attempts/executor-1",
        "/tmp/x",
        "attempts/executor-2",
        "attempts/reporter-1",
        "attempts/executor-1/..",
        "attempts/executor-1/",
        "./attempts/executor-1",
    ] {
        let mut state = passed();
        state.stages[0].attempts[0].dir = dir.into();
        let attempt = state.stages[0].attempts[0].clone();
        let err = state
            .attempt_dir_in(Path::new("/r"), "executor", &attempt)
            .unwrap_err();
        assert!(err.to_string().contains(dir), "{err}");
        assert!(
            broken(check_claim(&state)).contains("attempts/executor-1"),
            "{dir}"
        );
    }
    let state = passed();
    let attempt = &state.stages[0].attempts[0];
    assert_eq!(
        state
            .attempt_dir_in(Path::new("/r"), "executor", attempt)
            .unwrap(),
        Path::new("/r/attempts/executor-1")
    );
}

#[test]
fn a_stage_name_that_would_leave_a_directory_is_refused() {
    for name in ["..", "../x", "a/b", "", "Exec", "-x"] {
        let mut state = passed();
        state.stages[0].name = name.into();
        state.stages[0].attempts[0].dir = attempt_dir(name, 1);
        let attempt = state.stages[0].attempts[0].clone();
        assert!(
            state
                .attempt_dir_in(Path::new("/r"), name, &attempt)
                .is_err(),
            "{name}"
        );
        assert!(broken(check_claim(&state)).contains("stage name"), "{name}");
    }
}

#[test]
fn the_worktree_and_plan_path_are_plain_fields() {
    for worktree in ["relative/wt", "/a/../b", "/a/\nb", ""] {
        let mut state = run();
        state.worktree = worktree.into();
        assert!(
            broken(check_claim(&state)).contains("worktree"),
            "{worktree:?}"
        );
    }
    let mut state = run();
    state.plan.path = "plans/p.md\u{1b}[2J".into();
    assert!(broken(check_claim(&state)).contains("plan.path"));
}

#[test]
fn a_plan_with_targets_has_a_gated_stage() {
    let mut state = run();
    for stage in &mut state.stages {
        stage.gated = false;
    }
    assert!(broken(check_claim(&state)).contains("no stage is gated"));
    state.plan.targets.clear();
    check_claim(&state).unwrap();
}

#[test]
fn an_attempt_that_succeeded_under_a_gate_has_the_report_that_passed_it() {
    let failing = report(TargetStatus::Uncovered, None);
    let mut state = ended(Outcome::Blocked, Some(failing.clone()));
    check_claim(&state).unwrap();
    // The forged save: the outcome flipped, the report left as the gate wrote it.
    state.stages[0].attempts[0].outcome = Some(Outcome::Succeeded);
    state.status = RunStatus::Running;
    assert!(broken(check_claim(&state)).contains("did not pass"));
    // ... or the report flipped too, or dropped, or its reason a placeholder.
    let mut flipped = failing;
    flipped.passed = true;
    state.stages[0].attempts[0].coverage = Some(flipped);
    assert!(broken(check_claim(&state)).contains("not covered"));
    state.stages[0].attempts[0].coverage = None;
    assert!(broken(check_claim(&state)).contains("without a coverage report"));
    state.stages[0].attempts[0].coverage = Some(report(TargetStatus::Unchanged, Some("n/a")));
    assert!(broken(check_claim(&state)).contains("not covered"));
    let mut other = report(TargetStatus::Changed, None);
    other.targets[0].target = "b.md".into();
    state.stages[0].attempts[0].coverage = Some(other);
    assert!(broken(check_claim(&state)).contains("not about the plan's targets"));
    state.stages[0].attempts[0].coverage = Some(report(
        TargetStatus::Unchanged,
        Some("the page already documents the new flag in full"),
    ));
    check_claim(&state).unwrap();
}

#[test]
fn a_gate_not_enforced_needs_no_report() {
    let mut state = ended(Outcome::Succeeded, None);
    state.policy.coverage = crate::state::CoverageMode::Resume;
    check_claim(&state).unwrap();
    assert!(gated_verdicts(&state).is_empty());
    state.policy.coverage = crate::state::CoverageMode::Always;
    assert!(check_claim(&state).is_err());
}

#[test]
fn a_record_holds_the_files_of_its_own_attempts_and_its_plan() {
    let err = refused(&passed(), &files(&["attempts/executor-2/evidence.json"]));
    assert!(err.contains("attempts/executor-2/evidence.json"), "{err}");
    let none = RecordFiles {
        names: vec!["state.json"],
        plan: None,
    };
    assert!(refused(&passed(), &none).contains("no plan snapshot"));
    let other = "---\nid: p\ntargets: [b.md]\n---\n";
    let forged = RecordFiles {
        names: vec![],
        plan: Some(other.as_bytes()),
    };
    assert!(refused(&passed(), &forged).contains("plan.targets"));
    let staged = "---\nid: p\ntargets: [a.md]\nstages: [executor]\n---\n";
    let staged = RecordFiles {
        names: vec![],
        plan: Some(staged.as_bytes()),
    };
    assert!(refused(&passed(), &staged).contains("stages"));
}

#[test]
fn a_newer_record_keeps_what_creation_fixed_here() {
    let ours = run();
    let here = |plan: &'static str| Ours {
        state: &ours,
        plan: Some(plan.as_bytes()),
    };
    let check = |state: &RunState, ours: &Ours| {
        broken(check_record(state, &files(&[]), Some(ours), &configured()))
    };

    let mut theirs = passed();
    theirs.stages[1].gated = true;
    assert!(check(&theirs, &here(PLAN)).contains("pipeline"));
    let mut theirs = passed();
    theirs.stages[1].configured_actor = "z".into();
    assert!(check(&theirs, &here(PLAN)).contains("pipeline"));
    let mut theirs = passed();
    theirs.policy.coverage = crate::state::CoverageMode::Resume;
    assert!(check(&theirs, &here(PLAN)).contains("policy"));
    let mut theirs = passed();
    theirs.base_rev = "elsewhere".into();
    assert!(check(&theirs, &here(PLAN)).contains("base"));
    assert!(
        check(
            &passed(),
            &here("---\nid: p\ntargets: [a.md]\n---\nOther.\n")
        )
        .contains("plan snapshot")
    );

    // An attempt that had ended here is not rewritten by a newer record.
    let blocked = ended(
        Outcome::Blocked,
        Some(report(TargetStatus::Uncovered, None)),
    );
    let mut theirs = blocked.clone();
    theirs.stages[0].attempts[0].error = Some("forged".into());
    let mine = Ours {
        state: &blocked,
        plan: Some(PLAN.as_bytes()),
    };
    assert!(check(&theirs, &mine).contains("rewrites attempt 1"));
}

#[test]
fn a_lease_longer_than_the_longest_is_no_lease() {
    let max = SignedDuration::from_secs(300);
    let lease = |until: Timestamp| Lease {
        holder: "h".into(),
        host: "x".into(),
        taken_at: at(0),
        until,
    };
    assert!(lease_in_force(&lease(at(300)), at(10), max));
    assert!(!lease_in_force(&lease(at(300)), at(300), max), "expired");
    // A renewal moves `until`, not `taken_at`: what counts is how far ahead it ends.
    assert!(lease_in_force(&lease(at(3600)), at(3400), max));
    // Skew within the tolerance still counts; a year 9000 lease never does.
    assert!(lease_in_force(&lease(at(10 + 300 + 60)), at(10), max));
    assert!(!lease_in_force(&lease(at(10 + 300 + 61)), at(10), max));
    let far: Timestamp = "9000-01-01T00:00:00Z".parse().unwrap();
    assert!(!lease_in_force(&lease(far), at(10), max));
}

#[test]
fn the_recorded_reasons_are_judged_again() {
    let state = ended(
        Outcome::Succeeded,
        Some(report(TargetStatus::Unchanged, Some("yes"))),
    );
    let verdicts = gated_verdicts(&state);
    assert_eq!(verdicts.len(), 1);
    let entries = recorded_reasons(verdicts[0].1.coverage.as_ref(), &verdicts[0].1.dir);
    assert_eq!(entries.len(), 1);
    let plan = crate::plan::parse("plans/p.md", PLAN).unwrap();
    let again = crate::coverage::evaluate(&plan.targets, &[], &entries, &[]);
    assert!(!again.passed, "a placeholder is refused again");
    let again = crate::coverage::evaluate(&plan.targets, &["a.md".to_string()], &[], &[]);
    assert!(again.passed);
}

#[test]
fn a_run_from_elsewhere_gates_at_least_what_the_configuration_gates() {
    let mut state = passed();
    state.policy.coverage = crate::state::CoverageMode::Resume;
    let err = refused(&state, &files(&[]));
    assert!(err.contains("coverage: resume"), "{err}");
    let lenient = Configured {
        coverage: crate::state::CoverageMode::Resume,
        ..configured()
    };
    check_record(&state, &files(&[]), None, &lenient).unwrap();

    // The gate moved to a stage the configuration does not gate.
    let mut state = passed();
    state.stages[0].gated = false;
    state.stages[1].gated = true;
    let err = refused(&state, &files(&[]));
    assert!(err.contains("stage `executor` is not gated"), "{err}");
    // Gating more than the configuration is no weakening.
    let mut state = passed();
    state.stages[1].gated = true;
    check_record(&state, &files(&[]), None, &configured()).unwrap();
}

#[test]
fn a_forged_path_is_shown_without_its_control_characters() {
    let mut state = run();
    state.plan.snapshot = "\u{1b}]52;c;x\u{7}plan.md".into();
    let err = state
        .plan_snapshot_in(Path::new("/r"))
        .unwrap_err()
        .to_string();
    let claim = broken(check_claim(&state));
    for text in [err, claim] {
        assert!(!text.chars().any(char::is_control), "{text:?}");
        assert!(text.contains("\\u{1b}"), "{text}");
    }
}

#[test]
fn derived_targets_come_from_a_snapshot_that_declares_none() {
    let mut state = passed();
    state.plan.targets_source = crate::state::TargetSource::Derived;
    // The fixture's snapshot declares `a.md`: a run that derived its targets had none declared.
    let err = refused(&state, &files(&[]));
    assert!(err.contains("plan.targets"), "{err}");
    let body = "---\nid: p\n---\nEdit a.md.\n";
    let derived = RecordFiles {
        names: vec![],
        plan: Some(body.as_bytes()),
    };
    check_record(&state, &derived, None, &configured()).unwrap();
}

/// The fixture's passing attempt, with `checks` recorded on it.
fn checked(outcome: Outcome, checks: Vec<crate::state::CheckResult>) -> RunState {
    let mut state = ended(outcome, Some(report(TargetStatus::Changed, None)));
    state.stages[0].attempts[0].checks = checks;
    state
}

fn check_result(name: &str, outcome: crate::state::CheckOutcome) -> crate::state::CheckResult {
    let (stdout_log, stderr_log) = crate::state::checks::log_paths(name);
    crate::state::CheckResult {
        name: name.into(),
        outcome,
        exit_code: Some(if outcome == crate::state::CheckOutcome::Passed {
            0
        } else {
            1
        }),
        signal: None,
        duration_ms: 10,
        stdout_log,
        stderr_log,
        tail: "ok".into(),
        error: None,
    }
}

#[test]
fn runner_checks_are_ones_git_baton_could_have_recorded() {
    use crate::state::CheckOutcome::{Failed, Passed};
    check_claim(&checked(
        Outcome::Succeeded,
        vec![check_result("tests", Passed)],
    ))
    .unwrap();
    check_claim(&checked(
        Outcome::Blocked,
        vec![check_result("tests", Failed)],
    ))
    .unwrap();
    assert_eq!(
        broken(check_claim(&checked(
            Outcome::Succeeded,
            vec![check_result("tests", Failed)]
        ))),
        "attempt 1 of stage `executor` succeeded although its runner check `tests` is `failed`"
    );
    let mut escaping = check_result("tests", Failed);
    escaping.stdout_log = "../../../../etc/passwd".into();
    assert!(
        broken(check_claim(&checked(Outcome::Blocked, vec![escaping])))
            .contains("the logs of check `tests`")
    );
    let mut named = check_result("tests", Failed);
    named.name = "../x".into();
    assert!(broken(check_claim(&checked(Outcome::Blocked, vec![named]))).contains("check name"));
    let mut flooded = check_result("tests", Failed);
    flooded.tail = "x".repeat(crate::state::checks::MAX_TAIL + 1);
    assert!(broken(check_claim(&checked(Outcome::Blocked, vec![flooded]))).contains("tail"));
    // Under `coverage: resume` a first attempt's checks are recorded, not enforced.
    let mut unenforced = checked(Outcome::Succeeded, vec![check_result("tests", Failed)]);
    unenforced.policy.coverage = crate::state::CoverageMode::Resume;
    check_claim(&unenforced).unwrap();
    let twice = vec![check_result("tests", Passed), check_result("tests", Passed)];
    assert!(broken(check_claim(&checked(Outcome::Succeeded, twice))).contains("twice"));
}

#[test]
fn an_attempt_with_a_violation_is_failed_and_says_what_it_changed() {
    let violation = crate::state::Violation {
        kind: crate::state::ViolationKind::ProtectedPath,
        subject: ".baton.yml".into(),
        message: "it changes .baton.yml (git-baton's configuration), which the plan does not \
                  target"
            .into(),
    };
    let mut state = ended(Outcome::Failed, None);
    state.stages[0].attempts[0].violations = vec![violation.clone()];
    check_claim(&state).unwrap();
    assert_eq!(
        state.error().map(|e| e.kind),
        Some(crate::state::ErrorKind::Violation)
    );
    // The forged save: the violation kept, the outcome flipped to a pass.
    let mut forged = passed();
    forged.stages[0].attempts[0].violations = vec![violation.clone()];
    assert!(broken(check_claim(&forged)).contains("is not failed"));
    let mut silent = state.clone();
    silent.stages[0].attempts[0].violations[0].message.clear();
    assert!(broken(check_claim(&silent)).contains("says nothing"));
}

/// A run from elsewhere ran the checks this repository's configuration runs: a success without
/// a result for one is a check that was never run (the record was made weaker later).
#[test]
fn a_run_from_elsewhere_ran_the_configured_checks() {
    let state = passed();
    let with_checks = Configured {
        checks: vec![("executor", vec!["tests".to_string()])],
        ..configured()
    };
    let err = broken(check_record(&state, &files(&[]), None, &with_checks));
    assert_eq!(
        err,
        "attempt 1 of stage `executor` succeeded without a result of its runner check `tests`"
    );
    // Checks of another stage ask nothing of this one.
    let elsewhere = Configured {
        checks: vec![("reporter", vec!["tests".to_string()])],
        ..configured()
    };
    check_record(&state, &files(&[]), None, &elsewhere).unwrap();

    // A plan with targets meets `require_targets`.
    let strict = Configured {
        require_targets: true,
        ..configured()
    };
    check_record(&state, &files(&[]), None, &strict).unwrap();
}
