//! Cutting a source text into statements, and telling whether it is unfinished.

use super::ast::Span;
use super::lexer::{Lexer, Operator, Token, TokenKind};

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
    /// A `:repeat` (as the grammar's `repeat_head` reads it) runs to the end of
    /// the line, `;` included (its statements).
    repeat: bool,
}

impl Current {
    fn continues(&self) -> bool {
        !self.command && (self.depth > 0 || self.last.continues_line())
    }
}

/// True if the line starting at byte `line_start` of `source` clearly starts a
/// new statement: after optional whitespace it is a `:command`, an assignment
/// (`name =`, `name +=`, `-=`, `*=`, `/=`, but not `name ==`) or a definition
/// (`name(a, b) =`). `=` never appears inside brackets, so such a line cannot
/// continue an open `(`.
///
/// Looks at a bounded prefix of the line only (it stops at the first token that
/// does not fit), so calling it once per line keeps splitting linear.
fn starts_new_statement(source: &str, line_start: usize) -> bool {
    let mut tokens = Lexer::starting_at(source, line_start);
    // `=` not followed by `=` (the lexer reads `==` as two `=`), or with
    // `compound` also `+= -= *= /=`.
    let assigns = |token: Option<Token>, compound: bool| match token {
        Some(t) if t.kind == TokenKind::Op(Operator::Eq) => {
            source.as_bytes().get(t.end) != Some(&b'=')
        }
        Some(Token {
            kind: TokenKind::Op(op),
            ..
        }) => {
            compound
                && matches!(
                    op,
                    Operator::PlusEq
                        | Operator::MinusEq
                        | Operator::StarEq
                        | Operator::SlashEq
                        | Operator::ColonEq
                )
        }
        _ => false,
    };
    match tokens.next().map(|t| t.kind) {
        Some(TokenKind::Colon) => true,
        Some(TokenKind::Name) => match tokens.next() {
            // A definition: `name(a, b) =`.
            Some(t) if t.kind == TokenKind::LParen => loop {
                match tokens.next().map(|t| t.kind) {
                    Some(TokenKind::Name | TokenKind::Comma) => {}
                    Some(TokenKind::RParen) => break assigns(tokens.next(), false),
                    _ => break false,
                }
            },
            next => assigns(next, true),
        },
        _ => false,
    }
}

/// Splits `source` into statements; see [`super::statement_spans`].
///
/// With `cut_before_new_statements`, a newline inside an open `(` still ends the
/// statement when the next line [starts a new statement](starts_new_statement)
/// (scripts); without it, an open `(` always joins lines (the REPL's check).
pub(crate) fn split(source: &str, cut_before_new_statements: bool) -> Split {
    let mut spans = Vec::new();
    let mut current: Option<Current> = None;
    for token in Lexer::new(source) {
        match token.kind {
            TokenKind::Newline | TokenKind::Semicolon => {
                let keep = match &current {
                    None => false,
                    Some(c) if token.kind == TokenKind::Newline => {
                        c.continues()
                            && !(cut_before_new_statements
                                && c.depth > 0
                                && starts_new_statement(source, token.end))
                    }
                    Some(c) => c.repeat || (!c.command && c.depth > 0),
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
                        repeat: kind == TokenKind::Colon
                            && super::parser::is_repeat(&source[token.start..]),
                    })
                }
                Some(c) => {
                    c.end = token.end;
                    c.last = kind;
                    if !c.command {
                        match kind {
                            TokenKind::LParen => c.depth += 1,
                            TokenKind::RParen => c.depth = c.depth.saturating_sub(1),
                            // A `]` or `}` meant as `)` ends the bracket too, so
                            // that `(1 + ]` is refused at once, not continued.
                            TokenKind::Other
                                if matches!(
                                    source[token.start..].chars().next(),
                                    Some(']' | '}')
                                ) =>
                            {
                                c.depth = c.depth.saturating_sub(1)
                            }
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
