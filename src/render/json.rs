//! Events → JSON Lines (every kind is listed in docs/json.md).
//!
//! The events serialize themselves (serde's derive, tagged by `kind`; see
//! [`crate::session::Event`]); this module adds what needs the renderer: a
//! warning's line and column, the text of a DOT picture and of a table, the
//! `from` every event of a statement carries ([`Place`]) and an error's
//! `code` ([`ErrorCode`]). Finite
//! numbers are JSON numbers with full round-trip precision (integers without a
//! fraction); inf, -inf and nan are the strings `"inf"`, `"-inf"`, `"nan"`.

use std::cell::RefCell;
use std::io::{self, Write};

use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::{Value, json};

use super::line_column;
use crate::render::{Precision, dot};
use crate::session::event::{file_events, node_listing_events, plain_events};
use crate::session::{
    ErrorCode, Event, Omitted, PictureFormat, Session, SessionError, TableFormat, TopoRows,
    TraceSteps,
};

/// Where the events being written come from: the text of the statement's
/// source and its name, and the statement itself.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    /// The text the statement is in (a whole script, an `-e`, a line read in
    /// line mode), for the line and column of warnings and errors.
    pub source: &'a str,
    /// Its name: `-e`, `-e #2`, a file, `<stdin>`, `<input>`.
    pub origin: &'a str,
    /// Lines of the origin before `source` (in line mode, the lines read
    /// before this one): added to every line number.
    pub lines_before: usize,
    /// The statement the events come from; `None` for an error outside any
    /// statement (a file that is not UTF-8, Ctrl-C while a source was read).
    pub statement: Option<StatementPlace>,
}

/// The statement an event came from, JSON's `from`: `statement` (1 for the
/// first statement run, counting every statement of every source and
/// `:load`ed file in the order they ran), and the `line` and `column` (1-based,
/// column in characters) where its text starts in its source. The
/// `source` written beside them is the [`Place`]'s origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatementPlace {
    /// 1-based, in the order statements ran.
    pub number: usize,
    /// 1-based line of the statement's first character in its source
    /// (before [`Place::lines_before`] is added).
    pub line: usize,
    /// 1-based column of it, in characters.
    pub column: usize,
    /// Its line ends in `;` (docs/language.md §1): the human formats show
    /// only its warnings and errors; JSON writes every event, with
    /// `"silenced": true` in its `from`.
    pub silenced: bool,
}

impl Place<'_> {
    /// The `from` object, when there is a statement.
    fn statement(&self) -> Option<Value> {
        self.statement.map(|s| {
            let mut from = json!({
                "statement": s.number,
                "source": self.origin,
                "line": s.line + self.lines_before,
                "column": s.column,
            });
            if let (true, Value::Object(map)) = (s.silenced, &mut from) {
                map.insert("silenced".to_string(), Value::Bool(true));
            }
            from
        })
    }

    /// The 1-based line and column of byte `offset` of the source.
    fn line_column(&self, offset: usize) -> (usize, usize) {
        let (line, column) = line_column(self.source, offset);
        (line + self.lines_before, column)
    }
}

/// The JSON of the events whose fields the renderer computes.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Rendered<'a> {
    Warning {
        message: &'a str,
        line: usize,
        column: usize,
        source: &'a str,
    },
    Notice {
        code: &'static str,
        message: String,
    },
    Dot {
        of: &'a str,
        text: String,
    },
    Table {
        of: &'a str,
        format: &'static str,
        text: String,
    },
}

/// Writes one event as one JSON object on one line of `out`, or nothing for an
/// event that is not shown: one with a file, which the printer writes
/// (reporting `wrote`), and `:load`, which the driver carries out. `session`
/// is the session the event came from, which makes a listing's rows while
/// they are written (one at a time); `place` says where the statement is (a
/// warning's line, column and `source`, and every event's `from`).
/// After Ctrl-C a listing's array ends early and the object is closed: the
/// line stays valid JSON.
///
/// Errors: those of `out`.
pub fn write_event(
    out: &mut impl Write,
    event: &Event,
    session: &Session,
    place: &Place<'_>,
) -> io::Result<()> {
    match listing(event, session, &place.statement(), ToLine(out)) {
        Ok(written) => written,
        // A value (a matrix of millions of numbers with `--json-full`)
        // written as it is serialized: no copy of it as JSON is made.
        Err(ToLine(out)) if matches!(event, Event::Value { .. } | Event::Grad { .. }) => {
            write_placed(out, event, place)
        }
        Err(ToLine(out)) => match unplaced(event, session, place) {
            Some(value) => write_placed(out, &value, place),
            None => Ok(()),
        },
    }
}

