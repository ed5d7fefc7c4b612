//! A clone that is behind catches up before it drives or finishes, and never at the cost of
//! work only its worktree holds: work no record has is refused with the paths, and the hint's
//! way out works.

use super::*;

const HAND_EDIT: &str = "a hand edit on machine A, in no record";

/// Machine A's run after B drove it to review, with [`HAND_EDIT`] added by hand to docs/a.md in
/// A's worktree, and A's `finish` refused for it (exit 2). A test binds `_b` to keep B's
/// machine until it ends.
struct HandEdit {
    a: TestRepo,
    _b: TestRepo,
    id: String,
    worktree: PathBuf,
    /// docs/a.md in A's worktree, and what it holds with the hand edit.
    edited: PathBuf,
    content: String,
    refused: Run,
}

impl HandEdit {
    fn refused(world: &World) -> HandEdit {
        let (a, id) = world.rate_limited_and_pushed();
        let b = world.resumed_elsewhere(&id);
        let worktree = worktree_of(&a, &status(&a, &id));
        let edited = worktree.join("docs/a.md");
        let content = format!("{}{HAND_EDIT}\n", text(&edited));
        std::fs::write(&edited, &content).unwrap();
        assert_eq!(a.live(["fetch"]).code, 0);
        let refused = a.live(["finish", &id]);
        assert_eq!(refused.code, 2, "{refused}");
        HandEdit {
            a,
            _b: b,
            id,
            worktree,
            edited,
            content,
            refused,
        }
    }
}

/// Machine A's run was driven to review on B; meanwhile someone edited A's worktree by hand.
/// `finish` on A refuses to replace that worktree (exit 2, naming the file, which stays as it
/// is); once the edit is moved out, as the hint says, A catches up and finishes with B's work.
#[test]
fn catching_up_refuses_to_replace_work_no_record_has() {
    let world = World::new(Transport::File, "").unwrap();
    let HandEdit {
        a,
        _b,
        id,
        worktree,
        edited,
        content,
        refused,
    } = HandEdit::refused(&world);
    assert!(
        refused
            .stderr
            .contains("holds work that no record has: docs/a.md"),
        "{refused}"
    );
    assert!(refused.stderr.contains("hint: "), "{refused}");
    assert_eq!(text(&edited), content, "the hand edit is where it was");
    assert_eq!(status(&a, &id)["status"], "rate_limited");
    assert_eq!(status(&a, &id)["sync"], "behind");

    // The hint's way out: the work moved out of the worktree (here: put aside, and the file
    // restored as the last snapshot has it).
    let aside = world.scratch("hand-edit.md");
    std::fs::rename(&edited, &aside).unwrap();
    a.git_in(&worktree, ["checkout", "--", "docs/a.md"]);
    let finish = a.live(["finish", &id]);
    assert_eq!(finish.code, 0, "{finish}");
    let branch = format!("baton/{id}");
    let doc_b = a.git(["show", &format!("{branch}:docs/b.md")]);
    assert!(doc_b.contains(B_WORK), "{doc_b}");
    assert!(text(&aside).contains(HAND_EDIT));
}

/// Every way out the refusal's hint proposes works: where it says to commit the work, committing
/// it in the worktree must let the run catch up (and keep the commit); otherwise the hint must
/// not propose it.
#[test]
fn the_hint_for_work_no_record_has_proposes_only_what_works() {
    let world = World::new(Transport::File, "").unwrap();
    let HandEdit {
        a,
        _b,
        id,
        worktree,
        refused,
        ..
    } = HandEdit::refused(&world);
    let hint = refused
        .stderr
        .lines()
        .find(|l| l.starts_with("hint: "))
        .unwrap_or_else(|| panic!("no hint:\n{refused}"));
    if !hint.contains("commit") {
        return;
    }
    a.git_in(
        &worktree,
        ["commit", "-q", "-a", "-m", "the hand edit, committed"],
    );
    let finish = a.live(["finish", &id]);
    assert_eq!(
        finish.code, 0,
        "the hint proposed committing, and committing did not help:\n{refused}\nthen:\n{finish}"
    );
    let log = a.git(["log", "--format=%s", &format!("baton/{id}")]);
    assert!(log.contains("the hand edit, committed"), "{log}");
}

/// A remote record is data from elsewhere: one that names a branch other than the run's is
/// refused before catching up moves a single file, so the worktree keeps what it held.
#[test]
fn a_record_naming_another_branch_is_refused_before_any_file_moves() {
    let world = World::new(Transport::File, "").unwrap();
    let (a, id) = world.rate_limited_and_pushed();
    let _b = world.resumed_elsewhere(&id);

    // The origin's record rewritten to name `main` (B's snapshots stay where they are).
    let record = format!("refs/baton/runs/{id}/record");
    let mut state = world.state_on_origin(&id);
    state["branch"] = "main".into();
    let forged = world.scratch("forged-state.json");
    std::fs::write(&forged, state.to_string()).unwrap();
    let bare = world.origin.bare.clone();
    let index = world.scratch("forged-index");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(&bare)
            .args(args)
            .env("GIT_INDEX_FILE", &index)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let blob = git(&["hash-object", "-w", forged.to_str().unwrap()]);
    git(&["read-tree", &record]);
    git(&[
        "update-index",
        "--cacheinfo",
        &format!("100644,{blob},state.json"),
    ]);
    let tree = git(&["write-tree"]);
    let commit = git(&[
        "-c",
        "user.name=Forger",
        "-c",
        "user.email=forger@example.com",
        "commit-tree",
        &tree,
        "-p",
        &record,
        "-m",
        "forged",
    ]);
    git(&["update-ref", &record, &commit]);

    let worktree = worktree_of(&a, &status(&a, &id));
    let before = text(&worktree.join("docs/b.md"));
    assert_eq!(a.live(["fetch"]).code, 0);
    let refused = a.live(["finish", &id]);
    assert_eq!(refused.code, 2, "{refused}");
    assert!(
        refused
            .stderr
            .contains("it names branch `main`, not baton/"),
        "{refused}"
    );
    assert_eq!(
        text(&worktree.join("docs/b.md")),
        before,
        "the worktree was changed before the record was refused"
    );
}
