//! A reset worded as a wall-clock time — "5:37pm (Europe/Berlin)", "at 10:00 AM", "Dec 5, 5pm
//! (Europe/Berlin)", "at Dec 1st, 2026 4:00 PM", "15:00" — made an instant by a rule, not a guess.
//!
//! The rule (docs/agents.md): the time is read in the zone the words name in parentheses, or, when
//! they name none, in the local zone given by the caller (git-baton's, which is the agent's: it
//! inherits git-baton's environment, `TZ` included). Without a date it is the **next** such
//! wall-clock time strictly after the attempt ended; with a month and day but no year, the next
//! such date and time strictly after it; with a year, that date and time. The words name a
//! minute, and the instant is that minute's end: agents word a reset to the minute, cutting its
//! seconds, so the minute's start would be early — and, for an attempt that ended within that
//! minute, not after its end at all, which would make it the next day's. A wall-clock time that
//! a DST change skips or repeats takes jiff's `compatible` choice: in a gap the time as many
//! minutes after the gap's end, in a fold the earlier of the two. An unknown zone or words not
//! understood give no instant.

use jiff::Timestamp;
use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;

/// A wall-clock time as the words give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WallTime {
    /// `(month, day)` when the words give a date.
    pub date: Option<(i8, i8)>,
    /// When the date also gives a year.
    pub year: Option<i16>,
    pub hour: i8,
    pub minute: i8,
    /// The IANA name in parentheses (`Europe/Berlin`), when the words give one.
    pub zone: Option<String>,
}

/// The instant a worded reset names, and the zone it was read in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub at: Timestamp,
    /// The words named no zone: the local one was taken.
    pub local: bool,
}

/// `words` as a wall-clock time, or `None` unless every word is understood.
///
/// The words are the agent's, untrusted and cut anywhere (a clause past the kept length ends in
/// `…`): they are only ever split where a character starts, so that no text panics.
pub fn parse(words: &str) -> Option<WallTime> {
    let mut rest = words.trim().trim_end_matches('.').trim();
    if let Some(after) = strip_prefix_ignore_ascii_case(rest, "at ") {
        rest = after.trim_start();
    }
    let mut zone = None;
    if let Some(open) = rest.strip_suffix(')').and_then(|r| r.rfind('(')) {
        let name = rest[open + 1..rest.len() - 1].trim();
        if name.is_empty() {
            return None;
        }
        zone = Some(name.to_string());
        rest = rest[..open].trim_end();
    }
    let mut tokens: Vec<&str> = rest
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .collect();
    let mut meridiem = tokens.last().and_then(|t| half(t));
    if meridiem.is_some() {
        tokens.pop();
    }
    let mut time = tokens.pop()?;
    // `5pm`, `10:00AM`: a meridiem glued to the time. `split_at_checked` refuses an index inside
    // a character (`5“`, `upgrade…`), which is then no meridiem.
    if meridiem.is_none()
        && time.len() > 2
        && let Some((clock, suffix)) = time.split_at_checked(time.len() - 2)
        && let Some(m) = half(suffix)
    {
        meridiem = Some(m);
        time = clock;
    }
    let (hour, minute) = hour_minute(time, meridiem)?;
    let (date, year) = match tokens.as_slice() {
        [] => (None, None),
        [month, day] => (Some((month_number(month)?, day_number(day)?)), None),
        [month, day, year] => {
            let year = (year.len() == 4).then(|| year.parse::<i16>().ok())??;
            (Some((month_number(month)?, day_number(day)?)), Some(year))
        }
        _ => return None,
    };
    Some(WallTime {
        date,
        year,
        hour,
        minute,
        zone,
    })
}

