//! The teaching commands through the binary: `:check` on every row of the
//! gradient table, on zero gradients and large values, on a gradient that is
//! not the function's derivative (FAIL), its tolerance shown on each line; a
//! gradient of 0 from an earlier binding explained in `:vars`, `:grad` and
//! `:check`; DOT that Graphviz parses, files written (and not written), paths
//! past the listing limit, and the JSON events of each command.

use serde_json::Value;

use expect_test::expect;

use crate::util::{
    self, assert_contains, folder_with, gradcalc, in_crate, json_events, member, members,
    output_in, output_of,
};

fn examples(name: &str) -> String {
    in_crate("examples").join(name).display().to_string()
}

/// Every row of tests/cases/gradients.tsv with each `:grad NAMES` turned into
/// `:check NAMES`: rows whose gradients are all finite pass, except at kinks —
/// G11 (abs at 0), G12 (max at a tie) and G27 (relu at 0) report "kink".
#[test]
fn check_passes_on_the_gradient_table_and_finds_the_kinks() {
    let table = include_str!("../cases/gradients.tsv");
    let mut failures = Vec::new();
    let mut checked = 0;
    for line in table.lines().skip(1) {
        let fields: Vec<&str> = line.split('\t').collect();
        let (id, input, expected) = (fields[0], fields[1], fields[2]);
        if !input.contains(":grad") || expected.contains("inf") || expected.contains("nan") {
            continue;
        }
        let input = input.replace(":grad", ":check");
        let (events, status) = json_events(&["-e", &input]);
        let verdicts: Vec<&str> = events
            .iter()
            .filter(|e| e["kind"] == "check")
            .map(|e| e["verdict"].as_str().unwrap_or(""))
            .collect();
        checked += verdicts.len();
        let at_kink = matches!(id, "G11" | "G12" | "G27");
        let ok = status == Some(0)
            && !verdicts.is_empty()
            && verdicts
                .iter()
                .all(|v| *v == "pass" || (at_kink && *v == "kink"))
            && (!at_kink || verdicts.contains(&"kink"));
        if !ok {
            failures.push(format!("{id}: {verdicts:?} {events:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 40, "only {checked} checks ran");
}

#[test]
fn a_step_of_floor_is_a_kink_and_a_flat_stretch_passes() {
    // At 1 the step ±h of floor lies within h: the difference quotient sees a jump.
    let (events, _) = json_events(&[
        "-e",
        "x = 1; floor(x) ; :check x ; x = 1.5 ; floor(x) ; :check x",
    ]);
    let verdicts: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "check")
        .map(|e| &e["verdict"])
        .collect();
    assert_eq!(verdicts, ["kink", "pass"]);
}

#[test]
fn dot_parses_with_graphviz_when_it_is_installed() {
    for example in ["neuron.calc", "circuit.calc", "paths.calc"] {
        let output = output_of(&[&examples(example), "-e", ":dot"]);
        assert_eq!(output.status.code(), Some(0));
        let stdout = String::from_utf8_lossy(&output.stdout);
        let dot = &stdout[stdout.find("digraph").expect("DOT printed")..];
        assert!(dot.contains("rankdir=LR") && dot.contains("shape=record"));
        util::graphviz_accepts(dot, example);
    }
}

#[test]
fn files_are_written_and_failures_point_at_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("neuron.svg");
    let dot = dir.path().join("neuron.dot");
    let tex = dir.path().join("trace.tex");
    let plot = dir.path().join("plot.svg");
    let script = format!(
        ":svg {}\n:dot {}\n:trace tex {}\n:plot x1 -1 3 {}\n",
        svg.display(),
        dot.display(),
        tex.display(),
        plot.display()
    );
    let output = output_of(&[&examples("neuron.calc"), "-e", &script]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_contains(&stdout, "wrote the graph as SVG to");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    assert!(
        std::fs::read_to_string(&dot)
            .unwrap()
            .starts_with("digraph")
    );
    let table = std::fs::read_to_string(&tex).unwrap();
    assert!(
        table.contains("\\begin{xltabular}")
            && table.contains("$\\partial o/\\allowbreak \\partial b=")
    );
    assert!(
        std::fs::read_to_string(&plot)
            .unwrap()
            .contains("<polyline")
    );

    // A missing directory: an error at the file name, exit status 1, nothing written.
    let missing = dir.path().join("no/such/dir/graph.dot");
    let output = output_of(&["-e", &format!("x = 2; x*x; :dot {}", missing.display())]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("does not exist") && stderr.contains("mkdir -p"),
        "{stderr}"
    );
    let (events, status) = json_events(&["-e", &format!("x = 2; x*x; :svg {}", missing.display())]);
    assert_eq!(status, Some(1));
    assert!(
        events
            .iter()
            .any(|e| e["kind"] == "error"
                && e["message"].as_str().unwrap().contains("does not exist"))
    );
}

#[test]
fn paths_past_the_limit_are_counted_not_listed() {
    let doublings = "; y = y + y".repeat(9);
    let script = format!("x = 1; y = x + x{doublings}; y; :paths x");
    let stdout = util::stdout_of(&output_of(&["-e", &script]));
    assert_contains(&stdout, "paths from y to x: 1024");
    assert_contains(&stdout, "  64. ");
    assert!(!stdout.contains("  65. "), "{stdout}");
    assert!(stdout.contains("960 more paths not listed; the sum over all paths is ∂y/∂x = 1024"));
    assert!(stdout.contains("grows exponentially"));
}

/// Issue 21: a path too long to list was reported as "1 more paths not
/// listed" with none listed; `x*x` gave two identical lines.
#[test]
fn paths_say_what_is_omitted_and_which_use_each_is() {
    let output = output_of(&["-e", "x = 1; y = x*x; :paths x"]);
    assert_eq!(
        util::stdout_of(&output),
        "x = 1\ny = 1\n\
         paths from y to x: 2 (chain rule: ∂y/∂x is the sum over paths of the product of local derivatives)\n   \
         1. y → x (1st of 2 uses)   1 = 1\n   \
         2. y → x (2nd of 2 uses)   1 = 1\n  \
         sum = 2 = ∂y/∂x   (reverse mode visited each of 2 nodes once)\n"
    );
    let output = output_of(&[
        "-e",
        "x = 1; y = x",
        "-e",
        ":repeat 5000 y = y + 1",
        "-e",
        ":paths x",
    ]);
    let stdout = util::stdout_of(&output);
    let tail: Vec<&str> = stdout.lines().rev().take(3).collect();
    assert_eq!(
        tail,
        [
            "  reverse mode gets that sum by visiting each of the 10001 nodes once; enumerating paths grows exponentially with depth",
            "  the path is too long to list; the sum over all paths is ∂y/∂x = 1",
            "paths from y to x: 1 (chain rule: ∂y/∂x is the sum over paths of the product of local derivatives)",
        ],
        "{stdout}"
    );
    assert!(!stdout.contains("more path"), "{stdout}");
}

/// Issue 21: a reversed `:plot` range was "empty", its ends written with
/// 309 digits; now it is called reversed, in exponent form, with the swap.
#[test]
fn plot_refuses_a_reversed_range_with_short_numbers() {
    let run = |range: &str| {
        let output = output_of(&["-e", "x = 1; y = x", "-e", &format!(":plot x {range}")]);
        assert_eq!(output.status.code(), Some(1));
        util::stderr_of(&output)
    };
    assert_eq!(
        run("1e308 -1e308"),
        "error: the range 1e308 to -1e308 is reversed\n  \
         ┌─ -e #2:1:9\n  │\n\
         1 │ :plot x 1e308 -1e308\n  \
         │         ^^^^^^^^^^^^ give the smaller end first and a narrower range, e.g. `:plot x -1e300 1e300`\n\n"
    );
    assert_eq!(
        run("1e300 -1e300"),
        "error: the range 1e300 to -1e300 is reversed\n  \
         ┌─ -e #2:1:9\n  │\n\
         1 │ :plot x 1e300 -1e300\n  \
         │         ^^^^^^^^^^^^ give the smaller end first: `:plot x -1e300 1e300`\n\n"
    );
}

/// Issue 21: `:repeat N FILE.svg` ran every step, then refused the existing
/// file; now it refuses before the first step, and `x` is unchanged.
#[test]
fn repeat_refuses_an_existing_file_before_running() {
    let (dir, _) = folder_with("a.svg", "mine");
    let output = output_in(
        dir.path(),
        &[
            "--keep-going",
            "-e",
            "x = 1; y = x*x",
            "-e",
            ":repeat 3 a.svg x := x - 0.1*grad(y, x)",
            "-e",
            "x",
        ],
    );
    assert_eq!(util::stdout_of(&output), "x = 1\ny = 1\n1\n");
    assert_eq!(
        util::stderr_of(&output),
        "error: cannot write a.svg: it already exists (not replaced); nothing ran\n  \
         ┌─ -e #2:1:11\n  │\n\
         1 │ :repeat 3 a.svg x := x - 0.1*grad(y, x)\n  \
         │           ^^^^^ add `-f` to replace it: `:repeat 3 -f a.svg x := x - 0.1*grad(y, x)`; or choose another name\n\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.svg")).unwrap(),
        "mine"
    );
}

#[test]
fn every_teaching_command_has_a_json_event() {
    let (events, status) = json_events(&[
        &examples("paths.calc"),
        "-e",
        ":graph\n:forward\n:topo kahn\n:check b\n:paths b\n:dot\n:trace md\n:plot b 0 2",
    ]);
    assert_eq!(status, Some(0));
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["kind"].as_str()).collect();
    for kind in [
        "graph", "forward", "kahn", "check", "paths", "dot", "table", "plot",
    ] {
        assert!(kinds.contains(&kind), "no {kind} event in {kinds:?}");
    }
    let paths = events.iter().find(|e| e["kind"] == "paths").unwrap();
    assert_eq!(paths["count"], 2);
    assert_eq!(paths["gradient"], 5);
    let kahn = events.iter().find(|e| e["kind"] == "kahn").unwrap();
    let b = member(&kahn["nodes"], "name", "b");
    assert_eq!(b["pending"], 2);
    let plot = events.iter().find(|e| e["kind"] == "plot").unwrap();
    assert_eq!(plot["samples"].as_array().unwrap().len(), 241);
}

