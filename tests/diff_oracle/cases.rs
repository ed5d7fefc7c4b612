//! The hard cases of the worktree diff, one test each so that a regression names itself:
//! staged-then-reverted edits, modes, symlinks, filters, linked worktrees, racily clean files,
//! the cache-tree, unmerged paths and scope prefixes that changed kind.

use super::*;

/// The hard cases named in the design, one by one, so a regression names itself.
#[test]
fn hard_cases_match_git() {
    let repo = seeded();
    // staged, then reverted in the worktree: cancels out
    repo.write("a.txt", "changed\n");
    repo.git(["add", "a.txt"]);
    repo.write("a.txt", "base content 0\n");
    // added, then deleted before commit: nothing
    repo.write("gone.txt", "x\n");
    repo.git(["add", "gone.txt"]);
    std::fs::remove_file(repo.path("gone.txt")).unwrap();
    // mode-only change
    apply(&repo, &Op::Chmod(1));
    // a symlink replacing a file
    apply(&repo, &Op::Symlink(4, 0));
    // a file in a new untracked directory, and an ignored one
    repo.write("brand/new/dir/file.txt", "u\n");
    repo.write("dir/debug.log", "ignored\n");
    // a committed change
    repo.write("id.txt", "committed\n");
    repo.git(["commit", "-q", "-am", "c"]);
    assert_eq!(
        matches_git(&repo, &repo.root, &["brand", "dir"]),
        ["b.sh", "brand/new/dir/file.txt", "dir/x.txt", "id.txt"]
    );
}

#[test]
fn gitattributes_filters_are_honoured() {
    let repo = seeded();
    repo.write(".gitattributes", "id.txt ident\ncrlf.txt text eol=crlf\n");
    repo.write("id.txt", "$Id$\n");
    repo.write("crlf.txt", "a\nb\n");
    repo.commit_all("attrs");
    repo.git(["tag", "-f", "base"]);
    // Re-checkout expands $Id$ and converts to CRLF; git still sees no change.
    std::fs::remove_file(repo.path("id.txt")).unwrap();
    std::fs::remove_file(repo.path("crlf.txt")).unwrap();
    repo.git(["checkout", "--", "id.txt", "crlf.txt"]);
    assert_ne!(
        std::fs::read_to_string(repo.path("id.txt")).unwrap(),
        "$Id$\n"
    );
    // A staged edit reverted by hand, to force reading through the filters.
    repo.write("crlf.txt", "changed\n");
    repo.git(["add", "crlf.txt"]);
    repo.write("crlf.txt", "a\r\nb\r\n");
    assert_eq!(
        matches_git(&repo, &repo.root, &["crlf.txt", "id.txt"]),
        Vec::<String>::new()
    );
}

#[test]
fn linked_worktree_sees_its_own_changes() {
    let repo = seeded();
    let wt = repo.tmp().join("linked");
    repo.git([
        "worktree",
        "add",
        "-q",
        "-b",
        "side",
        wt.to_str().unwrap(),
        "base",
    ]);
    std::fs::write(wt.join("a.txt"), "in linked worktree\n").unwrap();
    std::fs::write(wt.join("extra.txt"), "new\n").unwrap();
    repo.write("b.sh", "main worktree only\n");
    let ours = Repo::discover(&wt.join("dir")).unwrap();
    assert_eq!(ours.common_dir().canonicalize().unwrap(), repo.path(".git"));
    assert_eq!(ours.workdir().unwrap(), wt);
    assert_eq!(matches_git(&repo, &wt, &["a.txt"]), ["a.txt", "extra.txt"]);
}

/// A file rewritten with content of the same size in the same second as `git add` has a stat
/// that matches its index entry; only the racy-git rule (mtime not older than the index) makes it
/// read. Here its mtime is pinned in the future, so the entry is racy however fast the machine is.
#[test]
fn racily_clean_files_are_read() {
    let repo = seeded();
    let future = (std::time::SystemTime::now() + std::time::Duration::from_secs(100))
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let touch = |path: &str| {
        let status = std::process::Command::new("touch")
            .args(["-m", "-d", &format!("@{future}")])
            .arg(repo.path(path))
            .status()
            .unwrap();
        assert!(status.success());
    };
    // a.txt: same size, different content; b.sh: rewritten with the same content.
    for path in ["a.txt", "b.sh"] {
        touch(path);
    }
    repo.git(["add", "a.txt", "b.sh"]);
    repo.write("a.txt", "base content X\n");
    repo.write("b.sh", "base content 1\n");
    for path in ["a.txt", "b.sh"] {
        touch(path);
    }
    assert_eq!(
        matches_git(&repo, &repo.root, &["a.txt", "b.sh"]),
        ["a.txt"]
    );
}

