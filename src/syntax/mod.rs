//! Text → AST with spans (pest grammar + Pratt parser). No evaluation, no graphs.
//!
//! Entry points: [`statement_spans`] cuts a source text into statements,
//! [`parse_statement`] parses one of them, [`needs_more_input`] tells a REPL
//! whether to keep reading lines.
//!
//! The grammar is `grammar/gradcalc.pest`; precedence is applied by a Pratt
//! parser in `parser.rs`. Before the grammar runs, a linear scan
//! (`parser::prescan`) reports lexical errors with precise messages and refuses
//! nesting deeper than [`MAX_NESTING`], so that neither pest nor the Pratt
//! parser (both recursive on brackets, prefix signs and `^` chains) can overflow
//! the stack. Long left-associative chains (`1+1+…+1`) are folded in a loop.

pub mod ast;
mod collect;
mod error;
mod lexer;
mod parser;
mod print;
mod rewrite;
mod silence;
mod split;

#[cfg(test)]
mod tests;

pub use ast::*;
// The token stream the splitter, the parser's checks and the REPL highlighter share.
pub(crate) use error::DERIVATIVE_SPELLINGS;
pub use error::SyntaxError;
pub(crate) use lexer::{Lexer as Tokens, TokenKind, is_name, is_name_char};
/// [`Statements`] without a borrow of the source, for callers that own it.
pub use parser::Cursor;
pub use parser::MAX_LITERAL_NUMBERS;
pub use parser::Pieces;
pub use rewrite::{Forest, parse_expression};
pub use silence::SilencedLines;
pub use split::Continuation;

/// Deepest nesting of parentheses, prefix signs and `^` chains that a statement may have.
///
/// Counted as: open parentheses (including a call's), plus prefix signs still
/// waiting for their operand, plus the length of the current `^`/`**` chain
/// (and implicit multiplications in it); the signs and the chain of a bracket
/// level restart at a binary `+ - * /`, `,` or `=` on that level. Deeper input is
/// refused with [`SyntaxError::TooDeep`]. Input at this depth parses within a
/// 2 MB thread stack in a debug build (tested).
pub const MAX_NESTING: usize = 1000;

/// Cuts `source` into statement spans, in order.
///
/// A statement ends at a newline or at a `;` outside brackets. A newline does not
/// end it while a `(` is open or when the line's last token is an operator
/// (`+ - * / ^ ** = += -= *= /=`) or `,`: `a = (1 +⏎ 2)` and `a = 1 +⏎ 2` are
/// one statement each. A `:command` always ends at its newline or `;`. `#` starts
/// a comment to the end of the line.
///
/// An open `(`, or a line ending in an operator other than `,`, does not join
/// the next line when that line clearly starts a new statement: after optional whitespace it is a `:command`, an assignment
/// (a name, optional spaces, then `=` not followed by `=`, or `+= -= *= /=`) or a
/// definition (`name(a, b) =`: a name, `(`, names and commas, `)`, `=`). `=`
/// never appears inside brackets, so such a line cannot be a continuation; the
/// statement ends at the newline instead (and [`parse_statement`] reports its
/// unclosed `(`), so `x = (1⏎z = 2` is two statements while `f(x,⏎ y)` is one.
///
/// Spans are byte ranges into `source` from the statement's first token to its
/// last (whitespace and a trailing comment are excluded); empty statements are
/// skipped. If the text ends with a `(` open and no line after it starts a new
/// statement, the rest is one statement (and [`parse_statement`] reports the
/// unclosed `(`). Runs in linear time.
pub fn statement_spans(source: &str) -> Vec<Span> {
    split::split(source, true).spans
}

/// Parses the statement at `span` of `source` (usually one from [`statement_spans`]).
///
/// All spans in the result and in errors are byte offsets into the whole
/// `source`. The returned [`Located::span`] covers the statement without
/// surrounding whitespace and comments.
///
/// # Errors
///
/// A [`SyntaxError`] for the first problem in the statement: an unexpected token,
/// an unclosed `(` or unmatched `)`, a malformed or out-of-range number literal,
/// two names side by side, or nesting deeper than [`MAX_NESTING`]. A `span` that
/// is out of range or not on character boundaries gives
/// [`SyntaxError::Unexpected`].
pub fn parse_statement(source: &str, span: Span) -> Result<Located, SyntaxError> {
    parser::parse(source, span)
}

/// The statements of `source` (cut as [`statement_spans`] cuts them), each with
/// what [`parse_statement`] gives for it, in order.
///
/// Parses runs of statements in one grammar call (pest's set-up per call costs
/// about as much as a short statement), a run at a time as the iterator is
/// advanced: the result for each statement is the same as [`parse_statement`]'s,
/// except that a long expression or assignment (over 64 KiB, cut at top-level
/// `+`/`-`) is parsed only as far as its first piece, the rest left in
/// [`Located::rest`] to be parsed a piece at a time.
pub struct Statements<'a> {
    source: &'a str,
    cursor: Cursor,
}

impl<'a> Statements<'a> {
    /// The statements of `source`.
    pub fn new(source: &'a str) -> Statements<'a> {
        Statements {
            source,
            cursor: Cursor::new(statement_spans(source)),
        }
    }
}

impl Iterator for Statements<'_> {
    type Item = (Span, Result<Located, SyntaxError>);

    fn next(&mut self) -> Option<Self::Item> {
        self.cursor.next(self.source)
    }
}

/// True when `text` is unfinished: a bracket is still open or the last line ends in an operator.
///
/// More precisely: true if the last statement of `text` (as [`statement_spans`]
/// would cut it, except that an open `(` always joins the next line, even one
/// that starts a new statement: the user is typing the continuation) has more
/// `(` than `)` or ends in an operator or `,`, ignoring comments. A `:command` is
/// never unfinished. A REPL keeps reading lines while this is true.
/// Scans all of `text`: to ask again after each new line, [`Continuation`]
/// scans only the new line.
pub fn needs_more_input(text: &str) -> bool {
    split::split(text, false).unfinished
}
