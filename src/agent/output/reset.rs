//! When a rate limit ends, as far as the agent's message says: its own words, plus an instant
//! or a wait when the words give one, and [`Reset::instant`], which dates it once the attempt's
//! end is known.
//!
//! The forms known (docs/agents.md): Claude Code's "You've hit your limit · resets 3pm
//! (Europe/Berlin)" and "… resets Dec 5, 5pm (Europe/Berlin)" (a wall-clock time in a zone:
//! dated by the rule of [`clock`](super::clock)), older Claude Code's "Claude AI usage limit
//! reached|<unix epoch>", Codex's "try again in 4 days 6 hours 37 minutes" (a wait) and "try
//! again at 10:00 AM" / "… at Dec 1st, 2026 4:00 PM" (local wall-clock times), and the structured
//! fields the parsers read beside the words (Claude Code's `resetsAt`, Codex's `resets_at`, a
//! `retry-after` header, Gemini's `RetryInfo`).

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// The reset of a rate limit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LimitReset {
    /// As the agent wrote it (`3pm (Europe/Berlin)`, `in 4 days 6 hours 37 minutes`).
    pub text: String,
    /// The instant, in seconds since the Unix epoch, when the output names one.
    pub epoch: Option<i64>,
    /// The wait from the end of the attempt, when the output gives one.
    pub after_secs: Option<u64>,
}

impl LimitReset {
    /// The instant the limit lifts, and the words to record with it: the epoch when the output
    /// named one, else the wait counted from `ended_at`, else the wall-clock time of the words
    /// by the rule of [`clock`](super::clock) — read in `local` when they name no zone, which
    /// the recorded words then say (no instant when the local zone is not known). `None` when nothing gives an instant (or it is past the
    /// range of time): the words alone are kept, and the run waits for a person.
    pub fn instant(
        &self,
        ended_at: Timestamp,
        local: Option<&TimeZone>,
    ) -> (Option<Timestamp>, String) {
        if let Some(epoch) = self.epoch {
            return (Timestamp::from_second(epoch).ok(), self.text.clone());
        }
        if let Some(secs) = self.after_secs {
            let at = i64::try_from(secs)
                .ok()
                .map(jiff::SignedDuration::from_secs)
                .and_then(|wait| ended_at.checked_add(wait).ok());
            return (at, self.text.clone());
        }
        let resolved = super::clock::parse(&self.text)
            .and_then(|clock| super::clock::next_after(&clock, ended_at, local));
        match resolved {
            Some(r) if r.local => {
                let zone = local.and_then(TimeZone::iana_name).unwrap_or("unnamed");
                (
                    Some(r.at),
                    format!("{} (in the local time zone, {zone})", self.text),
                )
            }
            Some(r) => (Some(r.at), self.text.clone()),
            None => (None, self.text.clone()),
        }
    }
}

/// The most words kept from a message.
const MAX_TEXT: usize = 120;

