//! Writes a statement's events or error to the output streams in the chosen format.

use std::io::{self, Write};

use super::{Precision, Style, diagnostic, dot, html, json, plot, text};
use crate::files::{self, WritePolicy};
use crate::session::event::{listing_events, plain_events};
use crate::session::{
    CalculusEvent, ErrorCode, Event, PictureFormat, Session, SessionError, TableFormat, Target,
};
pub use json::StatementPlace;

/// Human text (with a style) or JSON Lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Lines for people; errors go to stderr.
    Human(Style),
    /// One JSON object per line on stdout, errors included (docs/json.md).
    Json,
}

pub use crate::session::{Answer, Confirm};

/// Shows an event some other way than the format would (see [`Printer::show`]):
/// true when it did.
pub type Show = Box<dyn FnMut(&Event, &Session) -> bool>;

/// Draws the chart of a `:repeat` or `:descend` where the text has none
/// ([`Style::charts`] false): called after the event's table is written,
/// with the title (the output's or the loss's name) and the values from step
/// 0 (nan where a step has none).
pub type Chart = Box<dyn FnMut(&str, &[f64])>;

/// Renders results to `out` (events) and `err` (human-format errors), and writes
/// the files commands ask for (see [`crate::files`] for how).
pub struct Printer<O: Write, E: Write> {
    /// How to render.
    pub format: Format,
    /// The style's [`Style::width`] was given (`--width N`): the REPL keeps
    /// it rather than following the terminal's width.
    pub width_given: bool,
    /// Wrap human lines longer than this many columns (the terminal's width), so
    /// long traces stay readable when projected. `None`: never wrap.
    pub width: Option<usize>,
    out: O,
    err: E,
    /// Where scripts may write (the command line's `--allow-writes…`).
    pub writes: WritePolicy,
    /// The statements being run come from a script (a FILE, piped stdin or a
    /// `:load`ed file): their files must be where [`Printer::writes`] allows.
    pub script: bool,
    /// In the REPL: asked before an existing file is replaced. Without it, an
    /// existing file is replaced only when the command says `-f`.
    pub confirm: Option<Confirm>,
    /// Human output only: warnings and notices go to `err`, so that `out` holds
    /// the results alone (batch runs). The REPL shows them in line, on `out`.
    pub notes_to_err: bool,
    /// Asked first with each event of a statement and the session that ran
    /// it; when it returns true the event has been shown its own way (the
    /// Python package's notebook cells show a picture in place), and nothing
    /// is written or rendered for it. `None`: every event goes to the format.
    pub show: Option<Show>,
    /// Draws the charts of `:repeat` and `:descend` when the style leaves
    /// them out of the text ([`Chart`]).
    pub chart: Option<Chart>,
    /// A file could not be written since the last [`Printer::take_failure`].
    failed: bool,
    /// The question about replacing a file was cancelled since the last
    /// [`Printer::take_cancelled`].
    cancelled: bool,
    /// The buffer value lines are formatted in (reused).
    line: String,
    /// The statement whose events are being written (JSON's `from`),
    /// set by [`Printer::begin_statement`].
    statement: Option<StatementPlace>,
    /// How many statements have begun: the number of the last one.
    statements: usize,
    /// Lines of the origin before the source being run (line mode), added
    /// to the line numbers of the JSON output.
    pub lines_before: usize,
    /// The browser (the playground): files are not written but kept here, as
    /// (file name, content), for the page to download; the reply says so.
    /// `None` everywhere else.
    pub downloads: Option<Vec<(String, String)>>,
    /// Human output only: given the JSON object (docs/json.md, one line) of
    /// each error after its text is written, for a host that shows the text
    /// and needs the error's fields (its `code`): the Python package's
    /// notebook cells. `None` everywhere else.
    pub error_events: Option<ErrorEvents>,
}

/// Takes the JSON object of an error the human format wrote (see
/// [`Printer::error_events`]).
pub type ErrorEvents = Box<dyn FnMut(&str)>;

