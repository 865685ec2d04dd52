//! Runs a source through a session and a printer, statement by statement, the
//! same way for scripts, `-e`, piped stdin and REPL lines: it carries out
//! `:load FILE` (the session asks, the driver reads) with an explicit stack of
//! open files, a cycle check and a depth limit, and it stops at `:quit`, at an
//! error (unless told to go on) and at the first failed write to the output.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::files;
use crate::interrupt;
use crate::render::Printer;
use crate::session::{CalculusEvent, ErrorCode, Event, Session, SessionError, Target};
use crate::syntax;

/// How deep `:load` may nest (a file that loads a file that loads …).
pub const MAX_LOAD_DEPTH: usize = 32;

/// How a run ended.
#[derive(Debug)]
pub enum Outcome {
    /// Every statement ran (or failed, with `keep_going`); `failed` if any failed.
    Done { failed: bool },
    /// Stopped at an error.
    Stopped,
    /// `:quit`; `failed` if a statement failed before it.
    Quit { failed: bool },
    /// The output could not be written (a closed pipe, a full disk): nothing more
    /// can be shown, so nothing more runs.
    Output(io::Error),
    /// Ctrl-C ([`crate::interrupt`]): the statement running was undone (or its
    /// output cut short, or a `:repeat` stopped) and "interrupted" was
    /// reported, or the question about replacing a file was cancelled (Ctrl-C
    /// or Ctrl-D) and "not replaced" was reported; nothing more runs.
    Interrupted,
}

/// How to run a source.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Go on after a failed statement (`--keep-going`; the REPL always does for
    /// the lines it is typed).
    pub keep_going: bool,
    /// A failed statement in a `:load`ed file ends that load (and the loads
    /// around it), whatever `keep_going` says (the REPL's rule).
    pub loads_stop_at_error: bool,
    /// The source is a script (a FILE or piped stdin), not typed: its file
    /// writes are limited by [`Printer::writes`].
    pub script: bool,
    /// Line mode ([`run_lines`]): a statement stopped by Ctrl-C always ends
    /// with an `interrupted` error, also after a stopped `:repeat` or
    /// `:descend` has said so in its own event, so that a program driving
    /// gradcalc has one sign to look for.
    pub lines: bool,
}

/// One source being run: its text, where it came from, and how far it got.
struct Frame {
    text: String,
    origin: String,
    /// The identity of a file (device and inode), for the cycle check: the
    /// same file through a symbolic or hard link is the same file.
    file: Option<FileId>,
    statements: syntax::Cursor,
    script: bool,
    /// The byte at which the file stopped being UTF-8, and the file as shown.
    invalid: Option<(usize, String)>,
    /// How many of its statements have run.
    ran: usize,
    /// Where the last statement run starts, to find the next one's line and
    /// column without counting from the start of the text again.
    lines: Lines,
    /// Which of its statements are on a line ending in `;`.
    silenced: syntax::SilencedLines,
}

/// Line and column of increasing byte offsets into one text, in time linear
/// in the text (a script of 10⁶ statements on one line stays linear).
#[derive(Debug, Clone, Copy)]
struct Lines {
    offset: usize,
    line: usize,
    column: usize,
}

impl Default for Lines {
    fn default() -> Lines {
        Lines {
            offset: 0,
            line: 1,
            column: 1,
        }
    }
}

impl Lines {
    /// The 1-based line and column (in characters) of byte `offset` of
    /// `text`, counted on from the last offset asked (from the start when
    /// `offset` is before it).
    fn at(&mut self, text: &str, offset: usize) -> (usize, usize) {
        if offset < self.offset || !text.is_char_boundary(offset) {
            *self = Lines::default();
            return crate::render::line_column(text, offset);
        }
        for c in text[self.offset..offset].chars() {
            if c == '\n' {
                self.line += 1;
                self.column = 1;
            } else {
                self.column += 1;
            }
        }
        self.offset = offset;
        (self.line, self.column)
    }
}

impl Frame {
    /// A frame of `bytes`, decoded in place (no copy when they are UTF-8).
    fn new(bytes: Vec<u8>, origin: String, file: Option<FileId>, script: bool) -> Frame {
        let (text, invalid) = decode(bytes);
        Frame::from_text(text, invalid, origin, file, script)
    }

