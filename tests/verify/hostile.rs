//! Untrusted text never reaches a terminal or CI raw, and is bounded: hostile reasons, target
//! names, evidence claims and file names through every format, and oversized reasons and
//! evidence files.

use super::*;

/// A reason that tries every trick a reason may hold at once: workflow commands, the legacy `##[`
/// command form, a right-to-left override, and Markdown table and HTML injection. (A reason with
/// a control character is refused, see [`control_characters_in_reasons_are_refused_unechoed`];
/// the path and the target name below carry those.)
const HOSTILE_REASON: &str = "the page is fine as it is ::add-mask::secret ::stop-commands::x ##[set-output name=a;]b | forged | cell | <img src=x onerror=alert(1)> \u{202e}txt.exe\u{2066}";

/// A changed file whose name tries to start an annotation of its own.
const HOSTILE_PATH: &str = "docs/x\n::error file=a::pwned\r##[warning]y.md";

fn hostile_repo() -> (TestRepo, String) {
    let repo = TestRepo::with()
        .plan(
            "plans/p.md",
            "Hostile",
            &["docs/", "notes/b.md", "notes/c.md"],
        )
        .named(&["docs/a.md", "notes/b.md", "notes/c.md"])
        .on_feature();
    repo.write(HOSTILE_PATH, "evil\n");
    repo.commit_all("add a file");
    let evidence = json!({"target_coverage": [
        {"target": "notes/b.md", "status": "unchanged", "reason": HOSTILE_REASON},
        {"target": "\u{1b}[31mnotes/zzz.md\n::error::x", "status": "unchanged", "reason": "the escape code is the target name"},
        {"target": "notes/c.md", "status": "changed", "paths": ["notes/c.md\n::warning::fake"]},
    ]});
    repo.write("evidence.json", &evidence.to_string());
    let args = "plans/p.md --base main --head feature --evidence evidence.json".to_owned();
    (repo, args)
}

/// No control character but the line break, no C1 control, no bidirectional or invisible
/// formatting character, and no `##[` runner command anywhere.
#[track_caller]
fn assert_inert(what: &str, text: &str) {
    for c in text.chars() {
        let code = u32::from(c);
        let bad = (code < 0x20 && c != '\n')
            || (0x7f..=0x9f).contains(&code)
            || matches!(code, 0x061c | 0x200b..=0x200f | 0x2028..=0x202e | 0x2060..=0x2069 | 0xfeff);
        assert!(!bad, "{what}: raw U+{code:04X} in:\n{text}");
    }
    assert!(
        !text.contains("##["),
        "{what}: a runner command in:\n{text}"
    );
}