impl<O: Write, E: Write> Printer<O, E> {
    /// A printer writing events to `out` and human-format errors to `err`.
    pub fn new(format: Format, out: O, err: E) -> Self {
        Printer {
            format,
            width_given: false,
            width: None,
            out,
            err,
            writes: WritePolicy::default(),
            script: false,
            confirm: None,
            notes_to_err: false,
            show: None,
            chart: None,
            failed: false,
            cancelled: false,
            line: String::new(),
            statement: None,
            statements: 0,
            lines_before: 0,
            downloads: None,
            error_events: None,
        }
    }

    /// Says that the events and errors written next come from a new
    /// statement, whose text starts at `line` and `column` (1-based) of its
    /// source: JSON gives each of them a `from` with its number (1 for
    /// the first one of the run) and place (docs/json.md). A `silenced`
    /// statement (its line ends in `;`, docs/language.md §1) shows only its
    /// warnings, notices and errors in the human formats (its files are
    /// still written); JSON writes all its events, marked `"silenced": true`.
    pub fn begin_statement(&mut self, line: usize, column: usize, silenced: bool) {
        self.statements += 1;
        self.statement = Some(StatementPlace {
            number: self.statements,
            line,
            column,
            silenced,
        });
    }

    /// True when the statement being reported is silenced and `event` is
    /// not shown for it in the human formats: everything but warnings and
    /// notices (errors are not events, and are always shown).
    fn silences(&self, event: &Event) -> bool {
        self.silenced() && !matches!(event, Event::Warning { .. } | Event::Notice(_))
    }

    /// True when the statement being reported is silenced and the format
    /// is a human one (see [`Printer::begin_statement`]).
    fn silenced(&self) -> bool {
        matches!(self.format, Format::Human(_)) && self.statement.is_some_and(|s| s.silenced)
    }

    /// Says that what is written next comes from no statement (an error
    /// about a whole source).
    pub fn end_statement(&mut self) {
        self.statement = None;
    }

    /// Where the JSON being written comes from.
    fn place<'a>(&self, source: &'a str, origin: &'a str) -> json::Place<'a> {
        json::Place {
            source,
            origin,
            lines_before: self.lines_before,
            statement: self.statement,
        }
    }