/// Where a listing's JSON goes once it is made: written to a line as its rows
/// are made ([`ToLine`]), or built into a value ([`ToValue`]).
trait ListingSink: Sized {
    /// What taking a listing gives.
    type Out;
    /// Serializes `listing` (once: its rows are made while it is serialized).
    fn take(self, listing: &impl Serialize) -> Self::Out;
}

/// A listing written as one line of `W`.
struct ToLine<'w, W>(&'w mut W);

impl<W: Write> ListingSink for ToLine<'_, W> {
    type Out = io::Result<()>;
    fn take(self, listing: &impl Serialize) -> io::Result<()> {
        to_line(self.0, listing)
    }
}

/// A listing built into a JSON value.
struct ToValue;

impl ListingSink for ToValue {
    type Out = Value;
    fn take(self, listing: &impl Serialize) -> Value {
        to_value(listing)
    }
}

/// A listing event (`topo`, `forward`, `kahn`, `trace`) handed to `sink`
/// with its rows made from `session` and `statement` as its `from`; the sink
/// back, untouched, for every other event.
fn listing<S: ListingSink>(
    event: &Event,
    session: &Session,
    statement: &Option<Value>,
    sink: S,
) -> Result<S::Out, S> {
    if let Some((of, (total, constants), steps, omitted)) = super::text::node_trace(event) {
        let rows = Rows::steps(session.trace_steps(steps), constants);
        let line = ListingLine::of("trace", of, total, rows, omitted).with_statement(statement);
        return Ok(sink.take(&line));
    }
    if let Some((topo, of, total, rows, omitted)) = super::text::node_order(event) {
        let kind = if topo { "topo" } else { "forward" };
        let rows = Rows::nodes(session.node_rows(rows));
        let line = ListingLine::of(kind, of, total, rows, omitted).with_statement(statement);
        return Ok(sink.take(&line));
    }
    if let Some((of, total, rows, omitted, differences)) = super::text::kahn_order(event) {
        let rows = Rows::nodes(session.kahn_rows(rows));
        let line = ListingLine::of("kahn", of, total, rows, omitted).with_statement(statement);
        return Ok(sink.take(&ListingLine {
            extra: Some(("differences", differences)),
            ..line
        }));
    }
    Err(match event {
        Event::Topo {
            rows: TopoRows::Tensors { .. },
            ..
        }
        | Event::Trace {
            steps: TraceSteps::Tensors { .. },
            ..
        }
        | plain_events!()
        | file_events!()
        | Event::Calculus { .. } => sink,
        // Handed on above.
        node_listing_events!() => sink,
    })
}

/// `value` as one line of JSON written to `out`.
fn to_line(out: &mut impl Write, value: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    writeln!(out)
}

/// A listing event as docs/json.md describes it: `kind`, `of`, `total`, the
/// rows (`nodes`, or `constants` and `steps`), `omitted`, and for `kahn`
/// `differences`; the fields in the order the other events' derive writes.
struct ListingLine<'a, I> {
    kind: &'static str,
    of: &'a str,
    total: usize,
    rows: Rows<I>,
    omitted: Option<Omitted>,
    extra: Option<(&'static str, usize)>,
    statement: Option<Value>,
}

/// The rows of a listing, serialized as an array while they are made.
struct Rows<I> {
    /// `nodes` or `steps`.
    field: &'static str,
    /// For `steps`: the `constants` count written before them.
    constants: Option<usize>,
    rows: RefCell<Option<I>>,
}

impl<'a, I> ListingLine<'a, I> {
    fn of(
        kind: &'static str,
        of: &'a str,
        total: usize,
        rows: Rows<I>,
        omitted: Option<Omitted>,
    ) -> ListingLine<'a, I> {
        ListingLine {
            kind,
            of,
            total,
            rows,
            omitted,
            extra: None,
            statement: None,
        }
    }

    /// The listing with the `from` of its statement written last.
    fn with_statement(self, statement: &Option<Value>) -> ListingLine<'a, I> {
        ListingLine {
            statement: statement.clone(),
            ..self
        }
    }
}

impl<I> Rows<I> {
    fn nodes(rows: I) -> Rows<I> {
        Rows {
            field: "nodes",
            constants: None,
            rows: RefCell::new(Some(rows)),
        }
    }

    fn steps(rows: I, constants: usize) -> Rows<I> {
        Rows {
            field: "steps",
            constants: Some(constants),
            rows: RefCell::new(Some(rows)),
        }
    }
}

impl<I: Iterator<Item = T>, T: Serialize> Serialize for Rows<I> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Serialized once: the rows are made as they are written.
        let rows = self.rows.borrow_mut().take();
        s.collect_seq(rows.into_iter().flatten())
    }
}

