//! The scan before the grammar: lexical errors with precise messages, and the
//! nesting depth, so that neither pest nor the Pratt parser can overflow the stack.

use super::super::MAX_NESTING;
use super::super::ast::Span;
use super::super::error::SyntaxError;
use super::super::lexer::{Lexer, NumberProblem, Operator, Token, TokenKind, superscript_value};
use super::exponent::ExponentWatch;

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
pub(super) struct Scan {
    /// The first lexical problem, if any.
    pub(super) problem: Option<SyntaxError>,
    /// The deepest nesting (see [`MAX_NESTING`]).
    pub(super) max_nesting: usize,
}

/// Scans one (non-command) statement before the grammar runs.
///
/// Returns `Err(TooDeep)` as soon as the nesting passes [`MAX_NESTING`] (the
/// grammar and the Pratt parser recurse once per level, so the text must not
/// reach them). Otherwise returns the first lexical problem, if any: a
/// malformed or out-of-range number, two names side by side, an unmatched `)`
/// or an unclosed `(` (whichever comes first in the text), and the deepest
/// nesting seen.
pub(super) fn prescan(text: &str, offset: usize) -> Result<Scan, SyntaxError> {
    let at = |t: &Token| Span::new(offset + t.start, offset + t.end);
    // The top level apart, the open brackets (each with its level) in a vector
    // that allocates only when a bracket opens.
    let mut top = Level::default();
    let mut levels: Vec<(Level, usize)> = Vec::new();
    let mut nesting = 0usize;
    let mut max_nesting = 0usize;
    let mut problem: Option<SyntaxError> = None;
    let mut prev: Option<Token> = None;
    let mut exponents = ExponentWatch::default();
    for token in Lexer::new(text) {
        let kind = token.kind;
        if kind == TokenKind::Newline {
            continue;
        }
        let after_number = prev.is_some_and(|p| p.kind == TokenKind::Number);
        let prev_ends_operand = prev.is_some_and(|p| p.kind.ends_operand());
        let at_top = levels.is_empty();
        let level = match levels.last_mut() {
            Some((level, _)) => level,
            None => &mut top,
        };
        // A comparison inside round brackets is read (`(u > 0)`).
        if problem.is_none() && at_top {
            problem = comparison(text, offset, prev, Some(token));
        }
        if problem.is_none() {
            problem = exponents.see(text, offset, prev, token);
        }
        if problem.is_none() {
            problem = lexical_problem(text, offset, prev, token, at_top);
        }
        let mut reset = false;
        match kind {
            TokenKind::Name if after_number => {
                level.chain += 1;
                nesting += 1;
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
                if let Some((closed, open)) = levels.pop() {
                    nesting -= 1 + closed.signs + closed.chain;
                    if problem.is_none() {
                        problem = wrong_closer(text, open, at(&token), token.start);
                    }
                } else if problem.is_none() {
                    problem = Some(unmatched(text, token.start, at(&token)));
                }
            }
            TokenKind::Op(Operator::Plus | Operator::Minus) if !prev_ends_operand => {
                level.signs += 1;
                nesting += 1;
            }
            TokenKind::Op(Operator::Root) => {
                if after_number {
                    level.chain += 1;
                    nesting += 1;
                }
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
    if problem.is_none() {
        problem = comparison(text, offset, prev, None);
    }
    if let Some(&(_, open)) = levels.last() {
        problem = first_of_unclosed(problem, offset + open, text.as_bytes()[open] == b'[');
    }
    Ok(Scan {
        problem,
        max_nesting,
    })
}

/// The closer at byte `close` of `text` (at `span` in the source) when it
/// is not the kind the bracket opened at byte `open` needs: `(1 + ]`, `[1, 2)`.
fn wrong_closer(text: &str, open: usize, span: Span, close: usize) -> Option<SyntaxError> {
    let expected = if text.as_bytes()[open] == b'[' {
        ']'
    } else {
        ')'
    };
    let bracket = char::from(text.as_bytes()[close]);
    (bracket != expected).then_some(SyntaxError::WrongBracket {
        span,
        bracket,
        expected,
    })
}

/// The error of the closing bracket at byte `close` of `text` (at `span`)
/// that closes nothing: an unmatched `]` or `)`, named as typed.
fn unmatched(text: &str, close: usize, span: Span) -> SyntaxError {
    if text.as_bytes()[close] == b']' {
        SyntaxError::UnmatchedBracket { span }
    } else {
        SyntaxError::UnmatchedParen { span }
    }
}

/// `problem`, or the `(` or `[` (`square`) left open at byte `start` when that comes first in
/// the text. A `]` or `}` after the `(` is most likely meant to close it:
/// that is the mistake to show (`(1 + ]`), not the `(` left open.
fn first_of_unclosed(
    problem: Option<SyntaxError>,
    start: usize,
    square: bool,
) -> Option<SyntaxError> {
    let wrong_close = matches!(
        problem,
        Some(SyntaxError::WrongBracket {
            bracket: ']' | '}',
            ..
        })
    );
    if !wrong_close && problem.as_ref().is_none_or(|p| start < p.span().start) {
        let span = Span::new(start, start + 1);
        return Some(if square {
            SyntaxError::UnclosedBracket { span }
        } else {
            SyntaxError::UnclosedParen { span }
        });
    }
    problem
}

/// The problem a single token shows by itself, with `prev` the token before
/// it (`at_top`: outside every bracket): a malformed or out-of-range number
/// or superscript, `2e` glued to a name, two names side by side, a `[` or `{`
/// used as a bracket.
fn lexical_problem(
    text: &str,
    offset: usize,
    prev: Option<Token>,
    token: Token,
    at_top: bool,
) -> Option<SyntaxError> {
    let at = |t: &Token| Span::new(offset + t.start, offset + t.end);
    match token.kind {
        TokenKind::Number => check_number(text, &token, at(&token)),
        TokenKind::Name => {
            if let Some(number) = prev.filter(|p| p.kind == TokenKind::Number)
                && number.end == token.start
                && &text[token.start..token.end] == "e"
            {
                return Some(number_then_e(text, offset, number, token));
            }
            let p = prev.filter(|p| p.kind == TokenKind::Name)?;
            Some(adjacent_names(text, offset, p, token, at_top))
        }
        TokenKind::Superscript
            if superscript_value(&text[token.start..token.end]).is_infinite() =>
        {
            Some(SyntaxError::NumberOverflow {
                span: at(&token),
                text: text[token.start..token.end].to_string(),
            })
        }
        TokenKind::Other => match text[token.start..].chars().next() {
            Some(bracket @ ('{' | '}')) => Some(SyntaxError::WrongBracket {
                span: at(&token),
                bracket,
                expected: if bracket == '{' { '(' } else { ')' },
            }),
            _ => None,
        },
        _ => None,
    }
}

/// A comparison operator ending at `prev` (`<`, `≤`, …) or at `token` (`==`,
/// `!=`, `<=`, `>=`: two tokens side by side), as the error that gradcalc has
/// no comparisons; `token` is `None` at the end of the statement.
fn comparison(
    text: &str,
    offset: usize,
    prev: Option<Token>,
    token: Option<Token>,
) -> Option<SyntaxError> {
    let prev = prev?;
    // Every comparison starts with `=` or an `Other` token (`!`, `<`, `≤`, …):
    // nothing else is looked at (this runs for every token of a script).
    if !matches!(prev.kind, TokenKind::Other | TokenKind::Op(Operator::Eq)) {
        return None;
    }
    let first = &text[prev.start..prev.end];
    let first_is = |ops: &[&str]| prev.kind == TokenKind::Other && ops.contains(&first);
    let span = match token {
        Some(t)
            if t.kind == TokenKind::Op(Operator::Eq)
                && t.start == prev.end
                && (prev.kind == TokenKind::Op(Operator::Eq) || first_is(&["!", "<", ">"])) =>
        {
            Span::new(prev.start, t.end)
        }
        // `<=` is reported at its `=`; `<` alone at the token after it.
        Some(t) if t.kind == TokenKind::Op(Operator::Eq) && t.start == prev.end => return None,
        _ if first_is(&["<", ">", "≤", "≥", "≠"]) => Span::new(prev.start, prev.end),
        _ => return None,
    };
    Some(SyntaxError::Comparison {
        span: Span::new(offset + span.start, offset + span.end),
        op: text[span.start..span.end].to_string(),
    })
}

/// `2e`: a number directly followed by the name `e`. It would read as 2·e
/// (5.44), while `2e3` is 2000: refused, with both spellings in the help.
fn number_then_e(text: &str, offset: usize, number: Token, e: Token) -> SyntaxError {
    let digits = &text[number.start..number.end];
    SyntaxError::MalformedNumber {
        span: Span::new(offset + number.start, offset + e.end),
        text: text[number.start..e.end].to_string(),
        reason: "a number followed directly by `e` is ambiguous".to_string(),
        help: Some(format!(
            "write `{digits}*e` for {digits}·e, or `{digits}e0` (`{digits}e3`, …) for a power of ten"
        )),
    }
}

/// The longest statement that a help quotes whole with its fix (`x=2; y=3`).
pub(super) const MAX_QUOTED_FIX: usize = 80;

/// `text` with `replacement` for the bytes `start..end`, if short enough to quote.
pub(super) fn quoted_fix(
    text: &str,
    start: usize,
    end: usize,
    replacement: &str,
) -> Option<String> {
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
        hint: adjacent_hint(text, left, right),
    }
}

/// Units of angle written after a number or name (`x deg`): gradcalc's
/// angles are radians.
const DEGREE_WORDS: &[&str] = &["deg", "degree", "degrees"];

/// What two names side by side most likely mean when it is not a product:
/// `grad z` (the command `:grad z` or the call `grad(y, z)`), a derivative in
/// words or Leibniz's notation (`derivative of x^2`, `d/dx x^2`), or an angle
/// in degrees (`x deg`).
fn adjacent_hint(text: &str, left: Token, right: Token) -> Option<String> {
    let left_text = &text[left.start..left.end];
    let right_text = &text[right.start..right.end];
    if left_text == "grad" {
        return Some(format!(
            "`:grad {right_text}` gives the output's gradient; `grad(y, {right_text})` is ∂y/∂{right_text} as a value"
        ));
    }
    if DEGREE_WORDS.contains(&right_text) {
        return Some(format!(
            "angles are in radians: write `{left_text}*pi/180` for {left_text} degrees"
        ));
    }
    // `d/dx x^2`: the name `dx` after `d /`.
    let leibniz = left_text.starts_with('d')
        && text[..left.start]
            .trim_end()
            .strip_suffix('/')
            .is_some_and(|before| before.trim_end().ends_with('d'));
    if leibniz {
        let variable = &left_text[1..];
        let rest = text[right.start..].trim();
        if !rest.contains([';', '\n']) && rest.chars().count() <= 40 {
            return Some(format!(
                "d/d{variable} of an expression is `grad({rest}, {variable})`"
            ));
        }
        return Some(super::super::error::DERIVATIVE_SPELLINGS.to_string());
    }
    matches!(left_text, "derivative" | "diff" | "deriv" | "differentiate")
        .then(|| super::super::error::DERIVATIVE_SPELLINGS.to_string())
}

/// `=`, `+=`, `-=`, `*=`, `/=`, `:=`.
pub(super) fn is_assign_op(kind: TokenKind) -> bool {
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
pub(super) fn number_value(literal: &str) -> f64 {
    let parsed = if literal.contains('_') {
        literal.replace('_', "").parse::<f64>()
    } else {
        literal.parse::<f64>()
    };
    // The grammar and the scan only let well-formed literals through.
    parsed.unwrap_or(f64::NAN)
}
