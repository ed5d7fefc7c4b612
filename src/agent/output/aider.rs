//! aider's console output (`--no-pretty`): text, not JSON, so only lines of known shape are read.
//!
//! aider exits 0 whatever became of its request, so the verdict comes from its last words. Each
//! API error is printed as `litellm.<Name>Error: …` (wrapped at the console width), then either
//! `Retrying in N seconds...` or nothing — aider gave up and ends. The run ended on an error
//! when its last such error is followed neither by a retry nor by a `Tokens:` line (a later
//! answer): a `litellm.RateLimitError` is then a rate limit, any other a failure; an error it
//! recovered from decides nothing.
//!
//! Usage comes from the report aider prints after each answer, `Tokens: 1.2k sent, 340
//! received. Cost: $0.01 message, $0.02 session.` (with `, N cache write` and `, N cache hit`
//! when the provider reports them, and the `Cost:` part on the next line when both are there,
//! or not at all when aider has no price for the model). The figures are rounded as aider
//! prints them (to a hundred below 10k, to a thousand above); docs/agents.md says what each
//! counts and how they are normalised. The model is the banner's `Model:` line; aider has no
//! session id. Output without aider's banner (`Aider v…`) is unparsed.

use super::{Reading, Stdout, Tokens, Verdict, reset};

/// The prefix of every API error aider prints.
const ERROR_PREFIX: &str = "litellm.";
/// The one aider prints for HTTP 429.
const RATE_LIMIT: &str = "litellm.RateLimitError:";
/// The most continuation lines joined to a wrapped line.
const MAX_WRAPPED: usize = 8;

pub(super) fn parse(stdout: Stdout) -> Reading {
    let (parts, cut) = stdout.parts();
    let lines: Vec<&str> = parts
        .iter()
        .flat_map(|p| p.lines())
        .map(str::trim_end)
        .collect();
    if lines.iter().all(|l| l.trim().is_empty()) {
        return Reading::unparsed("the output is empty", cut);
    }
    if !lines.iter().any(|l| l.starts_with("Aider v")) {
        return Reading::unparsed("the output has no aider banner (a line \"Aider v…\")", cut);
    }
    let mut tokens: Option<Tokens> = None;
    let mut cost = None;
    // The last API error not yet answered by a retry or an answer: (line index, text).
    let mut pending: Option<(usize, String)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with(ERROR_PREFIX) && line.contains("Error: ") {
            pending = Some((i, joined(&lines, i, |l| l.is_empty() || is_friendly(l))));
        } else if line.starts_with("Retrying in ") {
            pending = None;
        } else if line.starts_with("Tokens: ") {
            pending = None;
            let report = usage_report(&lines, i);
            if let Some(turn) = turn_tokens(&report) {
                tokens.get_or_insert_with(Tokens::default).add(&turn);
            }
            if let Some(session) = session_cost(&report) {
                cost = Some(session);
            }
        }
        i += 1;
    }
    let verdict = match pending {
        Some((_, message)) if message.starts_with(RATE_LIMIT) => Verdict::RateLimited {
            reset: reset::from_message(&message),
            message,
        },
        Some((_, message)) => Verdict::Failed { message },
        None => Verdict::Succeeded,
    };
    Reading {
        tokens,
        cost_usd: cost,
        model: model(&lines),
        session_id: None,
        verdict: Some(verdict),
        unparsed: None,
        cut,
    }
}

/// aider's own sentence after a known error ("The API provider has rate limited you. …"):
/// a line of its own, not part of the wrapped error text.
fn is_friendly(line: &str) -> bool {
    line.starts_with("The API provider ")
        || line.starts_with("Retrying in ")
        || line.starts_with(ERROR_PREFIX)
}