    /// A frame of `text`, already decoded (`invalid` as [`decode`] gives it).
    fn from_text(
        text: String,
        invalid: Option<(usize, String)>,
        origin: String,
        file: Option<FileId>,
        script: bool,
    ) -> Frame {
        let statements = syntax::Cursor::new(syntax::statement_spans(&text));
        Frame {
            text,
            origin,
            file,
            statements,
            script,
            invalid,
            ran: 0,
            lines: Lines::default(),
            silenced: syntax::SilencedLines::new(),
        }
    }
}

/// The valid UTF-8 part of `bytes` up to the last whole line (a byte-order mark
/// dropped), and where the first invalid byte is with the whole text as shown.
/// Valid UTF-8 becomes the text without a copy: a script is held once.
fn decode(mut bytes: Vec<u8>) -> (String, Option<(usize, String)>) {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    match String::from_utf8(bytes) {
        Ok(text) => (text, None),
        Err(error) => {
            let at = error.utf8_error().valid_up_to();
            let bytes = error.into_bytes();
            let cut = bytes[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            let text = String::from_utf8_lossy(&bytes[..cut]).into_owned();
            let shown = String::from_utf8_lossy(&bytes).into_owned();
            (text, Some((at, shown)))
        }
    }
}

/// Runs `bytes` (named `origin` in error reports; `file` is its path when it is
/// a file) into `session`, reporting through `printer`. The bytes are taken
/// as they are when given owned (a `Vec<u8>`): the text is held once while it
/// runs.
pub fn run<O: Write, E: Write>(
    session: &mut Session,
    printer: &mut Printer<O, E>,
    bytes: impl Into<Vec<u8>>,
    origin: &str,
    file: Option<PathBuf>,
    options: Options,
) -> Outcome {
    let file = file.and_then(|f| file_id(&f).ok());
    let frame = Frame::new(bytes.into(), origin.to_string(), file, options.script);
    run_frame(session, printer, frame, options)
}

/// Runs `frame` (with the files it `:load`s) into `session`, reporting
/// through `printer`.
fn run_frame<O: Write, E: Write>(
    session: &mut Session,
    printer: &mut Printer<O, E>,
    frame: Frame,
    options: Options,
) -> Outcome {
    // Line mode's count of lines before this source: for it, not for the
    // files it `:load`s.
    let lines_before = printer.lines_before;
    printer.end_statement();
    if interrupt::requested() {
        // Ctrl-C while the source was split into statements.
        let message = format!(
            "interrupted while reading {}; nothing of it ran",
            frame.origin
        );
        let place = (frame.text.as_str(), frame.origin.as_str());
        return match printer.problem(&message, ErrorCode::Interrupted, 0, None, place) {
            Ok(()) => Outcome::Interrupted,
            Err(error) => Outcome::Output(error),
        };
    }
    let mut stack = vec![frame];
    let mut failed = false;
    while !stack.is_empty() {
        printer.end_statement();
        printer.lines_before = if stack.len() == 1 { lines_before } else { 0 };
        let frame = stack
            .last_mut()
            .unwrap_or_else(|| unreachable!("not empty"));
        let next = frame.statements.next(&frame.text);
        if let (Some((span, _)), true) = (&next, interrupt::requested()) {
            // Ctrl-C while the statement was parsed (a long one): it did not
            // run, nor anything after it.
            let (message, help) = interrupted_reading(frame);
            let place = (frame.text.as_str(), frame.origin.as_str());
            let code = ErrorCode::Interrupted;
            return match printer.problem(&message, code, span.start, help, place) {
                Ok(()) => Outcome::Interrupted,
                Err(error) => Outcome::Output(error),
            };
        }
        let Some((span, parsed)) = next else {
            let frame = stack
                .pop()
                .unwrap_or_else(|| unreachable!("the stack is not empty"));
            if let Some((offset, shown)) = frame.invalid {
                let reported = printer.problem(
                    &format!("{} is not valid UTF-8 (byte {offset})", frame.origin),
                    ErrorCode::Encoding,
                    shown.len().min(offset),
                    Some("save the file as UTF-8".to_string()),
                    (&shown, &frame.origin),
                );
                if let Err(error) = reported {
                    return Outcome::Output(error);
                }
                failed = true;
                if let Some(outcome) = after_failure(&mut stack, options) {
                    return outcome;
                }
            }
            continue;
        };
        let ran = match run_statement(session, printer, frame, (span, parsed), options.lines) {
            Ok(ran) => ran,
            Err(outcome) => return outcome,
        };
        let mut this_failed = ran.failed;
        if ran.quit {
            return Outcome::Quit {
                failed: failed || this_failed,
            };
        }
        if let Some(target) = ran.load {
            match load(printer, &mut stack, &target) {
                Ok(load_failed) => this_failed |= load_failed,
                Err(outcome) => return outcome,
            }
        }
        if this_failed {
            failed = true;
            if let Some(outcome) = after_failure(&mut stack, options) {
                return outcome;
            }
        }
    }
    Outcome::Done { failed }
}

/// The message and help for a Ctrl-C that came while `frame`'s next statement
/// was parsed: nothing of the source ran, or the statements before it did.
fn interrupted_reading(frame: &Frame) -> (String, Option<String>) {
    match frame.ran {
        0 => (
            format!(
                "interrupted while reading {}; nothing of it ran",
                frame.origin
            ),
            None,
        ),
        ran => (
            "interrupted while reading this statement; it did not run".to_string(),
            Some(format!(
                "the {ran} statement{} of {} before it ran and are kept",
                if ran == 1 { "" } else { "s" },
                frame.origin
            )),
        ),
    }
}

/// What a statement that ran and was reported asks of the driver next.
struct Asked {
    /// It failed (an error, or a failure the printer noted).
    failed: bool,
    /// It was `:quit`.
    quit: bool,
    /// The file its `:load` names.
    load: Option<Target>,
}

/// Runs the statement `parsed` at `span` of `frame` into `session` and reports
/// it through `printer`: what it asks next, or how the run ends (a failed
/// write, a Ctrl-C, a cancelled question). In line mode (`lines`) a Ctrl-C
/// always ends with an `interrupted` error ([`Options::lines`]).
fn run_statement<O: Write, E: Write>(
    session: &mut Session,
    printer: &mut Printer<O, E>,
    frame: &mut Frame,
    (span, parsed): (syntax::Span, Result<syntax::Located, syntax::SyntaxError>),
    lines: bool,
) -> Result<Asked, Outcome> {
    printer.script = frame.script;
    session.from_script = frame.script;
    let (line, column) = frame.lines.at(&frame.text, span.start);
    let silenced = frame.silenced.at(&frame.text, span);
    printer.begin_statement(line, column, silenced);
    // A script's files are not asked about (the printer's rule), nor is
    // the file of its `:repeat`: the session's question is held meanwhile.
    let held = if frame.script {
        session.confirm.0.take()
    } else {
        None
    };
    let result = session.run_parsed(&frame.text, span, parsed);
    if interrupt::requested() {
        // The statement ended by itself after the Ctrl-C: what it kept is
        // written whole, then the run ends (`interrupt::BATCH_GRACE`).
        interrupt::notice();
    }
    if held.is_some() {
        session.confirm.0 = held;
    }
    frame.ran += 1;
    let mut load = None;
    let mut quit = false;
    let result = result.map(|events| {
        events
            .into_iter()
            .filter(|event| {
                // `:load` is carried out here, not shown; `:quit` is shown.
                if let Event::Load { target } = event {
                    load = Some(target.clone());
                    return false;
                }
                quit |= matches!(event, Event::Quit);
                true
            })
            .collect::<Vec<_>>()
    });
    // A `:repeat` or `:descend` stopped by Ctrl-C keeps its finished steps and says so in
    // its event: that answers the Ctrl-C, so its table and file are shown
    // whole (a second Ctrl-C cuts them short as any output).
    let repeat_stopped = result.as_ref().is_ok_and(|events| stopped_steps(events));
    if repeat_stopped {
        interrupt::clear();
    }
    if let Err(error) = printer.report(&result, session, &frame.text, &frame.origin) {
        return Err(Outcome::Output(error));
    }
    if printer.take_cancelled() | session.take_cancelled() {
        // A question about replacing a file was answered with Ctrl-C or
        // Ctrl-D: reported as not replaced; nothing more runs.
        return Err(Outcome::Interrupted);
    }
    if interrupt::requested() || repeat_stopped {
        let interrupted = result.as_ref().is_err_and(SessionError::is_interrupted);
        let said = (repeat_stopped && !lines) || interrupted;
        return Err(match said {
            true => Outcome::Interrupted,
            false => report_interrupt(printer, frame, span, repeat_stopped),
        });
    }
    Ok(Asked {
        failed: result.is_err() || printer.take_failure(),
        quit,
        load,
    })
}

/// Reports the Ctrl-C that came while the statement at `span` of `frame`
/// ran, when nothing said it yet: it came as the statement ended or while
/// its output was written, or (`steps_kept`, in line mode) it stopped a
/// `:repeat` or `:descend` whose event said so. Ends the run.
fn report_interrupt<O: Write, E: Write>(
    printer: &mut Printer<O, E>,
    frame: &Frame,
    span: syntax::Span,
    steps_kept: bool,
) -> Outcome {
    let help = if steps_kept {
        "by Ctrl-C: the steps done are kept (the event before says how many), and nothing after them ran"
    } else {
        "by Ctrl-C after the statement had run: it is kept, and its output may be cut short"
    };
    let place = (frame.text.as_str(), frame.origin.as_str());
    let code = ErrorCode::Interrupted;
    match printer.problem(
        "interrupted",
        code,
        span.start,
        Some(help.to_string()),
        place,
    ) {
        Ok(()) => Outcome::Interrupted,
        Err(error) => Outcome::Output(error),
    }
}

/// Whether `events` hold a `:repeat` or `:descend` stopped by Ctrl-C.
fn stopped_steps(events: &[Event]) -> bool {
    events.iter().any(|e| {
        matches!(
            e,
            Event::Calculus(
                CalculusEvent::Repeat {
                    interrupted: true,
                    ..
                } | CalculusEvent::Descent {
                    interrupted: true,
                    ..
                }
            )
        )
    })
}

/// Carries out the `:load` of `target` asked by the top of `stack`: pushes the
/// file it reads, or reports why not through `printer`. Whether the load
/// failed, or how the run ends (a failed write, a Ctrl-C).
fn load<O: Write, E: Write>(
    printer: &mut Printer<O, E>,
    stack: &mut Vec<Frame>,
    target: &Target,
) -> Result<bool, Outcome> {
    match open(stack, target) {
        Ok(next) => {
            if stack.len() > MAX_LOAD_DEPTH {
                let message = format!(
                    "cannot load {}: `:load` nested more than {MAX_LOAD_DEPTH} deep",
                    target.path
                );
                let code = ErrorCode::Load;
                report_at(printer, stack, target, message, code, None).map_err(Outcome::Output)?;
                Ok(true)
            } else if interrupt::requested() {
                // Ctrl-C while the file was read and split into statements.
                let message = format!(
                    "interrupted while reading {}; nothing of it ran",
                    target.path
                );
                let code = ErrorCode::Interrupted;
                report_at(printer, stack, target, message, code, None).map_err(Outcome::Output)?;
                Err(Outcome::Interrupted)
            } else {
                stack.push(next);
                Ok(false)
            }
        }
        Err((message, help)) => {
            let code = ErrorCode::Load;
            report_at(printer, stack, target, message, code, help).map_err(Outcome::Output)?;
            Ok(true)
        }
    }
}

/// What a failure does: stop everything (`None` means go on), or end the loads.
fn after_failure(stack: &mut Vec<Frame>, options: Options) -> Option<Outcome> {
    if !options.keep_going {
        return Some(Outcome::Stopped);
    }
    if options.loads_stop_at_error {
        stack.truncate(1);
    }
    None
}

/// Reports a `:load` problem at the file name in the statement that asked.
fn report_at<O: Write, E: Write>(
    printer: &mut Printer<O, E>,
    stack: &[Frame],
    target: &Target,
    message: String,
    code: ErrorCode,
    help: Option<String>,
) -> io::Result<()> {
    let frame = stack
        .last()
        .unwrap_or_else(|| unreachable!("a frame asked"));
    let place = (frame.text.as_str(), frame.origin.as_str());
    printer.problem(&message, code, target.span.start, help, place)
}

/// A file's identity: its device and inode (after symbolic links), so that
/// a hard link to a file being loaded is the same file.
type FileId = (u64, u64);

#[cfg(unix)]
fn file_id(path: &std::path::Path) -> io::Result<FileId> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(path)?;
    Ok((metadata.dev(), metadata.ino()))
}