    /// Gives [`Printer::error_events`], if set, the JSON object `object`
    /// makes of an error at the current statement's place.
    fn error_event(
        &mut self,
        source: &str,
        origin: &str,
        object: impl FnOnce(&json::Place<'_>) -> serde_json::Value,
    ) {
        if self.error_events.is_some() {
            let line = object(&self.place(source, origin)).to_string();
            if let Some(events) = self.error_events.as_mut() {
                events(&line);
            }
        }
    }

    /// Writes one statement's result. `session` is the session that ran it
    /// (a listing's rows are made from it while they are written: report a
    /// result before the session runs its next statement); `source` is the text
    /// it came from and `origin` names that text in error reports (`-e`,
    /// `<stdin>`, a file name).
    ///
    /// Errors: only I/O errors of the streams (a closed pipe).
    pub fn report(
        &mut self,
        result: &Result<Vec<Event>, SessionError>,
        session: &Session,
        source: &str,
        origin: &str,
    ) -> io::Result<()> {
        match result {
            Ok(events) => {
                // The pictures of `--steps`: after one fails, the rest are not tried.
                let mut skipped: Option<(usize, usize)> = None;
                for event in events {
                    if crate::interrupt::requested() {
                        break; // Ctrl-C: the driver says "interrupted"
                    }
                    if let (false, Some(show)) = (self.silenced(), &mut self.show)
                        && show(event, session)
                    {
                        continue;
                    }
                    let step_picture = matches!(
                        event,
                        Event::Picture { picture, target: Some(_), .. } if picture.step.is_some()
                    );
                    if let (true, Some((count, _))) = (step_picture, &mut skipped) {
                        *count += 1;
                        continue;
                    }
                    match self.file_of(event, session) {
                        Some((target, what, content)) => {
                            let saved = if let Event::Save { statements, .. } = event {
                                Some(*statements)
                            } else {
                                None
                            };
                            let failed_before = std::mem::take(&mut self.failed);
                            self.write_file(
                                target,
                                (what, content),
                                saved,
                                session,
                                source,
                                origin,
                            )?;
                            if step_picture && self.failed {
                                skipped = Some((0, target.span.start));
                            }
                            if matches!(
                                event,
                                Event::Calculus(
                                    CalculusEvent::Repeat { .. } | CalculusEvent::Descent { .. }
                                )
                            ) {
                                self.event(event, session, source, origin)?; // the table, beside the file
                            }
                            self.failed |= failed_before;
                        }
                        None => self.event(event, session, source, origin)?,
                    }
                }
                match skipped {
                    Some((count, at)) if count > 0 => {
                        let s = if count == 1 { "" } else { "s" };
                        let message = format!("{count} more picture{s} of the steps not written");
                        self.problem(&message, ErrorCode::Write, at, None, (source, origin))
                    }
                    _ => Ok(()),
                }
            }
            Err(error) => self.error(error, source, origin),
        }
    }

    /// Writes one event of a statement `session` ran (see [`Printer::report`]).
    /// [`Event::Precision`] also sets the precision of the human output that
    /// follows. A listing is written as its rows are made, in pieces, so that
    /// they exist one at a time; after Ctrl-C ([`crate::interrupt`]) it stops
    /// early. `source` is the statement's text and `origin` its name (`-e`, a
    /// file, `<input>` for the REPL's line), which a warning names.
    pub fn event(
        &mut self,
        event: &Event,
        session: &Session,
        source: &str,
        origin: &str,
    ) -> io::Result<()> {
        if let (Event::Precision { digits }, Format::Human(style)) = (event, &mut self.format) {
            style.precision = digits.map_or(Precision::Full, Precision::Digits);
        }
        if self.silences(event) {
            return Ok(());
        }
        match self.format {
            Format::Human(style) => {
                if let Event::Value {
                    name,
                    value: crate::session::Value::Number(value),
                } = event
                    && !style.color
                    && self.width.is_none()
                    && (!style.ascii || name.as_deref().is_none_or(str::is_ascii))
                {
                    // The commonest line, straight into one reused buffer.
                    self.line.clear();
                    text::plain_value_line(
                        &mut self.line,
                        name.as_deref(),
                        value.0,
                        style.precision,
                    );
                    return self.out.write_all(self.line.as_bytes());
                }
                if self.notes_to_err
                    && matches!(event, Event::Warning { .. } | Event::Notice { .. })
                {
                    let text = text::render_event(event, session, source, origin, &style);
                    // In order with the results written so far.
                    self.out.flush()?;
                    self.err.write_all(text.as_bytes())?;
                    return self.err.flush();
                }
                // Tables and DOT are text to copy: a wrapped row is a broken row.
                let copied = matches!(event, Event::TraceTable { .. } | Event::Picture { .. });
                let width = self.width.filter(|_| !copied);
                let (out, mut written) = (&mut self.out, Ok(()));
                text::write_event(event, session, source, origin, &style, &mut |piece| {
                    written = match width {
                        Some(width) => write_polled(out, wrap(piece, width).as_bytes()),
                        None => write_polled(out, piece.as_bytes()),
                    };
                    written.is_ok() && !crate::interrupt::requested()
                });
                if let (false, Some(chart), Some((title, values))) =
                    (style.charts, self.chart.as_mut(), chart_of(event))
                {
                    chart(&title, &values);
                }
                written
            }
            Format::Json => {
                let place = self.place(source, origin);
                json::write_event(&mut self.out, event, session, &place)
            }
        }
    }

    /// Writes one statement's error.
    pub fn error(&mut self, error: &SessionError, source: &str, origin: &str) -> io::Result<()> {
        match self.format {
            Format::Human(style) => {
                // The error is shown even when the output cannot be flushed (a
                // full disk); that failure is returned after it.
                let flushed = self.out.flush();
                self.err.write_all(
                    diagnostic::render_error(error, source, origin, &style).as_bytes(),
                )?;
                self.err.flush()?;
                self.error_event(source, origin, |place| json::error(error, place));
                flushed
            }
            Format::Json => {
                let place = self.place(source, origin);
                writeln!(self.out, "{}", json::error(error, &place))
            }
        }
    }

    /// Writes an error that the session did not return (a file not written,
    /// unreadable input, Ctrl-C): `message` with its `code`, at byte `offset`
    /// of `source` (named `origin`), with an optional fix.
    pub fn problem(
        &mut self,
        message: &str,
        code: ErrorCode,
        offset: usize,
        help: Option<String>,
        (source, origin): (&str, &str),
    ) -> io::Result<()> {
        match self.format {
            Format::Human(style) => {
                let flushed = self.out.flush();
                let span = crate::syntax::Span::new(offset, offset);
                let text =
                    diagnostic::render_message(message, span, help.clone(), source, origin, &style);
                self.err.write_all(text.as_bytes())?;
                self.err.flush()?;
                self.error_event(source, origin, |place| {
                    json::message(message, code, offset, help, place)
                });
                flushed
            }
            Format::Json => {
                let place = self.place(source, origin);
                let object = json::message(message, code, offset, help, &place);
                writeln!(self.out, "{object}")
            }
        }
    }

    /// True once if a file that a command asked for (`:dot FILE`, `:svg FILE`,
    /// `:trace md FILE`, `:plot … FILE.svg`) could not be written since the last
    /// call; the error has been reported. Batch modes count it as a failed statement.
    pub fn take_failure(&mut self) -> bool {
        std::mem::take(&mut self.failed)
    }

    /// True once if the question whether to replace a file was cancelled
    /// (Ctrl-C or Ctrl-D at it, [`Answer::Cancelled`]) since the last call: the
    /// file was kept and that was reported; the rest of the input must not run.
    pub fn take_cancelled(&mut self) -> bool {
        std::mem::take(&mut self.cancelled)
    }

    /// The style of a written page: the terminal's, or the default under `--json`.
    fn page_style(&self) -> Style {
        match self.format {
            Format::Human(style) => style,
            Format::Json => Style::default(),
        }
    }

    /// The file an event asks to write, what it holds, and its content rendered
    /// (an error message if it cannot be rendered); `None` for other events.
    fn file_of<'e>(
        &self,
        event: &'e Event,
        session: &Session,
    ) -> Option<(&'e Target, &'static str, Result<String, String>)> {
        let precision = match self.format {
            Format::Human(style) => style.precision,
            Format::Json => Precision::Full,
        };
        match event {
            Event::Picture {
                picture,
                format,
                target: Some(target),
            } => Some(match format {
                PictureFormat::Dot => (target, "the graph as DOT", Ok(dot::dot(picture))),
                PictureFormat::Svg => (target, "the graph as SVG", Ok(dot::svg(picture))),
            }),
            Event::Page {
                page,
                target: Some(target),
            } => Some((
                target,
                "the graph as a web page",
                Ok(html::page(page, &self.page_style())),
            )),
            Event::TraceTable {
                target: Some(target),
                ..
            } => {
                let (format, table) = text::table_text(event, session, precision)?;
                Some((target, table_what(format), Ok(table)))
            }
            Event::Save { script, target, .. } => Some((
                target,
                "the session's statements as a script",
                Ok(script.clone()),
            )),
            Event::Plot {
                of,
                wrt,
                at,
                samples,
                target: Some(target),
            } => Some((
                target,
                "the plot as SVG",
                Ok(plot::svg(of, wrt, at.0, samples)),
            )),
            Event::Calculus(CalculusEvent::Repeat {
                of: Some(of),
                outputs,
                target: Some(target),
                ..
            }) => Some((
                target,
                "the output over the steps as SVG",
                Ok(super::series::svg(
                    of,
                    &outputs
                        .iter()
                        .map(|o| o.map_or(f64::NAN, f64::from))
                        .collect::<Vec<_>>(),
                )),
            )),
            Event::Calculus(CalculusEvent::Descent {
                of,
                losses,
                target: Some(target),
                ..
            }) => Some((
                target,
                "the loss over the steps as SVG",
                Ok(super::series::svg(
                    of,
                    &losses.iter().map(|&l| f64::from(l)).collect::<Vec<_>>(),
                )),
            )),
            // No file: shown in the terminal, or nothing to write.
            Event::Picture { target: None, .. }
            | Event::Page { target: None, .. }
            | Event::TraceTable { target: None, .. }
            | Event::Plot { target: None, .. }
            | Event::Calculus(
                CalculusEvent::Repeat { .. }
                | CalculusEvent::Updated { .. }
                | CalculusEvent::Moved { .. }
                | CalculusEvent::Descent { .. }
                | CalculusEvent::Hessian { .. }
                | CalculusEvent::Diff { .. },
            ) => None,
            // Nothing to write (`:load` is carried out by the driver).
            plain_events!() | Event::Load { .. } | listing_events!() => None,
        }
    }

