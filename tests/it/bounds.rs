//! Matrices under attack (issue 39): inputs that used to lose the session —
//! an empty matrix of 4·10⁹ rows, a literal of millions of numbers, a value
//! and a function of one name — each through the binary, under an
//! address-space limit (`ulimit -v`, as `prlimit --as`) where memory is the
//! point.

use std::process::Output;

use crate::util::{assert_contains, json_lines, stderr_of, stdout_of};

/// The address space the binary reserves before it does anything (its
/// 256 MB main-thread stack and the allocator's arenas; measured: a debug
/// build does not start under 250 MB, does under 300 MB).
const BASE_MB: usize = 320;

/// Runs the binary with `args` and `stdin`, its address space limited to
/// [`BASE_MB`] + `mb` MB and its CPU time to `seconds`.
fn within(mb: usize, seconds: u32, args: &[&str], stdin: &str) -> Output {
    let limit_kb = (BASE_MB + mb) * 1024;
    assert_cmd::Command::new("sh")
        .args([
            "-c",
            &format!("ulimit -v {limit_kb} && ulimit -t {seconds} && exec \"$0\" \"$@\""),
        ])
        .arg(env!("CARGO_BIN_EXE_gradcalc"))
        .args(args)
        .env("NO_COLOR", "1")
        .write_stdin(stdin)
        .output()
        .expect("runs")
}

/// Checks that `output` ended by itself with status 0, no panic.
#[track_caller]
fn succeeded(output: &Output) -> String {
    let (stdout, stderr) = (stdout_of(output), stderr_of(output));
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout: {}\nstderr: {stderr}",
        stdout.chars().take(2000).collect::<String>()
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    stdout
}

#[test]
fn an_empty_matrix_of_four_billion_rows_allocates_nothing() {
    // Its rows were a 68 GB allocation (exit 134); 10⁷ rows took 620 MB and
    // printed 10⁷ lines. Empty, it is `[]` under its shape, in 20 MB.
    let out = succeeded(&within(
        20,
        60,
        &[
            "-e",
            "x = zeros(4294967295, 0); y = zeros(1e7, 0); z = ones(0, 4294967295); v = zeros(0)",
        ],
        "",
    ));
    assert_eq!(
        out,
        "x = 4294967295×0\n   []\ny = 10000000×0\n   []\nz = 0×4294967295\n   []\nv = []  (0)\n"
    );
    let out = succeeded(&within(
        20,
        60,
        &["--json", "-e", "x = zeros(4294967295, 0); zeros(3, 0)"],
        "",
    ));
    let events = json_lines(&out);
    assert_eq!(events.len(), 2, "{out}");
    assert_eq!(events[0]["shape"], serde_json::json!([4294967295u64, 0]));
    assert_eq!(events[0]["value"], serde_json::json!([]));
    // Any empty tensor is `[]` with its shape (docs/json.md), not m empty rows.
    assert_eq!(events[1]["shape"], serde_json::json!([3, 0]));
    assert_eq!(events[1]["value"], serde_json::json!([]));
}

/// `name = [0, 0, …]` of `n` zeros.
fn zeros_literal(name: &str, n: usize) -> String {
    let mut text = format!("{name} = [0");
    text.push_str(&", 0".repeat(n - 1));
    text.push_str("]\n");
    text
}

#[test]
fn a_literal_of_two_million_numbers_parses_in_linear_memory() {
    // pest's queue took some 190 bytes a number (10⁶ zeros: 190 MB); the
    // plain literal's path takes under 64 (its tree, the tensor, the text).
    let n = 2_000_000;
    let mut script = zeros_literal("x", n);
    script.push_str("sum(x + 1)\n");
    let out = succeeded(&within(n * 64 / 1_000_000, 120, &[], &script));
    assert_eq!(out, "x = [0, 0, 0, …, 0, 0, 0]  (2000000)\n2000000\n");
}