#[test]
fn hostile_text_is_escaped_in_every_human_format() {
    let (repo, args) = hostile_repo();

    let text = verify(&repo, &args);
    assert_eq!(text.code, 1, "{text}");
    assert_inert("text", &text.stdout);
    let report = text.stdout.clone();
    let named = |run| named(run, &repo, &[("main", "<main>")]).to_string();
    assert_snapshot!(named(text), @r#"
        exit: 1
        --- stdout
        verifying main...feature (merge base <main>)

        plan plans/p.md (p): failed: 1 of 3 targets uncovered, 2 evidence problem(s)
          changed    docs/       docs/x\n::error file=a::pwned\r#\u{23}[warning]y.md
          unchanged  notes/b.md  because: the page is fine as it is ::add-mask::secret ::stop-commands::x #\u{23}[set-output name=a;]b | forged | cell | <img src=x onerror=alert(1)> \u{202e}txt.exe\u{2066} (evidence.json: entry 0)
          uncovered  notes/c.md  no change and no reason (plans/p.md:6)
          problem    evidence.json: entry 1: target "\u{1b}[31mnotes/zzz.md\n::error::x" is not declared by the plan
          problem    evidence.json: entry 2: claims "notes/c.md\n::warning::fake" changed for target "notes/c.md", but the diff does not change it

        gate failed: 1 of 1 plan(s) not covered
        <the covering hint>
        "#);

    // GitHub: the only workflow commands are ours. Annotations come first, one per line; the
    // report between the stop and resume lines holds no line that starts a command.
    let github = verify(&repo, &format!("{args} --format github"));
    assert_inert("github", &github.stdout);
    let lines: Vec<&str> = github.stdout.lines().collect();
    let stop = lines
        .iter()
        .position(|l| l.starts_with("::stop-commands::"))
        .expect("the report is enclosed");
    for line in &lines[..stop] {
        assert!(
            line.starts_with("::error file=plans/p.md,line="),
            "not an annotation of ours: {line}"
        );
    }
    for line in &lines[stop + 1..lines.len() - 1] {
        assert!(
            !line.trim_start().starts_with("::"),
            "a command in the report: {line}"
        );
    }
    // What is enclosed is the text report, as it is.
    assert_eq!(
        lines[stop + 1..lines.len() - 1],
        *report.lines().collect::<Vec<_>>()
    );
    let github = tokenless(github, &repo).replace(&report, "<the text report>\n");
    assert_snapshot!(named(github), @r#"
        exit: 1
        --- stdout
        ::error file=plans/p.md,line=6,title=uncovered target notes/c.md::`notes/c.md` has no changed path in main...feature and no recorded reason why it needed no change
        ::error file=plans/p.md,line=1,title=invalid evidence::evidence.json: entry 1: target "\u{1b}[31mnotes/zzz.md\n::error::x" is not declared by the plan
        ::error file=plans/p.md,line=6,title=invalid evidence::evidence.json: entry 2: claims "notes/c.md\n::warning::fake" changed for target "notes/c.md", but the diff does not change it
        ::stop-commands::<token>
        <the text report>
        ::<token>::
        "#);

    // Markdown: every table row has its three cells, and no HTML but the `<code>` we write.
    let markdown = verify(&repo, &format!("{args} --format markdown"));
    assert_inert("markdown", &markdown.stdout);
    for row in markdown.stdout.lines().filter(|l| l.starts_with('|')) {
        assert_eq!(cells(row), 3, "a row with other cells than ours: {row}");
    }
    let html = markdown.stdout.replace("<code>", "").replace("</code>", "");
    assert!(!html.contains('<'), "{}", markdown.stdout);
    assert_snapshot!(named(markdown), @r#"
        exit: 1
        --- stdout
        ## git-baton coverage: failed

        Checked main...feature (merge base `<main>`).

        ### `plans/p.md` (p): failed: 1 of 3 targets uncovered, 2 evidence problem(s)

        | target | status | paths or reason |
        |---|---|---|
        | `docs/` | changed | <code>docs/x\\n::error file=a::pwned\\r\#\\u{23}\[warning\]y.md</code> |
        | `notes/b.md` | unchanged | the page is fine as it is ::add-mask::secret ::stop-commands::x \#\\u{23}\[set-output name=a;\]b \| forged \| cell \| &lt;img src=x onerror=alert(1)&gt; \\u{202e}txt.exe\\u{2066} |
        | `notes/c.md` | uncovered | **no change and no reason** |

        - problem: evidence.json: entry 1: target "\\u{1b}\[31mnotes/zzz.md\\n::error::x" is not declared by the plan
        - problem: evidence.json: entry 2: claims "notes/c.md\\n::warning::fake" changed for target "notes/c.md", but the diff does not change it
        "#);

    // JSON stays exact.
    let json = verify(&repo, &format!("{args} --json")).json();
    let rows = &json["plans"][0]["coverage"]["targets"];
    assert_eq!(rows[0]["paths"][0], HOSTILE_PATH);
    assert_eq!(rows[1]["reason"], HOSTILE_REASON);
}

/// The cells of a GitHub table row: split at pipes no backslash escapes.
fn cells(row: &str) -> usize {
    let inner = row.trim().trim_start_matches('|').trim_end_matches('|');
    let (mut count, mut escaped) = (1, false);
    for c in inner.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '|' => count += 1,
            _ => {}
        }
    }
    count
}

/// Errors quote plans and paths too; they reach stderr, which CI reads for commands as well.
#[test]
fn hostile_text_is_escaped_in_errors() {
    let repo = TestRepo::with().named(&["docs/a.md"]).on_feature();
    std::fs::create_dir_all(repo.path("plans")).unwrap();
    repo.write(
        "plans/p.md",
        "---\ntargets:\n  - \"docs/\\e]0;owned\\a\\n::error::x.md\"\n---\n",
    );
    let run = verify(&repo, "plans/p.md --base main");
    assert_eq!(run.code, 2, "{run}");
    assert_inert("stderr", &run.stderr);
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: plans/p.md:3:5: target `docs/\u{1b}]0;owned\u{7}\n::error::x.md` contains a control character
        ");

    // Whatever the message quotes, the `error:` line stays one inert line.
    let name = "p\u{1b}[2J\n::error::x\u{202e}.md";
    let run = repo.baton(["verify", name, "--base", "main"]);
    assert_eq!(run.code, 2, "{run}");
    assert_inert("stderr", &run.stderr);
    assert_snapshot!(run.to_string(), @r"
        exit: 2
        --- stderr
        error: cannot read plan p\u{1b}[2J\n::error::x\u{202e}.md: no such file
        ");
}

/// A reason over the limit is refused as a bad reason, from an evidence file or a trailer, and
/// is never echoed: the report stays small however long the reason is.
#[test]
fn overlong_reasons_are_refused_unechoed() {
    let repo = TestRepo::with()
        .plan("plans/p.md", "Docs", &["docs/a.md", "docs/b.md"])
        .named(&["docs/a.md", "docs/b.md"])
        .on_feature();
    let long = "word ".repeat(20_000);
    let evidence = json!({"target_coverage": [
        {"target": "docs/a.md", "status": "unchanged", "reason": long},
    ]});
    repo.write("evidence.json", &evidence.to_string());
    repo.commit_message("Explain", &format!("Baton-Unchanged: docs/b.md: {long}"));

    let run = verify(
        &repo,
        "plans/p.md --base main --head feature --evidence evidence.json",
    );
    assert_snapshot!(named(run, &repo, &[("main", "<main>"), ("feature", "<trailer>")]).to_string(), @r#"
        exit: 1
        --- stdout
        verifying main...feature (merge base <main>)

        plan plans/p.md (p): failed: 2 of 2 targets uncovered, 2 evidence problem(s)
          uncovered  docs/a.md  no change and no reason (plans/p.md:4)
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)
          problem    evidence.json: entry 0: reason for target "docs/a.md" is 99999 characters long, over the limit of 2000: give the specific reason in a sentence or two
          problem    commit <trailer> trailer: reason for target "docs/b.md" is 99999 characters long, over the limit of 2000: give the specific reason in a sentence or two

        gate failed: 1 of 1 plan(s) not covered
        <the covering hint>
        "#);
    for format in ["json", "github", "markdown"] {
        let run = verify(
            &repo,
            &format!(
                "plans/p.md --base main --head feature --evidence evidence.json --format {format}"
            ),
        );
        assert_eq!(run.code, 1);
        assert!(
            run.stdout.len() < 8_000,
            "{format}: {} bytes",
            run.stdout.len()
        );
    }
}

/// A reason with a control character (but a tab) is refused from an evidence file and from a
/// trailer alike, located by character and never echoed, even for a target the diff changed:
/// what passes the gate must survive the one-line trailer `finish` writes.
#[test]
fn control_characters_in_reasons_are_refused_unechoed() {
    let repo = TestRepo::with()
        .plan(
            "plans/p.md",
            "Docs",
            &["docs/a.md", "docs/b.md", "docs/c.md"],
        )
        .named(&["docs/a.md", "docs/b.md", "docs/c.md"])
        .on_feature();
    let evidence = json!({"target_coverage": [
        {"target": "docs/a.md", "status": "unchanged", "reason": "the page\u{0} is fine as it is"},
        {"target": "docs/c.md", "status": "unchanged", "reason": "two lines\nof a reason that the diff overrules"},
    ]});
    repo.write("evidence.json", &evidence.to_string());
    repo.write("docs/c.md", "changed\n");
    repo.commit_all("change c");
    repo.commit_message(
        "Explain",
        "Baton-Unchanged: docs/b.md: an \u{1b}[2J escape and a bell \u{7} in it",
    );

    let args = "plans/p.md --base main --head feature --evidence evidence.json";
    let run = verify(&repo, args);
    assert_inert("text", &run.stdout);
    assert_snapshot!(named(run, &repo, &[("main", "<main>"), ("feature", "<trailer>")]).to_string(), @r#"
        exit: 1
        --- stdout
        verifying main...feature (merge base <main>)

        plan plans/p.md (p): failed: 2 of 3 targets uncovered, 3 evidence problem(s)
          uncovered  docs/a.md  no change and no reason (plans/p.md:4)
          uncovered  docs/b.md  no change and no reason (plans/p.md:5)
          changed    docs/c.md  docs/c.md
          problem    evidence.json: entry 0: reason for target "docs/a.md" holds a control character at character 9 (U+0000): write the reason as plain text on one line
          problem    evidence.json: entry 1: reason for target "docs/c.md" holds a control character at character 10 (U+000A): write the reason as plain text on one line
          problem    commit <trailer> trailer: reason for target "docs/b.md" holds a control character at character 4 (U+001B): write the reason as plain text on one line

        gate failed: 1 of 1 plan(s) not covered
        <the covering hint>
        "#);
    let json = verify(&repo, &format!("{args} --json")).json();
    let kinds: Vec<&str> = json["plans"][0]["coverage"]["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["control_character"; 3]);
    assert!(
        json["plans"][0]["coverage"]["contradictions"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

/// An evidence file over 1 MiB is refused before it is read (exit 2, naming it): a file that
/// would never end, like /dev/zero, is refused as promptly as a large one.
#[test]
fn oversized_evidence_is_refused_before_it_is_read() {
    let repo = TestRepo::with().one_doc().on_feature();
    let entry =
        r#"{"target": "docs/a.md", "status": "unchanged", "reason": "kept as it was before"}"#;
    let mut big = String::from(r#"{"target_coverage": ["#);
    while big.len() <= 1024 * 1024 {
        big.push_str(entry);
        big.push(',');
    }
    big.push_str(entry);
    big.push_str("]}");
    repo.write("big.json", &big);

    let refused = verify(&repo, "plans/p.md --base main --evidence big.json").to_string();
    assert_snapshot!(refused, @r"
        exit: 2
        --- stderr
        error: evidence file big.json is larger than 1 MiB, the limit for an evidence file
        hint: an evidence file holds one entry per target, with a reason of a sentence or two; see docs/plan-format.md#evidence-files
        ");
    assert_same(
        &verify(&repo, "plans/p.md --base main --evidence /dev/zero").to_string(),
        &refused,
        &[("big.json", "/dev/zero")],
    );
}