    /// A file's `content` written to standard output (the target `-`): as
    /// it is, ending in a newline, or as a JSON `output` event naming `what`.
    fn write_to_stdout(
        &mut self,
        what: &'static str,
        content: &str,
        place: &json::Place<'_>,
    ) -> io::Result<()> {
        match self.format {
            Format::Human(_) if self.silenced() => Ok(()),
            Format::Human(_) => {
                self.out.write_all(content.as_bytes())?;
                if !content.ends_with('\n') {
                    self.out.write_all(b"\n")?;
                }
                Ok(())
            }
            Format::Json => {
                let output =
                    serde_json::json!({"kind": "output", "what": what, "content": content});
                writeln!(self.out, "{}", json::placed(output, place))
            }
        }
    }

    /// Reports that a write to `target` is not allowed (file writes are off,
    /// or a script writes outside its places: [`WritePolicy::refusal`]) as an
    /// error at the file name of the statement in `source` from `origin`, and
    /// remembers the failure.
    ///
    /// Errors: only I/O errors of the streams.
    fn refuse_write(
        &mut self,
        (message, help): (String, Option<String>),
        target: &Target,
        source: &str,
        origin: &str,
    ) -> io::Result<()> {
        self.failed = true;
        self.problem(
            &message,
            ErrorCode::Write,
            target.span.start,
            help,
            (source, origin),
        )
    }