#[test]
fn a_wide_graph_is_summarised() {
    let mut script = String::from("x = 1; y = max(x");
    for i in 0..200 {
        script.push_str(&format!(", x + {i}"));
    }
    script.push_str("); :graph");
    let output = output_of(&["-e", &script]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines = stdout.lines().count();
    assert!(lines < 80, "{lines} lines:\n{stdout}");
    assert_contains(&stdout, "… 193 more inputs");
}

/// The `check` events of a JSON run, and the run's text lines for the same input.
fn run_checks(input: &str) -> (Vec<Value>, Vec<Value>) {
    let (events, status) = json_events(&["-e", input]);
    assert_eq!(status, Some(0), "{events:?}");
    let checks = events
        .iter()
        .filter(|e| e["kind"] == "check")
        .cloned()
        .collect();
    (checks, events)
}

fn text_lines(input: &str) -> Vec<String> {
    let output = output_of(&["--color", "never", "-e", input]);
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn float(value: &Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {value}"))
}

/// Correct gradients that a purely relative error called FAIL: a true gradient
/// of 0 (the central difference gives about h² = 1e-10 for x³ at 0, and −h²/6
/// for sin(x) − x), and a large x (a step growing with x, 1000 at 1e8, measured
/// nothing of sin). cos(1e8) = −0.36338508935569055… (mpmath, 30 digits).
#[test]
fn check_passes_on_zero_gradients_and_at_large_values() {
    for (input, at, gradient) in [
        ("x = 0; y = x^3; :check", 0.0, 0.0),
        ("x = 0; y = sin(x) - x; :check", 0.0, 0.0),
        ("x = 1e8; y = sin(x); :check", 1e8, -0.363_385_089_355_690_6),
    ] {
        let (checks, events) = run_checks(input);
        assert_eq!(checks.len(), 1, "{input}: {events:?}");
        let check = &checks[0];
        assert_eq!(check["verdict"], "pass", "{input}: {check}");
        assert_eq!(float(&check["at"]), at);
        assert!((float(&check["analytic"]) - gradient).abs() <= 1e-15);
        assert!(
            (float(&check["numeric"]) - gradient).abs() <= 1e-6,
            "{check}"
        );
        // The step stays small however large x is.
        assert!(float(&check["h"]) <= 1e-3, "{check}");
        assert_eq!(float(&check["atol"]), 1e-8);
        assert_eq!(float(&check["rtol"]), 1e-5);
        // The text line says what the verdict rests on.
        let lines = text_lines(input);
        let line = lines.last().unwrap();
        assert!(
            line.contains("|difference|")
                && line.contains("≤ 1e-8 + 0.00001·|central difference|")
                && line.ends_with("pass"),
            "{line}"
        );
    }
    // The exact central difference of x³ at 0 is h² = 1e-10.
    let (checks, _) = run_checks("x = 0; y = x^3; :check");
    assert!((float(&checks[0]["numeric"]) - 1e-10).abs() <= 1e-20);
}

/// `detach(x)·x` at x = 2: reverse mode treats detach(x) as the constant 2, so
/// it gives 2, while the function evaluated is x², whose derivative is 4. The
/// check compares the two and must say FAIL, beyond gradcheck's tolerance.
#[test]
fn a_gradient_that_is_not_the_functions_derivative_fails() {
    let (check, line) = one_check("x = 2; y = detach(x)*x; :check", "fail", 2.0, 4.0);
    assert_eq!((float(&check["atol"]), float(&check["rtol"])), (1e-5, 1e-3));
    assert!(
        line.contains("> 0.00001 + 0.001·|central difference| (gradcheck's tolerance)")
            && line.contains("  FAIL  (x reaches y through detach(…), whose gradient is 0"),
        "{line}"
    );
}

/// The one check of `input` with its verdict, reverse-mode gradient and central
/// difference (to 1e-8) asserted; returns its JSON event and its text line.
fn one_check(input: &str, verdict: &str, analytic: f64, numeric: f64) -> (Value, String) {
    let (checks, _) = run_checks(input);
    let check = checks[0].clone();
    assert_eq!(check["verdict"], verdict, "{check}");
    assert_eq!(float(&check["analytic"]), analytic);
    assert!(
        (float(&check["numeric"]) - numeric).abs() <= 1e-8,
        "{check}"
    );
    (check, text_lines(input).pop().unwrap())
}

/// Between the two tolerances: exp(1000x) at 0 has gradient 1000, and its
/// central difference with h = 1e-5 is 1000·sinh(0.01)/0.01 =
/// 1000.01666675000019841… (mpmath): a difference of 0.0167, more than
/// 1e-8 + 1e-5·1000 = 0.01 but within gradcheck's 1e-5 + 1e-3·1000 = 1.
#[test]
fn a_difference_within_gradchecks_tolerance_only_warns() {
    let input = "x = 0; y = exp(1000*x); :check";
    let (_, line) = one_check(input, "warn", 1000.0, 1_000.016_666_750_000_2);
    assert!(
        line.contains("> 1e-8 + 0.00001·|central difference|, ≤ 0.00001 + 0.001·|central difference| (gradcheck's tolerance)")
            && line.ends_with("warn"),
        "{line}"
    );
}

/// Without names `:check` checks the leaves the output depends on (not derived
/// variables, which `:check NAME` still moves), and a kink only counts where the
/// moved variable reaches it: relu(w) at w = 0 is a kink for w, not for x.
#[test]
fn check_without_names_checks_leaves_and_kinks_are_downstream() {
    let (checks, _) = run_checks("x = 1; w = 0; v = 2*x; y = relu(w) + v*x; :check");
    let verdicts: Vec<(&str, &str)> = checks
        .iter()
        .map(|c| (c["wrt"].as_str().unwrap(), c["verdict"].as_str().unwrap()))
        .collect();
    // y = relu(w) + 2x²: ∂y/∂x = 4x = 4; w sits on relu's kink.
    assert_eq!(verdicts, [("x", "pass"), ("w", "kink")]);
    assert_eq!(float(&checks[0]["analytic"]), 4.0);
    let (checks, _) = run_checks("x = 1; w = 0; v = 2*x; y = relu(w) + v*x; :check v");
    assert_eq!(checks[0]["verdict"], "pass");
    assert_eq!(float(&checks[0]["analytic"]), 1.0); // ∂y/∂v = x
}

/// Past 1000 leaves, `:check` checks the first 1000 and says so.
#[test]
fn check_without_names_stops_at_a_thousand_leaves_and_says_so() {
    let mut input: String = (1..=1001).map(|i| format!("x{i} = {i}\n")).collect();
    input.push_str("s = ");
    input.push_str(
        &(1..=1001)
            .map(|i| format!("x{i}"))
            .collect::<Vec<_>>()
            .join(" + "),
    );
    input.push_str("\n:check\n");
    let (checks, events) = run_checks(&input);
    assert_eq!(checks.len(), 1000);
    assert!(
        checks
            .iter()
            .all(|c| c["verdict"] == "pass" && c["analytic"] == 1)
    );
    assert_eq!(checks[999]["wrt"], "x1000");
    let notice = events.last().unwrap();
    assert_eq!(notice["kind"], "notice");
    assert_eq!(
        notice["message"],
        "checked 1000 of 1001 variables; `:check NAMES` checks others"
    );
}

/// colah's e = (a + b)(b + 1) at a = 2, b = 1, then b = 3: e, c and d still
/// hold the values built from b = 1 (c = 3, d = 2, e = 6; ∂e/∂a = d = 2,
/// ∂e/∂c = d = 2, ∂e/∂d = c = 3), and ∂e/∂b is 0 for the new b. Every place
/// that shows that 0 says why, and `:vars` marks the values built from the old b.
#[test]
fn a_gradient_of_zero_from_an_earlier_binding_is_explained_everywhere() {
    let setup = "a = 2; b = 1; c = a + b; d = b + 1; e = c*d; b = 3";
    let why = "e was built from an earlier b";
    let lines = text_lines(&format!("{setup}; :vars"));
    let vars: Vec<&str> = lines.iter().map(|l| l.trim_end()).collect();
    assert!(vars.contains(&"  a = 2  leaf     ∂e/∂a = 2"), "{vars:?}");
    assert!(vars.contains(&"  b = 3  leaf     ∂e/∂b = 0  (e was built from an earlier b)"));
    assert!(vars.contains(&"  c = 3  derived  (built from an earlier b)  ∂e/∂c = 2"));
    assert!(vars.contains(&"  d = 2  derived  (built from an earlier b)  ∂e/∂d = 3"));
    assert!(vars.contains(&"  e = 6  derived  (built from an earlier b)  ∂e/∂e = 1"));

    let (events, _) = json_events(&["-e", &format!("{setup}; :vars")]);
    let rows = events.last().unwrap()["vars"].as_array().unwrap().clone();
    assert_eq!(rows[1]["name"], "b");
    assert_eq!(rows[1]["note"], why);
    assert_eq!(rows[0]["note"], Value::Null);
    let from: Vec<&Value> = rows.iter().map(|r| &r["built_from_earlier"]).collect();
    let b = serde_json::json!(["b"]);
    assert_eq!(from, [&Value::Null, &Value::Null, &b, &b, &b]);

    // Bare `:grad` lists b with the reason instead of dropping it; so does `:grad b`.
    for command in [":grad", ":grad b"] {
        let (events, _) = json_events(&["-e", &format!("{setup}; {command}")]);
        let b: Vec<&Value> = events
            .iter()
            .filter(|e| e["kind"] == "grad" && e["wrt"] == "b")
            .collect();
        assert_eq!(b.len(), 1, "{command}: {events:?}");
        assert_eq!(b[0]["value"], 0);
        assert_eq!(b[0]["note"], why);
    }
    assert_eq!(
        text_lines(&format!("{setup}; :grad"))
            .last()
            .unwrap()
            .as_str(),
        "∂e/∂d = 3"
    );
    assert!(text_lines(&format!("{setup}; :grad")).contains(&format!("∂e/∂b = 0  ({why})")));

    // `:check b` checks the 0 and says why; bare `:check` checks a and says why b is not checked.
    let (checks, _) = run_checks(&format!("{setup}; :check b"));
    assert_eq!(checks[0]["note"], why);
    assert_eq!(checks[0]["analytic"], 0);
    assert_eq!(checks[0]["numeric"], 0);
    let (checks, events) = run_checks(&format!("{setup}; :check"));
    let wrt: Vec<&Value> = checks.iter().map(|c| &c["wrt"]).collect();
    assert_eq!(wrt, ["a"]);
    assert!(events.iter().any(
        |e| e["kind"] == "notice" && e["message"] == format!("not checked: ∂e/∂b = 0 ({why})")
    ));
    assert!(
        text_lines(&format!("{setup}; :check b"))
            .last()
            .unwrap()
            .ends_with(&format!("pass  ({why})"))
    );
}

#[test]
fn a_path_through_an_edge_that_passes_nothing_contributes_zero_not_nan() {
    // y = sqrt(relu(x)) + x at x = 0: relu passes nothing at 0 (PyTorch's
    // threshold_backward selects), so the path through sqrt's infinite local
    // derivative contributes 0, and ∂y/∂x = 1 from the direct path.
    let (events, status) = json_events(&["-e", "x = 0; y = sqrt(relu(x)) + x; :paths x"]);
    assert_eq!(status, Some(0));
    let paths = events.iter().find(|e| e["kind"] == "paths").unwrap();
    assert_eq!(paths["gradient"], 1.0);
    let products: Vec<f64> = members(&paths["paths"])
        .map(|p| p["product"].as_f64().unwrap())
        .collect();
    assert_eq!(products, [0.0, 1.0]);
    let through_relu = &paths["paths"][0]["edges"];
    assert_eq!(through_relu[1]["local"], "inf");
    assert_eq!(through_relu[2]["passes_nothing"], true);
    // No nan: the path through relu passes nothing, the sum is 1.
    util::check(
        "x = 0; y = sqrt(relu(x)) + x; :paths x",
        expect![[r#"
        x = 0
        y = 0
        paths from y to x: 2 (chain rule: ∂y/∂x is the sum over paths of the product of local derivatives)
           1. y → _2 → _1 → x   _1 passes nothing to x: the path contributes 0
           2. y → x   1 = 1
          sum = 1 = ∂y/∂x   (reverse mode visited each of 4 nodes once)
    "#]],
    );
}

/// `:paths x` after `y = x` and `doublings` times `y = y + y`: 2^doublings paths.
fn paths_of_doublings(doublings: usize) -> String {
    let source = format!("x = 1; y = x{}; :paths x", "; y = y + y".repeat(doublings));
    let output = output_of(&["-e", &source]);
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_path_count_past_the_largest_number_is_said_in_words() {
    // 2^1100 paths: more than f64::MAX ≈ 1.8·10³⁰⁸ (2^1024), so the count overflows.
    let text = paths_of_doublings(1100);
    assert!(
        text.contains("paths from y to x: more than 10³⁰⁸ ("),
        "{text}"
    );
    assert!(!text.contains("inf more"), "{text}");
    // 2^1000 ≈ 1.07·10³⁰¹ paths: still a number.
    let text = paths_of_doublings(1000);
    assert_contains(&text, "paths from y to x: 1.07");
}

#[test]
fn a_plot_range_whose_width_overflows_is_refused() {
    util::check(
        "x = 1; x^2; :plot x -1e308 1e308",
        expect![[r#"
        x = 1
        1
        --- stderr
        error: the range -1e308 to 1e308 is too wide: its width is larger than the largest number (1.7976931348623157e308)
          ┌─ -e:1:21
          │
        1 │ x = 1; x^2; :plot x -1e308 1e308
          │                     ^^^^^^^^^^^^ give a narrower range, e.g. `:plot x -1e300 1e300`

        --- exit status 1
    "#]],
    );
    // Half of each: a width of 1e308 is a number, and the plot is drawn.
    gradcalc()
        .args(["-e", "x = 1; x^2; :plot x -5e307 5e307"])
        .assert()
        .success();
}

/// A range wider than f64::MAX/240: the samples are exactly `lo` and `hi` at
/// the ends and finite between (before, the step (hi − lo)·i overflowed: "from
/// 0 to inf", "inf or nan at 239 of 241 points", "x":"inf" in JSON).
#[test]
fn a_plot_of_a_huge_range_has_finite_samples_and_exact_ends() {
    for (lo, hi) in [(0.0, 1e308), (-1e308, 0.0), (-5e307, 1.2e308)] {
        let (events, status) =
            json_events(&["-e", &format!("x = 1; y = x; :plot x {lo:e} {hi:e}")]);
        assert_eq!(status, Some(0));
        let plot = events.iter().find(|e| e["kind"] == "plot").unwrap();
        let xs: Vec<f64> = members(&plot["samples"]).map(|s| float(&s["x"])).collect();
        assert_eq!(xs.len(), 241);
        assert_eq!((xs[0], xs[240]), (lo, hi));
        // Evenly spaced: sample i is lo + i·(hi − lo)/240 to rounding.
        let width = hi / 240.0 - lo / 240.0;
        for (i, &x) in xs.iter().enumerate() {
            let want = lo + width * i as f64;
            assert!(
                (x - want).abs() <= 1e-12 * hi.abs().max(lo.abs()),
                "{i}: {x:e}"
            );
        }
        let text = text_lines(&format!("x = 1; y = x; :plot x {lo:e} {hi:e}")).join("\n");
        assert!(!text.contains("inf"), "{text}");
    }
    let text = text_lines("x = 1; y = x; :plot x 0 1e308").join("\n");
    assert_contains(&text, "y for x from 0 to 1e308 (x = 1 now)\n");
    assert!(
        text.contains("\n0 ") && text.contains(" 1e308\n"),
        "the x axis: {text}"
    );
}

/// Correct gradients pass at every magnitude: x² (2x), 3x (3), exp(x/1e12)
/// (e^(x/1e12)/1e12) and sin x (cos x) from 1e-300 to 1e300, both signs,
/// where the quotient measures anything. Before, the step was capped at 1e-3
/// for |x| ≥ 100: x² at 1e12 gave a central difference of 1.9929e12 (FAIL), 3x
/// at 1e20 gave 3.2 (FAIL), x² at 1e9 warned. sin x beyond 1e20, where doubles
/// are farther apart than its period, is `unsteady`, never a failure; an
/// overflowing value is `not finite`.
#[test]
fn check_passes_correct_gradients_at_every_magnitude() {
    let mut script = String::new();
    let mut expected = Vec::new();
    for e in (-300..=300).step_by(20) {
        for sign in [1.0, -1.0] {
            let x = sign * 10f64.powi(e);
            for f in ["x^2", "3*x", "exp(x/1e12)", "sin(x)"] {
                script.push_str(&format!("x = {x:?}; y = {f}; :check x\n"));
                expected.push((f, x));
            }
        }
    }
    let (checks, _) = run_checks(&script);
    assert_eq!(checks.len(), expected.len());
    for (check, (f, x)) in checks.iter().zip(expected) {
        let verdict = check["verdict"].as_str().unwrap();
        let allowed: &[&str] = match f {
            "sin(x)" if x.abs() >= 1e20 => &["pass", "unsteady"],
            "exp(x/1e12)" if x > 1e14 => &["not finite"],
            // y = x² overflows to inf.
            "x^2" if x.abs() > 1.3e154 => &["not finite"],
            _ => &["pass"],
        };
        assert!(allowed.contains(&verdict), "{f} at {x:e}: {check}");
    }
    // The step is large enough beside x: exact quotients.
    let (check, _) = one_check("x = 1e12; y = x^2; :check", "pass", 2e12, 2e12);
    assert!(float(&check["h"]) >= 1e6, "{check}");
    one_check("x = 1e20; y = 3*x; :check", "pass", 3.0, 3.0);
    one_check("x = 1e9; y = x^2; :check", "pass", 2e9, 2e9);
    // A wrong gradient still fails there, and a kink is still a kink.
    one_check("x = 1e12; y = detach(x)*x; :check", "fail", 1e12, 2e12);
    one_check("x = 0; y = abs(x); :check", "kink", 0.0, 0.0);
    one_check("x = 1e12; y = relu(x - 1e12); :check", "kink", 0.0, 0.5);
}

/// A correct gradient passes at tiny |x| when the output is not tiny: x + 1
/// at 1e-20 (∂ = 1 exactly), sigmoid at 1e-150 (σ'(0) = 1/4), normcdf at
/// 1e-300 (φ(0) = 1/√(2π)). The step near 0 is a fraction of |x| (right for
/// ln x near its pole), which moves no digit of an output near 1, so the
/// check takes the step 1e-5 there; before, these said FAIL with a central
/// difference of 0.
#[test]
fn a_correct_gradient_passes_at_tiny_x_beside_a_large_output() {
    let cases = [
        ("x = 1e-20; y = x + 1; :check", 1.0),
        ("x = 1e-12; y = x + 1; :check", 1.0),
        ("x = 1e-150; y = sigmoid(x); :check", 0.25),
        (
            "x = 1e-300; y = normcdf(x); :check",
            1.0 / (2.0 * std::f64::consts::PI).sqrt(),
        ),
    ];
    for (input, derivative) in cases {
        let (checks, _) = run_checks(input);
        let check = &checks[0];
        assert_eq!(check["verdict"], "pass", "{input}: {check}");
        assert!(
            (float(&check["numeric"]) - derivative).abs() < 1e-9,
            "{input}: {check}"
        );
        assert!(
            (float(&check["analytic"]) - derivative).abs() < 1e-15,
            "{input}: {check}"
        );
    }
    // ln x next to its pole keeps the small step (a step of 1e-5 at 1e-4
    // would measure 10033, not 10000).
    let (checks, _) = run_checks("x = 1e-4; y = ln(x); :check");
    assert_eq!(checks[0]["verdict"], "pass", "{}", checks[0]);
    assert!(float(&checks[0]["h"]) < 1e-6, "{}", checks[0]);
}
