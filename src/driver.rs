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
    fn new(bytes: &[u8], origin: String, file: Option<FileId>, script: bool) -> Frame {
        let (text, invalid) = decode(bytes);
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
        }
    }
}

/// The valid UTF-8 part of `bytes` up to the last whole line (a byte-order mark
/// dropped), and where the first invalid byte is with the whole text as shown.
fn decode(bytes: &[u8]) -> (String, Option<(usize, String)>) {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => (text.to_string(), None),
        Err(error) => {
            let valid = &bytes[..error.valid_up_to()];
            let cut = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let text = String::from_utf8_lossy(&bytes[..cut]).into_owned();
            let shown = String::from_utf8_lossy(bytes).into_owned();
            (text, Some((error.valid_up_to(), shown)))
        }
    }
}

/// Runs `bytes` (named `origin` in error reports; `file` is its path when it is
/// a file) into `session`, reporting through `printer`.
pub fn run<O: Write, E: Write>(
    session: &mut Session,
    printer: &mut Printer<O, E>,
    bytes: &[u8],
    origin: &str,
    file: Option<PathBuf>,
    options: Options,
) -> Outcome {
    let file = file.and_then(|f| file_id(&f).ok());
    let mut stack = vec![Frame::new(bytes, origin.to_string(), file, options.script)];
    // Line mode's count of lines before this source: for it, not for the
    // files it `:load`s.
    let lines_before = printer.lines_before;
    printer.end_statement();
    if interrupt::requested() {
        // Ctrl-C while the source was split into statements.
        let message = format!("interrupted while reading {origin}; nothing of it ran");
        let place = (stack[0].text.as_str(), origin);
        return match printer.problem(&message, ErrorCode::Interrupted, 0, None, place) {
            Ok(()) => Outcome::Interrupted,
            Err(error) => Outcome::Output(error),
        };
    }
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
        let ran = match run_statement(session, printer, frame, span, parsed) {
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
struct Ran {
    /// It failed (an error, or a failure the printer noted).
    failed: bool,
    /// It was `:quit`.
    quit: bool,
    /// The file its `:load` names.
    load: Option<Target>,
}

/// Runs the statement `parsed` at `span` of `frame` into `session` and reports
/// it through `printer`: what it asks next, or how the run ends (a failed
/// write, a Ctrl-C, a cancelled question).
fn run_statement<O: Write, E: Write>(
    session: &mut Session,
    printer: &mut Printer<O, E>,
    frame: &mut Frame,
    span: syntax::Span,
    parsed: Result<syntax::Located, syntax::SyntaxError>,
) -> Result<Ran, Outcome> {
    printer.script = frame.script;
    session.from_script = frame.script;
    let (line, column) = frame.lines.at(&frame.text, span.start);
    printer.begin_statement(line, column);
    // A script's files are not asked about (the printer's rule), nor is
    // the file of its `:repeat`: the session's question is held meanwhile.
    let held = if frame.script {
        session.confirm.0.take()
    } else {
        None
    };
    let result = session.run_parsed(&frame.text, span, parsed);
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
        // Said already by an interrupted statement or `:repeat`; else the
        // Ctrl-C came as the statement ended or while its output was written.
        let said = repeat_stopped || result.as_ref().is_err_and(SessionError::is_interrupted);
        if !said {
            let reported = printer.problem(
                "interrupted",
                ErrorCode::Interrupted,
                span.start,
                Some(
                    "by Ctrl-C after the statement had run: it is kept, and its output may be cut short"
                        .to_string(),
                ),
                (&frame.text, &frame.origin),
            );
            if let Err(error) = reported {
                return Err(Outcome::Output(error));
            }
        }
        return Err(Outcome::Interrupted);
    }
    Ok(Ran {
        failed: result.is_err() || printer.take_failure(),
        quit,
        load,
    })
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
    Ok(Frame::new(&bytes, target.path.clone(), Some(id), true))
}

/// The most lines one statement may take in line mode: past it, the lines
/// held are run as they are (and report what is unfinished), so that an open
/// bracket never holds the input forever.
pub const MAX_STATEMENT_LINES: usize = 10_000;

/// Line mode (`--lines`): runs `input` a line at a time as it arrives, for a
/// program that drives gradcalc as a kernel. Each line (with the lines after
/// it while its statement is unfinished: an open bracket, a trailing
/// operator, as the REPL reads them) is run as it comes; its events are
/// written and flushed, then [`Printer::ready`] says which line was read
/// last, before the next line is read. Line numbers are those of the whole
/// input (`origin`). A failed statement does not stop the run, as in the
/// REPL; the outcome says whether any failed. A line that is not UTF-8 is an
/// `encoding` error, and the run goes on.
pub fn run_lines<O: Write, E: Write>(
    session: &mut Session,
    printer: &mut Printer<O, E>,
    input: &mut impl io::BufRead,
    origin: &str,
    options: Options,
) -> Outcome {
    let options = Options {
        keep_going: true,
        ..options
    };
    let (mut pending, mut first, mut read, mut failed) = (String::new(), 0, 0, false);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        let ended = match input.read_until(b'\n', &mut bytes) {
            Ok(n) => n == 0,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => true,
        };
        if !ended {
            read += 1;
            if pending.is_empty() {
                first = read - 1;
            }
            match std::str::from_utf8(&bytes) {
                Ok(line) => pending.push_str(line),
                Err(error) => {
                    failed = true;
                    let message = format!("line {read} of {origin} is not valid UTF-8");
                    let place = (String::from_utf8_lossy(&bytes).into_owned(), origin);
                    printer.lines_before = read - 1;
                    let at = error.valid_up_to();
                    let reported = printer.problem(
                        &message,
                        ErrorCode::Encoding,
                        at,
                        Some("send UTF-8 text".to_string()),
                        (&place.0, place.1),
                    );
                    if let Err(error) = reported.and_then(|()| printer.ready(read, false)) {
                        return Outcome::Output(error);
                    }
                    continue;
                }
            }
            let lines = read - first;
            if syntax::needs_more_input(&pending) && lines < MAX_STATEMENT_LINES {
                if let Err(error) = printer.ready(read, true) {
                    return Outcome::Output(error);
                }
                continue;
            }
        }
        if !pending.is_empty() {
            printer.lines_before = first;
            let text = std::mem::take(&mut pending);
            match run(session, printer, text.as_bytes(), origin, None, options) {
                Outcome::Done { failed: f } => failed |= f,
                Outcome::Stopped => failed = true,
                Outcome::Quit { failed: f } => {
                    return Outcome::Quit {
                        failed: failed || f,
                    };
                }
                done @ (Outcome::Output(_) | Outcome::Interrupted) => return done,
            }
        }
        if ended {
            return Outcome::Done { failed };
        }
        if let Err(error) = printer.ready(read, false) {
            return Outcome::Output(error);
        }
    }
}
