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
/// With `cut_before_new_statements`, a newline inside an open `(` or after a
/// trailing operator still ends the statement when the next line
/// [starts a new statement](starts_new_statement) (scripts: `b1 = a1 +` is
/// then refused on its own line, not blamed on the next); without it, both
/// always join lines (the REPL's check).
pub(crate) fn split(source: &str, cut_before_new_statements: bool) -> Split {
    let mut spans = Vec::new();
    let mut splitter = Splitter::default();
    for token in Lexer::new(source) {
        if let Some(span) = splitter.token(source, token, cut_before_new_statements) {
            spans.push(span);
        }
    }
    let unfinished = splitter.unfinished();
    if let Some(c) = splitter.current {
        spans.push(Span::new(c.start, c.end));
    }
    Split { spans, unfinished }
}

/// The splitter between two tokens: the statement being read, if any.
#[derive(Default)]
struct Splitter {
    current: Option<Current>,
}

impl Splitter {
    /// Whether the statement being read is unfinished (see [`Split::unfinished`]).
    fn unfinished(&self) -> bool {
        self.current.as_ref().is_some_and(Current::continues)
    }

    /// Reads `token` of `source`: the span of the statement it ends, if any.
    fn token(
        &mut self,
        source: &str,
        token: Token,
        cut_before_new_statements: bool,
    ) -> Option<Span> {
        match token.kind {
            TokenKind::Newline | TokenKind::Semicolon => {
                let keep = match &self.current {
                    None => false,
                    Some(c) if token.kind == TokenKind::Newline => {
                        c.continues()
                            && !(cut_before_new_statements
                                && starts_new_statement(source, token.end))
                    }
                    Some(c) => c.repeat || (!c.command && c.depth > 0),
                };
                if keep {
                    if let Some(c) = self.current.as_mut()
                        && token.kind == TokenKind::Semicolon
                    {
                        c.end = token.end;
                        c.last = token.kind;
                    }
                    None
                } else {
                    self.current.take().map(|c| Span::new(c.start, c.end))
                }
            }
            kind => {
                match self.current.as_mut() {
                    None => {
                        self.current = Some(Current {
                            start: token.start,
                            end: token.end,
                            depth: usize::from(kind == TokenKind::LParen),
                            last: kind,
                            command: kind == TokenKind::Colon,
                            repeat: kind == TokenKind::Colon
                                && super::parser::is_repeat(&source[token.start..]),
                        })
                    }
                    Some(c) => c.extend(source, token),
                }
                None
            }
        }
    }
}

impl Current {
    /// Takes `token` of `source` (not a newline or `;`) into the statement.
    fn extend(&mut self, source: &str, token: Token) {
        self.end = token.end;
        self.last = token.kind;
        if self.command {
            return;
        }
        match token.kind {
            TokenKind::LParen => self.depth += 1,
            TokenKind::RParen => self.depth = self.depth.saturating_sub(1),
            // A `]` or `}` meant as `)` ends the bracket too, so
            // that `(1 + ]` is refused at once, not continued.
            TokenKind::Other if matches!(source[token.start..].chars().next(), Some(']' | '}')) => {
                self.depth = self.depth.saturating_sub(1)
            }
            _ => {}
        }
    }
}

/// Whether the text typed so far is unfinished, told a line at a time: each
/// line is scanned once, so that reading n lines of a long statement costs
/// time linear in their length (see [`super::needs_more_input`], which
/// scans the whole text again).
#[derive(Default)]
pub struct Continuation {
    splitter: Splitter,
}

impl Continuation {
    /// Nothing read yet.
    pub fn new() -> Continuation {
        Continuation::default()
    }

    /// Reads the next `line` (with its newline, if it has one): true when the
    /// text read so far is unfinished, as [`super::needs_more_input`] of all the
    /// lines read, joined, says. Only `line` is scanned.
    pub fn push(&mut self, line: &str) -> bool {
        for token in Lexer::new(line) {
            // Offsets are the line's own: only the unfinished state is kept.
            let _ = self.splitter.token(line, token, false);
        }
        self.splitter.unfinished()
    }

    /// Forgets what was read (the statement ran, or was refused).
    pub fn reset(&mut self) {
        self.splitter = Splitter::default();
    }
}
