//! Regression tests for what the fuzz targets found, each named after its finding.

use git_baton::coverage::{self, Claim, TRAILER_KEY};
use git_baton::plan;

/// Found by `fuzz_evidence_parser`: serde_json counts columns in bytes, so an error after a
/// non-ASCII character pointed past it (and past the end of the line), while plan and
/// configuration errors count characters.
#[test]
fn evidence_error_column_counts_characters_not_bytes() {
    let err =
        coverage::parse_evidence("e.json", "{\"target_coverage\": [], \"é😀\": 1}").unwrap_err();
    // The closing quote of the key: character 28, byte 32.
    assert_eq!(err.position, Some((1, 28)), "{err}");
    let err = coverage::parse_evidence("e.json", "{\n \"日本\"").unwrap_err();
    assert_eq!(
        err.to_string(),
        "e.json:2:5: unknown field `日本`, expected `target_coverage` or `usage`"
    );
    // ASCII positions are as before, a line start is column 1.
    let err = coverage::parse_evidence("e.json", "{\"usage\": {}}\n}").unwrap_err();
    assert_eq!(err.position, Some((2, 1)), "{err}");
}

/// Found by `fuzz_plan_targets_survive_trailers`: a target containing `: ` was accepted, but the
/// `Baton-Unchanged: <target>: <reason>` trailer `finish` writes for it ends the target at the
/// first `: `, so its reason was read back for another target and CI found it uncovered.
#[test]
fn plan_target_containing_colon_space_is_refused_as_no_trailer_can_name_it() {
    let err = plan::parse(
        "plans/p.md",
        "---\ntargets:\n  - docs/a.md\n  - \"notes/a: b.md\"\n---\n",
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "plans/p.md:4:5: target `notes/a: b.md` contains `: `, which no `Baton-Unchanged` trailer can name"
    );
    assert_eq!(
        err.hint.as_deref(),
        Some("match the space with a glob: `notes/a:[ ]b.md`")
    );
    // The glob of the hint matches the path and survives its trailer.
    let plan = plan::parse("plans/p.md", "---\ntargets: [\"notes/a:[ ]b.md\"]\n---\n").unwrap();
    let target = &plan.targets[0];
    assert!(target.matches("notes/a: b.md"));
    let message = format!("Finish\n\n{TRAILER_KEY}: {}: still right\n", target.spec);
    let entries = coverage::parse_trailers("c0ffee", &message);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].target, target.spec);
    assert_eq!(
        entries[0].claim,
        Claim::Unchanged {
            reason: "still right".into()
        }
    );
    // A colon without a space is still an ordinary character of a path.
    assert!(plan::parse("plans/p.md", "---\ntargets: [\"a:b.md\", \"c:/\"]\n---\n").is_ok());
}
