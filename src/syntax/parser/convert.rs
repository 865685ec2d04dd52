//! Error conversion: a pest error → a [`SyntaxError`] that says what was
//! expected and what was found, or the error of a likely misreading.

use pest::Parser as _;
use pest::error::{ErrorVariant, InputLocation};

use super::super::MAX_NESTING;
use super::super::ast::Span;
use super::super::error::SyntaxError;
use super::super::lexer::{Lexer, Operator, Token, TokenKind};
use super::prescan::{is_assign_op, quoted_fix};
use super::{Grammar, Rule};

/// The help for `%` (and, with `mod` for `%`, for `mod`): gradcalc has no
/// remainder operator.
const REMAINDER_HINT: &str =
    "`%` is not an operator: gradcalc has no remainder; use `x - b*floor(x/b)`";

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
pub(super) fn convert_error(
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

    let before = TokensBefore::scan(text, pos);
    let found_token = Lexer::starting_at(text, pos).find(|t| t.kind != TokenKind::Newline);
    // The grammar may stop inside a token: at the `=` of `+=` in `x=2 y+=3`.
    let misread = match before.prev {
        Some(p) if p.end > pos => misreading(
            text,
            offset,
            before.third,
            before.before_prev,
            p,
            &before.brackets,
        ),
        _ => found_token.and_then(|found| {
            misreading(
                text,
                offset,
                before.before_prev,
                before.prev,
                found,
                &before.brackets,
            )
        }),
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
    let expected = expected_text(positives, &before, text, is_command);
    let help = found_token.and_then(|t| help_text(t, &before, &expected, text, is_command));
    SyntaxError::Unexpected {
        span,
        expected,
        found,
        help,
    }
}

/// The tokens before a parse error: the last three (newlines skipped) and
/// the brackets open there (true = a call's).
struct TokensBefore {
    third: Option<Token>,
    before_prev: Option<Token>,
    prev: Option<Token>,
    brackets: Vec<bool>,
    /// Whether the innermost open bracket is a `[` (a list of elements).
    in_list: bool,
}

impl TokensBefore {
    /// Scans `text` up to byte `pos`.
    fn scan(text: &str, pos: usize) -> TokensBefore {
        let mut third: Option<Token> = None;
        let mut before_prev: Option<Token> = None;
        let mut prev: Option<Token> = None;
        let mut brackets: Vec<bool> = Vec::new();
        let mut squares: Vec<bool> = Vec::new();
        for token in Lexer::new(text) {
            if token.start >= pos {
                break;
            }
            match token.kind {
                TokenKind::Newline => continue,
                TokenKind::LParen => {
                    brackets.push(
                        prev.is_some_and(|p| matches!(p.kind, TokenKind::Name | TokenKind::Prime)),
                    );
                    squares.push(text.as_bytes()[token.start] == b'[');
                }
                TokenKind::RParen => {
                    brackets.pop();
                    squares.pop();
                }
                _ => {}
            }
            third = before_prev;
            before_prev = prev;
            prev = Some(token);
        }
        TokensBefore {
            third,
            before_prev,
            prev,
            brackets,
            in_list: squares.last().copied().unwrap_or(false),
        }
    }

    /// The text of the token right before the error.
    fn prev_text<'t>(&self, text: &'t str) -> Option<&'t str> {
        self.prev.map(|p| &text[p.start..p.end])
    }
}

