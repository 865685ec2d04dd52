//! Error reports: the message, the line, a caret under the column, and the fix.
//! Drawn by `codespan-reporting`.

use codespan_reporting::diagnostic::{Diagnostic, Label};
use std::ops::Range;

use codespan_reporting::files::{self, Files};
use codespan_reporting::term::{self, Chars, Config};
use owo_colors::OwoColorize;

use super::{Style, shorten_quotes, to_ascii};
use crate::session::SessionError;
use crate::syntax::Span;

/// Renders `error`, which happened in `source` (shown as `origin`: a file name,
/// `-e`, `<stdin>` or `<input>`), as a multi-line report ending in a newline.
pub fn render_error(error: &SessionError, source: &str, origin: &str, style: &Style) -> String {
    render_message(
        &error.to_string(),
        error.span(),
        error.help(),
        source,
        origin,
        style,
    )
}

/// Characters of context shown before the span and after it; also the most
/// characters of the span itself that are shown.
const CONTEXT: usize = 60;

/// Renders a problem that is not a statement's error (e.g. invalid UTF-8 in a
/// file) the same way.
pub fn render_message(
    message: &str,
    span: Span,
    help: Option<String>,
    source: &str,
    origin: &str,
    style: &Style,
) -> String {
    // Our own symbols (`…`, `∂`) become ASCII with --ascii; the user's text stays.
    let ours = |text: &str| {
        if style.ascii {
            to_ascii(text)
        } else {
            text.to_string()
        }
    };
    let message = ours(&escape_controls(&shorten_quotes(message)));
    let window = Window::new(escape_controls(origin), source, span, style.ascii);
    let help = ours(&escape_controls(&shorten_quotes(&help.unwrap_or_default())));
    let label = Label::primary((), window.span.clone()).with_message(help);
    let diagnostic = Diagnostic::error()
        .with_message(&message)
        .with_labels(vec![label]);
    let mut config = Config::default();
    if style.ascii {
        config.chars = Chars::ascii();
    }
    let text = term::emit_into_string(&config, &window, &diagnostic)
        .unwrap_or_else(|_| format!("error: {message}\n"));
    if !style.color {
        return text;
    }
    match text.split_once('\n') {
        Some((first, rest)) => format!("{}\n{rest}", first.red().bold()),
        None => text.red().to_string(),
    }
}

/// Control characters (a newline too) written as Rust escapes (`\u{0}`), so
/// that user text in a message cannot drive the terminal.
fn escape_controls(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            escaped.extend(c.escape_debug());
        } else {
            escaped.push(c);
        }
    }
    escaped
}

/// A visible stand-in of one column for a control character (`?` when
/// `ascii`), and a space for a tab, so the caret stays under the character it
/// points at.
fn visible(c: char, ascii: bool) -> char {
    match c {
        '\t' => ' ',
        c if ascii && c.is_control() => '?',
        '\0'..='\x1f' => char::from_u32(0x2400 + c as u32).unwrap_or('?'),
        '\x7f' => '␡',
        c if c.is_control() => '?',
        c => c,
    }
}

/// The part of the line with the span's start that the report shows: at most
/// [`CONTEXT`] characters either side of the span (and of the span), with
/// control characters made visible and cut ends marked `…`. As a [`Files`] it reports the real line
/// and column numbers, so the location line and the gutter stay true.
struct Window {
    /// The origin shown in the location line.
    name: String,
    /// The shown text: one line, no newline.
    text: String,
    /// The span's bytes in `text`.
    span: Range<usize>,
    /// Bytes of the leading `…` in `text` (0 when the line is shown from its
    /// start).
    lead: usize,
    /// 1-based number of the real line.
    line_number: usize,
    /// Characters of the real line before the first shown one.
    column_offset: usize,
}

