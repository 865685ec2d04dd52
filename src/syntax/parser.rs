//! One statement → [`Located`]: a pre-scan for lexical errors and nesting depth,
//! then the pest grammar, then a Pratt parser that folds each flat `expr` into an
//! [`ExprTree`] (operands pushed before the nodes that use them).

use std::cell::RefCell;
use std::sync::LazyLock;

use pest::Parser as _;
use pest::error::{ErrorVariant, InputLocation};
use pest::iterators::Pair;
use pest::pratt_parser::{Assoc, Op, PrattParser};

use super::MAX_NESTING;
use super::ast::{
    AssignOp, BinaryOp, Expr, ExprId, ExprKind, ExprTree, Ident, Located, Span, Statement, UnaryOp,
};
use super::error::SyntaxError;
use super::lexer::{Lexer, NumberProblem, Operator, Token, TokenKind};

/// The pest parser generated from `grammar/gradcalc.pest`.
#[derive(pest_derive::Parser)]
#[grammar = "../grammar/gradcalc.pest"]
struct Grammar;

/// Precedence, lowest first:
///
/// | level | operators | associativity |
/// |---|---|---|
/// | 1 | `+` `-` | left |
/// | 2 | `*` `/` | left |
/// | 3 | a sign `-x` `+x` | prefix: binds up to the next `+ - * /` (`-2x` = −(2x), `-2^2` = −4) |
/// | 4 | implicit product `2x`, `2 x`, `2(x+1)` | left |
/// | 4½ | a sign right after `^` (`exp_neg`, `exp_plus`) | prefix: binds only what an unsigned exponent would |
/// | 5 | `^` `**` | right |
///
/// A sign in an exponent binds only the power's operand (with any `^` chain
/// after it), never an implicit product: `2^-2x` = (2^−2)·x, as `2^2x` =
/// (2^2)·x; `2^-2^3` = 2^(−(2^3)); `2^--2x` = (2^2)·x; `2^-2(x+1)` = (2^−2)·(x+1).
/// The grammar gives such signs their own rules so that the Pratt parser can
/// rank them between level 4 and level 5.
static PRATT: LazyLock<PrattParser<Rule>> = LazyLock::new(|| {
    PrattParser::new()
        .op(Op::infix(Rule::add, Assoc::Left) | Op::infix(Rule::sub, Assoc::Left))
        .op(Op::infix(Rule::mul, Assoc::Left) | Op::infix(Rule::div, Assoc::Left))
        .op(Op::prefix(Rule::neg) | Op::prefix(Rule::plus))
        .op(Op::infix(Rule::implicit_mul, Assoc::Left))
        .op(Op::prefix(Rule::exp_neg) | Op::prefix(Rule::exp_plus))
        .op(Op::infix(Rule::pow, Assoc::Right))
});

/// Parses `source[span]`; see [`super::parse_statement`].
pub(crate) fn parse(source: &str, span: Span) -> Result<Located, SyntaxError> {
    let Some(text) = source.get(span.start..span.end) else {
        let at = span.start.min(source.len());
        return Err(SyntaxError::Unexpected {
            span: Span::new(at, at),
            expected: "a statement span inside the source, on character boundaries".into(),
            found: format!("the span {}..{}", span.start, span.end),
            help: None,
        });
    };
    let offset = span.start;
    let is_command = Lexer::new(text)
        .find(|t| t.kind != TokenKind::Newline)
        .is_some_and(|t| t.kind == TokenKind::Colon);
    let scan = if is_command {
        Scan::default()
    } else {
        prescan(text, offset)?
    };
    if scan.max_nesting <= SHALLOW_NESTING {
        return parse_scanned(text, offset, is_command, scan.problem);
    }
    // pest and the Pratt parser recurse once per level, a few kB per level in a
    // debug build: run deep statements on a thread with a stack of known size
    // rather than on the caller's, which may be small (2 MB for test threads).
    std::thread::scope(|scope| {
        let deep = std::thread::Builder::new()
            .name("gradcalc-parse".into())
            .stack_size(DEEP_STACK_BYTES)
            .spawn_scoped(scope, || {
                parse_scanned(text, offset, is_command, scan.problem)
            });
        match deep {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No threads (or no memory for a stack): refuse rather than risk overflow.
            Err(_) => Err(SyntaxError::TooDeep {
                span: Span::new(offset, offset + text.len()),
                limit: SHALLOW_NESTING,
            }),
        }
    })
}

