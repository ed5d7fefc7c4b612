//! Regression tests for what the fuzz targets found, each named after its finding.

use git_baton::coverage::{self, Claim, TRAILER_KEY};
use git_baton::plan;

use super::index::{self, Checksum};
use crate::support::TestRepo;

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

/// `verify` with each plan of [`index::base`]'s repository after `edit` changed its index and
/// `checksum` sealed it: the error lines of both runs, which must be refusals naming the index.
fn refusals(repo: &TestRepo, edit: impl FnOnce(&mut Vec<u8>), checksum: Checksum) -> Vec<String> {
    let path = repo.path(".git/index");
    let mut bytes = std::fs::read(&path).unwrap();
    edit(&mut bytes);
    index::seal(&mut bytes, checksum);
    std::fs::write(&path, &bytes).unwrap();
    ["plans/scoped.md", "plans/glob.md"]
        .iter()
        .map(|plan| {
            let run = index::verify(repo, plan);
            assert_eq!(run.code, 2, "{plan}: {run}");
            assert!(index::names_the_index(&run.stderr), "{plan}: {run}");
            run.stderr.lines().next().unwrap().to_string()
        })
        .collect()
}

/// Replaces the first occurrence of `from` in the index with `to` (of the same length).
fn rename_entry(bytes: &mut [u8], from: &[u8], to: &[u8]) {
    assert_eq!(from.len(), to.len());
    let at = bytes
        .windows(from.len())
        .position(|w| w == from)
        .expect("the entry is in the index");
    bytes[at..at + to.len()].copy_from_slice(to);
}

/// Found by `fuzz_git_index`: gix's decoding errors name no file, so a truncated index gave
/// "cannot read the index: Declared entry count exceeds possible entries for file size". (With
/// its checksum left as it was, the checksum's verdict is reported instead, also naming it.)
/// The scoped reader says what it found ("is corrupt: truncated entry"), gix's decoder is
/// quoted after the file's name.
#[test]
fn index_decoding_errors_name_the_index_file() {
    let repo = index::base();
    for line in refusals(&repo, |b| b.truncate(60), Checksum::Recomputed) {
        let named = line.starts_with("error: the index ")
            && line.contains("/.git/index is corrupt: ")
            || line.starts_with("error: cannot decode the index ")
                && line.contains("/.git/index: ");
        assert!(named, "{line}");
    }
}

/// Found by `fuzz_git_index`: an entry out of order (here `src/main.rs` renamed `.rc/main.rs`,
/// which sorts before `docs/` but comes after `plans/`) tripped a debug assertion of the worktree
/// walk ("entry … was not visited", exit 101), and release builds skipped the entry. git refuses
/// such an index; so does git-baton now, whatever its checksum says.
#[test]
fn index_entries_out_of_order_are_refused_not_a_panic() {
    for (version, checksum) in [
        ("2", Checksum::Recomputed),
        ("2", Checksum::Stale),
        ("4", Checksum::Recomputed),
    ] {
        let repo = index::base();
        repo.git(["update-index", "--index-version", version]);
        let rename = |b: &mut Vec<u8>| rename_entry(b, b"src/main.rs", b".rc/main.rs");
        for line in refusals(&repo, rename, checksum) {
            assert!(
                line.contains("should order after prior entry") || line.contains("is corrupt"),
                "version {version}, {checksum:?}: {line}"
            );
        }
    }
}

/// Found by `fuzz_git_index`: an entry whose path has a NUL byte (which no file name can have)
/// reached gix's status, which failed on the worktree path "docs/b\0\0d" without a word about
/// the index.
#[test]
fn index_entry_with_a_nul_byte_in_its_path_is_refused_naming_the_index() {
    let repo = index::base();
    let nul = |b: &mut Vec<u8>| rename_entry(b, b"docs/b.md", b"docs/b\0\0d");
    for line in refusals(&repo, nul, Checksum::Recomputed) {
        assert!(line.contains("has a NUL byte"), "{line}");
    }
}

