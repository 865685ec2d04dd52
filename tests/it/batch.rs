//! The batch classifier as taught, through the binary: integer labels and
//! `cross_entropy`, `log_softmax`, `onehot`, `argmax` and comparisons (the
//! accuracy), reductions along an axis with negative axes and `axis=`,
//! slices with their gradients scattered back, the ambiguous `max(P, 1)`
//! refused, ties of `max`, `rand`/`uniform`, the forgotten transpose, and
//! the three lecture examples (`moons_mlp.calc`, `classifier.calc`,
//! `attention.calc`). Every expected number was computed independently with
//! numpy (float64, by hand-written formulas, `scripts/moons_mlp.py` for the
//! MLP) or by hand, and copied here; the tests never run numpy.

use serde_json::Value;

use crate::util::{
    assert_close, assert_contains, gradcalc, in_crate, json_events, json_number, output_in,
    stderr_of, stdout_of,
};

/// The numbers of a tensor event's nested `value`, row-major.
fn flat(value: &Value) -> Vec<f64> {
    match value {
        Value::Array(items) => items.iter().flat_map(flat).collect(),
        other => vec![json_number(other).unwrap_or_else(|| panic!("not a number: {other}"))],
    }
}

/// Asserts that the numbers of `value` are `expected`, each to `rel` relative.
#[track_caller]
fn assert_all_close(value: &Value, expected: &[f64], rel: f64) {
    let got = flat(value);
    assert_eq!(got.len(), expected.len(), "{value}");
    for (g, e) in got.iter().zip(expected) {
        assert_close(*g, *e, rel);
    }
}

/// The events of `source` run with `--json`, which must succeed.
fn events_of(source: &str) -> Vec<Value> {
    let (events, status) = json_events(&["-e", source]);
    assert_eq!(status, Some(0), "{source}: {events:?}");
    events
}

/// The value of the tensor event named `name` (the last one).
#[track_caller]
fn named<'a>(events: &'a [Value], name: &str) -> &'a Value {
    &events
        .iter()
        .rev()
        .find(|e| (e["kind"] == "value" && !e["shape"].is_null()) && e["name"] == name)
        .unwrap_or_else(|| panic!("no tensor {name} in {events:?}"))["value"]
}

/// The gradient event with respect to `wrt` (the last one).
#[track_caller]
fn gradient<'a>(events: &'a [Value], wrt: &str) -> &'a Value {
    &events
        .iter()
        .rev()
        .find(|e| (e["kind"] == "grad" && !e["shape"].is_null()) && e["wrt"] == wrt)
        .unwrap_or_else(|| panic!("no gradient for {wrt} in {events:?}"))["value"]
}

/// The error text of `source`, which must fail.
fn error_of(source: &str) -> String {
    let output = gradcalc().args(["-e", source]).output().unwrap();
    assert!(!output.status.success(), "{source}: {}", stdout_of(&output));
    stderr_of(&output)
}

