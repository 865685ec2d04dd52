//! Vectors and matrices through the binary: values, shapes, gradients,
//! `:trace`, errors with carets, refusals, undo. Every expected number was
//! computed independently with numpy (float64) and copied here; the tests
//! never run numpy.

use serde_json::Value;

use crate::util::{
    assert_close, assert_contains, gradcalc, json_events, json_number, stderr_of, stdout_of,
};

/// The numbers of a tensor event's nested `value`, row-major.
fn flat(value: &Value) -> Vec<f64> {
    match value {
        Value::Array(items) => items.iter().flat_map(flat).collect(),
        other => vec![json_number(other).unwrap_or_else(|| panic!("not a number: {other}"))],
    }
}

/// Asserts that the numbers of `value` are `expected`, each to 1e-12 relative.
#[track_caller]
pub fn assert_all_close(value: &Value, expected: &[f64]) {
    let got = flat(value);
    assert_eq!(got.len(), expected.len(), "{value}");
    for (g, e) in got.iter().zip(expected) {
        assert_close(*g, *e, 1e-12);
    }
}

/// The event of `kind` whose `key` is `name`.
#[track_caller]
fn event<'a>(events: &'a [Value], kind: &str, key: &str, name: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["kind"] == kind && e[key] == name)
        .unwrap_or_else(|| panic!("no {kind} event with {key} = {name} in {events:?}"))
}

/// A one-layer network and a softmax cross-entropy:
/// h = tanh(W @ x + b), L = -ln(softmax(V @ h)[1]).
const LAYER: &str = "W = [[0.5, -1, 0.25], [1.5, 0.5, -0.5]]
x = [1, 2, -1]
b = [0.1, -0.3]
V = [[1, -2], [0.5, 0.5], [-1, 1]]
h = tanh(W @ x + b)
L = -ln(softmax(V @ h)[1])
:grad W b V x";

#[test]
fn a_layer_and_its_cross_entropy_have_numpys_gradients_with_their_shapes() {
    let (events, status) = json_events(&["-e", LAYER]);
    assert_eq!(status, Some(0), "{events:?}");
    let w = event(&events, "value", "name", "W");
    assert_eq!(w["shape"], serde_json::json!([2, 3]));
    assert_eq!(w["value"][1], serde_json::json!([1.5, 0.5, -0.5]));
    assert_all_close(&w["value"], &[0.5, -1.0, 0.25, 1.5, 0.5, -0.5]);
    let loss = event(&events, "value", "name", "L");
    assert_eq!(loss["shape"], serde_json::json!([]));
    assert_close(
        json_number(&loss["value"]).unwrap(),
        2.0365507440607447,
        1e-13,
    );
    let grad = |wrt: &str| event(&events, "grad", "wrt", wrt);
    assert_eq!(grad("W")["shape"], serde_json::json!([2, 3]));
    assert_all_close(
        &grad("W")["value"],
        &[
            -0.17708890417232662,
            -0.35417780834465323,
            0.17708890417232662,
            0.007414280393230057,
            0.014828560786460113,
            -0.007414280393230057,
        ],
    );
    assert_all_close(
        &grad("b")["value"],
        &[-0.17708890417232662, 0.007414280393230057],
    );
    assert_eq!(grad("V")["shape"], serde_json::json!([3, 2]));
    assert_all_close(
        &grad("V")["value"],
        &[
            -0.0063946217024843455,
            0.006822485625610717,
            0.8076621482669447,
            -0.8617027954539258,
            -0.8012675265644603,
            0.8548803098283151,
        ],
    );
    assert_all_close(
        &grad("x")["value"],
        &[
            -0.07742303149631823,
            0.18079604436894164,
            -0.04797936623969668,
        ],
    );
}

#[test]
fn broadcasting_and_fan_out_add_up_and_sum_over_the_broadcast_axis() {
    // L = sum(A*A + c): A used twice (2A), c broadcast over 2 rows (2 each).
    let (events, _) = json_events(&[
        "-e",
        "A = [[1, -2, 3], [0.5, 4, -1]]\nc = [0.1, 0.2, 0.3]\nL = sum(A*A + c)\n:grad",
    ]);
    assert_close(
        json_number(&event(&events, "value", "name", "L")["value"]).unwrap(),
        32.45,
        1e-14,
    );
    assert_all_close(
        &event(&events, "grad", "wrt", "A")["value"],
        &[2.0, -4.0, 6.0, 1.0, 8.0, -2.0],
    );
    assert_all_close(
        &event(&events, "grad", "wrt", "c")["value"],
        &[2.0, 2.0, 2.0],
    );
}

#[test]
fn reductions_and_logsumexp_match_numpy() {
    let (events, status) = json_events(&[
        "-e",
        "A = [[1, -2, 3], [0.5, 4, -1]]\nlogsumexp(A)\nsum(A, 0)\nmean(A)\nmax(A)\nz = [1, 2, 3]\nL = logsumexp(z)\n:grad z",
    ]);
    assert_eq!(status, Some(0), "{events:?}");
    let values: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "value" && e.get("shape").is_some() && e.get("name").is_none())
        .collect();
    assert_all_close(
        &values[0]["value"],
        &[3.1328452337275756, 4.036269565124779],
    );
    assert_all_close(&values[1]["value"], &[1.5, 2.0, 2.0]);
    assert_all_close(&values[2]["value"], &[0.9166666666666666]);
    assert_all_close(&values[3]["value"], &[4.0]);
    assert_close(
        json_number(&event(&events, "value", "name", "L")["value"]).unwrap(),
        3.40760596444438,
        1e-14,
    );
    // ∂logsumexp(z)/∂z = softmax(z).
    assert_all_close(
        &event(&events, "grad", "wrt", "z")["value"],
        &[0.09003057317038046, 0.24472847105479767, 0.6652409557748219],
    );
}