    /// The browser's [`Printer::write_file`]: keeps the file in
    /// [`Printer::downloads`] for the page to download, and says so (`:save`
    /// with how to replay it).
    ///
    /// Errors: only I/O errors of the streams.
    fn download(
        &mut self,
        target: &Target,
        what: &'static str,
        content: String,
        saved: Option<usize>,
        (session, source, origin): (&Session, &str, &str),
    ) -> io::Result<()> {
        let file = &target.path;
        let bytes = content.len();
        if let Some(downloads) = &mut self.downloads {
            downloads.push((file.clone(), content));
        }
        match (self.format, saved) {
            (Format::Human(_), Some(count)) => {
                let s = if count == 1 { "" } else { "s" };
                writeln!(
                    self.out,
                    "saved {count} statement{s} to {file} (downloaded); `:load` picks it to replay it"
                )
            }
            (Format::Human(_), None) => writeln!(
                self.out,
                "{what} downloaded as {file} ({bytes} bytes); `-` instead of the file name shows it here"
            ),
            (Format::Json, _) => {
                let wrote = Event::Wrote {
                    path: file.clone(),
                    bytes,
                    what,
                };
                self.event(&wrote, session, source, origin)
            }
        }
    }

    /// Writes `content` to the target's file and reports it, or reports why not
    /// as an error pointing at the file name (and remembers the failure). The
    /// target `-` is standard output: the content goes there in order with the
    /// rest (in JSON, as an `output` object). `saved`: the statement count of a
    /// `:save`, whose human reply says how to replay the file.
    ///
    /// Errors: only I/O errors of the streams.
    fn write_file(
        &mut self,
        target: &Target,
        (what, content): (&'static str, Result<String, String>),
        saved: Option<usize>,
        session: &Session,
        source: &str,
        origin: &str,
    ) -> io::Result<()> {
        let content = match content {
            Ok(content) => content,
            Err(message) => {
                self.failed = true;
                let at = target.span.start;
                return self.problem(&message, ErrorCode::Write, at, None, (source, origin));
            }
        };
        if target.path == "-" {
            let place = self.place(source, origin);
            return self.write_to_stdout(what, &content, &place);
        }
        if self.downloads.is_some() {
            return self.download(target, what, content, saved, (session, source, origin));
        }
        let path = files::expand_tilde(&target.path);
        let shown = path.display().to_string();
        if let Some(refusal) = self.writes.refusal(&path, &shown, self.script) {
            return self.refuse_write(refusal, target, source, origin);
        }
        let mut written = files::write_whole(&path, content.as_bytes(), target.force);
        if let (Err(error), false) = (&written, self.script)
            && error.kind() == io::ErrorKind::AlreadyExists
        {
            self.out.flush()?;
            // After a cancelled question (`--steps`), the next files are not asked about.
            let answer = match &mut self.confirm {
                Some(_) if self.cancelled => Some(Answer::Cancelled),
                Some(confirm) => Some(confirm(&shown)),
                None => None,
            };
            match answer {
                Some(Answer::Yes) => {
                    written = files::write_whole(&path, content.as_bytes(), true);
                }
                Some(Answer::Cancelled) => {
                    self.failed = true;
                    self.cancelled = true;
                    return self.problem(
                        &format!(
                            "{shown} not replaced: the question was cancelled{}",
                            steps_kept(target)
                        ),
                        ErrorCode::Write,
                        target.span.start,
                        Some(force_hint(target)),
                        (source, origin),
                    );
                }
                Some(Answer::No) | None => {}
            }
        }
        match written {
            Ok(()) => {
                let wrote = Event::Wrote {
                    path: shown.clone(),
                    bytes: content.len(),
                    what,
                };
                match (self.format, saved) {
                    (Format::Human(_), Some(_)) if self.silenced() => Ok(()),
                    (Format::Human(_), Some(count)) => {
                        let s = if count == 1 { "" } else { "s" };
                        // Quoted where a space would split the name when
                        // typed back (`:load "my lesson.calc"`), or a
                        // leading `-` would read as an option (`:load "-f"`,
                        // `gradcalc ./-f`).
                        let file = &target.path;
                        let load = if file.contains(char::is_whitespace) || file.starts_with('-') {
                            format!("\"{file}\"")
                        } else {
                            file.clone()
                        };
                        let path = if file.starts_with('-') {
                            format!("./{file}")
                        } else {
                            file.clone()
                        };
                        let shell = if path.contains(char::is_whitespace) {
                            format!("'{}'", path.replace('\'', "'\\''"))
                        } else {
                            path
                        };
                        writeln!(
                            self.out,
                            "saved {count} statement{s} to {shown}; `:load {load}` or `gradcalc {shell}` replays them"
                        )
                    }
                    _ => self.event(&wrote, session, source, origin),
                }
            }
            Err(error) => {
                self.failed = true;
                let (message, help) = explain_write_error(&shown, &error, target);
                let at = target.span.start;
                self.problem(&message, ErrorCode::Write, at, help, (source, origin))
            }
        }
    }

    /// Line mode ([`crate::driver::run_lines`]): says that everything of the
    /// lines read so far has been written, `line` being the last one read,
    /// and flushes. In JSON, the event `{"kind": "ready", "line": N,
    /// "pending": P}`: `pending` is true when the line left a statement
    /// unfinished (an open bracket) and the next line goes on with it. Human
    /// output writes nothing here.
    ///
    /// Errors: those of the output stream.
    pub fn ready(&mut self, line: usize, pending: bool) -> io::Result<()> {
        if self.format == Format::Json {
            let ready = serde_json::json!({"kind": "ready", "line": line, "pending": pending});
            writeln!(self.out, "{ready}")?;
        }
        self.flush()
    }

    /// Writes a plain line to the event stream (the REPL's banner).
    pub fn line(&mut self, text: &str) -> io::Result<()> {
        writeln!(self.out, "{text}")
    }

    /// Writes `text` as it is to the event stream (a terminal control sequence
    /// of the REPL).
    pub fn raw(&mut self, text: &str) -> io::Result<()> {
        self.out.write_all(text.as_bytes())
    }

    /// The two streams, giving the printer up (tests and the fuzzer read what
    /// was written).
    pub fn into_streams(self) -> (O, E) {
        (self.out, self.err)
    }

    /// Flushes both streams.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()?;
        self.err.flush()
    }
}

