//! Homework in a notebook: an assignment's problems read without running
//! anything (`gradcalc::homework::assignment`, as `gradcalc --assignment`
//! reads them), a transcript of inputs run in a fresh session and the check
//! that a transcript reproduces (`gradcalc::transcript`, as `gradcalc
//! --transcript` and `--check-transcript` do). The package's `assignment`,
//! `transcript` and `check_transcript` wrap these.

use gradcalc::{homework, transcript};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// The assignment in `source` as a dict: `title` (or None) and `problems`,
/// each a dict of `title`, `text` (its comment lines), `code` (its starting
/// statements, `# (your work here)` where a solution block was), `checks`
/// (each `(quantity, sealed)`), `expects` (its `:expect` lines as
/// written) and `quizzes` (its `:quiz` lines, each a dict of `command`, the
/// line, and `asks`, what it asks in words). Nothing runs.
#[pyfunction]
pub fn assignment_problems<'py>(py: Python<'py>, source: &str) -> PyResult<Bound<'py, PyDict>> {
    let read = homework::assignment(source);
    let problems = PyList::empty(py);
    for problem in read.problems {
        let item = PyDict::new(py);
        item.set_item("title", problem.title)?;
        item.set_item("text", problem.text)?;
        item.set_item("code", problem.code)?;
        item.set_item("checks", problem.checks)?;
        item.set_item("expects", problem.expects)?;
        let quizzes = PyList::empty(py);
        for quiz in problem.quizzes {
            let entry = PyDict::new(py);
            entry.set_item("command", quiz.command)?;
            entry.set_item("asks", quiz.asks)?;
            quizzes.append(entry)?;
        }
        item.set_item("quizzes", quizzes)?;
        problems.append(item)?;
    }
    let out = PyDict::new(py);
    out.set_item("title", read.title)?;
    out.set_item("problems", problems)?;
    Ok(out)
}

/// The transcript of `source` run in a fresh session (every statement, going
/// on after an error): `format` `"jsonl"` (JSON Lines, which
/// `check_transcript` and `gradcalc --check-transcript` rerun) or `"md"`
/// (Markdown for people), with `origin` and `recorded` (RFC 3339) in its
/// head. Errors: another format (ValueError).
#[pyfunction]
pub fn transcript_of(source: &str, origin: &str, recorded: &str, format: &str) -> PyResult<String> {
    let recorded = transcript::record(source, origin, recorded);
    match format {
        "jsonl" => Ok(recorded.json_lines()),
        "md" => Ok(recorded.markdown()),
        other => Err(PyValueError::new_err(format!(
            "a transcript is \"jsonl\" or \"md\", not {other:?}"
        ))),
    }
}

/// Reruns a JSON Lines transcript in a fresh session: a dict of
/// `reproduces` (no statement differs), `statements` (how many ran again),
/// `differences` (each `(statement, text, what differs)`) and the rerun's
/// checks counted (`correct`, `wrong`, `wrong_shape`, `unanswered`,
/// `recorded`). Errors: text that is not a transcript (ValueError, with its
/// line).
#[pyfunction]
pub fn rerun_transcript<'py>(py: Python<'py>, jsonl: &str) -> PyResult<Bound<'py, PyDict>> {
    let rerun = transcript::rerun(jsonl).map_err(PyValueError::new_err)?;
    let out = PyDict::new(py);
    out.set_item("reproduces", rerun.differences.is_empty())?;
    out.set_item("statements", rerun.statements)?;
    out.set_item("differences", rerun.differences)?;
    let t = rerun.tally;
    out.set_item("correct", t.correct)?;
    out.set_item("wrong", t.wrong)?;
    out.set_item("wrong_shape", t.wrong_shape)?;
    out.set_item("unanswered", t.unanswered)?;
    out.set_item("recorded", t.recorded)?;
    Ok(out)
}

/// The key `source` sealed as `gradcalc --seal` seals it: each `:expect`
/// line's value replaced by its salted hash, each solution block by `#
/// (your work here)`. `salts` gives the salts, 16 bytes a line in order
/// (random bytes: `os.urandom`). Errors (ValueError): a statement of the key
/// that fails, a malformed `:expect`, an expected value that does not
/// evaluate, with its line; fewer salts than lines.
#[pyfunction]
pub fn seal_key(source: &str, salts: &[u8]) -> PyResult<String> {
    let mut chunks = salts.chunks_exact(16);
    let mut short = false;
    let sealed = homework::seal(source, || match chunks.next() {
        Some(chunk) => chunk.try_into().unwrap_or([0; 16]),
        None => {
            short = true;
            [0; 16]
        }
    });
    if short {
        return Err(PyValueError::new_err(
            "fewer salts than `:expect` lines: give 16 random bytes a line",
        ));
    }
    sealed.map_err(|error| {
        let (line, column) = gradcalc::render::line_column(source, error.span.start);
        PyValueError::new_err(format!("line {line}, column {column}: {}", error.message))
    })
}