/// Line `start` with the lines the console wrapped it onto, up to one for which `ends` holds.
/// The console breaks at a space and keeps it, so the pieces are joined as they are.
fn joined(lines: &[&str], start: usize, ends: impl Fn(&str) -> bool) -> String {
    let mut text = lines[start].to_string();
    for line in lines.iter().skip(start + 1).take(MAX_WRAPPED) {
        if ends(line) {
            break;
        }
        if !text.ends_with(' ') {
            text.push(' ');
        }
        text.push_str(line);
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The usage report starting at line `start`: the `Tokens:` sentence (wrapped or not) and the
/// `Cost:` sentence after it, on the same line or the next.
fn usage_report(lines: &[&str], start: usize) -> String {
    let mut text = String::new();
    for (n, line) in lines.iter().enumerate().skip(start).take(MAX_WRAPPED) {
        let continues = n == start
            || !text.contains("received.")
            || (line.starts_with("Cost: ") && !text.contains("Cost: "))
            || (text.contains("Cost: ") && !text.trim_end().ends_with("session."));
        if !continues || line.is_empty() {
            break;
        }
        if !text.is_empty() && !text.ends_with(' ') {
            text.push(' ');
        }
        text.push_str(line);
    }
    text
}

/// The tokens of one usage report, normalised: `input` without the cache's reads and writes.
///
/// aider's "sent" is litellm's `prompt_tokens`, which counts the cache's reads and writes, plus
/// the cache writes once more when the provider reports them (aider 0.86.2 adds them to what
/// litellm already counted). An OpenAI-compatible provider's cached tokens are not printed, so
/// there `input` still holds them and `cache_read` is unknown.
fn turn_tokens(report: &str) -> Option<Tokens> {
    let sentence = report.strip_prefix("Tokens: ")?;
    let sentence = sentence.split("received.").next()?;
    let (mut sent, mut received, mut write, mut hit) = (None, None, None, None);
    for part in sentence.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        // The last part is the figure before "received." alone.
        let (figure, what) = part.split_once(' ').unwrap_or((part, ""));
        let figure = figure_of(figure)?;
        match what.trim() {
            "sent" => sent = Some(figure),
            "cache write" => write = Some(figure),
            "cache hit" => hit = Some(figure),
            "" => received = Some(figure),
            _ => return None,
        }
    }
    let sent = sent?;
    let input = sent
        .saturating_sub(hit.unwrap_or(0))
        .saturating_sub(write.unwrap_or(0).saturating_mul(2));
    Some(Tokens {
        input: Some(input),
        output: received,
        cache_read: hit,
        cache_creation: write,
        reasoning: None,
    })
}

/// A count as aider formats it: `56`, `1.2k`, `12k`.
fn figure_of(text: &str) -> Option<u64> {
    let (number, scale) = match text.strip_suffix('k') {
        Some(number) => (number, 1000.0),
        None => (text, 1.0),
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let value: f64 = number.parse().ok()?;
    Some((value * scale).round() as u64)
}

/// The session's cost so far: `$Y` of "Cost: $X message, $Y session.".
fn session_cost(report: &str) -> Option<f64> {
    let (_, cost) = report.split_once("Cost: $")?;
    let (_, session) = cost.split_once(" message, $")?;
    let (amount, _) = session.split_once(" session.")?;
    amount.parse().ok()
}

/// The model of the banner: `Model: openai/x with whole edit format` (or `Main model: …`).
fn model(lines: &[&str]) -> Option<String> {
    lines.iter().find_map(|l| {
        let rest = l
            .strip_prefix("Model: ")
            .or_else(|| l.strip_prefix("Main model: "))?;
        let name = rest.split(" with ").next()?.trim();
        (!name.is_empty()).then(|| name.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::output::{limit_reset, rate_limit, success, tokens_line};

    // Captured from aider 0.86.2 run against the mock model server on 127.0.0.1.
    const EDIT: &str = include_str!("../../../testdata/agents/aider/e2e-edit.txt");
    const RATE_LIMIT_429: &str = include_str!("../../../testdata/agents/aider/e2e-429.txt");

    #[test]
    fn an_edit_gives_the_usage_the_cost_and_the_model() {
        // "Tokens: 20k sent, 2.0k received. Cost: $0.0042 message, $0.0042 session."
        let r = success(
            parse(Stdout::Whole(EDIT)),
            "input 20000, output 2000, cache_read -, cache_creation -, reasoning -",
        );
        assert_eq!(r.model.as_deref(), Some("openai/gpt-4o-mini"));
        assert_eq!(r.cost_usd, Some(0.0042));
        assert!(r.session_id.is_none() && r.unparsed.is_none() && !r.cut);
    }

    #[test]
    fn without_a_price_there_is_no_cost() {
        let text = EDIT.replace(" Cost: $0.0042 message, $0.0042 session.", "");
        let r = parse(Stdout::Whole(&text));
        assert_eq!(r.cost_usd, None);
        assert_eq!(r.tokens.unwrap().output, Some(2_000));
    }

    #[test]
    fn a_429_given_up_on_is_a_rate_limit_despite_the_exit_0() {
        let r = parse(Stdout::Whole(RATE_LIMIT_429));
        let (message, reset) = rate_limit(&r);
        assert_eq!(
            message,
            "litellm.RateLimitError: RateLimitError: OpenAIException - This request would \
             exceed your account's rate limit. Please try again later."
        );
        assert_eq!(reset, None);
        assert_eq!(r.tokens, None, "no answer, no usage report");
    }

    #[test]
    fn a_429_it_recovered_from_decides_nothing() {
        // The captured retries, then the captured answer: aider went on after a retry.
        let retries: String = RATE_LIMIT_429
            .lines()
            .take_while(|l| !l.starts_with("Retrying in 1.0"))
            .map(|l| format!("{l}\n"))
            .collect();
        let answer: String = EDIT
            .lines()
            .skip_while(|l| !l.starts_with("docs/a.md"))
            .map(|l| format!("{l}\n"))
            .collect();
        let r = parse(Stdout::Whole(&format!(
            "{retries}Retrying in 1.0 seconds...\n{answer}"
        )));
        assert_eq!(r.verdict, Some(Verdict::Succeeded), "{r:?}");
        assert_eq!(r.tokens.unwrap().input, Some(20_000));
    }

    #[test]
    fn another_error_given_up_on_is_a_failure_with_its_words() {
        let text = RATE_LIMIT_429.replace(
            "litellm.RateLimitError: RateLimitError: OpenAIException",
            "litellm.BadRequestError: OpenAIException",
        );
        let r = parse(Stdout::Whole(&text));
        let Some(Verdict::Failed { message }) = r.verdict else {
            panic!("{r:?}");
        };
        assert!(
            message.starts_with(
                "litellm.BadRequestError: OpenAIException - This request would exceed"
            ),
            "{message}"
        );
    }

    #[test]
    fn a_reset_in_the_providers_words_is_kept() {
        let text = RATE_LIMIT_429.replace("Please try again later.", "Please try again in 20s.");
        let r = parse(Stdout::Whole(&text));
        let reset = limit_reset(&r);
        assert_eq!(reset.text, "in 20s");
    }

    #[test]
    fn usage_reports_sum_and_the_last_session_cost_is_the_cost() {
        let report = "Aider v0.86.2\nModel: anthropic/claude-x with diff edit format\n\
            Tokens: 12k sent, 1.1k cache write, 9.0k cache hit, 340 received.\n\
            Cost: $0.01 message, $0.01 session.\n\
            Tokens: 2.5k sent, 1.2k received. Cost: $0.02 message, $0.03\n\
            session.\n";
        let r = parse(Stdout::Whole(report));
        // Input 12000 - 9000 - 2 * 1100, plus 2500; output 340 + 1200.
        assert_eq!(
            tokens_line(&r),
            "input 3300, output 1540, cache_read 9000, cache_creation 1100, reasoning -"
        );
        assert_eq!(r.cost_usd, Some(0.03));
        assert_eq!(r.model.as_deref(), Some("anthropic/claude-x"));
    }

    #[test]
    fn figures_read_as_aider_formats_them() {
        assert_eq!(figure_of("56"), Some(56));
        assert_eq!(figure_of("1.2k"), Some(1200));
        assert_eq!(figure_of("12k"), Some(12_000));
        assert_eq!(figure_of("k"), None);
        assert_eq!(figure_of("-1"), None);
        assert_eq!(turn_tokens("Tokens: 1 sent, 2 bananas, 3 received."), None);
    }

    #[test]
    fn what_is_not_aiders_output_is_unparsed() {
        assert_eq!(
            parse(Stdout::Whole(" \n")).unparsed.as_deref(),
            Some("the output is empty")
        );
        let r = parse(Stdout::Whole("Traceback (most recent call last):\n"));
        assert!(r.verdict.is_none());
        assert!(r.unparsed.unwrap().contains("no aider banner"));
    }

    #[test]
    fn a_cut_log_keeps_what_its_ends_say() {
        let (head, tail) = RATE_LIMIT_429.split_at(RATE_LIMIT_429.len() / 2);
        let r = parse(Stdout::Cut { head, tail });
        assert!(r.cut);
        assert!(
            matches!(r.verdict, Some(Verdict::RateLimited { .. })),
            "{r:?}"
        );
    }
}
