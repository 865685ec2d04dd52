//! How a notebook cell reads its source, decided by the library's command
//! table ([`gradcalc::notebook::cell_source`]): a command that writes a file
//! it requires, given none, shows it in the cell, as if given `-`.

use pyo3::prelude::*;

/// What a cell runs for `source` ([`gradcalc::notebook::cell_source`]):
/// each command writing a file it requires, with no file given, gets ` -`;
/// `:show` alone becomes `:html -`; everything else is kept as it is.
#[pyfunction]
pub fn cell_source(source: &str) -> String {
    gradcalc::notebook::cell_source(source)
}

/// The HTML a notebook shows a page in ([`gradcalc::notebook::frame`]): a
/// sandboxed iframe as wide as the output and as high as the page's graph
/// needs across that width.
#[pyfunction]
pub fn frame(page: &str) -> String {
    gradcalc::notebook::frame(page)
}
