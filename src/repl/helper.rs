//! The rustyline helper: completion of commands, functions and names, syntax
//! colour (through `render::highlight`), and a live preview of the line's value
//! as a hint. It shares the session with the loop in `repl/mod.rs`; the preview
//! uses [`Session::preview`], which changes nothing in the session.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::hint::{Hint, Hinter};
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

use crate::render::{self, Style};
use crate::session::{Arg, COMMANDS, CONSTANTS, Session, find_command, next_args};

/// The helper rustyline calls while a line is edited.
pub struct LineHelper {
    session: Rc<RefCell<Session>>,
    style: Style,
    /// False while `:step` waits for Enter: no hints or colour for that answer.
    pub(super) editing: Cell<bool>,
    /// The lines of a statement still open (a bracket, a trailing operator), so
    /// that a continuation line previews the whole statement, never itself alone.
    pub(super) pending: RefCell<String>,
    /// The bracket the cursor was at when the line was last drawn, to redraw on
    /// a cursor move only when the bracket marking changes.
    bracket: Cell<Option<usize>>,
}

/// Lines longer than this are neither previewed nor coloured: a pasted
/// megabyte must not cost a parse and a full recolouring on every key.
const LONG_LINE: usize = 10_000;

impl LineHelper {
    /// A helper for `session`, colouring and formatting numbers as `style` says.
    pub fn new(session: Rc<RefCell<Session>>, style: Style) -> LineHelper {
        LineHelper {
            session,
            style,
            editing: Cell::new(true),
            pending: RefCell::new(String::new()),
            bracket: Cell::new(None),
        }
    }

    /// Numbers in the preview from now on as `precision` says (`:precision`).
    pub fn set_precision(&mut self, precision: crate::render::Precision) {
        self.style.precision = precision;
    }

    /// Whether `name` means something now: a variable, function, constant or `ans`.
    fn known(&self, name: &str) -> bool {
        let Ok(session) = self.session.try_borrow() else {
            return true;
        };
        session.variable(name).is_some()
            || session.function_names().any(|f| f == name)
            || crate::session::builtin_names().any(|f| f == name)
            || CONSTANTS.iter().any(|(c, _)| *c == name)
            || matches!(name, "ans" | "_")
    }
}

/// The preview shown after the cursor; Right-arrow does not insert it.
pub struct Preview(String);

impl Hint for Preview {
    fn display(&self) -> &str {
        &self.0
    }
    fn completion(&self) -> Option<&str> {
        None
    }
}

impl Hinter for LineHelper {
    type Hint = Preview;

    fn hint(&self, line: &str, pos: usize, _: &Context<'_>) -> Option<Preview> {
        if !self.editing.get() || pos < line.len() || line.trim_start().starts_with(':') {
            return None;
        }
        let pending = self.pending.try_borrow().ok()?;
        if pending.len() + line.len() > LONG_LINE {
            return None;
        }
        let value = if pending.is_empty() {
            self.session.try_borrow_mut().ok()?.preview(line)?
        } else {
            let whole = format!("{pending}\n{line}");
            self.session.try_borrow_mut().ok()?.preview(&whole)?
        };
        let text = render::format_number(value, self.style.precision);
        // `x = 3` or `2`: the value is already on the line.
        let typed = line.trim_end();
        let repeats = typed.strip_suffix(text.as_str()).is_some_and(|before| {
            !before.ends_with(|c: char| c.is_alphanumeric() || c == '.' || c == '_')
                && before
                    .trim_end()
                    .strip_suffix('=')
                    .is_some_and(|b| !b.ends_with(['+', '-', '*', '/']))
                || before.trim().is_empty()
        });
        (!repeats).then(|| Preview(format!("   = {text}")))
    }
}