/// The instant `clock` names, read in its zone or else in `local` (none when the local zone is
/// not known), by the rule above.
pub fn next_after(
    clock: &WallTime,
    after: Timestamp,
    local: Option<&TimeZone>,
) -> Option<Resolved> {
    let tz = match &clock.zone {
        Some(name) => TimeZone::get(name).ok()?,
        None => local?.clone(),
    };
    let at = |date: Date| -> Option<Timestamp> {
        let wall = DateTime::from_parts(date, jiff::civil::time(clock.hour, clock.minute, 0, 0));
        // `to_zoned` resolves a gap or a fold with the `compatible` strategy. The words name a
        // minute (Claude Code words a reset at 16:37:13 as 5:37pm): the limit lifts within it,
        // so the instant is the minute's end — never early, at most a minute late.
        wall.to_zoned(tz.clone()).ok().and_then(|z| {
            z.timestamp()
                .checked_add(jiff::SignedDuration::from_secs(60))
                .ok()
        })
    };
    let today = after.to_zoned(tz.clone()).date();
    let found = match (clock.date, clock.year) {
        (Some((month, day)), Some(year)) => Date::new(year, month, day).ok().and_then(at),
        // Up to 8 years on: a 29 February after 2096 comes next in 2104.
        (Some((month, day)), None) => (0..=8)
            .filter_map(|k| today.year().checked_add(k))
            .filter_map(|year| Date::new(year, month, day).ok())
            .filter_map(at)
            .find(|t| *t > after),
        // Two days on at most: a zone that skips a whole day (Pacific/Apia, 2011) needs the second.
        (None, _) => (0..=2)
            .filter_map(|k| today.checked_add(jiff::Span::new().days(k)).ok())
            .filter_map(at)
            .find(|t| *t > after),
    }?;
    Some(Resolved {
        at: found,
        local: clock.zone.is_none(),
    })
}

/// `text` without a leading `prefix` (ASCII, in any case), or `None` when it does not start so.
fn strip_prefix_ignore_ascii_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// `am` / `pm`, in any case, with or without dots: `true` for the afternoon.
fn half(token: &str) -> Option<bool> {
    match token.replace('.', "").to_ascii_lowercase().as_str() {
        "am" => Some(false),
        "pm" => Some(true),
        _ => None,
    }
}

/// `5`, `5:37` with a meridiem (1 to 12), or `15:00` without one (a bare hour is not a time).
fn hour_minute(time: &str, pm: Option<bool>) -> Option<(i8, i8)> {
    let (hour, minute) = match time.split_once(':') {
        Some((h, m)) => (h, Some(m)),
        None => (time, None),
    };
    let digits = |s: &str, max: usize| {
        (!s.is_empty() && s.len() <= max && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<i8>().ok())
            .flatten()
    };
    let hour = digits(hour, 2)?;
    let minute = match minute {
        Some(m) if m.len() == 2 => digits(m, 2)?,
        Some(_) => return None,
        None if pm.is_some() => 0,
        None => return None,
    };
    if minute > 59 {
        return None;
    }
    let hour = match pm {
        Some(_) if !(1..=12).contains(&hour) => return None,
        Some(false) => hour % 12,
        Some(true) => hour % 12 + 12,
        None if hour > 23 => return None,
        None => hour,
    };
    Some((hour, minute))
}

/// `Dec`, `December`, `Sept` (any case): 1 to 12.
fn month_number(token: &str) -> Option<i8> {
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let lower = token.trim_end_matches('.').to_ascii_lowercase();
    if lower.len() < 3 {
        return None;
    }
    let at = MONTHS.iter().position(|m| m.starts_with(&lower))?;
    i8::try_from(at + 1).ok()
}

