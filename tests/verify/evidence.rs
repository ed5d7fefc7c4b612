//! Evidence files: shared by several plans, bad evidence, contradictions and shape errors.

use super::*;

/// Several named plans: each gets the evidence for its own targets.
#[test]
fn several_plans_share_one_evidence_file() {
    let repo = TestRepo::with()
        .plan("plans/one.md", "One", &["docs/a.md"])
        .plan("plans/two.md", "Two", &["docs/b.md", "docs/c.md"])
        .named(&["docs/a.md", "docs/b.md", "docs/c.md"])
        .on_feature();
    repo.write("docs/a.md", "a2\n");
    repo.write(
        "evidence.json",
        r#"{"target_coverage": [
  {"target": "docs/b.md", "status": "unchanged", "reason": "page b describes the old API, which stays"}
]}"#,
    );
    let args = "plans/one.md plans/two.md --base main --evidence evidence.json";
    assert_snapshot!(gate(&repo, args), @r"
        exit: 1
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/one.md (one): passed: 1 target covered
          changed    docs/a.md  docs/a.md

        plan plans/two.md (two): failed: 1 of 2 targets uncovered
          unchanged  docs/b.md  because: page b describes the old API, which stays (evidence.json: entry 0)
          uncovered  docs/c.md  no change and no reason (plans/two.md:5)

        gate failed: 1 of 2 plan(s) not covered
        <the covering hint>
        ");
}

/// Every kind of bad evidence fails the gate, each named with its entry.
#[test]
fn evidence_problems_fail_the_gate() {
    let docs = ["docs/a.md", "docs/b.md", "docs/c.md", "docs/d.md"];
    let repo = TestRepo::with()
        .plan("plans/p.md", "Docs", &docs)
        .named(&docs)
        .on_feature();
    repo.write("docs/a.md", "a2\n");
    repo.write(
        "evidence.json",
        r#"{"target_coverage": [
  {"target": "docs/b.md", "status": "unchanged", "reason": "n/a"},
  {"target": "docs/c.md", "status": "unchanged", "reason": "Done."},
  {"target": "docs/d.md", "status": "unchanged", "reason": "no impact"},
  {"target": "docs/e.md", "status": "unchanged", "reason": "a page this plan never declared"},
  {"target": "docs/b.md", "status": "unchanged", "reason": "the second word on b, however good it is"},
  {"target": "docs/a.md", "status": "changed", "paths": ["docs/a.md", "docs/z.md"]}
]}"#,
    );
    assert_snapshot!(gate(&repo, "plans/p.md --base main --evidence evidence.json"), @r#"
        exit: 1
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): failed: 3 of 4 targets uncovered, 6 evidence problem(s)
          changed    docs/a.md  docs/a.md
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)
          uncovered  docs/c.md  no change and no reason (plans/p.md:6)
          uncovered  docs/d.md  no change and no reason (plans/p.md:7)
          problem    evidence.json: entry 0: reason "n/a" for target "docs/b.md" is a placeholder: give a specific reason why it needed no change
          problem    evidence.json: entry 1: reason "Done." for target "docs/c.md" is a placeholder: give a specific reason why it needed no change
          problem    evidence.json: entry 2: reason "no impact" for target "docs/d.md" is too short: give a specific reason (at least 3 words)
          problem    evidence.json: entry 3: target "docs/e.md" is not declared by the plan; did you mean "docs/a.md"?
          problem    evidence.json: entry 4: second entry for target "docs/b.md" (the first is evidence.json: entry 0); give one entry per target
          problem    evidence.json: entry 5: claims "docs/z.md" changed for target "docs/a.md", but the diff does not change it

        gate failed: 1 of 1 plan(s) not covered
        <the covering hint>
        "#);
}