/// Elsewhere (the browser build, which reads no files): a hash of the
/// canonical path, which tells symbolic links apart but not hard links.
#[cfg(not(unix))]
fn file_id(path: &std::path::Path) -> io::Result<FileId> {
    use std::hash::{Hash, Hasher};
    let canonical = std::fs::canonicalize(path)?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    canonical.hash(&mut hasher);
    Ok((0, hasher.finish()))
}

/// Why the file a `:load` names cannot be read: the OS error, or where the
/// build has no files at all (the browser), what to do instead.
fn unreadable(path: &std::path::Path, error: &io::Error) -> (String, Option<String>) {
    if error.kind() == io::ErrorKind::Unsupported {
        return (
            format!(
                "cannot read {}: the browser has no files to read",
                path.display()
            ),
            Some("type `:load` alone to pick a file, or paste the script's lines".to_string()),
        );
    }
    (format!("cannot read {}: {error}", path.display()), None)
}

/// Reads the file a `:load` names, refusing one already being loaded.
fn open(stack: &[Frame], target: &Target) -> Result<Frame, (String, Option<String>)> {
    let path = files::expand_tilde(&target.path);
    let id = file_id(&path).map_err(|e| unreadable(&path, &e))?;
    if let Some(first) = stack.iter().position(|f| f.file == Some(id)) {
        let mut chain: Vec<&str> = stack[first..].iter().map(|f| f.origin.as_str()).collect();
        chain.push(&target.path);
        return Err((
            format!(
                "cannot load {}: it is already being loaded (a cycle: {})",
                target.path,
                chain.join(" → ")
            ),
            Some("remove one of the `:load`s of the cycle".to_string()),
        ));
    }
    let bytes = files::read_source(&path).map_err(|message| (message, None))?;
    Ok(Frame::new(bytes, target.path.clone(), Some(id), true))
}