/// Found by `fuzz_git_index`: with a split or sparse index, gix reads the index again by itself,
/// and a damaged one failed there with "Shared index checksum mismatch" (or gix's debug output,
/// `Message { message: … }`), naming no file; the checksum's verdict is now what is reported.
#[test]
fn damaged_split_and_sparse_indexes_are_reported_as_damage_of_the_named_file() {
    for setup in [&["update-index", "--split-index"][..], &index::SPARSE_INDEX] {
        let repo = index::base();
        repo.git(setup);
        let flip = |b: &mut Vec<u8>| b[40] ^= 1;
        for line in refusals(&repo, flip, Checksum::Stale) {
            assert!(!line.contains("Message {"), "{setup:?}: {line}");
            assert!(
                line.contains("corrupt") || line.contains("checksum"),
                "{setup:?}: {line}"
            );
        }
    }
}

/// Found by `fuzz_git_index`: a sparse directory entry whose id names a blob instead of a tree
/// failed the diff with "cannot read tree …: Expected object of kind tree but got blob", naming
/// neither the index nor the entry; it is now damage of the named index.
#[test]
fn a_sparse_directory_entry_that_names_no_tree_is_damage_of_the_named_index() {
    let repo = index::base();
    repo.git(index::SPARSE_INDEX);
    let hex_bytes = |rev: &str| {
        let hex = repo.git(["rev-parse", rev]);
        (0..40)
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex.trim()[i..i + 2], 16).unwrap())
            .collect::<Vec<u8>>()
    };
    let (tree, blob) = (hex_bytes("HEAD:src"), hex_bytes("HEAD:top.txt"));
    let swap = |b: &mut Vec<u8>| rename_entry(b, &tree, &blob);
    for line in refusals(&repo, swap, Checksum::Recomputed) {
        assert!(
            line.contains("sparse directory entry `src/`")
                && line.contains("cannot be read as a tree"),
            "{line}"
        );
    }
}

/// Found by `fuzz_git_index` (seed 3152623564746183572): gix's parallel decoder trusts the index
/// entry offset table (IEOT) and panicked in its worker thread ("range start index … out of
/// range") on an offset outside the file. The index is decoded on one thread now, which does not
/// use the table, and the damage is reported against the named file.
#[test]
fn an_entry_offset_table_pointing_outside_the_file_is_refused_not_a_panic() {
    let repo_with_table = || {
        let repo = index::base();
        repo.git(["config", "index.recordEndOfIndexEntries", "true"]);
        repo.git(["config", "index.recordOffsetTable", "true"]);
        repo.git(["config", "index.threads", "2"]);
        repo.git(["update-index", "--force-write-index"]);
        repo
    };
    let outside = |b: &mut Vec<u8>| {
        let at = b
            .windows(4)
            .rposition(|w| w == b"IEOT")
            .expect("git wrote an entry offset table");
        // Signature, size, version, then the first block's offset.
        b[at + 12..at + 16].copy_from_slice(&0x00ff_0000u32.to_be_bytes());
    };
    // Under its old checksum the change is damage, reported against the file.
    for line in refusals(&repo_with_table(), outside, Checksum::Stale) {
        assert!(line.contains("/.git/index"), "{line}");
    }
    // Sealed anew, the table is only a hint the one-thread decoder does not need: the gate runs.
    let repo = repo_with_table();
    let path = repo.path(".git/index");
    let mut bytes = std::fs::read(&path).unwrap();
    outside(&mut bytes);
    index::seal(&mut bytes, Checksum::Recomputed);
    std::fs::write(&path, &bytes).unwrap();
    for plan in ["plans/scoped.md", "plans/glob.md"] {
        let run = index::verify(&repo, plan);
        assert!(matches!(run.code, 0 | 1), "{plan}: {run}");
        assert!(!run.stderr.contains("panicked"), "{plan}: {run}");
    }
}
