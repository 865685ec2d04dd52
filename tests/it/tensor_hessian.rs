//! Tensor derivatives as graph nodes through the binary: `grad(L, W)` of
//! tensors differentiated again, `:hessian` of a tensor output over the
//! elements of its leaves (scalar leaves too), and a gradient that follows
//! its leaf after `:=`. Every expected number is by hand or from numpy
//! (float64, run once when the test was written; the tests never run it).

use serde_json::Value;

use crate::tensors::assert_all_close;
use crate::util::{assert_contains, gradcalc, json_events, json_number, stderr_of, stdout_of};

/// The `:hessian` event of `script` run with `--json`: its names and its
/// matrix, row-major.
#[track_caller]
fn hessian(script: &str) -> (Vec<String>, Vec<f64>, Value) {
    let (events, status) = json_events(&["-e", script]);
    assert_eq!(status, Some(0), "{events:?}");
    let h = events
        .iter()
        .find(|e| e["kind"] == "hessian")
        .unwrap_or_else(|| panic!("no hessian in {events:?}"))
        .clone();
    let names = h["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect();
    let matrix = h["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| {
            row.as_array()
                .unwrap()
                .iter()
                .map(|v| json_number(v).unwrap())
        })
        .collect();
    (names, matrix, h)
}

/// Asserts `got` is `expected` element by element, to 1e-12 relative (an
/// absolute 1e-12 near 0).
#[track_caller]
fn all_close(got: &[f64], expected: &[f64]) {
    assert_eq!(got.len(), expected.len(), "{got:?}");
    for (g, e) in got.iter().zip(expected) {
        assert!(
            (g - e).abs() <= 1e-12 * e.abs().max(1.0),
            "{got:?} vs {expected:?}"
        );
    }
}

/// L = sum(x³): ∂²L/∂xᵢ∂xⱼ = 6xᵢ where i = j, else 0 (by hand):
/// diag(6, 12, 18) at x = (1, 2, 3), exactly symmetric.
#[test]
fn the_hessian_of_a_sum_of_cubes_is_diag_6x() {
    let (names, matrix, h) = hessian("x = [1, 2, 3]\nL = sum(x^3)\n:hessian x");
    assert_eq!(names, ["x[0]", "x[1]", "x[2]"]);
    all_close(&matrix, &[6.0, 0.0, 0.0, 0.0, 12.0, 0.0, 0.0, 0.0, 18.0]);
    assert_eq!(h["of"], "L");
    assert_eq!(json_number(&h["asymmetry"]), Some(0.0));
}

/// L = sum(W ⊙ W): ∂²L/∂W_ij∂W_kl = 2 where (i, j) = (k, l), else 0 (by
/// hand): 2·I₄, rows named `W[i,j]` row-major. Without names, `:hessian`
/// takes the leaves the output reaches, as `:grad` does.
#[test]
fn the_hessian_of_a_sum_of_squares_of_a_matrix_is_twice_the_identity() {
    let identity2: Vec<f64> = (0..16)
        .map(|k| if k % 5 == 0 { 2.0 } else { 0.0 })
        .collect();
    for command in [":hessian W", ":hessian"] {
        let (names, matrix, _) = hessian(&format!("W = [[1,2],[3,4]]\nL = sum(W*W)\n{command}"));
        assert_eq!(names, ["W[0,0]", "W[0,1]", "W[1,0]", "W[1,1]"]);
        all_close(&matrix, &identity2);
    }
}

/// `grad(sum(grad(sum(x^3), x)), x)` = ∂/∂x sum(3x²) = 6x = (6, 12, 18) at
/// x = (1, 2, 3) (by hand), and one order more, 6 per element.
#[test]
fn a_gradient_of_a_tensor_gradient_is_the_second_derivative() {
    let (events, status) = json_events(&[
        "-e",
        "x = [1, 2, 3]\ng = grad(sum(grad(sum(x^3), x)), x)\nh = grad(sum(g), x)",
    ]);
    assert_eq!(status, Some(0), "{events:?}");
    let value = |name: &str| {
        events
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {events:?}"))["value"]
            .clone()
    };
    assert_all_close(&value("g"), &[6.0, 12.0, 18.0]);
    assert_all_close(&value("h"), &[6.0, 6.0, 6.0]);
}

