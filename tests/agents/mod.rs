//! The real agent CLIs (Claude Code, Codex, aider, opencode, Gemini CLI) driven offline against
//! a scripted mock model server on 127.0.0.1: first on their own, to pin down what they send and
//! print (and to capture the parser fixtures under testdata/agents/), then through the real
//! `git baton` binary.
//!
//! Every test that needs a CLI skips by name when it is not installed (see [`cli`]).

pub mod cli;
pub mod mock;

mod mock_server;

mod harness;

mod aider;
mod claude;
mod codex;
mod gemini;
mod hooks;
mod hooks_packaging;
mod opencode;

mod cycle;
mod e2e;
mod incident;
mod mcp;
mod sandbox;

/// A scratch directory for one CLI run outside any repository, canonical (macOS's `/var` is a
/// link): the base that [`cli::AgentEnv`] makes the homes in, holding the empty `work`
/// directory the CLI runs in.
fn scratch() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::Builder::new()
        .prefix("baton-agent")
        .tempdir()
        .unwrap();
    let base = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(base.join("work")).unwrap();
    (tmp, base)
}

/// The JSON events of a CLI's JSON-lines stdout (`--json`, `stream-json`).
fn events(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The events of `lines` of type `ty`.
fn of_type<'a>(lines: &'a [serde_json::Value], ty: &str) -> Vec<&'a serde_json::Value> {
    lines.iter().filter(|l| l["type"] == ty).collect()
}

/// Writes a CLI's real output to testdata/agents/<agent>/<name> when `GIT_BATON_AGENT_CAPTURE=1`:
/// the parser fixtures are re-captured from the pinned CLIs, never written by hand.
fn capture(agent: &str, name: &str, output: &str) {
    if std::env::var_os("GIT_BATON_AGENT_CAPTURE").is_none_or(|v| v != "1") {
        return;
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/agents")
        .join(agent);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), output).unwrap();
}

/// A subscription limit that resets at 16:00 UTC three days from today, as the unix time the
/// API sends, and as Claude Code words it for a subscriber in Europe/Berlin (`Dec 4, 5pm
/// (Europe/Berlin)`). Claude Code words a reset later the same day without its date, so the day
/// is never today, whenever the suite runs.
fn subscription_reset() -> (String, String) {
    subscription_reset_past_the_hour(0)
}

/// Like [`subscription_reset`], `secs` after 16:00 UTC: Claude Code words the minutes
/// (`Dec 4, 5:37pm (Europe/Berlin)`) and leaves the seconds out.
fn subscription_reset_past_the_hour(secs: i64) -> (String, String) {
    let day = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date()
        .checked_add(jiff::Span::new().days(3))
        .unwrap();
    let at = day
        .at(16, 0, 0, 0)
        .to_zoned(jiff::tz::TimeZone::UTC)
        .unwrap()
        .checked_add(jiff::SignedDuration::from_secs(secs))
        .unwrap();
    let berlin = at.with_time_zone(jiff::tz::TimeZone::get("Europe/Berlin").unwrap());
    let hour = match berlin.hour() % 12 {
        0 => 12,
        h => h,
    };
    let minutes = match berlin.minute() {
        0 => String::new(),
        m => format!(":{m:02}"),
    };
    let half = if berlin.hour() < 12 { "am" } else { "pm" };
    let text = format!(
        "{} {}, {hour}{minutes}{half} (Europe/Berlin)",
        berlin.strftime("%b"),
        berlin.day()
    );
    (at.timestamp().as_second().to_string(), text)
}
