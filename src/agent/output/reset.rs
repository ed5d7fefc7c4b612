//! When a rate limit ends, as far as the agent's message says: its own words, plus an instant
//! or a wait when the words give one without guessing.
//!
//! The forms known (docs/agents.md): Claude Code's "You've hit your limit · resets 3pm
//! (Europe/Berlin)" (a clock time in a zone, no date: kept as words only), older Claude Code's
//! "Claude AI usage limit reached|<unix epoch>", Codex's "try again in 4 days 6 hours 37 minutes"
//! (a wait) and "try again at 10:00 AM" (a local clock time: words only), and Codex's
//! `resets_at` (epoch seconds) where an error carries it.

/// The reset of a rate limit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reset {
    /// As the agent wrote it (`3pm (Europe/Berlin)`, `in 4 days 6 hours 37 minutes`).
    pub text: String,
    /// The instant, in seconds since the Unix epoch, when the output names one.
    pub epoch: Option<i64>,
    /// The wait from the end of the attempt, when the output gives one.
    pub after_secs: Option<u64>,
}

/// The most words kept from a message.
const MAX_TEXT: usize = 120;

/// The reset named in `message`, if any.
pub fn from_message(message: &str) -> Option<Reset> {
    if let Some((_, rest)) = message.split_once("usage limit reached|") {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(epoch) = digits.parse::<i64>() {
            return Some(Reset {
                text: digits.clone(),
                epoch: Some(epoch),
                after_secs: None,
            });
        }
    }
    let lower = message.to_ascii_lowercase();
    // The words, where they start a word (`presets` holds no reset).
    let find = |key: &str| {
        lower
            .match_indices(key)
            .map(|(at, _)| at)
            .find(|&at| !lower[..at].ends_with(|c: char| c.is_ascii_alphanumeric()))
    };
    if let Some(at) = find("try again in ") {
        let words = clause(&message[at + "try again ".len()..]);
        return Some(Reset {
            after_secs: words.strip_prefix("in ").and_then(wait),
            text: words,
            epoch: None,
        });
    }
    for key in ["try again at ", "resets at ", "resets "] {
        if let Some(at) = find(key) {
            let start = at + key.len() - if key.ends_with("at ") { 3 } else { 0 };
            let words = clause(&message[start..]);
            if !words.is_empty() {
                return Some(Reset {
                    text: words,
                    epoch: None,
                    after_secs: None,
                });
            }
        }
    }
    None
}

/// The words up to the end of the clause: a ` · ` separator, a sentence's full stop, a line end.
fn clause(text: &str) -> String {
    let mut end = text.len();
    for stop in [" \u{b7} ", "\n", ". ", "\",", "\"}"] {
        if let Some(at) = text.find(stop) {
            end = end.min(at);
        }
    }
    let words = text[..end].trim().trim_end_matches('.');
    let mut kept: String = words.chars().take(MAX_TEXT).collect();
    if kept.len() < words.len() {
        kept.push('…');
    }
    kept
}

/// `4 days 6 hours 37 minutes` (also `1 day`, `2h 5m`, `30 seconds`, with `and` and commas) in
/// seconds; `None` unless every word is understood.
fn wait(words: &str) -> Option<u64> {
    let mut total: u64 = 0;
    let mut number: Option<u64> = None;
    let mut any = false;
    let tokens = words
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty() && *t != "and");
    for token in tokens {
        let split = token
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(token.len());
        let (digits, unit) = token.split_at(split);
        if !digits.is_empty() {
            if number.is_some() {
                return None;
            }
            number = Some(digits.parse().ok()?);
        }
        if unit.is_empty() {
            continue;
        }
        let secs = match unit {
            "d" | "day" | "days" => 86_400,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3_600,
            "m" | "min" | "mins" | "minute" | "minutes" => 60,
            "s" | "sec" | "secs" | "second" | "seconds" => 1,
            _ => return None,
        };
        total = total.checked_add(number.take()?.checked_mul(secs)?)?;
        any = true;
    }
    (any && number.is_none()).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// "try again in" with no wait after it: the words are kept, nothing is guessed, no panic.
    #[test]
    fn a_wait_cut_off_after_in_gives_no_wait() {
        for message in [
            "You have hit your limit, try again in ",
            "try again in",
            "try again in \u{b7} later",
            "TRY AGAIN IN\u{b7}",
        ] {
            let r = from_message(message);
            assert!(
                r.as_ref().is_none_or(|r| r.after_secs.is_none()),
                "{message:?}: {r:?}"
            );
        }
    }

    proptest::proptest! {
        /// Any text an agent prints, however cut: an answer or none, never a panic.
        #[test]
        fn any_message_is_read_without_a_panic(
            message in "(try again (in|at) |resets (at )?|usage limit reached\\|)?[ -~\u{b7}\u{2019}é]{0,24}"
        ) {
            let _ = from_message(&message);
        }
    }

    #[test]
    fn claude_subscription_limit_keeps_the_words() {
        // The form public reports show for current Claude Code.
        let r = from_message("You've hit your limit \u{b7} resets 3pm (Europe/Berlin)").unwrap();
        assert_eq!(r.text, "3pm (Europe/Berlin)");
        assert_eq!((r.epoch, r.after_secs), (None, None));
    }

    #[test]
    fn older_claude_limit_gives_the_epoch() {
        let r = from_message("Claude AI usage limit reached|1764500400").unwrap();
        assert_eq!(r.epoch, Some(1_764_500_400));
    }

    #[test]
    fn codex_waits_are_seconds() {
        let r = from_message(
            "You've hit your usage limit. Upgrade to Pro or try again in 4 days 6 hours 37 minutes.",
        )
        .unwrap();
        assert_eq!(r.text, "in 4 days 6 hours 37 minutes");
        assert_eq!(r.after_secs, Some(4 * 86_400 + 6 * 3_600 + 37 * 60));
        let r = from_message("try again in 1 day, 2h and 30 seconds").unwrap();
        assert_eq!(r.after_secs, Some(86_400 + 7_200 + 30));
    }

    #[test]
    fn codex_clock_time_is_words_only() {
        // As codex 0.171.0 printed it against a mock server answering 429 usage_limit_reached.
        let r = from_message(
            "You\u{2019}ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), \
             visit https://chatgpt.com/settings/usage to purchase more credits or try again at 10:00 AM.",
        )
        .unwrap();
        assert_eq!(r.text, "at 10:00 AM");
        assert_eq!((r.epoch, r.after_secs), (None, None));
    }

    #[test]
    fn words_not_understood_give_no_wait() {
        let r = from_message("try again in a little while").unwrap();
        assert_eq!(r.after_secs, None);
        assert_eq!(r.text, "in a little while");
        assert_eq!(from_message("try again in 5").unwrap().after_secs, None);
        assert_eq!(from_message("API Error: Request rejected (429)"), None);
        assert_eq!(from_message("rate limited; see the presets docs"), None);
    }
}
