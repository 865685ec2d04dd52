//! One gradcalc session for Python: [`Core`] runs sources through the
//! library's driver ([`gradcalc::notebook::Cells`], shared with the
//! WebAssembly build that the package uses under Pyodide), as `gradcalc --json FILE` does (JSON Lines, the events of
//! docs/json.md) or as the terminal shows them (for notebook cells), and
//! answers values and gradients, of numbers and of tensors.
//!
//! A statement runs with the GIL released ([`Python::detach`]), so that the
//! interpreter's other threads (a progress widget, a kernel's heartbeat) go
//! on meanwhile; every [`SIGNAL_LOOK`] at most it takes the GIL back for a
//! moment to ask whether SIGINT came.

use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use gradcalc::files::WritePolicy;
use gradcalc::interrupt;
use gradcalc::notebook::{Array, Cells, GradError, Piece};
use gradcalc::session::SessionError;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;

/// A gradcalc session with its two printers ([`Cells`]): JSON Lines for
/// `Session.run`, the terminal's text (and pictures whole) for cells.
///
/// Usable from any Python thread, one call at a time: a call from a second
/// thread while one runs raises `RuntimeError` (pyo3's borrow check), never a
/// panic.
#[pyclass(module = "gradcalc._gradcalc")]
pub struct Core {
    cells: Cells,
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

/// Runs `work` with the GIL released and Python's signals polled as Ctrl-C:
/// its result, and the exception a signal handler raised meanwhile (the
/// Ctrl-C flag cleared).
fn detached<T>(py: Python<'_>, work: impl FnOnce() -> T) -> (T, Option<PyErr>) {
    let work = SameThread(work);
    let result = py.detach(move || {
        let work = work.into_inner();
        SameThread(interrupt::polling(python_signals, work))
    });
    LAST_LOOK.set(None);
    interrupt::clear();
    let stopped = PENDING.with(|pending| pending.borrow_mut().take());
    (result.into_inner(), stopped)
}

/// `error` for Python: a `ValueError` whose arguments are its code, its
/// message and its help (or `None`), which the package turns into its
/// `Error`.
fn session_error(error: &SessionError) -> PyErr {
    PyValueError::new_err((error.code().as_str(), error.to_string(), error.help()))
}

/// The statement `name := literal` that sets the leaf `name` to the value of
/// `shape` (`[]`, `[n]` or `[m, n]`) and row-major `elements`
/// ([`gradcalc::notebook::update_source`]).
///
/// Errors: `ValueError` when `name` is not one name, or for a shape of more
/// than two sizes or of another count of elements.
#[pyfunction]
pub fn update_source(name: &str, shape: Vec<usize>, elements: Vec<f64>) -> PyResult<String> {
    gradcalc::notebook::update_source(name, &shape, &elements).map_err(PyValueError::new_err)
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
        Core {
            cells: Cells::new(writes, false),
        }
    }

    /// Runs `source` (named `origin` in errors) as `gradcalc --json` runs a
    /// file: the JSON Lines it writes, and the exception of a signal (Ctrl-C,
    /// a kernel's interrupt) that stopped the running statement, or `None`.
    /// The stopped statement is undone (a `:repeat` keeps its finished
    /// steps); the lines written before it are returned all the same.
    fn run_json(
        &mut self,
        py: Python<'_>,
        source: &str,
        origin: &str,
    ) -> (String, Option<Py<PyAny>>) {
        let cells = &mut self.cells;
        let (text, stopped) = detached(py, || cells.run_json(source, origin));
        (text, stopped.map(|error| error.into_value(py).into_any()))
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
        let cells = &mut self.cells;
        let (pieces, stopped) = detached(py, || cells.run_rich(source, origin, color));
        (pieces, stopped.map(|error| error.into_value(py).into_any()))
    }

    /// The value of the variable `name` as `(shape, elements)`: shape `[]`
    /// and one element for a number, `[n]` for a vector, `[m, n]` for a
    /// matrix, the elements row-major; `None` when there is no variable
    /// `name`. A tensor variable hides a number of the same name.
    fn value(&self, name: &str) -> Option<Array> {
        self.cells.value(name)
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
        let cells = &self.cells;
        let (gradient, stopped) = detached(py, || cells.grad(of, wrt));
        if let Some(error) = stopped {
            return Err(error);
        }
        gradient.map_err(|error| match error {
            GradError::NoVariable(name) => PyKeyError::new_err(format!("no variable `{name}`")),
            GradError::Session(error) => session_error(&error),
        })
    }

    /// The variables, in the order first assigned (numbers, then tensors),
    /// each with its shape (`[]` for a number).
    fn names(&self) -> Vec<(String, Vec<usize>)> {
        self.cells.names()
    }

    /// The page `:html` writes for the current output (the graph and the
    /// backward pass stepped), or why there is none (`(False, message)`).
    fn page(&mut self) -> (bool, String) {
        match self.cells.page() {
            Ok(page) => (true, page),
            Err(message) => (false, message),
        }
    }
}
