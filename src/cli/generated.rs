//! The files generated from the code and committed: the man pages in `docs/man/` (from the clap
//! definitions) and the JSON Schemas in `docs/schemas/` (from the serde types). The tests here
//! generate them again and fail when a committed file differs, is missing or is left over, so a
//! change to a command, an option or a document's fields shows in review as a change to them.
//!
//! `GIT_BATON_UPDATE_GENERATED=1 cargo test --lib generated` rewrites them instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::CommandFactory;

use super::Cli;

const UPDATE_VAR: &str = "GIT_BATON_UPDATE_GENERATED";

/// `git-baton.1` and one page per command (`git-baton-run.1`, …), by file name.
pub(super) fn man_pages() -> BTreeMap<String, String> {
    // As clap_mangen's `generate_to` does: no `help` command, and the commands built so that
    // each knows its full name (`git-baton-run`) and usage (`git baton run …`).
    let mut cli = Cli::command().disable_help_subcommand(true);
    cli.build();
    let mut pages = BTreeMap::new();
    let mut commands = vec![cli.clone()];
    commands.extend(cli.get_subcommands().filter(|c| !c.is_hide_set()).cloned());
    for command in commands {
        // Every page names the version it documents, as the top-level one does by default.
        let man = clap_mangen::Man::new(command)
            .source(format!("git-baton {}", env!("CARGO_PKG_VERSION")));
        let mut page = Vec::new();
        man.render(&mut page).expect("writes to memory");
        pages.insert(
            man.get_filename(),
            String::from_utf8(page).expect("roff is UTF-8"),
        );
    }
    pages
}

/// The schema of what git-baton writes as `T`: a field it leaves out when empty
/// (`skip_serializing_if`) is optional, a field it always writes is required.
fn written<T: schemars::JsonSchema>() -> schemars::Schema {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
}

/// Every JSON Schema, by file name. The files git-baton reads are described as it reads them
/// (the types' `Deserialize`), the documents it writes as it writes them.
pub(super) fn schemas() -> BTreeMap<String, String> {
    let schemas = [
        ("baton.schema.json", crate::config::json_schema()),
        (
            "plan.schema.json",
            schemars::schema_for!(crate::plan::schema::Frontmatter),
        ),
        ("evidence.schema.json", crate::coverage::evidence_schema()),
        (
            "state.schema.json",
            written::<crate::state::store::Versioned<'static>>(),
        ),
        ("status.schema.json", written::<super::JsonView<'static>>()),
        (
            "verify.schema.json",
            written::<crate::report::VerifyJson<'static>>(),
        ),
        (
            "check.schema.json",
            written::<crate::report::check::Check>(),
        ),
        (
            "notify.schema.json",
            written::<crate::run::notify::Document<'static>>(),
        ),
    ];
    schemas
        .into_iter()
        .map(|(name, schema)| {
            let mut text = serde_json::to_string_pretty(&schema).expect("a schema serializes");
            text.push('\n');
            (name.to_string(), text)
        })
        .collect()
}

/// The repository's `docs/<dir>`.
fn docs(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs").join(dir)
}

/// Holds `dir` to `files`: with the update variable set, writes them and removes what else is
/// there; otherwise fails naming every file that differs, is missing or is left over.
fn check(dir: &Path, files: &BTreeMap<String, String>) {
    let update = std::env::var_os(UPDATE_VAR).is_some_and(|v| v == "1");
    let present: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    if update {
        std::fs::create_dir_all(dir).expect("create the directory");
        for name in present.iter().filter(|n| !files.contains_key(*n)) {
            std::fs::remove_file(dir.join(name)).expect("remove a left-over file");
        }
        for (name, text) in files {
            std::fs::write(dir.join(name), text).expect("write a generated file");
        }
        return;
    }
    let mut stale = Vec::new();
    for (name, text) in files {
        match std::fs::read_to_string(dir.join(name)) {
            Ok(committed) if committed == *text => {}
            Ok(_) => stale.push(format!("{name} differs")),
            Err(_) => stale.push(format!("{name} is missing")),
        }
    }
    for name in present.iter().filter(|n| !files.contains_key(*n)) {
        stale.push(format!("{name} is left over (nothing generates it)"));
    }
    assert!(
        stale.is_empty(),
        "{} is out of date: {}\nregenerate it with `{UPDATE_VAR}=1 cargo test --lib generated` \
         and review the diff",
        dir.display(),
        stale.join(", ")
    );
}

#[test]
fn generated_man_pages() {
    check(&docs("man"), &man_pages());
}

#[test]
fn generated_schemas() {
    check(&docs("schemas"), &schemas());
}

/// One page per command (`man git-baton-run`), as git's own commands have; commands added
/// later get theirs by construction.
#[test]
fn every_command_has_a_man_page() {
    let pages = man_pages();
    assert!(pages.contains_key("git-baton.1"));
    for command in Cli::command().get_subcommands() {
        let name = format!("git-baton-{}.1", command.get_name());
        let page = pages.get(&name).unwrap_or_else(|| panic!("no {name}"));
        assert!(
            page.contains(&format!("git baton {}", command.get_name())),
            "{name}"
        );
    }
}
