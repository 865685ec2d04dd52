//! Every row of the shared case tables (copied into tests/cases/), run through the
//! binary as `gradcalc --json -e INPUT`. Each row lists, in order, the value of every
//! statement that prints one and every gradient; `error` means that statement fails
//! with an `error` event and exit status 1.

use assert_cmd::Command;
use serde_json::Value;

/// One expected entry of a row.
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

fn json_number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) if s == "inf" => Some(f64::INFINITY),
        Value::String(s) if s == "-inf" => Some(f64::NEG_INFINITY),
        Value::String(s) if s == "nan" => Some(f64::NAN),
        _ => None,
    }
}

/// Relative tolerance 1e-12, absolute 1e-300 near zero; inf, -inf, nan exact.
fn close(actual: f64, expected: f64) -> bool {
    if expected.is_nan() {
        return actual.is_nan();
    }
    if expected.is_infinite() {
        return actual == expected;
    }
    (actual - expected).abs() <= 1e-12 * expected.abs().max(actual.abs())
        || (actual - expected).abs() <= 1e-300
}

/// Runs one row; returns a description of what went wrong, if anything.
fn check_row(id: &str, input: &str, expected: &str) -> Option<String> {
    let expected = parse_expected(expected);
    let output = Command::cargo_bin("gradcalc")
        .expect("binary builds")
        .args(["--json", "-e", input])
        .output()
        .expect("gradcalc runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let events: Vec<Value> = stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{id}: not JSON: {line:?}: {e}"))
        })
        .filter(|event: &Value| matches!(event["kind"].as_str(), Some("value" | "grad" | "error")))
        .collect();
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
                if !got.is_some_and(|g| close(g, *n)) {
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

/// The numerics rows (N01–N04): overflow in a local derivative, cancellation,
/// and ops that pass nothing where the upstream gradient is infinite.
#[test]
fn accuracy_table() {
    check_table(include_str!("../cases/accuracy.tsv"), 10);
}