/// What a `:trace md|tex FILE` writes, for the `wrote … to FILE` line.
fn table_what(format: TableFormat) -> &'static str {
    match format {
        TableFormat::Markdown => "the backward pass as a Markdown table",
        TableFormat::Latex => "the backward pass as a LaTeX table",
    }
}

/// Writes `bytes` in pieces of 64 KiB, stopping early after Ctrl-C
/// ([`crate::interrupt`]): a long listing to a slow terminal stops within a
/// piece's time, and the driver then reports "interrupted".
fn write_polled(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    for piece in bytes.chunks(64 * 1024) {
        if crate::interrupt::requested() {
            return Ok(());
        }
        out.write_all(piece)?;
    }
    Ok(())
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

/// How many columns `text` takes on a terminal: its characters without the
/// ANSI escape sequences (colour codes take none), as [`wrap`] counts them.
pub(crate) fn visible_columns(text: &str) -> usize {
    let mut columns = 0;
    let mut in_escape = false;
    for c in text.chars() {
        if in_escape {
            in_escape = !c.is_ascii_alphabetic();
        } else if c == '\u{1b}' {
            in_escape = true;
        } else {
            columns += 1;
        }
    }
    columns
}

/// What to type to replace the target's file: its command with `-f`.
/// A command too long to quote whole ([`super::COMMAND_QUOTE_CHARS`]) is
/// described instead: a cut command could not be typed as shown.
fn force_hint(target: &Target) -> String {
    match target.forced.as_str() {
        "" => "add `-f` to the command to replace it, or choose another name".to_string(),
        forced if forced.chars().nth(super::COMMAND_QUOTE_CHARS).is_some() => {
            if target.steps_kept {
                "add `-f` after the step count to replace it, or choose another name".to_string()
            } else {
                "add `-f` before the file name to replace it, or choose another name".to_string()
            }
        }
        forced => format!("add `-f` to replace it: `{forced}`; or choose another name"),
    }
}

/// What became of a `:repeat`'s steps when its file was not written: they ran
/// before the file was written, and they are kept.
fn steps_kept(target: &Target) -> &'static str {
    if target.steps_kept {
        "; the steps ran and are kept"
    } else {
        ""
    }
}