impl Window {
    /// `ascii`: `...` and `?` instead of `…` and control pictures.
    fn new(name: String, source: &str, span: Span, ascii: bool) -> Window {
        let ellipsis = if ascii { "..." } else { "…" };
        let visible = |c| visible(c, ascii);
        let start = floor_char_boundary(source, span.start.min(source.len()));
        let before = &source[..start];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line_number = before.matches('\n').count() + 1;
        let mut line_end = source[start..]
            .find('\n')
            .map_or(source.len(), |i| start + i);
        if line_end > line_start && source.as_bytes()[line_end - 1] == b'\r' {
            line_end -= 1;
        }
        let start = start.min(line_end);
        let end = floor_char_boundary(source, span.end.clamp(start, line_end));

        // The span, cut after its first CONTEXT characters.
        let shown_end = advance(source, start, end, CONTEXT);
        let span_cut = shown_end < end;
        // The context before, from the left, and after, to the right.
        let line = &source[line_start..start];
        let skipped = line.chars().count().saturating_sub(CONTEXT);
        let from = line_start
            + line
                .char_indices()
                .nth(skipped)
                .map_or(line.len(), |(i, _)| i);
        let to = if span_cut {
            shown_end
        } else {
            advance(source, end, line_end, CONTEXT)
        };

        let mut text = String::new();
        if from > line_start {
            text.push_str(ellipsis);
        }
        let lead = text.len();
        text.extend(source[from..start].chars().map(visible));
        let span_start = text.len();
        text.extend(source[start..shown_end].chars().map(visible));
        let span_end = text.len();
        text.extend(source[shown_end..to].chars().map(visible));
        if to < line_end {
            text.push_str(ellipsis);
        }
        Window {
            name,
            text,
            span: span_start..span_end,
            lead,
            line_number,
            column_offset: skipped,
        }
    }
}

/// The byte offset `count` characters after `from` in `source`, at most `limit`.
fn advance(source: &str, from: usize, limit: usize, count: usize) -> usize {
    source[from..limit]
        .char_indices()
        .nth(count)
        .map_or(limit, |(i, _)| from + i)
}

