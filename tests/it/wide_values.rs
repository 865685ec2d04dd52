//! Wide vectors and matrices fit the line (docs/repl.md, "Wide values"):
//! rows wider than the width wrap between their elements as numpy's
//! `array2string` wraps them. The expected text is numpy's own printing of
//! the same values (tests/data/wide/, written by scripts/wide_values.py),
//! never gradcalc's output copied back.

use crate::pty::Repl;
use crate::util::{in_crate, output_of, stdout_of};

/// The matrix of scripts/wide_values.py: k/7 for k = ((16 i + j)·37 mod
/// 101) − 50, as a literal (`{:?}` is the shortest round-trip text, as
/// Python's `repr`).
fn matrix_literal() -> String {
    let value = |k: i64| ((k * 37) % 101 - 50) as f64 / 7.0;
    let rows: Vec<String> = (0..16)
        .map(|i| {
            let row: Vec<String> = (0..16)
                .map(|j| format!("{:?}", value(16 * i + j)))
                .collect();
            format!("[{}]", row.join(", "))
        })
        .collect();
    format!("[{}]", rows.join(", "))
}

fn numpy(name: &str) -> String {
    std::fs::read_to_string(in_crate(&format!("tests/data/wide/{name}"))).unwrap()
}

#[test]
fn a_16_by_16_matrix_wraps_as_numpy_wraps_it_at_80_and_100_columns() {
    let statement = format!("W = {}", matrix_literal());
    let at_80 = numpy("matrix_16x16_80.txt");
    let at_100 = numpy("matrix_16x16_100.txt");
    assert_eq!(
        stdout_of(&output_of(&["--width", "80", "-e", &statement])),
        at_80
    );
    assert_eq!(
        stdout_of(&output_of(&["--width", "100", "-e", &statement])),
        at_100
    );
    // Not a terminal, no `--width`: 80 columns.
    assert_eq!(stdout_of(&output_of(&["-e", &statement])), at_80);
    for (text, width) in [(&at_80, 80), (&at_100, 100)] {
        for line in text.lines() {
            assert!(line.chars().count() <= width, "{line:?}");
        }
    }
}

#[test]
fn a_long_vector_wraps_with_its_shape_after_the_last_line() {
    let value = |k: i64| ((k * 37) % 101 - 50) as f64 / 7.0;
    let items: Vec<String> = (0..30).map(|j| format!("{:?}", value(j))).collect();
    let statement = format!("x = [{}]", items.join(", "));
    assert_eq!(
        stdout_of(&output_of(&["-e", &statement])),
        numpy("vector_30_80.txt")
    );
}

#[test]
fn values_that_fit_are_written_as_before() {
    // One line each: a vector unpadded, a matrix's columns each as wide as
    // its widest element (by hand).
    let out = output_of(&["-e", "x = [1, -2.5, 3]\nA = [[1, 2.5], [300, -4]]"]);
    assert_eq!(
        stdout_of(&out),
        "x = [1, -2.5, 3]  (3)\nA = 2×2\n   [[  1, 2.5],\n    [300,  -4]]\n"
    );
}

#[test]
fn vars_of_a_4000_by_4000_matrix_fits_80_columns() {
    let out = output_of(&["-e", "W = randn(4000, 4000);\n:vars"]);
    let text = stdout_of(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "  W (leaf) = 4000×4000", "{text}");
    for line in &lines {
        assert!(line.chars().count() <= 80, "{line:?} in\n{text}");
    }
    // numpy's summary: the first and last 3 rows, each its first and last 3
    // elements around `…` (wrapped in two lines), and a row `…` between.
    let rows: Vec<&&str> = lines
        .iter()
        .filter(|l| l.trim_start().starts_with('['))
        .collect();
    assert_eq!(rows.len(), 6, "{text}");
    assert!(lines.iter().any(|l| l.trim() == "…,"), "{text}");
    for row in rows {
        assert_eq!(row.matches(", ").count(), 3, "{row:?}");
        assert!(row.ends_with("…,"), "{row:?}");
    }
}

#[test]
fn the_repl_lays_values_out_for_the_terminals_width() {
    let state = tempfile::tempdir().unwrap();
    // Started at 80 columns, then the window is made 100 wide: the REPL
    // follows it.
    let mut repl = Repl::start(state.path());
    repl.resize(100, 60);
    repl.send_line(&format!("W = {}", matrix_literal()));
    let at_100 = numpy("matrix_16x16_100.txt");
    // Every line numpy writes at 100 columns, in order, as the REPL shows it.
    for line in at_100.lines().skip(1) {
        repl.expect(line);
    }
    repl.leave();
}

#[test]
fn vars_shapes_lists_names_and_shapes_only() {
    // The shapes by hand: a number is `()`, `zeros(3)` is 3, a 4000×4000
    // leaf, and `W @ ones(4000)` is a vector of 4000.
    let out = output_of(&[
        "-e",
        "x = 2; y = x*3; W = randn(4000, 4000); b = zeros(3); h = W @ ones(4000);\n:vars --shapes",
    ]);
    assert_eq!(
        stdout_of(&out),
        "  x  ()\n  y  ()\n  W  4000×4000\n  b  3\n  h  4000\n"
    );
    let out = output_of(&["--json", "-e", "x = 2; W = zeros(2, 3);\n:vars --shapes"]);
    let events = crate::util::json_lines(&stdout_of(&out));
    let shapes = events.last().unwrap();
    assert_eq!(shapes["kind"], "shapes");
    assert_eq!(
        shapes["vars"],
        serde_json::json!([{"name": "x", "shape": []}, {"name": "W", "shape": [2, 3]}])
    );
    let out = output_of(&["-e", ":vars --shapes"]);
    assert_eq!(
        stdout_of(&out),
        "no variables yet: assign one, e.g. `x = 2`\n"
    );
}
