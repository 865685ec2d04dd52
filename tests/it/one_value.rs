//! One value model (issue 35): a number and a vector or matrix are the same
//! kind of value from the session up. The user-facing cases, each through
//! the binary: the earlier-binding note of a tensor gradient, `:backward` of
//! a tensor name, one JSON event per meaning, user functions on tensors.
//! (The 64 KiB tensor sum is in the hostile catalogue, `hostile.rs`.) Every
//! expected number was computed independently (by hand or with Python's
//! `math`, as each comment says).

use serde_json::{Value, json};

use crate::tensors::assert_all_close;
use crate::util::{
    assert_close, assert_contains, gradcalc, json_events, json_number, member, stdout_of,
};

/// The human output of `gradcalc -e script`, which must succeed.
fn text_of(script: &str) -> String {
    let output = gradcalc().args(["-e", script]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    stdout_of(&output)
}

/// `x` rebound after `y` was built from it: ∂y/∂x is 0 for the x of now,
/// and the gradient says why, for a vector as for a number — in JSON and
/// for a bare `:grad` (the note's words for both kinds over the lecture's
/// graphs: `typed_back.rs`).
#[test]
fn a_tensor_gradient_names_the_earlier_binding_as_a_number_does() {
    let script = "x = [1, 2]; y = sum(x^2); x = [3, 4]; y; :grad x";
    let (events, status) = json_events(&["-e", script]);
    assert_eq!(status, Some(0), "{events:?}");
    let grad = member(&Value::Array(events), "kind", "grad").clone();
    assert_eq!(grad["wrt"], "x");
    assert_eq!(grad["shape"], json!([2]));
    assert_all_close(&grad["value"], &[0.0, 0.0]);
    assert_eq!(grad["note"], "y was built from an earlier x");
    // A bare `:grad` lists x too, with the note (as for numbers).
    assert_contains(
        &text_of("x = [1, 2]; y = sum(x^2); x = [3, 4]; y; :grad"),
        "∂y/∂x = [0, 0]  (2)  (y was built from an earlier x)\n",
    );
}

/// `:backward L` of a number built from vectors (a value of shape `()`)
/// makes it the output, as for any number: ∂sum(x)/∂x = [1, 1].
#[test]
fn backward_of_a_number_built_from_a_vector_makes_it_the_output() {
    let text = text_of("x = [1, 2]; L = sum(x); :backward L");
    assert_contains(&text, "∂L/∂x = [1, 1]  (2)\n");
    assert!(!text.contains("vector or matrix"), "{text}");
    // A plain number beside tensors: ∂L/∂L = 1.
    let text = text_of("x = [1, 2]; L = 5; :backward L");
    assert_contains(&text, "∂L/∂L = 1\n");
    assert!(!text.contains("vector or matrix"), "{text}");
}

/// `--json`: every value under `value`, `shape` only for a tensor (`[]`
/// for shape `()`), gradients as `grad`, the tensor `:trace`, `:topo` and
/// `:vars` under the names of the scalar ones; no kind names a tensor.
#[test]
fn json_writes_numbers_and_tensors_under_one_name() {
    let script = "w = 2\nW = [[1, 2], [3, 4]]\nL = sum(W*W) + w\n:grad W\n:trace\n:topo\n:vars";
    let (events, status) = json_events(&["-e", script]);
    assert_eq!(status, Some(0), "{events:?}");
    for event in &events {
        let kind = event["kind"].as_str().unwrap();
        assert!(!kind.starts_with("tensor"), "{event}");
    }
    let all = Value::Array(events.clone());
    let number = member(&all, "name", "w");
    assert_eq!(number["kind"], "value");
    assert_eq!(number.get("shape"), None, "{number}");
    assert_eq!(number["value"], 2);
    let matrix = member(&all, "name", "W");
    assert_eq!(matrix["kind"], "value");
    assert_eq!(matrix["shape"], json!([2, 2]));
    assert_eq!(matrix["value"], json!([[1, 2], [3, 4]]));
    // L = 1 + 4 + 9 + 16 + 2 = 32, of shape ().
    let loss = member(&all, "name", "L");
    assert_eq!(loss["kind"], "value");
    assert_eq!(loss["shape"], json!([]));
    assert_eq!(loss["value"], 32);
    // ∂L/∂W = 2W.
    let grad = member(&all, "kind", "grad");
    assert_eq!((&grad["of"], &grad["wrt"]), (&json!("L"), &json!("W")));
    assert_eq!(grad["shape"], json!([2, 2]));
    assert_all_close(&grad["value"], &[2.0, 4.0, 6.0, 8.0]);
    let trace = member(&all, "kind", "trace");
    assert_eq!(trace["shape"], json!([]));
    assert!(!trace["steps"].as_array().unwrap().is_empty(), "{trace}");
    let topo = member(&all, "kind", "topo");
    assert_eq!(topo["nodes"][0]["node"], "L");
    // `:vars`: one array; the tensors with their shape and gradient.
    let vars = member(&all, "kind", "vars");
    let w = member(&vars["vars"], "name", "w");
    assert_eq!(w.get("shape"), None, "{w}");
    assert_close(json_number(&w["grad"]).unwrap(), 1.0, 0.0);
    let big_w = member(&vars["vars"], "name", "W");
    assert_eq!(big_w["shape"], json!([2, 2]));
    assert_all_close(&big_w["grad"], &[2.0, 4.0, 6.0, 8.0]);
    assert_eq!(vars.get("tensors"), None, "{vars}");
}

/// h = tanh(W @ x + b) through a user function, called with matrices: the
/// same value and gradient as the body written out. By hand: W @ x + b =
/// [-1.4, 2.2]; Python's math: tanh of it [-0.8853516482022625,
/// 0.9757431300314515], sum 0.09039148182918899, 1 − h² =
/// [0.21615245902553715, 0.04792534419642591], ∂L/∂W = (1 − h²) xᵀ.
#[test]
fn user_functions_take_vectors_and_matrices() {
    let define = "layer(W, x, b) = tanh(W @ x + b)\nW = [[0.5, -1], [1.5, 0.5]]\nx = [1, 2]\nb = [0.1, -0.3]\n";
    let expected_h = [-0.885_351_648_202_262_5, 0.975_743_130_031_451_5];
    let d = [0.216_152_459_025_537_15, 0.047_925_344_196_425_91];
    let expected_grad = [d[0], 2.0 * d[0], d[1], 2.0 * d[1]];
    for body in ["layer(W, x, b)", "tanh(W @ x + b)"] {
        let script = format!("{define}h = {body}\nL = sum(h)\n:grad W");
        let (events, status) = json_events(&["-e", &script]);
        assert_eq!(status, Some(0), "{body}: {events:?}");
        let all = Value::Array(events);
        assert_all_close(&member(&all, "name", "h")["value"], &expected_h);
        assert_close(
            json_number(&member(&all, "name", "L")["value"]).unwrap(),
            0.090_391_481_829_188_99,
            1e-12,
        );
        assert_all_close(&member(&all, "kind", "grad")["value"], &expected_grad);
    }
    // A call inside a call, and the wrong count of arguments refused at the call.
    let text = text_of(&format!(
        "{define}twice(W, x, b) = layer(W, x, b) * 2\nsum(twice(W, x, b))"
    ));
    assert_contains(&text, "0.1807829637");
    let output = gradcalc()
        .args(["-e", &format!("{define}layer(W, x)")])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_contains(&crate::util::stderr_of(&output), "layer");
}

/// The whole `:trace` of a one-layer network built by a user function,
/// L = sum(layer(W, x, b)). Checked by hand and with Python's `math`:
/// 1 − tanh²(W @ x + b) = [0.216152459, 0.0479253442] (the upstream of
/// W @ x and of b), ∂L/∂W = that · xᵀ = [[0.216152459, 0.4323049181],
/// [0.0479253442, 0.09585068839]], ∂L/∂x = Wᵀ · that = [0.5·0.216152459 +
/// 1.5·0.0479253442, −0.216152459 + 0.5·0.0479253442] = [0.1799642458,
/// −0.1921897869]. The call opened (`--expand=layer1`): each op of its
/// body one step (without it the call is one step, `call_steps.rs`).
#[test]
fn the_trace_of_a_layer_called_as_a_function_whole() {
    crate::util::check(
        "layer(W, x, b) = tanh(W @ x + b)\nW = [[0.5, -1], [1.5, 0.5]]\nx = [1, 2]\nb = [0.1, -0.3]\nL = sum(layer(W, x, b))\n:trace --expand=layer1",
        expect_test::expect![[r#"
            defined layer(W, x, b)
            W = 2×2
               [[0.5,  -1],
                [1.5, 0.5]]
            x = [1, 2]  (2)
            b = [0.1, -0.3]  (2)
            L = 0.09039148183
            backward pass from L: each tensor op one step, its rule with shapes, then the numbers
            [1] L (sum)
                upstream ∂L/∂L = 1
                ∂L/∂(tanh(W @ x + b)) += upstream ⊙ ones(2)   () → 2
                  = [1, 1]  (2)
            [2] tanh(W @ x + b) (tanh)
                upstream ∂L/∂(tanh(W @ x + b)) = [1, 1]  (2)
                ∂L/∂(W @ x + b) += upstream ⊙ (1 - tanh(W @ x + b)^2)   ⊙ elementwise, 2
                  = [0.216152459, 0.0479253442]  (2)
            [3] W @ x + b (+)
                upstream ∂L/∂(W @ x + b) = [0.216152459, 0.0479253442]  (2)
                ∂L/∂(W @ x) += upstream   ⊙ elementwise, 2
                  = [0.216152459, 0.0479253442]  (2)
                ∂L/∂b += upstream   ⊙ elementwise, 2
                  = [0.216152459, 0.0479253442]  (2)
            [4] W @ x (@)
                upstream ∂L/∂(W @ x) = [0.216152459, 0.0479253442]  (2)
                ∂L/∂W += outer(upstream, x)   outer((2), (2)) → 2×2
                  = 2×2
                   [[ 0.216152459,  0.4323049181],
                    [0.0479253442, 0.09585068839]]
                ∂L/∂x += Wᵀ @ upstream   (2×2) @ (2) → 2
                  = [0.1799642458, -0.1921897869]  (2)
        "#]],
    );
}

/// The whole output of `:vars` after a `:descend` of L = |W @ x − y|²: three
/// steps of lr 0.05 move W to [[0.9375, −0.125], [0.8875, −0.725]] (numpy,
/// as in `tensors.rs`); by hand, r = W @ x − y = [−0.3125, 0.4375], L = r·r
/// = 0.2890625, ∂L/∂W = 2r xᵀ = [[−0.625, −1.25], [0.875, 1.75]], ∂L/∂x =
/// Wᵀ 2r = [0.190625, −0.55625], ∂L/∂y = −2r = [0.625, −0.875].
#[test]
fn vars_after_a_tensor_descent_whole() {
    crate::util::check(
        "W = [[0.5, -1], [1.5, 0.5]]\nx = [1, 2]\ny = [1, -1]\nL = sum((W @ x - y)^2)\n:descend L lr=0.05 steps=3 W\n:vars",
        expect_test::expect![[r#"
            W = 2×2
               [[0.5,  -1],
                [1.5, 0.5]]
            x = [1, 2]  (2)
            y = [1, -1]  (2)
            L = 18.5
            gradient descent on L over W, learning rate 0.05: 3 steps, each one backward pass and all parameters moved together
              step          L
                 0       18.5
                 1      4.625
                 2    1.15625
                 3  0.2890625
            L from step 0 to step 3 (3 steps)
            ⣀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀ 20
            ⠀⠑⠢⣀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀
            ⠀⠀⠀⠀⠑⠤⡀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀ 15
            ⠀⠀⠀⠀⠀⠀⠈⠑⠤⡀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀
            ⠀⠀⠀⠀⠀⠀⠀⠀⠀⠈⠒⢄⡀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀
            ⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠈⠒⢄⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀ 10
            ⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠉⠢⢄⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀
            ⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠉⠢⣀⣀⣀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀ 5
            ⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠉⠉⠉⠒⠒⠒⠤⠤⢄⣀⣀⡀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀
            ⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠈⠉⠉⠑⠒⠒⠤⠤⠤⠤⠤⠤⠤⠤⠤⠤⠤⠤⠤⠤⠤⠤⠤⠤⠤⠤⡀
            ⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀⠀ 0
            0.0                                                      3.0

            W = 2×2
               [[0.9375, -0.125],
                [0.8875, -0.725]]
              L = 0.2890625  derived  ∂L/∂L = 1
              W (leaf) = 2×2
                      [[0.9375, -0.125],
                       [0.8875, -0.725]]
                ∂L/∂W = 2×2
                      [[-0.625, -1.25],
                       [ 0.875,  1.75]]
              x (leaf) = [1, 2]  (2)
                ∂L/∂x = [0.190625, -0.55625]  (2)
              y (leaf) = [1, -1]  (2)
                ∂L/∂y = [0.625, -0.875]  (2)
        "#]],
    );
}

/// One name table: a name holds a number or a tensor, and a failed
/// statement that would rebind it to the other kind leaves it as it was
/// (one journal undoes both kinds). Values by hand: `x` stays 2 after the
/// refused product ([1, 2] @ a 3×1 matrix breaks the shape rule 2 ≠ 3);
/// `W` rebound from a vector to 3 is the number 3, and `W + 1` is 4.
#[test]
fn one_name_table_holds_either_kind_and_a_failed_rebinding_changes_nothing() {
    let output = gradcalc()
        .args([
            "--keep-going",
            "-e",
            "x = 2\nx = [1, 2] @ [[1], [2], [3]]\nx + 0",
        ])
        .output()
        .unwrap();
    assert_eq!(stdout_of(&output), "x = 2\n2\n");
    assert_eq!(
        text_of("W = [1, 2]\nW = 3\nW + 1"),
        "W = [1, 2]  (2)\nW = 3\n4\n"
    );
}
