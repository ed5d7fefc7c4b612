//! Bounded logs: a long output keeps its head and tail, and its rate-limit lines still count
//! (issue 9, item 7).

use super::*;

/// 50 MB of output with a 1 MiB limit: the log is the first and the last half MiB with a marker
/// line between them saying exactly how much was dropped — and the rate-limit message that was
/// in the dropped middle is still recognised.
#[test]
fn a_long_output_keeps_head_and_tail_and_still_matches_rate_limits() {
    let dir = Dir::new();
    let mut case = case(
        "say HEAD LINE; flood 25000000; say Error: rate limit exceeded; flood 25000000; \
         say TAIL LINE; exit 1",
    );
    case.actor.rate_limit.patterns = vec!["rate limit exceeded".into()];
    let limit = 1 << 20;
    case.log_limit = limit;
    let finished = case.run(&dir).unwrap();
    assert_eq!(finished.outcome, limited(Some(1), "rate limit exceeded"));

    let log = fs::read(dir.path("stdout.log")).unwrap();
    let total = "HEAD LINE\n".len()
        + 25_000_000
        + "Error: rate limit exceeded\n".len()
        + 25_000_000
        + "TAIL LINE\n".len();
    let half = (limit / 2) as usize;
    let marker = format!(
        "\n[git-baton: {} bytes of this stream dropped here; the log keeps its first {half} and \
         its last {half} bytes (log_limit)]\n",
        total - 2 * half
    );
    assert_eq!(log.len(), 2 * half + marker.len());
    assert!(log.starts_with(b"HEAD LINE\nxxx"));
    assert_eq!(&log[half..half + marker.len()], marker.as_bytes());
    assert!(log.ends_with(b"xxxTAIL LINE\n"));
    assert!(!String::from_utf8_lossy(&log).contains("rate limit"));
}

/// Through the binary: `log_limit:` in .baton.yml caps the attempt's log, and `git baton log`
/// shows it (streamed), as text and as JSON.
#[test]
fn git_baton_log_shows_a_capped_log() {
    let flood = argv(&["say", "HEAD LINE", "flood", "50000000", "say", "TAIL LINE"]);
    let repo = cli::repo(&format!(
        "log_limit: 1MiB\nactors:\n  flood:\n    command: {flood}\n\
         pipeline:\n  - {{ stage: executor, actor: flood }}\n"
    ));
    let run = repo.baton(["run", "plans/p.md", "--json"]);
    assert_eq!(run.code, 0, "{run}");
    let id = run.json()["run_id"].as_str().unwrap().to_string();

    let log = repo.baton(["log", &id]);
    assert_eq!(log.code, 0, "{}", log.stderr);
    let dropped = 50_000_000 + "HEAD LINE\nTAIL LINE\n".len() - (1 << 20);
    let marker = format!("\n[git-baton: {dropped} bytes of this stream dropped here;");
    assert!(log.stdout.len() < (1 << 20) + 1000, "{}", log.stdout.len());
    assert!(log.stdout.contains("-- stdout\nHEAD LINE\nxxx"));
    assert!(log.stdout.contains(&marker));
    assert!(log.stdout.ends_with("xxxTAIL LINE\n-- stderr\n(empty)\n"));

    let json = repo.baton(["log", &id, "--json"]).json();
    let stdout = json["stdout"].as_str().unwrap();
    assert!(stdout.starts_with("HEAD LINE\n") && stdout.ends_with("xxxTAIL LINE\n"));
    assert!(stdout.contains(&marker));
    assert_eq!(json["stderr"], "");
    assert_eq!(json["run_id"], id.as_str());
}