#[test]
fn a_matrix_prints_aligned_in_rows_under_its_shape() {
    let output = gradcalc()
        .args([
            "-e",
            "W = [[1, 2, 0], [3, -4, 1]]\nx = [1, -1, 0.5]\nW[1, 2]\nWᵀ @ [1, 1]",
        ])
        .output()
        .unwrap();
    let out = stdout_of(&output);
    assert_contains(&out, "W = 2×3\n   [[1,  2, 0],\n    [3, -4, 1]]\n");
    assert_contains(&out, "x = [1, -1, 0.5]  (3)\n");
    assert_contains(&out, "\n1\n");
    assert_contains(&out, "[4, -2, 1]  (3)\n");
}

#[test]
fn the_trace_writes_each_tensor_op_as_its_matrix_rule_with_shapes() {
    let output = gradcalc()
        .args([
            "-e",
            "x = [1, -1, 0.5]\nW = [[1, 2, 0], [3, 4, 1]]\nb = [0.1, -0.2]\nL = sum(tanh(W @ x + b))\n:trace",
        ])
        .output()
        .unwrap();
    let out = stdout_of(&output);
    assert_contains(&out, "∂L/∂W += outer(upstream, x)   outer((2), (3)) → 2×3");
    assert_contains(&out, "∂L/∂x += Wᵀ @ upstream   (3×2) @ (2) → 3");
    assert_contains(&out, "upstream ⊙ (1 - tanh(W @ x + b)^2)");
    // A scalar's shape is `()` beside the arrow, as everywhere.
    assert_contains(&out, "upstream ⊙ ones(2)   () → 2\n");
    // ∂L/∂W = (1 − tanh(u)²) xᵀ, numpy: [[0.48691736, -0.48691736, 0.24345868], …].
    assert_contains(&out, "[[0.4869173611, -0.4869173611, 0.2434586806],");
}

#[test]
fn softmax_cross_entropy_gradient_is_p_minus_onehot() {
    let (events, _) = json_events(&["-e", "z = [2, 1, 0.1]\nL = -ln(softmax(z)[0])\n:grad"]);
    assert_close(
        json_number(&event(&events, "value", "name", "L")["value"]).unwrap(),
        0.4170300162778335,
        1e-14,
    );
    assert_all_close(
        &event(&events, "grad", "wrt", "z")["value"],
        &[
            -0.3409988611140321,
            0.24243297070471392,
            0.09856589040931818,
        ],
    );
}

/// The error text of `source` (stderr), checking it failed.
fn error_of(source: &str) -> String {
    let output = gradcalc().args(["-e", source]).output().unwrap();
    assert!(!output.status.success(), "{source}: {}", stdout_of(&output));
    stderr_of(&output)
}

#[test]
fn shape_errors_name_both_shapes_and_the_rule_under_a_caret() {
    let error = error_of("[1, 2] @ [1, 2, 3]");
    assert_contains(&error, "(2) @ (3): the inner sizes must agree");
    assert_contains(&error, "^^^^^^^^^^^^^^^^^^");
    let error = error_of("[[1, 2], [3]]");
    assert_contains(&error, "row 1 has 1 element(s) but row 0 has 2");
    assert_contains(
        &error,
        "1 │ [[1, 2], [3]]\n  │          ^^^ give every row 2 elements",
    );
    assert_contains(
        &error_of("x = [1, 2]\nx[2]"),
        "index 2 is out of range for axis 0 of shape (2)",
    );
    assert_contains(
        &error_of("[1, 2] + [1, 2, 3]"),
        "(2) + (3): the shapes do not broadcast",
    );
    assert_contains(
        &error_of("x = [1, 2)"),
        "`)` does not close the `[` before it",
    );
    assert_contains(&error_of("[[[1]]]"), "at most 2 axes");
    assert_contains(
        &error_of("x = [1, 2]\n2 @ x"),
        "() @ (2): the matrix product takes a vector or a matrix on each side; use * to scale",
    );
    // More indices than axes names what the tensor is and what it takes;
    // `W[1][0]` is the element `W[1, 0]` (3), one index too many after it.
    let error = error_of("x = [1, 2, 3]\nx[0, 0, 0]");
    assert_contains(
        &error,
        "a vector of shape (3) takes one index (`x[i]`), not 3",
    );
    assert_contains(&error, "2 │ x[0, 0, 0]\n  │ ^^^^^^^^^^");
    assert_contains(
        &error_of("W = [[1, 2], [3, 4]]\nW[0, 1, 0]"),
        "a matrix of shape (2×2) takes one index (a row, `W[i]`) or two (`W[i, j]`), not 3",
    );
    let error = error_of("W = [[1, 2], [3, 4]]\nW[1][0]\nW[1][0][0]");
    assert_contains(
        &error,
        "a number (shape ()) has nothing to index, but was given 1 index",
    );
    assert_contains(&error, "3 │ W[1][0][0]\n  │ ^^^^^^^^^^");
    assert_contains(&error_of("zeros(100000, 100000)"), "memory budget");
}

