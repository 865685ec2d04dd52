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
    /// Wrap human lines longer than this many columns (the terminal's width), so
    /// long traces stay readable when projected. `None`: never wrap.
    pub width: Option<usize>,
    out: O,
    err: E,
}

impl<O: Write, E: Write> Printer<O, E> {
    /// A printer writing events to `out` and human-format errors to `err`.
    pub fn new(format: Format, out: O, err: E) -> Self {
        Printer {
            format,
            width: None,
            out,
            err,
        }
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
            Format::Human(style) => {
                let text = text::render_event(event, source, &style);
                match self.width {
                    Some(width) => self.out.write_all(wrap(&text, width).as_bytes()),
                    None => self.out.write_all(text.as_bytes()),
                }
            }
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

/// Soft-wraps every line of `text` that is wider than `width` columns after the
/// last `;` or else at the last space that fits, indenting continuation lines
/// by 8 spaces. ANSI colour codes
/// take no columns; a word longer than the width is cut.
pub fn wrap(text: &str, width: usize) -> String {
    const INDENT: usize = 8;
    let width = width.max(INDENT + 20);
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (line, newline) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        let mut column = 0;
        let mut rest = line;
        loop {
            let limit = if column == 0 { width } else { width - INDENT };
            let (fits, cut) = visible_prefix(rest, limit);
            if fits == rest.len() {
                out.push_str(rest);
                break;
            }
            // Break after the last `;` that fits (between the parts of a trace
            // line), else at the last space, else anywhere.
            let head = &rest[..fits];
            let at = head
                .rfind("; ")
                .map(|i| i + 1)
                .filter(|&i| i > limit / 2)
                .or_else(|| head.rfind(' ').filter(|&i| i > 0))
                .unwrap_or(cut);
            out.push_str(head[..at].trim_end());
            out.push('\n');
            out.push_str(&" ".repeat(INDENT));
            column = INDENT;
            rest = rest[at..].trim_start_matches(' ');
        }
        out.push_str(newline);
    }
    out
}

/// How many bytes of `text` fit in `columns` visible characters (escape
/// sequences are free), and the same limit as a cut position.
fn visible_prefix(text: &str, columns: usize) -> (usize, usize) {
    let mut seen = 0;
    let mut in_escape = false;
    for (i, c) in text.char_indices() {
        if in_escape {
            in_escape = !c.is_ascii_alphabetic();
            continue;
        }
        if c == '\u{1b}' {
            in_escape = true;
            continue;
        }
        if seen == columns {
            return (i, i);
        }
        seen += 1;
    }
    (text.len(), text.len())
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn long_lines_wrap_at_spaces_with_an_indent() {
        let text = "backward pass from z: 4 nodes in reverse topological order; upstream = ∂z/∂node\nshort\n";
        let wrapped = wrap(text, 40);
        assert_eq!(
            wrapped,
            "backward pass from z: 4 nodes in\n        reverse topological order;\n        upstream = ∂z/∂node\nshort\n"
        );
        assert!(wrapped.lines().all(|l| l.chars().count() <= 40));
    }

    #[test]
    fn colour_codes_take_no_columns() {
        let text = "\u{1b}[32m12345\u{1b}[0m 67890\n";
        assert_eq!(wrap(text, 30), text);
    }
}
