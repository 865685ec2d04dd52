//! Every rule a tensor `:trace` prints is gradcalc input that gives the
//! numbers printed beside it: typed back into the same session at its step,
//! with `upstream` bound to the step's upstream gradient and the operands'
//! names as they stand, it evaluates to the contribution (to 1e-12
//! relative). A property over random shapes and values for every tensor op:
//! each scalar op elementwise (with numpy's broadcasting, the mask of relu,
//! max and min, ties included), the four kinds of matrix product, `outer`,
//! transpose, both indexes, `sum` whole, along an axis and with `keepdims`,
//! `mean`, `max`, `softmax` and `logsumexp` of vectors and matrices.
//!
//! Below it, the cases of the lecture through the binary: the relu mask and
//! a dead unit's `3·0 = 0`, a broadcast bias's `sum(upstream, 0)`, the
//! fan-out's running sum, `--expand` of two nodes, a bare `--expand`, an
//! operand past the element limit.

use gradcalc::engine::{Arity, Domain, Notation, Op};
use gradcalc::session::Session;
use proptest::prelude::*;

use crate::typed_back::{agree, first_false, literal, printed_formulas};
use crate::util::{assert_contains, gradcalc, session_events, stdout_of};

/// Values for a shape: uniform in `lo..hi`, or (half the time) small
/// integers, so that relu meets 0 and max and min meet ties.
fn values(shape: Vec<usize>, lo: f64, hi: f64) -> BoxedStrategy<(Vec<usize>, Vec<f64>)> {
    let len = shape.iter().product::<usize>();
    let ints: Vec<f64> = [-1.0, 0.0, 1.0, 2.0]
        .into_iter()
        .filter(|&x| x >= lo && x <= hi)
        .collect();
    let uniform = prop::collection::vec(lo..hi, len).boxed();
    let data = if ints.len() > 1 {
        prop_oneof![
            uniform,
            prop::collection::vec(prop::sample::select(ints), len)
        ]
        .boxed()
    } else {
        uniform
    };
    data.prop_map(move |d| (shape.clone(), d)).boxed()
}

/// A vector or a matrix shape, sizes 1 to 3.
fn shape() -> impl Strategy<Value = Vec<usize>> {
    prop_oneof![
        (1..4usize).prop_map(|n| vec![n]),
        (1..4usize, 1..4usize).prop_map(|(m, n)| vec![m, n])
    ]
}

/// Where an op's inputs are taken from: inside its domain, away from its edges.
fn range(domain: Domain) -> (f64, f64) {
    match domain {
        Domain::Positive | Domain::NonNegative | Domain::NonzeroDivisor | Domain::RealPowers => {
            (0.25, 2.0)
        }
        Domain::MinusOneToOne | Domain::BetweenMinusOneAndOne => (-0.9, 0.9),
        Domain::OneAndAbove => (1.25, 3.0),
        Domain::Reals => (-2.0, 2.0),
    }
}

/// The ops of the scalar table that apply elementwise, with their arity.
fn elementwise_ops() -> Vec<Op> {
    Op::table()
        .iter()
        .filter(|info| !matches!(info.arity, Arity::Leaf))
        .map(|info| info.op)
        .collect()
}

/// A tensor program: operands bound to names (`a`, `b`), `y` the op's
/// node, and `L = sum(y ⊙ C)` with a random `C`, so the upstream is no
/// plain ones.
#[derive(Debug, Clone)]
struct Case {
    program: String,
}

/// Binds `name` to `(shape, data)`.
fn bind(name: &str, (shape, data): &(Vec<usize>, Vec<f64>)) -> String {
    format!("{name} = {}\n", literal(shape, data))
}

/// One operand of an elementwise op of output `out`: its shape broadcasts
/// to `out` (a scalar, a row, `1×n`, `m×1`, or `out` itself).
fn broadcast_shape(out: Vec<usize>) -> impl Strategy<Value = Vec<usize>> {
    let choices = match out[..] {
        [n] => vec![vec![], vec![n], vec![1]],
        [m, n] => vec![vec![], vec![n], vec![1, n], vec![m, 1], vec![m, n]],
        _ => vec![out.clone()],
    };
    prop::sample::select(choices)
}