/// The most lines one statement may take in line mode: past it, the lines
/// held are run as they are (and report what is unfinished), so that an open
/// bracket never holds the input forever.
pub const MAX_STATEMENT_LINES: usize = 10_000;

/// The longest line line mode reads, and the longest statement its lines may
/// make together, in bytes (a line's newline not counted): the limit of a
/// script file, [`files::MAX_SOURCE_BYTES`] (64 MiB). A longer line is read
/// to its end without being kept and refused with a `limit` error.
// 64 MiB fits the `usize` of every target gradcalc builds for.
pub const MAX_LINE_BYTES: usize = files::MAX_SOURCE_BYTES as usize;

/// Line mode (`--lines`): runs `input` a line at a time as it arrives, for a
/// program that drives gradcalc as a kernel. Each line (with the lines after
/// it while its statement is unfinished: an open bracket, a trailing
/// operator, as the REPL reads them) is run as it comes; its events are
/// written and flushed, then [`Printer::ready`] says which line was read
/// last, before the next line is read. Line numbers are those of the whole
/// input (`origin`). A failed statement does not stop the run, as in the
/// REPL; the outcome says whether any failed. What comes back is `Done` at the
/// end of the input, `Quit` after `:quit` (and its `ready`), or `Output` when
/// the output cannot be written.
///
/// Bounded and linear: a line (or a statement of several lines) longer than
/// [`MAX_LINE_BYTES`] is read to its end, refused with a `limit` error and
/// not kept; a line that is not UTF-8 is an `encoding` error; either way the
/// statement it belongs to does not run and the next line is answered. Each
/// line is scanned once to tell whether its statement goes on
/// ([`syntax::Continuation`]).
///
/// Ctrl-C ([`crate::interrupt`]) while a line runs stops it (an `error`
/// with the code `interrupted`, then its `ready`) and keeps the session; a
/// Ctrl-C while waiting for a line is forgotten. Nothing ends the process
/// halfway through writing an event, so every event line is whole.
pub fn run_lines<O: Write, E: Write>(
    session: &mut Session,
    printer: &mut Printer<O, E>,
    input: &mut impl io::BufRead,
    origin: &str,
    options: Options,
) -> Outcome {
    let options = Options {
        keep_going: true,
        lines: true,
        ..options
    };
    let mut reader = LineReader::default();
    let mut failed = false;
    loop {
        let read = reader.next(input);
        // A Ctrl-C that came while waiting for this line stops nothing.
        interrupt::clear();
        let text = match read {
            Next::End => {
                let Some(text) = reader.take() else {
                    return Outcome::Done { failed };
                };
                printer.lines_before = reader.first;
                // The input ended inside a statement: it runs as it is and
                // reports what is unfinished.
                return match run_text(session, printer, text, origin, options) {
                    Ran::Quit(f) | Ran::Went(f) => Outcome::Done {
                        failed: failed || f,
                    },
                    Ran::Output(error) => Outcome::Output(error),
                };
            }
            Next::Pending => {
                if let Err(error) = printer.ready(reader.read, true) {
                    return Outcome::Output(error);
                }
                continue;
            }
            Next::Refused(problem) => {
                failed = true;
                let refused = reader.refused(printer, problem, origin);
                if let Err(error) = refused.and_then(|()| printer.ready(reader.read, false)) {
                    return Outcome::Output(error);
                }
                continue;
            }
            Next::Statement(text) => text,
        };
        printer.lines_before = reader.first;
        let quit = match run_text(session, printer, text, origin, options) {
            Ran::Went(f) => {
                failed |= f;
                false
            }
            Ran::Quit(f) => {
                failed |= f;
                true
            }
            Ran::Output(error) => return Outcome::Output(error),
        };
        if let Err(error) = printer.ready(reader.read, false) {
            return Outcome::Output(error);
        }
        if quit {
            return Outcome::Quit { failed };
        }
    }
}

