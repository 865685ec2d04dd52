//! Events → JSON Lines (every kind is listed in docs/json.md).
//!
//! The events serialize themselves (serde's derive, tagged by `kind`; see
//! [`crate::session::Event`]); this module adds what needs the renderer: a
//! warning's line and column, the text of a DOT picture and of a table. Finite
//! numbers are JSON numbers with full round-trip precision (integers without a
//! fraction); inf, -inf and nan are the strings `"inf"`, `"-inf"`, `"nan"`.

use serde::Serialize;
use serde_json::{Value, json};

use super::line_column;
use crate::render::{Precision, dot, tables};
use crate::session::{Event, PictureFormat, SessionError, TableFormat};

/// The JSON of the events whose fields the renderer computes.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Rendered<'a> {
    Warning {
        message: &'a str,
        line: usize,
        column: usize,
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

/// One event as one JSON object (one line of output), or `None` for an event
/// that is not shown: one with a file, which the printer writes (reporting
/// `wrote`), and `:load`, which the driver carries out. `source` is the text the
/// statement came from, for the line and column of warnings.
pub fn event(event: &Event, source: &str) -> Option<Value> {
    let rendered = match event {
        Event::Warning { message, span } => {
            let (line, column) = line_column(source, span.start);
            Rendered::Warning {
                message,
                line,
                column,
            }
        }
        Event::Picture {
            picture,
            format: PictureFormat::Dot,
            target: None,
        } => Rendered::Dot {
            of: &picture.of,
            text: dot::dot(picture),
        },
        Event::TraceTable {
            of,
            steps,
            omitted,
            format,
            target: None,
            ..
        } => Rendered::Table {
            of,
            format: match format {
                TableFormat::Markdown => "markdown",
                TableFormat::Latex => "latex",
            },
            text: tables::table(of, steps, *omitted, *format, Precision::Full),
        },
        Event::Picture { .. }
        | Event::TraceTable { .. }
        | Event::Plot {
            target: Some(_), ..
        }
        | Event::Save { .. }
        | Event::Load { .. } => return None,
        Event::Value { .. }
        | Event::Defined { .. }
        | Event::Grad { .. }
        | Event::Notice { .. }
        | Event::Topo { .. }
        | Event::Trace { .. }
        | Event::Vars { .. }
        | Event::Help { .. }
        | Event::Stats(_)
        | Event::Collected(_)
        | Event::Reset
        | Event::Quit
        | Event::Precision { .. }
        | Event::Graph { .. }
        | Event::Forward { .. }
        | Event::Kahn { .. }
        | Event::Check { .. }
        | Event::Paths { .. }
        | Event::Plot { target: None, .. }
        | Event::Wrote { .. }
        | Event::Calculus(_) => return Some(to_value(event)),
    };
    Some(to_value(&rendered))
}

/// A value as JSON; serializing an event cannot fail (string keys, no maps of
/// other keys), but if it did the line says so instead of vanishing.
fn to_value(value: &impl Serialize) -> Value {
    serde_json::to_value(value)
        .unwrap_or_else(|error| json!({"kind": "error", "message": error.to_string()}))
}

/// An error as a JSON object with its 1-based line and column in `source`.
pub fn error(error: &SessionError, source: &str, origin: &str) -> Value {
    message(
        &error.to_string(),
        error.span().start,
        error.help(),
        source,
        origin,
    )
}

/// Any error message as the `error` event, placed at byte `offset` of `source`.
pub fn message(
    text: &str,
    offset: usize,
    help: Option<String>,
    source: &str,
    origin: &str,
) -> Value {
    let (line, column) = line_column(source, offset);
    let text = super::shorten_quotes(text);
    let mut object =
        json!({"kind": "error", "message": text, "line": line, "column": column, "source": origin});
    if let Some(help) = help {
        object["help"] = json!(super::shorten_quotes(&help));
    }
    object
}

#[cfg(test)]
mod tests {
    use serde::Serialize;

    #[derive(Serialize)]
    struct N(#[serde(serialize_with = "crate::session::event::fields::number")] f64);

    fn number(value: f64) -> String {
        serde_json::to_string(&N(value)).unwrap()
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
    }
}
