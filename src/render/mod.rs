//! Events → text: plain or ANSI-coloured lines for people, JSON Lines for programs,
//! and error reports with a caret under the column. The only module besides `repl`
//! that knows about colour.

pub mod diagnostic;
pub mod dot;
pub mod highlight;
pub mod json;
pub mod layout;
pub mod notation;
pub mod number;
pub mod plot;
pub mod printer;
pub mod series;
pub mod svg;
pub mod tables;
pub mod text;

pub use number::{Precision, format_number};
pub use printer::{Answer, Format, Printer};

/// How human output looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// ANSI colours (values green, gradients red, warnings yellow, errors red).
    pub color: bool,
    /// `d` and `->` instead of `∂` and `→`.
    pub ascii: bool,
    /// Significant digits of numbers.
    pub precision: Precision,
}

impl Default for Style {
    /// No colour, Unicode symbols, 10 significant digits.
    fn default() -> Style {
        Style {
            color: false,
            ascii: false,
            precision: Precision::default(),
        }
    }
}

/// Replaces the typographic symbols gradcalc writes (`∂ → × · − ² …`) with ASCII
/// (`d -> * * - ^2 ...`), for terminals and locales without Unicode (`--ascii`).
pub fn to_ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '∂' => out.push('d'),
            '→' => out.push_str("->"),
            '×' | '·' => out.push('*'),
            '−' => out.push('-'),
            '²' => out.push_str("^2"),
            'ᵢ' => out.push_str("_i"),
            '…' => out.push_str("..."),
            '≥' => out.push_str(">="),
            '≤' => out.push_str("<="),
            '√' => out.push_str("sqrt"),
            '—' => out.push_str("--"),
            other => out.push(other),
        }
    }
    out
}

/// The most characters of quoted user text (a name or literal between backticks)
/// that an error message or its help shows; longer quotes are cut with `…`.
pub const QUOTE_CHARS: usize = 40;

/// `text` with every backtick-quoted part longer than [`QUOTE_CHARS`] characters
/// cut to that many and `…`: a 10 MB name must not make a 10 MB message.
pub fn shorten_quotes(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(1024));
    for (i, part) in text.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 && part.chars().nth(QUOTE_CHARS).is_some() {
            out.extend(part.chars().take(QUOTE_CHARS));
            out.push('…');
        } else {
            out.push_str(part);
        }
    }
    out
}

/// 1-based line and column (in characters) of byte `offset` in `source`.
pub fn line_column(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let before = &source[..floor_char_boundary(source, offset)];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// The largest char boundary at or before `offset`.
fn floor_char_boundary(source: &str, mut offset: usize) -> usize {
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::line_column;

    #[test]
    fn line_and_column_count_characters() {
        assert_eq!(line_column("x + w", 4), (1, 5));
        assert_eq!(line_column("a = 1\nθ + w", 11), (2, 5));
        assert_eq!(line_column("abc", 99), (1, 4));
    }

    #[test]
    fn long_quotes_are_cut() {
        let long = "a".repeat(1000);
        let short = super::shorten_quotes(&format!("unknown name `{long}` or `x`"));
        assert_eq!(short, format!("unknown name `{}…` or `x`", "a".repeat(40)));
    }
}
