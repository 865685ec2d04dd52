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

use super::ast::{BinaryOp, Located, Span, Statement};
use super::error::SyntaxError;
use super::lexer::{Lexer, Operator, TokenKind};

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

/// Statements longer than this (bytes) are parsed in pieces (see [`parse_pieces`]).
const LONG_STATEMENT: usize = 64 * 1024;

/// The length (bytes) a piece of a long statement grows to before it is cut
/// at its last top-level `+`/`-`.
const PIECE_BYTES: usize = 16 * 1024;

/// Runs the grammar on a statement that passed the scan, and builds the AST.
fn parse_scanned(
    text: &str,
    offset: usize,
    is_command: bool,
    scanned: Option<SyntaxError>,
) -> Result<Located, SyntaxError> {
    if text.len() > LONG_STATEMENT
        && !is_command
        && scanned.is_none()
        && let Some(located) = parse_pieces(text, offset, PIECE_BYTES)
    {
        return Ok(located);
    }
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

/// Parses a long statement in pieces of about `piece_bytes`, so that pest's
/// token queue (some 80 bytes a token) holds one piece at a time, not the
/// whole line.
///
/// The value's text is cut before top-level binary `+`/`-` (outside brackets,
/// after the assignment operator if any); the first piece is parsed as the
/// statement, each later one as an expression, and its terms folded onto the
/// tree so far (see `build::continue_tree`): `+` and `-` are the lowest,
/// left-associative level, so the tree is node for node the one a single
/// parse gives. `None` when there is nothing to cut or a piece does not parse
/// (the caller then parses the whole text, which also gives the precise error).
pub(crate) fn parse_pieces(text: &str, offset: usize, piece_bytes: usize) -> Option<Located> {
    let cuts = cut_points(text, piece_bytes);
    let (first_end, _) = *cuts.first()?;
    let piece = |start: usize, end: usize| {
        let mut pairs = Grammar::parse(Rule::statement, &text[start..end]).ok()?;
        pairs.next()?.into_inner().next()
    };
    let mut located = build_statement(piece(0, first_end)?, offset);
    let mut end = located.span.end;
    for (i, &(at, op)) in cuts.iter().enumerate() {
        // The piece starts after the operator (one character) and runs to the next cut.
        let start = at + text[at..].chars().next().map_or(1, char::len_utf8);
        let stop = cuts.get(i + 1).map_or(text.len(), |&(next, _)| next);
        let pair = piece(start, stop)?;
        if pair.as_rule() != Rule::expr {
            return None;
        }
        end = offset + start + pair.as_span().end();
        let tree = match &mut located.statement {
            Statement::Expr(tree) => tree,
            Statement::Assign { value, .. } => value,
            Statement::Define { body, .. } => body,
            Statement::Command { .. } => return None,
        };
        build::continue_tree(tree, op, pair, offset + start);
    }
    located.span = Span::new(located.span.start, end);
    Some(located)
}

/// Where to cut `text` for [`parse_pieces`]: byte offsets of top-level binary
/// `+`/`-` (after the assignment operator, if any), one whenever the piece
/// since the last cut has passed `piece_bytes`, each with its operator.
fn cut_points(text: &str, piece_bytes: usize) -> Vec<(usize, BinaryOp)> {
    let mut cuts = Vec::new();
    let mut depth = 0usize;
    let mut in_value = false;
    let mut piece_start = 0;
    let mut candidate: Option<(usize, BinaryOp)> = None;
    let mut prev_ends_operand = false;
    for token in Lexer::new(text) {
        let kind = token.kind;
        if kind == TokenKind::Newline {
            continue;
        }
        match kind {
            TokenKind::LParen => depth += 1,
            TokenKind::RParen => depth = depth.saturating_sub(1),
            TokenKind::Op(op) if depth == 0 => {
                if prescan::is_assign_op(kind) {
                    if in_value || !cuts.is_empty() {
                        // Not a statement the grammar accepts: let it report.
                        return Vec::new();
                    }
                    in_value = true;
                    piece_start = token.end;
                    candidate = None;
                } else if prev_ends_operand && matches!(op, Operator::Plus | Operator::Minus) {
                    let op = if op == Operator::Plus {
                        BinaryOp::Add
                    } else {
                        BinaryOp::Sub
                    };
                    if token.start - piece_start > piece_bytes
                        && let Some(cut) = candidate.take()
                    {
                        cuts.push(cut);
                        piece_start = cut.0;
                    }
                    candidate = Some((token.start, op));
                }
            }
            _ => {}
        }
        prev_ends_operand = kind.ends_operand();
    }
    cuts
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
