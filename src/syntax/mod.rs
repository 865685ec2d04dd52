//! Text → AST with spans (pest grammar + Pratt parser). No evaluation, no graphs.
//!
//! Entry points: [`statement_spans`] cuts a source text into statements,
//! [`parse_statement`] parses one of them, [`needs_more_input`] tells a REPL
//! whether to keep reading lines.

pub mod ast;

pub use ast::*;

/// Deepest nesting of parentheses, prefix signs and `^` chains that a statement may have.
pub const MAX_NESTING: usize = 1000;

/// Why a statement could not be parsed. Every variant has a span into the whole source.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SyntaxError {
    /// Placeholder until the parser lands.
    #[error("{message}")]
    Unexpected {
        span: Span,
        message: String,
        help: Option<String>,
    },
}

impl SyntaxError {
    /// Where the error is, as a byte range into the whole source.
    pub fn span(&self) -> Span {
        match self {
            SyntaxError::Unexpected { span, .. } => *span,
        }
    }

    /// A suggested fix, when there is one.
    pub fn help(&self) -> Option<String> {
        match self {
            SyntaxError::Unexpected { help, .. } => help.clone(),
        }
    }
}

/// Cuts `source` into statement spans, in order.
pub fn statement_spans(source: &str) -> Vec<Span> {
    let _ = source;
    todo!("syntax helper")
}

/// Parses the statement at `span` of `source`.
pub fn parse_statement(source: &str, span: Span) -> Result<Located, SyntaxError> {
    let _ = (source, span);
    todo!("syntax helper")
}

/// True when `text` is unfinished: a bracket is still open or the last line ends in an operator.
pub fn needs_more_input(text: &str) -> bool {
    let _ = text;
    todo!("syntax helper")
}
