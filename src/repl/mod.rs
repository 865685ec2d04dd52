//! The interactive front end: rustyline line editing with completion, colour and
//! a live preview (`helper.rs`), multi-line input while a bracket is open, Ctrl-C
//! to discard a line, Ctrl-D to leave, a history file, and the REPL-only
//! commands `:step`, `:save FILE` and `:load FILE`.

mod helper;

use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use rustyline::error::ReadlineError;
use rustyline::history::{FileHistory, History};
use rustyline::{CompletionType, Config, Editor};

use crate::render::{Format, Printer, Style, text};
use crate::session::{Event, Session};
use crate::syntax;

pub use helper::LineHelper;

type LineEditor = Editor<LineHelper, FileHistory>;

/// The prompt for a new statement, and for the lines that continue it.
const PROMPT: &str = "> ";
const CONTINUATION: &str = "… ";

/// Where the history file lives: `$GRADCALC_HISTORY`, else
/// `$XDG_STATE_HOME/gradcalc/history`, else `~/.local/state/gradcalc/history`.
pub fn history_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("GRADCALC_HISTORY").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/state"))
        })?;
    Some(state.join("gradcalc").join("history"))
}

/// Runs the REPL on `session` until `:quit` or Ctrl-D. Errors never end it.
///
/// Returns the process exit status: 0, or 1 when the terminal itself failed.
pub fn run<O: Write, E: Write>(
    session: &mut Session,
    printer: &mut Printer<O, E>,
    banner: bool,
) -> i32 {
    // The line editor's helper reads the session (completion, preview) between
    // the statements the loop runs: both hold it for the REPL's lifetime.
    let shared = Rc::new(RefCell::new(std::mem::take(session)));
    let status = run_shared(&shared, printer, banner);
    *session = shared.take();
    status
}

fn run_shared<O: Write, E: Write>(
    session: &Rc<RefCell<Session>>,
    printer: &mut Printer<O, E>,
    banner: bool,
) -> i32 {
    let style = match printer.format {
        Format::Human(style) => style,
        Format::Json => Style::default(),
    };
    let config = Config::builder()
        .max_history_size(1000)
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
            eprintln!("gradcalc: cannot start the line editor: {error}");
            return 1;
        }
    };
    editor.set_helper(Some(LineHelper::new(Rc::clone(session), style)));
    let (prompt, continuation) = if style.ascii {
        (PROMPT, ".. ")
    } else {
        (PROMPT, CONTINUATION)
    };
    // Ctrl-C while a statement runs (outside line editing, where rustyline reads it
    // as a key) must not end the session: ignore the signal itself.
    let _ = ctrlc::set_handler(|| {});
    let history = history_path();
    let mut history_ok = true;
    if let Some(path) = &history {
        if path.exists() {
            if let Err(error) = editor.load_history(path) {
                eprintln!(
                    "warning: history file {} not read ({error}); continuing without it",
                    path.display()
                );
                history_ok = false;
            }
        }
    }
    if banner {
        let _ = printer.line(&format!(
            "gradcalc {} — a calculator with gradients. `:help` for help, Ctrl-D to leave.",
            env!("CARGO_PKG_VERSION")
        ));
        let _ = printer.flush();
    }
    loop {
        let mut input = match editor.readline(prompt) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => return 0,
            Err(error) => {
                eprintln!("gradcalc: cannot read the terminal: {error}");
                return 1;
            }
        };
        let mut discarded = false;
        while syntax::needs_more_input(&input) {
            match editor.readline(continuation) {
                Ok(line) => {
                    input.push('\n');
                    input.push_str(&line);
                }
                // Ctrl-C or Ctrl-D on a continuation line drops the unfinished input.
                Err(_) => {
                    discarded = true;
                    break;
                }
            }
        }
        if discarded || input.trim().is_empty() {
            continue;
        }
        // Long output wraps at the terminal's width, which may change between lines.
        printer.width = editor.dimensions().map(|(columns, _)| usize::from(columns));
        if history_ok {
            let _ = editor.history_mut().add(&input);
            if let Some(path) = &history {
                if let Err(error) = save_history(&mut editor, path) {
                    eprintln!(
                        "warning: history not saved to {} ({error}); continuing without it",
                        path.display()
                    );
                    history_ok = false;
                }
            }
        }
        match repl_command(&input) {
            Some(("save", file)) => save(&session.borrow(), printer, &input, file),
            Some(("load", file)) => load(&mut session.borrow_mut(), printer, file),
            Some(_) => step(
                &mut editor,
                &mut session.borrow_mut(),
                printer,
                &input,
                &style,
            ),
            None => {
                let mut quit = false;
                let _ = session.borrow_mut().run_source(&input, |result| {
                    quit |= matches!(&result, Ok(events) if events.contains(&Event::Quit));
                    let _ = printer.report(&result, &input, "<input>");
                    std::ops::ControlFlow::Continue(())
                });
                if quit {
                    let _ = printer.flush();
                    return 0;
                }
            }
        }
        let _ = printer.flush();
    }
}

