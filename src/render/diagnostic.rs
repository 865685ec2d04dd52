//! Error reports: the message, the line, a caret under the column, and the fix.
//! Drawn by `codespan-reporting`.

use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Chars, Config};
use owo_colors::OwoColorize;

use super::Style;
use crate::session::SessionError;
use crate::syntax::Span;

/// Renders `error`, which happened in `source` (shown as `origin`: a file name,
/// `-e`, `<stdin>` or `<input>`), as a multi-line report ending in a newline.
pub fn render_error(error: &SessionError, source: &str, origin: &str, style: &Style) -> String {
    render(
        Diagnostic::error(),
        &error.to_string(),
        error.span(),
        error.help(),
        source,
        origin,
        style,
    )
}

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
    render(
        Diagnostic::error(),
        message,
        span,
        help,
        source,
        origin,
        style,
    )
}

fn render(
    diagnostic: Diagnostic<()>,
    message: &str,
    span: Span,
    help: Option<String>,
    source: &str,
    origin: &str,
    style: &Style,
) -> String {
    let file = SimpleFile::new(origin, source);
    let start = span.start.min(source.len());
    let end = span.end.clamp(start, source.len());
    let label = Label::primary((), start..end).with_message(help.unwrap_or_default());
    let diagnostic = diagnostic.with_message(message).with_labels(vec![label]);
    let mut config = Config::default();
    if style.ascii {
        config.chars = Chars::ascii();
    }
    let text = term::emit_into_string(&config, &file, &diagnostic)
        .unwrap_or_else(|_| format!("error: {message}\n"));
    if !style.color {
        return text;
    }
    match text.split_once('\n') {
        Some((first, rest)) => format!("{}\n{rest}", first.red().bold()),
        None => text.red().to_string(),
    }
}
