//! Derivatives as values (`grad(y, x)`, `f''(a)`, `:=`, `:repeat`, `:hessian`,
//! `:diff`) through the binary, and the derivative graph's size on the
//! standard workloads W1–W4 (docs/benchmarks.md) through the library.
//!
//! Expected values are derived by hand in the comments (or are mpmath's).

use crate::library::workloads;
use crate::util::{
    assert_contains, check, folder_with, gradcalc, json_events, json_lines, json_number, members,
    output_of, output_with_stdin, stderr_of, stdout_of,
};

use expect_test::expect;
use gradcalc::engine::Tape;

/// Runs `script` with `-e` and returns stdout; asserts success.
fn run(script: &str) -> String {
    let out = output_of(&["-e", script]);
    assert!(out.status.success(), "{script}: {}", stderr_of(&out));
    stdout_of(&out)
}

/// Runs `script` and returns its JSON lines.
fn json(script: &str) -> Vec<serde_json::Value> {
    json_events(&["-e", script]).0
}

/// The values of the expression statements (events without a name), in order.
fn values(script: &str) -> Vec<f64> {
    json(script)
        .iter()
        .filter(|e| e["kind"] == "value" && e.get("name").is_none())
        .map(|e| number(&e["value"]))
        .collect()
}

/// A JSON number, or `"inf"`, `"-inf"`, `"nan"`.
fn number(v: &serde_json::Value) -> f64 {
    json_number(v).unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The `diff` event of `script` (which ends in a `:diff`).
fn diff_of(script: &str) -> serde_json::Value {
    json(script)
        .into_iter()
        .find(|e| e["kind"] == "diff")
        .unwrap_or_else(|| panic!("no diff event from {script}"))
}

/// `:diff y x` of `y = definition` at `x` prints `want`, and `want` typed
/// back at `x` gives `value` (known by hand).
fn assert_diff_types_back(x: f64, definition: &str, want: &str, value: f64) {
    let setup = format!("x = {x}; y = {definition}");
    let d = diff_of(&format!("{setup}; :diff y x"));
    assert_eq!(d["expression"], want, "d/dx {definition} at {x}");
    let typed = values(&format!("{setup}; {want}"));
    assert_close(typed[0], value, want);
}

fn assert_close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{what}: got {got}, want {want}"
    );
}

#[test]
fn grad_of_a_cube_at_orders_one_to_three() {
    // y = x^3 at 3: 3x^2 = 27, 6x = 18, 6.
    let v = values("x = 3; y = x^3; g = grad(y, x); g; grad(g, x); grad(grad(g, x), x)");
    assert_eq!(v, [27.0, 18.0, 6.0]);
}

#[test]
fn primes_of_user_functions_and_partials() {
    // f(t) = t^3 + sin(t) at 2: f'' = 6t − sin t, f''' = 6 − cos t.
    let v = values(
        "f(t) = t^3 + sin(t); f''(2); f'''(2); h(a, b) = a*b^2; a = 2; b = 5; grad(h(a, b), a); grad(h(a, b), b)",
    );
    assert_close(v[0], 12.0 - 2f64.sin(), "f''(2)");
    assert_close(v[1], 6.0 - 2f64.cos(), "f'''(2)");
    // ∂(ab²)/∂a = b² = 25, ∂/∂b = 2ab = 20.
    assert_eq!(&v[2..], [25.0, 20.0]);
}

#[test]
fn a_derivative_of_a_variable_is_differentiable_with_grad() {
    // f'(x) of f(t) = t^4 is 4x^3; :grad x gives f''(x) = 12x^2 = 48 at 2.
    let out = json("f(t) = t^4; x = 2; d = f'(x); :grad x");
    let grad = out.iter().find(|e| e["kind"] == "grad").unwrap();
    assert_eq!(number(&grad["value"]), 48.0);
}

#[test]
fn kinks_keep_their_conventions_at_higher_orders() {
    // relu'(2) = 1, relu''(2) = 0; relu'(0) = 0 (passes nothing);
    // floor' = 0; abs'' = 0 (sign passes nothing); max' to the winner only.
    let v = values(
        "x = 2; r = grad(relu(x), x); r; grad(r, x); z = 0; grad(relu(z), z); grad(floor(x), x); \
         a = grad(abs(x), x); a; grad(a, x); m = grad(max(x, 1)*x, x); m; grad(m, x)",
    );
    // ∂(max(x,1)·x)/∂x = max + x·1 = 4 at 2; second derivative 2.
    assert_eq!(v, [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 4.0, 2.0]);
}

#[test]
fn update_reruns_the_forward_pass_through_fan_out_and_functions() {
    // c = a*b + b (fan-out of b), d = f(c) with f(t) = t^2; b := 3 at a = 2:
    // c = 9, d = 81; ∂d/∂b = 2c·(a + 1) = 54.
    let out = json("a = 2; b = 1; f(t) = t^2; c = a*b + b; d = f(c); b := 3; c; d; :grad b");
    let updated = out.iter().find(|e| e["kind"] == "updated").unwrap();
    assert_eq!(updated["name"], "b");
    let changed: Vec<(&str, f64, f64)> = members(&updated["changed"])
        .map(|c| {
            (
                c["name"].as_str().unwrap(),
                number(&c["before"]),
                number(&c["after"]),
            )
        })
        .collect();
    assert_eq!(changed, [("c", 3.0, 9.0), ("d", 9.0, 81.0)]);
    let v: Vec<f64> = out
        .iter()
        .filter(|e| e["kind"] == "value" && e.get("name").is_none())
        .map(|e| number(&e["value"]))
        .collect();
    assert_eq!(v, [9.0, 81.0]);
    let grad = out.iter().find(|e| e["kind"] == "grad").unwrap();
    assert_eq!(number(&grad["value"]), 54.0);
}

#[test]
fn update_adds_no_nodes_and_moves_derivative_values() {
    // g = grad(y, x) = 3x^2 follows x: 3 at x = 1; the graph does not grow.
    let out = json("x = 3; y = x^3; g = grad(y, x); :stats; x := 1; x := x + 1; g; :stats");
    let nodes: Vec<&serde_json::Value> = out
        .iter()
        .filter(|e| e["kind"] == "stats")
        .map(|e| &e["nodes"])
        .collect();
    assert_eq!(nodes.len(), 2);
    assert_eq!(nodes[0], nodes[1], "no node added by :=");
    assert_eq!(
        values("x = 3; y = x^3; g = grad(y, x); x := 1; g; y"),
        [3.0, 1.0]
    );
}