/// A layer L = sum(tanh(W @ x)) at W = [[0.1, 0.2], [0.3, 0.4]], x = (1, 2):
/// with u = W @ x = (0.5, 1.1), ∂²L/∂W_ij∂W_kl = δ_ik · (−2 tanh(u_i)(1 −
/// tanh²(u_i))) · x_j · x_l. numpy (float64):
///
/// ```text
/// u = W @ x; t = np.tanh(u); c = -2*t*(1 - t**2)
/// H[2i+j, 2k+l] = (i == k) * c[i] * x[j] * x[l]
/// c = [-0.7268619813835873, -0.5750806044028614]
/// ```
///
/// so H = [[c0, 2c0, 0, 0], [2c0, 4c0, 0, 0], [0, 0, c1, 2c1], [0, 0, 2c1, 4c1]].
#[test]
fn a_tanh_layers_hessian_in_w_is_numpys() {
    let (names, matrix, _) =
        hessian("W = [[0.1, 0.2], [0.3, 0.4]]\nx = [1, 2]\nL = sum(tanh(W @ x))\n:hessian W");
    assert_eq!(names, ["W[0,0]", "W[0,1]", "W[1,0]", "W[1,1]"]);
    let c0 = -0.7268619813835873;
    let c1 = -0.5750806044028614;
    all_close(
        &matrix,
        &[
            c0,
            -1.4537239627671745,
            0.0,
            0.0,
            -1.4537239627671745,
            -2.907447925534349,
            0.0,
            0.0,
            0.0,
            0.0,
            c1,
            -1.1501612088057227,
            0.0,
            0.0,
            -1.1501612088057227,
            -2.3003224176114454,
        ],
    );
}

/// A scalar leaf beside a vector: L = sum(a·x²) at a = 2, x = (1, 2, 3)
/// (by hand): ∂²L/∂a² = 0, ∂²L/∂a∂xᵢ = 2xᵢ = (2, 4, 6), ∂²L/∂xᵢ∂xⱼ = 2a
/// = 4 where i = j. The rows are named `a`, `x[0]`, …
#[test]
fn a_scalar_leaf_and_a_vector_share_one_hessian() {
    let (names, matrix, _) = hessian("a = 2\nx = [1, 2, 3]\nL = sum(a * x^2)\n:hessian a x");
    assert_eq!(names, ["a", "x[0]", "x[1]", "x[2]"]);
    #[rustfmt::skip]
    let expected = [
        0.0, 2.0, 4.0, 6.0,
        2.0, 4.0, 0.0, 0.0,
        4.0, 0.0, 4.0, 0.0,
        6.0, 0.0, 0.0, 4.0,
    ];
    all_close(&matrix, &expected);
}

/// `G = grad(L, x)` is a node of the graph: after `x := [2, 0, 1]` it is
/// 2a·x = (8, 0, 4) (by hand, a = 2), as the scalar `grad` follows its
/// leaf; `grad(L, a)` = sum(x²) follows too: 14, then 5.
#[test]
fn a_tensor_gradient_follows_its_leaf_after_colon_equals() {
    let output = gradcalc()
        .args([
            "-e",
            "a = 2\nx = [1, 2, 3]\nL = sum(a * x^2)\nG = grad(L, x)\nga = grad(L, a)\nx := [2, 0, 1]\nG\nga",
        ])
        .output()
        .unwrap();
    let out = stdout_of(&output);
    assert!(output.status.success(), "{out}{}", stderr_of(&output));
    assert_contains(&out, "G = [4, 8, 12]  (3)");
    assert_contains(&out, "ga = 14");
    assert!(out.ends_with("[8, 0, 4]  (3)\n5\n"), "{out}");
}

/// What is not built as nodes is refused by name, never a wrong number: a
/// slice's first derivative is the numbers (∂/∂x sum(x[0:2]³) = (3, 12, 0)
/// by hand), but a gradient of it is refused, and so is its `:hessian`;
/// the Hessian of a vector output asks to reduce it; more than 400
/// elements ask to name fewer.
#[test]
fn what_is_not_built_as_nodes_is_refused_by_name() {
    let output = gradcalc()
        .args([
            "--keep-going",
            "-e",
            "x = [1, 2, 3]\nP = sum(x[0:2]^3)\nq = grad(P, x)\ngrad(sum(q), x)\nP\n:hessian x\nh = x*2\n:hessian\nW = zeros(21, 20)\nM = sum(W*W)\n:hessian W",
        ])
        .output()
        .unwrap();
    let (out, err) = (stdout_of(&output), stderr_of(&output));
    assert_contains(&out, "q = [3, 12, 0]  (3)");
    assert_contains(
        &err,
        "error: a gradient of a gradient of tensors is not supported through this `grad(L, W)`",
    );
    assert_contains(
        &err,
        "error: `:hessian`: a derivative as nodes through `slice` is not supported yet",
    );
    assert_contains(
        &err,
        "`:hessian` takes an output of shape (), and h has shape (3)",
    );
    assert_contains(
        &err,
        "`:hessian` takes at most 400 elements in all (one row and one column each); these leaves have 420",
    );
    assert!(!err.contains("panicked"), "{err}");
}
