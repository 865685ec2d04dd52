//! The interactive front end: rustyline line editing with completion, colour and
//! a live preview (`helper.rs`), multi-line input while a bracket is open, Ctrl-C
//! to discard a line, Ctrl-D to leave, a history file appended line by line
//! (`history.rs`), and the REPL-only commands: the paging of `:step` with the
//! page's keys (`keys.rs`), and `:serve`, whose live page is the browser's
//! side (`crate::web::serve`). When standard output is not a terminal
//! (`gradcalc | tee log`), lines are read plainly: no line editor, no preview
//! or colour codes, the prompt on stderr.

mod helper;
pub mod history;
mod keys;

use std::cell::RefCell;
use std::io::{self, BufRead, Write};
use std::rc::Rc;

use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{CompletionType, Config, Editor};

use crate::driver::{self, Options, Outcome};
use crate::render::printer::wrap;
use crate::render::{Answer, Format, Printer, Style, text};
use crate::session::{ErrorCode, Event, InRepl, Session};
use crate::syntax;
use crate::web::serve::{self, Server};
use keys::{RawKeys, StepKey, step_key};

pub use helper::LineHelper;
pub use history::history_path;

type LineEditor = Editor<LineHelper, DefaultHistory>;

/// The prompt for a new statement, and for the lines that continue it.
const PROMPT: &str = "> ";
const CONTINUATION: &str = "… ";

/// How typed lines run: every statement of a line even after an error; a
/// `:load`ed file stops at its first error.
const TYPED: Options = Options {
    keep_going: true,
    loads_stop_at_error: true,
    script: false,
    lines: false,
};

/// Runs the REPL on `session` until `:quit` or Ctrl-D. Errors never end it.
/// `terminal_out`: standard output is a terminal (else lines are read plainly
/// and no banner is shown).
///
/// Returns the process exit status: 0, or 1 when the terminal itself failed.
///
/// Errors: the output could not be written.
pub fn run<O: Write, E: Write>(
    session: &mut Session,
    printer: &mut Printer<O, E>,
    terminal_out: bool,
) -> io::Result<u8> {
    // On a terminal, warnings and notices show in line with the results.
    printer.notes_to_err = !terminal_out;
    // Replacing a file asks first (a plain line read: the editor is not active).
    printer.confirm = Some(Box::new(ask_replace));
    // `:repeat N FILE.svg` asks before its first step.
    session.confirm.0 = Some(Box::new(ask_replace));
    let status = if terminal_out {
        // The line editor's helper reads the session (completion, preview) between
        // the statements the loop runs: both hold it for the REPL's lifetime.
        let shared = Rc::new(RefCell::new(std::mem::take(session)));
        let status = run_shared(&shared, printer);
        *session = shared.take();
        status
    } else {
        run_plain(session, printer)
    };
    printer.confirm = None;
    session.confirm.0 = None;
    status
}

/// Asks on stderr whether to replace the existing file `path` and reads the
/// answer, a line of the terminal in its line mode (the line editor is not
/// active while a statement runs): `y` or `yes` replaces, any other line keeps
/// the file, and Ctrl-C or Ctrl-D cancels — the file is kept and nothing more
/// of the input runs. Ctrl-C is seen by polling [`crate::interrupt`] while
/// waiting for the line; after it, the keys typed are dropped and the Ctrl-C
/// is forgotten (the question answered it).
fn ask_replace(path: &str) -> Answer {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut err = io::stderr();
    let _ = write!(err, "{path} exists; replace it? [y/N] ");
    let _ = err.flush();
    let stdin = io::stdin();
    let tick = Timespec {
        tv_sec: 0,
        tv_nsec: 50_000_000,
    };
    let mut line = Vec::new();
    let answered = loop {
        if crate::interrupt::requested() {
            break false;
        }
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        match poll(&mut fds, Some(&tick)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => continue,
            Ok(_) => {}
            Err(_) => break false,
        }
        let mut bytes = [0u8; 256];
        match rustix::io::read(&stdin, &mut bytes) {
            // Ctrl-D (or the end of the input).
            Ok(0) => break false,
            Ok(n) => {
                line.extend_from_slice(&bytes[..n]);
                if line.contains(&b'\n') {
                    break true;
                }
            }
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            Err(_) => break false,
        }
    };
    if !answered {
        let _ = rustix::termios::tcflush(&stdin, rustix::termios::QueueSelector::IFlush);
        crate::interrupt::clear();
        let _ = writeln!(err);
        return Answer::Cancelled;
    }
    match String::from_utf8_lossy(&line).trim() {
        "y" | "Y" | "yes" => Answer::Yes,
        _ => Answer::No,
    }
}

