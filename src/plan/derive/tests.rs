//! The derivation rules, each on strings: where a path may be named, what is refused, which
//! mentions are targets.

use super::*;

/// Each mention of `body` as `path line:column form`.
fn paths(body: &str) -> Vec<String> {
    mentions(body, 1, "plans")
        .into_iter()
        .map(|m| format!("{} {}:{} {:?}", m.path, m.line, m.column, m.form))
        .collect()
}

/// The paths `body` names, without where.
fn named(body: &str) -> Vec<String> {
    mentions(body, 1, "plans")
        .into_iter()
        .map(|m| m.path)
        .collect()
}

#[test]
fn code_spans_links_and_prose_each_name_paths() {
    let body = "Fix `docs/a.md` and [the check](../docs/b.md).\nThen docs/c.md, too.\n";
    assert_eq!(
        paths(body),
        [
            "docs/a.md 1:6 CodeSpan",
            "docs/b.md 1:33 Link",
            "docs/c.md 2:6 Prose",
        ]
    );
}

#[test]
fn fenced_blocks_comments_images_and_urls_are_not_read() {
    let body = "```sh\ncat docs/a.md\n```\n<!-- docs/b.md -->\n![shot](img/x.png)\n\
                See https://example.com/docs/c.md and <https://x.y/z.md>.\n~~~~\nsrc/x.rs\n~~~~\n";
    assert_eq!(paths(body), Vec::<String>::new());
}

#[test]
fn a_comment_across_lines_hides_everything_inside() {
    let body = "a <!-- start\ndocs/a.md\nend --> docs/b.md\n";
    assert_eq!(paths(body), vec!["docs/b.md 3:9 Prose"]);
}

#[test]
fn links_resolve_against_the_plan_directory_and_root_links_against_the_root() {
    let body = "[a](a.md) [b](/docs/b.md) [c](./sub/c.md#section) [up](../../x.md)\n";
    let found = named(body);
    assert_eq!(found, vec!["plans/a.md", "docs/b.md", "plans/sub/c.md"]);
}

#[test]
fn reference_definitions_are_links() {
    let body = "See [the overview][ov].\n\n[ov]: ../docs/overview.md \"Overview\"\n";
    assert_eq!(paths(body), vec!["docs/overview.md 3:7 Link"]);
}

#[test]
fn words_that_are_no_paths_are_skipped() {
    let body = "e.g. i.e. v1.2.3 node.js? `git baton check` `foo()` --flag ~/x.md /etc/passwd \
                *.md src/**/x.rs a//b docs/{a,b}.md\n";
    // `node.js` looks like a file name; whether it is a target is `derive`'s question.
    assert_eq!(named(body), vec!["node.js"]);
}

#[test]
fn line_suffixes_fragments_and_sentence_punctuation_are_dropped() {
    let body = "In `src/lib.rs:42:7`, see (src/main.rs). Also **README.md** and \"docs/x.md\".\n";
    assert_eq!(
        named(body),
        vec!["src/lib.rs", "src/main.rs", "README.md", "docs/x.md"]
    );
}

#[test]
fn git_directory_and_escaping_paths_are_never_mentions() {
    let body = "`.git/config` `../outside.md` [x](../../../etc/x.md) `a/../../b.md`\n";
    assert_eq!(paths(body), Vec::<String>::new());
}

fn base(path: &str) -> Existence {
    match path {
        "docs/a.md" | "README.md" => Existence::File,
        "docs" | "src/parser" => Existence::Dir,
        "docs/new.md" | "node.js" | "CHANGELOG.md" | "state.json" | "evidence.json" => {
            Existence::ParentDir
        }
        _ => Existence::Nothing,
    }
}

/// The targets and the not-found paths derived from `body` against `base`.
fn derived(body: &str) -> (Vec<String>, Vec<String>) {
    derived_in(base, body)
}

fn derived_in(base: fn(&str) -> Existence, body: &str) -> (Vec<String>, Vec<String>) {
    let d = derive(&mentions(body, 1, ""), base);
    (
        d.targets.iter().map(|t| t.target.spec.clone()).collect(),
        d.not_found.iter().map(|m| m.path.clone()).collect(),
    )
}

#[test]
fn existing_paths_become_targets_and_directories_keep_their_slash() {
    assert_eq!(
        derived("`docs/a.md` and src/parser and `docs/a.md` again, README.md\n"),
        (
            vec!["docs/a.md".into(), "src/parser/".into(), "README.md".into()],
            vec![]
        )
    );
}

