//! `notify:` end to end (docs/notify.md): runs driven by the fake agent end blocked, failed, in
//! review and rate limited, and the configured command — testdata/notify/notifier.sh, which
//! keeps each document it is given — is told of each change once, with a document that says
//! what `status --json` says; a command that fails, is missing or outlasts its timeout is a
//! warning, and the run ends as it would have without it.

use super::schemas::{assert_valid, schema};
use super::*;

const NOTIFIER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/notify/notifier.sh");

/// `notify:` running the notifier into `dir` with `verbs` after it, and `settings` (YAML lines
/// of the mapping: `timeout: 1`, `on: [review]`).
fn notify_into(dir: &Path, verbs: &[&str], settings: &[&str]) -> String {
    let mut argv = vec![
        serde_json::to_string(NOTIFIER).unwrap(),
        serde_json::to_string(dir.to_str().unwrap()).unwrap(),
    ];
    argv.extend(verbs.iter().map(|v| serde_json::to_string(v).unwrap()));
    let mut yaml = format!("notify:\n  command: [{}]\n", argv.join(", "));
    for line in settings {
        yaml.push_str(&format!("  {line}\n"));
    }
    yaml
}

/// The documents the notifier was given, in order.
fn documents(dir: &Path) -> Vec<Value> {
    (1..)
        .map(|n| dir.join(format!("{n}.json")))
        .take_while(|path| path.exists())
        .map(|path| serde_json::from_str(&text(&path)).unwrap())
        .collect()
}

/// The `event` of each document told to `dir`, in order.
fn events(dir: &Path) -> Vec<String> {
    documents(dir)
        .iter()
        .map(|d| d["event"].as_str().expect("an event").to_owned())
        .collect()
}

/// The agent that edits one of the three targets: the gate blocks its attempt.
fn lazy() -> Actor {
    Actor::agent("lazy").edit("docs/a.md", "rule: grade A")
}

/// Holds `doc` to the run as `status --json` shows it after the change: the same run, plan,
/// status, latest attempt, error, branch and worktree, dated when the run last changed.
fn assert_describes(repo: &TestRepo, doc: &Value, state: &Value) {
    assert_valid(&schema("notify.schema.json"), doc, "the notify document");
    assert_eq!(doc["schema"], "git-baton/notify/1");
    assert_eq!(doc["run_id"], state["run_id"]);
    assert_eq!(
        doc["plan"],
        serde_json::json!({
            "id": state["plan"]["id"],
            "title": state["plan"]["title"],
            "path": "plans/fix.md",
        })
    );
    assert_eq!(doc["plan"]["title"], "Fix the grading documents");
    assert_eq!(doc["status"], state["status"]);
    let (stage, attempt) = state["stages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find_map(|s| Some((s, s["attempts"].as_array()?.last()?)))
        .unwrap();
    assert_eq!(doc["stage"], stage["name"]);
    assert_eq!(doc["attempt"], attempt["n"]);
    assert_eq!(doc["actor"], attempt["actor"]);
    assert_eq!(doc["error"], state["error"]["message"]);
    assert_eq!(doc["branch"], state["branch"]);
    // `status --json` as the harness shows it, with the temporary directory as `$TMP`.
    let worktree = doc["worktree"].as_str().unwrap();
    assert_eq!(shown_tmp(repo, worktree), state["worktree"]);
    assert_eq!(doc["at"], state["updated_at"]);
}

/// `text` with the repository's temporary directory as `$TMP`, as the harness shows output.
fn shown_tmp(repo: &TestRepo, text: &str) -> String {
    text.replace(&repo.tmp().display().to_string(), "$TMP")
}

/// Where `.baton.yml` defines `notify`'s command: `.baton.yml:LINE:3` of its `command:`, or
/// `:9` of a list written on the `notify:` line itself.
fn notify_origin(repo: &TestRepo) -> String {
    let yml = text(&repo.path(".baton.yml"));
    let line = yml.lines().position(|l| l.starts_with("notify:")).unwrap() + 1;
    match yml.lines().nth(line - 1) {
        Some("notify:") => format!(".baton.yml:{}:3", line + 1),
        _ => format!(".baton.yml:{line}:9"),
    }
}

#[test]
fn a_blocked_run_and_then_its_review_are_each_told_once() {
    let dir = scratch();
    let told = outside(&dir, "told");
    let repo = repo_running(&[lazy(), worker()], &notify_into(&told, &[], &[]));
    let (id, run) = repo.run_plan("plans/fix.md", 1);
    assert!(!run.stderr.contains("warning"), "{run}");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "blocked");
    let docs = documents(&told);
    assert_eq!(docs.len(), 1, "{docs:#?}");
    let doc = &docs[0];
    assert_describes(&repo, doc, &state);
    assert_eq!(doc["event"], "blocked");
    assert_eq!(doc["previous_status"], "running");
    assert_eq!(
        (&doc["stage"], &doc["actor"]),
        (&"executor".into(), &"lazy".into())
    );
    assert!(
        doc["error"].as_str().unwrap().contains("docs/b.md"),
        "{doc:#}"
    );
    assert_eq!(doc["reset"], Value::Null);
    // The variables beside the document, and the command's output in the run's log.
    let env = text(&told.join("1.env"));
    assert!(env.contains(&format!("BATON_RUN_ID={id}\n")), "{env}");
    assert!(env.contains("BATON_NOTIFY_EVENT=blocked\n"), "{env}");
    assert!(env.contains("BATON_STATUS=blocked\n"), "{env}");
    let log = text(&run_dir(&repo, &id).join("notify.log"));
    assert!(
        log.contains(&format!("blocked: run {id} became blocked (was running)")),
        "{log}"
    );
    assert!(
        log.contains("-- stdout\nnotified 1\n-- stderr\na word on stderr\n== succeeded\n"),
        "{log}"
    );

    let run = repo.baton(["resume", &id, "--actor", "executor=worker"]);
    assert_eq!(run.code, 0, "{run}");
    let state = status(&repo, &id);
    assert_eq!(state["status"], "review");
    let docs = documents(&told);
    assert_eq!(docs.len(), 2, "{docs:#?}");
    assert_describes(&repo, &docs[1], &state);
    assert_eq!(docs[1]["event"], "review");
    assert_eq!(docs[1]["previous_status"], "running");
    assert_eq!(
        (&docs[1]["stage"], &docs[1]["actor"]),
        (&"reporter".into(), &"writer".into())
    );
    assert_eq!(docs[1]["error"], Value::Null);
    // Appended: both notifications are in the log.
    let log = text(&run_dir(&repo, &id).join("notify.log"));
    assert_eq!(log.matches("== succeeded\n").count(), 2, "{log}");
    // Looking at the run changes nothing and tells nobody.
    assert_eq!(repo.baton(["status", &id]).code, 0);
    assert_eq!(documents(&told).len(), 2);
}

