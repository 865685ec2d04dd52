//! A call of a user function on tensors is one step of `:trace`, as a call
//! of numbers is (issue 35): its lines are what the body passes to the
//! nodes outside it, each rule composed along the body; `--expand=CALL`
//! (or the function's name) shows the body's steps. The gradients are
//! checked against hand values and against the expanded trace's.

use serde_json::Value;

use crate::util::{assert_close, assert_contains, gradcalc, json_events, json_number, stdout_of};

/// The layer of the brief: W = [[1, 2], [3, 4]], x = [1, 1], b = [0, 0].
const LAYER: &str = "layer(W, x, b) = tanh(W @ x + b)\nW = [[1, 2], [3, 4]]\nx = [1, 1]\nb = [0, 0]\nL = sum(layer(W, x, b))\n";

/// The steps of the last `trace` event of `source`'s JSON.
fn trace_steps(source: &str) -> Vec<Value> {
    let (events, code) = json_events(&["-e", source]);
    assert_eq!(code, Some(0), "{source}: {events:?}");
    let trace = events
        .iter()
        .rev()
        .find(|e| e["kind"] == "trace")
        .expect("a trace event");
    trace["steps"].as_array().expect("steps").clone()
}

/// The numbers of a value as JSON writes it (a number, a vector or a
/// matrix), row-major.
fn numbers(value: &Value) -> Vec<f64> {
    match value {
        Value::Array(items) => items.iter().flat_map(numbers).collect(),
        number => vec![json_number(number).expect("a number")],
    }
}

/// What `input` receives in `step` (its line's numbers).
fn received(step: &Value, input: &str) -> Vec<f64> {
    let line = step["contributions"]
        .as_array()
        .expect("contributions")
        .iter()
        .find(|c| c["input"] == input)
        .unwrap_or_else(|| panic!("no line for {input} in {step}"));
    numbers(&line["value"]["value"])
}