/// The reset named in `message`, if any.
pub fn from_message(message: &str) -> Option<LimitReset> {
    if let Some((_, rest)) = message.split_once("usage limit reached|") {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(epoch) = digits.parse::<i64>() {
            return Some(LimitReset {
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
    // Gemini CLI's wording of a 429's `google.rpc.RetryInfo.retryDelay` (a protobuf Duration).
    if let Some(at) = find("suggested retry after ") {
        let rest = &message[at + "suggested retry after ".len()..];
        if let Some((secs, len)) = retry_delay(rest) {
            return Some(LimitReset {
                text: format!("retry after {}", &rest[..len]),
                epoch: None,
                after_secs: Some(secs),
            });
        }
    }
    if let Some(at) = find("try again in ") {
        let words = clause(&message[at + "try again ".len()..]);
        return Some(LimitReset {
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
                return Some(LimitReset {
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

/// A protobuf Duration's JSON form at the start of `text` (`37s`, `90.5s`, `0.000001s`): the
/// seconds, rounded up so that the wait is never short, and the length of the form.
fn retry_delay(text: &str) -> Option<(u64, usize)> {
    let whole_len = text.find(|c: char| !c.is_ascii_digit())?;
    let whole: u64 = text[..whole_len].parse().ok()?;
    let rest = &text[whole_len..];
    let frac_len = match rest.strip_prefix('.') {
        Some(frac) => {
            1 + frac
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(frac.len())
        }
        None => 0,
    };
    if !rest[frac_len..].starts_with('s') {
        return None;
    }
    let up = rest[..frac_len].bytes().any(|b| (b'1'..=b'9').contains(&b));
    let secs = whole.checked_add(u64::from(up))?;
    Some((secs, whole_len + frac_len + 1))
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
            message in "(try again (in|at) |resets (at )?|usage limit reached\\||suggested retry after )?[ -~\u{b7}\u{2019}é]{0,24}"
        ) {
            let _ = from_message(&message);
        }

        /// Any text at all, read and then dated: never a panic (the words kept are cut at
        /// [`MAX_TEXT`] characters and end in `…`, which the clock parser must take whole).
        #[test]
        fn any_text_is_read_and_dated_without_a_panic(
            key in "(try again (in|at) |resets (at )?|usage limit reached\\||suggested retry after )?",
            words in "\\PC{0,200}",
        ) {
            let message = format!("{key}{words}");
            if let Some(reset) = from_message(&message) {
                let _ = reset.instant(Timestamp::UNIX_EPOCH, Some(&TimeZone::UTC));
            }
        }

        /// Any epoch, wait or end of the attempt: an instant or none, never a panic.
        #[test]
        fn any_reset_is_dated_without_a_panic(
            epoch in proptest::option::of(proptest::num::i64::ANY),
            after_secs in proptest::option::of(proptest::num::u64::ANY),
            ended in Timestamp::MIN.as_second()..=Timestamp::MAX.as_second(),
        ) {
            let reset = LimitReset { text: "3pm (Europe/Berlin)".into(), epoch, after_secs };
            let _ = reset.instant(Timestamp::from_second(ended).unwrap(), Some(&TimeZone::UTC));
        }
    }

    /// A reset clause past [`MAX_TEXT`] characters is kept cut, ending in `…`, and a time in
    /// curly quotes is kept as written: both are words no clock reads, so no instant and no
    /// panic (Codex's "try again at 4:00 PM if you are on the Plus plan, …" panicked here).
    #[test]
    fn long_and_curly_quoted_resets_are_kept_as_words_without_an_instant() {
        let ended: Timestamp = "2026-12-02T03:30:00Z".parse().unwrap();
        let long = format!(
            "You've hit your usage limit. Try again at 4:00 PM if you are on the Plus plan, or \
             upgrade to Pro for higher limits and priority access {}.",
            "and more words ".repeat(10)
        );
        let r = from_message(&long).unwrap();
        assert_eq!(r.text.chars().count(), MAX_TEXT + 1, "{:?}", r.text);
        assert!(r.text.starts_with("at 4:00 PM if you"), "{:?}", r.text);
        assert!(r.text.ends_with('\u{2026}'), "{:?}", r.text);
        assert_eq!(r.instant(ended, Some(&TimeZone::UTC)).0, None);
        for message in [
            "You've hit your limit \u{b7} resets \u{201c}5pm\u{201d}",
            "resets 5\u{201d}",
            "try again at \u{201c}10:00 AM\u{201d}",
            "resets \u{e9}\u{e9}\u{2026}",
            "resets 5\u{1f600}",
        ] {
            let r = from_message(message).unwrap();
            assert_eq!(r.instant(ended, Some(&TimeZone::UTC)).0, None, "{message}");
        }
        // Multi-byte text before the words changes nothing of what is read.
        let r = from_message("\u{201c}Limit\u{201d} \u{2014} resets 3pm (Europe/Berlin)").unwrap();
        assert_eq!(r.text, "3pm (Europe/Berlin)");
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
    fn codex_clock_time_is_words_until_dated() {
        // As codex 0.171.0 printed it against a mock server answering 429 usage_limit_reached.
        let r = from_message(
            "You\u{2019}ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), \
             visit https://chatgpt.com/settings/usage to purchase more credits or try again at 10:00 AM.",
        )
        .unwrap();
        assert_eq!(r.text, "at 10:00 AM");
        assert_eq!((r.epoch, r.after_secs), (None, None));
    }

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn the_instant_is_the_epoch_else_the_wait_else_the_clock_time() {
        let ended = at("2026-12-02T03:30:00Z");
        let berlin = TimeZone::get("Europe/Berlin").unwrap();
        let epoch = LimitReset {
            text: "1796486400".into(),
            epoch: Some(1_796_486_400),
            after_secs: Some(5),
        };
        assert_eq!(
            epoch.instant(ended, Some(&berlin)),
            (Some(at("2026-12-05T16:00:00Z")), "1796486400".into())
        );
        let wait = from_message("try again in 2h 5m").unwrap();
        assert_eq!(
            wait.instant(ended, Some(&berlin)).0,
            Some(at("2026-12-02T05:35:00Z"))
        );
        let zoned =
            from_message("You've hit your 5-hour limit \u{b7} resets 5:37pm (Europe/Berlin)")
                .unwrap();
        assert_eq!(
            zoned.instant(ended, Some(&TimeZone::UTC)),
            (
                Some(at("2026-12-02T16:38:00Z")),
                "5:37pm (Europe/Berlin)".into()
            )
        );
        // No zone in the words: the local one, named in the words recorded.
        let local = from_message("or try again at 4:32 AM.").unwrap();
        assert_eq!(
            local.instant(ended, Some(&berlin)),
            (
                Some(at("2026-12-02T03:33:00Z")),
                "at 4:32 AM (in the local time zone, Europe/Berlin)".into()
            )
        );
    }

    #[test]
    fn no_instant_without_one_and_none_past_the_range_of_time() {
        let ended = at("2026-12-02T03:30:00Z");
        for reset in [
            from_message("try again in a little while").unwrap(),
            from_message("resets 3pm (Mars/Olympus_Mons)").unwrap(),
            from_message("try again later, or resets soon").unwrap(),
            LimitReset {
                text: "far".into(),
                epoch: Some(i64::MAX),
                after_secs: None,
            },
            LimitReset {
                text: "far".into(),
                epoch: None,
                after_secs: Some(u64::MAX),
            },
            LimitReset {
                text: "far".into(),
                epoch: None,
                after_secs: Some(i64::MAX as u64),
            },
        ] {
            assert_eq!(
                reset.instant(ended, Some(&TimeZone::UTC)).0,
                None,
                "{reset:?}"
            );
        }
        let huge = LimitReset {
            text: "x".into(),
            epoch: None,
            after_secs: Some(1),
        };
        assert_eq!(huge.instant(Timestamp::MAX, Some(&TimeZone::UTC)).0, None);
    }

    #[test]
    fn gemini_retry_delays_are_seconds_rounded_up() {
        // As gemini 0.61.0 printed it for a 429 whose details held RetryInfo `90.5s`.
        let r = from_message(
            "[API Error: Quota exceeded.\nSuggested retry after 90.5s.]\nPlease wait and try \
             again later.",
        )
        .unwrap();
        assert_eq!(
            (r.text.as_str(), r.after_secs),
            ("retry after 90.5s", Some(91))
        );
        let r = from_message("Suggested retry after 37s.").unwrap();
        assert_eq!(r.after_secs, Some(37));
        assert_eq!(
            from_message("Suggested retry after 2.000s")
                .unwrap()
                .after_secs,
            Some(2)
        );
        for message in [
            "Suggested retry after soon",
            "Suggested retry after 37",
            "Suggested retry after .5s",
            "Suggested retry after 99999999999999999999999s",
        ] {
            assert_eq!(
                from_message(message).and_then(|r| r.after_secs),
                None,
                "{message}"
            );
        }
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