/// Nesting up to which a statement is parsed on the caller's stack (about
/// 250 kB of stack in a debug build).
const SHALLOW_NESTING: usize = 64;

/// The stack of the thread that parses deeper statements: room for
/// [`MAX_NESTING`] levels at about 3.5 kB each in a debug build (measured),
/// with a fourfold margin.
const DEEP_STACK_BYTES: usize = 16 * 1024 * 1024;

/// Runs the grammar on a statement that passed the scan, and builds the AST.
fn parse_scanned(
    text: &str,
    offset: usize,
    is_command: bool,
    scanned: Option<SyntaxError>,
) -> Result<Located, SyntaxError> {
    match Grammar::parse(Rule::statement, text) {
        Ok(mut pairs) => match scanned {
            Some(problem) => Err(problem),
            None => {
                let statement = pairs.next().and_then(|p| p.into_inner().next());
                match statement {
                    Some(pair) => Ok(build_statement(pair, offset)),
                    None => Err(unexpected_end(text, offset)),
                }
            }
        },
        Err(error) => {
            let error = convert_error(&error, text, offset, is_command);
            match scanned {
                Some(problem) if problem.span().start <= error.span().start => Err(problem),
                _ => Err(error),
            }
        }
    }
}

fn unexpected_end(text: &str, offset: usize) -> SyntaxError {
    let at = offset + text.len();
    SyntaxError::Unexpected {
        span: Span::new(at, at),
        expected: "a statement".into(),
        found: "end of input".into(),
        help: None,
    }
}

// ---------------------------------------------------------------------------
// The scan before the grammar

/// Nesting bookkeeping for one bracket level.
#[derive(Default)]
struct Level {
    /// Prefix signs waiting for their operand.
    signs: usize,
    /// Length of the current `^` chain (and implicit multiplications in it).
    chain: usize,
}

/// What [`prescan`] found.
#[derive(Default)]
struct Scan {
    /// The first lexical problem, if any.
    problem: Option<SyntaxError>,
    /// The deepest nesting (see [`MAX_NESTING`]).
    max_nesting: usize,
}