/// numpy: Z = [[1, 2, 0.5], [0.1, -1, 3]], y = [1, 2]; L = mean(lse(Zᵢ) −
/// Zᵢ[yᵢ]); log_softmax = Z − lse; ∂L/∂Z = (softmax(Z) − onehot(y, 3))/2;
/// ∂/∂Z sum(log_softmax(Z) ⊙ R) = R − softmax(Z)·ΣR per row.
#[test]
fn cross_entropy_log_softmax_and_onehot_match_numpy() {
    let events = events_of(
        "Z = [[1, 2, 0.5], [0.1, -1, 3]]\ny = [1, 2]\nL = cross_entropy(Z, y)\nS = log_softmax(Z)\nY = onehot(y, 3)\nL\n:grad Z\nR = [[1, -2, 0.5], [0.3, 0.2, -1]]\nM = sum(log_softmax(Z)*R)\n:grad Z",
    );
    assert_close(
        json_number(named(&events, "L")).unwrap(),
        0.26757150153421794,
        1e-12,
    );
    assert_all_close(
        named(&events, "S"),
        &[
            -1.4643687841079447,
            -0.4643687841079447,
            -1.9643687841079447,
            -2.970774218960491,
            -4.070774218960491,
            -0.07077421896049119,
        ],
        1e-12,
    );
    assert_all_close(named(&events, "Y"), &[0.0, 1.0, 0.0, 0.0, 0.0, 1.0], 0.0);
    let grads: Vec<&Value> = events
        .iter()
        .filter(|e| (e["kind"] == "grad" && !e["shape"].is_null()) && e["wrt"] == "Z")
        .map(|e| &e["value"])
        .collect();
    assert_all_close(
        grads[0],
        &[
            0.11561194881107455,
            -0.18573414039411873,
            0.07012219158304425,
            0.02563180285417184,
            0.008532085993203712,
            -0.03416388884737548,
        ],
        1e-12,
    );
    assert_all_close(
        grads[1],
        &[
            1.1156119488110745,
            -1.6857341403941186,
            0.5701221915830442,
            0.3256318028541718,
            0.20853208599320372,
            -0.5341638888473754,
        ],
        1e-12,
    );
    // A label that is no class is refused, with where it is.
    assert_contains(
        &error_of("Z = [[1, 2], [3, 4]]\ncross_entropy(Z, [1, 2])"),
        "cross_entropy: the label 2 at [1] is not a class: labels are whole numbers from 0 to 1",
    );
    assert_contains(
        &error_of("Z = [[1, 2], [3, 4]]\ncross_entropy(Z, [1, 0, 1])"),
        "cross_entropy(Z, y) takes n×k scores Z and n labels y (or k scores and one label), not (2×2) and (3)",
    );
}

/// By hand: argmax of each row, the accuracy as the mean of a comparison,
/// and a comparison passes no gradient (its output is piecewise constant).
#[test]
fn argmax_and_comparisons_give_the_accuracy() {
    let events = events_of(
        "Z = [[0.5, -0.35, -0.3], [0.18, -0.46, 0.1], [-0.32, -0.12, 0.41]]\ny = [0, 0, 1]\nk = argmax(Z, 1)\nf = argmax(Z)\nacc = mean(argmax(Z, 1) == y)\nlt = (Z < 0.1)\nne = (y != [0, 1, 1])\nge = ([1, 2, 3] >= 2)\nle = ([1, 2, 3] <= [[2], [1]])\nL = sum((Z > 0)*Z)\n:grad Z",
    );
    assert_all_close(named(&events, "k"), &[0.0, 0.0, 2.0], 0.0);
    // The flat position of the largest element, 0.5 at [0, 0].
    assert_all_close(named(&events, "f"), &[0.0], 0.0);
    assert_close(
        json_number(named(&events, "acc")).unwrap(),
        2.0 / 3.0,
        1e-15,
    );
    assert_all_close(
        named(&events, "lt"),
        &[0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0],
        0.0,
    );
    assert_all_close(named(&events, "ne"), &[0.0, 1.0, 0.0], 0.0);
    assert_all_close(named(&events, "ge"), &[0.0, 1.0, 1.0], 0.0);
    assert_all_close(named(&events, "le"), &[1.0, 1.0, 0.0, 1.0, 0.0, 0.0], 0.0);
    // ∂/∂Z sum((Z > 0)·Z) = (Z > 0): the mask is a constant.
    assert_all_close(
        gradient(&events, "Z"),
        &[1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0],
        0.0,
    );
}

/// Comparisons in brackets are 1 or 0 elementwise with broadcasting
/// (main's 0/1 arithmetic), and slices and `axis=` print back as typed.
#[test]
fn comparisons_of_tensors_and_the_new_syntax_print_back() {
    let events = events_of("f = ([1, 2] == [1, 3])\ng = ([1, 2, 3] > [[0], [2]])");
    assert_all_close(named(&events, "f"), &[1.0, 0.0], 0.0);
    assert_all_close(named(&events, "g"), &[1.0, 1.0, 1.0, 0.0, 0.0, 1.0], 0.0);
    // Typed back: the parser's tree prints as the text that parses to it.
    for (text, printed) in [
        ("X[1:, :2]", "X[1:, :2]"),
        ("X[:, 0]", "X[:, 0]"),
        ("X[0:4]", "X[0:4]"),
        ("max(P, axis=1)", "max(P, axis=1)"),
    ] {
        let tree = gradcalc::syntax::parse_expression(text).unwrap();
        assert_eq!(tree.to_string(), printed, "{text}");
        let again = gradcalc::syntax::parse_expression(printed).unwrap();
        assert_eq!(again.to_string(), printed, "{text}");
    }
}

