use std::fmt::Write as _;

use super::*;

const FILE: &str = "plans/demo.md";

fn render(e: &PlanError) -> String {
    match &e.hint {
        Some(h) => format!("{e}\nhint: {h}"),
        None => e.to_string(),
    }
}

fn err(text: &str) -> String {
    err_in(FILE, text)
}

fn err_in(file: &str, text: &str) -> String {
    match parse(file, text) {
        Ok(plan) => panic!("expected an error for {text:?}, got {plan:#?}"),
        Err(e) => render(&e),
    }
}

/// Each case as `input` then its rendered error, so a snapshot reads as a table.
fn errs(cases: &[&str]) -> String {
    cases
        .iter()
        .map(|text| format!("{text:?}\n{}\n", err(text)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Errors for single `targets` entries, each written as raw YAML on line 4 of the plan.
fn target_errs(entries: &[&str]) -> String {
    entries
        .iter()
        .map(|entry| {
            let text = format!("---\ntargets:\n  - docs/ok.md\n  - {entry}\n---\n");
            format!("- {entry}\n{}\n", err(&text))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn summary(plan: &Plan) -> String {
    let mut out = format!(
        "id: {}\ntitle: {:?}\nstages: {:?}\nbody: {:?}\n",
        plan.id, plan.title, plan.stages, plan.body
    );
    for t in &plan.targets {
        writeln!(out, "{}:{} {:?} {}", t.line, t.column, t.kind, t.spec).unwrap();
    }
    out
}

fn ok(text: &str) -> Plan {
    parse(FILE, text).unwrap_or_else(|e| panic!("{}", render(&e)))
}

#[test]
fn parses_a_full_plan() {
    let plan = ok(r#"---
id: parser-rewrite
title: Rewrite the parser
targets:
  - src/parser/            # a directory
  - ./docs//parser.md
  - "tests/**/*_golden.txt"
  - 'src/*/mod.rs'
  - docs/guide/.
  - "[x]"
  - "pages/[id].tsx"
  - données/é t.md
stages: [design, code-1, re_view]
---
# Parser

Body text.
"#);
    insta::assert_snapshot!(summary(&plan), @r##"
        id: parser-rewrite
        title: Some("Rewrite the parser")
        stages: Some(["design", "code-1", "re_view"])
        body: "# Parser\n\nBody text.\n"
        5:5 Dir src/parser/
        6:5 Path docs/parser.md
        7:5 Glob tests/**/*_golden.txt
        8:5 Glob src/*/mod.rs
        9:5 Dir docs/guide/
        10:5 Glob [x]
        11:5 Glob pages/[id].tsx
        12:5 Path données/é t.md
        "##);
}

#[test]
fn parses_minimal_and_empty_frontmatter() {
    let cases = [
        "---\n---\n",
        "---\n---",
        "---\n# just a comment\n---\nbody\n",
        "---\ntargets: []\n---\n",
        "\u{feff}---\r\ntargets:\r\n  - a.md\r\n---\r\nbody\r\n",
        "--- \t\ntargets: [a.md]\n---  \n",
        "---\ntargets:\n- a.md\n- b/\n---\n\n---\nnot frontmatter\n---\n",
    ];
    let out: Vec<String> = cases
        .iter()
        .map(|text| format!("{text:?}\n{}", summary(&ok(text))))
        .collect();
    insta::assert_snapshot!(out.join("\n"), @r#"
        "---\n---\n"
        id: demo
        title: None
        stages: None
        body: ""

        "---\n---"
        id: demo
        title: None
        stages: None
        body: ""

        "---\n# just a comment\n---\nbody\n"
        id: demo
        title: None
        stages: None
        body: "body\n"

        "---\ntargets: []\n---\n"
        id: demo
        title: None
        stages: None
        body: ""

        "\u{feff}---\r\ntargets:\r\n  - a.md\r\n---\r\nbody\r\n"
        id: demo
        title: None
        stages: None
        body: "body\r\n"
        3:5 Path a.md

        "--- \t\ntargets: [a.md]\n---  \n"
        id: demo
        title: None
        stages: None
        body: ""
        2:11 Path a.md

        "---\ntargets:\n- a.md\n- b/\n---\n\n---\nnot frontmatter\n---\n"
        id: demo
        title: None
        stages: None
        body: "\n---\nnot frontmatter\n---\n"
        3:3 Path a.md
        4:3 Dir b/
        "#);
}

#[test]
fn serializes_id_title_and_target_specs() {
    let plan = ok("---\ntitle: T\ntargets: [./a.md, src/]\nstages: [x]\n---\nbody");
    insta::assert_snapshot!(serde_json::to_string(&plan).unwrap(), @r#"{"id":"demo","title":"T","targets":["a.md","src/"]}"#);
}

#[test]
fn rejects_missing_or_unclosed_fences() {
    insta::assert_snapshot!(errs(&[
        "",
        "# Title\n\nno frontmatter\n",
        "\n---\n---\n",
        "---x\n---\n",
        "---\ntargets: [a.md]\n",
        "---\ntargets: [a.md]\n--- x\n",
    ]), @r##"
        ""
        plans/demo.md:1:1: plan is empty; it must start with a `---` line
        hint: a plan starts with a frontmatter block, e.g.
        ---
        targets:
          - docs/a.md
        ---

        "# Title\n\nno frontmatter\n"
        plans/demo.md:1:1: plan must start with a `---` frontmatter line, found `# Title`
        hint: a plan starts with a frontmatter block, e.g.
        ---
        targets:
          - docs/a.md
        ---

        "\n---\n---\n"
        plans/demo.md:1:1: plan must start with a `---` frontmatter line, found ``
        hint: a plan starts with a frontmatter block, e.g.
        ---
        targets:
          - docs/a.md
        ---

        "---x\n---\n"
        plans/demo.md:1:1: plan must start with a `---` frontmatter line, found `---x`
        hint: a plan starts with a frontmatter block, e.g.
        ---
        targets:
          - docs/a.md
        ---

        "---\ntargets: [a.md]\n"
        plans/demo.md:1:1: frontmatter opened by `---` is never closed
        hint: end the frontmatter with a line containing only `---`

        "---\ntargets: [a.md]\n--- x\n"
        plans/demo.md:1:1: frontmatter opened by `---` is never closed
        hint: end the frontmatter with a line containing only `---`
        "##);
}

#[test]
fn rejects_frontmatter_that_is_not_a_mapping() {
    insta::assert_snapshot!(errs(&[
        "---\n- a.md\n- b.md\n---\n",
        "---\nhello\n---\n",
        "---\n42\n---\n",
    ]), @r#"
        "---\n- a.md\n- b.md\n---\n"
        plans/demo.md:2:1: plan frontmatter must be a mapping, found a list
        hint: write `key: value` lines, e.g. `targets: [docs/a.md]`

        "---\nhello\n---\n"
        plans/demo.md:2:1: plan frontmatter must be a mapping, found a string
        hint: write `key: value` lines, e.g. `targets: [docs/a.md]`

        "---\n42\n---\n"
        plans/demo.md:2:1: plan frontmatter must be a mapping, found an integer
        hint: write `key: value` lines, e.g. `targets: [docs/a.md]`
        "#);
}

#[test]
fn reports_yaml_errors_at_their_file_position() {
    insta::assert_snapshot!(errs(&[
        "---\ntargets: [a.md\n---\n",
        "---\ntitle: a: b\n---\n",
        "---\ntargets: [a.md]\ntitle: x\ntargets: [b.md]\n---\n",
        "---\ntargets:\n  - *.md\n---\n",
        "---\ntargets:\n  - {a,b}/x.md\n---\n",
        "---\ntargets:\n  - [abc]*.rs\n---\n",
        "---\ntargets: *.md # all docs\n---\n",
        "---\ntargets:\n  - \"a\\qb\"\n---\n",
    ]), @r#"
        "---\ntargets: [a.md\n---\n"
        plans/demo.md:2:10: invalid yaml in plan frontmatter: unclosed bracket '['

        "---\ntitle: a: b\n---\n"
        plans/demo.md:2:9: invalid yaml in plan frontmatter: mapping values are not allowed in this context

        "---\ntargets: [a.md]\ntitle: x\ntargets: [b.md]\n---\n"
        plans/demo.md:4:1: duplicate key `targets` in plan frontmatter

        "---\ntargets:\n  - *.md\n---\n"
        plans/demo.md:3:5: invalid yaml in plan frontmatter: reference to unknown value
        hint: a leading `*` means something else in YAML; quote the value: `- "*.md"`

        "---\ntargets:\n  - {a,b}/x.md\n---\n"
        plans/demo.md:3:10: invalid yaml in plan frontmatter: while parsing a block collection, did not find expected '-' indicator
        hint: a leading `{` means something else in YAML; quote the value: `- "{a,b}/x.md"`

        "---\ntargets:\n  - [abc]*.rs\n---\n"
        plans/demo.md:3:10: invalid yaml in plan frontmatter: while parsing a block collection, did not find expected '-' indicator
        hint: a leading `[` means something else in YAML; quote the value: `- "[abc]*.rs"`

        "---\ntargets: *.md # all docs\n---\n"
        plans/demo.md:2:10: invalid yaml in plan frontmatter: reference to unknown value
        hint: a leading `*` means something else in YAML; quote the value: `targets: "*.md"`

        "---\ntargets:\n  - \"a\\qb\"\n---\n"
        plans/demo.md:3:5: invalid yaml in plan frontmatter: while parsing a quoted scalar, found unknown escape character
        "#);
}

#[test]
fn rejects_unknown_keys() {
    insta::assert_snapshot!(errs(&[
        "---\ntragets: [a.md]\n---\n",
        "---\ntarget: [a.md]\n---\n",
        "---\nTitle: x\n---\n",
        "---\nix: x\n---\n",
        "---\nfiles: [a.md]\n---\n",
        "---\nx: 1\n---\n",
        "---\n? [a]\n: b\n---\n",
        "---\n1: x\n---\n",
    ]), @r#"
        "---\ntragets: [a.md]\n---\n"
        plans/demo.md:2:1: unknown key `tragets` in plan frontmatter
        hint: did you mean `targets`?

        "---\ntarget: [a.md]\n---\n"
        plans/demo.md:2:1: unknown key `target` in plan frontmatter
        hint: did you mean `targets`?

        "---\nTitle: x\n---\n"
        plans/demo.md:2:1: unknown key `Title` in plan frontmatter
        hint: did you mean `title`?

        "---\nix: x\n---\n"
        plans/demo.md:2:1: unknown key `ix` in plan frontmatter
        hint: did you mean `id`?

        "---\nfiles: [a.md]\n---\n"
        plans/demo.md:2:1: unknown key `files` in plan frontmatter
        hint: known keys are `id`, `title`, `targets`, `stages`, `protect` and `checks`

        "---\nx: 1\n---\n"
        plans/demo.md:2:1: unknown key `x` in plan frontmatter
        hint: known keys are `id`, `title`, `targets`, `stages`, `protect` and `checks`

        "---\n? [a]\n: b\n---\n"
        plans/demo.md:2:3: plan frontmatter keys must be strings, found a list
        hint: known keys are `id`, `title`, `targets`, `stages`, `protect` and `checks`

        "---\n1: x\n---\n"
        plans/demo.md:2:1: plan frontmatter keys must be strings, found an integer
        hint: known keys are `id`, `title`, `targets`, `stages`, `protect` and `checks`
        "#);
}

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
        plans/demo.md:4:5: target must be a path string, found a mapping
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

#[test]
fn rejects_bad_stages() {
    insta::assert_snapshot!(errs(&[
        "---\nstages: build\n---\n",
        "---\nstages:\n---\n",
        "---\nstages: [Build]\n---\n",
        "---\nstages: [1st]\n---\n",
        "---\nstages: [\"\"]\n---\n",
        "---\nstages: [~]\n---\n",
        "---\nstages: [5]\n---\n",
        "---\nstages:\n  - code\n  - review\n  - code\n---\n",
    ]), @r#"
        "---\nstages: build\n---\n"
        plans/demo.md:2:9: `stages` must be a list, found string `build`
        hint: write it as a list: `stages: [build]`

        "---\nstages:\n---\n"
        plans/demo.md:2:1: `stages` has no value
        hint: list one entry per line (`  - design`), or write `stages: []`

        "---\nstages: [Build]\n---\n"
        plans/demo.md:2:10: invalid stage name `Build`
        hint: stage names are a lowercase letter followed by lowercase letters, digits, `_` or `-`, e.g. `build`

        "---\nstages: [1st]\n---\n"
        plans/demo.md:2:10: invalid stage name `1st`
        hint: stage names are a lowercase letter followed by lowercase letters, digits, `_` or `-`, e.g. `st`

        "---\nstages: [\"\"]\n---\n"
        plans/demo.md:2:10: stage is empty

        "---\nstages: [~]\n---\n"
        plans/demo.md:2:10: stage is empty

        "---\nstages: [5]\n---\n"
        plans/demo.md:2:10: stage must be a string, found an integer `5`
        hint: quote it to make it a string: `"5"`

        "---\nstages:\n  - code\n  - review\n  - code\n---\n"
        plans/demo.md:5:5: duplicate stage `code`, already listed on line 3
        hint: list each stage once
        "#);
}

#[test]
fn rejects_bad_ids_and_titles() {
    let long = format!("---\nid: {}\n---\n", "a".repeat(65));
    insta::assert_snapshot!(errs(&[
        "---\nid: My Plan\n---\n",
        "---\nid: -x\n---\n",
        "---\nid: 42\n---\n",
        "---\nid: \"\"\n---\n",
        "---\nid:\n---\n",
        &long,
        "---\ntitle: [a]\n---\n",
        "---\ntitle:\n---\n",
    ]), @r#"
        "---\nid: My Plan\n---\n"
        plans/demo.md:2:5: invalid plan id `My Plan`
        hint: ids are 1 to 64 characters of `a-z`, `0-9`, `.`, `_` or `-`, starting with a letter or digit, e.g. `my-plan`

        "---\nid: -x\n---\n"
        plans/demo.md:2:5: invalid plan id `-x`
        hint: ids are 1 to 64 characters of `a-z`, `0-9`, `.`, `_` or `-`, starting with a letter or digit, e.g. `x`

        "---\nid: 42\n---\n"
        plans/demo.md:2:5: `id` must be a string, found an integer `42`
        hint: quote it to make it a string: `"42"`

        "---\nid: \"\"\n---\n"
        plans/demo.md:2:5: `id` is empty

        "---\nid:\n---\n"
        plans/demo.md:2:1: `id` has no value

        "---\nid: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n---\n"
        plans/demo.md:2:5: plan id `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa` is longer than 64 characters
        hint: ids are 1 to 64 characters of `a-z`, `0-9`, `.`, `_` or `-`, starting with a letter or digit, e.g. `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa`

        "---\ntitle: [a]\n---\n"
        plans/demo.md:2:8: `title` must be a string, found a list

        "---\ntitle:\n---\n"
        plans/demo.md:2:1: `title` has no value
        "#);
}

#[test]
fn derives_the_id_from_the_file_stem() {
    assert_eq!(
        parse("plans/fix-1.2_b.md", "---\n---\n").unwrap().id,
        "fix-1.2_b"
    );
    assert_eq!(parse("a/b/c", "---\n---\n").unwrap().id, "c");
    assert_eq!(parse("Bad Name.md", "---\nid: ok\n---\n").unwrap().id, "ok");
    insta::assert_snapshot!([
        err_in("plans/My Plan.md", "---\ntargets: [a.md]\n---\n"),
        err_in("plans/.md", "---\n---\n"),
        err_in("", "---\n---\n"),
    ].join("\n\n"), @r#"
        plans/My Plan.md:1:1: plan has no `id` and its file name `My Plan` is not a valid id
        hint: add `id: my-plan` to the frontmatter (ids match [a-z0-9][a-z0-9._-]*)

        plans/.md:1:1: plan has no `id` and its file name `.md` is not a valid id
        hint: add `id: md` to the frontmatter (ids match [a-z0-9][a-z0-9._-]*)

        :1:1: plan has no `id` and its file name `` is not a valid id
        hint: add `id: plan` to the frontmatter (ids match [a-z0-9][a-z0-9._-]*)
        "#);
}

fn target(spec: &str) -> Target {
    let text = format!("---\ntargets: [\"{spec}\"]\n---\n");
    ok(&text).targets.remove(0)
}

/// A target without a trailing `/` is a path as git reads a pathspec: itself and everything
/// below it, so `crates` covers `crates/a/lib.rs` and a file `docs/a.md` that became a directory.
#[test]
fn path_targets_match_themselves_and_below() {
    let t = target("docs/a.md");
    assert_eq!(t.kind, TargetKind::Path);
    assert!(t.matches("docs/a.md"));
    assert!(!t.matches("docs/a.mdx"));
    assert!(!t.matches("docs/a.m"));
    assert!(t.matches("docs/a.md/x"));
    assert!(!t.matches("docs/a.md-x/y"));
    assert!(!t.matches("x/docs/a.md"));

    let t = target("crates");
    assert!(t.matches("crates"));
    assert!(t.matches("crates/a/src/lib.rs"));
    assert!(!t.matches("crates-old/a.rs"));
    assert!(!t.matches("crates.md"));
    assert!(!t.matches("cratesx"));
    assert_eq!(t.scope(), "crates");

    let t = target("docs/a.md");
    assert_eq!(t.scope(), "docs/a.md");

    let t = target("données/é t.md");
    assert!(t.matches("données/é t.md"));
    assert!(!t.matches("données/e t.md"));
    assert_eq!(t.scope(), "données/é t.md");
}

#[test]
fn dir_targets_match_everything_below() {
    let t = target("src/");
    assert_eq!(t.kind, TargetKind::Dir);
    assert!(t.matches("src/main.rs"));
    assert!(t.matches("src/a/b/c d.rs"));
    assert!(!t.matches("src-old/x"));
    assert!(!t.matches("src"));
    assert!(!t.matches("lib/src/x"));
    assert_eq!(t.scope(), "src");

    let t = target("./a b/ü/");
    assert_eq!(t.spec, "a b/ü/");
    assert!(t.matches("a b/ü/x"));
    assert!(!t.matches("a b/üx"));
    assert_eq!(t.scope(), "a b/ü");
}

#[test]
fn glob_targets_keep_star_within_a_component() {
    let t = target("tests/**/*_golden.txt");
    assert_eq!(t.kind, TargetKind::Glob);
    assert!(t.matches("tests/a_golden.txt"));
    assert!(t.matches("tests/x/y/a_golden.txt"));
    assert!(!t.matches("tests/a_golden.txt.bak"));
    assert!(!t.matches("other/tests/a_golden.txt"));
    assert_eq!(t.scope(), "tests");

    let t = target("docs/*.md");
    assert!(t.matches("docs/a.md"));
    assert!(t.matches("docs/with space.md"));
    assert!(!t.matches("docs/sub/a.md"));
    assert!(!t.matches("docs/a.mdx"));
    assert_eq!(t.scope(), "docs");

    let t = target("*.md");
    assert!(t.matches("README.md"));
    assert!(!t.matches("docs/a.md"));
    assert_eq!(t.scope(), "");

    let t = target("src/{lexer,parser}/**/*.rs");
    assert!(t.matches("src/lexer/a.rs"));
    assert!(t.matches("src/parser/x/y.rs"));
    assert!(!t.matches("src/other/a.rs"));
    assert_eq!(t.scope(), "src");

    let t = target("crates/?/src/lib.rs");
    assert!(t.matches("crates/a/src/lib.rs"));
    assert!(!t.matches("crates/ab/src/lib.rs"));
    assert_eq!(t.scope(), "crates");

    let t = target("ünï/*/");
    assert_eq!(t.spec, "ünï/*/");
    assert!(t.matches("ünï/a/b/c.rs"));
    assert!(!t.matches("ünï/a"));
    assert_eq!(t.scope(), "ünï");
}

#[test]
fn glob_looking_file_names_also_match_literally() {
    let t = target("pages/[id].tsx");
    assert_eq!(t.kind, TargetKind::Glob);
    assert!(t.matches("pages/[id].tsx"));
    assert!(t.matches("pages/i.tsx"));
    assert!(!t.matches("pages/x.tsx"));
    assert_eq!(t.scope(), "pages");

    let t = target("pages/[[]id].tsx");
    assert!(t.matches("pages/[id].tsx"));
    assert!(!t.matches("pages/i.tsx"));
}

#[test]
fn suggests_close_keys_only() {
    assert_eq!(closest_key("tragets"), Some("targets"));
    assert_eq!(closest_key("target"), Some("targets"));
    assert_eq!(closest_key("TITLE"), Some("title"));
    assert_eq!(closest_key("stage"), Some("stages"));
    assert_eq!(closest_key("ix"), Some("id"));
    assert_eq!(closest_key("x"), None);
    assert_eq!(closest_key("files"), None);
    assert_eq!(closest_key("name"), None);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(edit_distance("ab", "ba"), 1);
    assert_eq!(edit_distance("kitten", "sitting"), 3);
}

/// A small xorshift generator: deterministic, and no dependency needed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap()
    }
}

#[test]
fn never_panics_on_mutated_input() {
    let seeds = [
        "---\nid: a\ntitle: T\ntargets:\n  - src/\n  - \"docs/*.md\"\n  - a.md\nstages: [x, y]\n---\nbody\n",
        "---\ntargets: [a, 'b/**', {c: d}, [e]]\n---\n",
        "\u{feff}---\r\ntargets:\r\n  - ü/\r\n---\r\n",
        "---\nx: &a [*a]\n---\n",
    ];
    let pieces = [
        "---", "\n", "\r\n", "-", " ", ":", "*", "**", "[", "]", "{", "}", "/", "\\", "..", ".git",
        "\"", "'", "#", "&a", "*a", "!!str", "|", ">", "\t", "é", "\u{feff}", "\0", "targets",
        "id", "stages", "title", "~", "?", ",", "<<",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..600 {
        let mut text: Vec<char> = seeds[round % seeds.len()].chars().collect();
        for _ in 0..=rng.below(6) {
            let at = rng.below(text.len() + 1);
            match rng.below(3) {
                0 if at < text.len() => {
                    text.remove(at);
                }
                1 => {
                    let piece = pieces[rng.below(pieces.len())];
                    for (i, c) in piece.chars().enumerate() {
                        text.insert(at + i, c);
                    }
                }
                _ => {
                    let deep = "[".repeat(rng.below(200));
                    for (i, c) in deep.chars().enumerate() {
                        text.insert(at + i, c);
                    }
                }
            }
        }
        let text: String = text.into_iter().collect();
        match parse("p.md", &text) {
            Ok(plan) => {
                for t in &plan.targets {
                    assert!(t.line >= 2 && t.column >= 1, "{text:?}: {t:?}");
                    let _ = t.scope();
                    let _ = t.matches(&t.spec);
                }
            }
            Err(e) => {
                let lines = text.split('\n').count().max(1);
                assert!(e.line >= 1 && e.line <= lines, "{text:?}: {e:?}");
                assert!(e.column >= 1, "{text:?}: {e:?}");
            }
        }
    }
}

#[test]
fn module_doc_example_parses() {
    let mut doc = String::new();
    for line in include_str!("mod.rs")
        .lines()
        .skip_while(|l| *l != "//! ```text")
        .skip(1)
        .take_while(|l| *l != "//! ```")
    {
        let line = line.strip_prefix("//!").unwrap_or(line);
        doc.push_str(line.strip_prefix(' ').unwrap_or(line));
        doc.push('\n');
    }
    let plan = ok(&doc);
    insta::assert_snapshot!(summary(&plan), @r##"
        id: parser-rewrite
        title: Some("Rewrite the parser")
        stages: Some(["design", "code", "docs"])
        body: "# Free-form markdown for the agent\n"
        5:5 Dir src/parser/
        6:5 Path docs/parser.md
        7:5 Glob tests/**/*_golden.txt
        8:5 Glob *.md
        "##);
}

#[test]
fn protect_adds_paths_and_never_empties_or_unprotects() {
    let plan = ok("---\ntargets: [docs/a.md]\nprotect:\n  - deploy/\n  - ./Makefile\n---\n");
    let specs: Vec<&str> = plan.protect.iter().map(|t| t.spec.as_str()).collect();
    assert_eq!(specs, ["deploy/", "Makefile"]);
    assert!(plan.protect[0].matches("deploy/prod.tf"));
    assert_eq!(ok("---\ntargets: [docs/a.md]\n---\n").protect, []);
    assert_eq!(
        err("---\nprotect: []\n---\n"),
        "plans/demo.md:2:1: `protect: []` cannot empty the protected paths: a plan can only \
         add to them\nhint: list paths to protect besides the defaults, or remove the key"
    );
    assert_eq!(
        err("---\nprotect:\n---\n"),
        "plans/demo.md:2:1: `protect` has no value\nhint: list one path per line \
         (`  - deploy/`), or remove the key"
    );
    assert_eq!(
        err("---\nprotect: [\"!.baton.yml\"]\n---\n"),
        "plans/demo.md:2:11: `!.baton.yml` would unprotect a path: `protect` can only add \
         paths\nhint: a plan that targets a protected path may change it"
    );
    assert_eq!(
        err("---\nprotect: [/etc]\n---\n"),
        "plans/demo.md:2:11: protected path `/etc` is an absolute path\nhint: targets are \
         relative to the repository root: `etc`"
    );
    assert!(
        err("---\nprotect: deploy\n---\n")
            .starts_with("plans/demo.md:2:10: `protect` must be a list")
    );
}
