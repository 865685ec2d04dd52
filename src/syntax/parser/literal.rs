//! The fast path for a plain numeric literal: a statement that is only
//! `[n, n, …]` or `[[n, …], [n, …], …]` (each `n` a number with at most one
//! sign before it), alone or assigned with `=` to a name, is read here from
//! the lexer's tokens, without pest. pest's token queue costs some 80 bytes a
//! token and several tokens a number (190 MB and 4 s for 10⁶ zeros); here a
//! number costs one tree node (24 bytes) and one argument id (4 bytes), and
//! the time is linear in the text.
//!
//! The tree is the one the grammar builds (a literal is the call `[](…)` of
//! its elements, a matrix the call of its rows), except that a signed number
//! is one node, `Number(-1)`, where the grammar writes `-(1)`: the same value
//! (a sign of a number folds when evaluated) and the same text written back.
//!
//! Before building anything the numbers are counted: a literal of more than
//! [`MAX_LITERAL_NUMBERS`] (the tensor memory budget) is refused with
//! [`SyntaxError::LiteralTooLarge`], so that its parse never allocates past
//! what the session could hold. Anything else (a name or an operation among
//! the elements, a trailing comma, a comment, a malformed number) is left to
//! the grammar, which also gives the errors.

use super::super::ast::{
    AssignOp, Expr, ExprId, ExprKind, ExprTree, Ident, LIST, Located, Name, Span, Statement,
};
use super::super::error::SyntaxError;
use super::super::lexer::{Lexer, Operator, Token, TokenKind};
use super::prescan::number_value;

/// The most numbers a literal may hold: the tensor memory budget, 2²⁷
/// numbers (`engine::tensor::DEFAULT_BUDGET`; a test checks that they agree).
pub const MAX_LITERAL_NUMBERS: usize = 1 << 27;

/// What the scan of a plain literal meets, in order.
enum Part {
    /// A number: its sign's token (if any) and its token.
    Number(Option<Token>, Token),
    /// The end of a matrix's row: its `[` and its `]`.
    RowEnd(Token, Token),
}

/// The tokens of a statement, newlines skipped (inside brackets they are
/// whitespace; a statement's text holds no other).
struct Tokens<'s> {
    text: &'s str,
    lexer: Lexer<'s>,
}

impl Tokens<'_> {
    fn next(&mut self) -> Option<Token> {
        self.lexer.by_ref().find(|t| t.kind != TokenKind::Newline)
    }

    /// Whether `token` is the bracket `bracket` (`[` or `]`, not `(` `)`).
    fn is(&self, token: &Token, bracket: &str) -> bool {
        matches!(token.kind, TokenKind::LParen | TokenKind::RParen)
            && self.text.get(token.start..token.end) == Some(bracket)
    }

    /// One element starting at `first`: an optional sign, then a well-formed
    /// number.
    fn element(&mut self, first: Token) -> Option<Part> {
        let (sign, number) = match first.kind {
            TokenKind::Op(Operator::Minus | Operator::Plus) => (Some(first), self.next()?),
            _ => (None, first),
        };
        (number.kind == TokenKind::Number && number.problem.is_none())
            .then_some(Part::Number(sign, number))
    }

    /// The elements of a row from `first` (the token after its `[` or after
    /// a `,`) up to its `]`, each given to `each`: the `]`, or `None` when
    /// the row is not plain numbers.
    fn row(&mut self, mut first: Token, each: &mut dyn FnMut(Part)) -> Option<Token> {
        loop {
            each(self.element(first)?);
            let after = self.next()?;
            if self.is(&after, "]") {
                return Some(after);
            }
            if after.kind != TokenKind::Comma {
                return None;
            }
            first = self.next()?;
        }
    }
}

/// What the scan of a plain literal statement found.
struct Plain {
    /// The name assigned to, with `=`, if any.
    target: Option<Token>,
    /// The literal's `[`.
    open: Token,
    /// Its `]`.
    close: Token,
    /// True for a matrix (rows in brackets).
    matrix: bool,
    /// How many numbers it holds.
    numbers: usize,
    /// How many rows (a matrix), else 0.
    rows: usize,
}

