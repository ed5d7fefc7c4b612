use super::*;
use crate::coverage::parse_evidence;
use crate::coverage::test_support::*;
use insta::{assert_json_snapshot, assert_snapshot};

/// The verdict in a line a row: what each case is about, without repeating the report's JSON
/// layout (which `report_json_names_every_field` holds once).
fn summary(report: &Report) -> String {
    let mut lines = vec![format!(
        "verified: {}, passed: {}",
        report.verified, report.passed
    )];
    for row in &report.targets {
        let mut line = format!("{} {:?} {:?}", row.target, row.status, row.paths);
        if let (Some(reason), Some(source)) = (&row.reason, &row.reason_source) {
            line.push_str(&format!(" {reason:?} ({source})"));
        }
        lines.push(line);
    }
    for problem in &report.problems {
        lines.push(format!(
            "problem {:?} {} ({}): {}",
            problem.kind, problem.target, problem.source, problem.message
        ));
    }
    for contradiction in &report.contradictions {
        lines.push(format!(
            "contradiction {} {:?} {:?} ({})",
            contradiction.target, contradiction.reason, contradiction.paths, contradiction.source
        ));
    }
    lines.join("\n")
}

/// The gate over `targets` with `changed` in the diff and `evidence_json` as `evidence.json`.
fn gate(targets: &[&str], changed: &[&str], evidence_json: &str) -> Report {
    evaluate(
        &plan_targets(targets),
        &diff(changed),
        &evidence(evidence_json),
        &[],
    )
}

#[test]
fn report_json_names_every_field() {
    let targets = plan_targets(&["docs/a.md", "docs/b.md", "src/"]);
    let entries = evidence(
        r#"{"target_coverage": [
            {"target": "docs/b.md", "status": "unchanged", "reason": "the flags it documents stayed"},
            {"target": "src/", "status": "unchanged", "reason": "n/a"},
            {"target": "docs/a.md", "status": "changed", "paths": ["docs/ghost.md"]}
        ]}"#,
    );
    let report = evaluate(
        &targets,
        &diff(&["docs/a.md", "src/main.rs"]),
        &entries,
        &[],
    );
    assert_json_snapshot!(report, @r#"
        {
          "verified": true,
          "passed": false,
          "targets": [
            {
              "target": "docs/a.md",
              "status": "changed",
              "paths": [
                "docs/a.md"
              ],
              "reason": null,
              "reason_source": null,
              "line": 2
            },
            {
              "target": "docs/b.md",
              "status": "unchanged",
              "paths": [],
              "reason": "the flags it documents stayed",
              "reason_source": {
                "kind": "file",
                "path": "evidence.json",
                "index": 0
              },
              "line": 2
            },
            {
              "target": "src/",
              "status": "changed",
              "paths": [
                "src/main.rs"
              ],
              "reason": null,
              "reason_source": null,
              "line": 2
            }
          ],
          "problems": [
            {
              "target": "docs/a.md",
              "source": {
                "kind": "file",
                "path": "evidence.json",
                "index": 2
              },
              "kind": "claim_not_in_diff",
              "message": "claims \"docs/ghost.md\" changed for target \"docs/a.md\", but the diff does not change it"
            }
          ],
          "contradictions": [
            {
              "target": "src/",
              "source": {
                "kind": "file",
                "path": "evidence.json",
                "index": 1
              },
              "reason": "n/a",
              "paths": [
                "src/main.rs"
              ]
            }
          ]
        }
        "#);
}

#[test]
fn all_changed_needs_no_evidence() {
    let targets = plan_targets(&["docs/a.md", "src/parser/", "tests/**/*_golden.txt"]);
    let changed = diff(&[
        "docs/a.md",
        "src/parser/mod.rs",
        "src/parser/lexer.rs",
        "tests/cli/help_golden.txt",
        "tests/unit.rs",
    ]);
    let report = evaluate(&targets, &changed, &[], &[]);
    assert!(report.passed);
    assert_snapshot!(summary(&report), @r#"
        verified: true, passed: true
        docs/a.md Changed ["docs/a.md"]
        src/parser/ Changed ["src/parser/lexer.rs", "src/parser/mod.rs"]
        tests/**/*_golden.txt Changed ["tests/cli/help_golden.txt"]
        "#);
}

#[test]
fn one_uncovered_fails() {
    let targets = plan_targets(&["docs/a.md", "docs/b.md"]);
    let report = evaluate(&targets, &diff(&["docs/a.md"]), &[], &[]);
    assert!(!report.passed);
    let uncovered: Vec<&str> = report.uncovered().map(|r| r.target.as_str()).collect();
    assert_eq!(uncovered, ["docs/b.md"]);
    assert_snapshot!(summary(&report), @r#"
        verified: true, passed: false
        docs/a.md Changed ["docs/a.md"]
        docs/b.md Uncovered []
        "#);
}

#[test]
fn unchanged_with_good_reason_passes() {
    let report = gate(
        &["docs/a.md", "docs/b.md"],
        &["docs/a.md"],
        r#"{"target_coverage": [
            {"target": "docs/b.md", "status": "unchanged",
             "reason": "  the CLI flags it documents did not change  "}
        ]}"#,
    );
    assert!(report.passed);
    assert_snapshot!(summary(&report), @r#"
        verified: true, passed: true
        docs/a.md Changed ["docs/a.md"]
        docs/b.md Unchanged [] "the CLI flags it documents did not change" (evidence.json: entry 0)
        "#);
}

#[test]
fn claims_the_diff_does_not_show() {
    let report = gate(
        &["docs/", "src/main.rs"],
        &["docs/a.md", "src/main.rs"],
        r#"{"target_coverage": [
            {"target": "docs/", "status": "changed",
             "paths": ["docs/a.md", "docs/ghost.md", "src/main.rs", "docs/a.md"]}
        ]}"#,
    );
    // Both targets changed; only the false claims fail the gate.
    assert!(report.uncovered().next().is_none());
    assert!(!report.passed);
    assert_snapshot!(summary(&report), @r#"
        verified: true, passed: false
        docs/ Changed ["docs/a.md"]
        src/main.rs Changed ["src/main.rs"]
        problem ClaimNotInDiff docs/ (evidence.json: entry 0): claims "docs/ghost.md" changed for target "docs/", but the diff does not change it
        problem ClaimNotInDiff docs/ (evidence.json: entry 0): claims "src/main.rs" for target "docs/", but the target does not match that path
        "#);
}

