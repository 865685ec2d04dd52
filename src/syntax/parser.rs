//! One statement → [`Located`], in three jobs, one file each: the pre-scan for
//! lexical errors and nesting depth (`prescan.rs`), then the pest grammar and
//! tree building (`build.rs`: a Pratt parser folds each flat `expr` into an
//! [`ExprTree`]), or on a grammar error its conversion (`convert.rs`).

use pest::Parser as _;

mod batch;
mod build;
mod convert;
mod exponent;
mod literal;
mod prescan;

pub use batch::Cursor;
#[cfg(test)]
pub(crate) use build::append_piece;
pub use literal::MAX_LITERAL_NUMBERS;

use build::build_statement;
use convert::convert_error;
use prescan::{Scan, prescan};

use super::ast::{AssignOp, BinaryOp, ExprTree, Located, Repeat, Span, Statement};
use super::error::SyntaxError;
use super::lexer::{Lexer, Operator, TokenKind};

/// The pest parser generated from `grammar/gradcalc.pest`.
#[derive(pest_derive::Parser)]
#[grammar = "../grammar/gradcalc.pest"]
struct Grammar;

/// Parses `source[span]`; see [`super::parse_statement`].
pub(crate) fn parse(source: &str, span: Span) -> Result<Located, SyntaxError> {
    parse_as(source, span, false)
}

/// Parses `source[span]` as [`parse`] does, except that a long expression or
/// assignment is parsed only as far as its first piece, the others left in
/// [`Located::rest`] (for [`super::Statements`]).
pub(crate) fn parse_streamed(source: &str, span: Span) -> Result<Located, SyntaxError> {
    parse_as(source, span, true)
}

/// [`parse`], or [`parse_streamed`] when `streamed` (for statements that nest
/// at most [`SHALLOW_NESTING`] deep: a deeper one is parsed whole, on a thread
/// with a large stack).
fn parse_as(source: &str, span: Span, streamed: bool) -> Result<Located, SyntaxError> {
    let Some(text) = source.get(span.start..span.end) else {
        let at = span.start.min(source.len());
        return Err(SyntaxError::Unexpected {
            span: Span::new(at, at),
            expected: "a statement span inside the source, on character boundaries".into(),
            found: format!("the span {}..{}", span.start, span.end),
            help: None,
        });
    };
    parse_text(text, span.start, streamed)
}