#[test]
fn a_large_matrix_literal_with_signs_keeps_every_number() {
    // 300×300, element (i, j) = (-1)^(i+j) · (i + j/1000): known by formula.
    let (m, n) = (300usize, 300usize);
    let element = |i: usize, j: usize| {
        let x = i as f64 + j as f64 / 1000.0;
        if (i + j) % 2 == 1 { -x } else { x }
    };
    let rows: Vec<String> = (0..m)
        .map(|i| {
            let row: Vec<String> = (0..n).map(|j| format!("{}", element(i, j))).collect();
            format!("[{}]", row.join(", "))
        })
        .collect();
    let script = format!("W = [{}]\nsum(W)\nW[299, 298]\nW[1, 0]\n", rows.join(", "));
    let expected: f64 = (0..m)
        .flat_map(|i| (0..n).map(move |j| element(i, j)))
        .sum();
    let out = succeeded(&within(200, 120, &["--json"], &script));
    let events = json_lines(&out);
    let values: Vec<f64> = events.iter().filter_map(|e| e["value"].as_f64()).collect();
    assert_eq!(values.len(), 3, "{out}");
    assert!(
        (values[0] - expected).abs() < 1e-9,
        "{} vs {expected}",
        values[0]
    );
    assert_eq!(values[1], element(299, 298));
    assert_eq!(values[2], -1.0);
}

#[test]
fn a_ragged_or_mixed_large_literal_still_gets_the_grammars_errors() {
    let out = within(200, 60, &[], "W = [[1, 2], [3]]\nv = [1, x]\n");
    let stderr = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_contains(&stderr, "ragged rows");
    let out = within(
        200,
        60,
        &["--keep-going"],
        "x = 2\nv = [1, x]\nv = [1, 2,]\n",
    );
    let stderr = stderr_of(&out);
    assert_contains(&stderr, "the elements of a literal are numbers");
    assert_contains(&stderr, "expected an operand after `,`");
}

#[test]
fn a_name_is_a_value_or_a_function_not_both() {
    for script in [
        "W = [[1, 2], [3, 4]]; W(t) = t^2",
        "v = [1, 2]\nv(t) = t",
        "W(t) = t^2; W = [[1, 2], [3, 4]]",
    ] {
        let out = within(200, 60, &["--keep-going"], &format!("{script}\n:vars\n"));
        let (stdout, stderr) = (stdout_of(&out), stderr_of(&out));
        assert_eq!(out.status.code(), Some(1), "{script}: {stdout} {stderr}");
        assert!(
            stderr.contains("cannot define a function named")
                || stderr.contains("cannot assign to"),
            "{script}: {stderr}"
        );
        // `:vars` lists the one that stands, never both.
        assert!(
            !(stdout.contains("defined W(t)") && stdout.contains("W = ")),
            "{script}: {stdout}"
        );
    }
}

#[test]
fn json_of_a_large_value_is_its_edges_and_json_full_is_every_number() {
    // 2000×1000 = 2·10⁶ numbers, past 2²⁰: `value` null, `edges` the first
    // and last 3 rows of the first and last 3 columns; `--json-full` every
    // number, from which the edges are checked.
    let script = ":seed 7\nW = randn(2000, 1000)\n";
    let summary = json_lines(&succeeded(&within(300, 120, &["--json"], script)));
    let full = json_lines(&succeeded(&within(
        600,
        120,
        &["--json", "--json-full"],
        script,
    )));
    let (summary, full) = (summary.last().unwrap(), full.last().unwrap());
    assert_eq!(summary["shape"], serde_json::json!([2000, 1000]));
    assert!(summary["value"].is_null(), "{summary}");
    let rows = full["value"].as_array().expect("every row");
    assert_eq!(rows.len(), 2000);
    let edges = summary["edges"].as_array().expect("edges");
    assert_eq!(edges.len(), 6);
    for (k, &r) in [0, 1, 2, 1997, 1998, 1999].iter().enumerate() {
        let kept = edges[k].as_array().unwrap();
        assert_eq!(kept.len(), 6);
        for (l, &c) in [0, 1, 2, 997, 998, 999].iter().enumerate() {
            assert_eq!(kept[l], rows[r][c], "row {r}, column {c}");
        }
    }
    // At most 2²⁰ numbers: whole, as before (1024×1024 is exactly 2²⁰).
    let whole = json_lines(&succeeded(&within(
        300,
        120,
        &["--json", "-e", "zeros(1024, 1024)"],
        "",
    )));
    assert_eq!(whole[0]["value"].as_array().map(Vec::len), Some(1024));
}

