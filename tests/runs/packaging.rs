//! `git baton init --packaging DIR`: the agents' host files of packaging/, written from the
//! bytes embedded in the binary, for an installed git-baton with no checkout of the repository.

use std::path::{Path, PathBuf};

use crate::support::TestRepo;

/// Every file below `root`, as its `/`-separated path below it, sorted.
fn files_below(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut dirs: Vec<PathBuf> = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let rel = path.strip_prefix(root).unwrap().to_str().unwrap();
                found.push(rel.replace('\\', "/"));
            }
        }
    }
    found.sort();
    found
}

fn packaging() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging")
}

/// Written outside any repository, the directory is packaging/ byte for byte (every file of
/// it, so a file added there cannot be left out of the binary), one line per file, and no
/// `.baton.yml`; `--agent` writes that agent's directory only.
#[test]
fn init_packaging_writes_the_files_of_packaging_byte_for_byte() {
    let repo = TestRepo::with().file("README.md", "x\n").commit();
    let init = repo.baton_in(repo.tmp(), ["init", "--packaging", "out"]);
    assert_eq!(init.code, 0, "{init}");
    assert_eq!(init.stderr, "");
    let expected = files_below(&packaging());
    let out = repo.tmp().join("out");
    assert_eq!(files_below(&out), expected);
    for rel in &expected {
        assert_eq!(
            std::fs::read(out.join(rel)).unwrap(),
            std::fs::read(packaging().join(rel)).unwrap(),
            "{rel}"
        );
    }
    let mut lines: Vec<&str> = init.stdout.lines().collect();
    lines.sort();
    let wrote: Vec<String> = expected
        .iter()
        .map(|rel| format!("wrote $TMP/out/{rel}"))
        .collect();
    assert_eq!(lines, wrote);
    assert!(!repo.tmp().join(".baton.yml").exists());

    // Inside the repository too: no .baton.yml, whatever is there.
    let init = repo.baton(["init", "--packaging", "host", "--agent", "gemini"]);
    assert_eq!(init.code, 0, "{init}");
    assert!(!repo.path(".baton.yml").exists());
    let gemini: Vec<String> = expected
        .iter()
        .filter(|rel| rel.starts_with("gemini/"))
        .cloned()
        .collect();
    assert_eq!(gemini.len(), 3);
    assert_eq!(files_below(&repo.path("host")), gemini);
    assert_eq!(init.stdout.lines().count(), 3, "{init}");
}

/// A file with other content is refused, named, and nothing is written; the same bytes are no
/// obstacle; `--force` replaces it; an agent without host files and an unknown one are refused
/// (exit 2, like init's other input errors).
#[test]
fn init_packaging_refuses_a_changed_file_without_force() {
    let repo = TestRepo::with().file("README.md", "x\n").commit();
    let dir = repo.tmp();
    let first = repo.baton_in(dir, ["init", "--packaging", "out"]);
    assert_eq!(first.code, 0, "{first}");
    let again = repo.baton_in(dir, ["init", "--packaging", "out"]);
    assert_eq!(again.code, 0, "{again}");
    let out = dir.join("out");
    let changed = out.join("codex/hooks.json");
    std::fs::write(&changed, "{\"hooks\": {}}\n").unwrap();
    let removed = out.join("claude-code/hooks/hooks.json");
    std::fs::remove_file(&removed).unwrap();
    let refused = repo.baton_in(dir, ["init", "--packaging", "out"]);
    assert_eq!(refused.code, 2, "{refused}");
    assert_eq!(refused.stdout, "");
    assert_eq!(
        refused.stderr,
        "error: $TMP/out/codex/hooks.json exists and differs from git-baton's packaging\n\
         hint: `git baton init --packaging out --force` replaces it (commit or copy it first)\n"
    );
    assert_eq!(std::fs::read(&changed).unwrap(), b"{\"hooks\": {}}\n");
    assert!(!removed.exists());
    let codex = repo.baton_in(dir, ["init", "--packaging", "out", "--agent", "codex"]);
    assert_eq!(codex.code, 2, "{codex}");
    assert!(
        codex
            .stderr
            .ends_with("hint: `git baton init --packaging out --agent codex --force` replaces it (commit or copy it first)\n"),
        "{codex}"
    );
    let forced = repo.baton_in(dir, ["init", "--packaging", "out", "--force"]);
    assert_eq!(forced.code, 0, "{forced}");
    assert_eq!(
        std::fs::read(&changed).unwrap(),
        std::fs::read(packaging().join("codex/hooks.json")).unwrap()
    );
    assert!(removed.exists());

    let aider = repo.baton_in(dir, ["init", "--packaging", "out", "--agent", "aider"]);
    assert_eq!(aider.code, 2, "{aider}");
    assert_eq!(
        aider.stderr,
        "error: the agent `aider` has no host files to package\n\
         hint: the agents with host files: claude, gemini, codex\n"
    );
    let typo = repo.baton_in(dir, ["init", "--packaging", "out", "--agent", "gemni"]);
    assert_eq!(typo.code, 2, "{typo}");
    assert_eq!(
        typo.stderr,
        "error: unknown agent `gemni`\nhint: did you mean `gemini`?\n"
    );
}