#[test]
fn a_failed_run_is_told_with_its_error() {
    let dir = scratch();
    let told = outside(&dir, "told");
    let broken = Actor::agent("broken")
        .warn("segfault in the grader")
        .exit("3");
    let repo = repo_running(&[broken], &notify_into(&told, &[], &[]));
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "failed");
    let docs = documents(&told);
    assert_eq!(docs.len(), 1, "{docs:#?}");
    assert_describes(&repo, &docs[0], &state);
    assert_eq!(docs[0]["event"], "failed");
    let error = docs[0]["error"].as_str().unwrap();
    assert!(
        error.contains("exited with code 3") && error.contains("segfault in the grader"),
        "{error}"
    );
}

/// A capture of Claude Code's 429 whose `result` is its usage-limit text with an epoch: the
/// attempt records its reset as words and instant (as in tests/runs/agents.rs).
fn limited(dir: &tempfile::TempDir) -> Actor {
    let capture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/agents/claude/rate-limit-429.json"
    );
    let from = "API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit";
    let original = text(Path::new(capture));
    assert!(original.contains(from));
    let path = outside(dir, "usage-limit.json");
    std::fs::write(
        &path,
        original.replace(from, "Claude AI usage limit reached|1796036400"),
    )
    .unwrap();
    Actor::agent("claude")
        .verbs(&["cat", path.to_str().unwrap()])
        .exit("1")
        .set("output: claude-json")
}

#[test]
fn a_rate_limited_run_is_on_hold_until_the_reset_its_agent_gave() {
    let dir = scratch();
    let told = outside(&dir, "told");
    let repo = repo_running(&[limited(&dir)], &notify_into(&told, &[], &[]));
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    let state = status(&repo, &id);
    assert_eq!(state["status"], "rate_limited");
    let docs = documents(&told);
    assert_eq!(docs.len(), 1, "{docs:#?}");
    assert_describes(&repo, &docs[0], &state);
    assert_eq!(docs[0]["event"], "hold");
    assert_eq!(
        docs[0]["error"],
        "rate limited (claude-json: Claude AI usage limit reached|1796036400); resets 1796036400"
    );
    assert_eq!(
        docs[0]["reset"],
        serde_json::json!({"text": "1796036400", "at": "2026-11-30T11:00:00Z"})
    );
    assert_eq!(
        docs[0]["reset"],
        attempts(&state, "executor")[0]["agent"]["rate_limit_reset"]
    );
    let env = text(&told.join("1.env"));
    assert!(env.contains("BATON_NOTIFY_EVENT=hold\n"), "{env}");
}

