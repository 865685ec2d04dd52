//! The errors of the syntax stage.

use super::ast::Span;

/// How gradcalc writes a derivative, for the hints about other notations
/// (`d/dx x^2`, `derivative of`, `diff(y, x)`).
pub(crate) const DERIVATIVE_SPELLINGS: &str = "gradcalc writes a derivative as `grad(y, x)` (a value), `f'(a)` (of a one-argument function), `:diff y x` (its formula) or `:grad` (every gradient of the output)";

/// Why a statement could not be parsed.
///
/// Every variant carries a span: a byte range into the whole source text (not
/// just the statement). Messages are lower-case without a final period; a
/// suggested fix, when there is one, comes from [`SyntaxError::help`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SyntaxError {
    /// A token that does not fit where it is, e.g. `sqrt(123+)`:
    /// "expected an operand after `+`, found `)`".
    #[error("expected {expected}, found {found}")]
    Unexpected {
        /// The unexpected token (empty at the end of the input).
        span: Span,
        /// What would have fitted, e.g. "an operand after `+`".
        expected: String,
        /// What was there, e.g. "`)`", "name `y`", "end of input".
        found: String,
        /// A suggested fix, if any.
        help: Option<String>,
    },
    /// A `(` that is never closed, e.g. `2*(1+3`. The span is the `(`.
    #[error("unclosed `(`")]
    UnclosedParen {
        /// The unmatched `(`.
        span: Span,
    },
    /// A `[` that is never closed, e.g. `x = [1, 2`. The span is the `[`.
    #[error("unclosed `[`")]
    UnclosedBracket {
        /// The unmatched `[`.
        span: Span,
    },
    /// A `)` without a `(` before it, e.g. `1+2)`.
    #[error("unmatched `)`")]
    UnmatchedParen {
        /// The `)`.
        span: Span,
    },
    /// A `]` without a `[` before it, e.g. `x = [1, 2]]`.
    #[error("unmatched `]`")]
    UnmatchedBracket {
        /// The `]`.
        span: Span,
    },
    /// A curly bracket (`{1 + 2}`), or a closing bracket of the other kind
    /// (`(1 + ]`, `[1, 2)`): gradcalc groups with `(` and `)` and writes
    /// vectors, matrices and indices with `[` and `]`.
    #[error("{}", wrong_bracket(*bracket, *expected))]
    WrongBracket {
        /// The bracket.
        span: Span,
        /// `{`, `}`, or a `)` or `]` that closes the other kind.
        bracket: char,
        /// The bracket that belongs here: `(` for `{`, the closer of the
        /// open bracket for a closer.
        expected: char,
    },
    /// A malformed number literal, e.g. `1e-`, `2e1.5`, `1.2.3`, `1__000`.
    #[error("malformed number `{text}`: {reason}")]
    MalformedNumber {
        /// The literal as far as it was read.
        span: Span,
        /// The literal's text.
        text: String,
        /// What is wrong, e.g. "exponents are whole numbers".
        reason: String,
        /// A suggested fix, if any.
        help: Option<String>,
    },
    /// Two names side by side, e.g. `x y` (not a multiplication).
    #[error("two names side by side: `{left}` and `{right}`")]
    AdjacentNames {
        /// From the first name to the end of the second.
        span: Span,
        /// The first name.
        left: String,
        /// The second name.
        right: String,
        /// What was likely meant, when it is not a product (`grad z`,
        /// `derivative of`, `x deg`).
        hint: Option<String>,
    },
    /// Parentheses, prefix signs and `^` chains nested deeper than `limit`
    /// ([`super::MAX_NESTING`]).
    #[error("expression nested too deeply: more than {limit} levels of brackets, signs and `^`")]
    TooDeep {
        /// The token that went past the limit.
        span: Span,
        /// The limit, [`super::MAX_NESTING`].
        limit: usize,
    },
    /// A literal holding more numbers than the tensor memory budget
    /// ([`super::MAX_LITERAL_NUMBERS`]), found before it is parsed whole.
    #[error("a literal of {numbers} numbers is over the memory budget of {limit} numbers")]
    LiteralTooLarge {
        /// The literal, from `[` to `]`.
        span: Span,
        /// How many numbers it holds.
        numbers: usize,
        /// The limit, [`super::MAX_LITERAL_NUMBERS`].
        limit: usize,
    },
    /// A declaration keyword of another language before an assignment, e.g.
    /// `let x = 2`: gradcalc assigns with `=` alone.
    #[error("`{keyword}` is not needed: a name is assigned with `=` alone")]
    DeclarationKeyword {
        /// The keyword.
        span: Span,
        /// `let`, `var` or `const`.
        keyword: String,
        /// The statement without the keyword (`x = 2`), unless it is too long to quote.
        fix: Option<String>,
    },
    /// Two statements on one line without `;`, e.g. `x=2 y=3`.
    #[error("two statements on one line need `;` between them")]
    MissingSemicolon {
        /// The first token of the second statement (`y`).
        span: Span,
        /// The line with the `;` (`x=2; y=3`), unless it is too long to quote.
        fix: Option<String>,
    },
    /// `f''(2)`: a derivative of a function of order two or more.
    #[error("higher derivatives of functions are not supported yet: `{name}{primes}`")]
    HigherDerivative {
        /// From the function's name to its last `'`.
        span: Span,
        /// The function's name.
        name: String,
        /// The primes as written (`''`).
        primes: String,
    },
    /// A number literal too large for an f64, e.g. `1e400`.
    #[error("number `{text}` is too large: it overflows a 64-bit float")]
    NumberOverflow {
        /// The literal.
        span: Span,
        /// The literal's text.
        text: String,
    },
    /// A comparison outside round brackets, e.g. `x == 3`, `y = x <= 3`:
    /// gradcalc reads one only in brackets, `(x == 3)` (`=` assigns).
    #[error("`{op}` compares only inside round brackets: `(a {op} b)` is 1 where it holds, else 0")]
    Comparison {
        /// The comparison operator.
        span: Span,
        /// Its text: `≤`, `≥` or `≠`.
        op: String,
    },
    /// An implicit product right after an exponent, e.g. `e^-2x`, `x^2y`,
    /// `2^3(x+1)`: handwriting means `e^(-2x)` as often as `e^(-2)*x`, so
    /// neither reading is taken.
    #[error("an implicit product right after an exponent is ambiguous: `{text}`")]
    ImplicitAfterExponent {
        /// From the base of the power to the end of the factor after it.
        span: Span,
        /// The text of the span.
        text: String,
        /// Both readings bracketed (`e^(-2x)`, `e^(-2)*x`), or how to write them.
        help: String,
    },
    /// A non-zero number literal that rounds to 0 as an f64, e.g. `1e-400`.
    #[error("number `{text}` is too small: it rounds to 0 as a 64-bit float")]
    NumberUnderflow {
        /// The literal.
        span: Span,
        /// The literal's text.
        text: String,
    },
}