impl<I: Iterator<Item = T>, T: Serialize> Serialize for ListingLine<'_, I> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("kind", self.kind)?;
        map.serialize_entry("of", self.of)?;
        map.serialize_entry("total", &self.total)?;
        if let Some(constants) = self.rows.constants {
            map.serialize_entry("constants", &constants)?;
        }
        map.serialize_entry(self.rows.field, &self.rows)?;
        map.serialize_entry("omitted", &self.omitted)?;
        if let Some((key, value)) = self.extra {
            map.serialize_entry(key, &value)?;
        }
        if let Some(statement) = &self.statement {
            map.serialize_entry("from", statement)?;
        }
        map.end()
    }
}

/// One event as one JSON object (one line of output), with the `from`
/// of `place`, or `None` for an event that is not shown (see
/// [`write_event`]). A listing's rows are all made and held in the value:
/// [`write_event`] writes them one at a time instead.
pub fn event(event: &Event, session: &Session, place: &Place<'_>) -> Option<Value> {
    unplaced(event, session, place).map(|value| placed(value, place))
}

/// `value` (an object without `from`) on one line of `out`, with the
/// `from` of `place` written last; the same text as [`placed`] gives,
/// without building the statement as a value (the commonest line of a long
/// script) or the line as a text (a large value is written as it is
/// serialized).
fn write_placed(out: &mut impl Write, value: &impl Serialize, place: &Place<'_>) -> io::Result<()> {
    let mut held = HoldLast { out, last: None };
    serde_json::to_writer(&mut held, value)?;
    let HoldLast { out, last } = held;
    match (place.statement, last) {
        (Some(s), Some(b'}')) => {
            let source = Value::from(place.origin);
            let line = s.line + place.lines_before;
            let silenced = if s.silenced {
                r#","silenced":true"#
            } else {
                ""
            };
            writeln!(
                out,
                r#","from":{{"statement":{},"source":{source},"line":{line},"column":{}{silenced}}}}}"#,
                s.number, s.column
            )
        }
        (_, last) => {
            out.write_all(last.as_slice())?;
            writeln!(out)
        }
    }
}

/// A writer passing on all but the last byte written to it (`last`): the
/// `}` that closes an object, which the `from` goes before.
struct HoldLast<'w, W> {
    out: &'w mut W,
    last: Option<u8>,
}

impl<W: Write> Write for HoldLast<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some((&end, body)) = buf.split_last() else {
            return Ok(0);
        };
        if let Some(last) = self.last.take() {
            self.out.write_all(&[last])?;
        }
        self.out.write_all(body)?;
        self.last = Some(end);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// An object with the `from` of `place` added last (unless it has one).
pub fn placed(mut value: Value, place: &Place<'_>) -> Value {
    if let (Some(statement), Value::Object(map)) = (place.statement(), &mut value) {
        map.entry("from").or_insert(statement);
    }
    value
}

/// [`event`] without the `from` (a listing has it already).
fn unplaced(event: &Event, session: &Session, place: &Place<'_>) -> Option<Value> {
    let rendered = match event {
        Event::Warning { message, span } => {
            let (line, column) = place.line_column(span.start);
            Rendered::Warning {
                message,
                line,
                column,
                source: place.origin,
            }
        }
        Event::Notice(notice) => Rendered::Notice {
            code: notice.code().as_str(),
            message: notice.to_string(),
        },
        Event::Picture {
            picture,
            format: PictureFormat::Dot,
            target: None,
        } => Rendered::Dot {
            of: &picture.of,
            text: dot::dot(picture),
        },
        Event::TraceTable {
            of, target: None, ..
        } => {
            let (format, text) = super::text::table_text(event, session, Precision::Full)?;
            Rendered::Table {
                of,
                format: match format {
                    TableFormat::Markdown => "markdown",
                    TableFormat::Latex => "latex",
                },
                text,
            }
        }
        // A tensor output's: its shape, and its rows (`nodes`) or steps.
        Event::Topo {
            of,
            rows: TopoRows::Tensors { shape, rows },
        } => return Some(json!({"kind": "topo", "of": of, "shape": shape, "nodes": rows})),
        Event::Trace {
            of,
            steps:
                TraceSteps::Tensors {
                    shape,
                    legend,
                    steps,
                },
        } => {
            let mut value = json!({"kind": "trace", "of": of, "shape": shape});
            if !legend.is_empty() {
                value["legend"] = to_value(legend);
            }
            value["steps"] = to_value(steps);
            return Some(value);
        }
        Event::Topo { .. } | Event::Trace { .. } | Event::Forward { .. } | Event::Kahn { .. } => {
            return listing(event, session, &place.statement(), ToValue).ok();
        }
        Event::Vars { tensors, .. } => {
            // One array of variables: the tensors after the numbers, each
            // with its `shape`.
            let mut value = to_value(event);
            if let Some(rows) = value.get_mut("vars").and_then(Value::as_array_mut) {
                rows.extend(tensors.iter().map(to_value));
            }
            return Some(value);
        }
        Event::Value { .. }
        | Event::Defined { .. }
        | Event::Grad { .. }
        | Event::Shapes { .. }
        | Event::Help { .. }
        | Event::Stats(_)
        | Event::Collected(_)
        | Event::Reset
        | Event::Quit
        | Event::Precision { .. }
        | Event::Graph { .. }
        | Event::Check { .. }
        | Event::Naive { .. }
        | Event::Paths { .. }
        | Event::Plot { target: None, .. }
        | Event::Wrote { .. }
        | Event::Calculus(_)
        | Event::Homework(_)
        | Event::Quiz(_) => return Some(to_value(event)),
        // Carried out by the printer or the driver; it reports `Wrote`.
        file_events!() => return None,
    };
    Some(to_value(&rendered))
}

