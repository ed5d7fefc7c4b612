//! `git baton targets`: a plan's derived targets as frontmatter the user can paste, each with
//! the line that names it.

use super::escape;
use super::width;
use crate::verify::targets::{Named, TargetsReport};
use crate::yaml;

/// The text output: a `targets:` block (or, for a plan that declares its own, the paths the body
/// names beyond them), then what was named but found nowhere.
#[must_use]
pub fn text(report: &TargetsReport) -> String {
    let mut out = String::new();
    let base = crate::git::short_hex(&report.base);
    if report.declares() {
        out.push_str(&format!(
            "# {}: {} declared target(s); the body names {} path(s) at {base}",
            escape::line(&report.plan),
            report.declared.len(),
            report.derived.len()
        ));
        if report.not_covered.is_empty() {
            out.push_str(", each covered by a declared target\n");
        } else {
            out.push_str(&format!(
                ", {} of them covered by no target:\n",
                report.not_covered.len()
            ));
            list(&mut out, &report.not_covered);
        }
    } else if report.derived.is_empty() {
        out.push_str(&format!(
            "# {}: the body names no path that exists at {base} (or could be created there)\n",
            escape::line(&report.plan)
        ));
    } else {
        out.push_str(&format!(
            "# derived from the body of {} at {base}\n",
            escape::line(&report.plan)
        ));
        list(&mut out, &report.derived);
    }
    if !report.not_found.is_empty() {
        out.push_str("# named, but nothing at the base and no directory to create it in:\n");
        for named in &report.not_found {
            out.push_str(&format!(
                "#   {} (line {}, {})\n",
                escape::line(&named.target),
                named.line,
                named.found_in.as_str()
            ));
        }
    }
    out
}

fn list(out: &mut String, rows: &[Named]) {
    // Paths as YAML strings, so that any name the base holds pastes back as itself.
    let cells: Vec<String> = rows.iter().map(|r| yaml::scalar(&r.target)).collect();
    let column = width::widest(cells.iter().map(String::as_str)).min(60);
    out.push_str("targets:\n");
    for (row, cell) in rows.iter().zip(&cells) {
        let new = if row.exists { "" } else { ", new" };
        out.push_str(&format!(
            "  - {}  # line {}, {}{new}\n",
            width::left(cell, column),
            row.line,
            row.found_in.as_str()
        ));
    }
}