/// numpy: P = [[1, 5, 5], [-2, 0, 7]]: P.mean(1), P.max(1), P.min(0),
/// P.sum(-1), P.mean(-2); the gradient of max along an axis goes to each
/// row's first maximum; of a whole tensor it is split among ties.
#[test]
fn reductions_along_an_axis_with_negative_axes() {
    let events = events_of(
        "P = [[1, 5, 5], [-2, 0, 7]]\nm1 = mean(P, 1)\nx1 = max(P, axis=1)\nn0 = min(P, axis=0)\ns = sum(P, -1)\nm0 = mean(P, -2)\nq = softmax(P, -1)\nr = softmax(P)\nlo = min(P)\nL = sum(max(P, axis=1))\n:grad P\nT = [[1, 7, 7], [7, 0, 2]]\nM = max(T)\n:grad T\nA = mean(P, axis=1)\n:grad P",
    );
    assert_all_close(named(&events, "m1"), &[11.0 / 3.0, 5.0 / 3.0], 1e-15);
    assert_all_close(named(&events, "x1"), &[5.0, 7.0], 0.0);
    assert_all_close(named(&events, "n0"), &[-2.0, 0.0, 5.0], 0.0);
    assert_all_close(named(&events, "s"), &[11.0, 5.0], 0.0);
    assert_all_close(named(&events, "m0"), &[-0.5, 2.5, 6.0], 0.0);
    assert_eq!(named(&events, "q"), named(&events, "r"));
    assert_all_close(named(&events, "lo"), &[-2.0], 0.0);
    let grads: Vec<&Value> = events
        .iter()
        .filter(|e| (e["kind"] == "grad" && !e["shape"].is_null()) && e["wrt"] == "P")
        .map(|e| &e["value"])
        .collect();
    // The first 5 of row 0 (PyTorch's max(dim) index, numpy's argmax).
    assert_all_close(grads[0], &[0.0, 1.0, 0.0, 0.0, 0.0, 1.0], 0.0);
    assert_all_close(grads[1], &[1.0 / 3.0; 6], 1e-15);
    // Three tied 7s: a third each (PyTorch's evenly_distribute_backward).
    let third = 1.0 / 3.0;
    assert_all_close(
        gradient(&events, "T"),
        &[0.0, third, third, third, 0.0, 0.0],
        1e-15,
    );
    for (source, message) in [
        (
            "P = [[1, 2], [3, 4]]\nsum(P, -3)",
            "sum over axis -3: a tensor of 2 axes has axes 0 to 1 (or -2 to -1, counted from the last)",
        ),
        (
            "P = [[1, 2], [3, 4]]\nsoftmax(P, 0)",
            "softmax goes along the last axis (1, or -1) only",
        ),
        (
            "P = [[1, 2], [3, 4]]\ntanh(P, axis=0)",
            "`tanh` takes no `axis=` here",
        ),
        (
            "P = [[1, 2], [3, 4]]\nsum(P, keep=1)",
            "`keep=` is not a keyword",
        ),
    ] {
        assert_contains(&error_of(source), message);
    }
}

/// `max(P, 1)` of a matrix is refused with both readings; `maximum` is the
/// elementwise one, `axis=` the reduction; `max(x, 1)` of a vector (no
/// axis 1) stays elementwise.
#[test]
fn max_of_a_matrix_and_an_axis_number_is_refused_as_ambiguous() {
    let error = error_of("P = [[1, -2], [3, 0.5]]\nmax(P, 1)");
    assert_contains(
        &error,
        "`max(P, 1)` is ambiguous: the largest along axis 1, or the elementwise max with 1",
    );
    assert_contains(
        &error,
        "write `max(P, axis=1)` for the axis (numpy's `P.max(1)`), or `maximum(P, 1)` elementwise",
    );
    assert_contains(
        &error_of("P = [[1, -2], [3, 0.5]]\nmin(P, 0)"),
        "`minimum(P, 0)` elementwise",
    );
    let events = events_of(
        "P = [[1, -2], [3, 0.5]]\na = maximum(P, 1)\nb = minimum(P, 0)\nc = max(P, axis=1)\nx = [1, -1]\nd = max(x, 1)\ne1 = max(P, 0.5)",
    );
    assert_all_close(named(&events, "a"), &[1.0, 1.0, 3.0, 1.0], 0.0);
    assert_all_close(named(&events, "b"), &[0.0, -2.0, 0.0, 0.0], 0.0);
    assert_all_close(named(&events, "c"), &[1.0, 3.0], 0.0);
    assert_all_close(named(&events, "d"), &[1.0, 1.0], 0.0);
    assert_all_close(named(&events, "e1"), &[1.0, 0.5, 3.0, 0.5], 0.0);
}

