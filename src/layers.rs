//! The layers of the crate, and the test that keeps them: no import cycle between top-level
//! modules.
//!
//! Top-level modules are stacked in [`LAYERS`], bottom first. A module may use modules of lower
//! layers only; modules of one layer do not use each other. An edge that goes up or sideways is
//! what starts a cycle, so the test fails on the edge itself, naming the file, before any cycle
//! can close. The reasons for the order:
//!
//! - `duration`, `files`, `hermetic`, `procs`, `signals`, `suggest`, `template`, `term`, `yaml`:
//!   helpers with no crate imports. `testing` on them: the unit tests' shared helpers (git in a
//!   temporary directory, with `hermetic`'s environment; the crate's own source), below
//!   everything that tests with git.
//! - `plan` → `coverage`: the pure domain — a plan's targets, the coverage rule over them.
//!   `agent` beside `coverage`: what the real agents print, read without I/O, and the presets
//!   `git baton init` writes for them.
//! - `git`, `exec`: the outside world — the repository, and the actors' processes.
//! - `state`: the RunState, which records coverage reports and commit ids (`git::CommitId`).
//! - `config`: `.baton.yml`; it checks actor commands (`exec`) and prompt templates.
//! - `verify`, then `report`, then `run` and `demo`: operations and the renderers of their
//!   results. `report` renders what `verify` returns and what `run` records; `run` uses its
//!   status words in messages. `demo` drives the real binary and imports no operation.
//! - `ops`: one use case per command that changes a run, on the run session of `run` (and the
//!   writing of `init --packaging`). `mcp` beside it: the MCP protocol of `git baton mcp` (tools, schemas, framing), which imports
//!   nothing of the crate; what its tools do is given by `cli`, the commands' own functions.
//! - `cli`: the command line, the only module that prints and decides exit codes.

/// Top-level modules, bottom layer first.
const LAYERS: &[&[&str]] = &[
    &[
        "duration", "files", "hermetic", "procs", "signals", "suggest", "template", "term", "yaml",
    ],
    &["testing"],
    &["plan"],
    &["coverage", "agent"],
    &["git", "exec"],
    &["state"],
    &["config"],
    &["verify"],
    &["report"],
    &["run", "demo"],
    &["ops", "mcp"],
    &["cli"],
];

/// The top-level modules `source` names through `crate::…` paths, comments left out: `use
/// crate::a::b`, `use crate::{a, b::c}` over any number of lines, and inline paths such as
/// `crate::a::f()`.
fn crate_uses(source: &str) -> Vec<String> {
    let code = crate::testing::without_comments(source);
    let mut names = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        // `$crate::` in macros is the crate root too; any other identifier before it is not.
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        match rest.strip_prefix('{') {
            Some(group) => names.extend(group_heads(group)),
            None => names.push(ident(rest).to_string()),
        }
    }
    names.retain(|n| !n.is_empty() && n != "self");
    names
}

/// The first path segment of each item of a `{…}` group, up to its closing brace.
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut at_item = true;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => at_item = true,
            c if at_item && depth == 0 && !c.is_whitespace() => {
                heads.push(ident(&group[i..]).to_string());
                at_item = false;
            }
            _ => {}
        }
    }
    heads
}

fn ident(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// Every use of a module that is not in a lower layer, as `file: module uses other`.
fn violations(module: &str, file: &str, source: &str) -> Vec<String> {
    let Some(own) = layer_of(module) else {
        return vec![format!("{file}: module `{module}` is in no layer")];
    };
    crate_uses(source)
        .into_iter()
        .filter(|used| used != module)
        .filter(|used| layer_of(used).is_none_or(|layer| layer >= own))
        .map(|used| format!("{file}: `{module}` uses `{used}`, which is not below it"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_top_level_module_uses_one_that_is_not_below_it() {
        let mut problems = Vec::new();
        let mut modules: Vec<String> = Vec::new();
        for (file, source) in crate::testing::sources() {
            let top = file.split('/').next().unwrap_or(&file);
            let name = top.strip_suffix(".rs").unwrap_or(top);
            if ["lib", "main", "layers", "doors", "shape"].contains(&name) {
                continue;
            }
            problems.extend(violations(name, &file, &source));
            if !modules.iter().any(|m| m == name) {
                modules.push(name.to_string());
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        // The table names no module that is gone.
        for name in LAYERS.iter().flat_map(|l| l.iter()) {
            assert!(
                modules.iter().any(|m| m == name),
                "`{name}` is not a module"
            );
        }
    }

    #[test]
    fn uses_are_found_in_every_form_and_comments_are_skipped() {
        let source = "\
//! See [`crate::cli`].
use crate::{coverage::{self, Report}, git::Repo,
    plan};
use crate::state::store::Store;
fn f() { crate::report::status::word(1); } // crate::demo
let not_ours = mycrate::run::x; let ours = $crate::exec::y;
";
        assert_eq!(
            crate_uses(source),
            ["coverage", "git", "plan", "state", "report", "exec"]
        );
    }

    #[test]
    fn an_upward_or_sideways_use_is_a_violation() {
        assert_eq!(
            violations("state", "state/mod.rs", "use crate::run::Driver;"),
            ["state/mod.rs: `state` uses `run`, which is not below it"]
        );
        assert_eq!(
            violations("git", "git/mod.rs", "fn f() { crate::exec::run(); }"),
            ["git/mod.rs: `git` uses `exec`, which is not below it"]
        );
        assert!(violations("run", "run/mod.rs", "use crate::{git, state::RunState};").is_empty());
        assert_eq!(
            violations("newcomer", "newcomer.rs", ""),
            ["newcomer.rs: module `newcomer` is in no layer"]
        );
    }
}
