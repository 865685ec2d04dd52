//! Many statements per grammar call: pest's set-up (its state, queues and
//! error-tracking vectors) costs about as much as parsing a short statement, so
//! runs of plain statements are joined by `;` and parsed at once.
//!
//! A statement goes alone through [`super::parse_streamed`] when the pre-scan found a
//! problem in it, when it nests deeper than [`super::SHALLOW_NESTING`], or when
//! it is long (its own parse is then the cost). A joined parse is kept only if it
//! gives exactly one statement per joined text, each covering that whole text:
//! no rule of a statement consumes `;`, so each then matched its text as it would
//! alone. Otherwise (a grammar error, a different cut) each statement of the run
//! is parsed alone, which also gives the precise error. A long expression or
//! assignment comes parsed only as far as its first piece (see
//! [`Located::rest`]).

use std::collections::VecDeque;

use pest::Parser as _;

use super::super::ast::{Located, Span};
use super::super::error::SyntaxError;
use super::super::lexer::{Lexer, TokenKind};
use super::build::build_statement;
use super::prescan::prescan;
use super::{Grammar, Rule, SHALLOW_NESTING, parse_streamed};

/// Statements longer than this (bytes) are parsed alone.
const MAX_JOINED_STATEMENT: usize = 4096;
/// At most this many statements per joined parse.
const MAX_JOINED: usize = 256;

/// The statements of a source, parsed a run at a time as they are asked for.
///
/// Holds no borrow of the source: each call of [`Cursor::next`] is given it (the
/// same text every time).
#[derive(Debug, Default)]
pub struct Cursor {
    spans: Vec<Span>,
    next: usize,
    ready: VecDeque<(Span, Result<Located, SyntaxError>)>,
    /// The index of a span already found not joinable, which starts the next run.
    alone_next: Option<usize>,
}

impl Cursor {
    /// A cursor over `spans` (statement spans of one source, in order).
    pub fn new(spans: Vec<Span>) -> Cursor {
        Cursor {
            spans,
            next: 0,
            ready: VecDeque::new(),
            alone_next: None,
        }
    }

    /// The next statement of `source`: its span and what `parse` gives
    /// for it. `None` after the last.
    ///
    /// A statement parsed alone (a long one) is parsed when its turn comes, not
    /// with the run before it: the statements before it have run by then, so
    /// Ctrl-C during its parse stops at it.
    pub fn next(&mut self, source: &str) -> Option<(Span, Result<Located, SyntaxError>)> {
        if self.ready.is_empty() && self.next < self.spans.len() {
            let limit = (self.next + MAX_JOINED).min(self.spans.len());
            let mut end = self.next;
            let mut joinables = Vec::new();
            while end < limit {
                let alone = match self.alone_next.take() {
                    Some(at) if at == end => true,
                    _ => !joinable(source, self.spans[end]),
                };
                if alone && end > self.next {
                    self.alone_next = Some(end); // its own turn, next time
                    break;
                }
                joinables.push(!alone);
                end += 1;
                if alone {
                    break;
                }
            }
            let spans = &self.spans[self.next..end];
            self.ready.extend(
                spans
                    .iter()
                    .copied()
                    .zip(parse_run(source, spans, &joinables)),
            );
            self.next = end;
        }
        self.ready.pop_front()
    }
}

/// Parses each of `spans`, joining those that can be joined (`joinable`, one
/// flag per span).
fn parse_run(source: &str, spans: &[Span], joinable: &[bool]) -> Vec<Result<Located, SyntaxError>> {
    let mut results: Vec<Option<Result<Located, SyntaxError>>> =
        spans.iter().map(|_| None).collect();
    let mut joined: Vec<usize> = Vec::new();
    for (i, (&span, &join)) in spans.iter().zip(joinable).enumerate() {
        if join {
            joined.push(i);
        } else {
            results[i] = Some(parse_streamed(source, span));
        }
    }
    if !joined.is_empty() && !parse_joined(source, spans, &joined, &mut results) {
        for &i in &joined {
            results[i] = Some(parse_streamed(source, spans[i]));
        }
    }
    results
        .into_iter()
        .zip(spans)
        .map(|(result, &span)| result.unwrap_or_else(|| parse_streamed(source, span)))
        .collect()
}