/// Runs one typed input; true when it was `:quit`.
fn run_input<O: Write, E: Write>(
    session: &mut Session,
    printer: &mut Printer<O, E>,
    input: &str,
) -> io::Result<Ran> {
    crate::interrupt::clear();
    let outcome = driver::run(session, printer, input.as_bytes(), "<input>", None, TYPED);
    let (ran, interrupted) = match outcome {
        Outcome::Quit { failed } => (
            Ran {
                quit: true,
                failed,
                walked_off: false,
            },
            false,
        ),
        Outcome::Output(error) => return Err(error),
        Outcome::Interrupted => (Ran::failed(), true),
        Outcome::Done { failed } => (Ran { failed, ..Ran::OK }, false),
        Outcome::Stopped => (Ran::failed(), false),
    };
    printer.flush()?;
    after_interrupt(interrupted);
    Ok(ran)
}

/// How a typed input ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ran {
    /// It was `:quit`.
    quit: bool,
    /// A statement failed (or Ctrl-C stopped one): the live page is left as
    /// it was, since an error changes nothing.
    failed: bool,
    /// `:step` ended by Enter at its last step.
    walked_off: bool,
}

impl Ran {
    /// Ran to its end, nothing failed.
    const OK: Ran = Ran {
        quit: false,
        failed: false,
        walked_off: false,
    };

    /// A statement failed.
    fn failed() -> Ran {
        Ran {
            failed: true,
            ..Ran::OK
        }
    }
}

/// After Ctrl-C stopped a statement (`interrupted`, or the flag still set):
/// drops the keys typed while it ran (the terminal's input queue), so that
/// nothing typed in the meantime runs, and forgets the Ctrl-C. Does nothing
/// otherwise, or when stdin is no terminal.
fn after_interrupt(interrupted: bool) {
    if interrupted || crate::interrupt::requested() {
        let _ = rustix::termios::tcflush(io::stdin(), rustix::termios::QueueSelector::IFlush);
        crate::interrupt::clear();
    }
}

/// The prompt while a `:quiz` runs (`quiz 3/27> `): each line is an
/// answer; `None` when no quiz runs.
fn quiz_prompt(session: &Session) -> Option<String> {
    let (number, questions) = session.quiz()?.position();
    Some(format!("quiz {number}/{questions}> "))
}

/// The REPL without a line editor: the prompt on stderr, lines from stdin.
fn run_plain<O: Write, E: Write>(
    session: &mut Session,
    printer: &mut Printer<O, E>,
) -> io::Result<u8> {
    let stdin = io::stdin();
    let mut input = String::new();
    let mut server = None;
    loop {
        let prompt = match quiz_prompt(session) {
            Some(quiz) if input.is_empty() => quiz,
            _ if input.is_empty() => PROMPT.to_string(),
            _ => ".. ".to_string(),
        };
        let mut err = io::stderr();
        let _ = write!(err, "{prompt}");
        let _ = err.flush();
        let mut line = String::new();
        match stdin.lock().read_line(&mut line) {
            Ok(0) => return Ok(0),
            Ok(_) => {}
            Err(error) => {
                let _ = writeln!(err, "gradcalc: cannot read the terminal: {error}");
                return Ok(1);
            }
        }
        input.push_str(&line);
        if syntax::needs_more_input(&input) {
            continue;
        }
        let typed = std::mem::take(&mut input);
        if typed.trim().is_empty() {
            continue;
        }
        let ran = match repl_command(&typed) {
            Some(command) if !command.alone => {
                refuse_beside(printer, &command, &typed)?;
                Ran::failed()
            }
            Some(command) if command.kind == InRepl::Serve => {
                serve::command(&mut server, session, printer, command.text)?;
                Ran::OK
            }
            _ => run_input(session, printer, &typed)?,
        };
        if ran.quit {
            return Ok(0);
        }
        if !ran.failed {
            serve::publish(server.as_ref(), session, printer, &typed);
        }
    }
}

