//! The `targets` entries: the errors of badly written ones, and what each kind matches.

use super::*;

#[test]
fn rejects_badly_shaped_targets() {
    insta::assert_snapshot!(errs(&[
        "---\ntargets: docs/a.md\n---\n",
        "---\ntargets:\n---\n",
        "---\ntargets: 5\n---\n",
        "---\ntargets: {a: b}\n---\n",
    ]), @r#"
        "---\ntargets: docs/a.md\n---\n"
        plans/demo.md:2:10: `targets` must be a list, found string `docs/a.md`
        hint: write it as a list: `targets: [docs/a.md]`

        "---\ntargets:\n---\n"
        plans/demo.md:2:1: `targets` has no value
        hint: list one entry per line (`  - docs/a.md`), or write `targets: []`

        "---\ntargets: 5\n---\n"
        plans/demo.md:2:10: `targets` must be a list, found an integer `5`

        "---\ntargets: {a: b}\n---\n"
        plans/demo.md:2:10: `targets` must be a list, found a mapping
        "#);
}

#[test]
fn rejects_non_string_targets() {
    insta::assert_snapshot!(target_errs(&[
        "123", "1.10", "yes", "~", "", "[a, b]", "a: b",
    ]), @r#"
        - 123
        plans/demo.md:4:5: target must be a path string, found an integer `123`
        hint: quote it to make it a string: `"123"`

        - 1.10
        plans/demo.md:4:5: target must be a path string, found a number `1.10`
        hint: quote it to make it a string: `"1.10"`

        - yes
        plans/demo.md:4:5: target must be a path string, found a boolean `yes`
        hint: quote it to make it a string: `"yes"`

        - ~
        plans/demo.md:4:5: target is empty

        - 
        plans/demo.md:4:5: target is empty

        - [a, b]
        plans/demo.md:4:5: target must be a path string, found a list

        - a: b
        plans/demo.md:4:5: unknown key `a` in a target mapping
        hint: a target is a path string, or a mapping with `path` and `trivial`: `{path: docs/a.md, trivial: counts}`
        "#);
}

#[test]
fn rejects_bad_target_paths() {
    insta::assert_snapshot!(target_errs(&[
        "\"\"",
        "\"   \"",
        "\" docs/a.md\"",
        "\"docs/a.md\\t\"",
        "\"a\\nb\"",
        "/etc/passwd",
        "docs\\a.md",
        "../outside.md",
        "docs/../a.md",
        ".git/config",
        "src/.GIT/x",
        ".git/",
        ".Git",
        ".",
        "./",
        "./.",
        "\"**\"",
        "\"**/*\"",
        "\"**/\"",
        "\"src/[a.md\"",
        "\"src/{a,b.md\"",
        "\"src/[z-a].md\"",
    ]), @r#"
        - ""
        plans/demo.md:4:5: target is empty

        - "   "
        plans/demo.md:4:5: target is empty

        - " docs/a.md"
        plans/demo.md:4:5: target ` docs/a.md` has leading or trailing whitespace
        hint: remove it: `docs/a.md`

        - "docs/a.md\t"
        plans/demo.md:4:5: target `docs/a.md\t` has leading or trailing whitespace
        hint: remove it: `docs/a.md`

        - "a\nb"
        plans/demo.md:4:5: target `a\nb` contains a control character

        - /etc/passwd
        plans/demo.md:4:5: target `/etc/passwd` is an absolute path
        hint: targets are relative to the repository root: `etc/passwd`

        - docs\a.md
        plans/demo.md:4:5: target `docs\a.md` contains a backslash
        hint: use '/' separators: `docs/a.md`

        - ../outside.md
        plans/demo.md:4:5: target `../outside.md` contains a `..` component
        hint: targets name paths inside the repository, relative to its root

        - docs/../a.md
        plans/demo.md:4:5: target `docs/../a.md` contains a `..` component
        hint: targets name paths inside the repository, relative to its root

        - .git/config
        plans/demo.md:4:5: target `.git/config` points into the `.git` directory
        hint: git's own files are never part of a change; remove this target

        - src/.GIT/x
        plans/demo.md:4:5: target `src/.GIT/x` points into the `.git` directory
        hint: git's own files are never part of a change; remove this target

        - .git/
        plans/demo.md:4:5: target `.git/` points into the `.git` directory
        hint: git's own files are never part of a change; remove this target

        - .Git
        plans/demo.md:4:5: target `.Git` points into the `.git` directory
        hint: git's own files are never part of a change; remove this target

        - .
        plans/demo.md:4:5: target `.` names the whole repository
        hint: list the paths the work must touch

        - ./
        plans/demo.md:4:5: target `./` names the whole repository
        hint: list the paths the work must touch

        - ./.
        plans/demo.md:4:5: target `./.` names the whole repository
        hint: list the paths the work must touch

        - "**"
        plans/demo.md:4:5: target `**` names the whole repository
        hint: list the paths the work must touch

        - "**/*"
        plans/demo.md:4:5: target `**/*` names the whole repository
        hint: list the paths the work must touch

        - "**/"
        plans/demo.md:4:5: target `**/` names the whole repository
        hint: list the paths the work must touch

        - "src/[a.md"
        plans/demo.md:4:5: invalid glob `src/[a.md`: unclosed character class; missing ']'
        hint: to match `[`, `{`, `*` or `?` literally, wrap it in brackets, e.g. `[[]`

        - "src/{a,b.md"
        plans/demo.md:4:5: invalid glob `src/{a,b.md`: unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)
        hint: to match `[`, `{`, `*` or `?` literally, wrap it in brackets, e.g. `[[]`

        - "src/[z-a].md"
        plans/demo.md:4:5: invalid glob `src/[z-a].md`: invalid range; 'z' > 'a'
        hint: to match `[`, `{`, `*` or `?` literally, wrap it in brackets, e.g. `[[]`
        "#);
}

#[test]
fn rejects_duplicate_targets() {
    insta::assert_snapshot!(errs(&[
        "---\ntargets:\n  - docs/a.md\n  - src/\n  - docs/a.md\n---\n",
        "---\ntargets:\n  - docs/a.md\n  - ./docs//a.md\n---\n",
        "---\ntargets: [src/, src/.]\n---\n",
    ]), @r#"
        "---\ntargets:\n  - docs/a.md\n  - src/\n  - docs/a.md\n---\n"
        plans/demo.md:5:5: duplicate target `docs/a.md`, already listed on line 3
        hint: list each path once

        "---\ntargets:\n  - docs/a.md\n  - ./docs//a.md\n---\n"
        plans/demo.md:4:5: duplicate target `./docs//a.md`: line 3 already lists it as `docs/a.md`
        hint: list each path once

        "---\ntargets: [src/, src/.]\n---\n"
        plans/demo.md:2:17: duplicate target `src/.`: line 2 already lists it as `src/`
        hint: list each path once
        "#);
}

fn target(spec: &str) -> Target {
    let text = format!("---\ntargets: [\"{spec}\"]\n---\n");
    ok(&text).targets.remove(0)
}

/// Target `spec`: the scope its diff is read in, the paths it matches, and the paths it does
/// not.
fn assert_covers(spec: &str, scope: &str, matching: &[&str], other: &[&str]) -> Target {
    let t = target(spec);
    assert_eq!(t.scope(), scope, "{spec}");
    for path in matching {
        assert!(t.matches(path), "{spec} does not match {path}");
    }
    for path in other {
        assert!(!t.matches(path), "{spec} matches {path}");
    }
    t
}

/// A target without a trailing `/` is a path as git reads a pathspec: itself and everything
/// below it, so `crates` covers `crates/a/lib.rs` and a file `docs/a.md` that became a directory.
#[test]
fn path_targets_match_themselves_and_below() {
    let t = assert_covers(
        "docs/a.md",
        "docs/a.md",
        &["docs/a.md", "docs/a.md/x"],
        &["docs/a.mdx", "docs/a.m", "docs/a.md-x/y", "x/docs/a.md"],
    );
    assert_eq!(t.kind, TargetKind::Path);

    assert_covers(
        "crates",
        "crates",
        &["crates", "crates/a/src/lib.rs"],
        &["crates-old/a.rs", "crates.md", "cratesx"],
    );

    assert_covers(
        "données/é t.md",
        "données/é t.md",
        &["données/é t.md"],
        &["données/e t.md"],
    );
}

#[test]
fn dir_targets_match_everything_below() {
    let t = assert_covers(
        "src/",
        "src",
        &["src/main.rs", "src/a/b/c d.rs"],
        &["src-old/x", "src", "lib/src/x"],
    );
    assert_eq!(t.kind, TargetKind::Dir);

    let t = assert_covers("./a b/ü/", "a b/ü", &["a b/ü/x"], &["a b/üx"]);
    assert_eq!(t.spec, "a b/ü/");
}

#[test]
fn glob_targets_keep_star_within_a_component() {
    let t = assert_covers(
        "tests/**/*_golden.txt",
        "tests",
        &["tests/a_golden.txt", "tests/x/y/a_golden.txt"],
        &["tests/a_golden.txt.bak", "other/tests/a_golden.txt"],
    );
    assert_eq!(t.kind, TargetKind::Glob);

    assert_covers(
        "docs/*.md",
        "docs",
        &["docs/a.md", "docs/with space.md"],
        &["docs/sub/a.md", "docs/a.mdx"],
    );

    assert_covers("*.md", "", &["README.md"], &["docs/a.md"]);

    assert_covers(
        "src/{lexer,parser}/**/*.rs",
        "src",
        &["src/lexer/a.rs", "src/parser/x/y.rs"],
        &["src/other/a.rs"],
    );

    assert_covers(
        "crates/?/src/lib.rs",
        "crates",
        &["crates/a/src/lib.rs"],
        &["crates/ab/src/lib.rs"],
    );

    let t = assert_covers("ünï/*/", "ünï", &["ünï/a/b/c.rs"], &["ünï/a"]);
    assert_eq!(t.spec, "ünï/*/");
}

#[test]
fn glob_looking_file_names_also_match_literally() {
    let t = assert_covers(
        "pages/[id].tsx",
        "pages",
        &["pages/[id].tsx", "pages/i.tsx"],
        &["pages/x.tsx"],
    );
    assert_eq!(t.kind, TargetKind::Glob);

    assert_covers(
        "pages/[[]id].tsx",
        "pages",
        &["pages/[id].tsx"],
        &["pages/i.tsx"],
    );
}