/// How a statement run by [`run_text`] in line mode went.
enum Ran {
    /// It ran (`true` if it failed or was interrupted); the next line follows.
    Went(bool),
    /// It was `:quit` (`true` if a statement failed before it).
    Quit(bool),
    /// The output could not be written.
    Output(io::Error),
}

/// Runs the statement `text` of line mode, whose first line is
/// `printer.lines_before + 1` of `origin`.
fn run_text<O: Write, E: Write>(
    session: &mut Session,
    printer: &mut Printer<O, E>,
    text: String,
    origin: &str,
    options: Options,
) -> Ran {
    let frame = Frame::from_text(text, None, origin.to_string(), None, options.script);
    match run_frame(session, printer, frame, options) {
        Outcome::Done { failed } => Ran::Went(failed),
        Outcome::Stopped | Outcome::Interrupted => {
            // Reported (an error; after Ctrl-C, one with the code
            // `interrupted`); the session keeps what it has.
            interrupt::clear();
            Ran::Went(true)
        }
        Outcome::Quit { failed } => Ran::Quit(failed),
        Outcome::Output(error) => Ran::Output(error),
    }
}

/// What [`LineReader::next`] read.
enum Next {
    /// The input ended (or could not be read).
    End,
    /// A line that leaves its statement unfinished: it waits for the next.
    Pending,
    /// A statement to run: its lines, from [`LineReader::first`] on.
    Statement(String),
    /// A line refused, and with it the statement it belongs to.
    Refused(Refusal),
}

