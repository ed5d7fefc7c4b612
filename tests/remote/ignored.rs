//! Catching up never overwrites a file this clone ignores. Ignore rules are a clone's own
//! (`.git/info/exclude`, a `.gitignore` that is itself ignored), so another machine's snapshot
//! may hold a file where this worktree holds an ignored one, which no record has: catching up
//! refuses, naming it, and changes nothing; once it is moved away, the run catches up.

use super::*;

/// Machine B takes run `id` over, leaves `files` in its worktree (which its snapshot then
/// holds), and drives the run to review.
fn b_leaves(world: &World, id: &str, files: &[(&str, &str)]) -> TestRepo {
    let b = world.origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    let failed = b.live(["resume", id, "--actor", "executor=failing"]);
    assert_eq!(failed.code, 1, "{failed}");
    let worktree = worktree_of(&b, &status(&b, id));
    for (path, content) in files {
        let path = worktree.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    let resumed = b.live(["resume", id, "--actor", "executor=finisher"]);
    assert_eq!(resumed.code, 0, "{resumed}");
    b
}

/// One way this clone ignores what the other machine's snapshot has.
struct Variant {
    name: &'static str,
    /// A line for this clone's `.git/info/exclude`, if any.
    exclude: Option<&'static str>,
    /// What this clone's worktree holds, ignored: path and content (a path ending in `/` is a
    /// directory).
    local: &'static [(&'static str, &'static str)],
    /// What machine B's snapshot has.
    theirs: &'static [(&'static str, &'static str)],
    /// The paths the refusal must name.
    named: &'static str,
    /// A file of `local` whose content must survive.
    kept: &'static str,
}

const VARIANTS: [Variant; 4] = [
    Variant {
        name: "a file ignored through info/exclude",
        exclude: Some("build/"),
        local: &[("build/result.txt", "A's own build output")],
        theirs: &[("build/result.txt", "B's build output")],
        named: "build/result.txt",
        kept: "build/result.txt",
    },
    Variant {
        name: "a file ignored by a nested .gitignore that ignores itself",
        exclude: None,
        local: &[("cache/.gitignore", "*\n"), ("cache/out.txt", "A's cache")],
        theirs: &[("cache/out.txt", "B's cache")],
        named: "cache/out.txt",
        kept: "cache/out.txt",
    },
    Variant {
        name: "an ignored directory where B has a file",
        exclude: Some("out"),
        local: &[("out/log.txt", "A's log")],
        theirs: &[("out", "B's file named out")],
        named: "out/",
        kept: "out/log.txt",
    },
    Variant {
        name: "an ignored file where B has a directory",
        exclude: Some("gen"),
        local: &[("gen", "A's generated file")],
        theirs: &[("gen/x.txt", "B's generated directory")],
        named: "gen",
        kept: "gen",
    },
];

#[test]
fn catching_up_refuses_to_overwrite_what_this_clone_ignores() {
    for variant in VARIANTS {
        let world = World::new(Transport::File, "").unwrap();
        let (a, id) = world.rate_limited_and_pushed();
        let _b = b_leaves(&world, &id, variant.theirs);

        let worktree = worktree_of(&a, &status(&a, &id));
        if let Some(line) = variant.exclude {
            let exclude = a.path(".git/info/exclude");
            let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
            text.push_str(&format!("{line}\n"));
            std::fs::write(&exclude, text).unwrap();
        }
        for (path, content) in variant.local {
            let path = worktree.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        let kept = worktree.join(variant.kept);
        let before = text(&kept);
        assert_eq!(a.live(["fetch"]).code, 0);
        let refs = run_refs(&a);

        let refused = a.live(["finish", &id]);
        let name = variant.name;
        assert_eq!(refused.code, 2, "{name}: {refused}");
        assert!(
            refused.stderr.contains("files this clone ignores")
                && refused
                    .stderr
                    .contains(&format!("overwrite: {}\n", variant.named)),
            "{name}: {refused}"
        );
        assert!(
            refused.stderr.contains("hint: move those files"),
            "{name}: {refused}"
        );
        assert_eq!(text(&kept), before, "{name}: the ignored file is as it was");
        assert_eq!(run_refs(&a), refs, "{name}: nothing of the run moved");
        assert_eq!(status(&a, &id)["sync"], "behind", "{name}");

        // The hint's way out: the local files moved away, the run catches up and finishes
        // with B's files in place.
        let aside = world.scratch("aside");
        let top = variant.local[variant.local.len() - 1]
            .0
            .split('/')
            .next()
            .unwrap();
        std::fs::rename(worktree.join(top), &aside).unwrap();
        let finish = a.live(["finish", &id]);
        assert_eq!(finish.code, 0, "{name}: {finish}");
        for (path, content) in variant.theirs {
            assert_eq!(
                text(&worktree_or_branch(&a, &id, &worktree, path)),
                *content,
                "{name}"
            );
        }
    }
}

/// Where a file of a finished run is: still in its worktree, when the worktree was kept (it
/// holds ignored files), else on its branch (read into a scratch file).
fn worktree_or_branch(a: &TestRepo, id: &str, worktree: &Path, path: &str) -> PathBuf {
    let there = worktree.join(path);
    if there.exists() {
        return there;
    }
    let shown = a.git(["show", &format!("baton/{id}:{path}")]);
    let copy = a.tmp().join("shown");
    std::fs::write(&copy, shown).unwrap();
    copy
}

/// An ignored file the newer snapshot does not touch stays, and catching up goes on.
#[test]
fn ignored_files_the_remote_does_not_touch_stay() {
    let world = World::new(Transport::File, "").unwrap();
    let (a, id) = world.rate_limited_and_pushed();
    let _b = b_leaves(&world, &id, &[("build/other.txt", "B's")]);
    let worktree = worktree_of(&a, &status(&a, &id));
    let exclude = a.path(".git/info/exclude");
    let mut rules = std::fs::read_to_string(&exclude).unwrap_or_default();
    rules.push_str("build/\n");
    std::fs::write(&exclude, rules).unwrap();
    std::fs::create_dir_all(worktree.join("build")).unwrap();
    std::fs::write(worktree.join("build/mine.txt"), "A's").unwrap();
    assert_eq!(a.live(["fetch"]).code, 0);
    let finish = a.live(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    assert_eq!(text(&worktree.join("build/mine.txt")), "A's");
    assert_eq!(text(&worktree.join("build/other.txt")), "B's");
}