/// The largest char boundary at or before `offset`.
fn floor_char_boundary(source: &str, mut offset: usize) -> usize {
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

impl<'a> Files<'a> for Window {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, (): ()) -> Result<&'a str, files::Error> {
        Ok(&self.name)
    }

    fn source(&'a self, (): ()) -> Result<&'a str, files::Error> {
        Ok(&self.text)
    }

    fn line_index(&'a self, (): (), _byte_index: usize) -> Result<usize, files::Error> {
        Ok(0)
    }

    fn line_number(&'a self, (): (), line_index: usize) -> Result<usize, files::Error> {
        Ok(self.line_number + line_index)
    }

    fn column_number(
        &'a self,
        (): (),
        _line_index: usize,
        byte_index: usize,
    ) -> Result<usize, files::Error> {
        let byte_index = floor_char_boundary(&self.text, byte_index.min(self.text.len()));
        let shown = self
            .text
            .get(self.lead..byte_index)
            .map_or(0, |s| s.chars().count());
        Ok(self.column_offset + shown + 1)
    }

    fn line_range(&'a self, (): (), line_index: usize) -> Result<Range<usize>, files::Error> {
        if line_index == 0 {
            Ok(0..self.text.len())
        } else {
            Err(files::Error::LineTooLarge {
                given: line_index,
                max: 0,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Span, Style, render_message};

    fn render(source: &str, start: usize, end: usize, help: Option<&str>) -> String {
        render_message(
            "oops",
            Span::new(start, end),
            help.map(str::to_string),
            source,
            "-e",
            &Style::default(),
        )
    }

    /// The shown source line and the caret line under it.
    fn shown(report: &str) -> (&str, &str) {
        let lines: Vec<&str> = report.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains('^'))
            .expect("a caret line");
        (lines[at - 1], lines[at])
    }

    /// Characters of `line` before the first `^`.
    fn caret_column(line: &str) -> usize {
        line.chars().take_while(|&c| c != '^').count()
    }

    #[test]
    fn short_line_renders_as_before() {
        let report = render_message(
            "unknown name `w`",
            Span::new(4, 5),
            Some("did you mean `x`?".to_string()),
            "x + w",
            "-e",
            &Style::default(),
        );
        assert_eq!(
            report,
            "error: unknown name `w`\n  ┌─ -e:1:5\n  │\n1 │ x + w\n  │     ^ did you mean `x`?\n\n"
        );
    }

    #[test]
    fn huge_line_is_windowed_with_real_location() {
        let mut source = "1\n2\n".to_string();
        source.push_str(&"9".repeat(500_000));
        source.push_str(" + w + ");
        source.push_str(&"8".repeat(500_000));
        let start = 4 + 500_000 + 3;
        let report = render(&source, start, start + 1, Some("here"));
        assert!(report.len() < 1024, "{} bytes", report.len());
        assert!(report.contains("-e:3:500004"), "{report}");
        let (text, caret) = shown(&report);
        assert!(text.starts_with("3 │ …9"), "{text}");
        assert!(text.ends_with("8…"), "{text}");
        assert_eq!(text.chars().nth(caret_column(caret)), Some('w'), "{report}");
        assert_eq!(text.chars().filter(|&c| c == '9').count(), 57);
    }

    #[test]
    fn long_span_is_cut() {
        let source = format!("1 + {}", "7".repeat(10_000_000));
        let report = render(&source, 4, source.len(), None);
        assert!(report.len() < 1024, "{} bytes", report.len());
        assert!(report.contains("-e:1:5"), "{report}");
        let (text, caret) = shown(&report);
        assert_eq!(text, format!("1 │ 1 + {}…", "7".repeat(60)));
        assert_eq!(caret_column(caret), 8);
        assert_eq!(caret.matches('^').count(), 60);
    }

    #[test]
    fn control_characters_are_shown_as_symbols() {
        let source = "x\0\x1b[2J\t+ w";
        let report = render_message(
            "found `\0`",
            Span::new(9, 10),
            None,
            source,
            "-e",
            &Style::default(),
        );
        assert!(!report.contains('\0') && !report.contains('\x1b') && !report.contains('\t'));
        assert!(report.starts_with("error: found `\\0`\n"), "{report}");
        assert!(report.contains("-e:1:10"), "{report}");
        let (text, caret) = shown(&report);
        assert_eq!(text, "1 │ x␀␛[2J + w");
        assert_eq!(text.chars().nth(caret_column(caret)), Some('w'));
    }

    #[test]
    fn multibyte_characters_keep_the_caret_aligned() {
        let source = format!("{}é + w", "ü".repeat(100));
        let start = source.len() - 1;
        let report = render(&source, start, start + 1, None);
        assert!(report.contains("-e:1:105"), "{report}");
        let (text, caret) = shown(&report);
        assert!(text.starts_with("1 │ …ü"), "{text}");
        assert_eq!(text.chars().nth(caret_column(caret)), Some('w'));
    }

    #[test]
    fn ascii_style_uses_ascii_marks() {
        let style = Style {
            ascii: true,
            ..Style::default()
        };
        let source = format!("{}\u{1} + w", "9".repeat(100));
        let start = source.len() - 1;
        let report = render_message(
            "oops",
            Span::new(start, start + 1),
            None,
            &source,
            "-e",
            &style,
        );
        let (text, caret) = shown(&report);
        assert_eq!(text, format!("1 | ...{}? + w", "9".repeat(56)));
        assert_eq!(text.chars().nth(caret_column(caret)), Some('w'));
        assert!(report.contains("-e:1:105"), "{report}");
    }

    #[test]
    fn span_at_end_of_input_has_a_caret() {
        let report = render("2*(1+", 5, 5, Some("close it"));
        assert!(report.contains("-e:1:6"), "{report}");
        let (text, caret) = shown(&report);
        assert_eq!(text, "1 │ 2*(1+");
        assert_eq!(caret_column(caret), 9, "{report}");
        let report = render("1\n2*(1+\n", 8, 8, None);
        assert!(report.contains('^'), "{report}");
    }

    #[test]
    fn span_past_the_line_end_stops_at_it() {
        let report = render("a + (\r\nb\n", 4, 9, None);
        assert!(report.contains("-e:1:5"), "{report}");
        let (text, caret) = shown(&report);
        assert_eq!(text, "1 │ a + (");
        assert_eq!(caret_column(caret), 8);
        assert!(!report.contains('\r'));
    }
}
