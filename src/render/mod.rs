//! Events → text: plain or ANSI-coloured lines for people, JSON Lines for programs,
//! and error reports with a caret under the column. The only module besides `repl`
//! that knows about colour.

pub mod diagnostic;
pub mod dot;
pub mod highlight;
pub mod html;
pub mod json;
pub mod layout;
pub mod notation;
pub mod notes;
pub mod number;
pub mod plot;
pub mod printer;
pub mod series;
pub mod svg;
pub mod tables;
pub mod tensor_page;
pub mod tensor_pictures;
pub mod text;
pub mod wrap;

pub use number::{Precision, format_number};
pub use printer::{Answer, Format, Printer, Show};

/// How human output looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// ANSI colours (values green, gradients red, warnings yellow, errors red).
    pub color: bool,
    /// `d` and `->` instead of `∂` and `→`.
    pub ascii: bool,
    /// Significant digits of numbers.
    pub precision: Precision,
    /// Braille charts of `:repeat` and `:descend` in the text; false where
    /// the front end draws them itself ([`Printer::chart`]: the playground,
    /// as SVG).
    pub charts: bool,
    /// The line width, in columns, that vectors and matrices are laid out
    /// in (numpy's `linewidth`): a row wider than it wraps between its
    /// elements. The terminal's width on a terminal, else [`DEFAULT_WIDTH`]
    /// (`--width N` sets it; docs/repl.md, "Wide values").
    pub width: usize,
}

/// The line width of values when the output is not a terminal and none is
/// given: the terminal's traditional 80 columns (numpy's default is 75).
pub const DEFAULT_WIDTH: usize = 80;

impl Default for Style {
    /// No colour, Unicode symbols, 10 significant digits, charts in the text.
    fn default() -> Style {
        Style {
            color: false,
            ascii: false,
            precision: Precision::default(),
            charts: true,
            width: DEFAULT_WIDTH,
        }
    }
}

/// Replaces the typographic symbols gradcalc writes (`∂ → × · − ² …`) with ASCII
/// (`d -> * * - ^2 ...`), for terminals and locales without Unicode (`--ascii`).
/// A call after `∂` is bracketed (`∂sin(x)` is `d(sin(x))`, not `dsin(x)`),
/// and subscript digits in names are written after `_` (`x₁` is `x_1`); the
/// braille dots of terminal charts become ` . * #` by how many dots a cell has.
pub fn to_ascii(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    // Where a bracket opened after `d` must be closed: the depth inside the call.
    let mut closes: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '∂' => {
                out.push('d');
                if starts_with_call(&chars[i + 1..]) {
                    out.push('(');
                    closes.push(depth);
                }
            }
            '(' => {
                depth += 1;
                out.push('(');
            }
            ')' => {
                depth = depth.saturating_sub(1);
                out.push(')');
                if closes.last() == Some(&depth) {
                    closes.pop();
                    out.push(')');
                }
            }
            '₀'..='₉' => {
                if i == 0 || !matches!(chars[i - 1], '₀'..='₉') {
                    out.push('_');
                }
                out.push(char::from(b'0' + (c as u32 - '₀' as u32) as u8));
            }
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
            // A braille cell of a terminal chart (2 × 4 dots): by how many of
            // its dots are set, a blank, `.`, `*` or `#`.
            '\u{2800}'..='\u{28FF}' => out.push(match (c as u32 - 0x2800).count_ones() {
                0 => ' ',
                1..=2 => '.',
                3..=5 => '*',
                _ => '#',
            }),
            other => out.push(other),
        }
    }
    out
}

/// Whether `rest` starts with a call (`sin(x)…`: a name, then a bracket that
/// `rest` closes), not a plain name or a bracket.
fn starts_with_call(rest: &[char]) -> bool {
    let name = rest
        .iter()
        .take_while(|c| c.is_alphanumeric() || **c == '_')
        .count();
    if name == 0 || !rest[0].is_alphabetic() || rest.get(name) != Some(&'(') {
        return false;
    }
    let mut depth = 0usize;
    for &c in &rest[name..] {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// The most characters of quoted user text (a name or literal between backticks)
/// that an error message or its help shows; longer quotes are cut with `…`.
pub const QUOTE_CHARS: usize = 40;

pub use crate::session::COMMAND_QUOTE_CHARS;

/// `text` with every backtick-quoted part longer than [`QUOTE_CHARS`] characters
/// ([`COMMAND_QUOTE_CHARS`] for a command, a quote starting with `:`) cut to
/// that many and `…`: a 10 MB name must not make a 10 MB message.
pub fn shorten_quotes(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(1024));
    for (i, part) in text.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        let limit = if part.starts_with(':') {
            COMMAND_QUOTE_CHARS
        } else {
            QUOTE_CHARS
        };
        if i % 2 == 1 && part.chars().nth(limit).is_some() {
            out.extend(part.chars().take(limit));
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
