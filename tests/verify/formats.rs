//! Output formats: GitHub annotations and step summary, Markdown and JSON.

use super::*;

/// GitHub shows 10 error annotations per step: the rest are counted in a notice, and the full
/// table goes to the job summary, appended after what earlier steps wrote.
#[test]
fn github_format_annotations_and_step_summary() {
    let targets: Vec<String> = (1..=12).map(|i| format!("docs/page-{i:02}.md")).collect();
    let mut targets: Vec<&str> = targets.iter().map(String::as_str).collect();
    targets[1] = "docs/a,b:c.md";
    // The pages exist, untouched: uncovered, not missing.
    let repo = TestRepo::with()
        .plan("plans/x.md", "Many pages", &targets)
        .named(&targets)
        .on_feature();
    let summary = repo.tmp().join("summary.md");
    std::fs::write(&summary, "# Earlier step\n\n").unwrap();

    let run = repo.baton_env(
        &repo.root,
        "verify plans/x.md --base main --format github".split(' '),
        &[("GITHUB_STEP_SUMMARY", summary.as_os_str())],
    );
    assert_snapshot!(named(tokenless(run, &repo), &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 1
        --- stdout
        ::error file=plans/x.md,line=4,title=uncovered target docs/page-01.md::`docs/page-01.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=5,title=uncovered target docs/a%2Cb%3Ac.md::`docs/a,b:c.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=6,title=uncovered target docs/page-03.md::`docs/page-03.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=7,title=uncovered target docs/page-04.md::`docs/page-04.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=8,title=uncovered target docs/page-05.md::`docs/page-05.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=9,title=uncovered target docs/page-06.md::`docs/page-06.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=10,title=uncovered target docs/page-07.md::`docs/page-07.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=11,title=uncovered target docs/page-08.md::`docs/page-08.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=12,title=uncovered target docs/page-09.md::`docs/page-09.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::error file=plans/x.md,line=13,title=uncovered target docs/page-10.md::`docs/page-10.md` has no changed path in the worktree against main and no recorded reason why it needed no change
        ::notice::2 more annotation(s) left out (GitHub shows 10 of each kind per step); see the job summary
        ::stop-commands::<token>
        verifying the worktree against main (merge base <main>)

        plan plans/x.md (x): failed: 12 of 12 targets uncovered
          uncovered  docs/page-01.md  no change and no reason (plans/x.md:4)
          uncovered  docs/a,b:c.md    no change and no reason (plans/x.md:5)
          uncovered  docs/page-03.md  no change and no reason (plans/x.md:6)
          uncovered  docs/page-04.md  no change and no reason (plans/x.md:7)
          uncovered  docs/page-05.md  no change and no reason (plans/x.md:8)
          uncovered  docs/page-06.md  no change and no reason (plans/x.md:9)
          uncovered  docs/page-07.md  no change and no reason (plans/x.md:10)
          uncovered  docs/page-08.md  no change and no reason (plans/x.md:11)
          uncovered  docs/page-09.md  no change and no reason (plans/x.md:12)
          uncovered  docs/page-10.md  no change and no reason (plans/x.md:13)
          uncovered  docs/page-11.md  no change and no reason (plans/x.md:14)
          uncovered  docs/page-12.md  no change and no reason (plans/x.md:15)

        gate failed: 1 of 1 plan(s) not covered
        <the covering hint>
        ::<token>::
        ");

    let head = repo.git(["rev-parse", "--short=12", "main"]);
    let written = std::fs::read_to_string(&summary)
        .unwrap()
        .replace(head.trim(), "<main>");
    assert_snapshot!(written, @r"
        # Earlier step

        ## git-baton coverage: failed

        Checked the worktree against main (merge base `<main>`).

        ### `plans/x.md` (x): failed: 12 of 12 targets uncovered

        | target | status | paths or reason |
        |---|---|---|
        | `docs/page-01.md` | uncovered | **no change and no reason** |
        | `docs/a,b:c.md` | uncovered | **no change and no reason** |
        | `docs/page-03.md` | uncovered | **no change and no reason** |
        | `docs/page-04.md` | uncovered | **no change and no reason** |
        | `docs/page-05.md` | uncovered | **no change and no reason** |
        | `docs/page-06.md` | uncovered | **no change and no reason** |
        | `docs/page-07.md` | uncovered | **no change and no reason** |
        | `docs/page-08.md` | uncovered | **no change and no reason** |
        | `docs/page-09.md` | uncovered | **no change and no reason** |
        | `docs/page-10.md` | uncovered | **no change and no reason** |
        | `docs/page-11.md` | uncovered | **no change and no reason** |
        | `docs/page-12.md` | uncovered | **no change and no reason** |
        ");
}

/// A $GITHUB_STEP_SUMMARY that cannot be appended to is an error of the environment (exit 2).
#[test]
fn github_format_with_an_unwritable_step_summary() {
    let repo = TestRepo::with()
        .plan("plans/x.md", "One", &["docs/a.md"])
        .named(&["docs/a.md"])
        .on_feature();
    repo.write("docs/a.md", "a2\n");
    let dir = repo.tmp().join("no/such/dir/summary.md");
    let run = repo.baton_env(
        &repo.root,
        "verify plans/x.md --base main --format github".split(' '),
        &[("GITHUB_STEP_SUMMARY", dir.as_os_str())],
    );
    assert_snapshot!(named(tokenless(run, &repo), &repo, &[("main", "<main>")]).to_string(), @r"
        exit: 2
        --- stdout
        ::stop-commands::<token>
        verifying the worktree against main (merge base <main>)

        plan plans/x.md (x): passed: 1 target covered
          changed    docs/a.md  docs/a.md

        gate passed
        ::<token>::
        --- stderr
        error: cannot append to $GITHUB_STEP_SUMMARY ($TMP/no/such/dir/summary.md): no such file
        ");
}

/// One plan with a changed, an unchanged and an uncovered target, in Markdown and JSON.
#[test]
fn markdown_and_json_formats() {
    let docs = ["docs/a.md", "docs/b.md", "docs/c.md"];
    let repo = TestRepo::with()
        .plan("plans/p.md", "Docs | pipes", &docs)
        .named(&docs)
        .on_feature();
    repo.write("docs/a.md", "a2\n");
    repo.write(
        "evidence.json",
        r#"{"target_coverage": [{"target": "docs/b.md", "status": "unchanged", "reason": "page b | the table cell must escape this pipe"}]}"#,
    );
    let args = "plans/p.md --base main --evidence evidence.json";

    assert_snapshot!(gate(&repo, &format!("{args} --format markdown")), @r"
        exit: 1
        --- stdout
        ## git-baton coverage: failed

        Checked the worktree against main (merge base `<main>`).

        ### `plans/p.md` (p): failed: 1 of 3 targets uncovered

        | target | status | paths or reason |
        |---|---|---|
        | `docs/a.md` | changed | `docs/a.md` |
        | `docs/b.md` | unchanged | page b \| the table cell must escape this pipe |
        | `docs/c.md` | uncovered | **no change and no reason** |
        ");

    let run = verify(&repo, &format!("{args} --json"));
    let json = run.json();
    assert_eq!(json["passed"], false);
    assert_eq!(json["base"], "main");
    assert_eq!(json["head"], serde_json::Value::Null);
    assert_eq!(json["plans"][0]["path"], "plans/p.md");
    assert_eq!(json["plans"][0]["id"], "p");
    assert_eq!(json["plans"][0]["title"], "Docs | pipes");
    let coverage = &json["plans"][0]["coverage"];
    assert_eq!(coverage["verified"], true);
    assert_eq!(coverage["passed"], false);
    let rows: Vec<serde_json::Value> = coverage["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| json!([t["target"], t["status"], t["paths"], t["reason"], t["line"]]))
        .collect();
    assert_eq!(
        rows,
        [
            json!(["docs/a.md", "changed", ["docs/a.md"], null, 4]),
            json!([
                "docs/b.md",
                "unchanged",
                [],
                "page b | the table cell must escape this pipe",
                5
            ]),
            json!(["docs/c.md", "uncovered", [], null, 6]),
        ]
    );
    assert_snapshot!(named(run, &repo, &[("main", "<main>")]).to_string(), @r#"
        exit: 1
        --- stdout
        {
          "schema_version": 1,
          "passed": false,
          "base": "main",
          "merge_base": "<main>",
          "head": null,
          "head_commit": null,
          "require_targets": false,
          "plans": [
            {
              "path": "plans/p.md",
              "id": "p",
              "title": "Docs | pipes",
              "coverage": {
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
                    "line": 4
                  },
                  {
                    "target": "docs/b.md",
                    "status": "unchanged",
                    "paths": [],
                    "reason": "page b | the table cell must escape this pipe",
                    "reason_source": {
                      "kind": "file",
                      "path": "evidence.json",
                      "index": 0
                    },
                    "line": 5
                  },
                  {
                    "target": "docs/c.md",
                    "status": "uncovered",
                    "paths": [],
                    "reason": null,
                    "reason_source": null,
                    "line": 6
                  }
                ],
                "problems": [],
                "contradictions": []
              }
            }
          ],
          "plans_dir": null
        }
        "#);

    // --json is --format json, and the two do not combine.
    let run = verify(&repo, &format!("{args} --json --format text"));
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: the argument '--json' cannot be used with '--format <FORMAT>'

        Usage: git baton verify --base <REV> --evidence <FILE> --json <PLAN>...

        For more information, try '--help'.
        ");
}

/// A target that names nothing is annotated on its line with the path it most likely meant,
/// and an evidence problem on the plan's first line (tests/verify/trivial.rs has the touched
/// target's annotation).
#[test]
fn github_format_annotates_missing_targets_and_problems() {
    let repo = TestRepo::with()
        .plan("plans/p.md", "Docs", &["docs/a.md", "docs/c.mb"])
        .named(&["docs/a.md", "docs/c.md"])
        .on_feature();
    repo.write("docs/a.md", "a2\n");
    repo.write(
        "evidence.json",
        r#"{"target_coverage": [{"target": "docs/x.md", "status": "unchanged", "reason": "the page x was never part of this work"}]}"#,
    );
    let run = repo
        .baton("verify plans/p.md --base main --evidence evidence.json --format github".split(' '));
    let annotations: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("::error"))
        .collect();
    assert_snapshot!(annotations.join("\n"), @r#"
        ::error file=plans/p.md,line=5,title=missing target docs/c.mb::`docs/c.mb` names no path at the merge base, the head or in the worktree; did you mean `docs/c.md`?
        ::error file=plans/p.md,line=1,title=invalid evidence::evidence.json: entry 0: target "docs/x.md" is not declared by the plan; did you mean "docs/a.md"?
        "#);
}