/// The cache-tree vouches that a directory of the index is exactly a tree; where that tree is
/// the base's, the engine takes the index's entries there as the base's without reading the base.
/// It vouches for nothing in the worktree: files below such a directory that changed behind the
/// index's back are still found, and a directory whose cache-tree entry `git add` invalidated is
/// compared entry by entry.
#[test]
fn a_valid_cache_tree_vouches_for_the_index_only() {
    let repo = seeded();
    // `dir` holds x.txt and sub/z.txt; `new/deep` holds n.txt.
    repo.write("dir/y.txt", "base content y\n");
    repo.write("new/deep/m.txt", "base content m\n");
    repo.commit_all("base");
    repo.git(["tag", "-f", "base"]);
    let tree_at = |rev: &str| {
        gix::ObjectId::from_hex(repo.git(["rev-parse", rev]).trim().as_bytes()).unwrap()
    };

    // Touched: a new mtime, the same content and size.
    set_mtime(&repo.path("dir/sub/z.txt"), |_| {
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000)
    });
    // Rewritten with the same size, the old mtime put back: only the ctime tells.
    same_size_rewrite(&repo.path("dir/x.txt"));
    // Racily clean: rewritten with the same size, the index written in the same second as the
    // file (pinned in the future, so however fast the machine is).
    let future = std::time::SystemTime::now() + std::time::Duration::from_secs(100);
    set_mtime(&repo.path("new/deep/n.txt"), |_| future);
    repo.git(["add", "new/deep/n.txt"]);
    // `git add` invalidated the cache-tree above n.txt; valid again everywhere, as the base.
    repo.git(["write-tree"]);
    same_size_rewrite(&repo.path("new/deep/n.txt"));
    set_mtime(&repo.path("new/deep/n.txt"), |_| future);
    // Staged, which invalidates the cache-tree of `ünï` (and of the top).
    repo.write("ünï/cödé.md", "staged\n");
    repo.git(["add", "ünï/cödé.md"]);
    // Put back to the base through the index, still invalid in the cache-tree.
    repo.write("b.sh", "staged then unstaged\n");
    repo.git(["add", "b.sh"]);
    repo.git(["reset", "-q", "--", "b.sh"]);
    repo.write("b.sh", "base content 1\n");

    // The cache-tree as the engine finds it: `dir` valid and the base's, `ünï` invalidated.
    let index = gix::open(&repo.root).unwrap().index().unwrap();
    let top = index.tree().expect("git commit writes a cache-tree");
    let child = |name: &str| {
        top.children
            .iter()
            .find(|c| c.name.as_slice() == name.as_bytes())
            .unwrap_or_else(|| panic!("no cache-tree entry for {name}"))
    };
    assert!(child("dir").num_entries.is_some());
    assert_eq!(child("dir").id, tree_at("base:dir"));
    assert!(child("new").num_entries.is_some());
    assert_eq!(child("new").id, tree_at("base:new"));
    assert!(child("ünï").num_entries.is_none());

    assert_eq!(
        matches_git(&repo, &repo.root, &["dir", "dir/sub", "new", "ünï", "b.sh"]),
        ["dir/x.txt", "new/deep/n.txt", "ünï/cödé.md"]
    );
}

/// An unmerged path is listed when its worktree file differs from the base, as `git diff` does.
#[test]
fn unmerged_paths_compare_the_worktree_with_the_base() {
    let repo = seeded();
    repo.git(["checkout", "-q", "-b", "other"]);
    repo.write("a.txt", "theirs\n");
    repo.write("b.sh", "theirs\n");
    repo.commit_all("other");
    repo.git(["checkout", "-q", "main"]);
    repo.write("a.txt", "ours\n");
    repo.write("b.sh", "ours\n");
    repo.commit_all("ours");
    drop(repo.git_output(&repo.root, ["merge", "-q", "other"]));
    // a.txt back to the base's content, b.sh left with conflict markers.
    repo.write("a.txt", "base content 0\n");
    assert_eq!(matches_git(&repo, &repo.root, &["a.txt", "b.sh"]), ["b.sh"]);
}

/// A scope prefix that is a file in the base and a directory now, one behind a symlinked
/// directory, and one inside an untracked nested repository.
#[test]
fn prefixes_whose_path_changed_kind() {
    let repo = seeded();
    std::fs::remove_file(repo.path("a.txt")).unwrap();
    repo.write("a.txt/inner.txt", "directory now\n");
    std::fs::remove_dir_all(repo.path("dir/sub")).unwrap();
    std::os::unix::fs::symlink("../new", repo.path("dir/sub")).unwrap();
    repo.write("nest/file.txt", "in a nested repository\n");
    repo.git_in(&repo.path("nest"), ["init", "-q"]);
    let prefixes = [
        "a.txt",
        "a.txt/inner.txt",
        "dir/sub",
        "dir/sub/z.txt",
        "dir/sub/deep/n.txt",
        "nest",
        "nest/file.txt",
    ];
    assert_eq!(
        matches_git(&repo, &repo.root, &prefixes),
        [
            "a.txt",
            "a.txt/inner.txt",
            "dir/sub",
            "dir/sub/z.txt",
            "nest/"
        ]
    );
}