#[test]
fn a_failed_tensor_statement_changes_nothing() {
    // The failed assignment leaves W, the output and the graph as they were.
    let output = gradcalc()
        .args(["--json", "--keep-going"])
        .write_stdin("W = [[1, 2], [3, 4]]\nL = sum(W @ W)\nW = W @ [1, 2, 3]\n:grad\nW\n")
        .output()
        .unwrap();
    let events = crate::util::json_lines(&stdout_of(&output));
    assert_eq!(events[2]["code"], "shape", "{events:?}");
    // ∂sum(W @ W)/∂W = 1·Wᵀ + Wᵀ·1 (numpy: [[7, 11], [9, 13]]).
    let grad = event(&events, "grad", "wrt", "W");
    assert_all_close(&grad["value"], &[7.0, 11.0, 9.0, 13.0]);
    let shown = events.last().unwrap();
    assert_eq!(shown["kind"], "value");
    assert_all_close(&shown["value"], &[1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn what_tensors_do_not_support_is_refused_with_what_works() {
    let error = error_of("W = [[1, 2], [3, 4]]\nL = sum(W)\n:diff L W");
    assert_contains(&error, "`:grad` gives ∂L/∂W with W's shape");
    assert_contains(
        &error_of("W = [[1, 2], [3, 4]]\nL = sum(W)\n:diff L W"),
        "not supported yet",
    );
    // User functions take tensors (one value model): f(W) = 2W.
    assert_contains(
        &stdout_of(
            &gradcalc()
                .args(["-e", "W = [[1, 2], [3, 4]]\nf(a) = a*2\nf(W)"])
                .output()
                .unwrap(),
        ),
        "[[2, 4],\n   [6, 8]]",
    );
    // Another order and :repeat say what works instead (the handout
    // tables are written: tests/it/tensor_handouts.rs).
    let layer = "W = [[1, 2], [3, 4]]\nL = sum(W*W)\n";
    assert_contains(
        &error_of(&format!("{layer}:topo kahn")),
        "`:topo kahn` of a tensor output is not supported yet",
    );
    let error = error_of(&format!("{layer}:repeat 3 W := W - 0.1*grad(L, W)"));
    assert_contains(
        &error,
        "`:repeat` of vectors and matrices is not supported yet",
    );
    assert_contains(
        &error,
        "3 │ :repeat 3 W := W - 0.1*grad(L, W)\n  │           ^^^^^^^^^^^^^^^^^^^^^^^ `:descend L lr=0.1 steps=100 W b`",
    );
    assert_contains(
        &error_of(&format!("{layer}W, W := W*0, W*2")),
        "`W` is updated twice in one statement",
    );
    assert_contains(
        &error_of(&format!("{layer}W := 5")),
        "a leaf of shape (2×2) cannot take a value of shape ()",
    );
    assert_contains(
        &error_of("zeros(1e300, 2)"),
        "1e300 is too large for an index, axis or size: at most 4294967295",
    );
    // The hint to reduce an output first uses the names typed.
    assert_contains(
        &error_of("W = [[1, 2], [3, 4]]\nh = W @ [1, -1]\ngrad(h, W)"),
        "`grad(L, W)` takes L of shape (), not (2)",
    );
    assert_contains(
        &error_of("W = [[1, 2], [3, 4]]\nh = W @ [1, -1]\ngrad(h, W)"),
        "reduce it first, e.g. `grad(sum(h), W)`",
    );
    // A gradient of a vector gradient asks for its sum, as any vector L.
    let error = error_of("x = [1, 2]\ngrad(grad(sum(x*x), x), x)");
    assert_contains(&error, "`grad(L, W)` takes L of shape (), not (2)");
}

#[test]
fn a_tensor_leaf_moves_with_colon_equals_and_its_users_follow() {
    let (events, status) = json_events(&[
        "-e",
        "W = [[1, 2], [3, 4]]\nx = [1, 1]\nh = W @ x\nW := W - 0.5*[[1, 1], [1, 1]]\nh",
    ]);
    assert_eq!(status, Some(0), "{events:?}");
    let last = events
        .iter()
        .rev()
        .find(|e| e["kind"] == "value" && e.get("shape").is_some())
        .unwrap();
    assert_all_close(&last["value"], &[2.0, 6.0]);
}

#[test]
fn scalar_statements_are_untouched_and_a_scalar_rebinds_a_tensor_name() {
    let output = gradcalc()
        .args(["-e", "W = [1, 2]\nW = 3\ny = W*W\n:grad W"])
        .output()
        .unwrap();
    assert_contains(&stdout_of(&output), "∂y/∂W = 6");
}

/// The `descent` event's losses of `examples/NAME`.
fn losses_of(name: &str) -> Vec<f64> {
    let output = crate::util::output_in(
        env!("CARGO_MANIFEST_DIR"),
        &["--json", &format!("examples/{name}")],
    );
    assert_eq!(output.status.code(), Some(0), "{name}");
    let events = crate::util::json_lines(&stdout_of(&output));
    let descent = events.iter().find(|e| e["kind"] == "descent").unwrap();
    descent["losses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| json_number(l).unwrap())
        .collect()
}

#[test]
fn the_matrix_mlp_trains_to_the_scalar_versions_losses() {
    let matrix = losses_of("matrix_mlp.calc");
    let scalar = losses_of("moons_descent.calc");
    assert_eq!(matrix.len(), 41);
    assert_eq!(matrix.len(), scalar.len());
    for (m, s) in matrix.iter().zip(&scalar) {
        assert_close(*m, *s, 1e-9);
    }
    // Step 1 as micrograd gives it (scripts/micrograd_descent.py).
    assert_close(matrix[1], 0.4134191100, 1e-9);
}

#[test]
fn the_softmax_example_shows_p_minus_onehot() {
    let output = crate::util::output_in(
        env!("CARGO_MANIFEST_DIR"),
        &["--json", "examples/softmax.calc"],
    );
    let events = crate::util::json_lines(&stdout_of(&output));
    // numpy: p − onehot(0) at z = W @ x + b, and its outer product with x.
    let g = [-0.9560135197079421, 0.8834920740271945, 0.07252144568074777];
    assert_all_close(&event(&events, "grad", "wrt", "b")["value"], &g);
    assert_all_close(
        &event(&events, "grad", "wrt", "W")["value"],
        &[g[0], 2.0 * g[0], g[1], 2.0 * g[1], g[2], 2.0 * g[2]],
    );
    let trace = events.iter().find(|e| e["kind"] == "trace").unwrap();
    let softmax = crate::util::member(&trace["steps"], "op", "softmax");
    assert_eq!(
        softmax["contributions"][0]["rule"],
        "p ⊙ (upstream − sum(p ⊙ upstream))"
    );
    assert_all_close(&softmax["contributions"][0]["value"]["value"], &g);
}

#[test]
fn tensor_descent_and_simultaneous_updates_move_the_leaves() {
    // L = |W @ x − y|², x·x = 5: each step with lr 0.05 halves the residual.
    let (events, status) = json_events(&[
        "-e",
        "W = [[0.5, -1], [1.5, 0.5]]\nx = [1, 2]\ny = [1, -1]\nL = sum((W @ x - y)^2)\n:descend L lr=0.05 steps=3 W",
    ]);
    assert_eq!(status, Some(0), "{events:?}");
    let descent = events.iter().find(|e| e["kind"] == "descent").unwrap();
    assert_all_close(&descent["losses"], &[18.5, 4.625, 1.15625, 0.2890625]);
    // numpy: W − Σ 0.05·2·r_k xᵀ over the three steps.
    let w = events
        .iter()
        .rev()
        .find(|e| e["kind"] == "value" && e.get("shape").is_some())
        .unwrap();
    assert_all_close(&w["value"], &[0.9375, -0.125, 0.8875, -0.725]);
    // The same first step as one simultaneous update with grad(L, W).
    let (events, status) = json_events(&[
        "-e",
        "W = [[0.5, -1], [1.5, 0.5]]\nx = [1, 2]\ny = [1, -1]\nL = sum((W @ x - y)^2)\nW, x := W - 0.05*grad(L, W), x\nL",
    ]);
    assert_eq!(status, Some(0), "{events:?}");
    assert_all_close(&events.last().unwrap()["value"], &[4.625]);
    // The text table has the loss's column alone (a matrix is printed whole
    // after it, not as an empty column).
    let output = gradcalc()
        .args([
            "-e",
            "W = [[0.5, -1], [1.5, 0.5]]\nx = [1, 2]\ny = [1, -1]\nL = sum((W @ x - y)^2)\n:descend L lr=0.05 steps=3 W",
        ])
        .output()
        .unwrap();
    let text = stdout_of(&output);
    assert_contains(
        &text,
        "  step          L\n     0       18.5\n     1      4.625\n     2    1.15625\n     3  0.2890625\n",
    );
    assert_contains(
        &text,
        "W = 2×2\n   [[0.9375, -0.125],\n    [0.8875, -0.725]]",
    );
}

#[test]
fn randn_is_the_same_after_the_same_seed() {
    let (events, _) = json_events(&[
        "-e",
        ":seed 7\nrandn(2, 2)\n:seed 7\nrandn(2, 2)\nrandn(2, 2)",
    ]);
    let values: Vec<Vec<f64>> = events.iter().map(|e| flat(&e["value"])).collect();
    assert_eq!(values[0], values[1]);
    assert_ne!(values[1], values[2]);
    assert!(values[0].iter().all(|x| x.is_finite() && x.abs() < 10.0));
}

#[test]
fn check_compares_every_element_with_a_central_difference() {
    let (events, status) = json_events(&[
        "-e",
        "W = [[0.5, -1, 0.25], [1.5, 0.5, -0.5]]\nx = [1, 2, -1]\nL = -ln(softmax(tanh(W @ x))[1])\n:check",
    ]);
    assert_eq!(status, Some(0), "{events:?}");
    let checks: Vec<&Value> = events.iter().filter(|e| e["kind"] == "check").collect();
    // Six elements of W, three of x, each passing.
    let names: Vec<&str> = checks.iter().map(|c| c["wrt"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "W[0, 0]", "W[0, 1]", "W[0, 2]", "W[1, 0]", "W[1, 1]", "W[1, 2]", "x[0]", "x[1]",
            "x[2]"
        ]
    );
    assert!(checks.iter().all(|c| c["verdict"] == "pass"), "{checks:?}");
}

#[test]
fn expand_writes_each_elements_chain_rule_adding_up_to_the_matrix_rule() {
    let output = gradcalc()
        .args([
            "-e",
            "x = [1, -1, 0.5]\nW = [[1, 2, 0], [3, 4, 1]]\nh = W @ x\nL = sum(tanh(h))\n:trace --expand=h",
        ])
        .output()
        .unwrap();
    let out = stdout_of(&output);
    // ∂L/∂h = 1 − tanh(h)², h = [-1, -0.5] (numpy: [0.41997434, 0.78644773]);
    // ∂L/∂x[0] = Σ ∂L/∂h[i]·W[i, 0] = 0.41997434·1 + 0.78644773·3.
    assert_contains(
        &out,
        "∂L/∂x[0] = 0.4199743416·1 + 0.786447733·3 = 2.779317541   (through h[0], h[1])",
    );
    assert_contains(
        &out,
        "∂L/∂W[1, 1] = 0.786447733·(-1) = -0.786447733   (through h[1])",
    );
}

#[test]
fn ctrl_c_during_a_tensor_descent_keeps_the_steps_done() {
    // L = (W @ x − 3)², x = [1], W 1×1 from 0: ∂L/∂W = 2u, so each step
    // multiplies u = W − 3 by 1 − 2·lr: W_k = 3·(1 − (1 − 2e-7)^k).
    let (events, descent) = crate::util::interrupted_descent(
        "W = [[0]]\nx = [1]\nL = sum((W @ x - 3)^2)",
        ":descend L lr=0.0000001 steps=1000000 W",
    );
    let steps = descent["steps"].as_u64().unwrap();
    assert_eq!(flat(&descent["losses"]).len() as u64, steps + 1);
    let w = events.iter().rev().find(|e| e["name"] == "W").unwrap();
    let expected = 3.0 * (1.0 - (1.0 - 2e-7_f64).powf(steps as f64));
    assert_close(flat(&w["value"])[0], expected, 1e-9);
}

/// A stopped `:descend` whose table is slow to write (its reader is not
/// reading yet: the pipe fills and the write blocks) is written whole: the
/// run has noticed the Ctrl-C, so the batch run's one-second grace
/// (`interrupt::BATCH_GRACE`) does not end it mid-line. Before, a loaded
/// machine cut the 6 MB line short or lost the whole output.
#[test]
fn a_stopped_descent_writes_its_table_whole_however_slow_the_reader() {
    use std::io::Read;
    let mut child = crate::util::plain_gradcalc()
        .args([
            "--json",
            "-e",
            "W = [[0]]\nx = [1]\nL = sum((W @ x - 3)^2)",
            "-e",
            ":descend L lr=0.0000001 steps=1000000 W",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    crate::util::wait_for_cpu(child.id(), std::time::Duration::from_millis(500));
    // The handler's grace is watched on its thread: asleep, then back.
    let grace = crate::util::BatchGrace::watch(child.id());
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // Evidence that the writer is blocked on the full pipe (the statements
    // run on a thread of their own: look at every thread), then that the
    // whole grace has passed with the process alive: the old handler ended
    // it there, mid-line.
    let started = std::time::Instant::now();
    while !crate::util::any_thread_waits_in(child.id(), "pipe_write") {
        assert!(
            started.elapsed() < crate::util::TIMEOUT,
            "never blocked on the pipe"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    grace.wait_for_its_end();
    assert!(
        crate::util::cpu_time(child.id()).is_some(),
        "ended by the grace"
    );
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let events = crate::util::json_lines(&out);
    let descent = events.iter().find(|e| e["kind"] == "descent").unwrap();
    assert_eq!(descent["interrupted"], true);
    let steps = descent["steps"].as_u64().unwrap();
    assert_eq!(flat(&descent["losses"]).len() as u64, steps + 1);
    // The last event is W at the step the descent stopped at (see the test
    // before for the closed form).
    let w = events.last().unwrap();
    assert_eq!(w["name"], "W");
    let expected = 3.0 * (1.0 - (1.0 - 2e-7_f64).powf(steps as f64));
    assert_close(flat(&w["value"])[0], expected, 1e-9);
}

#[test]
fn help_names_each_tensor_functions_shape_and_backward_rule() {
    let output = gradcalc()
        .args(["-e", ":help softmax", "-e", ":help eye", "-e", ":help seed"])
        .output()
        .unwrap();
    let out = stdout_of(&output);
    assert_contains(&out, "backward: ∂L/∂z = p ⊙ (upstream");
    assert_contains(&out, "eye(n): the n×n identity matrix");
    assert_contains(&out, ":seed N");
}

/// Linear regression over data vectors with scalar parameters: `w` and `b`
/// are numbers, `xs` and `ys` vectors. Every command that takes a parameter
/// takes the numbers too, their gradient the chain rule through the scalar
/// operands. The values by hand (and a plain-Python loop): r = w·x + b − y =
/// −1.5x, L = mean(r²) = 10.5, ∂L/∂w = mean(2r·x) = −14, ∂L/∂b = mean(2r) = −6.
#[test]
fn scalar_parameters_of_a_tensor_loss_have_gradients_and_descend() {
    const REGRESSION: &str =
        "xs = [1, 2, 3]\nys = [2, 4, 6]\nw = 0.5\nb = 0\nL = mean((w*xs + b - ys)^2)";
    let (events, status) = json_events(&["-e", &format!("{REGRESSION}\n:grad\nc = grad(L, w)")]);
    assert_eq!(status, Some(0), "{events:?}");
    assert_all_close(&event(&events, "grad", "wrt", "w")["value"], &[-14.0]);
    assert_all_close(&event(&events, "grad", "wrt", "b")["value"], &[-6.0]);
    // ∂L/∂xᵢ = (2/3)·rᵢ·w = −0.5·xᵢ.
    assert_all_close(
        &event(&events, "grad", "wrt", "xs")["value"],
        &[-0.5, -1.0, -1.5],
    );
    assert_all_close(&events.last().unwrap()["value"], &[-14.0]);
    // Through a derived scalar: c = 2w, ∂L/∂w = 2·∂L/∂c = 2·mean(2r·x) with
    // r = −x: 2·(−28/3).
    let text = stdout_of(
        &gradcalc()
            .args([
                "-e",
                "xs = [1, 2, 3]\nys = [2, 4, 6]\nw = 0.5\nc = 2*w\nL = mean((c*xs - ys)^2)\n:grad w\n:check w",
            ])
            .output()
            .unwrap(),
    );
    assert_contains(&text, "∂L/∂w = -18.66666667\n");
    assert_contains(
        &text,
        "∂L/∂w at w = 0.5: reverse mode -18.66666667, central difference -18.66666667",
    );
    assert_contains(&text, "pass");
    // One simultaneous step: w = 0.5 + 0.05·14, b = 0 + 0.05·6; the loss follows.
    let (events, status) = json_events(&[
        "-e",
        &format!("{REGRESSION}\nw, b := w - 0.05*grad(L, w), b - 0.05*grad(L, b)\nL"),
    ]);
    assert_eq!(status, Some(0), "{events:?}");
    let moved = events
        .iter()
        .rev()
        .find(|e| e["kind"] == "value" && e["name"] == "w")
        .unwrap();
    assert_all_close(&moved["value"], &[1.2000000000000002]);
    assert_all_close(&events.last().unwrap()["value"], &[2.116666666666666]);
    // :descend: the loss and both numbers in the table, as for scalar losses.
    let text = stdout_of(
        &gradcalc()
            .args([
                "-e",
                &format!("{REGRESSION}\n:descend L lr=0.05 steps=3 w b"),
            ])
            .output()
            .unwrap(),
    );
    assert_contains(&text, "  step             L            w             b\n");
    assert_contains(&text, "     3  0.1223628107  1.654444444  0.4843333333\n");
    assert_contains(&text, "w = 1.654444444\nb = 0.4843333333\n");
    // A value of the wrong shape moves nothing.
    let error = error_of(&format!("{REGRESSION}\nw, b := w - 0.05*grad(L, w), xs"));
    assert_contains(&error, "a number takes a value of shape (), not (3)");
}

/// `:vars` of a tensor output shows ∂L/∂ each variable it reaches, of its
/// shape, as it does for scalar outputs: here L = sum(W ⊙ W) + 3w, so
/// ∂L/∂W = 2W and ∂L/∂w = 3 (through the scalar the tensors read).
#[test]
fn vars_of_a_tensor_output_show_the_gradients() {
    let script = "W = [[1, 2], [3, 4]]\nw = 0.5\nL = sum(W*W) + 3*w\n:vars";
    let (events, status) = json_events(&["-e", script]);
    assert_eq!(status, Some(0), "{events:?}");
    let vars = events.iter().find(|e| e["kind"] == "vars").unwrap();
    assert_eq!(vars["of"], "L");
    let w = crate::util::member(&vars["vars"], "name", "W");
    assert_eq!(w["shape"], serde_json::json!([2, 2]));
    assert_all_close(&w["grad"], &[2.0, 4.0, 6.0, 8.0]);
    assert_eq!(vars["vars"][0]["name"], "w");
    assert_close(json_number(&vars["vars"][0]["grad"]).unwrap(), 3.0, 1e-15);
    let text = stdout_of(&gradcalc().args(["-e", script]).output().unwrap());
    assert_contains(&text, "  w = 0.5   leaf     ∂L/∂w = 3\n");
    assert_contains(
        &text,
        "    ∂L/∂W = 2×2\n          [[2, 4],\n           [6, 8]]\n",
    );
}

/// The gradients of a backward pass count toward the memory budget: Y, the
/// constant 2, Y*2 and L hold 36 000 000 + 1 + 36 000 000 + 1 numbers of the
/// 134 217 728 (2²⁷), and their gradients would need as many again (62 217
/// 726 are left); the session is kept.
#[test]
fn gradients_past_the_memory_budget_are_refused_and_the_session_kept() {
    let output = gradcalc()
        .args(["--keep-going"])
        .write_stdin("Y = ones(6000, 6000)\nL = sum(Y*2)\n:grad\nL\n")
        .output()
        .unwrap();
    let error = stderr_of(&output);
    assert_contains(
        &error,
        "the backward pass needs 72000002 numbers for its gradients, but the memory budget has 62217726 left (of 134217728)",
    );
    assert_contains(&stdout_of(&output), "\n72000000\n");
}

/// A scalar moved by `:=` (or by a scalar `:descend`) moves the tensors
/// that read it, directly or through another scalar, and a failed statement
/// puts both back: L = sum(s·W) = 3s, M = sum(2s·W) = 6s.
#[test]
fn tensors_follow_a_scalar_moved_by_colon_equals() {
    let output = gradcalc()
        .args(["--keep-going"])
        .write_stdin(
            "s = 2\nW = [1, 2]\nL = sum(s*W)\ns := 3\nL\n:grad\nt = s*2\nM = sum(t*W)\ns := 1\nM\ns, W := 5, W @ [1, 2, 3]\nM\ns := s - 0.5*grad(M, s)\nM\n",
        )
        .output()
        .unwrap();
    let out = stdout_of(&output);
    // After s := 3: L = 9, ∂L/∂W = [3, 3].
    assert_contains(&out, "s := 3\n  L = 9  (was 6)\n9\n");
    assert_contains(&out, "∂L/∂W = [3, 3]  (2)\n∂L/∂s = 3\n");
    // After s := 1: M = 6; the failed update leaves it 6.
    assert_contains(
        &out,
        "s := 1  (1 node evaluated again)\n  t = 2  (was 6)\n  L = 3  (was 9)\n  M = 6  (was 18)\n6\n",
    );
    assert_contains(&stderr_of(&output), "(2) @ (3): the inner sizes must agree");
    // ∂M/∂s = 2·sum(W) = 6: s = 1 − 3 = −2, and what moved: L = 3s = −6,
    // t = 2s = −4, M = 6s = −12.
    assert!(
        out.ends_with(
            "\n6\n6\ns = -2\n  L = -6  (was 3)\n  t = -4  (was 2)\n  M = -12  (was 6)\n-12\n"
        ),
        "{out}"
    );
}

/// A vector output's gradients are those of its sum (the pass starts from
/// ones), and the screen says so; an output built from a `grad(L, W)` is
/// differentiated through it (a node of the graph): ∂sum(g)/∂W is 2 per
/// element for g = 2W (by hand), and `:check` agrees.
#[test]
fn a_vector_outputs_gradients_say_they_are_of_its_sum() {
    // h = W @ x, ∂sum(h)/∂W = 1·xᵀ = [[1, -1], [1, -1]].
    let (events, status) = json_events(&[
        "-e",
        "W = [[1, 2], [3, 4]]\nx = [1, -1]\nh = W @ x\n:grad W",
    ]);
    assert_eq!(status, Some(0), "{events:?}");
    let note = events.iter().find(|e| e["kind"] == "notice").unwrap();
    assert_eq!(note["code"], "seeded-with-ones");
    assert_eq!(
        note["message"],
        "h has shape (2), not (): the backward pass starts from ones of its shape, so these are the gradients of sum(h)"
    );
    assert_all_close(
        &event(&events, "grad", "wrt", "W")["value"],
        &[1.0, -1.0, 1.0, -1.0],
    );
    let output = gradcalc()
        .args([
            "-e",
            "W = [[1, 2], [3, 4]]\nL = sum(W*W)\ng = grad(L, W)\ns = sum(g)\n:grad\n:check",
        ])
        .output()
        .unwrap();
    let out = stdout_of(&output);
    assert!(output.status.success(), "{out}{}", stderr_of(&output));
    assert_contains(&out, "∂s/∂W = 2×2\n       [[2, 2],\n        [2, 2]]");
    assert_eq!(out.matches("  pass").count(), 4, "{out}");
}

/// The functions of two operands apply elementwise to tensors as the
/// scalar ones do: `maximum(W, 0)` (a relu; `max(W, 0)` of a matrix is
/// ambiguous, tests/it/batch.rs), `min(x, 1)` (a vector has no axis 1),
/// `log(x, 2)`, `log(8, x)`; `max(x)` of one tensor stays the largest
/// element, `min(x)` the smallest. Values by hand;
/// ∂/∂W sum(maximum(W, 0)·W) = 2W where W > 0, else 0; ∂/∂x sum(log₂ x) =
/// 1/(x ln 2) (Python's math: 0.18033688011112042, 2.8853900817779268).
#[test]
fn functions_of_two_operands_apply_elementwise() {
    let (events, status) = json_events(&[
        "-e",
        "W = [[1, -2], [-3, 4]]\nx = [8, 0.5]\nmaximum(W, 0)\nmin(x, 1)\nlog(x, 2)\nlog(8, x)\nmax(W)\nL = sum(maximum(W, 0)*W) + sum(log(x, 2))\n:grad",
    ]);
    assert_eq!(status, Some(0), "{events:?}");
    let values: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "value" && e.get("shape").is_some() && e["name"].is_null())
        .map(|e| &e["value"])
        .collect();
    assert_all_close(values[0], &[1.0, 0.0, 0.0, 4.0]);
    assert_all_close(values[1], &[1.0, 0.5]);
    assert_all_close(values[2], &[3.0, -1.0]);
    assert_all_close(values[3], &[1.0, -3.0]);
    assert_all_close(values[4], &[4.0]);
    assert_all_close(
        &event(&events, "grad", "wrt", "W")["value"],
        &[2.0, 0.0, 0.0, 8.0],
    );
    assert_all_close(
        &event(&events, "grad", "wrt", "x")["value"],
        &[0.18033688011112042, 2.8853900817779268],
    );
    // The trace writes the call as called.
    let text = stdout_of(
        &gradcalc()
            .args([
                "-e",
                "W = [[1, -2], [-3, 4]]\nL = sum(maximum(W, 0)*W)\n:trace",
            ])
            .output()
            .unwrap(),
    );
    assert_contains(&text, "[3] maximum(W, 0) (max)\n");
    let min = gradcalc()
        .args(["-e", "x = [1, 5, 2]\nmin(x)"])
        .output()
        .unwrap();
    assert!(stdout_of(&min).ends_with("(3)\n1\n"), "{}", stdout_of(&min));
}

/// An elementwise op that makes inf or nan out of finite elements warns as
/// the scalar op does, naming the first such element.
#[test]
fn an_op_that_makes_nan_from_finite_elements_warns() {
    let output = gradcalc()
        .args([
            "-e",
            "x = [1, 0, -2]\nln(-x)\nW = [[1, 2], [0, 3]]\nL = sum(1/W)",
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    let error = stderr_of(&output);
    // ln(-1) is nan at [0]; 1/0 is inf at [1, 0].
    assert_contains(
        &error,
        "warning: logarithm of a negative number gives nan (at [0] of the result)",
    );
    assert_contains(
        &error,
        "warning: division by zero gives inf (at [1, 0] of the result)",
    );
    assert_contains(&stdout_of(&output), "[nan, -inf, 0.6931471806]  (3)\n");
}

/// A node whose expression is too long to write in every step line has a
/// short name (`t…`), and the trace says under its header what each stands
/// for; `max` of a matrix names its maximum's row and column.
#[test]
fn the_trace_says_what_each_short_name_stands_for() {
    let script = "A = [[0.3, -0.2], [0.1, 0.4]]\nu = [0.2, -0.4]\nQ = [[0.8, 0.6], [0.3, 0.9], [1, -0.1]]\nL = sum(A @ A) + u @ u + sum(A * A) + max(Q) + mean(A)\n:trace";
    let text = stdout_of(&gradcalc().args(["-e", script]).output().unwrap());
    // The sum of the first three terms (node 9) is written t9 in its steps.
    assert_contains(
        &text,
        "numbers\n  where t9 = sum(A @ A) + u @ u + sum(A * A)\n[1] L (+)\n",
    );
    assert_contains(&text, "\n[5] t9 (+)\n");
    // Q's largest element, 1, is in row 2, column 0.
    assert_contains(&text, "upstream ⊙ (Q == max(Q))   () → 3×2");
}

/// `:stats` counts the tensor graph: W (100×100 = 10 000 numbers) and its
/// sum (1) are 2 nodes holding 10 001 numbers; `:reset` frees them.
#[test]
fn stats_count_the_tensor_values_and_reset_frees_them() {
    let text = stdout_of(
        &gradcalc()
            .args([
                "-e",
                "W = ones(100, 100)\nL = sum(W)\n:stats\n:reset\n:stats",
            ])
            .output()
            .unwrap(),
    );
    assert_contains(
        &text,
        "vectors and matrices: 2 nodes holding 10001 numbers (78.1 KiB) of the budget of 134217728; `:reset` frees them, `:gc` does not\n",
    );
    assert_eq!(text.matches("vectors and matrices:").count(), 1, "{text}");
}

/// `--expand=` with an expression (spaces and all) says it takes one node's
/// name and how to give the expression one.
#[test]
fn expand_of_an_expression_says_to_name_it() {
    let error =
        error_of("W = [[1, 2], [3, 4]]\nx = [1, -1]\nL = sum(tanh(W @ x))\n:trace --expand=W @ x");
    assert_contains(
        &error,
        "`--expand=` takes one node's name, without spaces, not `W @ x`",
    );
    assert_contains(
        &error,
        "4 │ :trace --expand=W @ x\n  │        ^^^^^^^^^^^^^^ name it where the output is built (`z = W @ x`, then the output from `z`), then `:trace --expand=z`",
    );
}

/// An elementwise rule written over a compound operand brackets it, so that
/// the formula typed back gives the numbers beside it: for x = [1, 2],
/// ∂/∂(x + 1) of sum((x + 1)²) is 2·(x + 1) = [4, 6].
#[test]
fn an_elementwise_rule_over_a_sum_brackets_it_and_types_back() {
    let text = stdout_of(
        &gradcalc()
            .args(["-e", "x = [1, 2]\ny = sum((x + 1)^2)\n:trace"])
            .output()
            .unwrap(),
    );
    let line =
        "∂y/∂(x + 1) += upstream ⊙ (2*(x + 1)^(2 - 1))   ⊙ elementwise, 2\n      = [4, 6]  (2)\n";
    assert_contains(&text, line);
    let typed = stdout_of(
        &gradcalc()
            .args(["-e", "x = [1, 2]\n2*(x + 1)^(2 - 1)"])
            .output()
            .unwrap(),
    );
    assert!(typed.ends_with("[4, 6]  (2)\n"), "{typed}");
}

/// What a second newcomer's pass found: each message names the real
/// problem at its place.
#[test]
fn literal_index_and_gradient_messages_name_the_real_problem() {
    // A variable among a literal's elements, wherever it stands.
    for source in ["k = 2\n[1, k]", "k = 2\n[[1, k]]"] {
        assert_contains(
            &error_of(source),
            "the elements of a literal are numbers: a variable or a tensor cannot be one",
        );
    }
    let error = error_of("k = 2\n[1, k]");
    assert_contains(
        &error,
        "2 │ [1, k]\n  │     ^ build it with operations instead",
    );
    // Negative indices are numpy's, not gradcalc's.
    let error = error_of("x = [1, 2, 3]\nx[-1]");
    assert_contains(
        &error,
        "an index, axis or size is a whole number from 0 up, not -1",
    );
    assert_contains(&error, "no numpy `x[-1]`");
    // MATLAB's `[1 2 3]` wants commas.
    assert_contains(
        &error_of("[1 2 3]"),
        "separate the elements with commas: `[1, 2, 3]`",
    );
    // max of three.
    assert_contains(
        &error_of("x = [1, 5, 2]\nmax(x, x, x)"),
        "`max` of tensors takes one tensor (`max(x)`), an axis (`max(W, axis=1)`) or two operands elementwise (`maximum(W, 0)`); got 3",
    );
    // A derived scalar is W of `grad(L, W)` as for numbers: new_user.rs.
}

/// A scalar `:=` reports the tensor outputs of shape () that moved with it,
/// as it reports scalars: L = sum(c·W) = 10c, c = 2w.
#[test]
fn a_scalar_update_reports_the_tensor_losses_it_moved() {
    let text = stdout_of(
        &gradcalc()
            .args([
                "-e",
                "W = [[1, 2], [3, 4]]\nw = 1\nc = 2*w\nL = sum(c*W)\nw := 2",
            ])
            .output()
            .unwrap(),
    );
    assert!(
        text.ends_with("w := 2  (1 node evaluated again)\n  c = 4  (was 2)\n  L = 40  (was 20)\n"),
        "{text}"
    );
}