fn run_shared<O: Write, E: Write>(
    session: &Rc<RefCell<Session>>,
    printer: &mut Printer<O, E>,
) -> io::Result<u8> {
    let mut style = match printer.format {
        Format::Human(style) => style,
        Format::Json => Style::default(),
    };
    let config = Config::builder()
        .max_history_size(history::MAX_ENTRIES)
        .and_then(|b| b.history_ignore_dups(true))
        .map(|b| {
            b.auto_add_history(false)
                .completion_type(CompletionType::List)
                .build()
        });
    let config = config.unwrap_or_default();
    let mut editor: LineEditor = match Editor::with_config(config) {
        Ok(editor) => editor,
        Err(error) => {
            let _ = writeln!(
                io::stderr(),
                "gradcalc: cannot start the line editor: {error}"
            );
            return Ok(1);
        }
    };
    editor.set_helper(Some(LineHelper::new(Rc::clone(session), style)));
    let continuation = if style.ascii { ".. " } else { CONTINUATION };
    // Ctrl-C while a statement runs (outside line editing, where rustyline reads it
    // as a key) must not end the session: it stops the statement (`crate::interrupt`).
    crate::interrupt::set_batch(false);
    crate::interrupt::install();
    let opened = history_path()
        .map(|path| history::open(&path))
        .unwrap_or_default();
    if let Some(warning) = &opened.warning {
        let _ = writeln!(io::stderr(), "{warning}");
    }
    for entry in &opened.entries {
        let _ = editor.add_history_entry(entry.as_str());
    }
    let mut history_file = opened.file;
    // `:serve`: stopped when the REPL ends (dropped with it).
    let mut server: Option<Server> = None;
    // Everything in --json is JSON: no banner there.
    if matches!(printer.format, Format::Human(_)) {
        printer.line(&format!(
            "gradcalc {} — a calculator with gradients. `:help` for help, Ctrl-D to leave.",
            env!("CARGO_PKG_VERSION")
        ))?;
        printer.flush()?;
    }
    // `:step` just walked off its last step with Enter: a lone `b` or `q`
    // typed now was most likely meant for it.
    let mut walked_off = false;
    loop {
        // While a `:quiz` runs, each line is its answer: the prompt says so.
        let quiz = quiz_prompt(&session.borrow());
        let input = match editor.readline(quiz.as_deref().unwrap_or(PROMPT)) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => continue,
            // Ctrl-D at a quiz's prompt stops the quiz (its score), as it
            // stops `:step`; the session is kept. At `> ` it leaves.
            Err(ReadlineError::Eof) if quiz.is_some() => "stop".to_string(),
            Err(ReadlineError::Eof) => return Ok(0),
            Err(error) => {
                let _ = writeln!(io::stderr(), "gradcalc: cannot read the terminal: {error}");
                return Ok(1);
            }
        };
        let Some(input) = read_continued(&mut editor, input, continuation) else {
            continue;
        };
        if input.trim().is_empty() {
            continue;
        }
        // Long output wraps at the terminal's width, which may change between lines.
        printer.width = editor.dimensions().map(|(columns, _)| usize::from(columns));
        // Vectors and matrices are laid out for that width too.
        if let (Format::Human(style), Some(columns), false) =
            (&mut printer.format, printer.width, printer.width_given)
        {
            style.width = columns;
        }
        remember(&mut editor, &mut history_file, &input);
        if std::mem::take(&mut walked_off) && matches!(input.trim(), "b" | "q") {
            let typed = input.trim();
            printer.line(&format!(
                "(`{typed}` was not run: `:step` had ended, so here it would mean the variable {typed}; type it again to run it, or `:step` to step again)"
            ))?;
            printer.flush()?;
            continue;
        }
        let ran = dispatch(&mut editor, session, printer, &input, &style, &mut server)?;
        walked_off = ran.walked_off;
        if ran.quit {
            return Ok(0);
        }
        if repl_command(&input).is_none() && !ran.failed {
            serve::publish(server.as_ref(), &mut session.borrow_mut(), printer, &input);
        }
        // `:precision` changed the printer's style: `:step` and the preview follow.
        if let Format::Human(now) = printer.format
            && now.precision != style.precision
        {
            style.precision = now.precision;
            if let Some(helper) = editor.helper_mut() {
                helper.set_precision(now.precision);
            }
        }
        printer.flush()?;
    }
}