/// Reads `text` as a plain literal statement, each number and each end of
/// a matrix's row given to `each` in order; `None` when it is not one.
fn walk(text: &str, each: &mut dyn FnMut(Part)) -> Option<Plain> {
    let mut tokens = Tokens {
        text,
        lexer: Lexer::new(text),
    };
    let mut open = tokens.next()?;
    let mut target = None;
    if open.kind == TokenKind::Name {
        let name = &text[open.start..open.end];
        // Plain ASCII names only: the grammar's name rules (Unicode, `.`)
        // are its own.
        if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return None;
        }
        if tokens.next()?.kind != TokenKind::Op(Operator::Eq) {
            return None;
        }
        target = Some(open);
        open = tokens.next()?;
    }
    if !tokens.is(&open, "[") {
        return None;
    }
    let mut numbers = 0usize;
    let mut rows = 0usize;
    let mut count = |part: Part| {
        if matches!(part, Part::Number(..)) {
            numbers += 1;
        }
        each(part);
    };
    let first = tokens.next()?;
    let matrix = tokens.is(&first, "[");
    let close = if matrix {
        let mut row_open = first;
        loop {
            let row_first = tokens.next()?;
            let row_close = tokens.row(row_first, &mut count)?;
            rows += 1;
            count(Part::RowEnd(row_open, row_close));
            let after = tokens.next()?;
            if tokens.is(&after, "]") {
                break after;
            }
            if after.kind != TokenKind::Comma {
                return None;
            }
            row_open = tokens.next()?;
            if !tokens.is(&row_open, "[") {
                return None;
            }
        }
    } else {
        tokens.row(first, &mut count)?
    };
    // Nothing after the literal's `]` (comments aside).
    if tokens.next().is_some() {
        return None;
    }
    Some(Plain {
        target,
        open,
        close,
        matrix,
        numbers,
        rows,
    })
}

/// The statement `text` (at byte `offset` of the source) when it is a plain
/// literal, alone or assigned with `=`: its tree built as the grammar builds
/// it (see the module's doc); `None` for any other statement.
///
/// Errors: [`SyntaxError::LiteralTooLarge`] when it holds more than
/// [`MAX_LITERAL_NUMBERS`] numbers (found before anything is allocated).
pub(super) fn plain_literal(text: &str, offset: usize) -> Option<Result<Located, SyntaxError>> {
    plain_literal_within(text, offset, MAX_LITERAL_NUMBERS)
}

