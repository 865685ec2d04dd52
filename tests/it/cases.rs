//! Every row of the shared case tables (copied into tests/cases/), run through the
//! binary as `gradcalc --json -e INPUT`. Each row lists, in order, the value of every
//! statement that prints one and every gradient; `error` means that statement fails
//! with an `error` event and exit status 1.

use crate::util::{close, gradcalc, json_lines, json_number, stdout_of};

/// One expected entry of a row; numbers within a relative 1e-12 (absolute
/// 1e-300 near zero; inf, -inf, nan exact).
#[derive(Debug)]
enum Expected {
    Number(f64),
    Error,
}

fn parse_expected(text: &str) -> Vec<Expected> {
    text.split(" | ")
        .map(|entry| match entry.trim() {
            "error" => Expected::Error,
            "inf" => Expected::Number(f64::INFINITY),
            "-inf" => Expected::Number(f64::NEG_INFINITY),
            "nan" => Expected::Number(f64::NAN),
            number => Expected::Number(
                number
                    .parse()
                    .unwrap_or_else(|_| panic!("bad expected entry {number:?}")),
            ),
        })
        .collect()
}

/// Runs one row; returns a description of what went wrong, if anything.
fn check_row(id: &str, input: &str, expected: &str) -> Option<String> {
    let expected = parse_expected(expected);
    let output = gradcalc()
        .args(["--json", "-e", input])
        .output()
        .expect("gradcalc runs");
    let stdout = stdout_of(&output);
    let mut events = json_lines(&stdout);
    events.retain(|event| matches!(event["kind"].as_str(), Some("value" | "grad" | "error")));
    let wants_error = expected.iter().any(|e| matches!(e, Expected::Error));
    let status = output.status.code();
    if status != Some(if wants_error { 1 } else { 0 }) {
        return Some(format!("{id}: exit status {status:?}\n{stdout}"));
    }
    if events.len() != expected.len() {
        return Some(format!(
            "{id}: expected {} results, got {}:\n{stdout}",
            expected.len(),
            events.len()
        ));
    }
    for (i, (event, want)) in events.iter().zip(&expected).enumerate() {
        let kind = event["kind"].as_str().unwrap_or("");
        match want {
            Expected::Error if kind == "error" => {
                if event["message"].as_str().is_none_or(str::is_empty)
                    || event["line"].as_u64() != Some(1)
                {
                    return Some(format!(
                        "{id}: entry {i}: error without message or place: {event}"
                    ));
                }
            }
            Expected::Number(n) if kind != "error" => {
                let got = json_number(&event["value"]);
                if !got.is_some_and(|g| close(g, *n, 1e-12)) {
                    return Some(format!("{id}: entry {i}: expected {n}, got {event}"));
                }
            }
            _ => return Some(format!("{id}: entry {i}: expected {want:?}, got {event}")),
        }
    }
    None
}

fn check_table(table: &str, min_rows: usize) {
    let mut failures = Vec::new();
    let mut rows = 0;
    for line in table.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let columns: Vec<&str> = line.split('\t').collect();
        let [id, input, expected, ..] = columns[..] else {
            panic!("malformed row {line:?}");
        };
        rows += 1;
        failures.extend(check_row(id, input, expected));
    }
    assert!(rows >= min_rows, "the table has its rows");
    assert!(
        failures.is_empty(),
        "{} of {rows} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn language_table() {
    check_table(include_str!("../cases/language.tsv"), 20);
}

#[test]
fn gradients_table() {
    check_table(include_str!("../cases/gradients.tsv"), 20);
}

/// The numerics rows (N01–N06): overflow in a local derivative, cancellation
/// (also next to gelu''s root), ops that pass nothing where the upstream
/// gradient is infinite, and local derivatives beyond the f64 range on the way
/// to an ordinary gradient.
#[test]
fn accuracy_table() {
    check_table(include_str!("../cases/accuracy.tsv"), 15);
}
