//! `git baton list`: every run of a repository, one row each, in aligned columns.

use crate::report::status::label;
use crate::report::width;
use crate::state::{CycleFacts, RunState};

/// The runs, oldest first, each with whether it is stale and, for a published run or one only
/// a remote has, how it stands against the remote (a REMOTE column, shown only when some run
/// has one), then what `cycle` may do with it (a CYCLE column, shown only when some run is held,
/// was resumed by `cycle`, or waits for a rate limit's hold on its actor, `hold`: words such as
/// `claude on hold until …`); a hint to start one when there are none.
pub fn render(runs: &[(&RunState, bool, Option<String>, Option<String>)]) -> String {
    if runs.is_empty() {
        return "no runs yet; start one with `git baton run <PLAN>`\n".to_string();
    }
    let remote = runs.iter().any(|(_, _, sync, _)| sync.is_some());
    let cycle = runs
        .iter()
        .any(|(s, _, _, hold)| !s.cycle().is_empty() || hold.is_some());
    let mut header = vec!["RUN", "STATUS", "STAGE", "PLAN", "CREATED"];
    header.extend(remote.then_some("REMOTE"));
    header.extend(cycle.then_some("CYCLE"));
    let rows = runs
        .iter()
        .map(|(s, stale, sync, hold)| {
            let mut row = vec![
                s.run_id.to_string(),
                label(s.status(), *stale),
                s.current_stage().unwrap_or("-").to_string(),
                crate::report::escape::line(&s.plan.path).into_owned(),
                s.created_at.strftime("%Y-%m-%d %H:%M").to_string(),
            ];
            if remote {
                let sync = sync.as_deref().unwrap_or("-");
                row.push(crate::report::escape::line(sync).into_owned());
            }
            if cycle {
                let words: Vec<String> = standing(s.cycle())
                    .into_iter()
                    .chain(hold.clone())
                    .collect();
                row.push(if words.is_empty() {
                    "-".into()
                } else {
                    words.join("; ")
                });
            }
            row
        })
        .collect();
    table(&header, rows)
}

/// What `cycle` may do with a run, in a few words: `held: <reason>`, `resumed 2 times` …; `None`
/// while there is nothing to say.
pub fn standing(cycle: &CycleFacts) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(held) = &cycle.held {
        parts.push(match &held.reason {
            Some(reason) => format!("held: {}", crate::report::escape::line(reason)),
            None => "held".to_owned(),
        });
    }
    if cycle.resumes > 0 {
        parts.push(match cycle.resumes {
            1 => "resumed once".to_owned(),
            n => format!("resumed {n} times"),
        });
    }
    if cycle.stopped.is_some() {
        parts.push("stopped by its cycle".to_owned());
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Columns padded to their widest cell and two spaces apart, without trailing blanks; the
/// second column holds status words, painted as such.
fn table(header: &[&str], rows: Vec<Vec<String>>) -> String {
    let widths: Vec<usize> = (0..header.len())
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
    let header: Vec<String> = header
        .iter()
        .map(|h| crate::term::paint(crate::term::Paint::Dim, h))
        .collect();
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
            vec![
                "a".to_string(),
                "running (stale)".to_string(),
                String::new(),
            ],
            vec!["bbbb".to_string(), "review".to_string(), String::new()],
        ];
        insta::assert_snapshot!(table(&["RUN", "STATUS", "X"], rows), @r"
        RUN   STATUS           X
        a     running (stale)
        bbbb  review
        ");
    }

    #[test]
    fn cycle_standing_says_the_hold_the_resumes_and_cycles_own_stop() {
        let at = jiff::Timestamp::from_second(1_767_225_600).unwrap();
        assert_eq!(standing(&CycleFacts::default()), None);
        let held = |reason: Option<&str>| crate::state::Held {
            at,
            reason: reason.map(String::from),
        };
        let facts = CycleFacts {
            held: Some(held(Some("waiting\tfor the key"))),
            ..CycleFacts::default()
        };
        // A reason is someone's text: escaped, so that it cannot break the table.
        assert_eq!(standing(&facts).unwrap(), "held: waiting\\tfor the key");
        let facts = CycleFacts {
            held: Some(held(None)),
            resumes: 1,
            stopped: None,
        };
        assert_eq!(standing(&facts).unwrap(), "held; resumed once");
        let facts = CycleFacts {
            held: None,
            resumes: 3,
            stopped: Some(at),
        };
        assert_eq!(
            standing(&facts).unwrap(),
            "resumed 3 times; stopped by its cycle"
        );
    }

    #[test]
    fn wide_characters_take_two_cells() {
        let rows = vec![
            vec![
                "plans/日本語.md".to_string(),
                "review".to_string(),
                "x".to_string(),
            ],
            vec![
                "plans/abc.md".to_string(),
                "blocked".to_string(),
                "y".to_string(),
            ],
        ];
        insta::assert_snapshot!(table(&["PLAN", "STATUS", "X"], rows), @r"
        PLAN             STATUS   X
        plans/日本語.md  review   x
        plans/abc.md     blocked  y
        ");
    }
}