/// Scans one (non-command) statement before the grammar runs.
///
/// Returns `Err(TooDeep)` as soon as the nesting passes [`MAX_NESTING`] (the
/// grammar and the Pratt parser recurse once per level, so the text must not
/// reach them). Otherwise returns the first lexical problem, if any: a
/// malformed or out-of-range number, two names side by side, an unmatched `)`
/// or an unclosed `(` (whichever comes first in the text), and the deepest
/// nesting seen.
fn prescan(text: &str, offset: usize) -> Result<Scan, SyntaxError> {
    let at = |t: &Token| Span::new(offset + t.start, offset + t.end);
    // The top level apart, the open brackets (each with its level) in a vector
    // that allocates only when a bracket opens.
    let mut top = Level::default();
    let mut levels: Vec<(Level, usize)> = Vec::new();
    let mut nesting = 0usize;
    let mut max_nesting = 0usize;
    let mut problem: Option<SyntaxError> = None;
    let mut prev: Option<Token> = None;
    for token in Lexer::new(text) {
        let kind = token.kind;
        if kind == TokenKind::Newline {
            continue;
        }
        let after_number = prev.is_some_and(|p| p.kind == TokenKind::Number);
        let prev_ends_operand = prev.is_some_and(|p| p.kind.ends_operand());
        let level = match levels.last_mut() {
            Some((level, _)) => level,
            None => &mut top,
        };
        let mut reset = false;
        match kind {
            TokenKind::Number if problem.is_none() => {
                problem = check_number(text, &token, at(&token));
            }
            TokenKind::Name => {
                if after_number {
                    level.chain += 1;
                    nesting += 1;
                }
                if let Some(p) = prev.filter(|p| p.kind == TokenKind::Name)
                    && problem.is_none()
                {
                    problem = Some(adjacent_names(text, offset, p, token, levels.is_empty()));
                }
            }
            TokenKind::LParen => {
                if after_number {
                    level.chain += 1;
                    nesting += 1;
                }
                levels.push((Level::default(), token.start));
                nesting += 1;
            }
            TokenKind::RParen => {
                if let Some((closed, _)) = levels.pop() {
                    nesting -= 1 + closed.signs + closed.chain;
                } else if problem.is_none() {
                    problem = Some(SyntaxError::UnmatchedParen { span: at(&token) });
                }
            }
            TokenKind::Op(Operator::Plus | Operator::Minus) if !prev_ends_operand => {
                level.signs += 1;
                nesting += 1;
            }
            TokenKind::Op(Operator::Caret | Operator::StarStar) => {
                level.chain += 1;
                nesting += 1;
            }
            TokenKind::Op(_) | TokenKind::Comma => reset = true,
            _ => {}
        }
        if reset {
            let level = match levels.last_mut() {
                Some((level, _)) => level,
                None => &mut top,
            };
            nesting -= level.signs + level.chain;
            *level = Level::default();
        }
        max_nesting = max_nesting.max(nesting);
        if nesting > MAX_NESTING {
            return Err(SyntaxError::TooDeep {
                span: at(&token),
                limit: MAX_NESTING,
            });
        }
        prev = Some(token);
    }
    if let Some(&(_, open)) = levels.last() {
        let start = offset + open;
        if problem.as_ref().is_none_or(|p| start < p.span().start) {
            problem = Some(SyntaxError::UnclosedParen {
                span: Span::new(start, start + 1),
            });
        }
    }
    Ok(Scan {
        problem,
        max_nesting,
    })
}

/// The longest statement that a help quotes whole with its fix (`x=2; y=3`).
const MAX_QUOTED_FIX: usize = 80;

/// `text` with `replacement` for the bytes `start..end`, if short enough to quote.
fn quoted_fix(text: &str, start: usize, end: usize, replacement: &str) -> Option<String> {
    let fix = format!("{}{replacement}{}", &text[..start], &text[end..]);
    (fix.chars().count() <= MAX_QUOTED_FIX && !fix.contains('\n')).then_some(fix)
}

/// Declaration keywords of other languages, refused with the fix `x = 2`.
const DECLARATION_KEYWORDS: &[&str] = &["let", "var", "const"];

/// The error for the name `right` right after the name `left` (`x y`), which
/// is never a product. Two cases read better as something else:
/// `let x = 2` (a declaration keyword as the first token) and, at the top bracket
/// level, `x=y z=3` (`right` followed by an assignment operator: a missing `;`).
fn adjacent_names(text: &str, offset: usize, left: Token, right: Token, top: bool) -> SyntaxError {
    let left_text = &text[left.start..left.end];
    let first = Lexer::new(text)
        .find(|t| t.kind != TokenKind::Newline)
        .is_some_and(|t| t.start == left.start);
    if first && DECLARATION_KEYWORDS.contains(&left_text) {
        return SyntaxError::DeclarationKeyword {
            span: Span::new(offset + left.start, offset + left.end),
            keyword: left_text.to_string(),
            fix: quoted_fix(text, 0, right.start, ""),
        };
    }
    let next = Lexer::starting_at(text, right.end).find(|t| t.kind != TokenKind::Newline);
    if top && next.is_some_and(|t| is_assign_op(t.kind)) {
        return SyntaxError::MissingSemicolon {
            span: Span::new(offset + right.start, offset + right.end),
            fix: quoted_fix(text, left.end, left.end, ";"),
        };
    }
    SyntaxError::AdjacentNames {
        span: Span::new(offset + left.start, offset + right.end),
        left: left_text.to_string(),
        right: text[right.start..right.end].to_string(),
    }
}

