use std::fmt::Write as _;

use super::*;

mod frontmatter;
mod fuzz;
mod targets;
mod trivial;

const FILE: &str = "plans/demo.md";

fn render(e: &PlanError) -> String {
    match &e.hint {
        Some(h) => format!("{e}\nhint: {h}"),
        None => e.to_string(),
    }
}

fn err(text: &str) -> String {
    err_in(FILE, text)
}

fn err_in(file: &str, text: &str) -> String {
    match parse(file, text) {
        Ok(plan) => panic!("expected an error for {text:?}, got {plan:#?}"),
        Err(e) => render(&e),
    }
}

/// Each case as `input` then its rendered error, so a snapshot reads as a table.
fn errs(cases: &[&str]) -> String {
    cases
        .iter()
        .map(|text| format!("{text:?}\n{}\n", err(text)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Errors for single `targets` entries, each written as raw YAML on line 4 of the plan.
fn target_errs(entries: &[&str]) -> String {
    entries
        .iter()
        .map(|entry| {
            let text = format!("---\ntargets:\n  - docs/ok.md\n  - {entry}\n---\n");
            format!("- {entry}\n{}\n", err(&text))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn summary(plan: &Plan) -> String {
    let mut out = format!(
        "id: {}\ntitle: {:?}\nstages: {:?}\nbody: {:?}\n",
        plan.id, plan.title, plan.stages, plan.body
    );
    for t in &plan.targets {
        writeln!(out, "{}:{} {:?} {}", t.line, t.column, t.kind, t.spec).unwrap();
    }
    out
}

fn ok(text: &str) -> Plan {
    parse(FILE, text).unwrap_or_else(|e| panic!("{}", render(&e)))
}