#[test]
fn a_tensor_call_is_one_step_with_the_gradients_of_its_body() {
    let steps = trace_steps(&format!("{LAYER}:trace"));
    // L's sum, then the call: 2 steps where the body has 3 of its own.
    assert_eq!(steps.len(), 2, "{steps:?}");
    let call = &steps[1];
    assert_eq!(call["node"], "tanh(W @ x + b)");
    assert_eq!(
        call["op"],
        "layer1 = layer(W, x, b): one call, 3 steps: `--expand=layer1` shows them"
    );
    // In parameter order, as a call of numbers lists its arguments.
    let inputs: Vec<&str> = call["contributions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["input"].as_str().unwrap())
        .collect();
    assert_eq!(inputs, ["W", "x", "b"]);
    // By hand: u = W @ x = [3, 7], d = 1 − tanh(u)² elementwise;
    // ∂L/∂W = outer(d, x), ∂L/∂x = Wᵀ d, ∂L/∂b = d.
    let d = [1.0 - 3f64.tanh().powi(2), 1.0 - 7f64.tanh().powi(2)];
    let by_hand = [
        ("W", vec![d[0], d[0], d[1], d[1]]),
        ("x", vec![d[0] + 3.0 * d[1], 2.0 * d[0] + 4.0 * d[1]]),
        ("b", d.to_vec()),
    ];
    for (input, expected) in &by_hand {
        let got = received(call, input);
        assert_eq!(got.len(), expected.len(), "{input}");
        // 1 − tanh(7)² cancels: the tensor tanh is within 2 ulps of std's,
        // which the cancellation magnifies to ~1e-11 relative.
        for (g, e) in got.iter().zip(expected) {
            assert_close(*g, *e, 1e-9);
        }
    }
    // The expanded trace (each op a step) gives the same numbers, from
    // the steps of `@` (W, x) and `+` (b).
    for expand in ["--expand=layer1", "--expand=layer", "--expand"] {
        let expanded = trace_steps(&format!("{LAYER}:trace {expand}"));
        assert_eq!(expanded.len(), 4, "{expand}: {expanded:?}");
        let step = |op: &str| expanded.iter().find(|s| s["op"] == op).expect(op);
        for (input, of) in [("W", "@"), ("x", "@"), ("b", "+")] {
            assert_eq!(received(step(of), input), received(call, input), "{input}");
        }
    }
}

#[test]
fn the_call_step_writes_its_rule_composed_along_the_body() {
    let output = gradcalc()
        .args(["-e", &format!("{LAYER}:trace")])
        .output()
        .unwrap();
    let out = stdout_of(&output);
    // The rules of tanh, + and @ composed, in the call's upstream: typed
    // back with `upstream` = [1, 1] they give the numbers below them.
    assert_contains(
        &out,
        "[2] tanh(W @ x + b) (layer1 = layer(W, x, b): one call, 3 steps: `--expand=layer1` shows them)",
    );
    assert_contains(
        &out,
        "∂L/∂W += outer(upstream ⊙ (1 - tanh(W @ x + b)^2), x)   through layer1, (2) → 2×2",
    );
    assert_contains(
        &out,
        "∂L/∂x += Wᵀ @ (upstream ⊙ (1 - tanh(W @ x + b)^2))   through layer1, (2) → 2",
    );
    assert_contains(
        &out,
        "∂L/∂b += upstream ⊙ (1 - tanh(W @ x + b)^2)   through layer1, (2) → 2",
    );
    // Typed back: the composed rule of x gives Wᵀ d.
    let typed = gradcalc()
        .args([
            "--json",
            "-e",
            "W = [[1, 2], [3, 4]]\nx = [1, 1]\nb = [0, 0]\nupstream = [1, 1]\nWᵀ @ (upstream ⊙ (1 - tanh(W @ x + b)^2))",
        ])
        .output()
        .unwrap();
    let events = crate::util::json_lines(&stdout_of(&typed));
    let value = events.iter().rev().find(|e| e["kind"] == "value").unwrap();
    let d = [1.0 - 3f64.tanh().powi(2), 1.0 - 7f64.tanh().powi(2)];
    let got = numbers(&value["value"]);
    assert_close(got[0], d[0] + 3.0 * d[1], 1e-9);
    assert_close(got[1], 2.0 * d[0] + 4.0 * d[1], 1e-9);
}

#[test]
fn a_call_counts_as_one_use_and_passes_to_the_variables_its_body_names() {
    // sq(v) = v·v·w with w a number: L = Σ (2x² + x) = 2·(1 + 4) + 3 = 13,
    // ∂L/∂x = 4x + 1 = [5, 9], ∂L/∂w = Σ x² = 5.
    let source = "w = 2\nsq(v) = v * v * w\nx = [1, 2]\nL = sum(sq(x) + x)\n:trace";
    let steps = trace_steps(source);
    let call = steps
        .iter()
        .find(|s| s["op"].as_str().unwrap().starts_with("sq1 = sq(x)"))
        .expect("the call's step");
    // x is used twice in the body: one line, the two uses added (4x).
    assert_eq!(received(call, "x"), [4.0, 8.0]);
    assert_eq!(received(call, "w"), [5.0]);
    let x = call["contributions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["input"] == "x")
        .unwrap();
    // Used by the call and by `+`: 2 uses, the call's the second; the sum
    // so far is the whole gradient 4x + 1.
    assert_eq!(x["uses"], serde_json::json!([2, 2]));
    assert_eq!(numbers(&x["so_far"]["value"]), [5.0, 9.0]);
}

#[test]
fn a_call_that_builds_nothing_of_its_own_is_no_step_and_errors_are_unchanged() {
    // `id(v) = v` returns its argument: no node of its own, no call step.
    let steps = trace_steps("id(v) = v\nx = [1, 2]\nL = sum(id(x) * x)\n:trace");
    assert!(
        steps
            .iter()
            .all(|s| !s["op"].as_str().unwrap().contains("one call"))
    );
    // ∂L/∂x = 2x = [2, 4]: the `*` step's two uses.
    let mul = steps.iter().find(|s| s["op"] == "*").unwrap();
    let lines = mul["contributions"].as_array().unwrap();
    let total: Vec<f64> = (0..2)
        .map(|k| lines.iter().map(|l| numbers(&l["value"]["value"])[k]).sum())
        .collect();
    assert_eq!(total, [2.0, 4.0]);
    // A name that is no call nor step is refused as before.
    let output = gradcalc()
        .args(["-e", &format!("{LAYER}:trace --expand=layer7")])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert_contains(
        &crate::util::stderr_of(&output),
        "`layer7` is not a step of the trace of L",
    );
}