/// [`plain_literal`] with at most `limit` numbers.
fn plain_literal_within(
    text: &str,
    offset: usize,
    limit: usize,
) -> Option<Result<Located, SyntaxError>> {
    let at = |t: &Token| Span::new(offset + t.start, offset + t.end);
    // First the shape and the count, allocating nothing.
    let plain = walk(text, &mut |_| {})?;
    let span = at(&plain.open).to(at(&plain.close));
    if plain.numbers > limit {
        return Some(Err(SyntaxError::LiteralTooLarge {
            span,
            numbers: plain.numbers,
            limit,
        }));
    }
    let mut nodes: Vec<Expr> = Vec::with_capacity(plain.numbers + plain.rows + 1);
    // The ids of the current row's numbers (a matrix), or of every number.
    let mut numbers: Vec<ExprId> = Vec::new();
    let mut rows: Vec<ExprId> = Vec::with_capacity(plain.rows);
    if !plain.matrix {
        numbers.reserve_exact(plain.numbers);
    }
    walk(text, &mut |part| {
        let (kind, span) = match part {
            Part::Number(sign, number) => {
                let magnitude = number_value(&text[number.start..number.end]);
                match sign {
                    Some(sign) if sign.kind == TokenKind::Op(Operator::Minus) => {
                        (ExprKind::Number(-magnitude), at(&sign).to(at(&number)))
                    }
                    Some(sign) => (ExprKind::Number(magnitude), at(&sign).to(at(&number))),
                    None => (ExprKind::Number(magnitude), at(&number)),
                }
            }
            Part::RowEnd(open, close) => {
                let span = at(&open).to(at(&close));
                let row = std::mem::take(&mut numbers);
                (ExprKind::call(Name::new(LIST), span, row), span)
            }
        };
        let is_row = matches!(kind, ExprKind::Call(_));
        nodes.push(Expr::new(kind, span));
        let id = ExprId((nodes.len() - 1) as u32);
        if is_row {
            rows.push(id);
        } else {
            numbers.push(id);
        }
    })?;
    let args = if plain.matrix { rows } else { numbers };
    nodes.push(Expr::new(ExprKind::call(Name::new(LIST), span, args), span));
    let tree = ExprTree { nodes };
    let (statement, start) = match plain.target {
        Some(target) => (
            Statement::Assign {
                target: Ident {
                    name: text[target.start..target.end].to_string(),
                    span: at(&target),
                },
                op: AssignOp::Set,
                value: tree,
            },
            at(&target).start,
        ),
        None => (Statement::Expr(tree), span.start),
    };
    Some(Ok(Located {
        statement,
        span: Span::new(start, span.end),
        rest: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree pest builds for `text`.
    fn by_pest(text: &str) -> Located {
        super::super::parse_scanned(text, 0, false, None, false).expect("parses")
    }

    fn fast(text: &str) -> Located {
        plain_literal(text, 0)
            .expect("a plain literal")
            .expect("within the limit")
    }

    #[test]
    fn unsigned_literals_give_the_grammars_tree() {
        for text in [
            "[1, 2.5, 1_000]",
            "x = [0]",
            "W = [[1, 2], [3, 4]]  # a comment",
            "  v  =  [ 1e3 ,\n .5 ]",
            "[[1], [2, 3]]",
        ] {
            assert_eq!(fast(text), by_pest(text), "{text}");
        }
    }

    #[test]
    fn a_signed_number_is_one_node_with_its_value() {
        let located = fast("[-1, +2, - 3]");
        let Statement::Expr(tree) = located.statement else {
            panic!("an expression")
        };
        let values: Vec<f64> = tree
            .nodes
            .iter()
            .filter_map(|n| match n.kind {
                ExprKind::Number(x) => Some(x),
                _ => None,
            })
            .collect();
        assert_eq!(values, [-1.0, 2.0, -3.0]);
        // `- 3` spans the sign and the number, as `-(3)` does in the grammar's tree.
        assert_eq!(tree.nodes[2].span(), Span::new(9, 12));
        assert_eq!(located.span, Span::new(0, 13));
    }

    #[test]
    fn anything_but_plain_numbers_is_left_to_the_grammar() {
        for text in [
            "[1, x]",
            "[1, 2]ᵀ",
            "[1, 2,]",
            "[]",
            "[[1], 2]",
            "[1, 2] + 1",
            "x += [1]",
            "x := [1]",
            "f(x) = [1]",
            "[2x]",
            "[1 2]",
            "[(1)]",
            "[--1]",
            "é = [1]",
            "(1, 2)",
            "[1, 2)",
        ] {
            assert!(plain_literal(text, 0).is_none(), "{text}");
        }
    }

    #[test]
    fn a_literal_past_the_limit_is_refused_before_building() {
        let error = plain_literal_within("x = [[1, 2], [3, 4]]", 10, 3)
            .expect("a plain literal")
            .expect_err("over the limit");
        assert_eq!(
            error,
            SyntaxError::LiteralTooLarge {
                span: Span::new(14, 30),
                numbers: 4,
                limit: 3,
            }
        );
        assert!(plain_literal_within("[1, 2, 3]", 0, 3).is_some_and(|r| r.is_ok()));
    }

    #[test]
    fn the_limit_is_the_tensor_budget() {
        assert_eq!(MAX_LITERAL_NUMBERS, crate::engine::tensor::DEFAULT_BUDGET);
    }
}
