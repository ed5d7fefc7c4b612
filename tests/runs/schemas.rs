//! The JSON Schemas of docs/schemas/ hold what git-baton really writes and reads: a real run's
//! `state.json`, `run`/`status`/`list --json`, the evidence its agent wrote, `verify --json`,
//! the configuration and plan it ran, and every configuration and plan of testdata/ that the
//! parsers accept. The schemas are the committed files, as editors and scripts get them; that
//! they match the Rust types is the unit test `cli::generated`.

use super::*;

pub(super) fn schema(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/schemas")
        .join(name);
    let schema: Value = serde_json::from_str(&text(&path)).unwrap();
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{name} is no schema: {e}"))
}

/// Why `schema` refuses `instance`, one line per error (empty when it accepts it).
fn errors(schema: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    schema
        .iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

pub(super) fn assert_valid(schema: &jsonschema::Validator, instance: &Value, what: &str) {
    let errors = errors(schema, instance);
    assert!(
        errors.is_empty(),
        "{what}:\n{}\n{instance:#}",
        errors.join("\n")
    );
}

/// YAML text as the JSON value an editor's YAML language server validates.
pub(super) fn yaml(text: &str) -> Value {
    serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("not YAML: {e}\n{text}"))
}

/// A plan's frontmatter as JSON, fenced as the parser reads it (`---` lines, trailing blanks
/// allowed); no frontmatter, or an empty one, is an empty mapping.
pub(super) fn frontmatter(plan: &str) -> Value {
    let mut lines = plan
        .trim_start_matches('\u{feff}')
        .lines()
        .map(str::trim_end);
    if lines.next() != Some("---") {
        return Value::Object(Default::default());
    }
    let inside: Vec<&str> = lines.take_while(|l| *l != "---").collect();
    match yaml(&inside.join("\n")) {
        Value::Null => Value::Object(Default::default()),
        value => value,
    }
}

/// One run that reaches review and one blocked by the gate (uncovered targets, an evidence
/// problem, an error), checked in every form git-baton prints or stores them.
#[test]
fn real_runs_match_their_schemas() {
    let lazy = Actor::agent("lazy")
        .edit("docs/a.md", "rule: grade A")
        .evidence(r#"{"target_coverage": [{"target": "docs/b.md", "status": "unchanged", "reason": "TODO"}]}"#);
    let repo = standard_repo(&[lazy]);
    let base = base(&repo);
    let (state_schema, status_schema) = (schema("state.schema.json"), schema("status.schema.json"));

    let passed = repo.baton(["run", "plans/fix.md", "--json"]);
    assert_eq!(passed.code, 0, "{passed}");
    assert_valid(&status_schema, &passed.json(), "run --json");
    let blocked = repo.baton(["run", "plans/fix.md", "--actor", "executor=lazy"]);
    assert_eq!(blocked.code, 1, "{blocked}");

    let mut evidence_files = 0;
    for id in [
        passed.json()["run_id"].as_str().unwrap().to_string(),
        blocked.run_id(),
    ] {
        let dir = run_dir(&repo, &id);
        let stored: Value = serde_json::from_str(&text(&dir.join("state.json"))).unwrap();
        assert_valid(&state_schema, &stored, &format!("{id}/state.json"));
        let state = status(&repo, &id);
        assert_valid(&status_schema, &state, &format!("status --json {id}"));
        for stage in state["stages"].as_array().unwrap() {
            for attempt in stage["attempts"].as_array().unwrap() {
                let path = dir
                    .join(attempt["dir"].as_str().unwrap())
                    .join("evidence.json");
                if let Ok(evidence) = std::fs::read_to_string(&path) {
                    let evidence: Value = serde_json::from_str(&evidence).unwrap();
                    assert_valid(&schema("evidence.schema.json"), &evidence, "evidence.json");
                    evidence_files += 1;
                }
            }
        }
    }
    assert_eq!(evidence_files, 2, "both executors wrote evidence");
    let blocked_state = status(&repo, &blocked.run_id());
    assert_eq!(blocked_state["status"], "blocked");
    assert!(blocked_state["error"].is_object(), "{blocked_state:#}");

    let list = repo.baton(["list", "--json"]);
    for (n, run) in list.json().as_array().unwrap().iter().enumerate() {
        assert_valid(&status_schema, run, &format!("list --json [{n}]"));
    }

    let verify = schema("verify.schema.json");
    let gate = [
        "verify",
        "plans/fix.md",
        "--base",
        &base,
        "--format",
        "json",
    ];
    let failed = repo.baton(gate);
    assert_eq!(failed.code, 1, "{failed}");
    assert_eq!(failed.json()["schema_version"], 1);
    assert_valid(&verify, &failed.json(), "verify --json (failed)");
    let worktree = worktree_of(&repo, &status(&repo, &blocked.run_id()));
    let attempt = &stage(&blocked_state, "executor")["attempts"][0];
    let evidence = run_dir(&repo, &blocked.run_id())
        .join(attempt["dir"].as_str().unwrap())
        .join("evidence.json");
    let problems = repo.baton_in(
        &worktree,
        gate.into_iter()
            .chain(["--evidence", evidence.to_str().unwrap()]),
    );
    assert_eq!(problems.code, 1, "{problems}");
    assert_valid(
        &verify,
        &problems.json(),
        "verify --json (evidence problems)",
    );

    assert_valid(
        &schema("baton.schema.json"),
        &yaml(&text(&repo.path(".baton.yml"))),
        ".baton.yml",
    );
    assert_valid(
        &schema("plan.schema.json"),
        &frontmatter(PLAN),
        "plans/fix.md",
    );
}

/// Every configuration and plan of testdata/ that git-baton accepts, its schema accepts; and the
/// ones refused for an unknown key or a value of the wrong type, it refuses too, so the schemas
/// are not so loose that they accept anything.
#[test]
fn testdata_matches_the_schemas() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/fuzz");
    let (config_schema, plan_schema) = (schema("baton.schema.json"), schema("plan.schema.json"));
    let mut accepted = 0;
    for entry in std::fs::read_dir(root.join("config")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let content = text(&path);
        let instance = match serde_saphyr::from_str::<Value>(&content) {
            Ok(Value::Null) => Value::Object(Default::default()),
            Ok(value) => value,
            Err(_) => continue,
        };
        if git_baton::config::parse(".baton.yml", &content).is_ok() {
            assert_valid(&config_schema, &instance, &name);
            accepted += 1;
        } else if name.starts_with("bad-unknown") || name.starts_with("bad-types") {
            assert!(
                !errors(&config_schema, &instance).is_empty(),
                "{name} passes the schema"
            );
        }
    }
    for entry in std::fs::read_dir(root.join("plan")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let content = text(&path);
        if git_baton::plan::parse(&name, &content).is_ok() {
            assert_valid(&plan_schema, &frontmatter(&content), &name);
            accepted += 1;
        } else if name.starts_with("bad-unknown") || name.starts_with("bad-types") {
            let instance = frontmatter(&content);
            assert!(
                !errors(&plan_schema, &instance).is_empty(),
                "{name} passes the schema"
            );
        }
    }
    assert!(
        accepted >= 10,
        "only {accepted} testdata files were accepted"
    );
}
