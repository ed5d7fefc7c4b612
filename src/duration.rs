//! Durations as `.baton.yml` and plans write them: seconds, or jiff's friendly format (`90s`,
//! `30m`, `1h30m`, `2 hours`) and its ISO 8601 form (`PT1H30M`). One parser for actor timeouts,
//! leases and check timeouts, in the configuration and in a plan's frontmatter alike.

use std::time::Duration;

/// The longest duration accepted: a deadline past it is no deadline, and the clock arithmetic
/// that enforces one must not overflow.
pub const MAX: Duration = Duration::from_secs(7 * 24 * 3600);

/// How a duration may be written, for the hint under an invalid one.
pub const HINT: &str = "use seconds (`900`) or units as in `90s`, `30m`, `1h30m`, `2 hours`";

/// A positive duration of at most [`MAX`] from its text (a YAML number's text is digits alone).
/// The reason on failure is jiff's own, which says where the text went wrong.
pub fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let duration = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        Duration::from_secs(text.parse().map_err(|_| format!("`{text}` is too large"))?)
    } else {
        let signed: jiff::SignedDuration = text.parse().map_err(|e| format!("`{text}`: {e}"))?;
        Duration::try_from(signed).map_err(|_| format!("`{text}` is negative"))?
    };
    check(duration, text)
}

/// `duration`, written `shown`, if it is positive and at most [`MAX`].
pub fn check(duration: Duration, shown: &str) -> Result<Duration, String> {
    if duration.is_zero() {
        return Err("it must be greater than zero".into());
    }
    if duration > MAX {
        return Err(format!(
            "`{shown}` is longer than a week (168h), the longest an attempt may be given"
        ));
    }
    Ok(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_units() {
        assert_eq!(parse("900"), Ok(Duration::from_secs(900)));
        assert_eq!(parse(" 1h30m "), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("2 hours"), Ok(Duration::from_secs(7200)));
        assert!(parse("0").is_err());
        assert!(parse("-5m").is_err());
        assert!(parse("200h").unwrap_err().contains("longer than a week"));
        assert!(parse("soon").is_err());
    }
}
