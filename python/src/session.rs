//! One gradcalc session for Python: [`Core`] runs sources through the
//! library's driver, as `gradcalc --json FILE` does (JSON Lines, the events of
//! docs/json.md) or as the terminal shows them (for notebook cells), and
//! answers values and gradients, of numbers and of tensors.
//!
//! A statement runs with the GIL released ([`Python::detach`]), so that the
//! interpreter's other threads (a progress widget, a kernel's heartbeat) go
//! on meanwhile; every [`SIGNAL_LOOK`] at most it takes the GIL back for a
//! moment to ask whether SIGINT came.

use std::cell::{Cell, RefCell};
use std::io::{self, Write};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use gradcalc::driver::{self, Options};
use gradcalc::engine::tensor::Tensor;
use gradcalc::files::WritePolicy;
use gradcalc::interrupt;
use gradcalc::render::{Format, Precision, Printer, Style, dot, html, plot, tables};
use gradcalc::session::{Event, PictureFormat, Session, SessionError, TableFormat, Target};
use gradcalc::syntax::{Statement, Statements};
use pyo3::exceptions::{PyKeyError, PyValueError};
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
// a method in only when the object's borrow flag allows it (an atomic flag
// for a class that is `Send + Sync`), taken with the GIL held: one thread at
// a time. A run releases the GIL while its statement runs (`detached`) but
// keeps the exclusive borrow meanwhile, on its own thread (`py.detach` runs
// the work where it was called), so no other thread touches the `Core`
// until the run returns; a borrow taken after it, by any thread, is ordered
// after it by the flag and the GIL. The `Rc`s inside (the session's caches,
// the printers' buffers) never leave the `Core`, and no state is kept in a
// thread-local across calls (`PENDING` and `LAST_LOOK` are set and taken
// within one call), so a `Core` may move between threads and be dropped on
// any.
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
    /// When the running statement last asked Python about signals.
    static LAST_LOOK: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// The longest a running statement goes without asking Python whether a
/// signal came. Asking takes the GIL, which a busy Python thread holds for
/// its switch interval (5 ms) and longer on a loaded machine: so not at
/// every poll (every few thousand steps), but often enough that Ctrl-C feels
/// immediate. Measured on a loaded 2-core machine, a descent beside a busy
/// Python thread took 41% longer than beside a busy process when it asked
/// every 20 ms, and no longer when it asked every 100 ms.
pub const SIGNAL_LOOK: Duration = Duration::from_millis(100);

/// Asks Python whether a signal came (its handlers run here, on the main
/// thread), at most once every [`SIGNAL_LOOK`]: true when one raised, its
/// exception kept for the caller.
fn python_signals() -> bool {
    let now = Instant::now();
    if LAST_LOOK
        .get()
        .is_some_and(|last| now.duration_since(last) < SIGNAL_LOOK)
    {
        return false;
    }
    LAST_LOOK.set(Some(now));
    Python::attach(|py| match py.check_signals() {
        Ok(()) => false,
        Err(error) => {
            PENDING.with(|pending| *pending.borrow_mut() = Some(error));
            true
        }
    })
}

/// A value taken into [`Python::detach`]'s closure and back out of it.
/// That closure runs on the calling thread and has returned before
/// `detach` does, so nothing in it (a session's `Rc`s) is ever used from
/// another thread; `detach` asks for `Send` only because it cannot know
/// that.
struct SameThread<T>(T);

// SAFETY: see `SameThread`: the value stays on the thread that made it.
unsafe impl<T> Send for SameThread<T> {}

impl<T> SameThread<T> {
    /// The value (a method, so that a closure captures the whole wrapper).
    fn into_inner(self) -> T {
        self.0
    }
}

/// Runs `work` with the GIL released and Python's signals polled as Ctrl-C
/// (see [`finish_polling`]).
fn detached<T>(py: Python<'_>, work: impl FnOnce() -> T) -> PyResult<T> {
    let work = SameThread(work);
    let result = py.detach(move || {
        let work = work.into_inner();
        SameThread(interrupt::polling(python_signals, work))
    });
    finish_polling(result.into_inner())
}

/// The result of work run under [`interrupt::polling`], or the exception
/// a signal handler raised meanwhile; the Ctrl-C flag cleared.
fn finish_polling<T>(result: T) -> PyResult<T> {
    LAST_LOOK.set(None);
    interrupt::clear();
    match PENDING.with(|pending| pending.borrow_mut().take()) {
        Some(error) => Err(error),
        None => Ok(result),
    }
}

/// A value handed to Python: its shape (`[]` for a number) and its
/// elements, row-major.
type Array = (Vec<usize>, Vec<f64>);

/// `tensor` as an [`Array`].
fn array(tensor: &Tensor) -> Array {
    (tensor.shape().dims().to_vec(), tensor.data().to_vec())
}

/// `error` for Python: a `ValueError` whose arguments are its code, its
/// message and its help (or `None`), which the package turns into its
/// `Error`.
fn session_error(error: &SessionError) -> PyErr {
    PyValueError::new_err((error.code().as_str(), error.to_string(), error.help()))
}