/// By hand: slices of a 3×3 matrix and a vector, and the gradient of a
/// slice scattered back to the positions taken (zeros elsewhere).
#[test]
fn slices_take_rows_and_columns_and_scatter_gradients_back() {
    let events = events_of(
        "X = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]\na = X[0:2]\nb = X[:, 0]\nc = X[1:]\nd = X[1:, 1:]\ne1 = X[0, 1:]\nv = [10, 20, 30, 40]\nf = v[1:3]\ng = v[:2]\nL = sum(X[0:2]*[[1, 2, 3], [4, 5, 6]]) + sum(X[:, 2])\n:grad X",
    );
    assert_all_close(named(&events, "a"), &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 0.0);
    assert_all_close(named(&events, "b"), &[1.0, 4.0, 7.0], 0.0);
    assert_all_close(named(&events, "c"), &[4.0, 5.0, 6.0, 7.0, 8.0, 9.0], 0.0);
    assert_all_close(named(&events, "d"), &[5.0, 6.0, 8.0, 9.0], 0.0);
    assert_all_close(named(&events, "e1"), &[2.0, 3.0], 0.0);
    assert_all_close(named(&events, "f"), &[20.0, 30.0], 0.0);
    assert_all_close(named(&events, "g"), &[10.0, 20.0], 0.0);
    assert_all_close(
        gradient(&events, "X"),
        &[1.0, 2.0, 4.0, 4.0, 5.0, 7.0, 0.0, 0.0, 1.0],
        0.0,
    );
    assert_contains(
        &error_of("X = [[1, 2], [3, 4]]\nX[0:3]"),
        "the slice along axis 0 is out of range for shape (2×2)",
    );
}

/// `rand` and `uniform` draw from the generator `randn` uses, seeded by
/// `:seed`: the numbers of xoshiro256** seeded by SplitMix64 as written
/// again in scripts/moons_mlp.py, (next >> 11)/2⁵³ scaled to [lo, hi).
#[test]
fn rand_and_uniform_are_seeded_like_randn() {
    let events =
        events_of(":seed 1\nU = uniform(2, 3, -1, 1)\n:seed 5\nr = rand(2)\nn = uniform(4, 3, 3)");
    assert_all_close(
        named(&events, "U"),
        &[
            0.40584366631770097,
            0.04087323987771385,
            0.148211400039445,
            -0.2173427959161911,
            0.394356833119923,
            -0.7128559265111276,
        ],
        1e-15,
    );
    assert_all_close(
        named(&events, "r"),
        &[0.2884112281702357, 0.6020823331320106],
        1e-15,
    );
    assert_all_close(named(&events, "n"), &[3.0; 4], 0.0);
    assert_contains(
        &error_of("uniform(2, 1, 0)"),
        "uniform(…, lo, hi) takes finite bounds with lo ≤ hi, not 1 and 0",
    );
}

/// A product whose inner sizes differ says which transpose fits.
#[test]
fn a_forgotten_transpose_gets_a_hint() {
    let error = error_of("W = [[1, 2, 3], [4, 5, 6]]\ngu = [1, -1]\nW @ gu");
    assert_contains(&error, "(2×3) @ (2): the inner sizes must agree");
    assert_contains(
        &error,
        "a forgotten transpose? `Wᵀ @ gu` is (3×2)·(2): the inner sizes agree",
    );
    let error = error_of("A = [[1, 2, 3], [4, 5, 6]]\nB = [[1, 2, 3]]\nA @ B");
    assert_contains(&error, "`A @ Bᵀ` is (2×3)·(3×1)");
}