/// Why a line was refused.
enum Refusal {
    /// Longer than [`MAX_LINE_BYTES`] (with the lines before it in its
    /// statement): how many bytes the line had.
    TooLong(u64),
    /// Not UTF-8: the line as shown, and the byte where it stops being UTF-8.
    Encoding(String, usize),
}

/// Line mode's input: the statement being read and where it is.
#[derive(Default)]
struct LineReader {
    /// The lines read of the statement not yet run.
    pending: String,
    /// Tells whether `pending` is unfinished, scanning each line once.
    continuation: syntax::Continuation,
    /// Lines read before the first of `pending`.
    first: usize,
    /// Lines read in all.
    read: usize,
}

impl LineReader {
    /// Reads the next line of `input`.
    fn next(&mut self, input: &mut impl io::BufRead) -> Next {
        if self.pending.is_empty() {
            self.first = self.read;
        }
        let mut bytes = Vec::new();
        let limit = MAX_LINE_BYTES.saturating_sub(self.pending.len());
        let length = match read_line(input, &mut bytes, limit) {
            Ok(Line::End) | Err(_) => return Next::End,
            Ok(Line::Read) => None,
            Ok(Line::TooLong(length)) => Some(length),
        };
        self.read += 1;
        if let Some(length) = length {
            return Next::Refused(Refusal::TooLong(length));
        }
        let start = self.pending.len();
        match String::from_utf8(bytes) {
            Ok(line) if start == 0 => self.pending = line,
            Ok(line) => self.pending.push_str(&line),
            Err(error) => {
                let at = error.utf8_error().valid_up_to();
                let shown = String::from_utf8_lossy(error.as_bytes()).into_owned();
                return Next::Refused(Refusal::Encoding(shown, at));
            }
        }
        let unfinished = self.continuation.push(&self.pending[start..]);
        if unfinished && self.read - self.first < MAX_STATEMENT_LINES {
            return Next::Pending;
        }
        Next::Statement(self.take().unwrap_or_default())
    }