impl Highlighter for LineHelper {
    fn highlight<'l>(&self, line: &'l str, pos: usize) -> Cow<'l, str> {
        if !self.style.color || !self.editing.get() || line.len() > LONG_LINE {
            return Cow::Borrowed(line);
        }
        self.bracket.set(bracket_at(line, pos));
        Cow::Owned(render::highlight::highlight_line(line, pos, &|name| {
            self.known(name)
        }))
    }

    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(
        &'s self,
        prompt: &'p str,
        _default: bool,
    ) -> Cow<'b, str> {
        if self.style.color {
            Cow::Owned(render::highlight::prompt(prompt))
        } else {
            Cow::Borrowed(prompt)
        }
    }

    fn highlight_hint<'h>(&self, hint: &'h str) -> Cow<'h, str> {
        if self.style.color {
            Cow::Owned(render::highlight::hint(hint))
        } else {
            Cow::Borrowed(hint)
        }
    }

    fn highlight_char(&self, line: &str, pos: usize, kind: CmdKind) -> bool {
        // A typed key changes the colours; a cursor move changes only which
        // bracket is marked: redraw then, not on every move.
        self.style.color
            && line.len() <= LONG_LINE
            && (kind != CmdKind::MoveCursor || bracket_at(line, pos) != self.bracket.get())
    }
}

/// The byte offset of the bracket the highlighter marks for a cursor at `pos`
/// (the one under the cursor or just before it), if any.
fn bracket_at(line: &str, pos: usize) -> Option<usize> {
    let is_bracket = |at: usize| matches!(line.as_bytes().get(at), Some(b'(' | b')'));
    if is_bracket(pos) {
        Some(pos)
    } else {
        pos.checked_sub(1).filter(|&before| is_bracket(before))
    }
}

impl Completer for LineHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let Ok(session) = self.session.try_borrow() else {
            return Ok((pos, Vec::new()));
        };
        Ok(completions(&session, line, pos))
    }
}

/// Where the word before `pos` starts, and its candidates. After a command,
/// the command table says what the next argument is: variable names, a help
/// topic, keywords, or file names (completed from the file system).
fn completions(session: &Session, line: &str, pos: usize) -> (usize, Vec<Pair>) {
    let before = &line[..pos];
    let mut start = before
        .char_indices()
        .rev()
        .take_while(|&(_, c)| c.is_alphanumeric() || c == '_')
        .last()
        .map_or(pos, |(i, _)| i);
    // A command's flag (`--step`) is one word with its dashes.
    let dashes = before[..start].trim_end_matches('-');
    if dashes.len() < start && dashes.ends_with(char::is_whitespace) {
        let statement = dashes.rsplit(';').next().unwrap_or("").trim_start();
        if statement.starts_with(':') {
            start = dashes.len();
        }
    }
    let word = &before[start..];
    let statement = before[..start]
        .rsplit(';')
        .next()
        .unwrap_or("")
        .trim_start();
    let plain = |name: &str| Pair {
        display: name.to_string(),
        replacement: name.to_string(),
    };
    let call = |name: &str| Pair {
        display: format!("{name}("),
        replacement: format!("{name}("),
    };
    let mut candidates: Vec<Pair> = Vec::new();
    if statement == ":" {
        candidates.extend(COMMANDS.iter().map(|c| plain(c.name)));
    } else if let Some(command) = statement.strip_prefix(':') {
        let mut words = command.split_whitespace();
        let Some(spec) = words.next().and_then(find_command) else {
            return (start, Vec::new());
        };
        let typed: Vec<&str> = words.collect();
        let next = next_args(spec, &typed);
        if next.contains(&Arg::File) {
            return file_names(before, pos, &next);
        }
        for arg in next {
            match arg {
                Arg::Name | Arg::Names => candidates.extend(session.variable_names().map(plain)),
                Arg::Topic => {
                    candidates.extend(COMMANDS.iter().map(|c| plain(c.name)));
                    candidates.extend(crate::session::builtin_names().map(plain));
                    candidates.extend(session.function_names().map(plain));
                }
                Arg::Keyword(words) => candidates.extend(words.iter().map(|w| plain(w))),
                Arg::Numbered(flag) | Arg::Setting(flag) => candidates.push(plain(flag)),
                Arg::Digits => candidates.push(plain("full")),
                Arg::Port | Arg::Whole | Arg::Text => {}
                Arg::File | Arg::Range => {}
            }
        }
    } else {
        candidates.extend(crate::session::builtin_names().map(call));
        candidates.extend(session.function_names().map(call));
        candidates.extend(session.variable_names().map(plain));
        candidates.extend(CONSTANTS.iter().map(|c| plain(c.0)));
        candidates.push(plain("ans"));
    }
    candidates.retain(|c| c.replacement.starts_with(word));
    candidates.sort_by(|a, b| a.replacement.cmp(&b.replacement));
    candidates.dedup_by(|a, b| a.replacement == b.replacement);
    (start, candidates)
}

