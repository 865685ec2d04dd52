//! Cutting a source text into statements, and telling whether it is unfinished.

use super::ast::Span;
use super::lexer::{Lexer, TokenKind};

/// The state of the splitter at the end of the text.
pub(crate) struct Split {
    /// The complete statements, in order, trimmed of whitespace and comments.
    pub spans: Vec<Span>,
    /// True if the last statement is unfinished: a `(` is open or it ends in an operator.
    pub unfinished: bool,
}

/// The statement being read.
struct Current {
    start: usize,
    end: usize,
    /// Open `(` not yet closed (never below 0: an unmatched `)` is left to the parser).
    depth: usize,
    last: TokenKind,
    /// A `:command` runs to the end of the line or `;`, whatever it contains.
    command: bool,
}

impl Current {
    fn continues(&self) -> bool {
        !self.command && (self.depth > 0 || self.last.continues_line())
    }
}

/// Splits `source` into statements; see [`super::statement_spans`].
pub(crate) fn split(source: &str) -> Split {
    let mut spans = Vec::new();
    let mut current: Option<Current> = None;
    for token in Lexer::new(source) {
        match token.kind {
            TokenKind::Newline | TokenKind::Semicolon => {
                let keep = match &current {
                    None => false,
                    Some(c) if token.kind == TokenKind::Newline => c.continues(),
                    Some(c) => !c.command && c.depth > 0,
                };
                if keep {
                    if let Some(c) = current.as_mut()
                        && token.kind == TokenKind::Semicolon
                    {
                        c.end = token.end;
                        c.last = token.kind;
                    }
                } else if let Some(c) = current.take() {
                    spans.push(Span::new(c.start, c.end));
                }
            }
            kind => match current.as_mut() {
                None => {
                    current = Some(Current {
                        start: token.start,
                        end: token.end,
                        depth: usize::from(kind == TokenKind::LParen),
                        last: kind,
                        command: kind == TokenKind::Colon,
                    })
                }
                Some(c) => {
                    c.end = token.end;
                    c.last = kind;
                    if !c.command {
                        match kind {
                            TokenKind::LParen => c.depth += 1,
                            TokenKind::RParen => c.depth = c.depth.saturating_sub(1),
                            _ => {}
                        }
                    }
                }
            },
        }
    }
    let unfinished = current.as_ref().is_some_and(Current::continues);
    if let Some(c) = current {
        spans.push(Span::new(c.start, c.end));
    }
    Split { spans, unfinished }
}
