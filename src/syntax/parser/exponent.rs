//! The implicit product right after an exponent (`e^-2x`, `x^2y`,
//! `2^3(x+1)`), refused: handwriting means `e^(-2x)` as often as `e^(-2)·x`,
//! and the two differ in value and derivative. The pre-scan feeds every token
//! to an [`ExponentWatch`], which says when one of them starts such a product.

use super::super::ast::Span;
use super::super::error::SyntaxError;
use super::super::lexer::{Lexer, Operator, Token, TokenKind};
use super::prescan::MAX_QUOTED_FIX;

/// A `^` (or `**`) whose exponent has not yet been read.
#[derive(Clone, Copy)]
struct Power {
    /// Where the base starts (its name, number, `(` or callee).
    base: usize,
    /// The `^` or `**`.
    caret: Token,
}

/// Follows the tokens of one statement, in order, to find an implicit product
/// whose left factor is the exponent of a power.
#[derive(Default)]
pub(super) struct ExponentWatch {
    /// Where the last operand started (the base of a `^` that comes next).
    operand: usize,
    /// A `^` whose exponent's operand is still to come (past its signs and `√`).
    pending: Option<Power>,
    /// The name just read after a `^`, if it turns out to be a call's callee.
    callee: Option<Power>,
    /// The power whose exponent ends with the previous token (a number or a `)`,
    /// past superscripts), if any.
    ended: Option<Power>,
    /// For each open bracket: where its operand starts and the power it is the
    /// exponent of, if any.
    open: Vec<(usize, Option<Power>)>,
}

impl ExponentWatch {
    /// Reads `token`, `prev` being the token before it (newlines skipped), and
    /// returns the error if `token` starts an implicit product after an exponent.
    /// `offset` is the statement's place in the whole source.
    pub(super) fn see(
        &mut self,
        text: &str,
        offset: usize,
        prev: Option<Token>,
        token: Token,
    ) -> Option<SyntaxError> {
        let ended = self.ended.take();
        let prev_ends_operand = prev.is_some_and(|p| p.kind.ends_operand());
        let callee = self.callee.take();
        match token.kind {
            TokenKind::Name | TokenKind::LParen | TokenKind::Op(Operator::Root)
                if ended.is_some() =>
            {
                return ended.map(|power| refusal(text, offset, power, token));
            }
            TokenKind::Superscript => self.ended = ended,
            TokenKind::Op(Operator::Caret | Operator::StarStar) => {
                self.pending = Some(Power {
                    base: self.operand,
                    caret: token,
                });
            }
            TokenKind::Op(Operator::Plus | Operator::Minus | Operator::Root)
                if !prev_ends_operand => {}
            TokenKind::Number => {
                self.operand = token.start;
                self.ended = self.pending.take();
            }
            TokenKind::Name => {
                self.operand = token.start;
                self.callee = self.pending.take();
            }
            TokenKind::LParen => {
                let is_call =
                    prev.is_some_and(|p| matches!(p.kind, TokenKind::Name | TokenKind::Prime));
                let power = if is_call { callee } else { self.pending.take() };
                let start = if is_call { self.operand } else { token.start };
                self.open.push((start, power));
            }
            TokenKind::Prime => self.callee = callee,
            TokenKind::RParen => {
                if let Some((start, power)) = self.open.pop() {
                    self.operand = start;
                    self.ended = power;
                }
            }
            _ => self.pending = None,
        }
        None
    }
}

/// The error for the implicit product after `power`'s exponent whose right
/// factor starts at `right`, with both readings bracketed.
fn refusal(text: &str, offset: usize, power: Power, right: Token) -> SyntaxError {
    let end = factor_end(text, right);
    let base = &text[power.base..power.caret.end];
    let exponent = text[power.caret.end..right.start].trim();
    let factor = &text[right.start..end];
    let together = format!("{base}({})", text[power.caret.end..end].trim());
    let signed = exponent.starts_with(['-', '+', '−', '√']);
    let apart = if signed {
        format!("{base}({exponent})*{factor}")
    } else {
        format!("{base}{exponent}*{factor}")
    };
    let help = if together.chars().count().max(apart.chars().count()) <= MAX_QUOTED_FIX {
        format!("in the exponent: `{together}`; a factor after the power: `{apart}`")
    } else {
        "bracket the exponent, `a^(…)`, or write `*` after it".to_string()
    };
    SyntaxError::ImplicitAfterExponent {
        span: Span::new(offset + power.base, offset + end),
        text: text[power.base..end].to_string(),
        help,
    }
}

/// Where the implicit factor that starts with `first` ends: a name with its
/// superscript, a call or bracket, `√` and its operand, and any brackets or
/// name multiplied on after a bracket (`(x+1)(x-1)`).
fn factor_end(text: &str, first: Token) -> usize {
    let mut tokens = Lexer::starting_at(text, first.start)
        .filter(|t| t.kind != TokenKind::Newline)
        .peekable();
    let mut depth = 0usize;
    let mut end = first.end;
    // The kind of the last token taken at depth 0.
    let mut last = None;
    while let Some(token) = tokens.next_if(|t| {
        depth > 0
            || match last {
                None => true,
                Some(TokenKind::Op(Operator::Root)) => true,
                Some(TokenKind::Name) => {
                    matches!(t.kind, TokenKind::LParen | TokenKind::Superscript)
                }
                Some(TokenKind::Number) => t.kind == TokenKind::Superscript,
                Some(TokenKind::RParen) => matches!(
                    t.kind,
                    TokenKind::LParen | TokenKind::Name | TokenKind::Superscript
                ),
                Some(_) => false,
            }
    }) {
        match token.kind {
            TokenKind::LParen => depth += 1,
            TokenKind::RParen => depth = depth.saturating_sub(1),
            _ => {}
        }
        end = token.end;
        if depth == 0 {
            last = Some(token.kind);
        }
    }
    end
}
