//! The interactive front end: rustyline line editing, multi-line input while a
//! bracket is open, Ctrl-C to discard a line, Ctrl-D to leave, and a history file.

use std::io::Write;
use std::path::PathBuf;

use rustyline::error::ReadlineError;
use rustyline::history::{FileHistory, History};
use rustyline::{Config, Editor};

use crate::render::Printer;
use crate::session::{Event, Session};
use crate::syntax;

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
    let config = Config::builder()
        .max_history_size(1000)
        .and_then(|b| b.history_ignore_dups(true))
        .map(|b| b.auto_add_history(false).build());
    let config = config.unwrap_or_default();
    let mut editor: Editor<(), FileHistory> = match Editor::with_config(config) {
        Ok(editor) => editor,
        Err(error) => {
            eprintln!("gradcalc: cannot start the line editor: {error}");
            return 1;
        }
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
            "gradcalc {} — a calculator with gradients. Type `:help` for help, Ctrl-D to leave.",
            env!("CARGO_PKG_VERSION")
        ));
        let _ = printer.flush();
    }
    loop {
        let mut input = match editor.readline(PROMPT) {
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
            match editor.readline(CONTINUATION) {
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
        let mut quit = false;
        let _ = session.run_source(&input, |result| {
            quit |= matches!(&result, Ok(events) if events.contains(&Event::Quit));
            let _ = printer.report(&result, &input, "<input>");
            std::ops::ControlFlow::Continue(())
        });
        let _ = printer.flush();
        if quit {
            return 0;
        }
    }
}

/// Writes the history file, creating its directory on first use.
fn save_history(editor: &mut Editor<(), FileHistory>, path: &PathBuf) -> Result<(), ReadlineError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    editor.save_history(path)
}
