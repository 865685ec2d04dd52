//! A refused statement changes nothing: after an error (or a refused file),
//! the variables, their values, the output, `ans` and the graph are as they
//! were, and later commands work on them — each case through the binary.

use serde_json::Value;

use crate::util::{assert_contains, gradcalc, json_lines, stderr_of, stdout_of};
use gradcalc::session::COMMANDS;

/// The statements that set up every case: `y = x²` at `x = 2`, so that
/// ∂y/∂x = 2x = 4, and one step `x := x - 0.1·∂y/∂x` moves x to 1.6.
const SETUP: &str = "x = 2\ny = x^2\n";

/// Runs `script` with `--json --keep-going` in the folder `dir`, and returns
/// its events without their `from` (the statement each came from).
fn events_in(dir: &std::path::Path, script: &str) -> Vec<Value> {
    let output = gradcalc()
        .current_dir(dir)
        .args(["--json", "--keep-going"])
        .write_stdin(script)
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    assert!(!stderr.contains("panicked"), "{stderr}");
    json_lines(&stdout_of(&output))
        .into_iter()
        .map(|mut event| {
            event.as_object_mut().unwrap().remove("from");
            event
        })
        .collect()
}

/// The state a later command sees: `:vars` (names, values, ∂output/∂name),
/// `:grad` and `ans`, as events.
const STATE: &str = ":vars\n:grad\nans\n";

/// Asserts that running `refused` after [`SETUP`] gives one error event with
/// `code` and leaves the state ([`STATE`]) exactly as after [`SETUP`] alone,
/// with no file or folder made in `dir`.
#[track_caller]
fn assert_changes_nothing(dir: &std::path::Path, refused: &str, code: &str) {
    let before = events_in(dir, &format!("{SETUP}{STATE}"));
    let after = events_in(dir, &format!("{SETUP}{refused}\n{STATE}"));
    let errors: Vec<&Value> = after.iter().filter(|e| e["kind"] == "error").collect();
    assert_eq!(errors.len(), 1, "{refused}: {after:#?}");
    assert_eq!(errors[0]["code"], code, "{refused}: {:#?}", errors[0]);
    // Events of the refused statement other than the error (a notice) aside,
    // the state is the same.
    let state = |events: &[Value]| -> Vec<Value> { events[events.len() - 3..].to_vec() };
    assert_eq!(state(&after), state(&before), "{refused} changed the state");
    // ∂y/∂x = 2x at x = 2, and x = 2 itself: independent of gradcalc.
    let vars = &state(&after)[0]["vars"];
    assert_eq!(vars[0]["value"], 2.0);
    assert_eq!(vars[0]["grad"], 4.0);
    let left: Vec<_> = std::fs::read_dir(dir).unwrap().collect();
    assert!(left.is_empty(), "{refused} left {left:?}");
}

/// One use of each command that writes a file (the command table's
/// `writes`), with `FILE` for the file: the table below must name every one,
/// so a new command that writes is added here.
const FILE_COMMANDS: &[(&str, &str)] = &[
    ("trace", ":trace md FILE"),
    ("dot", ":dot FILE"),
    ("svg", ":svg FILE"),
    ("html", ":html FILE"),
    ("plot", ":plot x FILE"),
    ("step", ":step md FILE"),
    ("repeat", ":repeat 3 FILE x := x - 0.1*grad(y, x)"),
    ("descend", ":descend y lr=0.1 steps=3 FILE x"),
    ("save", ":save FILE"),
];

#[test]
fn the_table_names_every_command_that_writes() {
    let writes: Vec<&str> = COMMANDS
        .iter()
        .filter(|c| c.writes)
        .map(|c| c.name)
        .collect();
    let named: Vec<&str> = FILE_COMMANDS.iter().map(|(name, _)| *name).collect();
    assert_eq!(named, writes);
}

/// Every command that takes a file, given one in a folder that does not
/// exist, is refused and changes nothing — `:repeat` included, whose steps
/// ran before its file was refused (x was 1.024 instead of 2).
#[test]
fn a_file_that_cannot_be_written_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for (_, use_) in FILE_COMMANDS {
        // `.svg`: what `:plot` and `:repeat` require, and any name will do
        // for the others.
        for file in ["nodir/f.svg", "-f nodir/f.svg"] {
            let line = use_.replace("FILE", file);
            assert_changes_nothing(dir.path(), &line, "write");
        }
    }
}

/// A script writes only in the current directory: a file elsewhere is
/// refused before `:repeat` runs a step.
#[test]
fn a_script_writing_elsewhere_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let file = elsewhere.path().join("loss.svg");
    let line = format!(":repeat 3 {} x := x - 0.1*grad(y, x)", file.display());
    assert_changes_nothing(dir.path(), &line, "write");
    assert!(!file.exists());
}

/// Statements that fail part-way — after building nodes, binding a name,
/// or moving a leaf — are undone whole.
#[test]
fn a_statement_that_fails_part_way_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for (refused, code) in [
        // Builds x*3 before the unknown name.
        ("z = x*3 + q", "unknown-name"),
        ("x*3 + q", "unknown-name"),
        // The first statement of the step moves x; the second fails.
        (":repeat 2 x := x - 0.1*grad(y, x); w = q", "unknown-name"),
        // Binds t, then fails in the same step.
        (":repeat 2 t = x*5; x := t + q", "unknown-name"),
        // A derivative past the node budget after inner ones were built.
        (
            "g = grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(tanh(x)*sin(x), x), x), x), x), x), x), x), x), x), x), x), x), x)",
            "limit",
        ),
    ] {
        assert_changes_nothing(dir.path(), refused, code);
    }
}

/// The case that found the kind: a failed statement left a node behind, a
/// refused derivative left its inner orders, and the page of the next
/// command read a trace whose ids the collection had moved — a panic that
/// ended the session.
#[test]
fn a_page_after_failed_statements_draws_the_output() {
    let output = gradcalc()
        .args([
            "--keep-going",
            "-e",
            "x = 3; w = 3; w*x + q; y = x*w; g = grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(tanh(x)*sin(x), x), x), x), x), x), x), x), x), x), x), x), x), x); :html -",
        ])
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(1), "two errors: {stderr}");
    let page = stdout_of(&output);
    assert_contains(&page, "</html>");
    // y = x·w = 9 at x = w = 3; ∂y/∂x = w = 3, as the trace's step says.
    assert_contains(&page, "y = x * w = 9");
    assert_contains(&page, "local ∂(x*w)/∂x = w = 3");
}