/// Whether the statement at `span` may be parsed joined with others: short, on
/// character boundaries, free of lexical problems and shallow, and not a
/// `:repeat` (its statements run to the end of the text, the `;` that joins
/// included).
fn joinable(source: &str, span: Span) -> bool {
    let Some(text) = source.get(span.start..span.end) else {
        return false;
    };
    if text.len() > MAX_JOINED_STATEMENT || text.contains(';') {
        return false;
    }
    let is_command = Lexer::new(text)
        .find(|t| t.kind != TokenKind::Newline)
        .is_some_and(|t| t.kind == TokenKind::Colon);
    if is_command {
        return !super::is_repeat(text);
    }
    prescan(text, span.start)
        .is_ok_and(|scan| scan.problem.is_none() && scan.max_nesting <= SHALLOW_NESTING)
}

/// Parses the statements `joined` (indices into `spans`) in one grammar call,
/// filling their `results`. False (and nothing filled) when the joined parse
/// fails or does not cut the text as the spans do.
fn parse_joined(
    source: &str,
    spans: &[Span],
    joined: &[usize],
    results: &mut [Option<Result<Located, SyntaxError>>],
) -> bool {
    let mut text = String::with_capacity(
        joined
            .iter()
            .map(|&i| spans[i].end - spans[i].start + 1)
            .sum(),
    );
    // Where each statement starts in `text`.
    let mut starts = Vec::with_capacity(joined.len());
    for &i in joined {
        if !text.is_empty() {
            text.push(';');
        }
        starts.push(text.len());
        text.push_str(&source[spans[i].start..spans[i].end]);
    }
    let Ok(mut pairs) = Grammar::parse(Rule::batch, &text) else {
        return false;
    };
    let Some(batch) = pairs.next() else {
        return false;
    };
    let parts: Vec<_> = batch
        .into_inner()
        .filter(|pair| pair.as_rule() != Rule::EOI)
        .collect();
    let same_cut = parts.len() == joined.len()
        && parts
            .iter()
            .zip(joined)
            .zip(&starts)
            .all(|((pair, &i), &start)| {
                let span = pair.as_span();
                span.start() == start && span.end() == start + (spans[i].end - spans[i].start)
            });
    if !same_cut {
        return false;
    }
    for ((pair, &i), &start) in parts.into_iter().zip(joined).zip(&starts) {
        // `start` ≤ the statement's offset in the source: the joined text drops
        // at least one separating byte between statements.
        results[i] = Some(Ok(build_statement(pair, spans[i].start - start)));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::statement_spans;

    #[test]
    fn a_long_statement_is_parsed_when_its_turn_comes() {
        // Two short statements, then one too long to join: the short ones are
        // parsed together, and the long one only once they have been handed out.
        let long = vec!["1"; 3000].join("+");
        let source = format!("x = 7\nx7 = 1\n{long}\ny = 2\n");
        let mut cursor = Cursor::new(statement_spans(&source));
        let (first, parsed) = cursor.next(&source).unwrap();
        assert_eq!(&source[first.start..first.end], "x = 7");
        assert!(parsed.is_ok());
        assert_eq!(cursor.next, 2, "the long statement was parsed ahead");
        assert_eq!(cursor.ready.len(), 1);
        let (second, _) = cursor.next(&source).unwrap();
        assert_eq!(&source[second.start..second.end], "x7 = 1");
        assert_eq!(cursor.next, 2);
        let (third, parsed) = cursor.next(&source).unwrap();
        assert_eq!(third.end - third.start, long.len());
        assert!(parsed.is_ok());
        assert_eq!(cursor.next, 3, "parsed alone");
        let (fourth, _) = cursor.next(&source).unwrap();
        assert_eq!(&source[fourth.start..fourth.end], "y = 2");
        assert!(cursor.next(&source).is_none());
    }
}