/// `=`, `+=`, `-=`, `*=`, `/=`, `:=`.
fn is_assign_op(kind: TokenKind) -> bool {
    matches!(
        kind,
        TokenKind::Op(
            Operator::Eq
                | Operator::PlusEq
                | Operator::MinusEq
                | Operator::StarEq
                | Operator::SlashEq
                | Operator::ColonEq
        )
    )
}

/// The problem with a number literal token, if any.
fn check_number(text: &str, token: &Token, span: Span) -> Option<SyntaxError> {
    let literal = &text[token.start..token.end];
    if let Some(problem) = token.problem {
        let help = match problem {
            NumberProblem::EmptyExponent => Some(format!(
                "write the exponent's digits right after `e`, as in `{}3`",
                literal.trim_end()
            )),
            NumberProblem::FractionalExponent => {
                Some("for a fractional power of ten use `^`, as in `2*10^1.5`".to_string())
            }
            NumberProblem::Radix => {
                let radix = match literal.as_bytes().get(1) {
                    Some(b'x' | b'X') => 16,
                    Some(b'b' | b'B') => 2,
                    _ => 8,
                };
                let digits = literal[2..].replace('_', "");
                u64::from_str_radix(&digits, radix)
                    .ok()
                    .map(|value| format!("write it in decimal: `{value}`"))
            }
            NumberProblem::TwoDots | NumberProblem::Underscore => None,
        };
        return Some(SyntaxError::MalformedNumber {
            span,
            text: literal.to_string(),
            reason: problem.reason().to_string(),
            help,
        });
    }
    let value = number_value(literal);
    if value.is_infinite() {
        return Some(SyntaxError::NumberOverflow {
            span,
            text: literal.to_string(),
        });
    }
    let mantissa = literal.split(['e', 'E']).next().unwrap_or(literal);
    if value == 0.0 && mantissa.bytes().any(|b| matches!(b, b'1'..=b'9')) {
        return Some(SyntaxError::NumberUnderflow {
            span,
            text: literal.to_string(),
        });
    }
    None
}

/// The value of a well-formed number literal (`1_000` → 1000.0).
fn number_value(literal: &str) -> f64 {
    let parsed = if literal.contains('_') {
        literal.replace('_', "").parse::<f64>()
    } else {
        literal.parse::<f64>()
    };
    // The grammar and the scan only let well-formed literals through.
    parsed.unwrap_or(f64::NAN)
}

// ---------------------------------------------------------------------------
// Building the AST

/// Collects the nodes of one [`ExprTree`] while the Pratt parser folds an `expr`.
struct Builder {
    nodes: RefCell<Vec<Expr>>,
    offset: usize,
}

impl Builder {
    fn new(offset: usize) -> Self {
        Builder {
            nodes: RefCell::new(Vec::with_capacity(8)),
            offset,
        }
    }

    fn span(&self, span: pest::Span<'_>) -> Span {
        Span::new(self.offset + span.start(), self.offset + span.end())
    }

    fn push(&self, kind: ExprKind, span: Span) -> ExprId {
        let mut nodes = self.nodes.borrow_mut();
        nodes.push(Expr { kind, span });
        ExprId((nodes.len() - 1) as u32)
    }

    fn node_span(&self, id: ExprId) -> Span {
        self.nodes.borrow()[id.0 as usize].span
    }

    /// Folds an `expr` pair into nodes, returning the id of its root.
    fn expr(&self, pair: Pair<'_, Rule>) -> ExprId {
        PRATT
            .map_primary(|primary| self.primary(primary))
            .map_prefix(|op, operand| {
                let op_kind = match op.as_rule() {
                    Rule::neg | Rule::exp_neg => UnaryOp::Neg,
                    _ => UnaryOp::Plus,
                };
                let span = self.span(op.as_span()).to(self.node_span(operand));
                self.push(
                    ExprKind::Unary {
                        op: op_kind,
                        operand,
                    },
                    span,
                )
            })
            .map_infix(|lhs, op, rhs| {
                let op = match op.as_rule() {
                    Rule::add => BinaryOp::Add,
                    Rule::sub => BinaryOp::Sub,
                    Rule::div => BinaryOp::Div,
                    Rule::pow => BinaryOp::Pow,
                    _ => BinaryOp::Mul,
                };
                let span = self.node_span(lhs).to(self.node_span(rhs));
                self.push(ExprKind::Binary { op, lhs, rhs }, span)
            })
            .parse(pair.into_inner())
    }

