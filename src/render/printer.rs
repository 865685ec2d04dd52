//! Writes a statement's events or error to the output streams in the chosen format.

use std::io::{self, Write};

use super::{Style, diagnostic, json, text};
use crate::session::{Event, SessionError};

/// Human text (with a style) or JSON Lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Lines for people; errors go to stderr.
    Human(Style),
    /// One JSON object per line on stdout, errors included (DESIGN.md §2.3).
    Json,
}

/// Renders results to `out` (events) and `err` (human-format errors).
pub struct Printer<O: Write, E: Write> {
    /// How to render.
    pub format: Format,
    out: O,
    err: E,
}

impl<O: Write, E: Write> Printer<O, E> {
    /// A printer writing events to `out` and human-format errors to `err`.
    pub fn new(format: Format, out: O, err: E) -> Self {
        Printer { format, out, err }
    }

    /// Writes one statement's result. `source` is the text it came from and `origin`
    /// names that text in error reports (`-e`, `<stdin>`, a file name).
    ///
    /// Errors: only I/O errors of the streams (a closed pipe).
    pub fn report(
        &mut self,
        result: &Result<Vec<Event>, SessionError>,
        source: &str,
        origin: &str,
    ) -> io::Result<()> {
        match result {
            Ok(events) => {
                for event in events {
                    self.event(event, source)?;
                }
                Ok(())
            }
            Err(error) => self.error(error, source, origin),
        }
    }

    /// Writes one event.
    pub fn event(&mut self, event: &Event, source: &str) -> io::Result<()> {
        match self.format {
            Format::Human(style) => self
                .out
                .write_all(text::render_event(event, source, &style).as_bytes()),
            Format::Json => writeln!(self.out, "{}", json::event(event, source)),
        }
    }

    /// Writes one statement's error.
    pub fn error(&mut self, error: &SessionError, source: &str, origin: &str) -> io::Result<()> {
        match self.format {
            Format::Human(style) => {
                self.out.flush()?;
                self.err.write_all(
                    diagnostic::render_error(error, source, origin, &style).as_bytes(),
                )?;
                self.err.flush()
            }
            Format::Json => writeln!(self.out, "{}", json::error(error, source, origin)),
        }
    }

    /// Writes an error that is not a statement's (unreadable input): `message`
    /// at byte `offset` of `source`, with an optional fix.
    pub fn problem(
        &mut self,
        message: &str,
        offset: usize,
        help: Option<String>,
        source: &str,
        origin: &str,
    ) -> io::Result<()> {
        match self.format {
            Format::Human(style) => {
                self.out.flush()?;
                let span = crate::syntax::Span::new(offset, offset);
                let text = diagnostic::render_message(message, span, help, source, origin, &style);
                self.err.write_all(text.as_bytes())?;
                self.err.flush()
            }
            Format::Json => writeln!(
                self.out,
                "{}",
                json::message(message, offset, help, source, origin)
            ),
        }
    }

    /// Writes a plain line to the event stream (the REPL's banner).
    pub fn line(&mut self, text: &str) -> io::Result<()> {
        writeln!(self.out, "{text}")
    }

    /// Flushes both streams.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()?;
        self.err.flush()
    }
}
