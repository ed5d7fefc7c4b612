//! Columns measured in terminal cells, not bytes or chars: a wide character (日本語, most
//! emoji) takes two cells and a combining accent none, so `{:<w$}` padding misaligns any table
//! holding them. And a painted status word padded after painting would count its escapes.
//!
//! A column is as wide as its widest cell up to [`MAX_COLUMN`] cells: a longer cell (a target
//! a pull request made 100 KB long) overflows its own line and pads no other, which would
//! otherwise repeat its width on every line of the report.

use unicode_width::UnicodeWidthStr;

/// The cells `text` takes on a terminal.
pub fn width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// `text` padded with spaces on the right to `cells`.
pub fn left(text: &str, cells: usize) -> String {
    format!("{text}{}", " ".repeat(cells.saturating_sub(width(text))))
}

/// `text` padded with spaces on the left to `cells`.
pub fn right(text: &str, cells: usize) -> String {
    format!("{}{text}", " ".repeat(cells.saturating_sub(width(text))))
}

/// A status word padded to `cells`, then painted as [`crate::term::colour::word`] paints it.
pub fn status(word: &str, cells: usize) -> String {
    let padded = left(word, cells);
    let pad = padded.len() - word.len();
    format!(
        "{}{}",
        crate::term::colour::word(word),
        &padded[padded.len() - pad..]
    )
}

/// The widest a column is padded to, in cells.
pub const MAX_COLUMN: usize = 60;

/// The width of a column holding `texts`: the widest of them, in cells, up to [`MAX_COLUMN`].
pub fn widest<'a>(texts: impl IntoIterator<Item = &'a str>) -> usize {
    texts
        .into_iter()
        .map(width)
        .max()
        .unwrap_or(0)
        .min(MAX_COLUMN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_and_combining_characters_take_their_cells() {
        assert_eq!(width("plans/日本語.md"), 15);
        assert_eq!(width("cafe\u{301}"), 4);
        assert_eq!(left("日本", 6), "日本  ");
        assert_eq!(right("日本", 6), "  日本");
        assert_eq!(left("toolong", 3), "toolong");
        assert_eq!(status("blocked", 10), "blocked   ");
        assert_eq!(widest(["a", "日本", "abc"]), 4);
        let long = "a/".repeat(50_000);
        assert_eq!(widest(["a", long.as_str()]), MAX_COLUMN);
        assert_eq!(left("a", widest(["a", long.as_str()])).len(), MAX_COLUMN);
    }
}