#[test]
fn changed_claim_cannot_cover_an_unchanged_target() {
    let report = gate(
        &["docs/a.md"],
        &[],
        r#"{"target_coverage": [
            {"target": "docs/a.md", "status": "changed", "paths": ["docs/a.md"]}
        ]}"#,
    );
    assert_eq!(report.uncovered().count(), 1);
    assert_eq!(report.problems[0].kind, ProblemKind::ClaimNotInDiff);
}

#[test]
fn duplicate_entries_across_files() {
    let targets = plan_targets(&["docs/a.md"]);
    let mut entries = evidence(
        r#"{"target_coverage": [
            {"target": "docs/a.md", "status": "unchanged", "reason": "the public API did not change"}
        ]}"#,
    );
    entries.extend(
        parse_evidence(
            "more/evidence.json",
            r#"{"target_coverage": [
                {"target": "docs/a.md", "status": "unchanged", "reason": "n/a"}
            ]}"#,
        )
        .expect("parses")
        .entries,
    );
    let report = evaluate(&targets, &[], &entries, &[]);
    assert!(!report.passed);
    assert_snapshot!(summary(&report), @r#"
        verified: true, passed: false
        docs/a.md Unchanged [] "the public API did not change" (evidence.json: entry 0)
        problem DuplicateEntry docs/a.md (more/evidence.json: entry 0): second entry for target "docs/a.md" (the first is evidence.json: entry 0); give one entry per target
        "#);
}

#[test]
fn unknown_targets_suggest_the_closest() {
    let report = gate(
        &["docs/guide.md", "src/parser/", "tests/**/*_golden.txt"],
        &[],
        r#"{"target_coverage": [
            {"target": "docs/guid.md", "status": "unchanged", "reason": "only typos were in scope"},
            {"target": "./src//parser", "status": "unchanged", "reason": "only typos were in scope"},
            {"target": "src/parser/lexer.rs", "status": "unchanged", "reason": "only typos were in scope"},
            {"target": "DOCS/GUIDE.md", "status": "unchanged", "reason": "only typos were in scope"},
            {"target": "Cargo.toml", "status": "unchanged", "reason": "only typos were in scope"}
        ]}"#,
    );
    let messages: Vec<String> = report
        .problems
        .iter()
        .map(|p| format!("{}: {:?}: {}", p.source, p.kind, p.message))
        .collect();
    assert_snapshot!(messages.join("\n"), @r#"
        evidence.json: entry 0: UnknownTarget: target "docs/guid.md" is not declared by the plan; did you mean "docs/guide.md"?
        evidence.json: entry 1: UnknownTarget: target "./src//parser" is not declared by the plan; did you mean "src/parser/"?
        evidence.json: entry 2: UnknownTarget: target "src/parser/lexer.rs" is not declared by the plan; did you mean "src/parser/"?
        evidence.json: entry 3: UnknownTarget: target "DOCS/GUIDE.md" is not declared by the plan; did you mean "docs/guide.md"?
        evidence.json: entry 4: UnknownTarget: target "Cargo.toml" is not declared by the plan
        "#);
}

#[test]
fn unchanged_entry_for_changed_target_is_a_contradiction() {
    let report = gate(
        &["docs/a.md", "src/parser/"],
        &["docs/a.md", "src/parser/mod.rs"],
        r#"{"target_coverage": [
            {"target": "src/parser/", "status": "unchanged", "reason": "n/a"}
        ]}"#,
    );
    // The diff wins, and the unused reason is not judged.
    assert!(report.passed);
    assert_snapshot!(summary(&report), @r#"
        verified: true, passed: true
        docs/a.md Changed ["docs/a.md"]
        src/parser/ Changed ["src/parser/mod.rs"]
        contradiction src/parser/ "n/a" ["src/parser/mod.rs"] (evidence.json: entry 0)
        "#);
}

