//! A gradcalc session for a notebook host: the Python package's core, the
//! same code whether it is the compiled module (`python/src/`, pyo3) or the
//! WebAssembly build under Pyodide (`web/wasm/src/notebook.rs`, which
//! `python/gradcalc/_wasm.py` calls).
//!
//! [`Cells`] runs sources through the library's driver, as `gradcalc --json
//! FILE` does (JSON Lines, the events of docs/json.md) or as the terminal
//! shows them, with pictures, pages and tables handed back whole for a
//! notebook to show; and answers values and gradients, of numbers and of
//! tensors. [`update_source`] writes the statement that sets a leaf;
//! [`cell_source`] reads a cell's source as a notebook runs it.
//!
//! Nothing here waits for signals or threads: the host runs these calls
//! under [`crate::interrupt::polling`] where Ctrl-C can reach it.

use std::cell::{Cell, RefCell};
use std::io::{self, Write};
use std::rc::Rc;

mod value_source;
pub mod values;

use crate::driver::{self, Options};
use crate::engine::tensor::Tensor;
use crate::files::WritePolicy;
use crate::render::{Format, Precision, Printer, Style, dot, html, plot, tables};
use crate::session::{
    Arg, Event, PictureFormat, Session, SessionError, TableFormat, Target, TraceSteps,
    find_command, next_args,
};
use crate::syntax::{Statement, Statements};

/// How a cell or `Session.run` runs: as a script (`gradcalc --json FILE`):
/// it stops at the first error, and its files are written only where the
/// write policy allows (the working directory), never replacing one unless
/// the command says `-f`.
const SCRIPT: Options = Options {
    keep_going: false,
    loads_stop_at_error: false,
    script: true,
    lines: false,
};