/// Reads the lines that continue `input` (with the `continuation` prompt) while
/// its statement is unfinished (an open bracket): the whole input, or `None`
/// when Ctrl-C or Ctrl-D on a continuation line dropped it.
fn read_continued(
    editor: &mut LineEditor,
    mut input: String,
    continuation: &str,
) -> Option<String> {
    while syntax::needs_more_input(&input) {
        if let Some(helper) = editor.helper() {
            helper.pending.replace(input.clone());
        }
        let line = editor.readline(continuation);
        if let Some(helper) = editor.helper() {
            helper.pending.borrow_mut().clear();
        }
        match line {
            Ok(line) => {
                input.push('\n');
                input.push_str(&line);
            }
            // Ctrl-C or Ctrl-D on a continuation line drops the unfinished input.
            Err(_) => return None,
        }
    }
    Some(input)
}

/// Adds `input` to the editor's history and, when it was added, appends it to
/// `history_file`; a failed append is warned about and turns the file off
/// (`history_file` becomes `None`).
fn remember(editor: &mut LineEditor, history_file: &mut Option<history::HistoryFile>, input: &str) {
    let added = editor.add_history_entry(input).unwrap_or(false);
    if let (true, Some(file)) = (added, &*history_file)
        && let Err(error) = file.append(input)
    {
        let _ = writeln!(
            io::stderr(),
            "warning: history not saved ({error}); history is off for this session"
        );
        *history_file = None;
    }
}

/// Carries out the typed `input`: `:step` and `:serve` in the REPL (with the
/// `editor`, the printer's `style` and the `:serve` server), anything else in
/// the session. How it ended ([`Ran`]).
///
/// Errors: only I/O errors of the printer's streams.
fn dispatch<O: Write, E: Write>(
    editor: &mut LineEditor,
    session: &Rc<RefCell<Session>>,
    printer: &mut Printer<O, E>,
    input: &str,
    style: &Style,
    server: &mut Option<Server>,
) -> io::Result<Ran> {
    let Some(command) = repl_command(input) else {
        return run_input(&mut session.borrow_mut(), printer, input);
    };
    if !command.alone {
        refuse_beside(printer, &command, input)?;
        return Ok(Ran::failed());
    }
    match command.kind {
        InRepl::Step => {
            let at = Stepping {
                style,
                server: server.as_ref(),
            };
            let walked_off = step(editor, &mut session.borrow_mut(), printer, command.text, at)?;
            Ok(Ran {
                walked_off,
                ..Ran::OK
            })
        }
        InRepl::Serve | InRepl::Session => {
            serve::command(server, &mut session.borrow_mut(), printer, command.text)?;
            Ok(Ran::OK)
        }
    }
}

/// A REPL-only command (the command table says which: `:step`, `:serve`)
/// in a typed input, which the REPL carries out itself.
struct ReplCommand<'a> {
    /// Its name.
    name: &'static str,
    /// What the REPL does with it (the table's [`InRepl`]).
    kind: InRepl,
    /// Its text, without a comment after it.
    text: &'a str,
    /// Where it starts in the input.
    at: usize,
    /// It is the input's only statement (a comment may follow it); otherwise
    /// it is refused, and nothing of the input runs.
    alone: bool,
}

/// The REPL-only command among the statements of `input`, if any.
fn repl_command(input: &str) -> Option<ReplCommand<'_>> {
    let spans = syntax::statement_spans(input);
    spans.iter().find_map(|span| {
        let text = &input[span.start..span.end];
        let name = text.strip_prefix(':')?.split(char::is_whitespace).next()?;
        let command =
            crate::session::find_command(name).filter(|c| c.traits.repl != InRepl::Session)?;
        Some(ReplCommand {
            name: command.name,
            kind: command.traits.repl,
            text,
            at: span.start,
            alone: spans.len() == 1,
        })
    })
}

/// Refuses `command`, typed in `input` beside other statements: it goes on
/// a line of its own. Nothing of the input runs.
fn refuse_beside<O: Write, E: Write>(
    printer: &mut Printer<O, E>,
    command: &ReplCommand,
    input: &str,
) -> io::Result<()> {
    let name = command.name;
    printer.problem(
        &format!("`:{name}` goes on a line of its own: nothing of this line ran"),
        ErrorCode::BadArguments,
        command.at,
        Some(format!(
            "type `{}` alone, then the other statements on the next line",
            command.text
        )),
        (input, "<input>"),
    )
}

