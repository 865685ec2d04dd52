//! gradcalc's library as the Python module `gradcalc._gradcalc`, which the
//! package `gradcalc` (python/gradcalc/) wraps:
//!
//! - [`Core`]: one gradcalc session, run as `gradcalc --json` runs a source
//!   (`run_json`) or as the terminal shows it, with pictures, pages and
//!   tables handed back whole for a notebook to show (`run_rich`);
//! - [`value::Value`]: micrograd's `Value` on gradcalc's engine, every value a
//!   slot of one shared [`Values`](gradcalc::notebook::values::Values);
//! - the graph of a `Value` written as gradcalc statements
//!   (`gradcalc::notebook::values`), so that its pictures and trace come
//!   from the calculator's own code;
//! - a cell's source as a notebook runs it, read from the command table
//!   (`notebook.rs`);
//! - homework: an assignment's problems, transcripts and their rerun
//!   (`homework.rs`).
//!
//! Ctrl-C (a kernel's interrupt) reaches a running statement through
//! [`gradcalc::interrupt::polling`]: every poll asks Python whether SIGINT
//! came, and the statement stops as after Ctrl-C in the terminal, the session
//! kept; the `KeyboardInterrupt` is raised when the run returns. The GIL is
//! released while a statement runs.

mod homework;
mod notebook;
mod session;
mod value;

use pyo3::prelude::*;

/// The module: the session core, `Value`, the graph of a `Value` as
/// gradcalc source, the statement that sets a leaf, and a cell's source.
#[pymodule]
fn _gradcalc(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<session::Core>()?;
    module.add_class::<value::Value>()?;
    module.add_function(wrap_pyfunction!(value::value_source, module)?)?;
    module.add_function(wrap_pyfunction!(value::arena_nodes, module)?)?;
    module.add_function(wrap_pyfunction!(session::update_source, module)?)?;
    module.add_function(wrap_pyfunction!(notebook::cell_source, module)?)?;
    module.add_function(wrap_pyfunction!(homework::assignment_problems, module)?)?;
    module.add_function(wrap_pyfunction!(homework::transcript_of, module)?)?;
    module.add_function(wrap_pyfunction!(homework::rerun_transcript, module)?)?;
    module.add_function(wrap_pyfunction!(homework::seal_key, module)?)?;
    module.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