    fn primary(&self, pair: Pair<'_, Rule>) -> ExprId {
        let span = self.span(pair.as_span());
        match pair.as_rule() {
            Rule::number => self.push(ExprKind::Number(number_value(pair.as_str())), span),
            Rule::paren => {
                let inner = pair.into_inner().next();
                let id = inner.map_or_else(|| grammar_bug("paren"), |e| self.expr(e));
                // The node for `(a+b)` covers the brackets too.
                self.nodes.borrow_mut()[id.0 as usize].span = span;
                id
            }
            Rule::call => {
                let mut inner = pair.into_inner();
                let Some(callee) = inner.next() else {
                    grammar_bug("call")
                };
                let mut parts = callee.into_inner();
                let name = parts.next().unwrap_or_else(|| grammar_bug("callee"));
                let derivative = parts.next().is_some();
                let args = inner.map(|arg| self.expr(arg)).collect();
                let call = ExprKind::Call {
                    name: name.as_str().to_string(),
                    name_span: self.span(name.as_span()),
                    derivative,
                    args,
                };
                self.push(call, span)
            }
            _ => self.push(ExprKind::Name(pair.as_str().to_string()), span),
        }
    }

    fn finish(self) -> ExprTree {
        ExprTree {
            nodes: self.nodes.into_inner(),
        }
    }
}

/// The grammar guarantees the shape of its pairs; this is never reached.
fn grammar_bug(rule: &str) -> ! {
    unreachable!("gradcalc.pest: a `{rule}` pair without its children")
}

fn ident(pair: &Pair<'_, Rule>, offset: usize) -> Ident {
    let span = pair.as_span();
    Ident {
        name: pair.as_str().to_string(),
        span: Span::new(offset + span.start(), offset + span.end()),
    }
}

fn tree(pair: Pair<'_, Rule>, offset: usize) -> ExprTree {
    let builder = Builder::new(offset);
    builder.expr(pair);
    builder.finish()
}

/// Builds the statement from the child of the `statement` pair.
fn build_statement(pair: Pair<'_, Rule>, offset: usize) -> Located {
    let pest_span = pair.as_span();
    let span = Span::new(offset + pest_span.start(), offset + pest_span.end());
    let statement = match pair.as_rule() {
        Rule::command => {
            let mut inner = pair.into_inner();
            let name = inner.next().unwrap_or_else(|| grammar_bug("command"));
            Statement::Command {
                name: ident(&name, offset),
                args: inner.map(|w| ident(&w, offset)).collect(),
            }
        }
        Rule::definition => {
            let mut inner = pair.into_inner();
            let name = inner.next().unwrap_or_else(|| grammar_bug("definition"));
            let mut params = Vec::new();
            let mut body = None;
            for part in inner {
                match part.as_rule() {
                    Rule::name => params.push(ident(&part, offset)),
                    _ => body = Some(tree(part, offset)),
                }
            }
            Statement::Define {
                name: ident(&name, offset),
                params,
                body: body.unwrap_or_else(|| grammar_bug("definition")),
            }
        }
        Rule::assignment => {
            let mut inner = pair.into_inner();
            let (Some(target), Some(op), Some(value)) = (inner.next(), inner.next(), inner.next())
            else {
                grammar_bug("assignment")
            };
            let op = match op.as_str() {
                "+=" => AssignOp::Add,
                "-=" => AssignOp::Sub,
                "*=" => AssignOp::Mul,
                "/=" => AssignOp::Div,
                ":=" => AssignOp::Update,
                _ => AssignOp::Set,
            };
            Statement::Assign {
                target: ident(&target, offset),
                op,
                value: tree(value, offset),
            }
        }
        _ => Statement::Expr(tree(pair, offset)),
    };
    Located { statement, span }
}