/// File names for the word before `pos` (rustyline's file-name completer, which
/// also knows `~/` and quoting), with the keywords that may come there too.
fn file_names(before: &str, pos: usize, next: &[Arg]) -> (usize, Vec<Pair>) {
    let (start, mut pairs) = FilenameCompleter::new()
        .complete_path(before, pos)
        .unwrap_or((pos, Vec::new()));
    let word = &before[start..];
    for arg in next {
        let words: &[&str] = match arg {
            Arg::Keyword(words) => words,
            Arg::Numbered(flag) | Arg::Setting(flag) => std::slice::from_ref(flag),
            _ => &[],
        };
        pairs.extend(words.iter().filter(|w| w.starts_with(word)).map(|w| Pair {
            display: w.to_string(),
            replacement: w.to_string(),
        }));
    }
    (start, pairs)
}

/// Multi-line input is read by the loop in `repl/mod.rs` (with a `… ` prompt on
/// each continuation line, which rustyline's validator cannot show).
impl Validator for LineHelper {}

impl Helper for LineHelper {}

#[cfg(test)]
mod tests {
    use super::completions;
    use crate::session::Session;

    fn complete(session: &Session, line: &str) -> Vec<String> {
        let (_, pairs) = completions(session, line, line.len());
        pairs.into_iter().map(|p| p.replacement).collect()
    }

    #[test]
    fn completes_commands_functions_and_names() {
        let mut session = Session::new();
        let _ = session.run_source("weight = 2; f(t) = t; wide = weight + 1", |_| {
            std::ops::ControlFlow::Continue(())
        });
        assert_eq!(complete(&session, ":gr"), ["grad", "graph"]);
        assert_eq!(complete(&session, ":tr"), ["trace"]);
        assert_eq!(complete(&session, "1 + tan"), ["tan(", "tanh("]);
        assert_eq!(complete(&session, "f"), ["f(", "floor("]);
        assert_eq!(complete(&session, "2*wei"), ["weight"]);
        assert_eq!(complete(&session, ":grad wi"), ["wide"]);
        assert_eq!(
            complete(&session, ":backward x; :grad w"),
            ["weight", "wide"]
        );
        assert_eq!(complete(&session, ":help tanh"), ["tanh"]);
        // The function table's names: tensor functions and `grad` too.
        assert_eq!(complete(&session, "soft"), ["softmax(", "softplus("]);
        assert_eq!(complete(&session, ":help log_"), ["log_softmax"]);
        assert!(complete(&session, ":vars x").is_empty());
        // The command table says where names go: after `:paths` and `:plot` too.
        assert_eq!(complete(&session, ":paths w"), ["weight", "wide"]);
        assert_eq!(complete(&session, ":plot w"), ["weight", "wide"]);
        assert_eq!(complete(&session, ":topo k"), ["kahn"]);
        // The picture flags, with their dashes, before and after the file.
        assert_eq!(
            complete(&session, ":svg pic.svg --st"),
            ["--step", "--steps"]
        );
        assert_eq!(
            complete(&session, ":svg pic.svg --step 3 --b"),
            ["--before"]
        );
        assert!(complete(&session, ":svg pic.svg --step ").is_empty());
        assert_eq!(
            complete(&session, ":dot --"),
            [
                "--before",
                "--steps",
                "--step",
                "--expand",
                "--expand=",
                "--lr",
                "--tb",
                "--fit"
            ]
        );
    }
}
