//! One statement → [`Located`], in three jobs, one file each: the pre-scan for
//! lexical errors and nesting depth (`prescan.rs`), then the pest grammar and
//! tree building (`build.rs`: a Pratt parser folds each flat `expr` into an
//! [`ExprTree`]), or on a grammar error its conversion (`convert.rs`).

use pest::Parser as _;

mod batch;
mod build;
mod convert;
mod prescan;

pub use batch::Cursor;

use build::build_statement;
use convert::convert_error;
use prescan::{Scan, prescan};

use super::ast::{Located, Span};
use super::error::SyntaxError;
use super::lexer::{Lexer, TokenKind};

/// The pest parser generated from `grammar/gradcalc.pest`.
#[derive(pest_derive::Parser)]
#[grammar = "../grammar/gradcalc.pest"]
struct Grammar;

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
/// [`super::MAX_NESTING`] levels at about 3.5 kB each in a debug build (measured),
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