/// [`parse_as`] for the statement `text`, which starts at byte `offset` of the
/// source.
fn parse_text(text: &str, offset: usize, streamed: bool) -> Result<Located, SyntaxError> {
    let is_command = Lexer::new(text)
        .find(|t| t.kind != TokenKind::Newline)
        .is_some_and(|t| t.kind == TokenKind::Colon);
    let scan = if is_command {
        Scan::default()
    } else {
        prescan(text, offset)?
    };
    // A plain numeric literal (`[0, 0, …]`, any size) without pest.
    if !is_command
        && scan.problem.is_none()
        && let Some(located) = literal::plain_literal(text, offset)
    {
        return located;
    }
    if scan.max_nesting <= SHALLOW_NESTING {
        return parse_scanned(text, offset, is_command, scan.problem, streamed);
    }
    // pest and the Pratt parser recurse once per level, a few kB per level in a
    // debug build: run deep statements on a thread with a stack of known size
    // rather than on the caller's, which may be small (2 MB for test threads).
    std::thread::scope(|scope| {
        let deep = std::thread::Builder::new()
            .name("gradcalc-parse".into())
            .stack_size(DEEP_STACK_BYTES)
            .spawn_scoped(scope, || {
                // Parsed whole: later pieces parsed on the caller's stack could be as deep.
                parse_scanned(text, offset, is_command, scan.problem, false)
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
    streamed: bool,
) -> Result<Located, SyntaxError> {
    if text.len() > LONG_STATEMENT
        && !is_command
        && scanned.is_none()
        && let Some(located) = parse_pieces(text, offset, PIECE_BYTES, streamed)
    {
        return Ok(located);
    }
    match Grammar::parse(Rule::statement, text) {
        Ok(mut pairs) => match scanned {
            Some(problem) => Err(problem),
            None => {
                let statement = pairs.next().and_then(|p| p.into_inner().next());
                match statement {
                    Some(pair) => {
                        let mut located = build_statement(pair, offset);
                        if let Statement::Repeat(repeat) = &mut located.statement {
                            parse_repeat_body(text, offset, repeat)?;
                        }
                        Ok(located)
                    }
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

/// Parses the statements of a `:repeat` (`text`, at byte `offset` of the
/// source, is the whole statement's) into its `body`: cut as
/// [`super::statement_spans`] cuts a text, each parsed as [`parse`] parses it.
///
/// Errors: the first statement that does not parse.
fn parse_repeat_body(text: &str, offset: usize, repeat: &mut Repeat) -> Result<(), SyntaxError> {
    let start = repeat.body_span.start;
    let body = &text[start - offset..repeat.body_span.end - offset];
    for piece in super::split::split(body, true).spans {
        let located = parse_text(&body[piece.start..piece.end], start + piece.start, false)?;
        repeat.body.push(located);
    }
    Ok(())
}

/// Whether the statement `text` is a `:repeat` (after optional whitespace),
/// as the grammar reads it: what the splitter and the batch parser ask before
/// they parse it.
pub(crate) fn is_repeat(text: &str) -> bool {
    Grammar::parse(Rule::repeat_head, text.trim_start()).is_ok()
}

/// Parses a long statement in pieces of about `piece_bytes`, so that pest's
/// token queue (some 80 bytes a token) holds one piece at a time, not the
/// whole line.
///
/// The value's text is cut before top-level binary `+`/`-` (outside brackets,
/// after the assignment operator if any); the first piece is parsed as the
/// statement, each later one as an expression whose terms fold onto the value
/// so far ([`Pieces::parse`]): `+` and `-` are the lowest, left-associative
/// level, so the pieces joined are node for node the tree a single parse
/// gives. When `streamed` and the statement is an expression or an
/// assignment other than `:=`, only the first piece is parsed and the others
/// are left in [`Located::rest`]; otherwise they are parsed and joined here.
/// `None` when there is nothing to cut or a piece parsed here does not parse
/// (the caller then parses the whole text, which also gives the precise
/// error).
pub(crate) fn parse_pieces(
    text: &str,
    offset: usize,
    piece_bytes: usize,
    streamed: bool,
) -> Option<Located> {
    let cuts = cut_points(text, piece_bytes);
    let (first_end, _) = *cuts.first()?;
    let pair = Grammar::parse(Rule::statement, &text[..first_end])
        .ok()?
        .next()?
        .into_inner()
        .next()?;
    let mut located = build_statement(pair, offset);
    let pieces = Pieces {
        cuts: cuts
            .iter()
            .enumerate()
            .map(|(i, &(at, op))| Cut {
                op,
                // The piece starts after the operator (one character) and runs to the next cut.
                start: offset + at + text[at..].chars().next().map_or(1, char::len_utf8),
                end: offset + cuts.get(i + 1).map_or(text.len(), |&(next, _)| next),
            })
            .collect(),
    };
    let streams = match &located.statement {
        Statement::Expr(_) => true,
        Statement::Assign { op, .. } => *op != AssignOp::Update,
        Statement::Updates { .. }
        | Statement::Define { .. }
        | Statement::Command { .. }
        | Statement::Repeat(_) => false,
    };
    if streamed && streams {
        located.span = Span::new(located.span.start, offset + text.len());
        located.rest = Some(pieces);
        return Some(located);
    }
    let tree = match &mut located.statement {
        Statement::Expr(tree) => tree,
        Statement::Assign { value, .. } => value,
        Statement::Define { body, .. } => body,
        Statement::Updates { .. } | Statement::Command { .. } | Statement::Repeat(_) => {
            return None;
        }
    };
    for cut in &pieces.cuts {
        let piece = cut.parse(
            &text[cut.start - offset..cut.end - offset],
            cut.start,
            tree.span(),
        )?;
        build::append_piece(tree, piece);
    }
    located.span = Span::new(located.span.start, tree.span().end);
    Some(located)
}

/// The later pieces of a long sum (see [`Located::rest`]): where each piece's
/// text is in the source, and the operator (`+` or `-`) before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pieces {
    cuts: Box<[Cut]>,
}

/// One later piece: `op` then the text `start..end` (byte offsets into the source).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cut {
    op: BinaryOp,
    start: usize,
    end: usize,
}

impl Pieces {
    /// How many pieces there are (after the first, which is the statement's tree).
    pub fn len(&self) -> usize {
        self.cuts.len()
    }

    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.cuts.is_empty()
    }

    /// Parses piece `index` (from 0) of `source` (the text the statement was
    /// parsed from) as the rest of the sum so far, whose text is at `seed`
    /// (the span of the tree of the first piece, then of the piece before).
    ///
    /// The tree's node 0 is a placeholder for the value so far (the number 0,
    /// at `seed`); the piece's terms follow, each added to (or subtracted
    /// from) what comes before, root last. Evaluated in turn, each seeded with
    /// the value before it, the pieces make exactly the nodes of the whole
    /// statement's tree, in its order, with the same spans.
    ///
    /// `None` if the piece does not parse as an expression (the whole
    /// statement, parsed with [`super::parse_statement`], then gives
    /// the error and its place), or if `index` or the piece's span is not
    /// in `source`.
    pub fn parse(&self, source: &str, index: usize, seed: Span) -> Option<ExprTree> {
        let cut = self.cuts.get(index)?;
        cut.parse(source.get(cut.start..cut.end)?, cut.start, seed)
    }

    /// True if the pieces from `from` on all parse (the grammar only, no tree
    /// is built): after an error in the value so far, whether the statement
    /// has a syntax error still to come (which a whole parse reports first).
    pub fn parse_from(&self, source: &str, from: usize) -> bool {
        self.cuts.iter().skip(from).all(|cut| {
            source
                .get(cut.start..cut.end)
                .and_then(piece_pair)
                .is_some()
        })
    }
}

impl Cut {
    /// The tree of this piece, whose text `text` starts at byte `offset`.
    fn parse(&self, text: &str, offset: usize, seed: Span) -> Option<ExprTree> {
        let pair = piece_pair(text)?;
        Some(build::piece_tree(seed, self.op, pair, offset))
    }
}

/// The `expr` pair of a piece's text, or `None` if it is not one.
fn piece_pair(text: &str) -> Option<pest::iterators::Pair<'_, Rule>> {
    let pair = Grammar::parse(Rule::statement, text)
        .ok()?
        .next()?
        .into_inner()
        .next()?;
    (pair.as_rule() == Rule::expr).then_some(pair)
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
            // A comparison binds below `+`/`-`: a statement with one at the
            // top level is not cut (`==` and `!=` hold `=`, refused below).
            TokenKind::Other
                if depth == 0 && matches!(&text[token.start..token.end], "<" | ">") =>
            {
                return Vec::new();
            }
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