/// An elementwise case: a scalar op of the table, its operands' shapes
/// broadcasting to a vector or a matrix.
fn elementwise_case() -> impl Strategy<Value = Case> {
    (prop::sample::select(elementwise_ops()), shape()).prop_flat_map(|(op, out)| {
        let info = op.info();
        let (lo, hi) = range(info.domain);
        let unary = info.arity == Arity::Unary;
        let (a_shape, b_shape) = if unary {
            (Just(out.clone()).boxed(), Just(vec![]).boxed())
        } else {
            // At least one operand a tensor of the output's shape.
            (
                Just(out.clone()).boxed(),
                broadcast_shape(out.clone()).boxed(),
            )
        };
        (a_shape, b_shape, any::<bool>(), shape_values(out.clone()))
            .prop_flat_map(move |(sa, sb, swap, c)| {
                // `^` at base 0 too (its integer values include 0), where
                // its rules read 0·∞ and the op passes nothing.
                let (lo_a, lo_b, hi_b) = match op {
                    Op::Pow => (0.0, -2.0, 2.0),
                    _ => (lo, lo, hi),
                };
                let (sa, sb) = if swap && !unary { (sb, sa) } else { (sa, sb) };
                (values(sa, lo_a, hi), values(sb, lo_b, hi_b), Just(c))
            })
            .prop_map(move |(a, b, c)| {
                let info = op.info();
                let y = match (info.arity, info.notation) {
                    (Arity::Unary, Notation::Prefix) => "-a".to_string(),
                    (Arity::Unary, _) => format!("{}(a)", info.name),
                    (_, Notation::Infix) => format!("a {} b", info.name),
                    _ => format!("{}(a, b)", info.name),
                };
                let mut program = bind("a", &a);
                if !unary {
                    program += &bind("b", &b);
                }
                program += &format!("y = {y}\n");
                program += &bind("C", &c);
                Case { program }
            })
    })
}

/// Random values of `shape` for the weights `C` of the loss.
fn shape_values(shape: Vec<usize>) -> BoxedStrategy<(Vec<usize>, Vec<f64>)> {
    values(shape, -2.0, 2.0)
}

/// A case of an op of the tensor table: products, structural ops and
/// reductions, of vectors and of matrices.
fn tensor_case() -> impl Strategy<Value = Case> {
    (1..4usize, 1..4usize, 1..4usize, 0..24usize, 0..2usize).prop_flat_map(
        |(m, k, n, kind, axis)| {
            let (i, j) = (k % m, k % n);
            let other = if axis == 0 { n } else { m };
            let (a, b, y, out): (Vec<usize>, Vec<usize>, String, Vec<usize>) = match kind {
                0 => (vec![m, k], vec![k, n], "a @ b".into(), vec![m, n]),
                1 => (vec![m, k], vec![k], "a @ b".into(), vec![m]),
                2 => (vec![k], vec![k, n], "a @ b".into(), vec![n]),
                3 => (vec![k], vec![k], "a @ b".into(), vec![]),
                4 => (vec![m], vec![n], "outer(a, b)".into(), vec![m, n]),
                5 => (vec![m, n], vec![], "aᵀ".into(), vec![n, m]),
                6 => (vec![m, n], vec![], format!("a[{i}]"), vec![n]),
                7 => (vec![n], vec![], format!("a[{j}]"), vec![]),
                8 => (vec![m, n], vec![], format!("a[{i}, {j}]"), vec![]),
                9 => (vec![m, n], vec![], "sum(a)".into(), vec![]),
                10 => (vec![n], vec![], "sum(a)".into(), vec![]),
                11 => (vec![m, n], vec![], format!("sum(a, {axis})"), vec![other]),
                12 => (vec![n], vec![], "sum(a, 0)".into(), vec![]),
                13 => (
                    vec![m, n],
                    vec![],
                    format!("sum(a, {axis}, keepdims)"),
                    if axis == 0 { vec![1, n] } else { vec![m, 1] },
                ),
                14 => (vec![n], vec![], "sum(a, 0, keepdims)".into(), vec![1]),
                15 => (vec![m, n], vec![], "mean(a)".into(), vec![]),
                16 => (vec![n], vec![], "mean(a)".into(), vec![]),
                17 => (vec![m, n], vec![], "max(a)".into(), vec![]),
                18 => (vec![n], vec![], "max(a)".into(), vec![]),
                19 => (vec![m, n], vec![], "softmax(a)".into(), vec![m, n]),
                20 => (vec![n], vec![], "softmax(a)".into(), vec![n]),
                21 => (vec![m, n], vec![], "logsumexp(a)".into(), vec![m]),
                22 => (vec![n], vec![], "logsumexp(a)".into(), vec![]),
                _ => (vec![n], vec![], "aᵀ".into(), vec![n]),
            };
            let with_b = !b.is_empty();
            (
                values(a, -2.0, 2.0),
                values(b, -2.0, 2.0),
                shape_values(out),
                Just(y),
            )
                .prop_map(move |(a, b, c, y)| {
                    let mut program = bind("a", &a);
                    if with_b {
                        program += &bind("b", &b);
                    }
                    program += &format!("y = {y}\n");
                    program += &bind("C", &c);
                    Case { program }
                })
        },
    )
}