/// A value as JSON; serializing an event cannot fail (string keys, no maps of
/// other keys), but if it did the line says so, as an `error` of code
/// `internal`, instead of vanishing.
fn to_value(value: &impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or_else(|error| {
        let message = format!("gradcalc could not write an event as JSON: {error}");
        to_value(&ErrorLine::new(ErrorCode::Internal, &message, None))
    })
}

/// Every `error` event as docs/json.md describes it, in one shape: `kind`,
/// `code`, `message`, then `line` and `column` when the error is in the text
/// of a source, `source`, `help` when there is a fix, and `from` when it
/// stopped a statement.
#[derive(Serialize)]
pub struct ErrorLine<'a> {
    kind: &'static str,
    code: &'static str,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    help: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<Value>,
}

impl<'a> ErrorLine<'a> {
    /// An error with `code` and `message` (quotes shortened as everywhere in
    /// JSON) from the source named `source`, with no place in its text: the
    /// arguments refused, a source that cannot be read.
    pub fn new(code: ErrorCode, message: &str, source: Option<&'a str>) -> ErrorLine<'a> {
        ErrorLine {
            kind: "error",
            code: code.as_str(),
            message: super::shorten_quotes(message),
            line: None,
            column: None,
            source,
            help: None,
            from: None,
        }
    }

    /// The error with a suggested fix.
    pub fn with_help(self, help: Option<&str>) -> ErrorLine<'a> {
        ErrorLine {
            help: help.map(super::shorten_quotes),
            ..self
        }
    }

    /// The error as a JSON object.
    pub fn to_value(&self) -> Value {
        to_value(self)
    }
}

/// An error as a JSON object with its code, its 1-based line and column in
/// the place's source, and the statement it stopped.
pub fn error(error: &SessionError, place: &Place<'_>) -> Value {
    message(
        &error.to_string(),
        error.code(),
        error.span().start,
        error.help(),
        place,
    )
}

/// Any error message as the `error` event with `code`, placed at byte
/// `offset` of the place's source, with the statement it came from (when
/// there is one) and a fix (`help`) when there is one.
pub fn message(
    text: &str,
    code: ErrorCode,
    offset: usize,
    help: Option<String>,
    place: &Place<'_>,
) -> Value {
    let (line, column) = place.line_column(offset);
    ErrorLine {
        line: Some(line),
        column: Some(column),
        from: place.statement(),
        ..ErrorLine::new(code, text, Some(place.origin)).with_help(help.as_deref())
    }
    .to_value()
}

#[cfg(test)]
mod tests {
    use crate::session::Number;

    fn number(value: f64) -> String {
        serde_json::to_string(&Number(value)).unwrap()
    }

    #[test]
    fn numbers_round_trip_and_specials_are_strings() {
        assert_eq!(number(8.0), "8");
        assert_eq!(number(-0.75), "-0.75");
        assert_eq!(number(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(number(3.3554432e-18), "3.3554432e-18");
        assert_eq!(number(f64::INFINITY), "\"inf\"");
        assert_eq!(number(f64::NEG_INFINITY), "\"-inf\"");
        assert_eq!(number(f64::NAN), "\"nan\"");
        assert_eq!(number(1e300), "1e+300");
        assert_eq!(number(9007199254740992.0), "9007199254740992");
        assert_eq!(number(-1e18), "-1000000000000000000");
        // −0 keeps its sign as a float; an optional number is null only when absent.
        assert_eq!(number(-0.0), "-0.0");
        assert_eq!(serde_json::to_string(&None::<Number>).unwrap(), "null");
    }
}
