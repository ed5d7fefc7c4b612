//! Fuzzing the plan parser: never a panic, every refusal at a line and column of the plan, and
//! every accepted plan written out again (as plain YAML) parses to the same plan.

use git_baton::plan::{self, Plan};

use super::{Lines, Verdict, fuzz_text, located, yaml_quoted};

const FILE: &str = "plans/fuzz-plan.md";

#[test]
fn fuzz_plan_parser() {
    fuzz_text("plan", "plan", check);
}

fn check(text: &str) -> Result<Verdict, String> {
    match plan::parse(FILE, text) {
        Ok(plan) => round_trip(&plan),
        Err(err) => {
            if err.file != FILE || err.message.trim().is_empty() {
                return Err(format!("a refusal without its file or message: {err:?}"));
            }
            let at = (err.line as u64, err.column as u64);
            located(text, Lines::Yaml, FILE, at, &err.to_string())
        }
    }
}

/// The plan as the simplest frontmatter that says the same, parsed again.
fn round_trip(plan: &Plan) -> Result<Verdict, String> {
    let mut text = format!("---\nid: {}\n", yaml_quoted(&plan.id));
    if let Some(title) = &plan.title {
        text.push_str(&format!("title: {}\n", yaml_quoted(title)));
    }
    if plan.targets.is_empty() {
        text.push_str("targets: []\n");
    } else {
        text.push_str("targets:\n");
    }
    for target in &plan.targets {
        text.push_str(&format!("  - {}\n", yaml_quoted(&target.spec)));
    }
    if let Some(stages) = &plan.stages {
        let list: Vec<String> = stages.iter().map(|s| yaml_quoted(s)).collect();
        text.push_str(&format!("stages: [{}]\n", list.join(", ")));
    }
    text.push_str("---\n");
    text.push_str(&plan.body);
    let again = plan::parse(FILE, &text).map_err(|err| {
        format!("the accepted plan, written out again, is refused: {err}\n{text}")
    })?;
    let specs = |p: &Plan| -> Vec<(String, plan::TargetKind)> {
        p.targets
            .iter()
            .map(|t| (t.spec.clone(), t.kind.clone()))
            .collect()
    };
    if again.id != plan.id
        || again.title != plan.title
        || specs(&again) != specs(plan)
        || again.stages != plan.stages
        || again.body != plan.body
    {
        return Err(format!(
            "the accepted plan reads back differently:\n{plan:#?}\nwritten as\n{text}\nreads as\n{again:#?}"
        ));
    }
    Ok(Verdict::RoundTripped)
}