/// Runs the case, traces `L`, types every rule back: how many were
/// checked, or the first rule that gives other numbers, with what it gave
/// (the typed-back property of both kinds, `typed_back.rs`).
fn first_false_rule(case: &Case) -> Result<usize, String> {
    let mut session = Session::new();
    let source = format!("{}L = sum(y*C)\n:trace\n", case.program);
    let events = session_events(&mut session, &source)?;
    let printed = printed_formulas(&session, &events);
    if printed.is_empty() {
        return Err("no trace".to_string());
    }
    first_false(&mut session, &printed, |i, got| {
        agree(got, &printed[i].value, 1e-12)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_elementwise_rule_types_back_to_its_numbers(case in elementwise_case()) {
        let checked = first_false_rule(&case).map_err(|e| TestCaseError::fail(format!("{e}\n{}", case.program)))?;
        prop_assert!(checked >= 2);
    }

    #[test]
    fn every_tensor_op_rule_types_back_to_its_numbers(case in tensor_case()) {
        let checked = first_false_rule(&case).map_err(|e| TestCaseError::fail(format!("{e}\n{}", case.program)))?;
        prop_assert!(checked >= 2);
    }
}

/// The stdout of `gradcalc -e SOURCE`.
fn run(source: &str) -> String {
    stdout_of(&gradcalc().args(["-e", source]).output().unwrap())
}

#[test]
fn relu_writes_its_mask_and_a_dead_unit_its_zero() {
    // h = relu([-1, 2, 0.5]) = [0, 2, 0.5]; ∂L/∂h = c = [3, 5, 7]; the mask
    // (u > 0) = [0, 1, 1] gives ∂L/∂u = [0, 5, 7] (PyTorch's threshold_backward).
    let out = run("u = [-1, 2, 0.5]; c = [3, 5, 7]; h = relu(u); L = sum(h*c); :trace --expand=h");
    assert_contains(&out, "∂L/∂u += upstream ⊙ (u > 0)");
    assert_contains(&out, "= [0, 5, 7]");
    assert_contains(&out, "∂L/∂u[0] = 3·0 = 0   (through h[0])");
    assert_contains(&out, "∂L/∂u[1] = 5·1 = 5   (through h[1])");
    // Typed back: upstream = [3, 5, 7] ⊙ [0, 1, 1].
    let back = run("u = [-1, 2, 0.5]; upstream = [3, 5, 7]; upstream ⊙ (u > 0)");
    assert_contains(&back, "[0, 5, 7]");
}

#[test]
fn max_and_min_write_their_masks_with_ties_split() {
    // maximum(u, 0) at u = [-1, 2, 0] (`max(u, 0)` of a vector is refused as
    // ambiguous, tests/it/batch.rs): 1 where u > 0, ½ at the tie u = 0.
    let out = run("u = [-1, 2, 0]; L = sum(maximum(u, 0)); :trace");
    assert_contains(&out, "∂L/∂u += upstream ⊙ ((u > 0) + (u == 0)/2)");
    assert_contains(&out, "= [0, 1, 0.5]");
    let out = run("u = [-1, 2, 3]; v = [1, 1, 5]; L = sum(min(u, v)); :trace");
    assert_contains(&out, "∂L/∂u += upstream ⊙ (u < v)");
    assert_contains(&out, "= [1, 0, 1]");
    assert_contains(&out, "∂L/∂v += upstream ⊙ (v < u)");
    assert_contains(&out, "= [0, 1, 0]");
}

#[test]
fn a_broadcast_bias_receives_the_column_sum() {
    // Z = X W + b with X 4×2 (a batch of four), b (2): ∂L/∂b is the column
    // sum of the upstream, ones(4, 2) summed over axis 0 = [4, 4].
    let out = run(
        "X = [[1, 2], [3, 4], [5, 6], [7, 8]]; W = [[1, 0], [0, 1]]; b = [0.5, -0.5]; Z = X @ W + b; L = sum(Z); :trace; :dot",
    );
    assert_contains(&out, "∂L/∂b += sum(upstream, 0)");
    assert_contains(&out, "= [4, 4]");
    // The edge of b on :dot carries the same rule.
    let dot = &out[out.find("digraph").expect(":dot wrote a graph")..];
    assert_contains(dot, "sum(upstream, 0)");
    // c (2×1) times W (2×3): c receives the row sums of upstream ⊙ W.
    let out = run("W = [[1, 2, 3], [4, 5, 6]]; c = [[1], [2]]; L = sum(c * W); :trace");
    assert_contains(&out, "∂L/∂c += sum(upstream ⊙ W, 1, keepdims)");
    // Row sums of W: 6 and 15.
    assert_contains(&out, "[[ 6],");
}

#[test]
fn the_vector_and_softmax_rules_are_input() {
    // ∂(W @ x)/∂W is outer(upstream, x); softmax's rule sums p ⊙ upstream.
    let out = run(
        "W = [[1, 2, 3], [4, 5, 6]]; x = [1, -1, 2]; z = W @ x; p = softmax(z); L = sum(p*[1, 2]); :trace",
    );
    assert_contains(&out, "∂L/∂W += outer(upstream, x)   outer((2), (3)) → 2×3");
    assert_contains(&out, "∂L/∂x += Wᵀ @ upstream   (3×2) @ (2) → 3");
    assert_contains(&out, "∂L/∂z += p ⊙ (upstream − sum(p ⊙ upstream))");
    // Per row of a matrix: keepdims keeps each row's sum a column.
    let out = run("Z = [[1, 2], [0, 0]]; P = softmax(Z); L = sum(P*[[1, 0], [0, 1]]); :trace");
    assert_contains(&out, "P ⊙ (upstream − sum(P ⊙ upstream, 1, keepdims))");
    // Typed back, the numbers of numpy's p*(u - (p*u).sum()) with p =
    // softmax([1, 2]) = [0.2689414214, 0.7310585786], u = [1, 0]:
    // p*u summed = 0.2689414214; p*(u - s) = [0.1966119332, -0.1966119332].
    let back = run("p = softmax([1, 2]); upstream = [1, 0]; p ⊙ (upstream − sum(p ⊙ upstream))");
    assert_contains(&back, "[0.1966119332, -0.1966119332]");
}

#[test]
fn outer_and_keepdims_sum_compute_as_numpy() {
    // numpy: np.outer([1, 2], [3, 4, 5]) = [[3, 4, 5], [6, 8, 10]].
    let out = run("outer([1, 2], [3, 4, 5])");
    assert_contains(&out, "[[3, 4,  5],");
    assert_contains(&out, " [6, 8, 10]]");
    // np.sum([[1, 2], [3, 4]], axis=1, keepdims=True) = [[3], [7]] (2×1).
    let out = run("sum([[1, 2], [3, 4]], 1, keepdims)");
    assert_contains(&out, "2×1");
    assert_contains(&out, "[[3],");
    // axis 0: [[4, 6]] (1×2).
    assert_contains(&run("sum([[1, 2], [3, 4]], 0, keepdims)"), "1×2");
}

#[test]
fn the_fan_out_step_shows_the_running_sum() {
    // L = sum(Z*Z) + sum(W), Z = W: ∂L/∂W = 2W + 1. The product Z*Z uses Z
    // twice: the second use shows ∂L/∂Z so far = W + W = [2, 4].
    let out = run("W = [1, 2]; Z = W*1; L = sum(Z*Z) + sum(W); :trace");
    assert_contains(&out, "(use 2 of 2: contributions add)");
    assert_contains(&out, "∂L/∂Z so far = [2, 4]");
}

#[test]
fn expand_takes_two_nodes_and_says_what_it_needs() {
    let source = "u = [-1, 2]; h = relu(u); z = h*[3, 4]; L = sum(z); :trace --expand=h --expand=z";
    let out = run(source);
    // Both steps element by element: z's (h[0] gets 3·1 through z[0]) and h's.
    assert_contains(&out, "∂L/∂h[0] = 1·3 = 3   (through z[0])");
    assert_contains(&out, "∂L/∂u[0] = 3·0 = 0   (through h[0])");
    // A bare --expand names what it takes.
    let output = gradcalc()
        .args([
            "-e",
            "u = [-1, 2]; h = relu(u); L = sum(h); :trace --expand",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr).to_string() + &stdout_of(&output);
    assert_contains(
        &err,
        "takes the step to show element by element: `--expand=NODE`",
    );
    assert_contains(&err, "`--expand=h`");
    // An operand past the limit of 16 elements says so.
    let output = gradcalc()
        .args([
            "-e",
            "W = ones(5, 4); h = tanh(W); L = sum(h); :trace --expand=h",
        ])
        .output()
        .unwrap();
    let all = String::from_utf8_lossy(&output.stderr).to_string() + &stdout_of(&output);
    assert_contains(
        &all,
        "∂L/∂W has 20 elements, more than the 16 the scalar view writes",
    );
}

#[test]
fn descend_all_shows_a_column_for_each_element_of_a_tensor_parameter() {
    // L = (W @ x + b - 1)², W = [[0.5, -0.2]], x = [1, 2], b = [0.1]: the
    // residual is -0.8, L = 0.64; ∂L/∂W = 2·(-0.8)·x = [-1.6, -3.2], ∂L/∂b =
    // -1.6, so one step of lr 0.1 gives W = [0.66, 0.12], b = 0.26.
    let out = run(
        "W = [[0.5, -0.2]]; b = [0.1]; x = [1, 2]; L = sum((W @ x + b - 1)^2); :descend L lr=0.1 steps=1 W b --all",
    );
    assert_contains(&out, "  step       L  W[0, 0]  W[0, 1]  b[0]");
    assert_contains(&out, "     1  0.0256     0.66     0.12  0.26");
}

#[test]
fn the_power_rules_at_base_zero_type_back_to_their_numbers() {
    // a^b at a = [0, 1, 2, 0], b = [2, 2, 0.5, 0], by hand: ∂/∂a = b·a^(b−1)
    // = [0, 2, 0.5/√2, 0] (nothing at b = 0, PyTorch's pow_backward_self);
    // ∂/∂b = a^b·ln a = [0, 0, √2·ln 2, 0] (nothing at a = 0, b ≥ 0,
    // pow_backward_exponent), where the textbook forms read 0·∞.
    let setup = "a = [0, 1, 2, 0]\nb = [2, 2, 0.5, 0]\ny = a^b\nL = sum(y)\n";
    let out = run(&format!("{setup}:trace"));
    let base = "upstream ⊙ (b*(a + (a == 0)*(b == 0))^(b - 1))";
    let exponent = "upstream ⊙ ((a + (a == 0)*(b >= 0))^b*ln((a + (a == 0)*(b >= 0))))";
    assert_contains(&out, &format!("∂L/∂a += {base}"));
    assert_contains(&out, "= [0, 2, 0.3535533906, 0]  (4)");
    assert_contains(&out, &format!("∂L/∂b += {exponent}"));
    assert_contains(&out, "= [0, 0, 0.9802581435, 0]  (4)");
    // Typed back with the step's upstream (ones), each gives its numbers.
    let back = run(&format!("{setup}upstream = ones(4)\n{base}\n{exponent}"));
    assert_contains(
        &back,
        "[0, 2, 0.3535533906, 0]  (4)\n[0, 0, 0.9802581435, 0]  (4)\n",
    );
    // Away from base 0 the rules stay the textbook ones.
    let out = run("a = [1, 2]\nb = [2, 0.5]\nL = sum(a^b)\n:trace");
    assert_contains(&out, "∂L/∂a += upstream ⊙ (b*a^(b - 1))");
    assert_contains(&out, "∂L/∂b += upstream ⊙ a^b*ln(a)");
}