/// What `:step` follows besides the terminal: the style of its lines, and the
/// live page, if one is served.
struct Stepping<'a> {
    style: &'a Style,
    server: Option<&'a Server>,
}

/// `:step`: the backward pass one step at a time, each drawn as `:trace`
/// shows it. The session runs the command (its errors, `md`/`tex` files and
/// notices as for `:trace`); its `:trace` event's walk is then paged from
/// the output's walk ([`Session::step_model_of`]), a number's or a
/// tensor's alike: the header, then step K's text, every step of it, made
/// when shown (a number walk's a window at a time, [`Session::step_pager`]:
/// memory for the steps near the one shown, not for the whole pass). On a
/// terminal it takes the page's keys, read one at a time ([`keys`]): → and
/// Space (or Enter) the next step, ← and Backspace the one before, Home the
/// first, End the last, `g N` or `N` then Enter step N; q, Esc, Ctrl-C or
/// Ctrl-D ends the walk, and the terminal's modes are put back on every way
/// out. Should the terminal refuse that mode, it reads lines with the line
/// editor (Enter, `b`, `g N`, `q`). A live page (`:serve`) shows each step
/// as the terminal does. True when stepping on from the last step ended it
/// (the walk is done, and said so).
fn step<O: Write, E: Write>(
    editor: &mut LineEditor,
    session: &mut Session,
    printer: &mut Printer<O, E>,
    input: &str,
    follow: Stepping,
) -> io::Result<bool> {
    let style = follow.style;
    crate::interrupt::clear();
    let mut trace = None;
    let mut written = Ok(());
    let json = matches!(printer.format, Format::Json);
    let _ = session.run_source_with(input, |session, result| {
        let result = match result {
            // The trace is paged (in --json, printed as it is); the notices
            // beside it (a vector seeded with ones) are written first.
            Ok(mut events) if !json && events.iter().any(is_trace) => {
                let at = events.iter().position(is_trace).unwrap_or_default();
                trace = Some(events.remove(at));
                Ok(events)
            }
            other => other,
        };
        if let Err(error) = printer.report(&result, session, input, "<input>") {
            written = Err(error);
        }
        std::ops::ControlFlow::Continue(())
    });
    written?;
    // A cancelled question ends the `:step` as it is; nothing is left to stop.
    let cancelled = printer.take_cancelled();
    after_interrupt(cancelled);
    let Some(trace) = trace else {
        return Ok(false);
    };
    let span = syntax::Span::new(0, input.len());
    let model = match session.step_model_of(&trace, span) {
        Ok(Some(model)) => model,
        Ok(None) => return Ok(false),
        Err(error) => {
            let session = &*session;
            printer.report(&Err(error), session, input, "<input>")?;
            after_interrupt(false);
            return Ok(false);
        }
    };
    // A number walk's steps are made as they are shown, a window at a time.
    let mut pager = session.step_pager(&model);
    let mut text = |k: usize| text::step_page(&mut pager, k, style);
    show(printer, &text(0).unwrap_or_default())?;
    walk(editor, printer, (model.len(), text), follow.server)
}

/// Whether `event` is a `:trace` event, which `:step` pages.
fn is_trace(event: &Event) -> bool {
    matches!(event, Event::Trace { .. })
}