// ---------------------------------------------------------------------------
// Grammar errors

/// A grammar error that reads better as one of the language's own spellings:
/// `x=2 y=3` (a missing `;`: the name
/// before the `=` follows, after a space, text that is a whole statement), and
/// `f''(2)` ([`SyntaxError::HigherDerivative`]). `found` is the token where the
/// grammar stopped, `prev` and `before_prev` the two before it, `brackets` the
/// brackets open there.
fn misreading(
    text: &str,
    offset: usize,
    before_prev: Option<Token>,
    prev: Option<Token>,
    found: Token,
    brackets: &[bool],
) -> Option<SyntaxError> {
    let mut after = Lexer::starting_at(text, found.end).filter(|t| t.kind != TokenKind::Newline);
    let next = after.next();
    match found.kind {
        TokenKind::Prime if next.is_some_and(|t| t.kind == TokenKind::Prime) => {
            let name = prev.filter(|p| p.kind == TokenKind::Name && p.end == found.start)?;
            let mut end = next.map_or(found.end, |t| t.end);
            for token in after {
                if token.kind != TokenKind::Prime || token.start != end {
                    break;
                }
                end = token.end;
            }
            Some(SyntaxError::HigherDerivative {
                span: Span::new(offset + name.start, offset + end),
                name: text[name.start..name.end].to_string(),
                primes: text[found.start..end].to_string(),
            })
        }
        // `x=2 y=3`: the grammar read `2 y` as a product and stopped at `=`.
        kind if is_assign_op(kind) && brackets.is_empty() => {
            missing_semicolon(text, offset, before_prev?, prev?)
        }
        // `f(1) y=3`: the grammar stopped at `y`.
        TokenKind::Name if brackets.is_empty() && next.is_some_and(|t| is_assign_op(t.kind)) => {
            missing_semicolon(text, offset, prev?, found)
        }
        _ => None,
    }
}

/// [`SyntaxError::MissingSemicolon`] before `name`, if `name` comes after a space
/// and the text up to `before` (the token before `name`) is a whole statement.
fn missing_semicolon(text: &str, offset: usize, before: Token, name: Token) -> Option<SyntaxError> {
    if name.kind != TokenKind::Name || !before.kind.ends_operand() || before.end == name.start {
        return None;
    }
    Grammar::parse(Rule::statement, &text[..before.end]).ok()?;
    Some(SyntaxError::MissingSemicolon {
        span: Span::new(offset + name.start, offset + name.end),
        fix: quoted_fix(text, before.end, before.end, ";"),
    })
}

