//! The comparison of what git-baton recorded before an attempt with what it found after.

use super::*;
use crate::run::WorktreeError;

const BASE: &str = "1111111111111111111111111111111111111111";
const TIP: &str = "2222222222222222222222222222222222222222";
const BRANCH: &str = "baton/0abc";

fn commit(hex: &str) -> CommitId {
    hex.parse().unwrap()
}

fn plan(frontmatter: &str) -> Plan {
    crate::plan::parse("plans/fix.md", &format!("---\n{frontmatter}---\nbody\n")).unwrap()
}

fn config_files(config: &str) -> BTreeMap<String, String> {
    [("config", config), ("hooks", "dir")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn before() -> Before {
    Before {
        tip: Some(commit(TIP)),
        git_config: config_files("blob aaa"),
        plan_snapshot: Some(SNAPSHOT.into()),
    }
}

const SNAPSHOT: &str = "---\ntargets: [docs/a.md, docs/b.md]\n---\nbody\n";

/// What an attempt that only did its work leaves: `changed` in the protected scope.
fn clean(changed: &[&str]) -> After {
    After {
        head_branch: Some(BRANCH.into()),
        tip: Some(commit(TIP)),
        keeps_recorded: true,
        has_base: true,
        git_config: config_files("blob aaa"),
        plan_snapshot: Some(SNAPSHOT.into()),
        changed: Some(Ok(changed.iter().map(|p| p.to_string()).collect())),
    }
}

fn judged(plan: &Plan, configured: &[&str], after: &After) -> Vec<(ViolationKind, String)> {
    let configured: Vec<String> = configured.iter().map(|s| s.to_string()).collect();
    let protected = Protected::new(&configured, plan, "plans/fix.md");
    violations(&protected, BRANCH, commit(BASE), &before(), after)
        .into_iter()
        .map(|v| (v.kind, v.subject))
        .collect()
}

fn kinds(found: &[(ViolationKind, String)]) -> Vec<ViolationKind> {
    found.iter().map(|(k, _)| *k).collect()
}

#[test]
fn work_on_the_targets_alone_is_no_violation() {
    let plan = plan("targets: [docs/a.md]\n");
    assert_eq!(judged(&plan, &[], &clean(&["docs/a.md"])), []);
}

#[test]
fn the_plan_file_baton_yml_and_ci_files_are_protected_unless_targeted() {
    let plan_ = plan("targets: [docs/a.md]\n");
    for path in [
        "plans/fix.md",
        ".baton.yml",
        ".github/workflows/ci.yml",
        ".gitlab-ci.yml",
        ".circleci/config.yml",
        "Jenkinsfile",
    ] {
        let found = judged(&plan_, &[], &clean(&["docs/a.md", path]));
        assert_eq!(found, [(ViolationKind::ProtectedPath, path.to_string())]);
    }
    // A diff that cannot be made fails closed.
    let mut unreadable = clean(&[]);
    unreadable.changed = Some(Err("object not found".into()));
    assert_eq!(
        judged(&plan_, &[], &unreadable),
        [(ViolationKind::ProtectedPath, String::new())]
    );
    // Not protected: a file that merely resembles one.
    assert_eq!(judged(&plan_, &[], &clean(&[".github/CODEOWNERS2"])), []);
    let targets = plan("targets: [docs/a.md, .baton.yml, .github/]\n");
    assert_eq!(
        judged(
            &targets,
            &[],
            &clean(&[".baton.yml", ".github/workflows/ci.yml"])
        ),
        []
    );
}

#[test]
fn configured_and_planned_paths_add_to_the_protected_ones() {
    let plan_ = plan("targets: [docs/a.md]\nprotect: [deploy/]\n");
    let found = judged(
        &plan_,
        &["Makefile"],
        &clean(&["Makefile", "deploy/prod.tf"]),
    );
    assert_eq!(
        found,
        [
            (ViolationKind::ProtectedPath, "Makefile".to_string()),
            (ViolationKind::ProtectedPath, "deploy/prod.tf".to_string()),
        ]
    );
    let protected = Protected::new(&["Makefile".into()], &plan_, "plans/fix.md");
    match protected.scope() {
        Scope::Prefixes(list) => {
            assert!(list.contains(&"Makefile".to_string()), "{list:?}");
            assert!(list.contains(&"deploy".to_string()), "{list:?}");
            assert!(list.contains(&".github/workflows".to_string()), "{list:?}");
        }
        Scope::All => panic!("the protected scope is the whole repository"),
    }
}

#[test]
fn a_changed_git_configuration_file_is_a_violation_named_once() {
    let plan = plan("targets: [docs/a.md]\n");
    let mut after = clean(&[]);
    after.git_config.insert("config".into(), "blob bbb".into());
    after
        .git_config
        .insert("hooks/pre-commit".into(), "blob ccc executable".into());
    let configured: Vec<String> = Vec::new();
    let protected = Protected::new(&configured, &plan, "plans/fix.md");
    let found = violations(&protected, BRANCH, commit(BASE), &before(), &after);
    let subjects: Vec<&str> = found.iter().map(|v| v.subject.as_str()).collect();
    assert_eq!(subjects, ["config", "hooks/pre-commit"]);
    assert!(found.iter().all(|v| v.kind == ViolationKind::GitConfig));
    let mut end = AttemptEnd {
        outcome: Outcome::Succeeded,
        ..AttemptEnd::default()
    };
    record(&mut end, found);
    let error = end.error.unwrap();
    assert_eq!(
        error,
        "the attempt changed what no attempt may: it changes the repository's git \
         configuration: config, hooks/pre-commit"
    );
    assert_eq!(end.outcome, Outcome::Failed);
}

#[test]
fn leaving_the_branch_rewriting_its_history_or_losing_the_base_are_violations() {
    let plan = plan("targets: [docs/a.md]\n");
    let mut after = clean(&[]);
    after.head_branch = Some("other".into());
    assert_eq!(kinds(&judged(&plan, &[], &after)), [ViolationKind::Branch]);
    after.head_branch = None;
    assert_eq!(
        judged(&plan, &[], &after),
        [(ViolationKind::Branch, String::new())]
    );

    let mut after = clean(&[]);
    after.keeps_recorded = false;
    after.tip = Some(commit(BASE));
    let found = judged(&plan, &[], &after);
    assert_eq!(found, [(ViolationKind::History, TIP.to_string())]);

    after.has_base = false;
    let found = judged(&plan, &[], &after);
    assert_eq!(kinds(&found), [ViolationKind::History, ViolationKind::Base]);
}

#[test]
fn the_reasons_resume_gives_are_the_same_words() {
    assert_eq!(
        off_branch(Some("other"), BRANCH),
        "is on branch other instead of baton/0abc"
    );
    assert_eq!(
        off_branch(None, BRANCH),
        "is on a detached HEAD instead of baton/0abc"
    );
    let err = crate::run::RunError::Worktree(WorktreeError::WrongBranch {
        run: "0abc".into(),
        worktree: "/w".into(),
        found: Some("other".into()),
        branch: BRANCH.into(),
    });
    assert!(
        err.to_string()
            .ends_with(&off_branch(Some("other"), BRANCH)),
        "{err}"
    );
    let err = crate::run::RunError::Worktree(WorktreeError::BaseNotInHistory {
        run: "0abc".into(),
        branch: BRANCH.into(),
        base: BASE.into(),
    });
    assert!(err.to_string().ends_with(&base_left(BRANCH, BASE)), "{err}");
}

#[test]
fn a_violation_fails_any_outcome_and_keeps_its_reason() {
    let v = Violation {
        kind: ViolationKind::Branch,
        subject: "other".into(),
        message: "its worktree is on branch other instead of baton/0abc".into(),
    };
    let mut end = AttemptEnd {
        outcome: Outcome::RateLimited,
        error: Some("rate limited (exit 75)".into()),
        ..AttemptEnd::default()
    };
    record(&mut end, vec![v.clone()]);
    assert_eq!(end.outcome, Outcome::Failed);
    assert_eq!(
        end.error.as_deref(),
        Some(
            "rate limited (exit 75); the attempt changed what no attempt may: its worktree is \
             on branch other instead of baton/0abc"
        )
    );
    assert_eq!(end.violations, [v]);
    let mut end = AttemptEnd {
        outcome: Outcome::Succeeded,
        ..AttemptEnd::default()
    };
    record(&mut end, Vec::new());
    assert_eq!((end.outcome, end.error), (Outcome::Succeeded, None));
}

/// A plan snapshot that differs after the actor, or is gone, is a violation; the same bytes
/// are none.
#[test]
fn a_changed_plan_snapshot_is_a_violation() {
    let plan = plan("targets: [docs/a.md]\n");
    for (now, violated) in [
        (Some(SNAPSHOT.as_bytes().to_vec()), false),
        (
            Some(b"---\ntargets: [docs/a.md]\n---\nbody\n".to_vec()),
            true,
        ),
        (None, true),
    ] {
        let after = After {
            plan_snapshot: now,
            ..clean(&["docs/a.md"])
        };
        let found = judged(&plan, &[], &after);
        let expected = if violated {
            vec![(ViolationKind::PlanSnapshot, "plan.md".to_string())]
        } else {
            vec![]
        };
        assert_eq!(found, expected);
    }
}