#[test]
fn a_new_file_counts_only_when_named_deliberately() {
    assert_eq!(
        derived("Create `./CHANGELOG.md` and docs/new.md; node.js is the runtime. `docs/x/y.md`\n"),
        (
            vec!["CHANGELOG.md".into(), "docs/new.md".into()],
            vec!["docs/x/y.md".into()]
        )
    );
}

#[test]
fn a_bare_file_name_that_is_not_at_the_root_is_no_new_file() {
    assert_eq!(
        derived("Each attempt writes `state.json` and `evidence.json`.\n"),
        (vec![], vec![])
    );
    assert_eq!(
        derived("Compare `main..HEAD` and `a/b...c`.\n"),
        (vec![], vec![])
    );
}

#[test]
fn a_file_written_as_a_directory_is_not_found() {
    assert_eq!(
        derived("`docs/a.md/`\n"),
        (vec![], vec!["docs/a.md/".into()])
    );
}

#[test]
fn the_body_starts_after_the_frontmatter() {
    let text = "---\ntargets: []\n---\n# Title\n";
    assert_eq!(body_first_line(text, "# Title\n"), 4);
    assert_eq!(body_first_line("x", "x"), 1);
}

#[test]
fn wide_characters_inside_spans_and_links_move_nothing() {
    let body = "`– (日本) –` then `docs/ä.md` [ü](../x/ö.md) and y/ß.md\n";
    assert_eq!(
        paths(body),
        [
            "docs/ä.md 1:18 CodeSpan",
            "x/ö.md 1:33 Link",
            "y/ß.md 1:48 Prose",
        ]
    );
}

#[test]
fn links_and_images_on_one_line_never_overlap() {
    // Two image links after wide characters: the second one's text once reached back into
    // the first's range, and blanking it cut a character in half.
    assert_eq!(paths("![€€é](a)](b)é\n"), Vec::<String>::new());
    assert_eq!(
        named("![a](x.png) [b](../docs/b.md) ![€](y.png) [c](c.md)\n"),
        vec!["docs/b.md", "plans/c.md"]
    );
}

proptest::proptest! {
    /// Any text at all: no panic, and every mention points inside its line.
    #[test]
    fn any_body_is_read_without_a_panic(body in "(\\PC|[`\\[\\]()<>!#/.:~ -]){0,200}(\n(\\PC|[`\\[\\]()/.]){0,80}){0,4}") {
        for m in mentions(&body, 1, "plans") {
            let line = body.lines().nth(m.line - 1).unwrap_or("");
            proptest::prop_assert!(m.column <= line.chars().count() + 1);
            proptest::prop_assert!(!m.path.is_empty());
        }
    }
}

#[test]
fn columns_count_characters() {
    let body = "Überprüfe `docs/a.md`\n";
    assert_eq!(paths(body), ["docs/a.md 1:12 CodeSpan"]);
}

/// What the base of a Next.js-style repository holds.
fn routes(path: &str) -> Existence {
    match path {
        "pages/[id].tsx" | "pages/[...slug].tsx" | "[root].md" => Existence::File,
        "app/[team]" | "pages" | "app" => Existence::Dir,
        "pages/[new].tsx" | "pages/[id.tsx" => Existence::ParentDir,
        _ => Existence::Nothing,
    }
}

#[test]
fn a_code_span_naming_a_file_with_brackets_is_a_target_when_the_base_has_it() {
    let (targets, not_found) = derived_in(
        routes,
        "Fix `pages/[id].tsx`, `pages/[...slug].tsx`, `app/[team]/` and `[root].md`.\n",
    );
    assert_eq!(
        targets,
        [
            "pages/[id].tsx",
            "pages/[...slug].tsx",
            "app/[team]/",
            "[root].md"
        ]
    );
    assert_eq!(not_found, Vec::<String>::new());
    // The target matches the file itself, as a declared `pages/[id].tsx` does.
    let d = derive(&mentions("`pages/[id].tsx`\n", 1, ""), routes);
    assert!(d.targets[0].target.matches("pages/[id].tsx"));
    assert!(d.targets[0].exists);
    // One that is no valid glob is escaped into one that matches it literally.
    let d = derive(&mentions("`app/[z-a].md`\n", 1, ""), |p| match p {
        "app/[z-a].md" => Existence::File,
        _ => Existence::Nothing,
    });
    assert_eq!(d.targets[0].target.spec, "app/[[]z-a].md");
    assert!(d.targets[0].target.matches("app/[z-a].md"));
}