/// Turns a pest error into an [`SyntaxError::Unexpected`] that says what was
/// expected and what was found, with spans into the whole source, or into the
/// error of a likely misreading (see [`misreading`]).
fn convert_error(
    error: &pest::error::Error<Rule>,
    text: &str,
    offset: usize,
    is_command: bool,
) -> SyntaxError {
    let pos = match error.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((start, _)) => start,
    };
    let positives: &[Rule] = match &error.variant {
        ErrorVariant::ParsingError { positives, .. } => positives,
        ErrorVariant::CustomError { message } => {
            // pest's own guard ("stack limit reached", "call limit reached"):
            // the scan should have refused such input first.
            if message.contains("limit") {
                let at = offset + pos.min(text.len());
                return SyntaxError::TooDeep {
                    span: Span::new(at, at),
                    limit: MAX_NESTING,
                };
            }
            &[]
        }
    };

    // The token before the error, and the brackets open there (true = a call's).
    let mut third: Option<Token> = None;
    let mut before_prev: Option<Token> = None;
    let mut prev: Option<Token> = None;
    let mut brackets: Vec<bool> = Vec::new();
    for token in Lexer::new(text) {
        if token.start >= pos {
            break;
        }
        match token.kind {
            TokenKind::Newline => continue,
            TokenKind::LParen => brackets
                .push(prev.is_some_and(|p| matches!(p.kind, TokenKind::Name | TokenKind::Prime))),
            TokenKind::RParen => {
                brackets.pop();
            }
            _ => {}
        }
        third = before_prev;
        before_prev = prev;
        prev = Some(token);
    }
    let found_token = Lexer::starting_at(text, pos).find(|t| t.kind != TokenKind::Newline);
    // The grammar may stop inside a token: at the `=` of `+=` in `x=2 y+=3`.
    let misread = match prev {
        Some(p) if p.end > pos => misreading(text, offset, third, before_prev, p, &brackets),
        _ => found_token
            .and_then(|found| misreading(text, offset, before_prev, prev, found, &brackets)),
    };
    if !is_command && let Some(error) = misread {
        return error;
    }
    let (span, found) = match found_token {
        None => (
            Span::new(offset + text.len(), offset + text.len()),
            "end of input".to_string(),
        ),
        Some(t) => {
            let s = &text[t.start..t.end];
            let found = match t.kind {
                TokenKind::Number => format!("number `{s}`"),
                TokenKind::Name => format!("name `{s}`"),
                _ => format!("`{s}`"),
            };
            (Span::new(offset + t.start, offset + t.end), found)
        }
    };
    let prev_text = prev.map(|p| &text[p.start..p.end]);
    let after = |what: &str| match prev_text {
        Some(p) => format!("{what} after `{p}`"),
        None => what.to_string(),
    };

    let wants = |rules: &[Rule]| positives.iter().any(|r| rules.contains(r));
    let expected = if is_command {
        if wants(&[Rule::word]) {
            after("a word")
        } else if wants(&[Rule::name]) && prev.is_some_and(|p| p.kind == TokenKind::Colon) {
            "a command name after `:`".to_string()
        } else {
            "a space, `,` or the end of the command".to_string()
        }
    } else if wants(&[
        Rule::expr,
        Rule::neg,
        Rule::plus,
        Rule::exp_neg,
        Rule::exp_plus,
        Rule::number,
        Rule::call,
        Rule::callee,
        Rule::paren,
    ]) {
        after("an operand")
    } else if wants(&[
        Rule::add,
        Rule::sub,
        Rule::mul,
        Rule::div,
        Rule::pow,
        Rule::implicit_mul,
        Rule::assign_op,
        Rule::EOI,
    ]) {
        match brackets.last() {
            Some(true) => "an operator, `,` or `)`".to_string(),
            Some(false) => "an operator or `)`".to_string(),
            None => "an operator or the end of the statement".to_string(),
        }
    } else if wants(&[Rule::name]) {
        after("a name")
    } else if positives.is_empty() {
        "a statement".to_string()
    } else {
        let names: Vec<String> = positives.iter().map(|r| format!("{r:?}")).collect();
        names.join(" or ")
    };

    let help = found_token.and_then(|t| {
        let s = &text[t.start..t.end];
        let operand_like = matches!(
            t.kind,
            TokenKind::Name | TokenKind::Number | TokenKind::LParen
        );
        match t.kind {
            _ if is_command => None,
            _ if expected.starts_with("an operator") && operand_like => match prev {
                Some(p) if matches!(p.kind, TokenKind::Name | TokenKind::Number) => Some(format!(
                    "use `*` to multiply: `{}*{s}`",
                    &text[p.start..p.end]
                )),
                _ => Some("use `*` to multiply".to_string()),
            },
            TokenKind::Op(Operator::Eq | Operator::PlusEq | Operator::MinusEq)
            | TokenKind::Op(Operator::StarEq | Operator::SlashEq | Operator::ColonEq)
                if brackets.is_empty() =>
            {
                Some(
                    "only a name, or a function head like `f(x, y)`, can stand left of `=`"
                        .to_string(),
                )
            }
            TokenKind::Other => match s {
                "²" => Some("write `^2` for a square".to_string()),
                "³" => Some("write `^3` for a cube".to_string()),
                "×" | "·" | "⋅" => Some("use `*` to multiply".to_string()),
                "÷" => Some("use `/` to divide".to_string()),
                "−" => Some("use the ASCII minus `-`".to_string()),
                _ => None,
            },
            _ => None,
        }
    });

    SyntaxError::Unexpected {
        span,
        expected,
        found,
        help,
    }
}