/// A rate limit that a `fallback:` actor takes over holds nothing: the run goes on at once, and
/// only where it ends is told.
#[test]
fn a_rate_limit_a_fallback_takes_over_is_no_hold() {
    let dir = scratch();
    let told = outside(&dir, "told");
    let repo = repo_running(&[limited(&dir), worker()], &notify_into(&told, &[], &[]));
    let yml = text(&repo.path(".baton.yml")).replace(
        "actor: claude, gate: coverage }",
        "actor: claude, gate: coverage, fallback: [worker] }",
    );
    repo.write(".baton.yml", &yml);
    repo.commit_all("fallback");
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    let state = status(&repo, &run.run_id());
    assert_eq!(
        attempt_field(&state, "executor", "outcome"),
        ["rate_limited", "succeeded"]
    );
    assert_eq!(events(&told), ["review"]);
}

#[test]
fn on_names_the_events_that_are_told() {
    let dir = scratch();
    let told = outside(&dir, "told");
    let repo = repo_running(
        &[lazy(), worker()],
        &notify_into(&told, &[], &["on: [review, hold]"]),
    );
    let (id, _) = repo.run_plan("plans/fix.md", 1);
    assert_eq!(status(&repo, &id)["status"], "blocked");
    assert_eq!(documents(&told).len(), 0);
    assert!(!run_dir(&repo, &id).join("notify.log").exists());
    let run = repo.baton(["resume", &id, "--actor", "executor=worker"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(events(&told), ["review"]);
}

/// A notify command that outlasts its timeout is killed with everything it started; the run is
/// as it would have been, and so is the exit code.
#[test]
fn a_notify_command_past_its_timeout_is_killed_and_the_run_ends_as_usual() {
    let dir = scratch();
    let told = outside(&dir, "told");
    let pid = outside(&dir, "notifier.pid");
    let notify = notify_into(
        &told,
        &["pid", pid.to_str().unwrap(), "sleep", "120"],
        &["timeout: 1"],
    );
    let repo = repo_running(&[worker()], &notify);
    let (id, run) = repo.run_plan("plans/fix.md", 0);
    assert_eq!(status(&repo, &id)["status"], "review");
    let pgid = wait_for_line(&pid);
    assert!(
        group_gone_within(&pgid, Duration::from_secs(10)),
        "the notifier's group {pgid} outlived its timeout"
    );
    let log = run_dir(&repo, &id).join("notify.log");
    let warning = run
        .stderr
        .lines()
        .find(|l| l.starts_with("warning: "))
        .unwrap_or_else(|| panic!("no warning:\n{run}"));
    assert_eq!(
        warning,
        format!(
            "warning: run {id} is review, but `notify` ({}) did not succeed: `{NOTIFIER} {} pid {} sleep 120`: killed with its process group after its timeout of 1s; its output is in {}",
            notify_origin(&repo),
            told.display(),
            pid.display(),
            log.display()
        )
        .replace(&repo.tmp().display().to_string(), "$TMP")
    );
    // What it printed before it was killed is kept.
    let log = text(&log);
    assert!(log.contains("notified 1\n"), "{log}");
    assert!(
        log.ends_with(
            "== did not succeed: killed with its process group after its timeout of 1s\n"
        ),
        "{log}"
    );
}

#[test]
fn a_failing_or_missing_notify_command_is_a_warning() {
    let dir = scratch();
    let told = outside(&dir, "told");
    let repo = repo_running(&[lazy()], &notify_into(&told, &["exit", "5"], &[]));
    let (id, run) = repo.run_plan("plans/fix.md", 1);
    assert_eq!(status(&repo, &id)["status"], "blocked");
    assert_eq!(documents(&told).len(), 1);
    assert!(
        run.stderr.contains(&format!(
            "warning: run {id} is blocked, but `notify` ({}) did not succeed: ",
            notify_origin(&repo)
        )),
        "{run}"
    );
    assert!(
        run.stderr.contains(": exit code 5; its output is in "),
        "{run}"
    );

    let repo = repo_running(&[worker()], "notify: [no-such-notifier, --urgent]\n");
    let (id, run) = repo.run_plan("plans/fix.md", 0);
    assert_eq!(status(&repo, &id)["status"], "review");
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert_eq!(
        warnings,
        [format!(
            "warning: run {id} is review, but `notify` (.baton.yml:9:9) did not succeed: `no-such-notifier --urgent`: command `no-such-notifier` not found (a name without `/` is looked up on PATH); its output is in {}",
            run_dir(&repo, &id)
                .join("notify.log")
                .display()
                .to_string()
                .replace(&repo.tmp().display().to_string(), "$TMP")
        )]
    );
    let log = text(&run_dir(&repo, &id).join("notify.log"));
    assert!(log.ends_with("== did not succeed: command `no-such-notifier` not found (a name without `/` is looked up on PATH)\n"), "{log}");
}

/// The user's own configuration may notify, replacing the repository's command.
#[test]
fn the_user_configuration_notifies_in_place_of_the_repositorys() {
    let dir = scratch();
    let (mine, theirs) = (outside(&dir, "mine"), outside(&dir, "theirs"));
    let repo = repo_running(&[worker()], &notify_into(&theirs, &[], &[]));
    let user = repo.home.join(".config/git-baton/config.yml");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(&user, notify_into(&mine, &[], &["on: [review]"])).unwrap();
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(documents(&theirs).len(), 0);
    assert_eq!(events(&mine), ["review"]);
}

#[test]
fn an_unknown_event_is_refused_before_anything_runs() {
    let repo = repo_running(
        &[worker()],
        "notify:\n  command: [notify-send, git-baton]\n  on: [blocked, faild]\n",
    );
    let run = repo.baton(["run", "plans/fix.md"]);
    assert_eq!(run.code, 2, "{run}");
    assert_snapshot!(run.stderr, @r"
    error: .baton.yml:11:17: unknown event `faild` in `notify.on`
    hint: did you mean `failed`?
    ");
    assert_eq!(run_entries(&repo), Vec::<String>::new());
}

/// Only the machine that records a change tells of it: a run rate limited on machine A (told
/// there), fetched and resumed to review on machine B (told there, once), then caught up with on
/// A — which takes B's record and finishes the run — tells nobody more.
#[test]
fn only_the_machine_that_records_a_change_tells_of_it() {
    use crate::support::remote::{Origin, Transport};
    let dir = scratch();
    let told = outside(&dir, "told");
    let limited = Actor::agent("limited")
        .edit("docs/a.md", "rule: grade A")
        .exit("75")
        .set("rate_limit: { exit_codes: [75] }");
    let yml = config(
        &[limited, worker(), writer()],
        &pipeline_with("limited", &notify_into(&told, &[], &[])),
    );
    let fixture = TestRepo::with()
        .old_rule_docs()
        .file("plans/fix.md", PLAN)
        .config(&yml);
    let origin = Origin::new(fixture, Transport::File).unwrap();
    let a = origin.machine();
    let run = a.live(["run", "plans/fix.md"]);
    assert_eq!(run.code, 1, "{run}");
    let id = run.run_id();
    assert_eq!(a.live(["push", &id]).code, 0);
    let events = |machine: &TestRepo| -> Vec<(String, String)> {
        documents(&told)
            .iter()
            .map(|d| {
                let worktree = d["worktree"].as_str().unwrap();
                let on = match worktree.starts_with(&machine.root.display().to_string()) {
                    true => "here",
                    false => "elsewhere",
                };
                (d["event"].as_str().unwrap().to_owned(), on.to_owned())
            })
            .collect()
    };
    assert_eq!(events(&a), [("hold".into(), "here".into())]);

    let b = origin.machine();
    assert_eq!(b.live(["fetch"]).code, 0);
    assert_eq!(status(&b, &id)["status"], "rate_limited");
    assert_eq!(documents(&told).len(), 1, "catching up told nobody");
    let resumed = b.live(["resume", &id, "--actor", "executor=worker"]);
    assert_eq!(resumed.code, 0, "{resumed}");
    assert_eq!(
        events(&b),
        [
            ("hold".into(), "elsewhere".into()),
            ("review".into(), "here".into())
        ]
    );

    // `finish` takes B's record (review) before it finishes: nothing A commits is told.
    assert_eq!(a.live(["fetch"]).code, 0);
    let finished = a.live(["finish", &id]);
    assert_eq!(finished.code, 0, "{finished}");
    assert_eq!(status(&a, &id)["status"], "finished");
    assert_eq!(documents(&told).len(), 2, "{:#?}", documents(&told));
}