/// Bytes written by a printer, shared with the [`Cells`] that reads them.
#[derive(Clone, Default)]
struct Buffer(Rc<RefCell<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One piece of what a notebook cell shows, in order: its kind (`text`,
/// `error`, `event`, `svg`, `html`, `markdown`) and its content.
pub type Piece = (&'static str, String);

/// A value handed to the host: its shape (`[]` for a number) and its
/// elements, row-major.
pub type Array = (Vec<usize>, Vec<f64>);

/// The pieces a cell shows, shared by the printer's two streams and its
/// [`Printer::show`] hook.
#[derive(Clone, Default)]
struct Pieces(Rc<RefCell<Vec<Piece>>>);

impl Pieces {
    /// Adds `content` of `kind`: to the last piece when that is text of the
    /// same kind, else as a new piece.
    fn push(&self, kind: &'static str, content: &str) {
        let mut pieces = self.0.borrow_mut();
        match pieces.last_mut() {
            Some((last, text)) if *last == kind && matches!(kind, "text" | "error") => {
                text.push_str(content);
            }
            _ => pieces.push((kind, content.to_string())),
        }
    }
}

/// A stream of the rich printer: its bytes become `text` pieces (standard
/// output) or `error` pieces (errors with their carets).
struct Stream {
    pieces: Pieces,
    kind: &'static str,
}

impl Write for Stream {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.pieces.push(self.kind, &String::from_utf8_lossy(bytes));
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Why [`Cells::grad`] has no gradient.
#[derive(Debug)]
pub enum GradError {
    /// There is no variable of this name.
    NoVariable(String),
    /// The gradient cannot be had (`of` not of shape `()`, the memory
    /// budget, Ctrl-C): the session's error, with its code and help.
    Session(SessionError),
}

/// A gradcalc session with its two printers: JSON Lines for `Session.run`,
/// the terminal's text (and pictures whole) for cells. One call at a time
/// (the host sees to it: the Python object's borrow flag, or the one thread
/// of a WebAssembly module).
pub struct Cells {
    session: Session,
    json: Printer<Buffer, Buffer>,
    json_out: Buffer,
    rich: Printer<Stream, Stream>,
    pieces: Pieces,
}

/// Whether `target` is standard output (`-`): shown in the cell.
fn here(target: Option<&Target>) -> bool {
    target.is_none_or(|t| t.path == "-")
}

/// The notebook's way to show `event`: an SVG picture or plot, the page,
/// a Markdown table, pushed whole to `pieces`; false for what is text.
fn show_rich(
    event: &Event,
    session: &Session,
    pieces: &Pieces,
    precision: &Cell<Precision>,
) -> bool {
    match event {
        Event::Precision { digits } => {
            precision.set(digits.map_or(Precision::Full, Precision::Digits));
            false
        }
        Event::Picture {
            picture,
            format: PictureFormat::Svg,
            target: Some(target),
        } if target.path == "-" => {
            pieces.push("svg", &dot::svg(picture));
            true
        }
        Event::Page {
            page,
            target: Some(target),
        } if target.path == "-" => {
            let style = Style {
                precision: precision.get(),
                ..Style::default()
            };
            pieces.push("html", &html::page(page, &style));
            true
        }
        Event::Plot {
            of,
            wrt,
            at,
            samples,
            target,
        } if here(target.as_ref()) => {
            pieces.push("svg", &plot::svg(of, wrt, f64::from(*at), samples));
            true
        }
        Event::TraceTable {
            of,
            steps: TraceSteps::Nodes { steps, omitted, .. },
            format: TableFormat::Markdown,
            target,
            ..
        } if here(target.as_ref()) => {
            let table = tables::table(
                of,
                session.trace_steps(steps),
                *omitted,
                TableFormat::Markdown,
                precision.get(),
            );
            pieces.push("markdown", &table);
            true
        }
        _ => false,
    }
}

/// `tensor` as an [`Array`].
fn array(tensor: &Tensor) -> Array {
    (tensor.shape().dims().to_vec(), tensor.data().to_vec())
}

impl Cells {
    /// A new session whose files are written as `writes` allows (a
    /// script's rules). With `downloads` (the browser, which has no files of
    /// its own), files are not written but kept for [`Cells::take_downloads`].
    pub fn new(writes: WritePolicy, downloads: bool) -> Cells {
        let json_out = Buffer::default();
        let mut json = Printer::new(Format::Json, json_out.clone(), json_out.clone());
        json.writes = writes.clone();
        let pieces = Pieces::default();
        let stream = |kind| Stream {
            pieces: pieces.clone(),
            kind,
        };
        let style = Style {
            color: true,
            ..Style::default()
        };
        let mut rich = Printer::new(Format::Human(style), stream("text"), stream("error"));
        rich.writes = writes;
        if downloads {
            json.downloads = Some(Vec::new());
            rich.downloads = Some(Vec::new());
        }
        let events = pieces.clone();
        rich.error_events = Some(Box::new(move |event| events.push("event", event)));
        let shown = pieces.clone();
        let precision = Cell::new(Precision::default());
        rich.show = Some(Box::new(move |event, session| {
            show_rich(event, session, &shown, &precision)
        }));
        Cells {
            session: Session::new(),
            json,
            json_out,
            rich,
            pieces,
        }
    }

    /// The session, to set its budgets.
    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// Runs `source` (named `origin` in errors) as `gradcalc --json` runs a
    /// file: the JSON Lines it writes, one event a line. After Ctrl-C (the
    /// flag of [`crate::interrupt`]) the running statement is undone (a
    /// `:repeat` keeps its finished steps) and the lines of the statements
    /// before it are returned all the same.
    pub fn run_json(&mut self, source: &str, origin: &str) -> String {
        self.json_out.0.borrow_mut().clear();
        let _ = driver::run(
            &mut self.session,
            &mut self.json,
            source.as_bytes(),
            origin,
            None,
            SCRIPT,
        );
        let bytes = std::mem::take(&mut *self.json_out.0.borrow_mut());
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Runs `source` as [`Cells::run_json`] does, shown as the terminal shows
    /// it (ANSI colour when `color`): the pieces in order, kind `text`,
    /// `error` (an error with its caret and help), `event` (right after an
    /// error: its JSON object, docs/json.md), `svg` (`:svg -`, `:plot`),
    /// `html` (`:html -`: the page) or `markdown` (`:trace md`). After
    /// Ctrl-C, the pieces shown before it (an interrupted `:repeat`'s steps).
    pub fn run_rich(&mut self, source: &str, origin: &str, color: bool) -> Vec<Piece> {
        if let Format::Human(style) = &mut self.rich.format {
            style.color = color;
        }
        self.pieces.0.borrow_mut().clear();
        let _ = driver::run(
            &mut self.session,
            &mut self.rich,
            source.as_bytes(),
            origin,
            None,
            SCRIPT,
        );
        std::mem::take(&mut *self.pieces.0.borrow_mut())
    }

    /// The files the runs since the last call would have written (only with
    /// `downloads`, see [`Cells::new`]), as (name, content), in order.
    pub fn take_downloads(&mut self) -> Vec<(String, String)> {
        let mut files = Vec::new();
        for printer_files in [&mut self.json.downloads, &mut self.rich.downloads]
            .into_iter()
            .flatten()
        {
            files.append(printer_files);
        }
        files
    }

    /// The value of the variable `name`: shape `[]` and one element for a
    /// number, `[n]` for a vector, `[m, n]` for a matrix, the elements
    /// row-major; `None` when there is no variable `name`. A tensor variable
    /// hides a number of the same name.
    pub fn value(&self, name: &str) -> Option<Array> {
        if let Some(tensor) = self.session.tensor_variable(name) {
            return Some(array(tensor));
        }
        let id = self.session.variable(name)?;
        Some((Vec::new(), vec![self.session.graph().value(id)]))
    }

    /// ∂of/∂wrt now, of `wrt`'s shape, as [`Cells::value`] gives a value: by
    /// one backward pass from `of` (zeros where `of` does not depend on
    /// `wrt` as it is now).
    ///
    /// Errors: [`GradError::NoVariable`] naming a variable that does not
    /// exist; [`GradError::Session`] when the gradient cannot be had.
    pub fn grad(&self, of: &str, wrt: &str) -> Result<Array, GradError> {
        let node = |name: &str| {
            self.session
                .variable(name)
                .ok_or_else(|| GradError::NoVariable(name.to_string()))
        };
        if self.session.tensor_variable(of).is_none() {
            node(of)?;
        }
        if self.session.tensor_variable(wrt).is_none() {
            node(wrt)?;
        }
        if let Some(gradient) = self.session.gradient_now(of, wrt) {
            return gradient.map(|g| array(&g)).map_err(GradError::Session);
        }
        let (output, input) = (node(of)?, node(wrt)?);
        let graph = self.session.graph();
        let order = graph.topo_order(output);
        Ok((Vec::new(), vec![graph.backward(&order).get(input)]))
    }

    /// The variables, in the order first assigned (numbers, then tensors),
    /// each with its shape (`[]` for a number).
    pub fn names(&self) -> Vec<(String, Vec<usize>)> {
        let tensors: Vec<(String, Vec<usize>)> = self
            .session
            .tensor_variables()
            .map(|(name, value)| (name.to_string(), value.shape().dims().to_vec()))
            .collect();
        let numbers = self
            .session
            .variable_names()
            .filter(|name| self.session.tensor_variable(name).is_none())
            .map(|name| (name.to_string(), Vec::new()));
        numbers.chain(tensors).collect()
    }

    /// The page `:html` writes for the current output (the graph and the
    /// backward pass stepped), or why there is none (the message).
    pub fn page(&mut self) -> Result<String, String> {
        match self.session.page() {
            Ok(page) => Ok(html::page(&page, &Style::default())),
            Err(error) => Err(error.to_string()),
        }
    }
}

/// The statement `name := literal` that sets the leaf `name` to the value of
/// `shape` (`[]`, `[n]` or `[m, n]`) and row-major `elements`, each number
/// written so that it reads back exactly (`nan`, `inf` as the language
/// spells them).
///
/// Errors (the message): `name` is not one name (the statement would not
/// be one assignment to it), or a shape of more than two sizes or of
/// another count of elements.
pub fn update_source(name: &str, shape: &[usize], elements: &[f64]) -> Result<String, String> {
    let count: usize = shape.iter().product();
    if shape.len() > 2 || count != elements.len() {
        return Err(format!(
            "gradcalc holds numbers, vectors and matrices: shape {shape:?} with {} elements is none of them",
            elements.len()
        ));
    }
    let numbers: Vec<String> = elements.iter().map(|&x| number(x)).collect();
    let literal = match shape {
        [] => numbers[0].clone(),
        [_] => format!("[{}]", numbers.join(", ")),
        [m, n] => {
            let rows: Vec<String> = if *n == 0 {
                vec!["[]".to_string(); *m]
            } else {
                numbers
                    .chunks(*n)
                    .map(|row| format!("[{}]", row.join(", ")))
                    .collect()
            };
            format!("[{}]", rows.join(", "))
        }
        _ => unreachable!("checked above"),
    };
    let source = format!("{name} := {literal}");
    let mut statements = Statements::new(&source);
    let one_assignment = match (statements.next(), statements.next()) {
        (Some((_, Ok(located))), None) => {
            matches!(&located.statement, Statement::Assign { target, .. } if target.name == name)
        }
        _ => false,
    };
    if !one_assignment {
        return Err(format!(
            "`{name}` is not a variable name: letters, digits and `_`, starting with a letter"
        ));
    }
    Ok(source)
}

/// `x` as gradcalc reads it back exactly: the shortest round trip, and
/// `nan`, `inf`, `-inf` by the language's names.
fn number(x: f64) -> String {
    if x.is_nan() {
        "nan".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{x:?}")
    }
}

/// The notebook's own short commands, and the command each one runs: a
/// notebook shows a page where a terminal would write it.
pub const NOTEBOOK_COMMANDS: &[(&str, &str)] = &[("show", ":html -")];

/// What a cell runs for `source`, decided by the library's command table
/// (never by a command's name or an error's wording): each statement that is
/// a command writing a file it requires (`writes` and a required
/// [`Arg::File`] in its row: `:svg`, `:html`, `:save`), given none, gets
/// ` -` after its last word, shown in the cell; a notebook command
/// ([`NOTEBOOK_COMMANDS`]) alone becomes the command it stands for.
/// Everything else (comments, `;`, statements that do not parse, which then
/// report their error) is kept as it is.
pub fn cell_source(source: &str) -> String {
    // (byte offset, text to insert there, bytes of the source it replaces)
    let mut edits: Vec<(usize, &str, usize)> = Vec::new();
    for (span, parsed) in Statements::new(source) {
        let Ok(located) = parsed else { continue };
        let Statement::Command { name, args } = &located.statement else {
            continue;
        };
        if let Some((_, command)) = NOTEBOOK_COMMANDS.iter().find(|(n, _)| *n == name.name) {
            if args.is_empty() {
                edits.push((span.start, command, span.end - span.start));
            }
            continue;
        }
        let Some(spec) = find_command(&name.name) else {
            continue;
        };
        let requires_file = spec
            .params
            .iter()
            .any(|p| p.arg == Arg::File && !p.optional);
        let words: Vec<&str> = args.iter().map(|a| a.name.as_str()).collect();
        if spec.writes && requires_file && next_args(spec, &words).contains(&Arg::File) {
            edits.push((span.end, " -", 0));
        }
    }
    let mut out = String::with_capacity(source.len() + 2 * edits.len());
    let mut at = 0;
    for (offset, text, replaced) in edits {
        out.push_str(&source[at..offset]);
        out.push_str(text);
        at = offset + replaced;
    }
    out.push_str(&source[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_values_and_gradients_of_a_session() {
        let mut cells = Cells::new(WritePolicy::default(), false);
        let out = cells.run_json("x = 2; y = 3; z = x*y + x; :grad x", "<t>");
        let kinds: Vec<String> = out
            .lines()
            .map(|line| {
                serde_json::from_str::<serde_json::Value>(line).unwrap()["kind"].to_string()
            })
            .collect();
        assert_eq!(kinds, ["\"value\"", "\"value\"", "\"value\"", "\"grad\""]);
        // z = x·y + x: ∂z/∂x = y + 1 = 4, ∂z/∂y = x = 2.
        assert_eq!(cells.value("z"), Some((vec![], vec![8.0])));
        assert_eq!(cells.grad("z", "x").unwrap(), (vec![], vec![4.0]));
        assert_eq!(cells.grad("z", "y").unwrap(), (vec![], vec![2.0]));
        assert!(matches!(cells.grad("z", "q"), Err(GradError::NoVariable(name)) if name == "q"));
        // h = W v = [-1, -1], L = Σh²: ∂L/∂v = Wᵀ 2h = [-8, -12].
        cells.run_json(
            "W = [[1, 2], [3, 4]]; v = [1, -1]; L = sum((W @ v) * (W @ v))",
            "<t>",
        );
        assert_eq!(cells.grad("L", "v").unwrap(), (vec![2], vec![-8.0, -12.0]));
        let names: Vec<(String, Vec<usize>)> = cells.names();
        let shapes: [(&str, &[usize]); 6] = [
            ("x", &[]),
            ("y", &[]),
            ("z", &[]),
            ("W", &[2, 2]),
            ("v", &[2]),
            ("L", &[]),
        ];
        let want: Vec<(String, Vec<usize>)> = shapes
            .iter()
            .map(|(name, shape)| (name.to_string(), shape.to_vec()))
            .collect();
        assert_eq!(names, want);
    }

    #[test]
    fn a_cell_shows_pictures_and_pages_whole_and_errors_with_their_event() {
        let mut cells = Cells::new(WritePolicy::default(), false);
        let source = cell_source("x = 3\ny = x*x\n:svg\n:show\nq = 1 +");
        assert_eq!(source, "x = 3\ny = x*x\n:svg -\n:html -\nq = 1 +");
        let pieces = cells.run_rich(&source, "<cell>", false);
        let kinds: Vec<&str> = pieces.iter().map(|(kind, _)| *kind).collect();
        assert_eq!(kinds, ["text", "svg", "html", "error", "event"]);
        assert_eq!(pieces[0].1, "x = 3\ny = 9\n");
        assert!(pieces[1].1.starts_with("<svg"));
        assert!(pieces[4].1.contains("\"code\":\"parse\""));
    }

    #[test]
    fn downloads_keep_the_files_a_run_would_write() {
        let mut cells = Cells::new(WritePolicy::default(), true);
        let out = cells.run_json("x = 3; y = x*x; :svg graph.svg", "<t>");
        assert!(out.contains("\"kind\":\"wrote\""));
        let files = cells.take_downloads();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, "graph.svg");
        assert!(files[0].1.starts_with("<svg"));
        assert!(cells.take_downloads().is_empty());
    }

    #[test]
    fn update_source_writes_literals_that_read_back() {
        assert_eq!(update_source("x", &[], &[0.1]).unwrap(), "x := 0.1");
        assert_eq!(
            update_source("W", &[2, 2], &[1.0, f64::NAN, f64::INFINITY, -0.5]).unwrap(),
            "W := [[1.0, nan], [inf, -0.5]]"
        );
        assert!(update_source("x; y", &[], &[1.0]).is_err());
        assert!(update_source("x", &[3], &[1.0]).is_err());
    }
}