impl SyntaxError {
    /// Where the error is, as a byte range into the whole source.
    pub fn span(&self) -> Span {
        match self {
            SyntaxError::Unexpected { span, .. }
            | SyntaxError::UnclosedParen { span }
            | SyntaxError::UnclosedBracket { span }
            | SyntaxError::UnmatchedParen { span }
            | SyntaxError::UnmatchedBracket { span }
            | SyntaxError::WrongBracket { span, .. }
            | SyntaxError::MalformedNumber { span, .. }
            | SyntaxError::AdjacentNames { span, .. }
            | SyntaxError::TooDeep { span, .. }
            | SyntaxError::LiteralTooLarge { span, .. }
            | SyntaxError::NumberOverflow { span, .. }
            | SyntaxError::NumberUnderflow { span, .. }
            | SyntaxError::DeclarationKeyword { span, .. }
            | SyntaxError::MissingSemicolon { span, .. }
            | SyntaxError::HigherDerivative { span, .. }
            | SyntaxError::Comparison { span, .. }
            | SyntaxError::ImplicitAfterExponent { span, .. } => *span,
        }
    }

    /// A suggested fix, when there is one (lower-case, no final period).
    pub fn help(&self) -> Option<String> {
        match self {
            SyntaxError::Unexpected { help, .. } | SyntaxError::MalformedNumber { help, .. } => {
                help.clone()
            }
            SyntaxError::UnclosedParen { .. } => Some("add `)`".to_string()),
            SyntaxError::UnclosedBracket { .. } => Some("add `]`".to_string()),
            SyntaxError::UnmatchedParen { .. } => {
                Some("remove this `)` or add a `(` before it".to_string())
            }
            SyntaxError::UnmatchedBracket { .. } => {
                Some("remove this `]` or add a `[` before it".to_string())
            }
            SyntaxError::WrongBracket { expected, .. } => Some(format!("write `{expected}` here")),
            SyntaxError::AdjacentNames {
                hint: Some(hint), ..
            } => Some(hint.clone()),
            SyntaxError::AdjacentNames { right, .. } if right == "mod" => Some(
                // The same words as the parser's hint for `%`.
                "`mod` is not an operator: gradcalc has no remainder; use `x - b*floor(x/b)`"
                    .to_string(),
            ),
            SyntaxError::AdjacentNames { left, right, .. } => {
                Some(format!("use `*` to multiply: `{left}*{right}`"))
            }
            SyntaxError::TooDeep { .. } => {
                Some("split the expression with intermediate assignments".to_string())
            }
            SyntaxError::LiteralTooLarge { .. } => Some(
                "make large values with `zeros`, `ones` or `randn` and arithmetic on them, or split the literal and join the parts with operations"
                    .to_string(),
            ),
            SyntaxError::NumberOverflow { .. } => Some("write `inf` for infinity".to_string()),
            SyntaxError::NumberUnderflow { .. } => Some("write `0` if you mean zero".to_string()),
            SyntaxError::DeclarationKeyword { fix, .. } => {
                fix.as_ref().map(|fix| format!("write `{fix}`"))
            }
            SyntaxError::MissingSemicolon { fix, .. } => Some(match fix {
                Some(fix) => format!("write `{fix}`"),
                None => "put `;` before the second statement".to_string(),
            }),
            SyntaxError::Comparison { op, .. } => Some(format!(
                "`=` assigns (`x = 3`); write the comparison in brackets, e.g. `(x {op} 3)`"
            )),
            SyntaxError::ImplicitAfterExponent { help, .. } => Some(help.clone()),
            SyntaxError::HigherDerivative { name, .. } => Some(format!(
                "`{name}'(a)` is the first derivative of a one-argument function; `:grad` gives the gradient of the output"
            )),
        }
    }
}

/// The message of [`SyntaxError::WrongBracket`].
fn wrong_bracket(bracket: char, expected: char) -> String {
    if matches!(bracket, '{' | '}') {
        format!(
            "`{bracket}` is not a bracket in gradcalc: group with `(` and `)`, write vectors and matrices with `[` and `]`"
        )
    } else {
        let open = if expected == ']' { '[' } else { '(' };
        format!("`{bracket}` does not close the `{open}` before it")
    }
}
