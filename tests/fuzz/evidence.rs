//! Fuzzing the evidence parser: never a panic, every refusal names the file and (unless the
//! file is empty, where there is nothing to point at) a line and column in it, and every
//! accepted file written out again parses to the same entries and usage.

use git_baton::coverage::{self, Claim, Evidence};
use serde_json::{Value, json};

use super::{Lines, Verdict, fuzz_text, located};

const FILE: &str = "fuzz/evidence.json";

#[test]
fn fuzz_evidence_parser() {
    fuzz_text("evidence", "evidence", check);
}

fn check(text: &str) -> Result<Verdict, String> {
    match coverage::parse_evidence(FILE, text) {
        Ok(evidence) => round_trip(&evidence),
        Err(err) => {
            let rendered = err.to_string();
            if err.path != FILE || err.message.trim().is_empty() {
                return Err(format!("a refusal without its file or message: {err:?}"));
            }
            match err.position {
                Some((line, column)) => located(
                    text,
                    Lines::Lf,
                    FILE,
                    (line as u64, column as u64),
                    &rendered,
                ),
                None if text.trim_start_matches('\u{feff}').trim().is_empty() => {
                    Ok(Verdict::Refused)
                }
                None => Err(format!("a refusal without a line and column: {rendered}")),
            }
        }
    }
}

fn round_trip(evidence: &Evidence) -> Result<Verdict, String> {
    let entries: Vec<Value> = evidence
        .entries
        .iter()
        .map(|e| match &e.claim {
            Claim::Changed { paths } => {
                json!({"target": e.target, "status": "changed", "paths": paths})
            }
            Claim::Unchanged { reason } => {
                json!({"target": e.target, "status": "unchanged", "reason": reason})
            }
        })
        .collect();
    let mut file = json!({ "target_coverage": entries });
    if let Some(usage) = &evidence.usage {
        file["usage"] = serde_json::to_value(usage).map_err(|e| e.to_string())?;
    }
    let text = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())?;
    let again = coverage::parse_evidence(FILE, &text).map_err(|err| {
        format!("the accepted evidence, written out again, is refused: {err}\n{text}")
    })?;
    if again != *evidence {
        return Err(format!(
            "the accepted evidence reads back differently:\n{evidence:#?}\nwritten as\n{text}\nreads as\n{again:#?}"
        ));
    }
    Ok(Verdict::RoundTripped)
}