#[test]
fn dir_and_glob_targets() {
    let targets = plan_targets(&[
        "src/parser/",
        "src/lexer/",
        "tests/**/*_golden.txt",
        "**/*.md",
        "pages/[id].tsx",
        "crates/*/Cargo.toml",
    ]);
    let changed = diff(&[
        "README.md",
        "crates/a/Cargo.toml",
        "crates/a/src/Cargo.toml",
        "docs/x/y.md",
        "pages/[id].tsx",
        "src/lexer",
        "src/lexer-old/a.rs",
        "src/lexer.rs",
        "src/parser/a/b/c.rs",
        "src/parser/mod.rs",
        "tests/golden.txt",
        "tests/x_golden.txt",
        "tests/y/z_golden.txt",
    ]);
    let report = evaluate(&targets, &changed, &[], &[]);
    assert_snapshot!(summary(&report), @r#"
        verified: true, passed: false
        src/parser/ Changed ["src/parser/a/b/c.rs", "src/parser/mod.rs"]
        src/lexer/ Uncovered []
        tests/**/*_golden.txt Changed ["tests/x_golden.txt", "tests/y/z_golden.txt"]
        **/*.md Changed ["README.md", "docs/x/y.md"]
        pages/[id].tsx Changed ["pages/[id].tsx"]
        crates/*/Cargo.toml Changed ["crates/a/Cargo.toml"]
        "#);
}

/// What `covered_paths` narrows down, found by matching every path.
fn scanned<'a>(target: &Target, changed: &'a [String]) -> Vec<&'a str> {
    changed
        .iter()
        .map(String::as_str)
        .filter(|p| target.matches(p))
        .collect()
}

#[test]
fn narrowed_matching_agrees_with_a_full_scan() {
    let targets = plan_targets(&[
        "a/",
        "a/b",
        "a/b/",
        "a-b/",
        "a/**/*.rs",
        "*/b/*",
        "a/b/c.rs",
        "{a,b}/c.rs",
    ]);
    let mut changed = Vec::new();
    for top in ["a", "a-b", "a.b", "a0", "b", "ab"] {
        for mid in ["", "b/", "b-c/", "b/c/"] {
            for leaf in ["c.rs", "d.md", "b"] {
                changed.push(format!("{top}/{mid}{leaf}"));
            }
        }
        changed.push(top.to_owned());
    }
    changed.sort();
    changed.dedup();
    for target in &targets {
        assert_eq!(
            covered_paths(target, &changed),
            scanned(target, &changed),
            "{}",
            target.spec
        );
    }
}

proptest::proptest! {
    /// Directory and path targets over an alphabet that sorts around `/` (`-` and `.` before
    /// it, `0` and letters after): the binary search finds what a scan of every path finds.
    #[test]
    fn narrowed_matching_agrees_with_a_full_scan_for_any_paths(
        specs in proptest::collection::vec("[ab][ab.0-]{0,2}(/[ab][ab.0-]{0,2}){0,2}/?", 1..6),
        paths in proptest::collection::vec("[ab.0-]{1,3}(/[ab.0-]{1,3}){0,3}", 0..30),
    ) {
        // One plan per spec: a plan refuses two specs that name the same paths.
        let targets: Vec<Target> =
            specs.iter().flat_map(|spec| plan_targets(&[spec.as_str()])).collect();
        let mut changed = paths;
        changed.sort();
        changed.dedup();
        for target in &targets {
            proptest::prop_assert_eq!(
                covered_paths(target, &changed),
                scanned(target, &changed),
                "{}",
                &target.spec
            );
        }
    }
}

#[test]
fn unsorted_input_is_sorted_first() {
    let targets = plan_targets(&["src/"]);
    let changed: Vec<String> = ["src/b.rs", "src/a.rs", "src/b.rs"]
        .map(str::to_owned)
        .to_vec();
    let report = evaluate(&targets, &changed, &[], &[]);
    assert_eq!(report.targets[0].paths, ["src/a.rs", "src/b.rs"]);
}

#[test]
fn no_targets_verifies_nothing() {
    let mut report = evaluate(
        &[],
        &diff(&["a.rs"]),
        &[],
        &[trailer("c0ffee", "a.rs", "x")],
    );
    assert_json_snapshot!(report, @r#"
        {
          "verified": false,
          "passed": true,
          "targets": [],
          "problems": [],
          "contradictions": []
        }
        "#);
    report.require_targets();
    assert!(!report.passed);

    // Evidence naming targets of a plan that has none is still invalid.
    let entries = evidence(
        r#"{"target_coverage": [{"target": "a.rs", "status": "changed", "paths": ["a.rs"]}]}"#,
    );
    let report = evaluate(&[], &diff(&["a.rs"]), &entries, &[]);
    assert!(!report.verified && !report.passed);
    assert_eq!(report.problems[0].kind, ProblemKind::UnknownTarget);
}
