//! Parsing a plan: its fences, frontmatter keys, stages, id and title, and their errors.

use super::*;

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
fn a_mistyped_key_is_told_the_key_it_is_nearest() {
    for (typo, meant) in [
        ("tragets", "targets"),
        ("target", "targets"),
        ("Title", "title"),
        ("ix", "id"),
    ] {
        assert_eq!(
            err(&format!("---\n{typo}: x\n---\n")),
            format!(
                "plans/demo.md:2:1: unknown key `{typo}` in plan frontmatter\n\
                 hint: did you mean `{meant}`?"
            ),
        );
    }
}

#[test]
fn rejects_unknown_keys() {
    insta::assert_snapshot!(errs(&[
        "---\nfiles: [a.md]\n---\n",
        "---\nx: 1\n---\n",
        "---\n? [a]\n: b\n---\n",
        "---\n1: x\n---\n",
    ]), @r#"
        "---\nfiles: [a.md]\n---\n"
        plans/demo.md:2:1: unknown key `files` in plan frontmatter
        hint: known keys are `id`, `title`, `targets`, `stages`, `protect`, `checks` and `trivial`

        "---\nx: 1\n---\n"
        plans/demo.md:2:1: unknown key `x` in plan frontmatter
        hint: known keys are `id`, `title`, `targets`, `stages`, `protect`, `checks` and `trivial`

        "---\n? [a]\n: b\n---\n"
        plans/demo.md:2:3: plan frontmatter keys must be strings, found a list
        hint: known keys are `id`, `title`, `targets`, `stages`, `protect`, `checks` and `trivial`

        "---\n1: x\n---\n"
        plans/demo.md:2:1: plan frontmatter keys must be strings, found an integer
        hint: known keys are `id`, `title`, `targets`, `stages`, `protect`, `checks` and `trivial`
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

#[test]
fn module_doc_example_parses() {
    let mut doc = String::new();
    for line in include_str!("../mod.rs")
        .lines()
        .skip_while(|l| *l != "//! ```text")
        .skip(1)
        .take_while(|l| *l != "//! ```")
    {
        let line = line.strip_prefix("//!").unwrap_or(line);
        doc.push_str(line.strip_prefix(' ').unwrap_or(line));
        doc.push('\n');
    }
    // What the example's comments say of each line.
    let plan = ok(&doc);
    assert_eq!(plan.id, "parser-rewrite");
    assert_eq!(plan.title.as_deref(), Some("Rewrite the parser"));
    assert_eq!(
        plan.stages,
        Some(vec!["design".into(), "code".into(), "docs".into()])
    );
    assert_eq!(plan.trivial, Trivial::Counts);
    assert_eq!(plan.body, "# Free-form markdown for the agent\n");
    let targets: Vec<_> = plan
        .targets
        .iter()
        .map(|t| (t.kind.clone(), t.spec.as_str()))
        .collect();
    assert_eq!(
        targets,
        [
            (TargetKind::Dir, "src/parser/"),
            (TargetKind::Path, "docs/parser.md"),
            (TargetKind::Glob, "tests/**/*_golden.txt"),
            (TargetKind::Glob, "*.md"),
        ]
    );
}
