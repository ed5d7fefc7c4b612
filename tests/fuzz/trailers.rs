//! Fuzzing the trailer parser. It refuses nothing (a line that is not a trailer is not one), so
//! the properties are: never a panic; every entry has a non-empty target and a reason, trimmed and
//! on one line; the entries written out again as a trailer block read back the same; and every
//! target a plan may declare survives the trailer `finish` writes for it.

use git_baton::coverage::{self, Claim, EvidenceEntry, TRAILER_KEY};
use git_baton::plan;

use super::{Verdict, fuzz_text};

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

#[test]
fn fuzz_trailer_parser() {
    fuzz_text("trailers", "trailers", check);
}

fn reason(entry: &EvidenceEntry) -> Result<&str, String> {
    match &entry.claim {
        Claim::Unchanged { reason } => Ok(reason),
        Claim::Changed { .. } => Err(format!("a trailer made a `changed` claim: {entry:?}")),
    }
}

fn check(message: &str) -> Result<Verdict, String> {
    let entries = coverage::parse_trailers(COMMIT, message);
    for entry in &entries {
        let reason = reason(entry)?;
        let one_line = |s: &str| s.trim() == s && !s.contains('\n');
        if entry.target.is_empty() || !one_line(&entry.target) || !one_line(reason) {
            return Err(format!("a malformed entry: {entry:?}"));
        }
    }
    let mut block = String::from("Subject\n\n");
    for entry in &entries {
        block.push_str(&format!(
            "{TRAILER_KEY}: {}: {}\n",
            entry.target,
            reason(entry)?
        ));
    }
    let again = coverage::parse_trailers(COMMIT, &block);
    if again != entries {
        return Err(format!(
            "the trailers read back differently:\n{entries:#?}\nwritten as\n{block}\nread as\n{again:#?}"
        ));
    }
    Ok(if entries.is_empty() {
        Verdict::Accepted
    } else {
        Verdict::RoundTripped
    })
}

/// `finish` records each unchanged target's reason as `Baton-Unchanged: <target>: <reason>` (see
/// docs/plan-format.md), and `verify` in CI reads it back: a target the plan parser accepts must
/// come back whole, or its reason is lost (or given to another target).
#[test]
fn fuzz_plan_targets_survive_trailers() {
    fuzz_text("plan targets in trailers", "plan", |text| {
        let Ok(plan) = plan::parse("plans/fuzz.md", text) else {
            return Ok(Verdict::Refused);
        };
        for target in &plan.targets {
            target_survives(&target.spec)?;
        }
        Ok(Verdict::RoundTripped)
    });
}

fn target_survives(target: &str) -> Result<(), String> {
    let reason = "the section already states the rule";
    let message = format!("Finish\n\n{TRAILER_KEY}: {target}: {reason}\n");
    let entries = coverage::parse_trailers(COMMIT, &message);
    match entries.as_slice() {
        [entry] if entry.target == target && reason_is(entry, reason) => Ok(()),
        _ => Err(format!(
            "target `{target}` does not survive its trailer:\n{message}\nreads as {entries:#?}"
        )),
    }
}

fn reason_is(entry: &EvidenceEntry, want: &str) -> bool {
    matches!(&entry.claim, Claim::Unchanged { reason } if reason == want)
}