/// examples/moons_mlp.calc: each step's loss is numpy's (scripts/moons_mlp.py,
/// hand-written backpropagation; tests/data/moons_mlp.tsv) to 1e-12
/// relative, and every point ends on its side.
#[test]
fn the_moons_mlp_example_trains_to_numpys_losses() {
    let output = output_in(
        env!("CARGO_MANIFEST_DIR"),
        &["--json", "examples/moons_mlp.calc"],
    );
    assert_eq!(output.status.code(), Some(0));
    let events = crate::util::json_lines(&stdout_of(&output));
    let descent = events.iter().find(|e| e["kind"] == "descent").unwrap();
    let losses: Vec<f64> = descent["losses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| json_number(l).unwrap())
        .collect();
    let text = std::fs::read_to_string(in_crate("tests/data/moons_mlp.tsv")).unwrap();
    let want: Vec<(f64, f64)> = text
        .lines()
        .map(|line| {
            let fields: Vec<f64> = line.split('\t').map(|f| f.parse().unwrap()).collect();
            (fields[1], fields[2])
        })
        .collect();
    assert_eq!(want.len(), 101);
    assert_eq!(losses.len(), want.len());
    for (step, (got, (loss, _))) in losses.iter().zip(&want).enumerate() {
        assert!(
            crate::util::close(*got, *loss, 1e-12),
            "step {step}: {got:?} vs numpy {loss:?}"
        );
    }
    let accuracy = events
        .iter()
        .rev()
        .find(|e| e["kind"] == "value" && !e["shape"].is_null())
        .unwrap();
    assert_eq!(json_number(&accuracy["value"]), Some(want[100].1));
    assert_eq!(want[100].1, 1.0);
}

/// examples/classifier.calc, against numpy: L, the accuracy 5/6, the
/// gradients Xᵀ @ G and the column sums of G, G = (softmax(Z) − onehot)/6,
/// and the trace's rule for cross_entropy with its numbers.
#[test]
fn the_classifier_example_matches_numpy() {
    let output = output_in(
        env!("CARGO_MANIFEST_DIR"),
        &["--json", "examples/classifier.calc"],
    );
    assert_eq!(output.status.code(), Some(0));
    let events = crate::util::json_lines(&stdout_of(&output));
    assert_close(
        json_number(named(&events, "L")).unwrap(),
        0.7885739024792507,
        1e-12,
    );
    assert_close(
        json_number(named(&events, "accuracy")).unwrap(),
        5.0 / 6.0,
        1e-15,
    );
    let dw = [
        -0.25230002778027916,
        0.22650593191744825,
        0.025794095862830956,
        0.024459013970768672,
        -0.07901326687106568,
        0.05455425290029692,
    ];
    let db = [
        0.02279863536345369,
        -0.1738482158443541,
        0.15104958048090045,
    ];
    assert_all_close(gradient(&events, "W"), &dw, 1e-12);
    assert_all_close(gradient(&events, "b"), &db, 1e-12);
    // Xᵀ @ G and sum(G, 0), typed by hand, are the same numbers.
    let unnamed: Vec<&Value> = events
        .iter()
        .filter(|e| (e["kind"] == "value" && !e["shape"].is_null()) && e["name"].is_null())
        .map(|e| &e["value"])
        .collect();
    assert_all_close(unnamed[0], &dw, 1e-12);
    assert_all_close(unnamed[1], &db, 1e-12);
    let trace = events
        .iter()
        .find(|e| e["kind"] == "trace" && !e["shape"].is_null())
        .unwrap();
    let step = crate::util::member(&trace["steps"], "op", "cross_entropy");
    let contributions = step["contributions"].as_array().unwrap();
    assert_eq!(contributions.len(), 1, "the labels get nothing");
    assert_eq!(
        contributions[0]["rule"],
        "upstream ⊙ (softmax(Z) − onehot(y, 3)) / 6"
    );
    // The rule's numbers are G typed by hand (to rounding: softmax − onehot
    // then / 6 against the engine's softmax scaled in place).
    assert_all_close(
        &contributions[0]["value"]["value"],
        &flat(named(&events, "G")),
        1e-14,
    );
}

/// examples/attention.calc, against numpy (the mask as -inf, the
/// softmax's backward by hand, checked by central differences there): L
/// and ∂L/∂Wq.
#[test]
fn the_attention_example_matches_numpy() {
    let output = output_in(
        env!("CARGO_MANIFEST_DIR"),
        &["--json", "examples/attention.calc"],
    );
    assert_eq!(output.status.code(), Some(0));
    let events = crate::util::json_lines(&stdout_of(&output));
    assert_close(
        json_number(named(&events, "L")).unwrap(),
        0.5768764050118179,
        1e-12,
    );
    assert_all_close(
        gradient(&events, "Wq"),
        &[
            0.0014525370791100157,
            0.0057302748421228615,
            -0.13433568460905917,
            0.07143612555957103,
            0.04829121080999865,
            -0.02673003763841838,
        ],
        1e-10,
    );
    // The masked weights are exactly 0: token 0 sees only itself.
    assert_all_close(&named(&events, "A")[0], &[1.0, 0.0, 0.0, 0.0], 0.0);
    assert!(
        events
            .iter()
            .any(|e| e["kind"] == "trace" && !e["shape"].is_null())
    );
}

/// The numbers of a JSON value as gradcalc input: `[[1, 2], [3, 4]]`, `2`.
fn as_input(value: &Value) -> String {
    serde_json::to_string(value).unwrap().replace(',', ", ")
}

/// Every rule the trace prints for the batch ops, typed back at its step
/// with `upstream` bound to the step's upstream gradient and the operands'
/// names as they stand, gives the numbers beside it: the property the
/// scalar rules pass, for max/min with ties and along an axis, the axis
/// mean, log_softmax, cross_entropy and slices.
#[test]
fn the_batch_ops_rules_type_back_to_their_numbers() {
    let setup = "W = [[1, 7, 7], [7, 0, 2]]\nZ = [[1, 2, 0.5], [0.1, -1, 3]]\ny = [1, 2]\nx = [3, -1, 4, 1]\n";
    for (loss, op) in [
        ("L = max(W)*3", "max"),
        ("L = sum(max(W, axis=1)*[2, -1])", "max"),
        ("L = sum(max(W, axis=0)*[2, -1, 3])", "max"),
        ("L = sum(min(W, axis=1)*[2, -1])", "min"),
        ("L = min(x, axis=0)*2", "min"),
        ("L = min(x)*2", "min"),
        ("L = sum(mean(W, 1)*[2, -1])", "mean"),
        ("L = sum(mean(W, 0)*[2, -1, 3])", "mean"),
        (
            "L = sum(log_softmax(Z)*[[1, -2, 0.5], [0.3, 0.2, -1]])",
            "log_softmax",
        ),
        ("L = sum(log_softmax(x)*[1, -2, 0.5, 3])", "log_softmax"),
        ("L = 2*cross_entropy(Z, y)", "cross_entropy"),
        ("L = sum(W[0:1]*[[1, 2, 3]])", "slice"),
        ("L = sum(W[:, 1]*[2, -1])", "slice"),
        ("L = sum(W[1, 0:2]*[2, -1])", "slice"),
        ("L = sum(W[0:2, 2]*[5, 6])", "slice"),
        ("L = sum(W[0:2, 1:3]*[[1, 2], [3, 4]])", "slice"),
        ("L = sum(x[1:3]*[2, -1])", "slice"),
    ] {
        let events = events_of(&format!("{setup}{loss}\n:trace"));
        let trace = events
            .iter()
            .find(|e| e["kind"] == "trace" && !e["shape"].is_null())
            .unwrap();
        let step = crate::util::member(&trace["steps"], "op", op);
        let c = &step["contributions"][0];
        let rule = c["rule"].as_str().unwrap();
        let typed = format!(
            "{setup}upstream = {}\nG = {rule}",
            as_input(&step["upstream"]["value"])
        );
        let again = events_of(&typed);
        assert_all_close(named(&again, "G"), &flat(&c["value"]["value"]), 1e-12);
    }
}
