//! `git baton list`: every run of the repository.

use std::io::Write;
use std::path::Path;

use clap::Args;

use crate::error::{CliError, Exit};

/// List the runs of this repository, oldest first, one line each.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print a JSON array of the runs (each as `status --json` prints it).
    #[arg(long)]
    pub json: bool,
}

pub fn run(cwd: &Path, args: ListArgs, out: &mut dyn Write) -> Result<Exit, CliError> {
    let ctx = super::Context::open(cwd)?;
    let mut states = Vec::new();
    for id in ctx.store.list().map_err(super::store_error)? {
        match ctx.store.load(&id) {
            Ok(state) => states.push(state),
            // One unreadable run must not hide the others.
            Err(err) => eprintln!("warning: {err}"),
        }
    }
    if args.json {
        let views: Vec<_> = states
            .iter()
            .map(|s| super::status::json_view(&ctx.store, s))
            .collect();
        let mut text = serde_json::to_string_pretty(&views).expect("serializes");
        text.push('\n');
        let _ = out.write_all(text.as_bytes());
        return Ok(Exit::Success);
    }
    if states.is_empty() {
        let _ = writeln!(out, "no runs yet; start one with `git baton run <PLAN>`");
        return Ok(Exit::Success);
    }
    let rows: Vec<[String; 5]> = states
        .iter()
        .map(|s| {
            [
                s.run_id.to_string(),
                super::status_word(&ctx.store, s),
                s.current_stage().unwrap_or("-").to_string(),
                s.plan.path.clone(),
                s.created_at.strftime("%Y-%m-%d %H:%M").to_string(),
            ]
        })
        .collect();
    let header = ["RUN", "STATUS", "STAGE", "PLAN", "CREATED"];
    let widths: Vec<usize> = (0..5)
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in std::iter::once(header.map(String::from)).chain(rows) {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    Ok(Exit::Success)
}