/// The REPL-only commands: `:save FILE`, `:load FILE` and `:step [all]`, typed
/// alone on a line. Returns the command and the rest of the line.
fn repl_command(input: &str) -> Option<(&str, &str)> {
    let rest = input.trim().strip_prefix(':')?;
    let (name, argument) = rest
        .split_once(char::is_whitespace)
        .map_or((rest, ""), |(n, a)| (n, a.trim()));
    match name {
        "save" | "load" if !argument.is_empty() => Some((name, argument)),
        "step" if !input.contains([';', '\n', '#']) => Some((name, argument)),
        _ => None,
    }
}

/// `:save FILE`: writes the statements that built the session as a script.
fn save<O: Write, E: Write>(
    session: &Session,
    printer: &mut Printer<O, E>,
    input: &str,
    file: &str,
) {
    match std::fs::write(file, session.script()) {
        Ok(()) => {
            let count = session.statement_count();
            let s = if count == 1 { "" } else { "s" };
            let _ = printer.line(&format!(
                "saved {count} statement{s} to {file}; `:load {file}` or `gradcalc {file}` replays them"
            ));
        }
        Err(error) => {
            let offset = input.find(file).unwrap_or(0);
            let _ = printer.problem(
                &format!("cannot write {file}: {error}"),
                offset,
                Some("choose a file in a directory you can write to".to_string()),
                input,
                "<input>",
            );
        }
    }
}

/// `:load FILE`: runs a script into the session, stopping at its first error
/// (reported as FILE:line:column).
fn load<O: Write, E: Write>(session: &mut Session, printer: &mut Printer<O, E>, file: &str) {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(error) => {
            let _ = printer.problem(
                &format!("cannot read {file}: {error}"),
                0,
                None,
                "",
                "<input>",
            );
            return;
        }
    };
    let _ = session.run_source(&text, |result| {
        let _ = printer.report(&result, &text, file);
        if result.is_err() {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    });
}

/// `:step`: the backward pass one node per Enter; q, Ctrl-C or Ctrl-D stops.
fn step<O: Write, E: Write>(
    editor: &mut LineEditor,
    session: &mut Session,
    printer: &mut Printer<O, E>,
    input: &str,
    style: &Style,
) {
    let mut trace = None;
    let _ = session.run_source(input, |result| {
        match result {
            Ok(events) if matches!(events.as_slice(), [Event::Trace { .. }]) => {
                trace = events.into_iter().next();
            }
            other => {
                let _ = printer.report(&other, input, "<input>");
            }
        }
        std::ops::ControlFlow::Continue(())
    });
    let Some(trace) = trace else {
        return;
    };
    if matches!(printer.format, Format::Json) {
        let _ = printer.event(&trace, input);
        return;
    }
    let pieces = text::render_trace_pieces(&trace, style);
    // The prompt numbers a step as the trace does: of `total`, the count in its
    // header (a long trace skips steps in the middle, as `:trace` does).
    let Event::Trace { total, steps, .. } = &trace else {
        return;
    };
    let count = pieces.len().saturating_sub(1);
    for (i, piece) in pieces.iter().enumerate() {
        let _ = printer.line(piece.trim_end_matches('\n'));
        let _ = printer.flush();
        if i == 0 || i == count {
            continue;
        }
        if let Some(helper) = editor.helper() {
            helper.editing.set(false);
        }
        let position = steps[i - 1].row.position;
        let answer = editor.readline(&format!(
            "step {position}/{total}: Enter for the next, q to stop "
        ));
        if let Some(helper) = editor.helper() {
            helper.editing.set(true);
        }
        match answer {
            Ok(answer) if answer.trim().is_empty() => {}
            _ => {
                let _ = printer.line("(stopped)");
                return;
            }
        }
    }
}

/// Writes the history file, creating its directory on first use.
fn save_history(editor: &mut LineEditor, path: &Path) -> Result<(), ReadlineError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    editor.save_history(path)
}