/// An `unchanged` entry for a target the diff changed: the diff wins, the gate passes, and the
/// contradiction is on the record.
#[test]
fn contradicting_evidence_is_noted_but_passes() {
    let repo = TestRepo::with().one_doc().on_feature();
    repo.write("docs/a.md", "a2\n");
    repo.write(
        "evidence.json",
        r#"{"target_coverage": [{"target": "docs/a.md", "status": "unchanged", "reason": "the agent believed it needed no edit"}]}"#,
    );
    let args = "plans/p.md --base main --evidence evidence.json";
    assert_snapshot!(gate(&repo, args), @r"
        exit: 0
        --- stdout
        verifying the worktree against main (merge base <main>)

        plan plans/p.md (p): passed: 1 target covered
          changed    docs/a.md  docs/a.md
          note       evidence.json: entry 0 says `docs/a.md` is unchanged, but the diff changed docs/a.md; the diff wins

        gate passed
        ");
    let json = verify(&repo, &format!("{args} --json")).json();
    assert_eq!(json["passed"], true);
    assert_eq!(
        json["plans"][0]["coverage"]["contradictions"],
        json!([{
            "target": "docs/a.md",
            "source": {"kind": "file", "path": "evidence.json", "index": 0},
            "reason": "the agent believed it needed no edit",
            "paths": ["docs/a.md"],
        }])
    );
}

/// An evidence file that is not shaped like one is bad input (exit 2), located in the file.
#[test]
fn evidence_shape_errors_are_located() {
    let repo = TestRepo::with().one_doc().on_feature();
    let files = [
        "{\"target_coverage\": [\n  {\"target\": \"docs/a.md\", \"status\": \"unchanged\",}\n]}\n",
        "{\"target_coverage\": [],\n \"notes\": \"hi\"}\n",
        "{\"target_coverage\": [\n  {\"target\": \"docs/a.md\", \"status\": \"skipped\", \"reason\": \"the page is fine as it is\"}\n]}\n",
        // An entry that breaks a rule of its own is located at its closing brace, as serde's
        // "missing field" is, whether or not another entry follows it on the next line.
        "{\"target_coverage\": [\n  {\"status\": \"unchanged\", \"reason\": \"a reason for nothing\"}\n]}\n",
        "{\"target_coverage\": [\n  {\"target\": \"docs/a.md\", \"status\": \"unchanged\"}\n]}\n",
        "{\"target_coverage\": [\n  {\"target\": \"docs/a.md\", \"status\": \"unchanged\"},\n  {\"target\": \"docs/b.md\", \"status\": \"changed\", \"paths\": [\"docs/b.md\"]}\n]}\n",
    ];
    let mut runs = String::new();
    for text in files {
        repo.write("evidence.json", text);
        let run = verify(&repo, "plans/p.md --base main --evidence evidence.json");
        runs.push_str(&run.to_string());
    }
    let run = verify(&repo, "plans/p.md --base main --evidence missing.json");
    runs.push_str(&run.to_string());
    assert_snapshot!(runs, @r#"
        exit: 2
        --- stderr
        error: evidence.json:2:49: entry 0: trailing comma
        hint: see docs/plan-format.md#evidence for the evidence format
        exit: 2
        --- stderr
        error: evidence.json:2:8: unknown field `notes`, expected `target_coverage` or `usage`
        hint: see docs/plan-format.md#evidence for the evidence format
        exit: 2
        --- stderr
        error: evidence.json:2:45: entry 0: unknown variant `skipped`, expected `changed` or `unchanged`
        hint: see docs/plan-format.md#evidence for the evidence format
        exit: 2
        --- stderr
        error: evidence.json:2:59: entry 0: missing field `target`
        hint: see docs/plan-format.md#evidence for the evidence format
        exit: 2
        --- stderr
        error: evidence.json:2:48: entry 0: target "docs/a.md": status "unchanged" requires "reason": why the target needed no change
        hint: see docs/plan-format.md#evidence for the evidence format
        exit: 2
        --- stderr
        error: evidence.json:2:48: entry 0: target "docs/a.md": status "unchanged" requires "reason": why the target needed no change
        hint: see docs/plan-format.md#evidence for the evidence format
        exit: 2
        --- stderr
        error: cannot read evidence missing.json: no such file
        "#);
}