#[test]
fn brackets_name_no_file_to_create_and_stay_globs_in_prose_and_links() {
    // A bracketed name the base lacks is a pattern or a file to be: never created as a target.
    assert_eq!(
        derived_in(
            routes,
            "Add `pages/[new].tsx` like `pages/[id].tsx`; see `pages/[id.tsx`.\n"
        ),
        (
            vec!["pages/[id].tsx".into()],
            vec!["pages/[new].tsx".into(), "pages/[id.tsx".into()]
        )
    );
    // Prose and links: globs and brackets are refused as before, whatever the base holds.
    assert_eq!(
        derived_in(
            routes,
            "Fix pages/[id].tsx and [the page](../pages/[id].tsx).\n"
        ),
        (vec![], vec![])
    );
    assert_eq!(
        derived_in(routes, "`pages/*.tsx` `pages/{a,b}.tsx` `pages/?.tsx`\n"),
        (vec![], vec![])
    );
}

proptest::proptest! {
    /// Any bracketed file name in a code span is derived exactly when the base has it.
    #[test]
    fn a_bracketed_code_span_is_derived_iff_the_file_exists(
        dir in "[a-z]{1,8}",
        inner in "(\\.\\.\\.)?[a-z][a-z0-9_-]{0,8}",
        ext in "(tsx|ts|svelte|md)",
        present in proptest::bool::ANY,
    ) {
        let path = format!("{dir}/[{inner}].{ext}");
        let body = format!("Change `{path}` now.\n");
        let found = derive(&mentions(&body, 1, ""), |p| match p {
            p if p == path && present => Existence::File,
            p if p == dir => Existence::Dir,
            p if p == path => Existence::ParentDir,
            _ => Existence::Nothing,
        });
        let specs: Vec<&str> = found.targets.iter().map(|t| t.target.spec.as_str()).collect();
        if present {
            proptest::prop_assert_eq!(specs.len(), 1);
            proptest::prop_assert!(found.targets[0].target.matches(&path));
        } else {
            proptest::prop_assert!(specs.is_empty());
        }
    }
}

/// A body of one long line (a pasted log, minified text) names what its pieces name, each at
/// its own column: the columns are counted on along the line, not from its start for every word,
/// and they are the ones each piece alone gives, shifted by the pieces before it.
#[test]
fn a_long_line_names_what_its_pieces_name_at_their_columns() {
    let piece = "Fix `docs/a.md` and [the “check”](../docs/b.md) — ünïcode docs/c.md, \
                 ![shot](img/x.png) `` src/lib.rs `` “docs/d.md”. <!-- docs/e.md --> ";
    let width = piece.chars().count();
    let alone = mentions(piece, 1, "plans");
    assert_eq!(
        alone
            .iter()
            .map(|m| format!("{} {}", m.path, m.column))
            .collect::<Vec<_>>(),
        [
            "docs/a.md 6",
            "docs/b.md 35",
            "docs/c.md 59",
            "src/lib.rs 92",
            "docs/d.md 107"
        ]
    );
    let repeats = 2_000;
    let line = piece.repeat(repeats);
    let long = mentions(&line, 1, "plans");
    let expected: Vec<(String, usize, Form)> = (0..repeats)
        .flat_map(|r| {
            alone
                .iter()
                .map(move |m| (m.path.clone(), m.column + r * width, m.form))
        })
        .collect();
    let got: Vec<(String, usize, Form)> = long
        .into_iter()
        .map(|m| (m.path, m.column, m.form))
        .collect();
    assert_eq!(got.len(), expected.len());
    assert_eq!(got, expected);
}

/// Backtick runs that nothing closes are skipped, and the runs after them still pair.
#[test]
fn unclosed_backtick_runs_leave_later_spans_alone() {
    assert_eq!(
        paths("a ``` docs/x.md `` y ` docs/b.md `\n"),
        ["docs/x.md 1:7 Prose", "docs/b.md 1:24 CodeSpan"]
    );
    let many = format!("{}`docs/a.md`", "`` ".repeat(5_000));
    assert_eq!(named(&many), ["docs/a.md"]);
}

proptest::proptest! {
    /// Columns counted on from offset to offset, in any order, are those counted from the start.
    #[test]
    fn columns_counted_on_are_columns_counted_from_the_start(
        line in "\\PC{0,60}",
        picks in proptest::collection::vec(0usize..64, 0..12),
    ) {
        let bounds: Vec<usize> = (0..=line.len()).filter(|&b| line.is_char_boundary(b)).collect();
        let mut columns = Columns::new(&line);
        for pick in picks {
            let byte = bounds[pick % bounds.len()];
            proptest::prop_assert_eq!(columns.at(byte), column_of(&line, byte));
        }
    }
}