/// What the parser expected where it stopped, in words (`an operand after
/// `+``), from pest's `positives`.
fn expected_text(
    positives: &[Rule],
    before: &TokensBefore,
    text: &str,
    is_command: bool,
) -> String {
    let prev = before.prev;
    let prev_text = before.prev_text(text);
    let after = |what: &str| match prev_text {
        Some(p) => format!("{what} after `{p}`"),
        None => what.to_string(),
    };
    let wants = |rules: &[Rule]| positives.iter().any(|r| rules.contains(r));
    if is_command {
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
        match before.brackets.last() {
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
    }
}

/// A fix for the error at token `t`, where one is known: `*` for a product,
/// `;` between statements, radians for degrees, words for a command's call.
fn help_text(
    t: Token,
    before: &TokensBefore,
    expected: &str,
    text: &str,
    is_command: bool,
) -> Option<String> {
    let prev = before.prev;
    let prev_text = before.prev_text(text);
    let s = &text[t.start..t.end];
    let operand_like = matches!(
        t.kind,
        TokenKind::Name | TokenKind::Number | TokenKind::LParen
    );
    if !is_command && let Some(help) = doubled_operator(t, prev, (prev_text, s), expected) {
        return Some(help);
    }
    match t.kind {
        TokenKind::LParen if is_command => Some(format!(
            "commands take words, not brackets: `{}`",
            command_words(text)
        )),
        // `:save "abc`: a quote that is never closed.
        _ if is_command && s == "\"" => Some("close the quote: `\"my file.calc\"`".to_string()),
        _ if is_command => None,
        // `7 mod 2`: the grammar read `7 mod` as a product and stopped at `2`.
        _ if prev_text == Some("mod") => Some(REMAINDER_HINT.replace('%', "mod")),
        // `x²(x+1)` or `sin²(x)`: a product wants `*`; the power of a call
        // comes after the call.
        TokenKind::LParen if prev.is_some_and(|p| p.kind == TokenKind::Superscript) => {
            let power = prev_text.unwrap_or("²");
            Some(format!(
                "use `*` to multiply: `…{power}*(…)`; the power of a call comes after it: `sin(x){power}`"
            ))
        }
        // `[1 2 3]`, as MATLAB writes a vector: the elements want commas.
        _ if expected.starts_with("an operator")
            && operand_like
            && before.in_list
            && prev.is_some_and(|p| matches!(p.kind, TokenKind::Number | TokenKind::Name)) =>
        {
            Some("separate the elements with commas: `[1, 2, 3]`".to_string())
        }
        _ if expected.starts_with("an operator") && operand_like => match prev {
            Some(p) if matches!(p.kind, TokenKind::Name | TokenKind::Number) => Some(format!(
                "use `*` to multiply: `{}*{s}`",
                &text[p.start..p.end]
            )),
            _ => Some("use `*` to multiply".to_string()),
        },
        TokenKind::Op(Operator::Eq | Operator::PlusEq | Operator::MinusEq)
        | TokenKind::Op(Operator::StarEq | Operator::SlashEq | Operator::ColonEq)
            if before.brackets.is_empty() =>
        {
            Some(
                "only a name, or a function head like `f(x, y)`, can stand left of `=`"
                    .to_string(),
            )
        }
        TokenKind::Superscript => {
            Some("write a superscript power right after its operand: `x²`".to_string())
        }
        // `W ᵀ`: the transpose is written right after its operand.
        TokenKind::Transpose => {
            let operand = prev
                .filter(|p| p.kind == TokenKind::Name)
                .map_or("W", |p| &text[p.start..p.end]);
            Some(format!(
                "write `ᵀ` right after its operand, with no space: `{operand}ᵀ`, or `transpose({operand})`"
            ))
        }
        // `[]`: no empty vector; `x[]`: no index.
        TokenKind::RParen if s == "]" && prev_text == Some("[") => {
            Some(match before.before_prev {
                Some(b) if b.kind.ends_operand() && prev.is_some_and(|p| p.start == b.end) => {
                    "an index goes between the brackets, from 0: `x[0]`, `W[1, 2]`".to_string()
                }
                _ => "a vector needs at least one element (an empty vector is not a value in gradcalc): `[1, 2]`".to_string(),
            })
        }
        TokenKind::Comma if before.brackets.is_empty() => Some(
            match quoted_fix(text, t.start, t.end, ";") {
                Some(fix) => format!("separate statements with `;`: `{fix}`"),
                None => "separate statements with `;`".to_string(),
            },
        ),
        // `w : = 2` and `w =: 2`: the update in place typed apart or backwards.
        TokenKind::Colon if before.brackets.is_empty() => colon_eq_fix(t, before, text),
        TokenKind::Prime => Some(format!(
            "`f'(a)` is the derivative of a one-argument function at a; for a variable write `grad({}, x)` or `:grad`",
            prev_text.unwrap_or("y")
        )),
        TokenKind::Other => match s {
            "%" => Some(REMAINDER_HINT.to_string()),
            "°" => Some(format!(
                "angles are in radians: write `{}*pi/180`",
                prev_text.unwrap_or("x")
            )),
            "|" => Some("write `abs(x)` for |x|".to_string()),
            "!" => Some(
                "`!` is not an operator: gradcalc has no factorial; write the product, e.g. `4*3*2*1`"
                    .to_string(),
            ),
            "∛" => Some("write `cbrt(x)` for the cube root ∛x".to_string()),
            "⁻" | "⁺" => {
                Some("a superscript sign needs digits after it: `x⁻¹`".to_string())
            }
            _ => None,
        },
        _ => None,
    }
}

/// The help for a second binary operator `t` right after another (`x +*
/// 2`, `W @* x`), where an operand belongs; `None` otherwise (after `=`
/// too).
fn doubled_operator(
    t: Token,
    prev: Option<Token>,
    (prev_text, s): (Option<&str>, &str),
    expected: &str,
) -> Option<String> {
    let binary = |kind: TokenKind| {
        matches!(
            kind,
            TokenKind::Op(
                Operator::Plus
                    | Operator::Minus
                    | Operator::Star
                    | Operator::Slash
                    | Operator::Caret
                    | Operator::StarStar
                    | Operator::At
            )
        )
    };
    let second = matches!(
        t.kind,
        TokenKind::Op(Operator::Star | Operator::Slash | Operator::Caret | Operator::At)
    );
    (second && expected.starts_with("an operand") && prev.is_some_and(|p| binary(p.kind))).then(
        || {
            format!(
                "two operators in a row: delete `{}` or `{s}`",
                prev_text.unwrap_or("")
            )
        },
    )
}

/// The help for a `:` (the token `t`) meant as part of `:=` after a name:
/// typed apart from its `=` (`w : = 2`) or after it (`w =: 2`); `None`
/// when no `=` is beside it or no name before.
fn colon_eq_fix(t: Token, before: &TokensBefore, text: &str) -> Option<String> {
    let is_name = |token: Option<Token>| token.is_some_and(|p| p.kind == TokenKind::Name);
    let after = &text[t.end..];
    let (from, to) = match before.prev {
        Some(p) if &text[p.start..p.end] == "=" && is_name(before.before_prev) => (p.start, t.end),
        prev if is_name(prev) && after.trim_start().starts_with('=') => {
            (t.start, text.len() - after.trim_start().len() + 1)
        }
        _ => return None,
    };
    Some(match quoted_fix(text, from, to, ":=") {
        Some(fix) => format!("the update in place is `:=`, colon first and no space: `{fix}`"),
        None => "the update in place is `:=`, colon first and no space".to_string(),
    })
}

/// A command written as a call (`:grad(x, y)`) as words (`:grad x, y`).
fn command_words(text: &str) -> String {
    let text = text.trim();
    let words = text.replacen('(', " ", 1);
    let words = words.strip_suffix(')').unwrap_or(&words);
    words.split_whitespace().collect::<Vec<_>>().join(" ")
}
