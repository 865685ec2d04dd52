//! One gradcalc session for Python: [`Core`] runs sources through the
//! library's driver, as `gradcalc --json FILE` does (JSON Lines, the events of
//! docs/json.md) or as the terminal shows them (for notebook cells), and
//! answers values and gradients.

use std::cell::{Cell, RefCell};
use std::io::{self, Write};
use std::path::PathBuf;
use std::rc::Rc;

use gradcalc::driver::{self, Options};
use gradcalc::files::WritePolicy;
use gradcalc::interrupt;
use gradcalc::render::{Format, Precision, Printer, Style, dot, html, plot, tables};
use gradcalc::session::{Event, PictureFormat, Session, TableFormat, Target};
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;

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

/// Bytes written by a printer, shared with the [`Core`] that reads them.
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
/// `error`, `svg`, `html`, `markdown`) and its content.
type Piece = (&'static str, String);

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

/// A gradcalc session with its two printers: JSON Lines for
/// `Session.run`, the terminal's text (and pictures whole) for cells.
///
/// Usable from any Python thread, one call at a time: a call from a second
/// thread while one runs raises `RuntimeError` (pyo3's borrow check), never a
/// panic.
#[pyclass(module = "gradcalc._gradcalc")]
pub struct Core {
    session: Session,
    json: Printer<Buffer, Buffer>,
    json_out: Buffer,
    rich: Printer<Stream, Stream>,
    pieces: Pieces,
}

// SAFETY: a `Core` is reached only through its Python object, and pyo3 lets
// a method in only while the calling thread holds the GIL (this module does
// not declare itself free of the GIL, and no method releases it) and the
// object's borrow flag allows it: one thread at a time, each after the
// previous one released the GIL, which orders their memory accesses. The
// `Rc`s inside (the session's caches, the printers' buffers) never leave the
// `Core`, and no state is kept in a thread-local across calls (`PENDING` is
// set and taken within one call), so moving between threads is safe.
unsafe impl Send for Core {}
// SAFETY: as for `Send`: the GIL and the borrow flag keep every access,
// shared or not, to one thread at a time.
unsafe impl Sync for Core {}

/// Empties a buffer when dropped, also when the run that fills it unwinds
/// (a panic inside `Session.run`): the next run returns its own events only.
struct Emptied<'a, T>(&'a RefCell<Vec<T>>);

impl<T> Drop for Emptied<'_, T> {
    fn drop(&mut self) {
        self.0.borrow_mut().clear();
    }
}

thread_local! {
    /// The `KeyboardInterrupt` (or another signal handler's exception) that
    /// stopped the running statement, raised when the run returns.
    static PENDING: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Asks Python whether a signal came (its handlers run here, on the main
/// thread): true when one raised, its exception kept for the caller.
fn python_signals() -> bool {
    Python::attach(|py| match py.check_signals() {
        Ok(()) => false,
        Err(error) => {
            PENDING.with(|pending| *pending.borrow_mut() = Some(error));
            true
        }
    })
}

/// Runs `work` with Python's signals polled as Ctrl-C: the result, or the
/// exception a signal handler raised meanwhile (the work was stopped as
/// after Ctrl-C).
pub(crate) fn polled<T>(work: impl FnOnce() -> T) -> PyResult<T> {
    let result = interrupt::polling(python_signals, work);
    interrupt::clear();
    match PENDING.with(|pending| pending.borrow_mut().take()) {
        Some(error) => Err(error),
        None => Ok(result),
    }
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
            steps,
            omitted,
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

#[pymethods]
impl Core {
    /// A new session. Its files are written as a script's: in the working
    /// directory, or under `allow_writes`, or anywhere with
    /// `allow_writes_anywhere`.
    #[new]
    #[pyo3(signature = (allow_writes = Vec::new(), allow_writes_anywhere = false))]
    fn new(allow_writes: Vec<PathBuf>, allow_writes_anywhere: bool) -> Core {
        let writes = WritePolicy {
            anywhere: allow_writes_anywhere,
            dirs: allow_writes,
            nowhere: false,
        };
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
        let shown = pieces.clone();
        let precision = Cell::new(Precision::default());
        rich.show = Some(Box::new(move |event, session| {
            show_rich(event, session, &shown, &precision)
        }));
        Core {
            session: Session::new(),
            json,
            json_out,
            rich,
            pieces,
        }
    }

    /// Runs `source` (named `origin` in errors) as `gradcalc --json` runs a
    /// file: the JSON Lines it writes. A signal (Ctrl-C, a kernel's
    /// interrupt) stops the running statement, which is undone (a `:repeat`
    /// keeps its finished steps), and raises its exception.
    fn run_json(&mut self, source: &str, origin: &str) -> PyResult<String> {
        self.json_out.0.borrow_mut().clear();
        let _emptied = Emptied(&self.json_out.0);
        let ran = polled(|| {
            driver::run(
                &mut self.session,
                &mut self.json,
                source.as_bytes(),
                origin,
                None,
                SCRIPT,
            )
        });
        let bytes = std::mem::take(&mut *self.json_out.0.borrow_mut());
        ran.map(|_| String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Runs `source` as [`Core::run_json`] does, shown as the terminal shows
    /// it (ANSI colour when `color`): the pieces in order, `(kind, content)`
    /// with kind `text`, `error` (an error with its caret and help), `svg`
    /// (`:svg -`, `:plot`), `html` (`:html -`: the page) or `markdown`
    /// (`:trace md`).
    fn run_rich(&mut self, source: &str, origin: &str, color: bool) -> PyResult<Vec<Piece>> {
        if let Format::Human(style) = &mut self.rich.format {
            style.color = color;
        }
        self.pieces.0.borrow_mut().clear();
        let _emptied = Emptied(&self.pieces.0);
        let ran = polled(|| {
            driver::run(
                &mut self.session,
                &mut self.rich,
                source.as_bytes(),
                origin,
                None,
                SCRIPT,
            )
        });
        let pieces = std::mem::take(&mut *self.pieces.0.borrow_mut());
        ran.map(|_| pieces)
    }

    /// The value of the variable `name`, or `None` when there is none.
    fn value(&self, name: &str) -> Option<f64> {
        let id = self.session.variable(name)?;
        Some(self.session.graph().value(id))
    }

    /// ∂of/∂wrt now, by one backward pass from `of` (0 when `of` does not
    /// depend on `wrt` as it is now).
    ///
    /// Errors: `KeyError` naming a variable that does not exist.
    fn grad(&self, of: &str, wrt: &str) -> PyResult<f64> {
        let node = |name: &str| {
            self.session
                .variable(name)
                .ok_or_else(|| PyKeyError::new_err(format!("no variable `{name}`")))
        };
        let (output, input) = (node(of)?, node(wrt)?);
        let graph = self.session.graph();
        let order = graph.topo_order(output);
        Ok(graph.backward(&order).get(input))
    }

    /// The variables' names.
    fn names(&self) -> Vec<String> {
        self.session.variable_names().map(str::to_string).collect()
    }

    /// The page `:html` writes for the current output (the graph and the
    /// backward pass stepped), or why there is none (`(False, message)`).
    fn page(&mut self) -> (bool, String) {
        match self.session.page() {
            Ok(page) => (true, html::page(&page, &Style::default())),
            Err(error) => (false, error.to_string()),
        }
    }
}