/// Why a file could not be written, and what to do about it: as
/// [`files::explain_write_error`], and for a file that exists, how to
/// replace it with this command.
fn explain_write_error(path: &str, error: &io::Error, target: &Target) -> (String, Option<String>) {
    match error.kind() {
        io::ErrorKind::AlreadyExists => (
            format!(
                "cannot write {path}: it already exists (not replaced){}",
                steps_kept(target)
            ),
            Some(force_hint(target)),
        ),
        _ => files::explain_write_error(path, error),
    }
}

/// The chart a `:repeat` (of an output, without a file) or a `:descend`
/// draws: its title and values from step 0 (nan where a step has none).
fn chart_of(event: &Event) -> Option<(String, Vec<f64>)> {
    match event {
        Event::Calculus(CalculusEvent::Repeat {
            of: Some(of),
            outputs,
            target: None,
            ..
        }) if outputs.len() > 1 => Some((
            of.clone(),
            outputs
                .iter()
                .map(|o| o.map_or(f64::NAN, f64::from))
                .collect::<Vec<f64>>(),
        )),
        Event::Calculus(CalculusEvent::Descent { of, losses, .. }) if losses.len() > 1 => Some((
            of.clone(),
            losses.iter().map(|&l| l.0).collect::<Vec<f64>>(),
        )),
        _ => None,
    }
    .filter(|(_, values)| values.iter().any(|v| v.is_finite()))
}

#[cfg(test)]
mod tests {
    use super::{explain_write_error, wrap};
    use crate::session::Target;
    use crate::syntax::Span;
    use std::io;

    #[test]
    fn a_file_refused_after_the_steps_says_they_are_kept() {
        let exists = io::Error::from(io::ErrorKind::AlreadyExists);
        let long = format!(":repeat 3 -f r.svg x := x{}", " + 0".repeat(60));
        let mut target = Target {
            path: "r.svg".to_string(),
            span: Span::default(),
            force: false,
            forced: long.clone(),
            steps_kept: true,
        };
        let (message, help) = explain_write_error("r.svg", &exists, &target);
        assert!(
            message.ends_with("; the steps ran and are kept"),
            "{message}"
        );
        assert!(help.unwrap().contains("after the step count"));
        // What the event says counts, not how the command reads.
        target.steps_kept = false;
        let (message, help) = explain_write_error("r.svg", &exists, &target);
        assert!(message.ends_with("(not replaced)"), "{message}");
        assert!(help.unwrap().contains("before the file name"));
    }

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
