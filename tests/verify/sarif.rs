//! `verify --format sarif`: a SARIF 2.1.0 log that the official schema (vendored in testdata/,
//! from the OASIS sarif-spec repository, `sarif-2.1/schema/sarif-schema-2.1.0.json`) accepts, with
//! a result at the plan line of every failing target and a suppression for every reason.

use super::*;

fn sarif_schema() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/sarif-schema-2.1.0.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles")
}

fn assert_valid(log: &serde_json::Value) {
    let schema = sarif_schema();
    let errors: Vec<String> = schema
        .iter_errors(log)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}\n{log:#}", errors.join("\n"));
}

/// `(ruleId, level, uri, line, suppression kind and justification)` of every result.
fn results(log: &serde_json::Value) -> Vec<String> {
    log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let at = &r["locations"][0]["physicalLocation"];
            let suppressed = r["suppressions"]
                .as_array()
                .map(|s| {
                    format!(
                        " suppressed {} {:?}",
                        s[0]["kind"].as_str().unwrap(),
                        s[0]["justification"].as_str().unwrap()
                    )
                })
                .unwrap_or_default();
            format!(
                "{} {} {}:{}{suppressed}",
                r["ruleId"].as_str().unwrap(),
                r["level"].as_str().unwrap(),
                at["artifactLocation"]["uri"].as_str().unwrap(),
                at["region"]["startLine"]
            )
        })
        .collect()
}

/// Every kind of result at once — uncovered, missing, touched, a reason from an evidence file
/// and one from a trailer, an evidence problem — in a plan whose path needs percent-encoding.
#[test]
fn every_kind_of_result_validates_against_the_sarif_schema() {
    let plan_path = "plans/a b#1.md";
    let targets = [
        "docs/uncovered.md",
        "docs/nowhere.md",
        "docs/touched.md",
        "docs/changed.md",
        "docs/explained.md",
        "docs/trailer.md",
    ];
    let repo = TestRepo::with()
        .file(
            plan_path,
            &format!(
                "---\nid: everything\n{}",
                &plan("Everything", &targets)[4..]
            ),
        )
        .named(&[
            "docs/uncovered.md",
            "docs/touched.md",
            "docs/changed.md",
            "docs/explained.md",
            "docs/trailer.md",
        ])
        .on_feature();
    repo.write("docs/touched.md", "  touched\r\n\r\n");
    repo.write("docs/changed.md", "really changed\n");
    repo.git(["add", "-A"]);
    repo.git([
        "commit",
        "-q",
        "-m",
        "work\n\nBaton-Unchanged: docs/trailer.md: the trailer page documents no changed flag",
    ]);
    repo.write(
        "evidence.json",
        r#"{"target_coverage": [
            {"target": "docs/explained.md", "status": "unchanged", "reason": "the page already names the new limit"},
            {"target": "docs/ghost.md", "status": "unchanged", "reason": "the page is generated at build time"}
        ]}"#,
    );
    let run = repo.baton([
        "verify",
        plan_path,
        "--base",
        "main",
        "--head",
        "HEAD",
        "--evidence",
        "evidence.json",
        "--format",
        "sarif",
    ]);
    assert_eq!(run.code, 1, "{run}");
    let log: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_valid(&log);
    // The schema is strict enough to refuse a log that is not SARIF.
    let mut broken = log.clone();
    broken["runs"][0]["results"][0]["level"] = json!("fatal");
    broken["runs"][0]["results"][1]["suppressions"] = json!([{"kind": "pragma"}]);
    assert_eq!(sarif_schema().iter_errors(&broken).count(), 2);
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(log["runs"][0]["tool"]["driver"]["name"], "git-baton");
    assert_eq!(
        log["runs"][0]["invocations"][0]["properties"]["passed"],
        false
    );
    assert_eq!(
        results(&log),
        [
            "baton/uncovered error plans/a%20b%231.md:5",
            "baton/missing error plans/a%20b%231.md:6",
            "baton/touched error plans/a%20b%231.md:7",
            "baton/unchanged note plans/a%20b%231.md:9 suppressed external \"the page already names the new limit\"",
            "baton/unchanged note plans/a%20b%231.md:10 suppressed inSource \"the trailer page documents no changed flag\"",
            "baton/invalid-evidence error plans/a%20b%231.md:1",
        ]
    );
    // Each result's ruleIndex points at its rule.
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    for r in log["runs"][0]["results"].as_array().unwrap() {
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], r["ruleId"]);
    }
}

/// Plan changes and a plan without targets are results too; a passing gate is a valid log.
#[test]
fn passing_gates_plan_changes_and_unverified_plans_validate() {
    let repo = TestRepo::with()
        .plan("plans/x.md", "X", &["docs/a.md", "docs/b.md"])
        .named(&["docs/a.md", "docs/b.md"])
        .file("plans/empty.md", "---\ntitle: nothing\n---\n")
        .on_feature();
    repo.write("docs/a.md", "new\n");
    repo.write("plans/x.md", &plan("X", &["docs/a.md"]));
    repo.git(["add", "-A"]);
    repo.git(["commit", "-q", "-m", "drop a target"]);

    let run = verify(&repo, "--base main --head HEAD --format sarif");
    let log: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_valid(&log);
    assert_eq!(
        results(&log),
        [
            "baton/plan-change error plans/x.md:5",
            "baton/uncovered error plans/x.md:5"
        ],
        "{run}"
    );

    let run = verify(
        &repo,
        "plans/x.md plans/empty.md --base main --head HEAD --allow-plan-changes --format sarif",
    );
    assert_eq!(run.code, 0, "{run}");
    let log: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_valid(&log);
    assert_eq!(
        results(&log),
        [
            "baton/plan-change warning plans/x.md:5",
            "baton/unverified warning plans/empty.md:1"
        ],
        "{run}"
    );
}