/// The statement `name := literal` that sets the leaf `name` to the value of
/// `shape` (`[]`, `[n]` or `[m, n]`) and row-major `elements`, each number
/// written so that it reads back exactly (`nan`, `inf` as the language
/// spells them).
///
/// Errors: `ValueError` when `name` is not one name (the statement would
/// not be one assignment to it), or for a shape of more than two sizes or
/// of another count of elements.
#[pyfunction]
pub fn update_source(name: &str, shape: Vec<usize>, elements: Vec<f64>) -> PyResult<String> {
    let count: usize = shape.iter().product();
    if shape.len() > 2 || count != elements.len() {
        return Err(PyValueError::new_err(format!(
            "gradcalc holds numbers, vectors and matrices: shape {shape:?} with {} elements is none of them",
            elements.len()
        )));
    }
    let numbers: Vec<String> = elements.iter().map(|&x| number(x)).collect();
    let literal = match shape[..] {
        [] => numbers[0].clone(),
        [_] => format!("[{}]", numbers.join(", ")),
        [_, n] => {
            let rows: Vec<String> = if n == 0 {
                vec!["[]".to_string(); shape[0]]
            } else {
                numbers
                    .chunks(n)
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
        return Err(PyValueError::new_err(format!(
            "`{name}` is not a variable name: letters, digits and `_`, starting with a letter"
        )));
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
        let events = pieces.clone();
        rich.error_events = Some(Box::new(move |event| events.push("event", event)));
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
    fn run_json(&mut self, py: Python<'_>, source: &str, origin: &str) -> PyResult<String> {
        self.json_out.0.borrow_mut().clear();
        let _emptied = Emptied(&self.json_out.0);
        let (session, json) = (&mut self.session, &mut self.json);
        let ran = detached(py, || {
            driver::run(session, json, source.as_bytes(), origin, None, SCRIPT)
        });
        let bytes = std::mem::take(&mut *self.json_out.0.borrow_mut());
        ran.map(|_| String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Runs `source` as [`Core::run_json`] does, shown as the terminal shows
    /// it (ANSI colour when `color`): the pieces in order, `(kind, content)`
    /// with kind `text`, `error` (an error with its caret and help), `event`
    /// (right after an error: its JSON object, docs/json.md), `svg` (`:svg
    /// -`, `:plot`), `html` (`:html -`: the page) or `markdown` (`:trace
    /// md`); and the exception of a signal (Ctrl-C) that stopped it, or
    /// `None`: the pieces shown before it (an interrupted `:repeat`'s steps
    /// kept) are returned too, for the cell to show before it raises.
    fn run_rich(
        &mut self,
        py: Python<'_>,
        source: &str,
        origin: &str,
        color: bool,
    ) -> (Vec<Piece>, Option<Py<PyAny>>) {
        if let Format::Human(style) = &mut self.rich.format {
            style.color = color;
        }
        self.pieces.0.borrow_mut().clear();
        let _emptied = Emptied(&self.pieces.0);
        let (session, rich) = (&mut self.session, &mut self.rich);
        let ran = detached(py, || {
            driver::run(session, rich, source.as_bytes(), origin, None, SCRIPT)
        });
        let pieces = std::mem::take(&mut *self.pieces.0.borrow_mut());
        (
            pieces,
            ran.err().map(|error| error.into_value(py).into_any()),
        )
    }

    /// The value of the variable `name` as `(shape, elements)`: shape `[]`
    /// and one element for a number, `[n]` for a vector, `[m, n]` for a
    /// matrix, the elements row-major; `None` when there is no variable
    /// `name`. A tensor variable hides a number of the same name.
    fn value(&self, name: &str) -> Option<Array> {
        if let Some(tensor) = self.session.tensor_variable(name) {
            return Some(array(tensor));
        }
        let id = self.session.variable(name)?;
        Some((Vec::new(), vec![self.session.graph().value(id)]))
    }

    /// ∂of/∂wrt now, of `wrt`'s shape, as [`Core::value`] gives a value: by
    /// one backward pass from `of` (zeros where `of` does not depend on
    /// `wrt` as it is now).
    ///
    /// Errors: `KeyError` naming a variable that does not exist; a
    /// `ValueError` whose arguments are the error's code, message and help
    /// when the gradient cannot be had (`of` not of shape `()`, the memory
    /// budget, Ctrl-C).
    fn grad(&self, py: Python<'_>, of: &str, wrt: &str) -> PyResult<Array> {
        let node = |name: &str| {
            self.session
                .variable(name)
                .ok_or_else(|| PyKeyError::new_err(format!("no variable `{name}`")))
        };
        if self.session.tensor_variable(of).is_none() {
            node(of)?;
        }
        if self.session.tensor_variable(wrt).is_none() {
            node(wrt)?;
        }
        let session = &self.session;
        let gradient = detached(py, || session.gradient_now(of, wrt))?;
        if let Some(gradient) = gradient {
            return gradient.map(|g| array(&g)).map_err(|e| session_error(&e));
        }
        let (output, input) = (node(of)?, node(wrt)?);
        let graph = self.session.graph();
        let order = graph.topo_order(output);
        Ok((Vec::new(), vec![graph.backward(&order).get(input)]))
    }

    /// The variables, in the order first assigned (numbers, then tensors),
    /// each with its shape (`[]` for a number).
    fn names(&self) -> Vec<(String, Vec<usize>)> {
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
    /// backward pass stepped), or why there is none (`(False, message)`).
    fn page(&mut self) -> (bool, String) {
        match self.session.page() {
            Ok(page) => (true, html::page(&page, &Style::default())),
            Err(error) => (false, error.to_string()),
        }
    }
}
