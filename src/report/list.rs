//! `git baton list`: every run of a repository, one row each, in aligned columns.

use crate::report::status::label;
use crate::report::width;
use crate::state::RunState;

/// The runs, oldest first, each with whether it is stale and, for a published run or one only
/// a remote has, how it stands against the remote (a REMOTE column, shown only when some run
/// has one); a hint to start one when there are none.
pub fn render(runs: &[(&RunState, bool, Option<String>)]) -> String {
    if runs.is_empty() {
        return "no runs yet; start one with `git baton run <PLAN>`\n".to_string();
    }
    let cells = |s: &RunState, stale: bool| {
        [
            s.run_id.to_string(),
            label(s.status(), stale),
            s.current_stage().unwrap_or("-").to_string(),
            crate::report::escape::line(&s.plan.path).into_owned(),
            s.created_at.strftime("%Y-%m-%d %H:%M").to_string(),
        ]
    };
    let header = ["RUN", "STATUS", "STAGE", "PLAN", "CREATED"];
    if runs.iter().all(|(_, _, sync)| sync.is_none()) {
        let rows = runs.iter().map(|(s, stale, _)| cells(s, *stale)).collect();
        return table(header, rows);
    }
    let rows = runs
        .iter()
        .map(|(s, stale, sync)| {
            let [run, status, stage, plan, created] = cells(s, *stale);
            let sync = crate::report::escape::line(sync.as_deref().unwrap_or("-")).into_owned();
            [run, status, stage, plan, created, sync]
        })
        .collect();
    table(
        ["RUN", "STATUS", "STAGE", "PLAN", "CREATED", "REMOTE"],
        rows,
    )
}

/// Columns padded to their widest cell and two spaces apart, without trailing blanks.
fn table<const N: usize>(header: [&str; N], rows: Vec<[String; N]>) -> String {
    let widths: Vec<usize> = (0..N)
        .map(|i| {
            rows.iter()
                .map(|r| width::width(&r[i]))
                .chain([width::width(header[i])])
                .max()
                .unwrap_or(0)
                .min(width::MAX_COLUMN)
        })
        .collect();
    let mut out = String::new();
    let header = header.map(|h| crate::term::paint(crate::term::Paint::Dim, h));
    for (n, row) in std::iter::once(header).chain(rows).enumerate() {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| match (n, i) {
                // The header is painted already; its words are as wide as they read.
                (0, _) => format!("{c}{}", " ".repeat(w - width::width(&strip(c)))),
                (_, 1) => width::status(c, *w),
                _ => width::left(c, *w),
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// `text` without the escapes painting added.
fn strip(text: &str) -> String {
    anstream::adapter::strip_str(text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_on_the_widest_cell_without_trailing_blanks() {
        let rows = vec![
            [
                "a".to_string(),
                "running (stale)".to_string(),
                String::new(),
            ],
            ["bbbb".to_string(), "review".to_string(), String::new()],
        ];
        insta::assert_snapshot!(table(["RUN", "STATUS", "X"], rows), @r"
        RUN   STATUS           X
        a     running (stale)
        bbbb  review
        ");
    }

    #[test]
    fn wide_characters_take_two_cells() {
        let rows = vec![
            [
                "plans/日本語.md".to_string(),
                "review".to_string(),
                "x".to_string(),
            ],
            [
                "plans/abc.md".to_string(),
                "blocked".to_string(),
                "y".to_string(),
            ],
        ];
        insta::assert_snapshot!(table(["PLAN", "STATUS", "X"], rows), @r"
        PLAN             STATUS   X
        plans/日本語.md  review   x
        plans/abc.md     blocked  y
        ");
    }
}
