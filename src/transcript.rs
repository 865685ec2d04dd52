//! Transcripts for grading: a script run in a fresh session and recorded as
//! its inputs and outputs — JSON Lines for an autograder, Markdown for people
//! — with its answer checks (`:expect`) counted and a timestamp; and the check
//! that a JSON Lines transcript reproduces: its inputs run again give the
//! same events, numbers equal to a relative 1e-9 (`gradcalc
//! --check-transcript`). No IO: text in, text out; the caller gives the time.
//!
//! The JSON Lines: first `{"kind": "transcript", "version": 1, "origin",
//! "recorded", "gradcalc"}`, then for each statement an `input` line
//! (`statement`, `line`, `text`) followed by its events as `--json` writes
//! them (docs/json.md), and last `{"kind": "checks", "correct", "wrong",
//! "wrong_shape", "unanswered", "recorded"}`.

use std::fmt::Write;

use serde_json::{Value, json};

use crate::render::json::{self as json_out, Place, StatementPlace};
use crate::render::{Style, line_column, text};
use crate::session::{Event, Session};
use crate::syntax;

/// The transcript's format version, its first line's `version`.
pub const VERSION: u64 = 1;

/// How close a number of a rerun must be to the transcript's, relative to
/// the larger magnitude.
pub const RELATIVE: f64 = 1e-9;

/// One statement recorded: its text, where it starts, its events as JSON and
/// as the terminal prints them.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The statement as typed.
    pub text: String,
    /// Its 1-based line in the source.
    pub line: usize,
    /// Its events (or its error) as `--json` writes them, without `from`.
    pub events: Vec<Value>,
    /// What the terminal prints for it, without colour.
    pub printed: String,
}

/// A script's run recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    /// The script's name (a file name, `-e`).
    pub origin: String,
    /// When it was recorded, as the caller wrote it (RFC 3339).
    pub recorded: String,
    /// The statements, in order.
    pub entries: Vec<Entry>,
}

/// Runs `source` in a fresh session, statement by statement (going on after
/// an error, as `--keep-going` does), and records every statement.
pub fn record(source: &str, origin: &str, recorded: &str) -> Transcript {
    Transcript {
        origin: origin.to_string(),
        recorded: recorded.to_string(),
        entries: run(source, origin),
    }
}

/// The entries of `source` run in a fresh session.
fn run(source: &str, origin: &str) -> Vec<Entry> {
    let mut session = Session::new();
    let mut entries = Vec::new();
    for (number, (span, parsed)) in syntax::Statements::new(source).enumerate() {
        let (line, column) = line_column(source, span.start);
        let place = Place {
            source,
            origin,
            lines_before: 0,
            statement: Some(StatementPlace {
                number: number + 1,
                line,
                column,
                silenced: false,
            }),
        };
        let result = session.run_parsed(source, span, parsed);
        let (events, printed) = match &result {
            Ok(events) => (
                events
                    .iter()
                    .filter_map(|event| json_out::event(event, &session, &place))
                    .map(unplaced)
                    .collect(),
                events
                    .iter()
                    .map(|event| {
                        text::render_event(event, &session, source, origin, &Style::default())
                    })
                    .collect(),
            ),
            Err(error) => (
                vec![unplaced(json_out::error(error, &place))],
                format!("error: {error}\n"),
            ),
        };
        entries.push(Entry {
            text: source[span.start..span.end].trim().to_string(),
            line,
            events,
            printed,
        });
        if matches!(&result, Ok(events) if events.contains(&Event::Quit)) {
            break;
        }
    }
    entries
}

/// `value` without its `from` (the statement's place, which the input line
/// says).
fn unplaced(mut value: Value) -> Value {
    if let Value::Object(map) = &mut value {
        map.remove("from");
    }
    value
}

/// How many checks of each verdict a transcript has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Tally {
    /// Correct.
    pub correct: usize,
    /// Wrong (off by, or sealed and not within tol).
    pub wrong: usize,
    /// Of the wrong shape.
    pub wrong_shape: usize,
    /// Not answered (the quantity does not evaluate).
    pub unanswered: usize,
    /// A key's own values (no expected value to compare with).
    pub recorded: usize,
}

impl Transcript {
    /// The checks' verdicts counted.
    pub fn tally(&self) -> Tally {
        let mut tally = Tally::default();
        for event in self.entries.iter().flat_map(|e| &e.events) {
            if event["kind"] != "expect" {
                continue;
            }
            match event["verdict"].as_str() {
                Some("correct") => tally.correct += 1,
                Some("wrong") => tally.wrong += 1,
                Some("wrong_shape") => tally.wrong_shape += 1,
                Some("unanswered") => tally.unanswered += 1,
                _ => tally.recorded += 1,
            }
        }
        tally
    }