#[test]
fn json_of_a_4000_square_matrix_stays_small_within_memory() {
    // Its line was 1.7 GB (randn(8000, 8000) aborted); now W and W*W (128 MB
    // each) and the backward pass's gradients fit in 800 MB with the lines.
    let out = succeeded(&within(
        800,
        120,
        &[
            "--json",
            "-e",
            "W = randn(4000, 4000); L = sum(W*W); :grad W",
        ],
        "",
    ));
    assert!(out.len() < 10_000, "{} bytes", out.len());
    let events = json_lines(&out);
    let grad = events.iter().find(|e| e["kind"] == "grad").expect("∂L/∂W");
    // ∂L/∂W = 2W: its edges are twice W's.
    let w = &events[0]["edges"];
    for r in 0..6 {
        for c in 0..6 {
            let (g, x) = (grad["edges"][r][c].as_f64(), w[r][c].as_f64());
            let (g, x) = (g.expect("a number"), x.expect("a number"));
            assert!(
                (g - 2.0 * x).abs() <= 1e-15 * x.abs(),
                "[{r}][{c}]: {g} vs 2·{x}"
            );
        }
    }
}

#[test]
fn topo_of_two_large_products_copies_no_value() {
    // `:topo` of tanh(A*A) at 4600² took 4.47 GB to print 986 bytes; it
    // copies nothing now: at 2000² the three values hold 96 MB, and the
    // process stays within them plus 60 MB.
    let out = succeeded(&within(
        156,
        120,
        &[
            "-e",
            "A = randn(2000, 2000); L = sum(tanh(A*A))",
            "-e",
            ":topo",
        ],
        "",
    ));
    assert!(out.contains("3  A * A"), "{out}");
    assert!(
        out.ends_with("4  A            leaf              2000×2000  —\n"),
        "{out}"
    );
}

#[test]
fn trace_and_steps_of_large_matrices_hold_what_they_show() {
    // `:trace` of sum(tanh(X) * X) kept every step's upstream and
    // contributions whole (at 3000×3000, 920 MB where `:grad X` takes
    // 500 MB), and `:svg --steps` walked twice: at 2000×2000 a debug build
    // needed over 400 MB beyond the base (415 MB resident). Read as the walk
    // runs, the three values (96 MB) and the few gradients the walk holds at
    // once (3 of 32 MB) fit in 340 (measured: 230 MB resident, and it
    // needs between 230 and 300 MB beyond the base).
    let dir = tempfile::tempdir().unwrap();
    let svg = format!(":svg {} --steps", dir.path().display());
    let out = succeeded(&within(
        340,
        300,
        &[
            "--json",
            "-e",
            "X = randn(2000, 2000); L = sum(tanh(X) * X)",
            "-e",
            ":trace",
            "-e",
            &svg,
        ],
        "",
    ));
    let events = json_lines(&out);
    let trace = events
        .iter()
        .find(|e| e["kind"] == "trace")
        .expect("a trace");
    let steps = trace["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "sum, *, tanh");
    // ∂L/∂X = tanh(X) + X ⊙ (1 − tanh(X)²): X's gradient after its second
    // use (tanh's step), at the corners its summary keeps.
    let x = &events[0]["edges"];
    let last = &steps[2]["contributions"][0];
    assert_eq!(last["uses"], serde_json::json!([2, 2]));
    for (r, c) in [(0, 0), (0, 5), (5, 0), (5, 5)] {
        let v = x[r][c].as_f64().unwrap();
        let expected = v.tanh() + v * (1.0 - v.tanh().powi(2));
        let got = last["so_far"]["edges"][r][c].as_f64().unwrap();
        assert!(
            (got - expected).abs() <= 1e-12 * (1.0 + expected.abs()),
            "[{r}][{c}]: {got} vs {expected}"
        );
    }
    // The slides: before the pass and after each of the 3 steps.
    assert_eq!(
        crate::util::file_names(dir.path()),
        [
            "step-000.svg",
            "step-001.svg",
            "step-002.svg",
            "step-003.svg"
        ]
    );
}