    /// The statement read so far, if any, to run (its first line is the one
    /// after [`LineReader::first`]); the reading starts again.
    fn take(&mut self) -> Option<String> {
        self.continuation.reset();
        Some(std::mem::take(&mut self.pending)).filter(|text| !text.is_empty())
    }

    /// Reports `refusal` of the last line read, and drops the statement it
    /// belongs to.
    fn refused<O: Write, E: Write>(
        &mut self,
        printer: &mut Printer<O, E>,
        refusal: Refusal,
        origin: &str,
    ) -> io::Result<()> {
        let held = self.read - 1 - self.first;
        self.pending = String::new();
        self.continuation.reset();
        printer.end_statement();
        printer.lines_before = self.read - 1;
        let line = self.read;
        let with = match held {
            0 => String::new(),
            1 => "; the line before it, which it goes on, did not run either".to_string(),
            n => format!("; the {n} lines before it, which it goes on, did not run either"),
        };
        match refusal {
            Refusal::TooLong(length) => {
                let mib = MAX_LINE_BYTES / (1024 * 1024);
                let message = if held == 0 {
                    format!(
                        "line {line} of {origin} is longer than {mib} MiB ({length} bytes), the limit for a script; it did not run"
                    )
                } else {
                    format!(
                        "the statement ending at line {line} of {origin} is longer than {mib} MiB, the limit for a script; it did not run"
                    )
                };
                let help = format!(
                    "cut it into statements of their own (a long sum into partial sums){with}"
                );
                printer.problem(&message, ErrorCode::Limit, 0, Some(help), ("", origin))
            }
            Refusal::Encoding(shown, at) => {
                let message = format!("line {line} of {origin} is not valid UTF-8");
                let help = format!("send UTF-8 text{with}");
                printer.problem(
                    &message,
                    ErrorCode::Encoding,
                    at,
                    Some(help),
                    (&shown, origin),
                )
            }
        }
    }
}

/// What [`read_line`] read.
enum Line {
    /// Nothing: the input has ended.
    End,
    /// A line, its newline included (the last line of the input may have none).
    Read,
    /// A line longer than the limit: read to its end and dropped; its length
    /// without its newline.
    TooLong(u64),
}

/// Reads one line of `input` into `line` (emptied first), keeping at most
/// `limit` bytes of it besides its newline: a longer line is read to its end
/// and dropped, so that no input, however long, takes more memory than the
/// limit and the input's own buffer.
///
/// Errors: those of `input` (an interrupted read is tried again).
fn read_line(input: &mut impl io::BufRead, line: &mut Vec<u8>, limit: usize) -> io::Result<Line> {
    line.clear();
    let (mut length, mut too_long) = (0u64, false);
    loop {
        let buffer = match input.fill_buf() {
            Ok(buffer) => buffer,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if buffer.is_empty() {
            break;
        }
        let newline = buffer.iter().position(|&b| b == b'\n');
        let taken = newline.map_or(buffer.len(), |at| at + 1);
        let text = taken - usize::from(newline.is_some());
        if !too_long {
            if line.len() + text > limit {
                too_long = true;
                *line = Vec::new();
            } else {
                line.extend_from_slice(&buffer[..taken]);
            }
        }
        length += text as u64;
        input.consume(taken);
        if newline.is_some() {
            break;
        }
    }
    Ok(match (length, too_long) {
        (0, _) if line.is_empty() => Line::End,
        (_, false) => Line::Read,
        (length, true) => Line::TooLong(length),
    })
}