    /// The transcript as JSON Lines (see the module's documentation).
    pub fn json_lines(&self) -> String {
        let mut out = String::new();
        let head = json!({
            "kind": "transcript",
            "version": VERSION,
            "origin": self.origin,
            "recorded": self.recorded,
            "gradcalc": env!("CARGO_PKG_VERSION"),
        });
        let _ = writeln!(out, "{head}");
        for (number, entry) in self.entries.iter().enumerate() {
            let input = json!({
                "kind": "input",
                "statement": number + 1,
                "line": entry.line,
                "text": entry.text,
            });
            let _ = writeln!(out, "{input}");
            for event in &entry.events {
                let _ = writeln!(out, "{event}");
            }
        }
        let mut checks = serde_json::to_value(self.tally()).unwrap_or_default();
        checks["kind"] = "checks".into();
        let _ = writeln!(out, "{checks}");
        out
    }

    /// The transcript as Markdown: a heading with the origin and the time,
    /// the checks counted, then each input (`> …`) and what it printed.
    pub fn markdown(&self) -> String {
        let tally = self.tally();
        let mut out = format!(
            "# Transcript of {}\n\nRecorded {} by gradcalc {}.\n\nChecks: {} correct, {} wrong, {} of the wrong shape, {} not answered.\n\n```\n",
            self.origin,
            self.recorded,
            env!("CARGO_PKG_VERSION"),
            tally.correct,
            tally.wrong,
            tally.wrong_shape,
            tally.unanswered
        );
        for entry in &self.entries {
            let _ = writeln!(out, "> {}", entry.text);
            out.push_str(&entry.printed.replace("```", "'''"));
        }
        out.push_str("```\n");
        out
    }
}

/// What rerunning a transcript found.
#[derive(Debug, Clone, PartialEq)]
pub struct Rerun {
    /// The statements run again.
    pub statements: usize,
    /// Each statement whose events differ: its number, text and the first
    /// difference.
    pub differences: Vec<(usize, String, String)>,
    /// The checks of the rerun counted.
    pub tally: Tally,
}

/// Reads a JSON Lines transcript and runs its inputs again in a fresh
/// session, comparing each statement's events with the recorded ones.
///
/// Errors: a line that is not JSON, a first line that is not a transcript
/// of a version this gradcalc reads; each with its line number.
pub fn rerun(jsonl: &str) -> Result<Rerun, String> {
    let mut lines = jsonl
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let parse = |(number, line): (usize, &str)| {
        serde_json::from_str::<Value>(line)
            .map_err(|error| format!("line {}: not JSON: {error}", number + 1))
    };
    let head = parse(lines.next().ok_or("the transcript is empty")?)?;
    if head["kind"] != "transcript" || head["version"] != VERSION {
        return Err(format!(
            "line 1: not a gradcalc transcript of version {VERSION} (`gradcalc --transcript` writes one)"
        ));
    }
    let origin = head["origin"]
        .as_str()
        .unwrap_or("<transcript>")
        .to_string();
    let mut inputs: Vec<(String, Vec<Value>)> = Vec::new();
    for line in lines {
        let value = parse(line)?;
        match value["kind"].as_str() {
            Some("input") => inputs.push((
                value["text"].as_str().unwrap_or_default().to_string(),
                Vec::new(),
            )),
            Some("checks") => {}
            _ => match inputs.last_mut() {
                Some((_, events)) => events.push(value),
                None => return Err(format!("line {}: an event before any input", line.0 + 1)),
            },
        }
    }
    // The inputs one a line: each statement's text is whole (a `:repeat`
    // keeps its `;`).
    let source: String = inputs.iter().map(|(text, _)| format!("{text}\n")).collect();
    let again = Transcript {
        origin: origin.clone(),
        recorded: String::new(),
        entries: run(&source, &origin),
    };
    let mut differences = Vec::new();
    for (number, (text, events)) in inputs.iter().enumerate() {
        let rerun = again.entries.get(number).map_or(&[][..], |e| &e.events[..]);
        if let Some(difference) = first_difference(events, rerun) {
            differences.push((number + 1, text.clone(), difference));
        }
    }
    if again.entries.len() != inputs.len() {
        differences.push((
            again.entries.len().min(inputs.len()) + 1,
            String::new(),
            format!(
                "{} statements recorded, {} run again",
                inputs.len(),
                again.entries.len()
            ),
        ));
    }
    Ok(Rerun {
        statements: again.entries.len(),
        differences,
        tally: again.tally(),
    })
}

/// The first difference between recorded and rerun events, if any.
fn first_difference(recorded: &[Value], rerun: &[Value]) -> Option<String> {
    if recorded.len() != rerun.len() {
        return Some(format!(
            "{} events recorded, {} now",
            recorded.len(),
            rerun.len()
        ));
    }
    recorded
        .iter()
        .zip(rerun)
        .find(|(a, b)| !same(a, b))
        .map(|(a, b)| format!("recorded {a}, now {b}"))
}

/// Whether two JSON values are equal, numbers to [`RELATIVE`]. (JSON from
/// gradcalc nests a few levels: the recursion is bounded by serde_json's
/// own depth limit of 128.)
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y || (x - y).abs() <= RELATIVE * x.abs().max(y.abs()),
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_the_same_to_a_relative_1e_9() {
        assert!(same(&json!({"v": 1.0}), &json!({"v": 1.0 + 1e-12})));
        assert!(!same(&json!({"v": 1.0}), &json!({"v": 1.001})));
        assert!(!same(&json!([1, 2]), &json!([1, 2, 3])));
    }
}
