//! `trivial:` per plan and per target, and `protect:`.

use super::*;

#[test]
fn trivial_per_plan_and_per_target() {
    let plan = ok("---\n\
         trivial: counts\n\
         targets:\n  \
           - a.md\n  \
           - {path: b.md, trivial: touched}\n  \
           - path: ./c/\n    \
             trivial: counts\n  \
           - {path: d.md}\n\
         ---\n");
    assert_eq!(plan.trivial, Trivial::Counts);
    let rows: Vec<(String, usize, usize, Option<Trivial>, bool)> = plan
        .targets
        .iter()
        .map(|t| {
            (
                t.spec.clone(),
                t.line,
                t.column,
                t.trivial,
                plan.trivial_counts(t),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("a.md".into(), 4, 5, None, true),
            ("b.md".into(), 5, 12, Some(Trivial::Touched), false),
            ("c/".into(), 6, 11, Some(Trivial::Counts), true),
            ("d.md".into(), 8, 12, None, true),
        ]
    );
    // Without the key, a trivial change counts for no target; the JSON view is the specs.
    let plain = ok("---\ntargets: [a.md, {path: b.md, trivial: counts}]\n---\n");
    assert_eq!(plain.trivial, Trivial::Touched);
    assert!(!plain.trivial_counts(&plain.targets[0]));
    assert!(plain.trivial_counts(&plain.targets[1]));
    assert_eq!(
        serde_json::to_string(&plain).unwrap(),
        r#"{"id":"demo","title":null,"targets":["a.md","b.md"]}"#
    );
}

#[test]
fn rejects_malformed_trivial() {
    insta::assert_snapshot!(errs(&[
        "---\ntrivial: yes\n---\n",
        "---\ntrivial: count\n---\n",
        "---\ntrivial:\n---\n",
        "---\ntargets:\n  - {path: a.md, trivial: [counts]}\n---\n",
        "---\ntargets:\n  - {trivial: counts}\n---\n",
        "---\ntargets:\n  - {path: a.md, trivia: counts}\n---\n",
        "---\ntargets:\n  - {path: 12}\n---\n",
        "---\ntargets:\n  - {path: /etc/x}\n---\n",
        "---\ntargets:\n  - a.md\n  - {path: ./a.md}\n---\n",
    ]), @r#"
        "---\ntrivial: yes\n---\n"
        plans/demo.md:2:10: `trivial` must be `counts` or `touched`, found a boolean `yes`
        hint: `trivial` is `counts` (a change of only whitespace, line endings or file mode is the work) or `touched` (it is not, the default)

        "---\ntrivial: count\n---\n"
        plans/demo.md:2:10: `trivial` must be `counts` or `touched`, found `count`
        hint: `trivial` is `counts` (a change of only whitespace, line endings or file mode is the work) or `touched` (it is not, the default)

        "---\ntrivial:\n---\n"
        plans/demo.md:2:1: `trivial` has no value
        hint: `trivial` is `counts` (a change of only whitespace, line endings or file mode is the work) or `touched` (it is not, the default)

        "---\ntargets:\n  - {path: a.md, trivial: [counts]}\n---\n"
        plans/demo.md:3:27: `trivial` must be `counts` or `touched`, found a list
        hint: `trivial` is `counts` (a change of only whitespace, line endings or file mode is the work) or `touched` (it is not, the default)

        "---\ntargets:\n  - {trivial: counts}\n---\n"
        plans/demo.md:3:5: target mapping has no `path`
        hint: a target is a path string, or a mapping with `path` and `trivial`: `{path: docs/a.md, trivial: counts}`

        "---\ntargets:\n  - {path: a.md, trivia: counts}\n---\n"
        plans/demo.md:3:18: unknown key `trivia` in a target mapping
        hint: a target is a path string, or a mapping with `path` and `trivial`: `{path: docs/a.md, trivial: counts}`

        "---\ntargets:\n  - {path: 12}\n---\n"
        plans/demo.md:3:12: `path` must be a path string, found an integer `12`
        hint: quote it to make it a string: `"12"`

        "---\ntargets:\n  - {path: /etc/x}\n---\n"
        plans/demo.md:3:12: target `/etc/x` is an absolute path
        hint: targets are relative to the repository root: `etc/x`

        "---\ntargets:\n  - a.md\n  - {path: ./a.md}\n---\n"
        plans/demo.md:4:12: duplicate target `./a.md`: line 3 already lists it as `a.md`
        hint: list each path once
        "#);
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