/// `5`, `1st`, `22nd`, `3rd`, `4th`: 1 to 31 (the date itself is checked later).
fn day_number(token: &str) -> Option<i8> {
    let lower = token.to_ascii_lowercase();
    let digits = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|s| lower.strip_suffix(s))
        .unwrap_or(&lower);
    if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let day: i8 = digits.parse().ok()?;
    (1..=31).contains(&day).then_some(day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tz(name: &str) -> TimeZone {
        TimeZone::get(name).unwrap()
    }

    /// Each case reads `<words> after <RFC 3339>[ in <local zone>] is <instant in UTC>`; the
    /// local zone is UTC unless named.
    fn assert_next(cases: &[&str]) {
        for case in cases {
            let (asked, instant) = case.rsplit_once(" is ").unwrap();
            let (words, after) = asked.rsplit_once(" after ").unwrap();
            let (after, local) = after.split_once(" in ").unwrap_or((after, "UTC"));
            let clock = parse(words).unwrap_or_else(|| panic!("{words:?} is not read"));
            let next = next_after(&clock, after.parse().unwrap(), Some(&tz(local)));
            assert_eq!(
                next.map(|r| r.at.to_string()).as_deref(),
                Some(instant),
                "{case}"
            );
        }
    }

    #[test]
    fn a_time_later_today_is_today_and_an_earlier_one_tomorrow() {
        // 14:00 UTC is 15:00 in Berlin (CET); the minute the words name ends at 14:01.
        assert_next(&[
            "3pm (Europe/Berlin) after 2026-12-02T10:00:00Z is 2026-12-02T14:01:00Z",
            "3pm (Europe/Berlin) after 2026-12-02T15:00:00Z is 2026-12-03T14:01:00Z",
            // An attempt that ended within the named minute: the limit lifts by that minute's end,
            // not the next day (an agent words a reset a few seconds ahead as the current minute).
            "3pm (Europe/Berlin) after 2026-12-02T14:00:00Z is 2026-12-02T14:01:00Z",
            "3pm (Europe/Berlin) after 2026-12-02T14:00:45Z is 2026-12-02T14:01:00Z",
            // Strictly after: at the minute's end it is the next day's.
            "3pm (Europe/Berlin) after 2026-12-02T14:01:00Z is 2026-12-03T14:01:00Z",
            "11:30am (Asia/Colombo) after 2026-12-02T03:00:00Z is 2026-12-02T06:01:00Z",
        ]);
    }

    #[test]
    fn without_a_zone_the_local_one_is_taken() {
        let clock = parse("at 10:00 AM").unwrap();
        let after: Timestamp = "2026-12-02T12:00:00Z".parse().unwrap();
        let r = next_after(&clock, after, Some(&tz("America/New_York"))).unwrap();
        // 12:00 UTC is 07:00 in New York: 10:00 there is 15:00 UTC the same day (its minute
        // ends at 15:01).
        assert_eq!(r.at.to_string(), "2026-12-02T15:01:00Z");
        assert!(r.local);
        let r = next_after(&parse("5pm (UTC)").unwrap(), after, None).unwrap();
        assert!(!r.local);
        // No zone in the words and none known locally: no instant.
        assert_eq!(next_after(&clock, after, None), None);
    }

    #[test]
    fn midnight_noon_and_24_hour_forms() {
        assert_next(&[
            "12am after 2026-12-02T13:00:00Z is 2026-12-03T00:01:00Z",
            "12pm after 2026-12-02T13:00:00Z is 2026-12-03T12:01:00Z",
            "12:30 PM after 2026-12-02T12:00:00Z is 2026-12-02T12:31:00Z",
            "15:00 after 2026-12-02T13:00:00Z is 2026-12-02T15:01:00Z",
            "00:00 after 2026-12-02T13:00:00Z is 2026-12-03T00:01:00Z",
            "at 4:32 A.M. after 2026-12-02T13:00:00Z is 2026-12-03T04:33:00Z",
        ]);
    }

    #[test]
    fn dst_gaps_and_folds_take_the_compatible_choice() {
        // Berlin springs forward on 2026-03-29 from 02:00 to 03:00: 02:30 does not exist and is
        // read as 03:30 CEST (01:30 UTC).
        assert_next(&[
            "2:30am (Europe/Berlin) after 2026-03-29T00:00:00Z is 2026-03-29T01:31:00Z",
            // It falls back on 2026-10-25 from 03:00 to 02:00: 02:30 happens twice and is the
            // earlier, CEST (00:30 UTC).
            "2:30am (Europe/Berlin) after 2026-10-24T23:00:00Z is 2026-10-25T00:31:00Z",
            // Past the earlier one, the next is the next day's: the rule names wall-clock times.
            "2:30am (Europe/Berlin) after 2026-10-25T00:45:00Z is 2026-10-26T01:31:00Z",
        ]);
    }

    #[test]
    fn a_date_without_a_year_is_the_next_one() {
        // Claude Code's wording of a reset on another day.
        assert_next(&[
            "Dec 5, 5pm (Europe/Berlin) after 2026-12-02T03:00:00Z is 2026-12-05T16:01:00Z",
            "Jan 2, 9am (UTC) after 2026-12-30T00:00:00Z is 2027-01-02T09:01:00Z",
            "Feb 29, 9am (UTC) after 2026-12-30T00:00:00Z is 2028-02-29T09:01:00Z",
        ]);
    }

    #[test]
    fn a_date_with_a_year_is_that_date() {
        // Codex's wording of a reset on another day, in the local zone.
        assert_next(&[
            "at Dec 1st, 2026 4:00 PM after 2026-11-28T00:00:00Z is 2026-12-01T16:01:00Z",
            "at Dec 5th, 2026 4:00 PM after 2026-12-02T00:00:00Z in Europe/Berlin is 2026-12-05T15:01:00Z",
        ]);
    }

    #[test]
    fn what_is_not_understood_gives_no_instant() {
        for words in [
            "later",
            "in 4 days",
            "3 (Europe/Berlin)",
            "15",
            "13pm",
            "0am",
            "10:60",
            "24:00",
            "10:5 AM",
            "Dec 32, 5pm",
            "Foo 3, 5pm",
            "Dec 3, 26, 5pm",
            "tomorrow 5pm",
            "5pm ()",
            "",
            "1764500400",
        ] {
            assert_eq!(parse(words), None, "{words:?}");
        }
        // An unknown zone is no zone to guess at.
        let clock = parse("3pm (Mars/Olympus_Mons)").unwrap();
        let after: Timestamp = "2026-12-02T00:00:00Z".parse().unwrap();
        assert_eq!(next_after(&clock, after, Some(&TimeZone::UTC)), None);
        // 30 February never comes.
        let clock = parse("Feb 30, 5pm (UTC)").unwrap();
        assert_eq!(next_after(&clock, after, Some(&TimeZone::UTC)), None);
    }

    #[test]
    fn the_ends_of_time_give_no_instant_and_no_panic() {
        let clock = parse("Dec 31, 11:59pm (UTC)").unwrap();
        assert_eq!(
            next_after(&clock, Timestamp::MAX, Some(&TimeZone::UTC)),
            None
        );
        let clock = parse("11:59pm").unwrap();
        assert_eq!(
            next_after(&clock, Timestamp::MAX, Some(&TimeZone::UTC)),
            None
        );
        assert!(next_after(&clock, Timestamp::MIN, Some(&TimeZone::UTC)).is_some());
    }

    /// The agent's words are cut anywhere and hold any character: a multi-byte one where the
    /// meridiem or the leading `at ` would be is no time, and no panic.
    #[test]
    fn multi_byte_and_cut_words_give_no_instant_and_no_panic() {
        for words in [
            // A clause cut at the kept length ends in `…` (three bytes).
            "at 4:00 PM if you are on the Plus plan, or upgrade\u{2026}",
            "upgrade\u{2026}",
            "5\u{2026}",
            // Curly quotes around the time.
            "\u{201c}5pm\u{201d}",
            "5\u{201d}",
            "\u{201c}5pm",
            "at \u{201c}10:00 AM\u{201d}",
            // A multi-byte character inside the first three bytes.
            "a\u{e9}",
            "\u{e9}t 5pm",
            "\u{2026}",
            "\u{1f600}",
            "5p\u{e9}",
            "(\u{e9})",
        ] {
            assert_eq!(parse(words), None, "{words:?}");
        }
        // A zone name is taken as written; an unknown one gives no instant later.
        let clock = parse("5pm (\u{e9}/\u{2026})").unwrap();
        let after: Timestamp = "2026-12-02T00:00:00Z".parse().unwrap();
        assert_eq!(next_after(&clock, after, Some(&TimeZone::UTC)), None);
        // Still read when the multi-byte text is only around a time that is whole.
        assert_eq!(parse("AT 5PM").map(|c| (c.hour, c.minute)), Some((17, 0)));
    }

    proptest::proptest! {
        /// Any text at all, not only time-like text: an answer or none, never a panic.
        #[test]
        fn any_text_is_parsed_without_a_panic(words in "\\PC{0,40}") {
            let _ = parse(&words);
        }

        /// Time-like words with multi-byte characters anywhere in them.
        #[test]
        fn time_like_words_with_multi_byte_characters_without_a_panic(
            words in "(at |\u{e9}t )?[0-9]{1,2}(:[0-9]{2})?[ \u{2026}\u{201c}\u{201d}\u{e9}]{0,2}([aApP][mM\u{e9}])?[\u{2026}\u{201d}]?"
        ) {
            let _ = parse(&words);
        }

        /// Any words, any instant: an answer or none, never a panic.
        #[test]
        fn any_words_at_any_time_without_a_panic(
            words in "(at )?([A-Za-z]{3,5} [0-9]{1,2}(st|th)?,? ([0-9]{4} )?)?[0-9]{1,2}(:[0-9]{2})? ?([aApP][mM])?( \\([A-Za-z/_]{0,16}\\))?",
            secs in jiff::Timestamp::MIN.as_second()..=jiff::Timestamp::MAX.as_second(),
        ) {
            if let Some(clock) = parse(&words) {
                let after = Timestamp::from_second(secs).unwrap();
                let _ = next_after(&clock, after, Some(&TimeZone::UTC));
            }
        }
    }
}