#[test]
fn update_of_a_computed_value_is_refused_with_a_hint() {
    // c = a + b is no leaf: `:=` says so, at the `c`, and how to do either
    // thing that may have been meant.
    check(
        "a = 1; b = 2; c = a + b; c := 1",
        expect![[r#"
            a = 1
            b = 2
            c = 3
            --- stderr
            error: `c` is not a leaf: its value is computed from other values, so it cannot be set in place
              ┌─ -e:1:26
              │
            1 │ a = 1; b = 2; c = a + b; c := 1
              │                          ^ change a leaf it is built from with `:=`, or rebind `c` to a new leaf with `c = …` (values built from the old c keep theirs)

            --- exit status 1
        "#]],
    );
}

#[test]
fn repeat_outputs_agree_with_rows_without_an_output() {
    // No `:grad` has chosen an output: each step has none, so `outputs` says
    // null as `rows[].output` does (it said "nan"); x goes 1 → inf → nan.
    let out = json("x = 1; :repeat 3 x := x - ln(x-1)");
    let repeat = out.iter().find(|e| e["kind"] == "repeat").unwrap();
    assert_eq!(repeat["of"], serde_json::Value::Null);
    let rows = repeat["rows"].as_array().unwrap();
    let outputs = repeat["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 4);
    for (row, output) in rows.iter().zip(outputs) {
        assert_eq!(row["output"], serde_json::Value::Null);
        assert_eq!(*output, serde_json::Value::Null);
    }
    assert_eq!(rows[2]["values"][0], "nan");
    // With an output, both say "inf" and "nan" alike.
    let out = json("x = 1; y = x*1; :grad y; :repeat 3 x := x - ln(x-1)");
    let repeat = out.iter().find(|e| e["kind"] == "repeat").unwrap();
    let rows = repeat["rows"].as_array().unwrap();
    let outputs = repeat["outputs"].as_array().unwrap();
    assert_eq!(outputs[1], "inf");
    assert_eq!(outputs[2], "nan");
    for row in rows {
        let step = row["step"].as_u64().unwrap() as usize;
        assert_eq!(row["output"], outputs[step]);
    }
}

#[test]
fn repeat_descends_to_the_minimum() {
    // w ← w − 0.1·2(w − 3): w − 3 shrinks by 0.8 a step; after 50 steps
    // |w − 3| = 3·0.8^50 ≈ 4.3e-5 and L = 9·0.8^100 ≈ 1.8e-9.
    let out = json("w = 0; L = (w - 3)^2; :repeat 50 w := w - 0.1*grad(L, w)\nw; L");
    let v: Vec<f64> = out
        .iter()
        .filter(|e| e["kind"] == "value" && e.get("name").is_none())
        .map(|e| number(&e["value"]))
        .collect();
    assert!((v[0] - 3.0).abs() < 1e-4);
    assert_close(v[0], 3.0 - 3.0 * 0.8f64.powi(50), "w");
    assert!(v[1] < 1e-8);
    let repeat = out.iter().find(|e| e["kind"] == "repeat").unwrap();
    assert_eq!(repeat["steps"], 50);
    // L at step 0 (w = 0) and after each of the 50 steps.
    let outputs = repeat["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 51);
    assert_eq!(number(&outputs[0]), 9.0);
    // A sample of rows from step 0, ending with the last step.
    let rows = repeat["rows"].as_array().unwrap();
    assert!(rows.len() < 50);
    assert_eq!(rows[0]["step"], 0);
    assert_eq!(number(&rows[0]["values"][0]), 0.0);
    assert_eq!(rows.last().unwrap()["step"], 50);
    assert_close(number(&rows[1]["values"][0]), 0.6, "w after one step");
}

#[test]
fn repeat_plots_in_the_terminal_and_refuses_nonsense() {
    let out = run("w = 0; L = (w - 3)^2; :repeat 5 w := w - 0.1*grad(L, w)");
    assert_contains(&out, "L from step 0 to step 5 (5 steps)");
    assert_contains(&out, "0.6");
    for bad in [
        ":repeat",
        ":repeat 0 x := 1",
        ":repeat x x := 1",
        ":repeat 3 :vars",
    ] {
        let out = output_of(&["-e", &format!("x = 1; {bad}")]);
        assert!(!out.status.success(), "{bad}");
    }
}

#[test]
fn a_repeat_that_does_not_parse_asks_nothing_and_runs_nothing() {
    use gradcalc::render::Answer;
    use gradcalc::session::{AskReplace, Event, Session, SessionError};
    use std::cell::Cell;
    use std::rc::Rc;
    // Its statements are parsed with it: the syntax error comes before the
    // question whether to replace its file (it came after).
    let (_dir, plot) = folder_with("r.svg", "old");
    let asked = Rc::new(Cell::new(false));
    let mut session = Session::new();
    let seen = Rc::clone(&asked);
    session.confirm = AskReplace(Some(Box::new(move |_| {
        seen.set(true);
        Answer::Yes
    })));
    let source = format!("x = 1; :repeat 2 {} x := x + 1; y = (\nx", plot.display());
    let mut results = Vec::new();
    let _ = session.run_source(&source, |result| {
        results.push(result);
        std::ops::ControlFlow::Continue(())
    });
    let Err(SessionError::Syntax(error)) = &results[1] else {
        panic!("{:?}", results[1]);
    };
    assert_eq!(error.span().start, source.find('(').unwrap(), "{error:?}");
    assert!(!asked.get());
    assert_eq!(std::fs::read_to_string(&plot).unwrap(), "old");
    // No step ran: x is still 1.
    let Ok(events) = &results[2] else {
        panic!("{:?}", results[2]);
    };
    assert!(
        matches!(&events[..], [Event::Value { value, .. }] if value.number() == Some(1.0)),
        "{events:?}"
    );
}

#[test]
fn hessian_is_the_matrix_of_second_derivatives() {
    // z = x²y + y³·relu(x) + floor(x) at (1, 2): z_xx = 2y = 4, z_xy = 2x + 3y² = 14,
    // z_yy = 6y·relu(x) = 12.
    let out = json("x = 1; y = 2; z = x^2*y + relu(x)*y^3 + floor(x); :hessian");
    let h = out.iter().find(|e| e["kind"] == "hessian").unwrap();
    assert_eq!(h["names"], serde_json::json!(["x", "y"]));
    assert_eq!(h["matrix"], serde_json::json!([[4, 14], [14, 12]]));
    // A linear variable's row is 0, and explained.
    let out = json("x = 1; y = 2; z = x^2 + 3*y; :hessian");
    let h = out.iter().find(|e| e["kind"] == "hessian").unwrap();
    assert_eq!(h["matrix"], serde_json::json!([[2, 0], [0, 0]]));
    assert_eq!(h["zero_rows"].as_array().unwrap().len(), 1);
}

/// The Hessian's heading names its rows and columns, not `a` and `b`, which
/// may be the variables themselves: o = a·b² at (2, 3) has o_aa = 0,
/// o_ab = 2b = 6, o_bb = 2a = 4.
#[test]
fn hessian_heading_cannot_be_read_as_its_variables() {
    check(
        "a = 2; b = 3; o = a*b^2; :hessian",
        expect![[r#"
        a = 2
        b = 3
        o = 18
        Hessian of o: ∂²o/∂row∂column, rows and columns a, b
             a  b
          a  0  6
          b  6  4
    "#]],
    );
}

#[test]
fn diff_prints_an_expression_that_types_back_to_grad() {
    let d = diff_of("x = 2; y = x^3 + sin(x); :diff y x");
    let expression = d["expression"].as_str().unwrap();
    // 3x² + cos x at 2.
    let want = 12.0 + 2f64.cos();
    assert_close(number(&d["value"]), want, "value");
    let typed = values(&format!("x = 2; {expression}"));
    assert_close(typed[0], want, expression);
    assert!(
        !expression.contains("*1") && !expression.contains("+ 0"),
        "{expression}"
    );
    // Other points, typed back against grad(y, x) of the same session.
    for (setup, y, x) in [
        ("x = 0.3; w = -1.5; n = tanh(x*w + 1)", "n", "x"),
        ("a = 1.2; b = 0.7; q = a^b / (1 + exp(-a*b))", "q", "b"),
        ("u = 0.4; v = sigmoid(u)*ln(2 + u^2) - atan(u)", "v", "u"),
    ] {
        let d = diff_of(&format!("{setup}; :diff {y} {x}"));
        let expression = d["expression"].as_str().unwrap();
        let v = values(&format!("{setup}; {expression}; grad({y}, {x})"));
        assert_close(v[0], v[1], expression);
    }
}

/// `:diff` collects like terms: the forms below are derived by hand
/// (d/dx x·x = 2x, d/dx x·x·x = 3x², d/dx (x³ + sin x) = 3x² + cos x,
/// d/dx (x+1)² = 2x + 2, d/dx (x²y + 2x²) = 2xy + 4x, d/dx (x·x − x·x) = 0,
/// d/dx 1/x = −1/x², d/dx sin²x = 2 sin x cos x), and each types back to
/// grad's value at two points.
#[test]
fn diff_collects_like_terms_into_hand_known_forms() {
    for (definition, want) in [
        ("x*x", "2*x"),
        ("x*x*x", "3*x^2"),
        ("x^3 + sin(x)", "3*x^2 + cos(x)"),
        ("(x + 1)*(x + 1)", "2*x + 2"),
        ("x*x*y + 2*x*x", "2*y*x + 4*x"),
        ("x*x - x*x", "0"),
        ("1/x", "-1/x^2"),
        ("sin(x)*sin(x)", "2*sin(x)*cos(x)"),
    ] {
        for point in ["2", "-0.7"] {
            let setup = format!("x = {point}; y = 5; f = {definition}");
            let d = diff_of(&format!("{setup}; :diff f x"));
            let expression = d["expression"].as_str().unwrap();
            assert_eq!(expression, want, "d/dx {definition}");
            let v = values(&format!("{setup}; {expression}; grad(f, x)"));
            assert_close(v[0], v[1], expression);
        }
    }
}

/// At large |x| collecting like terms overflows (`(x/m)^2` becomes
/// `x^2/m^2`, `-x*(-x*φ)` becomes `x^2*φ`, and x² is inf). `:diff` still
/// prints the textbook form (no `detach(max(abs(x), 1))`), with the true
/// value and, where they differ, what the form gives typed back. The values are known by hand: atan' =
/// 1/(1 + x²) is 0 at 1e200 (1e-400 underflows) and 1e-310 at 1e155; asinh' =
/// 1/√(1 + x²) is 1e-155 at 1e155; at -1e200 the second derivatives of gelu
/// ((2 − x²)φ), atan (−2x/(1 + x²)²), asinh (−x/(1 + x²)^1.5) and normpdf
/// ((x² − 1)φ) are all 0 (φ(1e200) and 1e-400 underflow).
#[test]
fn diff_at_large_magnitudes_prints_a_formula_that_types_back_to_its_value() {
    for (setup, of, want) in [
        ("x = 1e200; y = atan(x)", "y", 0.0),
        ("x = 1e155; y = atan(x)", "y", 1e-310),
        ("x = 1e155; y = asinh(x)", "y", 1e-155),
        ("x = -1e200; y = gelu(x); g = grad(y, x)", "g", 0.0),
        ("x = -1e200; y = atan(x); g = grad(y, x)", "g", 0.0),
        ("x = -1e200; y = asinh(x); g = grad(y, x)", "g", 0.0),
        ("x = -1e200; y = normpdf(x); g = grad(y, x)", "g", 0.0),
    ] {
        let d = diff_of(&format!("{setup}; :diff {of} x"));
        let expression = d["expression"].as_str().unwrap();
        let value = number(&d["value"]);
        assert!(
            (value - want).abs() <= 1e-12 * want.abs(),
            "{setup}: value {value}, want {want}"
        );
        // The textbook form, never the graph's stable nodes (a second
        // derivative still shows the first derivative's nodes as `grad`
        // built them).
        assert!(
            setup.contains("grad(")
                || !["detach", "max", "abs"]
                    .iter()
                    .any(|word| expression.contains(word)),
            "{setup}: {expression}"
        );
        let typed = values(&format!("{setup}; {expression}"));
        assert_eq!(typed.len(), 1, "{setup}: {expression}");
        let shown = (!d["formula_value"].is_null()).then(|| number(&d["formula_value"]));
        match shown {
            // Typed back, the formula gives the value printed beside it
            // (below the normal range both may differ: 1e-310 against the 0
            // that `1/(1 + x^2)` gives at 1e155).
            None => {
                let subnormal =
                    typed[0].abs() < f64::MIN_POSITIVE && value.abs() < f64::MIN_POSITIVE;
                assert!(
                    (typed[0] - value).abs() <= 1e-12 * value.abs() || subnormal,
                    "{setup}: {expression} typed back is {}, printed {value}",
                    typed[0]
                );
            }
            // Where the textbook form overflows or cancels (x^2 at 1e155), the
            // screen says what it gives typed back, and that is what it gives.
            Some(shown) => assert!(
                shown == typed[0] || (shown.is_nan() && typed[0].is_nan()),
                "{setup}: {expression} typed back is {}, shown {shown}",
                typed[0]
            ),
        }
    }
    // At small |x| the collected short forms are still printed.
    for (setup, want) in [
        ("x = 0.5; f = x*x", "2*x"),
        ("x = 0.5; f = x^3 + sin(x)", "3*x^2 + cos(x)"),
    ] {
        let d = diff_of(&format!("{setup}; :diff f x"));
        assert_eq!(d["expression"], want, "{setup}");
    }
}

#[test]
fn trace_names_derivative_nodes() {
    // g = grad(x^3, x) = 3*x^2 = 27 at 3, built as nodes (`_6` = x^2), and
    // h = g + 1: ∂h/∂x = 6x = 18. The label of the derivative's nodes is a
    // notice: on stderr in a batch run, beside the trace on stdout.
    check(
        "x = 3; y = x^3; g = grad(y, x); h = g + 1; :trace",
        expect![[r#"
            x = 3
            y = 27
            g = 27
            h = 28
            backward pass from h: 4 nodes in reverse topological order (3 constants not shown); upstream = ∂h/∂node, seeded with 1
            [1] h = g + 1 = 28   upstream 1
                  → g: local ∂(g + 1)/∂g = 1;  1 × 1 = 1;  grad 0 → 1
            [2] g = 3 * _6 = 27   upstream 1
                  → _6: local ∂(3*x^2)/∂(x^2) = 3;  1 × 3 = 3;  grad 0 → 3
            [3] _6 = x ^ 2 = 9   upstream 3
                  → x: local ∂(x^2)/∂x = 2*x = 6;  3 × 6 = 18;  grad 0 → 18
            [4] x leaf = 3   ∂h/∂x = 18
            --- stderr
            note: 3 of these nodes (_3–_7) are grad(y, x): the backward pass recorded as nodes
        "#]],
    );
}

/// The derivative graph of every leaf of W1–W4 (one walk, all leaves at
/// once) has a bounded multiple of the original's nodes, and its values are
/// the backward pass's.
#[test]
fn derivative_graphs_of_the_workloads_are_linear_in_size() {
    let w4 = workloads::W4Data::new(14);
    for (name, n) in [("W1", 1000), ("W2", 1000), ("W3", 1000), ("W4", 14)] {
        let tape = Tape::new();
        let built = workloads::build(&tape, name, n, &w4);
        let original = tape.len();
        let leaves: Vec<_> = built.leaves.iter().map(|v| v.id()).collect();
        let gradients = tape.backward(built.output);
        let output = built.output.id();
        drop(built);
        let mut graph = tape.into_graph();
        let nodes = graph.grad(output, &leaves, usize::MAX).unwrap().results;
        let ratio = (graph.len() - original) as f64 / original as f64;
        println!(
            "{name} n={n}: {original} nodes, derivative graph {} nodes, ratio {ratio:.2}",
            graph.len() - original
        );
        assert!(ratio <= 4.0, "{name}: ratio {ratio}");
        for (&leaf, &node) in leaves.iter().zip(&nodes) {
            let (got, want) = (graph.value(node), gradients[leaf]);
            assert!(
                (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                "{name}: {got} vs {want}"
            );
        }
    }
}

/// The shipped descent scripts run and land where they should: w within 1e-4
/// of 3; the moons MLP classifies its four points by their labels.
#[test]
fn the_descent_examples_converge() {
    let root = env!("CARGO_MANIFEST_DIR");
    let run_file = |name: &str| -> Vec<f64> {
        let out = output_of(&["--json", &format!("{root}/examples/{name}")]);
        assert!(out.status.success(), "{name}");
        json_lines(&stdout_of(&out))
            .into_iter()
            .filter(|e| e["kind"] == "value" && e.get("name").is_none())
            .map(|e| number(&e["value"]))
            .collect()
    };
    let v = run_file("descent.calc");
    // grad(L, w) at 0 is 2(0 − 3) = −6; L = (0 − 3)² = 9 made the output again;
    // then w, L after 50 steps; L'' = 2; L once more before :hessian.
    assert_eq!(v[0], -6.0);
    assert_eq!(v[1], 9.0);
    assert!((v[2] - 3.0).abs() < 1e-4 && v[3] < 1e-8, "{v:?}");
    assert_eq!(v[4], 2.0);
    assert_eq!(v[5], v[3]);
    let v = run_file("moons_descent.calc");
    assert_eq!(v[v.len() - 4..], [1.0, 1.0, -1.0, -1.0]);
}

/// `got` is `want` to 1e-12 relative, or both are 0 where `want` is 0 (the
/// true value underflows: below the smallest subnormal, or subnormal).
fn assert_accurate(got: f64, want: f64, what: &str) {
    let ok = if want == 0.0 {
        got.abs() < 1e-300
    } else {
        (got - want).abs() <= 1e-12 * want.abs()
    };
    assert!(ok, "{what}: got {got:e}, want {want:e}");
}

#[test]
fn second_and_third_derivatives_of_saturating_ops_are_accurate_everywhere() {
    // (op, x, f''(x), f'''(x)): sympy's derivatives of tanh(x), 1/(1 + e^-x),
    // x·(1 + erf(x/√2))/2, ln(1 + e^x), atan(x), asinh(x), evaluated by mpmath
    // at 1500 digits and rounded to f64 (0 where the true value is subnormal or
    // smaller). Closed forms to check a row by hand: gelu'' = φ(x)(2 − x²),
    // gelu''' = φ(x)(x³ − 4x); tanh'' = −2 tanh·sech², sigmoid'' = σ'(1 − 2σ).
    let rows: &[(&str, f64, f64, f64)] = &[
        ("gelu", 0.0, 0.7978845608028654, 0.0),
        ("gelu", 1e-09, 0.7978845608028654, -1.5957691216057308e-09),
        ("gelu", 1e-05, 0.7978845607230769, -1.595769121486048e-05),
        ("gelu", 1e-150, 0.7978845608028654, -1.5957691216057308e-150),
        ("gelu", 1.0, 0.24197072451914334, -0.7259121735574301),
        ("tanh", 1e-09, -2e-09, -2.0),
        ("tanh", 1.0, -0.6397000084492245, 0.6216266807712962),
        ("tanh", 20.0, -3.398683404233271e-17, 6.797366808466542e-17),
        (
            "tanh",
            200.0,
            -1.5321356773712045e-173,
            3.064271354742409e-173,
        ),
        ("sigmoid", 1e-09, -1.25e-10, -0.125),
        ("sigmoid", 1e-150, -1.25e-151, -0.125),
        (
            "sigmoid",
            40.0,
            -4.248354255291589e-18,
            4.248354255291589e-18,
        ),
        ("softplus", 1e-09, 0.25, -1.25e-10),
        ("atan", 1e-09, -2e-09, -2.0),
        ("atan", 1e+100, -2e-300, 0.0),
        ("asinh", 1e-09, -1e-09, -1.0),
    ];
    // Where f'' and f''' are both below the smallest subnormal: 0.
    let underflows = [
        ("tanh", 711.0),
        ("tanh", 1000.0),
        ("sigmoid", 711.0),
        ("sigmoid", 1000.0),
        ("softplus", 745.0),
        ("asinh", 1e+200),
    ]
    .map(|(op, x)| (op, x, 0.0, 0.0));
    for &(op, x, second, third) in rows.iter().chain(&underflows) {
        // Each row holds at −x too, by symmetry: tanh, σ − 1/2, atan and asinh
        // are odd, so f'' is odd and f''' even; gelu and softplus are x/2 plus
        // an even function (gelu(−x) = gelu(x) − x, softplus(−x) =
        // softplus(x) − x), so f'' is even and f''' odd.
        let (second_at_minus, third_at_minus) = match op {
            "gelu" | "softplus" => (second, -third),
            _ => (-second, third),
        };
        for (x, second, third) in [(x, second, third), (-x, second_at_minus, third_at_minus)] {
            let v = values(&format!(
                "x = {x:?}; y = {op}(x); g = grad(y, x); g2 = grad(g, x); g2; grad(g2, x)"
            ));
            assert_accurate(v[0], second, &format!("{op}''({x:e})"));
            assert_accurate(v[1], third, &format!("{op}'''({x:e})"));
        }
    }
}

#[test]
fn gelu_derivatives_at_zero_through_functions_hessian_and_update() {
    // gelu''(0) = 2φ(0) = √(2/π) = 0.7978845608028654.
    let v = values("f(t) = gelu(t); f''(0)");
    assert_accurate(v[0], 0.7978845608028654, "f''(0)");
    let out = json("x = 0; y = gelu(x); :hessian");
    let h = out.iter().find(|e| e["kind"] == "hessian").unwrap();
    assert_accurate(number(&h["matrix"][0][0]), 0.7978845608028654, ":hessian");
    assert_eq!(h["zero_rows"], serde_json::json!([]));
    // gelu'(1) = Φ(1) + φ(1) = 0.8413447460685429 + 0.2419707245191433 (mpmath):
    // the derivative graph built at 0 follows x to 1.
    let v = values("x = 0; y = gelu(x); g = grad(y, x); x := 1; g");
    assert_accurate(v[0], 1.0833154705876864, "gelu'(1) after x := 1");
}

#[test]
fn a_zero_hessian_row_is_explained_truly() {
    // tanh''(711) = −2·tanh·sech² ≈ −2e-617 is below the smallest double, so
    // the row is 0; tanh' does change with x, so "linear" would be false.
    let out = json("x = 711; y = tanh(x); :hessian");
    let h = out.iter().find(|e| e["kind"] == "hessian").unwrap();
    let why = h["zero_rows"][0].as_str().unwrap();
    assert!(!why.contains("linear"), "{why}");
    assert_contains(why, "0 here or smaller than a double can hold");
    // x³ at 0: the second derivative 6x is 0 there, but not constant.
    let out = json("x = 0; y = x^3; :hessian");
    let h = out.iter().find(|e| e["kind"] == "hessian").unwrap();
    assert!(!h["zero_rows"][0].as_str().unwrap().contains("linear"));
}

/// `:gc` keeps a stored derivative's branches: `x := -2` after it still
/// warns that g (built where relu(x) passed gradient, g = w = 3) is stale —
/// the true ∂(relu(x)·w)/∂x at x = -2 is 0 — and the warning names the
/// piecewise node that changed, `relu(x)`, not the leaf `w` the derivative
/// happens to be.
#[test]
fn collection_keeps_the_stale_derivative_warning() {
    for gc in ["", ":gc; "] {
        let script = format!("x = 1; w = 3; y = relu(x)*w; g = grad(y, x); {gc}x := -2; g");
        let (events, status) = json_events(&["-e", &script]);
        assert_eq!(status, Some(0));
        let found: Vec<&str> = events
            .iter()
            .filter(|e| e["kind"] == "warning")
            .map(|e| e["message"].as_str().unwrap())
            .collect();
        assert_eq!(found.len(), 1, "{gc}: {events:?}");
        assert!(
            found[0].starts_with("`grad(y, x)` was built while `relu(x)` took another branch"),
            "{gc}: {found:?}"
        );
        assert_eq!(events.last().unwrap()["value"], 3.0);
    }
}

/// A stored derivative keeps the branch of a piecewise op it was built on;
/// after `:=` moves a leaf so that the op takes another branch, gradcalc
/// warns that the stored value is no longer the derivative (and says nothing
/// while the branch is the one it was built on, or for smooth ops).
#[test]
fn a_stored_derivative_across_a_changed_branch_is_called_stale() {
    let warnings = |events: &[serde_json::Value]| -> Vec<String> {
        events
            .iter()
            .filter(|e| e["kind"] == "warning")
            .map(|e| e["message"].as_str().unwrap().to_string())
            .collect()
    };
    // relu(x) at x = 1: ∂/∂x = 1 (a number: g is a leaf). At x = -1 the true
    // derivative is 0; back at x = 2 it is 1 again.
    let (events, status) =
        crate::util::json_events(&["-e", "x = 1; y = relu(x); g = grad(y, x)", "-e", "x := -1"]);
    assert_eq!(status, Some(0));
    let found = warnings(&events);
    assert_eq!(found.len(), 1, "{events:?}");
    assert!(
        found[0].starts_with("g (`grad(y, x)`) was built while `relu(x)` took another branch"),
        "{found:?}"
    );
    let (events, _) =
        crate::util::json_events(&["-e", "x = 1; y = relu(x); g = grad(y, x)", "-e", "x := 2"]);
    assert!(warnings(&events).is_empty(), "{events:?}");

    // y = x·relu(x) + max(x, 1) at x = 2: g = 2x + 1 = 5. At x = 3 the same
    // branches (g = 7, no warning); at x = 0.5 max takes 1, and the true
    // derivative is 2x = 1, which `grad(y, x)` evaluated again gives.
    let (events, _) = crate::util::json_events(&[
        "-e",
        "x = 2; y = x*relu(x) + max(x, 1); g = grad(y, x)",
        "-e",
        "x := 3",
        "-e",
        "g",
        "-e",
        "x := 0.5",
        "-e",
        "grad(y, x)",
    ]);
    let found = warnings(&events);
    assert_eq!(found.len(), 1, "{events:?}");
    assert!(
        found[0].contains("`max(x, 1)` took another branch"),
        "{found:?}"
    );
    let values: Vec<f64> = events
        .iter()
        .filter(|e| e["kind"] == "value" && e["name"].is_null())
        .map(|e| e["value"].as_f64().unwrap())
        .collect();
    assert_eq!(values, [7.0, 1.0]);

    // A relu beside the path to the variable keeps no branch: ∂(relu(w)·x)/∂x
    // is the value relu(w), which follows `:=` (0 at w = -3, 3 at w = 3).
    let (events, _) = crate::util::json_events(&[
        "-e",
        "x = 2; w = -3; y = relu(w)*x; h = grad(y, x)",
        "-e",
        "w := 3",
        "-e",
        "h",
    ]);
    assert!(warnings(&events).is_empty(), "{events:?}");
    assert_eq!(events.last().unwrap()["value"], 3.0, "{events:?}");

    // A smooth op never warns: x^3 at 2, then at -2 (g = 3x² = 12 both times).
    let (events, _) =
        crate::util::json_events(&["-e", "x = 2; y = x^3; g = grad(y, x)", "-e", "x := -2"]);
    assert!(warnings(&events).is_empty(), "{events:?}");
}

/// The note naming a derivative graph's nodes writes them as node labels
/// (`_3`, which can be typed back), not `#3` (a comment). x = 3; y = x^3 is
/// nodes 0–2 (x, the 3, the power); grad(y, x) appends nodes 3–7.
#[test]
fn the_derivative_note_names_its_nodes_as_labels() {
    let (events, status) =
        crate::util::json_events(&["-e", "x = 3; y = x^3; g = grad(y, x)", "-e", ":topo"]);
    assert_eq!(status, Some(0));
    let notes: Vec<&str> = events
        .iter()
        .filter(|e| e["kind"] == "notice")
        .filter_map(|e| e["message"].as_str())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("of these nodes (_3–_7) are grad(y, x)")),
        "{notes:?}"
    );
    // The labels it names are nodes: _7 is g itself, 3x² = 27.
    let (events, _) =
        crate::util::json_events(&["-e", "x = 3; y = x^3; g = grad(y, x)", "-e", "_7 + 0"]);
    assert_eq!(events.last().unwrap()["value"], 27.0, "{events:?}");
}

/// `f''(y)` is built at its first call and copied by the next ones: the
/// copies give the true values at every point, across kinks (where the copy
/// takes another branch than the first build and is built afresh), after a
/// function is redefined (also one that the differentiated function calls),
/// and with a body that reads a variable of the session.
#[test]
fn derivatives_of_user_functions_are_right_at_every_call() {
    // f'' = 6x + 2·cos(x) − x·sin(x) (by hand; the numbers by Python's math).
    let v = values("f(x) = x^3 + sin(x)*x; f''(0.5); f''(0.7); f''(-1.25)");
    for (got, want) in v
        .iter()
        .zip([4.515452354478644, 5.278731993502593, -8.055586049403946])
    {
        assert_close(*got, want, "f''");
    }
    // relu(x)^2 has second derivative 2 for x > 0 and 0 for x < 0;
    // max(x, x/2)^2 has derivative 2x for x > 0 and x/2 for x < 0.
    let v = values("f(x) = relu(x)^2; f''(1); f''(-1); f''(2); f''(-3)");
    assert_eq!(v, [2.0, 0.0, 2.0, 0.0]);
    let v = values("f(x) = max(x, 0.5*x)^2; f'(1); f'(-2); f'(3); f'(-4)");
    assert_eq!(v, [2.0, -1.0, 6.0, -2.0]);
    // x^x: (x^x)' = x^x·(ln x + 1).
    let v = values("f(x) = x^x; f'(0.3); f'(2.5); f'(0.001)");
    for (got, want) in v
        .iter()
        .zip([-0.1421374904172292, 18.937010536854235, -5.867086577700651])
    {
        assert_close(*got, want, "(x^x)'");
    }
    let v = values("f(x) = x^2; f'(3); f(x) = x^3; f'(3)");
    assert_eq!(
        v,
        [6.0, 27.0],
        "a redefined function is differentiated anew"
    );
    let v = values("g(x) = x^2; h(x) = g(x) + x; h'(1); g(x) = x^3; h'(1)");
    assert_eq!(v, [3.0, 4.0], "so is one whose body calls a redefined one");
    let v = values("a = 2; g(x) = a*x^2; g'(1); a = 3; g'(1)");
    assert_eq!(v, [4.0, 6.0], "a body reading a variable follows it");
}

/// A copied `f''(y)` is the graph a fresh build makes, node for node: its
/// trace and its picture are the same (the fresh one forced by defining f
/// again, which forgets the copy).
#[test]
fn a_copied_derivative_traces_as_a_fresh_one() {
    let f = "f(x) = x^3 + sin(x)*x + max(x, 0.5*x)";
    let copied = run(&format!(
        "{f}; y = 0.1; z = f''(y); y = 0.7; z = f''(y); :trace; :dot"
    ));
    let fresh = run(&format!(
        "{f}; y = 0.1; z = f''(y); {f}; y = 0.7; z = f''(y); :trace; :dot"
    ));
    let without_definitions = |text: &str| text.replace("defined f(x)\n", "");
    assert_eq!(without_definitions(&copied), without_definitions(&fresh));
    assert_contains(&copied, "f''(…)");
}

/// `:diff` caps the characters it writes: a name of 10⁵ characters used six
/// times in ∂y/∂x is refused with the cap and a fix, not printed as 600 kB.
#[test]
fn diff_refuses_a_formula_with_too_many_characters_of_names() {
    let name = "a".repeat(100_000);
    // Through stdin: one argument may not exceed 128 KiB.
    let out = gradcalc()
        .write_stdin(format!(
            "{name} = 0.5; y = {name}*{name}*{name}; :diff y {name}\n"
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.len() < 250_000, "{} bytes", out.stdout.len());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("too large to print: more than 200000 characters even with each part used more than once named once")
            && stderr.contains("use its value: `g = grad(y, "),
        "{}",
        &stderr[..stderr.len().min(2000)]
    );
}

/// `:diff` through relu, max and min lists the derivative's pieces with
/// where each holds, marks the one that holds at the point, and on a kink
/// says what the convention gives there. By hand: d/dx relu(x)·x is 2x for
/// x > 0 and 0 for x < 0 (relu'(0) = 0 gives relu(0) = 0 at x = 0); d/dx
/// max(x, x/2) is 1 for x > x/2 (x > 0) and 0.5 below; d/dx max(x, 1)² is
/// 2x for x > 1 and 0 for x < 1 (the tie at 1 splits: 2·1/2 = 1).
#[test]
fn diff_through_kinks_states_its_pieces_and_where_each_holds() {
    let cases = [
        (
            "x = 2; y = relu(x)*x; :diff y x",
            "∂y/∂x = 0   for x < 0\n∂y/∂x = 2*x   for x > 0  (holds here: = 4 now)\n",
        ),
        (
            "x = 0; y = relu(x)*x; :diff y x",
            "∂y/∂x = 0   for x < 0\n∂y/∂x = 2*x   for x > 0\n  at x = 0, where no piece holds, the convention (`:help grad`) gives ∂y/∂x = relu(x)  (= 0 now)\n",
        ),
        (
            "x = 1; y = max(x, 0.5*x); :diff y x",
            "∂y/∂x = 0.5   for 0.5*x > x\n∂y/∂x = 1   for x > 0.5*x  (holds here: = 1 now)\n",
        ),
        (
            "x = 1; y = max(x, 1)^2; :diff y x",
            "∂y/∂x = 0   for x < 1\n∂y/∂x = 2*x   for x > 1\n  at x = 1, where no piece holds, the convention (`:help grad`) gives ∂y/∂x = max(x, 1)  (= 1 now)\n",
        ),
    ];
    for (script, want) in cases {
        let out = run(script);
        let printed: String = out
            .lines()
            .filter(|l| !l.contains(" = ") || l.contains('∂'))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(printed, want, "{script}");
    }
    // Each piece typed back inside its region gives the hand-known derivative.
    for (setup, holds_where, at, want) in [
        ("y = relu(x)*x", "x < 0", -1.0, 0.0),
        ("y = relu(x)*x", "x > 0", 3.5, 7.0),
        ("y = max(x, 0.5*x)", "0.5*x > x", -2.0, 0.5),
        ("y = max(x, 1)^2", "x < 1", 0.25, 0.0),
        ("y = max(x, 1)^2", "x > 1", 4.0, 8.0),
    ] {
        let d = diff_of(&format!("x = 1; {setup}; :diff y x"));
        let piece = members(&d["pieces"])
            .find(|p| p["holds_where"] == holds_where)
            .unwrap_or_else(|| panic!("{setup}: no piece for {holds_where}: {d}"));
        let expression = piece["expression"].as_str().unwrap();
        let typed = values(&format!("x = {at}; {setup}; {expression}"));
        assert_close(typed[0], want, &format!("{setup} at {at}: {expression}"));
    }
}

/// The property: on inputs with several kinks, every piece `:diff` prints,
/// typed back at the value of x it was found at (`witness`, inside its
/// region) and at that value moved by 1e-3 (still inside: these kinks are
/// farther away), gives the derivative there, checked against reverse mode
/// (`grad`) and against a central difference of y (step 1e-6: smooth inside
/// a piece). The pieces found cover both sides of each kink.
#[test]
fn every_piece_typed_back_inside_its_region_gives_the_derivative() {
    for (setup, count) in [
        ("w = 2; y = min(relu(x*w - 1), x)*x", 3),
        ("y = relu(x) - relu(-x) + max(x, 2)*x", 2),
        ("y = abs(x)*relu(x - 1) + min(x^2, 4)", 4),
        ("y = max(tanh(x), 0.5*x, -1)*exp(x)", 2),
    ] {
        let d = diff_of(&format!("x = 0.3; {setup}; :diff y x"));
        let pieces = d["pieces"].as_array().unwrap();
        assert_eq!(pieces.len(), count, "{setup}: {d}");
        assert_eq!(
            pieces.iter().filter(|p| p["here"] == true).count(),
            1,
            "{setup}"
        );
        for piece in pieces {
            let expression = piece["expression"].as_str().unwrap();
            let witness = number(&piece["witness"]);
            for at in [witness, witness + 1e-3] {
                let h = 1e-6;
                let v = values(&format!(
                    "x = {at}; {setup}; {expression}; grad(y, x); x := {}; y; x := {}; y",
                    at + h,
                    at - h
                ));
                let central = (v[2] - v[3]) / (2.0 * h);
                assert_close(
                    v[0],
                    v[1],
                    &format!("{setup} at {at}: {expression} vs grad"),
                );
                assert!(
                    (v[0] - central).abs() <= 1e-5 * v[0].abs().max(1.0),
                    "{setup} at {at}: {expression} = {} vs central difference {central}",
                    v[0]
                );
            }
        }
    }
}

/// `:diff` writes the constants π, e, ln 2 and ln 10 by name, also when
/// folding made a multiple of one (d/dx πx² = 2πx; d/dx e^(2x) = 2e^(2x),
/// ln e = 1; d/dx log10 x = 1/(x ln 10); d/dx 2^x = 2^x ln 2; d/dx
/// sin(πx/2) = (π/2) cos(πx/2)), and each types back to the hand-known value
/// at the point. A rebound `pi` is not used for π.
#[test]
fn diff_writes_named_constants_not_their_digits() {
    use std::f64::consts::{E, LN_2, LN_10, PI};
    for (x, definition, want, value) in [
        (2.0, "pi*x^2", "2*pi*x", 4.0 * PI),
        (2.0, "e^(2x)", "2*e^(2*x)", 2.0 * E.powi(4)),
        (2.0, "log10(x)", "1/(x*ln(10))", 1.0 / (2.0 * LN_10)),
        (2.0, "2^x", "2^x*ln(2)", 4.0 * LN_2),
        (
            0.5,
            "sin(pi*x/2)",
            "pi/2*cos(pi/2*x)",
            PI / 2.0 * (PI / 4.0).cos(),
        ),
    ] {
        assert_diff_types_back(x, definition, want, value);
    }
    let d = diff_of("pi = 3; x = 2; y = 6.283185307179586*x; :diff y x");
    assert_eq!(d["expression"], "6.283185307179586");
}

/// The printed form does not depend on the point: d/dx (√x·√x) = 1 is `1`
/// at 1.5 and at 0 (where the derivative graph computes 0·inf = nan, said
/// beside it), and d/dx x^x = x^x + x^x·ln x is the same text at 2 and
/// at 0 (where the masks of `^` give the convention's 0 and the form is
/// stated for x ≠ 0). Typed back at 2 it gives 4(1 + ln 2).
#[test]
fn diff_prints_the_same_form_at_every_point() {
    for point in ["1.5", "0", "1e-300", "7"] {
        let out = run(&format!("x = {point}; y = sqrt(x)*sqrt(x); :diff y x"));
        let line = out.lines().find(|l| l.starts_with('∂')).unwrap();
        assert!(
            line.starts_with("∂y/∂x = 1  (= 1 now"),
            "at {point}: {line}"
        );
    }
    check(
        "x = 0; y = sqrt(x)*sqrt(x); :diff y x",
        expect![[r#"
        x = 0
        y = 0
        ∂y/∂x = 1  (= 1 now, where grad(y, x) computes nan: its nodes are undefined here)
    "#]],
    );
    let general = "x^x + x^x*ln(x)";
    // 4(1 + ln 2) = 6.772588722.
    check(
        "x = 2; y = x^x; :diff y x",
        expect![[r#"
        x = 2
        y = 4
        ∂y/∂x = x^x + x^x*ln(x)  (= 6.772588722 now)
    "#]],
    );
    check(
        "x = 0; y = x^x; :diff y x",
        expect![[r#"
        x = 0
        y = 1
        ∂y/∂x = x^x + x^x*ln(x)   for x ≠ 0
          at x = 0, where no piece holds, the convention (`:help grad`) gives ∂y/∂x = 0  (= 0 now)
    "#]],
    );
    let typed = values(&format!("x = 2; {general}"));
    assert_close(typed[0], 4.0 * (1.0 + std::f64::consts::LN_2), general);
}

/// The text of `:diff` is linear in the input: a derivative too large to
/// write out whole names each part used more than once once (`t1 = x + 1`,
/// …), in the order to type them. Typed back (the parts, then the
/// expression) it gives the hand-known derivative: d/dx Π(x + k) = Π(x + k) ·
/// Σ 1/(x + k) for k = 1…50 at 0.5, and for n nested tanh Π (1 − t_k²) with
/// t_0 = x, t_k = tanh(t_{k−1}) (the chain rule), computed here in f64. The
/// text for 1000 nested tanh is at most 2.2 times that for 500.
#[test]
fn diff_of_large_derivatives_names_shared_parts_once() {
    /// The parts and the expression of a `:diff` transcript as statements.
    fn typed_back(setup: &str, out: &str) -> f64 {
        let mut lines: Vec<String> = out
            .lines()
            .skip_while(|l| !l.contains("named once"))
            .skip(1)
            .filter(|l| !l.starts_with('∂'))
            .map(str::to_string)
            .collect();
        let last = out.lines().find(|l| l.starts_with("∂y/∂x = ")).unwrap();
        let expression = last["∂y/∂x = ".len()..].split("  (= ").next().unwrap();
        lines.push(expression.to_string());
        let script = format!("{setup}\n{}\n", lines.join("\n"));
        let out = output_with_stdin(&["--precision", "full", "-"], script);
        assert!(out.status.success(), "{}", stderr_of(&out));
        let text = stdout_of(&out);
        text.lines().last().unwrap().trim().parse().unwrap()
    }
    let product: Vec<String> = (1..=50).map(|k| format!("(x+{k})")).collect();
    let setup = format!("x = 0.5; y = {}", product.join("*"));
    let out = run(&format!("{setup}; :diff y x"));
    assert_contains(&out, "∂y/∂x with ");
    assert_contains(&out, "\nt1 = x + 1\nt2 = x + 2\nt3 = t1*t2\n");
    assert!(out.len() < 10_000, "{} bytes", out.len());
    let p: f64 = (1..=50).map(|k| 0.5 + k as f64).product();
    let s: f64 = (1..=50).map(|k| 1.0 / (0.5 + k as f64)).sum();
    let got = typed_back(&setup, &out);
    assert!((got - p * s).abs() <= 1e-12 * (p * s), "{got} vs {}", p * s);
    let mut sizes = Vec::new();
    for n in [500, 1000] {
        let setup = format!("x = 0.5; y = {}x{}", "tanh(".repeat(n), ")".repeat(n));
        let out = run(&format!("{setup}; :diff y x"));
        assert_contains(&out, "\nt1 = tanh(x)\nt2 = tanh(t1)\n");
        let mut t = 0.5f64;
        let mut want = 1.0;
        for _ in 0..n {
            t = t.tanh();
            want *= 1.0 - t * t;
        }
        let got = typed_back(&setup, &out);
        assert!(
            (got - want).abs() <= 1e-12 * want,
            "n = {n}: {got} vs {want}"
        );
        sizes.push(out.len());
    }
    assert!(sizes[1] as f64 <= 2.2 * sizes[0] as f64, "{sizes:?}");
}

/// Like factors combine: the powers of one base add their exponents, so
/// d/dx x^x = x·x^(x−1) + x^x·ln x (the rule of a^b for both operands) is
/// written `x^x + x^x*ln(x)`, and d/dx x^(x²) = x^(x²)·(x²/x + 2x·ln x) =
/// x^(x² + 1) + 2·x^(x² + 1)·ln x; typed back at 0.7 and 2 they give
/// x^x(1 + ln x) and x^(x²+1)(1 + 2 ln x), computed here.
#[test]
fn diff_combines_powers_of_one_base() {
    for x in [0.7f64, 2.0] {
        for (definition, want, value) in [
            ("x^x", "x^x + x^x*ln(x)", x.powf(x) * (1.0 + x.ln())),
            (
                "x^(x^2)",
                "x^(x^2 + 1) + 2*x^(x^2 + 1)*ln(x)",
                x.powf(x * x + 1.0) * (1.0 + 2.0 * x.ln()),
            ),
        ] {
            assert_diff_types_back(x, definition, want, value);
        }
    }
}

/// Where the pieces cannot be printed (here: the variable is not a leaf, so
/// `:diff` cannot move it), a note says the form holds on the side of the
/// kink taken at the point: d/dh relu(h − 1)·h = h + relu(h − 1) = 4 + 3 at
/// h = 4, for h > 1 only.
#[test]
fn diff_without_pieces_says_it_holds_on_this_side_only() {
    check(
        "x = 2; h = x*x; y = relu(h - 1)*h; :diff y h",
        expect![[r#"
            x = 2
            h = 4
            y = 12
            ∂y/∂h = h + relu(h - 1)  (= 7 now)
            --- stderr
            note: this derivative passes through 1 kink(s) (relu, max, min) and is printed without its pieces: it holds on the side of each kink taken at this point
        "#]],
    );
}

/// At u = ±inf every derivative of every order is its limit where the limit
/// exists (issue 26: atan′, asinh′ and cbrt″ were nan). By hand: a derivative
/// with a finite limit L at inf has every higher derivative tend to 0 (mean
/// value theorem), so atan′ = 1/(1 + u²) → 0, asinh′ = 1/√(u² + 1) → 0,
/// cbrt′ = u^(−2/3)/3 → 0, acosh′ → 0, tanh′, sigmoid′, normcdf′ = φ,
/// normpdf′ = −u·φ(u) → 0, gelu′ = Φ(u) + u·φ(u) → 1 at +inf and 0 at −inf,
/// softplus′ = σ → 1; then 0 at orders 2 and 3. exp and sinh grow without
/// bound: e^u, cosh, sinh → inf (sinh″ → −inf at −inf).
#[test]
fn derivatives_at_infinity_are_their_limits_at_orders_one_to_three() {
    let inf = f64::INFINITY;
    let cases: &[(&str, &str, [f64; 3])] = &[
        ("atan", "inf", [0.0; 3]),
        ("atan", "-inf", [0.0; 3]),
        ("asinh", "inf", [0.0; 3]),
        ("asinh", "-inf", [0.0; 3]),
        ("cbrt", "inf", [0.0; 3]),
        ("cbrt", "-inf", [0.0; 3]),
        ("acosh", "inf", [0.0; 3]),
        ("normcdf", "inf", [0.0; 3]),
        ("normcdf", "-inf", [0.0; 3]),
        ("normpdf", "inf", [0.0; 3]),
        ("normpdf", "-inf", [0.0; 3]),
        ("gelu", "inf", [1.0, 0.0, 0.0]),
        ("gelu", "-inf", [0.0; 3]),
        ("tanh", "inf", [0.0; 3]),
        ("sigmoid", "-inf", [0.0; 3]),
        ("softplus", "inf", [1.0, 0.0, 0.0]),
        ("sqrt", "inf", [0.0; 3]),
        ("ln", "inf", [0.0; 3]),
        ("exp", "inf", [inf; 3]),
        ("exp", "-inf", [0.0; 3]),
        ("sinh", "-inf", [inf, -inf, inf]),
    ];
    for &(op, at, want) in cases {
        let script = format!(
            "x = {at}; y = {op}(x); g1 = grad(y, x); g1; g2 = grad(g1, x); g2; grad(g2, x)"
        );
        assert_eq!(values(&script), want, "{op} at {at}");
        // The backward walk (`:grad`, the op table's numeric local) agrees
        // at order 1, and over the derivative graph at order 2.
        let walked = format!("x = {at}; {op}(x); :grad x; grad({op}(x), x); :grad x");
        let grads: Vec<f64> = json(&walked)
            .iter()
            .filter(|e| e["kind"] == "grad" && e["wrt"] == "x")
            .map(|e| number(&e["value"]))
            .collect();
        assert_eq!(grads, want[..2], "{op} at {at}: the backward walk");
    }
    // The issue's own line, as a user types it.
    assert_contains(&run("x = inf; y = atan(x); :grad x"), "∂y/∂x = 0\n");
}

/// A derivative built at u = ±inf takes the form whose intermediates stay
/// finite there; that form is the derivative at every finite point too, so
/// moving the leaf back gives the ordinary value: atan′(2) = 1/5. At order 2
/// the clamp of u is a branch (nothing passes through it at ±inf), so a
/// second derivative built there and moved back says it kept that branch, as
/// any derivative built across a kink does.
#[test]
fn a_derivative_built_at_infinity_is_right_after_the_leaf_moves() {
    let v = values("x = inf; y = atan(x); d = grad(y, x); d; x := 2; d");
    assert_eq!(v, [0.0, 0.2]);
    let out = output_of(&[
        "-e",
        "x = -inf; y = gelu(x); d = grad(grad(y, x), x); x := 0",
    ]);
    assert_contains(&stderr_of(&out), "it keeps the old branch");
}

/// A first-order derivative of a graph over 330 000 nodes is built (it was
/// refused with help about nesting): the W1 script at N = 10⁵ has 400 001
/// nodes, and ∂y/∂x = 1.0001^N = 22015.45604852786 (docs/benchmarks.md,
/// where micrograd, PyTorch and a flat tape agree).
#[test]
fn a_first_derivative_of_a_large_graph_is_built() {
    let script = format!(
        "x = 0.5\ny = x\n{}g = grad(y, x)\n",
        "y = y*1.0001 + 0.0001\n".repeat(100_000)
    );
    let (_dir, path) = folder_with("w1.calc", &script);
    let (events, _) = json_events(&[path.to_str().unwrap()]);
    let g = events
        .iter()
        .rev()
        .find(|e| e["kind"] == "value" && e["name"] == "g")
        .unwrap_or_else(|| panic!("no value of g: {:?}", events.last()));
    let g = number(&g["value"]);
    assert!((g - 22015.45604852786).abs() <= 1e-12 * g, "{g}");
}

/// `:diff` of large sums is written in time linear in the graph (it was
/// quadratic: 10⁴ power terms took 41.7 s, and 10⁴ tanh terms spent 66 s
/// before being refused). The sum of 10⁴ powers prints every term, highest
/// first, with the value Σ k·x^(k−1) = (1 − (n+1)xⁿ + n·xⁿ⁺¹)/(1 − x)² = 4 at
/// x = 0.5 (xⁿ underflows); 10⁴ tanh terms pass 200 000 characters and are
/// refused with the way out.
#[test]
fn diff_of_ten_thousand_terms_prints_or_refuses_at_once() {
    let powers: Vec<String> = (1..=10_000).map(|k| format!("x^{k}")).collect();
    let d = diff_of(&format!("x = 0.5; y = {}; :diff y x", powers.join(" + ")));
    let expression = d["expression"].as_str().unwrap_or_default();
    assert!(
        expression.starts_with("10000*x^9999 + 9999*x^9998 + "),
        "{}",
        &expression[..80.min(expression.len())]
    );
    assert!(
        expression.ends_with(" + 3*x^2 + 2*x + x^0"),
        "{expression:.80}"
    );
    assert_close(number(&d["value"]), 4.0, "Σ k·x^(k−1) at 0.5");

    let tanhs: Vec<String> = (1..=10_000).map(|k| format!("tanh({k}*x)")).collect();
    let script = format!("x = 0.5\ny = {}\n:diff y x\n", tanhs.join(" + "));
    let (_dir, path) = folder_with("tanh.calc", &script);
    let out = output_of(&[path.to_str().unwrap()]);
    let stderr = stderr_of(&out);
    assert_contains(
        &stderr,
        "∂y/∂x is too large to print: more than 200000 characters",
    );
    assert_contains(&stderr, "use its value: `g = grad(y, x)`");
}

/// Karpathy's neuron (examples/neuron.calc): `:diff o w1` and `:diff o b`
/// write tanh's local derivative in one form, the textbook `1 - tanh(n)^2`
/// (it was `-tanh(n)^2 + 1` alone), and each printed formula typed back
/// gives its number: ∂o/∂w1 = 0.5·x1 = 1, ∂o/∂b = 0.5 (1 - o², o = 1/√2).
#[test]
fn diff_writes_tanh_s_derivative_one_way_and_it_types_back() {
    let neuron = std::fs::read_to_string(crate::util::in_crate("examples/neuron.calc")).unwrap();
    let out = run(&format!("{neuron}\n:diff o w1\n:diff o b"));
    assert_contains(&out, "∂o/∂w1 = (1 - tanh(n)^2)*x1  (= 1 now)");
    assert_contains(&out, "∂o/∂b = 1 - tanh(n)^2  (= 0.5 now)");
    for (formula, expected) in [("(1 - tanh(n)^2)*x1", 1.0), ("1 - tanh(n)^2", 0.5)] {
        let typed = values(&format!("{neuron}\n{formula}"));
        let value = *typed.last().unwrap();
        assert!((value - expected).abs() < 1e-12, "{formula} = {value}");
    }
}
