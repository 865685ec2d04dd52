//! Which statements are silenced: those on a line that ends in `;`
//! (docs/language.md §1, "A trailing `;`").

use super::ast::Span;
use super::lexer::{Lexer, TokenKind};

/// Tells, for statements taken in order from one source, whether each is on
/// a line whose last token (comments aside) is `;`. Each line is scanned
/// once, from the end of its first statement asked about, so a source of
/// 10⁶ statements on one line is read in linear time.
#[derive(Debug, Clone, Copy, Default)]
pub struct SilencedLines {
    /// The end (the newline's offset, or the source's length) of the last
    /// line scanned, and whether that line ends in `;`.
    last: Option<(usize, bool)>,
}

impl SilencedLines {
    /// No line scanned yet.
    pub fn new() -> SilencedLines {
        SilencedLines::default()
    }

    /// True when the statement at `span` of `source` ends on a line whose
    /// last token is `;` (a `#` comment after it does not count): `x = 1;`,
    /// `a = 1; b = 2;`, `:grad x;  # quiet`. Each `span` asked must end no
    /// earlier than the one before (the order statements run in); an earlier
    /// one is scanned again.
    pub fn at(&mut self, source: &str, span: Span) -> bool {
        let end = span.end.min(source.len());
        if let Some((line_end, silenced)) = self.last
            && end <= line_end
        {
            return silenced;
        }
        // A `:repeat` takes in its line's `;` (they separate its
        // statements), so its own text may end in the line's last `;`.
        let mut last = source[..end].ends_with(';').then_some(TokenKind::Semicolon);
        let mut line_end = source.len();
        for token in Lexer::starting_at(source, end) {
            if token.kind == TokenKind::Newline {
                line_end = token.start;
                break;
            }
            last = Some(token.kind);
        }
        let silenced = last == Some(TokenKind::Semicolon);
        self.last = Some((line_end, silenced));
        silenced
    }
}

#[cfg(test)]
mod tests {
    use super::SilencedLines;
    use crate::syntax::statement_spans;

    /// Whether each statement of `source` is silenced.
    fn silenced(source: &str) -> Vec<bool> {
        let mut lines = SilencedLines::new();
        statement_spans(source)
            .into_iter()
            .map(|span| lines.at(source, span))
            .collect()
    }

    #[test]
    fn a_line_ending_in_a_semicolon_is_silenced_whole() {
        assert_eq!(silenced("a = 1; b = 2"), [false, false]);
        assert_eq!(silenced("a = 1; b = 2;"), [true, true]);
        assert_eq!(
            silenced("a = 1;\nb = 2\nc = 3;  # quiet"),
            [true, false, true]
        );
        assert_eq!(silenced("a = (1 +\n 2);\nb"), [true, false]);
        assert_eq!(silenced(":grad x;"), [true]);
        assert_eq!(silenced(":grad x # a comment;"), [false]);
        assert_eq!(silenced(":repeat 2 x := x + 1;"), [true]);
        assert_eq!(silenced(":repeat 2 x := x + 1; y = x"), [false]);
        assert_eq!(silenced("x = 1;;"), [true]);
        assert_eq!(silenced("x = 1\r\n;"), [false]);
    }
}
