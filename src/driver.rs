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
use crate::session::{CalculusEvent, Event, Session, SessionError, Target};
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
    /// The canonical path of a file, for the cycle check.
    file: Option<PathBuf>,
    statements: syntax::Cursor,
    script: bool,
    /// The byte at which the file stopped being UTF-8, and the file as shown.
    invalid: Option<(usize, String)>,
    /// How many of its statements have run.
    ran: usize,
}

impl Frame {
    fn new(bytes: &[u8], origin: String, file: Option<PathBuf>, script: bool) -> Frame {
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
    let file = file.and_then(|f| f.canonicalize().ok());
    let mut stack = vec![Frame::new(bytes, origin.to_string(), file, options.script)];
    if interrupt::requested() {
        // Ctrl-C while the source was split into statements.
        let message = format!("interrupted while reading {origin}; nothing of it ran");
        return match printer.problem(&message, 0, None, &stack[0].text, origin) {
            Ok(()) => Outcome::Interrupted,
            Err(error) => Outcome::Output(error),
        };
    }
    let mut failed = false;
    while let Some(frame) = stack.last_mut() {
        let next = frame.statements.next(&frame.text);
        if let (Some((span, _)), true) = (&next, interrupt::requested()) {
            // Ctrl-C while the statement was parsed (a long one): it did not
            // run, nor anything after it.
            let (message, help) = match frame.ran {
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
            };
            return match printer.problem(&message, span.start, help, &frame.text, &frame.origin) {
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
                    shown.len().min(offset),
                    Some("save the file as UTF-8".to_string()),
                    &shown,
                    &frame.origin,
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
        printer.script = frame.script;
        let result = session.run_parsed(&frame.text, span, parsed);
        frame.ran += 1;
        let mut load = None;
        let mut quit = false;
        let result = result.map(|events| {
            events
                .into_iter()
                .filter(|event| match event {
                    Event::Load { target } => {
                        load = Some(target.clone());
                        false
                    }
                    Event::Quit => {
                        quit = true;
                        true
                    }
                    _ => true,
                })
                .collect::<Vec<_>>()
        });
        // A `:repeat` or `:descend` stopped by Ctrl-C keeps its finished steps and says so in
        // its event: that answers the Ctrl-C, so its table and file are shown
        // whole (a second Ctrl-C cuts them short as any output).
        let repeat_stopped = result.as_ref().is_ok_and(|events| {
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
        });
        if repeat_stopped {
            interrupt::clear();
        }
        if let Err(error) = printer.report(&result, session, &frame.text, &frame.origin) {
            return Outcome::Output(error);
        }
        if printer.take_cancelled() {
            // A question about replacing a file was answered with Ctrl-C or
            // Ctrl-D: reported as not replaced; nothing more runs.
            return Outcome::Interrupted;
        }
        if interrupt::requested() || repeat_stopped {
            // Said already by an interrupted statement or `:repeat`; else the
            // Ctrl-C came as the statement ended or while its output was written.
            let said = repeat_stopped || result.as_ref().is_err_and(SessionError::is_interrupted);
            if !said {
                let reported = printer.problem(
                    "interrupted",
                    span.start,
                    Some(
                        "by Ctrl-C after the statement had run: it is kept, and its output may be cut short"
                            .to_string(),
                    ),
                    &frame.text,
                    &frame.origin,
                );
                if let Err(error) = reported {
                    return Outcome::Output(error);
                }
            }
            return Outcome::Interrupted;
        }
        let mut this_failed = result.is_err() || printer.take_failure();
        if quit {
            return Outcome::Quit {
                failed: failed || this_failed,
            };
        }
        if let Some(target) = load {
            match open(&stack, &target) {
                Ok(next) => {
                    if stack.len() > MAX_LOAD_DEPTH {
                        this_failed = true;
                        let message = format!(
                            "cannot load {}: `:load` nested more than {MAX_LOAD_DEPTH} deep",
                            target.path
                        );
                        if let Err(error) = report_at(printer, &stack, &target, message, None) {
                            return Outcome::Output(error);
                        }
                    } else if interrupt::requested() {
                        // Ctrl-C while the file was read and split into statements.
                        let message = format!(
                            "interrupted while reading {}; nothing of it ran",
                            target.path
                        );
                        if let Err(error) = report_at(printer, &stack, &target, message, None) {
                            return Outcome::Output(error);
                        }
                        return Outcome::Interrupted;
                    } else {
                        stack.push(next);
                    }
                }
                Err((message, help)) => {
                    this_failed = true;
                    if let Err(error) = report_at(printer, &stack, &target, message, help) {
                        return Outcome::Output(error);
                    }
                }
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
    help: Option<String>,
) -> io::Result<()> {
    let frame = stack
        .last()
        .unwrap_or_else(|| unreachable!("a frame asked"));
    printer.problem(
        &message,
        target.span.start,
        help,
        &frame.text,
        &frame.origin,
    )
}

/// Reads the file a `:load` names, refusing one already being loaded.
fn open(stack: &[Frame], target: &Target) -> Result<Frame, (String, Option<String>)> {
    let path = files::expand_tilde(&target.path);
    let canonical = path
        .canonicalize()
        .map_err(|e| (format!("cannot read {}: {e}", path.display()), None))?;
    if let Some(first) = stack
        .iter()
        .position(|f| f.file.as_ref() == Some(&canonical))
    {
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
    Ok(Frame::new(
        &bytes,
        target.path.clone(),
        Some(canonical),
        true,
    ))
}