/// Pages the `total` steps of a walk, step K's text `text(K)` (written when
/// it is shown), from step 1 with the keys of [`step`]; the live page
/// (`server`) follows. True when stepping on from the last step ended the
/// walk.
fn walk<O: Write, E: Write>(
    editor: &mut LineEditor,
    printer: &mut Printer<O, E>,
    (total, mut text): (usize, impl FnMut(usize) -> Option<String>),
    server: Option<&Server>,
) -> io::Result<bool> {
    let mut keys = RawKeys::start();
    let mut at = 0;
    while let Some(piece) = text(at + 1) {
        let position = at + 1;
        show(printer, &piece)?;
        if let Some(server) = server {
            // The page's steps are the same model's.
            server.show_step(position);
        }
        let last = position == total;
        let key = match keys.as_mut() {
            Some(keys) => read_key(keys, printer, position, total, last)?,
            None => read_line_key(editor, printer, position, total, last)?,
        };
        match key {
            StepKey::Next if last => {
                printer.line(&format!(
                    "(the backward pass is done: all {total} steps shown; `:step` starts it again)"
                ))?;
                return Ok(true);
            }
            StepKey::Next => at += 1,
            StepKey::Back => at = at.saturating_sub(1),
            StepKey::First => at = 0,
            StepKey::Last => at = total - 1,
            StepKey::Go(n) if (1..=total).contains(&n) => at = n - 1,
            StepKey::Go(n) => printer.line(&format!(
                "(no step {n} to show: the steps shown are 1 to {total})"
            ))?,
            // Only the keys are answers: anything typed after the q (`q:grad
            // b`) is not run, and saying so keeps it from being lost unseen.
            StepKey::Stop(rest) => {
                drop(keys);
                return match rest.as_str() {
                    "" => printer.line(&format!(
                        "(stopped at step {position}/{total}: the walk has ended; `:step` starts it again)"
                    )),
                    rest => printer.line(&crate::render::shorten_quotes(&format!(
                        "(stopped; `{rest}` was not run: the step prompt takes the keys of `:help step`; type it at the `> ` prompt)"
                    ))),
                }
                .map(|()| false);
            }
        }
    }
    Ok(false)
}

/// The keys the `:step` prompt names, at step `position` of `total`, on
/// the `last` step or not.
fn step_prompt(position: usize, total: usize, last: bool, raw: bool) -> String {
    match (raw, last) {
        (true, true) => {
            format!("step {position}/{total}, the last: → ends, ← back, Home first, q quits ")
        }
        (true, false) => format!("step {position}/{total}: → next, ← back, Home, End, q quits "),
        (false, true) => {
            format!("step {position}/{total}: the last step: Enter to end, b back, g N for step N ")
        }
        (false, false) => format!(
            "step {position}/{total}: Enter for the next, b back, g N for step N, q to stop "
        ),
    }
}

/// Shows the prompt of a step and reads one key of the terminal in
/// key-at-a-time mode (`keys`), echoing a typed answer (`g 5`); the prompt
/// is taken off the screen after it, so the scrollback holds the trace
/// alone.
fn read_key<O: Write, E: Write>(
    keys: &mut RawKeys,
    printer: &mut Printer<O, E>,
    position: usize,
    total: usize,
    last: bool,
) -> io::Result<StepKey> {
    printer.raw(&step_prompt(position, total, last, true))?;
    printer.flush()?;
    let key = loop {
        match keys.next()? {
            keys::Read::Key(key) => break key,
            keys::Read::Echo(text) => printer.raw(text)?,
            keys::Read::Typed(c) => printer.raw(c.encode_utf8(&mut [0; 4]))?,
        }
        printer.flush()?;
    };
    // Back to the start of the prompt's line, and clear it.
    printer.raw("\r\x1b[2K")?;
    Ok(key)
}

/// Shows the prompt of a step and reads a line with the line editor (the
/// terminal refused key-at-a-time mode): Enter, `b`, `g N` or `N`, q.
fn read_line_key<O: Write, E: Write>(
    editor: &mut LineEditor,
    printer: &mut Printer<O, E>,
    position: usize,
    total: usize,
    last: bool,
) -> io::Result<StepKey> {
    if let Some(helper) = editor.helper() {
        helper.editing.set(false);
    }
    let answer = editor.readline(&step_prompt(position, total, last, false));
    if let Some(helper) = editor.helper() {
        helper.editing.set(true);
    }
    let Ok(answer) = answer else {
        return Ok(StepKey::Stop(String::new()));
    };
    let key = step_key(&answer);
    if !matches!(key, StepKey::Stop(_)) {
        // The prompt has done its job: take it off the screen (cursor up
        // one line, clear it), so the scrollback holds the trace alone.
        printer.raw("\x1b[1A\x1b[2K")?;
    }
    Ok(key)
}

/// Writes one piece of a trace, wrapped as `:trace` wraps: between the parts
/// of a line, never mid-word.
fn show<O: Write, E: Write>(printer: &mut Printer<O, E>, piece: &str) -> io::Result<()> {
    let piece = piece.trim_end_matches('\n');
    match printer.width {
        Some(width) => printer.line(wrap(piece, width).trim_end_matches('\n'))?,
        None => printer.line(piece)?,
    }
    printer.flush()
}
