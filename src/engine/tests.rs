//! Tests of the op table (against central differences and the conventions of
//! docs/language.md §7), the arena, the reverse topological order and backward.

use super::*;

type Result = std::result::Result<(), ArityError>;

const INF: f64 = f64::INFINITY;

// ---------------------------------------------------------------------------
// Helpers

/// `a` and `b` agree to a relative tolerance `rel` (exactly, for non-finite values).
fn close(a: f64, b: f64, rel: f64) -> bool {
    if !a.is_finite() || !b.is_finite() {
        return a == b || (a.is_nan() && b.is_nan());
    }
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-300)
}

#[track_caller]
fn assert_close(actual: f64, expected: f64) {
    assert!(
        close(actual, expected, 1e-12),
        "got {actual:?}, expected {expected:?}"
    );
}

/// Asserts equality of floats, nan equal to nan (and -0 equal to 0, as `==`).
#[track_caller]
fn assert_same(actual: f64, expected: f64) {
    assert!(
        actual == expected || (actual.is_nan() && expected.is_nan()),
        "got {actual:?}, expected {expected:?}"
    );
}

fn forward(op: Op, x: &[f64]) -> f64 {
    (op.info().forward)(x)
}

/// The local derivative of `op` at `x` with respect to input `wrt`.
fn local(op: Op, x: &[f64], wrt: usize) -> f64 {
    let info = op.info();
    (info.local)(x, (info.forward)(x), wrt)
}

/// The central difference `(f(x + h) − f(x − h)) / 2h` in input `wrt`, with a
/// step scaled to the input (h ≈ ∛ε·max(1, |x|), the usual optimum).
fn central_difference(op: Op, x: &[f64], wrt: usize) -> f64 {
    let h = 6e-6 * x[wrt].abs().max(1.0);
    let mut plus = x.to_vec();
    let mut minus = x.to_vec();
    plus[wrt] += h;
    minus[wrt] -= h;
    (forward(op, &plus) - forward(op, &minus)) / (plus[wrt] - minus[wrt])
}

/// Points away from kinks and domain edges where every op's derivative is
/// checked numerically.
fn smooth_points(op: Op) -> Vec<Vec<f64>> {
    let unary = |xs: &[f64]| xs.iter().map(|&x| vec![x]).collect::<Vec<_>>();
    let binary = vec![
        vec![2.0, 3.0],
        vec![-1.5, 0.7],
        vec![10.0, -4.0],
        vec![0.3, 0.2],
    ];
    match op {
        Op::Variable | Op::Const => Vec::new(),
        Op::Add | Op::Sub | Op::Mul | Op::Div => binary,
        Op::Pow => vec![
            vec![2.0, 3.0],
            vec![0.7, 2.2],
            vec![1.5, -0.5],
            vec![3.0, 0.5],
        ],
        Op::Neg | Op::Exp | Op::Sin | Op::Cos | Op::Sinh | Op::Cosh | Op::Tanh | Op::Sech => {
            unary(&[-2.0, 0.0, 0.5, 1.2, 3.0])
        }
        Op::Tan => unary(&[-1.0, 0.0, 0.3, 1.2]),
        Op::Ln | Op::Log2 | Op::Log10 => unary(&[0.3, 1.0, 5.0, 1e3]),
        Op::Sqrt => unary(&[0.25, 2.0, 9.0]),
        Op::Cbrt => unary(&[-8.0, 0.5, 27.0]),
        Op::Abs | Op::Relu => unary(&[-2.0, -0.1, 0.1, 3.0]),
        Op::Asin | Op::Acos | Op::Atanh => unary(&[-0.7, 0.0, 0.3, 0.5]),
        Op::Atan | Op::Asinh => unary(&[-3.0, 0.0, 2.0, 50.0]),
        Op::Acosh => unary(&[1.5, 3.0, 20.0]),
        Op::Sigmoid | Op::Softplus | Op::Gelu | Op::Normcdf | Op::Normpdf => {
            unary(&[-30.0, -3.0, -0.5, 0.0, 1.0, 4.0, 40.0])
        }
        Op::Floor | Op::Ceil | Op::Round | Op::Sign => unary(&[-2.3, 0.6, 1.7]),
        Op::Detach => unary(&[-2.0, 0.0, 3.0]),
        Op::Min | Op::Max => vec![vec![3.0, 1.0, 2.0], vec![-1.0, 5.0], vec![7.0]],
    }
}

// ---------------------------------------------------------------------------
// The op table

#[test]
fn table_rows_are_in_variant_order_and_well_formed() {
    for (i, info) in Op::table().iter().enumerate() {
        assert_eq!(info.op as usize, i, "row {i} is {:?}", info.op);
        assert!(std::ptr::eq(info.op.info(), info));
        let derivatives = match info.arity {
            Arity::Leaf => 0,
            Arity::Unary | Arity::Variadic => 1,
            Arity::Binary => 2,
        };
        let rows = info.derivatives.len();
        assert_eq!(rows, derivatives, "derivatives of {:?}", info.op);
        for d in info.derivatives {
            assert!(!d.source.is_empty(), "source of {:?}", info.op);
            // An op is differentiable exactly when some input can receive gradient.
            let flat = matches!(d.passing, Passing::NotDifferentiable | Passing::Detached);
            assert_eq!(flat, !info.differentiable, "{:?}", info.op);
        }
        assert!(!info.summary.is_empty() && !info.example.is_empty());
    }
}

#[test]
fn every_differentiable_local_derivative_matches_a_central_difference() {
    for info in Op::table().iter().filter(|info| info.differentiable) {
        let points = smooth_points(info.op);
        assert!(!points.is_empty(), "no test points for {:?}", info.op);
        for x in points {
            for wrt in 0..x.len() {
                let analytic = local(info.op, &x, wrt);
                let numeric = central_difference(info.op, &x, wrt);
                // The difference quotient loses digits in proportion to the value
                // subtracted, so the tolerance scales with |f(x)| as well.
                let scale = analytic.abs().max(forward(info.op, &x).abs()).max(1.0);
                assert!(
                    (analytic - numeric).abs() <= 1e-6 * scale,
                    "{}: at {x:?} wrt {wrt}: analytic {analytic}, numeric {numeric}",
                    info.name
                );
            }
        }
    }
}

#[test]
fn non_differentiable_ops_have_gradient_zero_and_say_so() {
    for op in [Op::Floor, Op::Ceil, Op::Round, Op::Sign, Op::Detach] {
        let info = op.info();
        assert!(!info.differentiable);
        for x in smooth_points(op) {
            assert_eq!(local(op, &x, 0), 0.0, "{} at {x:?}", info.name);
        }
    }
    let passing = |op: Op| op.info().derivatives[0].passing;
    assert_eq!(passing(Op::Floor), Passing::NotDifferentiable);
    assert_eq!(passing(Op::Detach), Passing::Detached);
    assert_eq!(forward(Op::Detach, &[3.5]), 3.5);
}

#[test]
fn derivatives_are_given_per_input_position() {
    use rules::{A, B, OUT, U, e, n};
    let textbook = |op: Op, position: usize| op.info().derivative(position).map(|d| d.textbook);
    assert_eq!(textbook(Op::Mul, 0), Some(B));
    assert_eq!(textbook(Op::Mul, 1), Some(A));
    const POW_B: Expr = e!(Mul, OUT, e!(Ln, A));
    const TANH: Expr = e!(Sub, n(1.0), e!(Pow, OUT, n(2.0)));
    const ATAN: Expr = e!(Div, n(1.0), e!(Add, n(1.0), e!(Pow, U, n(2.0))));
    assert_eq!(textbook(Op::Pow, 1), Some(POW_B));
    assert_eq!(textbook(Op::Tanh, 0), Some(TANH));
    assert_eq!(textbook(Op::Atan, 0), Some(ATAN));
    // One rule for every input of a variadic op; none for leaves.
    assert_eq!(textbook(Op::Max, 5), Some(n(1.0)));
    assert_eq!(textbook(Op::Variable, 0), None);
    assert_eq!(textbook(Op::Exp, 1), None);
}

#[test]
fn local_rules_choose_the_branch_at_the_point() {
    let rule = |op: Op, position: usize, inputs: &[f64]| {
        let out = forward(op, inputs);
        op.local_rule(position, inputs, out, Form::Textbook)
    };
    let one = LocalRule::Expr {
        expr: &Expr::Num(1.0),
        ties: 1,
    };
    assert_eq!(rule(Op::Relu, 0, &[1.0]), one);
    assert_eq!(rule(Op::Relu, 0, &[0.0]), LocalRule::PassesNothing);
    assert_eq!(rule(Op::Relu, 0, &[f64::NAN]), LocalRule::Undefined);
    assert_eq!(rule(Op::Max, 1, &[1.0, 3.0, 2.0]), one);
    assert_eq!(rule(Op::Max, 0, &[1.0, 3.0, 2.0]), LocalRule::PassesNothing);
    let half = LocalRule::Expr {
        expr: &Expr::Num(1.0),
        ties: 2,
    };
    assert_eq!(rule(Op::Min, 2, &[2.0, 5.0, 2.0]), half);
    assert_eq!(rule(Op::Max, 0, &[f64::NAN, 1.0]), LocalRule::Undefined);
    assert_eq!(rule(Op::Pow, 0, &[0.0, 0.0]), LocalRule::PassesNothing);
    assert_eq!(rule(Op::Pow, 1, &[0.0, 2.0]), LocalRule::PassesNothing);
    assert!(matches!(
        rule(Op::Pow, 1, &[0.0, -1.0]),
        LocalRule::Expr { .. }
    ));
    assert_eq!(rule(Op::Floor, 0, &[2.5]), LocalRule::PassesNothing);
    assert_eq!(rule(Op::Variable, 0, &[]), LocalRule::PassesNothing);
    assert_eq!(rule(Op::Exp, 3, &[1.0]), LocalRule::PassesNothing);
}

/// Every unary row's `kinks` says where its one-sided slopes disagree (or
/// its value jumps), at the points that could be kinks of some op: checked
/// against one-sided differences of the forward function, not the row.
#[test]
fn each_unary_rows_kinks_are_where_its_slopes_break() {
    let points = [-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0];
    let h = 1e-7;
    for info in Op::table().iter().filter(|i| i.arity == Arity::Unary) {
        let f = |x: f64| forward(info.op, &[x]);
        for p in points {
            // The slopes over four steps of h, from p − 2h to p + 2h: equal
            // where f is smooth, not where it bends or jumps at p.
            let values = [-2.0, -1.0, 0.0, 1.0, 2.0].map(|k| f(p + k * h));
            if values.iter().any(|v| !v.is_finite()) || !local(info.op, &[p], 0).is_finite() {
                continue; // a domain edge, a pole, a vertical tangent: not a kink
            }
            let slopes: Vec<f64> = values.windows(2).map(|w| (w[1] - w[0]) / h).collect();
            let (left, right) = (slopes[0], slopes[3]);
            let breaks = slopes
                .iter()
                .any(|s| (s - left).abs() > 1e-3 * (1.0 + left.abs()));
            let declared = match info.kinks {
                Kinks::Smooth => false,
                Kinks::AtZero => p == 0.0,
                Kinks::AtIntegers => p == p.floor(),
                Kinks::AtHalfIntegers => (p + 0.5) == (p + 0.5).floor(),
                Kinks::AtTies => panic!("{}: a unary op has no ties", info.name),
            };
            assert_eq!(
                breaks, declared,
                "{} at {p}: slopes {left} and {right}",
                info.name
            );
        }
    }
    // max and min break where two inputs tie, and only there.
    for op in [Op::Max, Op::Min] {
        assert_eq!(op.info().kinks, Kinks::AtTies);
    }
}

#[test]
fn function_names_map_to_ops_and_operators_do_not() {
    let names: Vec<_> = Op::function_names().collect();
    let mut expected = "exp ln log log2 log10 sqrt cbrt abs sin cos tan asin acos atan sinh \
                        cosh tanh sech asinh acosh atanh sigmoid relu softplus gelu normcdf normpdf min max pow \
                        floor ceil round sign detach"
        .split_whitespace()
        .collect::<Vec<_>>();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    expected.sort_unstable();
    assert_eq!(sorted, expected);
    for name in names {
        let op = Op::from_function_name(name);
        assert!(op.is_some(), "{name}");
    }
    assert_eq!(Op::from_function_name("log"), Some(Op::Ln));
    assert_eq!(Op::from_function_name("ln"), Some(Op::Ln));
    assert_eq!(Op::from_function_name("pow"), Some(Op::Pow));
    assert_eq!(Op::from_function_name("tanh"), Some(Op::Tanh));
    for not_a_function in [
        "+", "-", "*", "/", "^", "neg", "leaf", "const", "Tanh", "tan h", "",
    ] {
        assert_eq!(
            Op::from_function_name(not_a_function),
            None,
            "{not_a_function:?}"
        );
    }
}

/// Each example `f(a, b) = v` or `a ∘ b = v` evaluates to v with the table's
/// own forward function, to the 10 digits shown.
#[test]
fn examples_evaluate_to_what_they_say() {
    for info in Op::table().iter().filter(|info| !info.op.is_leaf()) {
        let (call, value) = info.example.split_once(" = ").expect("example has ` = `");
        let expected: f64 = value.parse().expect("example value is a number");
        let args: Vec<f64> = if let Some(args) = call.strip_prefix(&format!("{}(", info.name)) {
            let args = args.strip_suffix(')').expect("call ends with `)`");
            args.split(", ")
                .map(|a| a.parse().expect("number"))
                .collect()
        } else if let Some(arg) = call.strip_prefix("-(") {
            vec![arg.trim_end_matches(')').parse().expect("number")]
        } else {
            let parts: Vec<&str> = call.split(' ').collect();
            assert_eq!(parts[1], info.name, "{}", info.example);
            vec![
                parts[0].parse().expect("number"),
                parts[2].parse().expect("number"),
            ]
        };
        let actual = forward(info.op, &args);
        assert!(
            close(actual, expected, 5e-10),
            "{}: got {actual}",
            info.example
        );
    }
}

// ---------------------------------------------------------------------------
// Conventions at kinks and edges (docs/language.md §7)

#[test]
fn kinks_relu_abs_sqrt_cbrt() {
    assert_eq!(local(Op::Relu, &[0.0], 0), 0.0);
    assert_eq!(local(Op::Relu, &[-1.0], 0), 0.0);
    assert_eq!(local(Op::Relu, &[1e-300], 0), 1.0);
    assert_eq!(local(Op::Abs, &[0.0], 0), 0.0);
    assert_eq!(local(Op::Abs, &[-0.0], 0), 0.0);
    assert_eq!(local(Op::Abs, &[-2.0], 0), -1.0);
    assert_eq!(local(Op::Sqrt, &[0.0], 0), INF);
    assert_eq!(local(Op::Cbrt, &[0.0], 0), INF);
    assert_same(forward(Op::Relu, &[f64::NAN]), f64::NAN);
}

#[test]
fn power_at_zero_base() {
    // 0^0 = 1 and d/dx x^0 = 0 at x = 0 (G08).
    assert_eq!(forward(Op::Pow, &[0.0, 0.0]), 1.0);
    assert_eq!(local(Op::Pow, &[0.0, 0.0], 0), 0.0);
    // d/dx x^y at x = 0 is y·0^(y−1) (G10).
    for (y, value, slope) in [
        (2.0, 0.0, 0.0),
        (1.0, 0.0, 1.0),
        (1.5, 0.0, 0.0),
        (0.5, 0.0, INF),
        (-1.0, INF, -INF),
    ] {
        assert_eq!(forward(Op::Pow, &[0.0, y]), value, "0^{y}");
        assert_eq!(local(Op::Pow, &[0.0, y], 0), slope, "d/dx x^{y} at 0");
    }
    // d/dy 0^y: 0 for y ≥ 0, −inf for y < 0 (G09), nan for nan.
    assert_eq!(local(Op::Pow, &[0.0, 1.0], 1), 0.0);
    assert_eq!(local(Op::Pow, &[0.0, 0.0], 1), 0.0);
    assert_eq!(local(Op::Pow, &[0.0, 2.5], 1), 0.0);
    assert_eq!(local(Op::Pow, &[0.0, -1.0], 1), -INF);
    assert!(local(Op::Pow, &[0.0, f64::NAN], 1).is_nan());
}

#[test]
fn power_with_negative_base() {
    // (-2)^3 = -8 with d/dx = 12 (G07); d/dy is nan (ln of a negative number).
    assert_eq!(forward(Op::Pow, &[-2.0, 3.0]), -8.0);
    assert_eq!(local(Op::Pow, &[-2.0, 3.0], 0), 12.0);
    assert!(local(Op::Pow, &[-2.0, 3.0], 1).is_nan());
    assert_eq!(local(Op::Pow, &[-2.0, 2.0], 0), -4.0);
    assert!(forward(Op::Pow, &[-2.0, 0.5]).is_nan());
}

#[test]
fn min_and_max_split_ties_and_propagate_nan() {
    assert_eq!(forward(Op::Max, &[1.0, 1.0]), 1.0);
    assert_eq!(local(Op::Max, &[1.0, 1.0], 0), 0.5);
    assert_eq!(local(Op::Max, &[1.0, 1.0], 1), 0.5);
    assert_eq!(local(Op::Max, &[2.0, 0.0, 2.0, 2.0], 3), 1.0 / 3.0);
    assert_eq!(local(Op::Max, &[2.0, 0.0, 2.0, 2.0], 1), 0.0);
    assert_eq!(local(Op::Min, &[-1.0, 4.0, -1.0], 2), 0.5);
    assert_eq!(local(Op::Min, &[-1.0, 4.0, -1.0], 1), 0.0);
    assert_eq!(forward(Op::Max, &[-3.0]), -3.0);
    assert_eq!(local(Op::Max, &[-3.0], 0), 1.0);
    for op in [Op::Min, Op::Max] {
        for x in [[f64::NAN, 1.0], [1.0, f64::NAN]] {
            assert!(forward(op, &x).is_nan(), "{op:?}{x:?}");
            assert!(
                local(op, &x, 0).is_nan() && local(op, &x, 1).is_nan(),
                "{op:?}{x:?}"
            );
        }
    }
    assert_eq!(forward(Op::Min, &[3.0, -INF, 2.0]), -INF);
    assert_eq!(forward(Op::Max, &[3.0, INF]), INF);
}

#[test]
fn saturating_functions_stay_finite_at_1000() {
    assert_eq!(forward(Op::Tanh, &[1000.0]), 1.0);
    assert_eq!(forward(Op::Tanh, &[-1000.0]), -1.0);
    assert_eq!(local(Op::Tanh, &[1000.0], 0), 0.0);
    assert_eq!(local(Op::Tanh, &[-1000.0], 0), 0.0);
    assert_close(forward(Op::Tanh, &[0.5]), 0.46211715726000974);
    assert_close(local(Op::Tanh, &[0.5], 0), 0.7864477329659274);
    assert_eq!(forward(Op::Sigmoid, &[1000.0]), 1.0);
    assert_eq!(forward(Op::Sigmoid, &[-1000.0]), 0.0);
    assert_eq!(local(Op::Sigmoid, &[1000.0], 0), 0.0);
    assert_eq!(local(Op::Sigmoid, &[-1000.0], 0), 0.0);
    assert_eq!(forward(Op::Sigmoid, &[0.0]), 0.5);
    assert_eq!(local(Op::Sigmoid, &[0.0], 0), 0.25);
    assert_eq!(forward(Op::Softplus, &[1000.0]), 1000.0);
    assert_eq!(forward(Op::Softplus, &[-1000.0]), 0.0);
    assert_eq!(local(Op::Softplus, &[1000.0], 0), 1.0);
    assert_eq!(local(Op::Softplus, &[-1000.0], 0), 0.0);
    assert_eq!(forward(Op::Gelu, &[1000.0]), 1000.0);
    assert_eq!(forward(Op::Gelu, &[-1000.0]), -0.0);
    assert_eq!(local(Op::Gelu, &[1000.0], 0), 1.0);
    assert_eq!(local(Op::Gelu, &[-1000.0], 0), 0.0);
    // Tiny but not flushed to zero where the exact value is representable.
    assert!(forward(Op::Sigmoid, &[-700.0]) > 0.0);
    assert!(forward(Op::Softplus, &[-700.0]) > 0.0);
}

#[test]
fn rounding_sign_and_division() {
    assert_eq!(forward(Op::Round, &[2.5]), 3.0);
    assert_eq!(forward(Op::Round, &[-2.5]), -3.0);
    assert_eq!(forward(Op::Round, &[0.49999999999999994]), 0.0);
    assert_eq!(forward(Op::Sign, &[0.0]), 0.0);
    assert_eq!(forward(Op::Sign, &[-0.0]), 0.0);
    assert_eq!(forward(Op::Sign, &[-4.0]), -1.0);
    assert!(forward(Op::Sign, &[f64::NAN]).is_nan());
    assert_eq!(local(Op::Div, &[3.0, 2.0], 0), 0.5);
    assert_eq!(local(Op::Div, &[3.0, 2.0], 1), -0.75);
    assert_eq!(forward(Op::Div, &[1.0, 0.0]), INF);
    assert!(forward(Op::Div, &[0.0, 0.0]).is_nan());
    assert!(forward(Op::Ln, &[-1.0]).is_nan());
}

// ---------------------------------------------------------------------------
// The arena

#[test]
fn apply_checks_arity() {
    let mut g = Graph::new();
    let x = g.leaf(1.0);
    let err = |op, expected, got| ArityError { op, expected, got };
    assert_eq!(g.apply(Op::Add, &[x]), Err(err("+", "2", 1)));
    assert_eq!(g.apply(Op::Exp, &[x, x]), Err(err("exp", "1", 2)));
    assert_eq!(g.apply(Op::Max, &[]), Err(err("max", "1 or more", 0)));
    assert_eq!(g.apply(Op::Variable, &[]), Err(err("leaf", "no", 0)));
    assert_eq!(g.apply(Op::Const, &[x]), Err(err("const", "no", 1)));
    assert_eq!(err("+", "2", 1).to_string(), "`+` takes 2 input(s), got 1");
    assert_eq!(g.len(), 1, "failed applications append nothing");
}

#[test]
fn nodes_keep_op_value_and_inputs_in_operand_order() -> Result {
    let mut g = Graph::new();
    assert!(g.is_empty());
    let a = g.leaf(5.0);
    let b = g.constant(3.0);
    let d = g.apply(Op::Sub, &[a, b])?;
    let n = g.apply(Op::Neg, &[d])?;
    let m = g.apply(Op::Max, &[b, a, n, a])?;
    assert_eq!(
        (g.op(a), g.op(b), g.op(d), g.op(m)),
        (Op::Variable, Op::Const, Op::Sub, Op::Max)
    );
    assert_eq!((g.value(d), g.value(n), g.value(m)), (2.0, -2.0, 5.0));
    assert_eq!(g.operands(a), &[]);
    assert_eq!(g.operands(d), &[a, b]);
    assert_eq!(g.operands(n), &[d]);
    assert_eq!(g.operands(m), &[b, a, n, a]);
    assert_eq!(m, NodeId(4));
    assert_eq!(g.len(), 5);
    g.clear();
    assert!(g.is_empty());
    assert_eq!(g.leaf(1.0), NodeId(0));
    Ok(())
}

#[test]
fn a_node_takes_20_bytes() {
    assert_eq!(Graph::node_bytes(), 20);
    let mut g = Graph::with_capacity(10);
    g.leaf(0.0);
    assert!(g.memory_bytes() >= 200);
}

// ---------------------------------------------------------------------------
// Reverse topological order and backward

/// z = x*y + x at x = 2, y = 3 (G01).
fn fan_out() -> std::result::Result<(Graph, [NodeId; 4]), ArityError> {
    let mut g = Graph::new();
    let x = g.leaf(2.0);
    let y = g.leaf(3.0);
    let mul = g.apply(Op::Mul, &[x, y])?;
    let add = g.apply(Op::Add, &[mul, x])?;
    Ok((g, [x, y, mul, add]))
}

#[test]
fn fan_out_accumulates() -> Result {
    let (g, [x, y, mul, add]) = fan_out()?;
    assert_eq!(g.value(add), 8.0);
    let order = g.topo_order(add);
    assert_eq!(order, [add, mul, y, x]);
    let grads = g.backward(&order);
    assert_eq!(
        (grads[x], grads[y], grads[mul], grads[add]),
        (4.0, 2.0, 1.0, 1.0)
    );
    assert_eq!(grads.get(NodeId(99)), 0.0, "out of range is 0");
    assert_eq!(grads.len(), 4);
    // Asking twice gives the same answer (G04).
    assert_eq!(g.backward(&order).as_slice(), grads.as_slice());
    Ok(())
}

#[test]
fn every_node_comes_before_its_inputs_once() -> Result {
    let mut g = Graph::new();
    let a = g.leaf(1.0);
    let b = g.apply(Op::Add, &[a, a])?;
    let c = g.apply(Op::Add, &[b, b])?;
    let _unused = g.apply(Op::Exp, &[c])?;
    assert_eq!(g.topo_order(c), [c, b, a]);
    assert_eq!(g.backward(&g.topo_order(c))[a], 4.0, "G02");
    assert_eq!(g.topo_order(a), [a]);
    assert_eq!(g.backward(&g.topo_order(a))[a], 1.0);
    Ok(())
}

#[test]
fn an_order_cut_below_an_id_leaves_out_exactly_the_nodes_below() -> Result {
    // z = x*y + x: x, y, mul, add; the full order is [add, mul, y, x].
    let mut g = Graph::new();
    let x = g.leaf(2.0);
    let y = g.leaf(3.0);
    let mul = g.apply(Op::Mul, &[x, y])?;
    let add = g.apply(Op::Add, &[mul, x])?;
    assert_eq!(g.topo_order(add), [add, mul, y, x]);
    assert_eq!(g.topo_order_above(add, x), [add, mul, y, x]);
    assert_eq!(g.topo_order_above(add, y), [add, mul, y]);
    assert_eq!(g.topo_order_above(add, mul), [add, mul]);
    assert_eq!(g.topo_order_above(add, add), [add]);
    assert_eq!(g.topo_order_above(mul, add), []);
    // Through a cut order, the backward pass still gives ∂z/∂y = x = 2.
    assert_eq!(g.backward(&g.topo_order_above(add, y))[y], 2.0);
    Ok(())
}

#[test]
fn diamond() -> Result {
    // a = 2; b = 3; c = a + b; d = a * b; (c + d) + (c * d)  (G03)
    let mut g = Graph::new();
    let a = g.leaf(2.0);
    let b = g.leaf(3.0);
    let c = g.apply(Op::Add, &[a, b])?;
    let d = g.apply(Op::Mul, &[a, b])?;
    let s = g.apply(Op::Add, &[c, d])?;
    let p = g.apply(Op::Mul, &[c, d])?;
    let out = g.apply(Op::Add, &[s, p])?;
    assert_eq!(g.value(out), 41.0);
    let order = g.topo_order(out);
    assert_eq!(order.len(), 7);
    for (i, &node) in order.iter().enumerate() {
        for input in g.operands(node) {
            assert!(
                order[i + 1..].contains(input),
                "{node:?} before its input {input:?}"
            );
        }
    }
    let grads = g.backward(&order);
    assert_eq!((grads[a], grads[b]), (25.0, 19.0));
    Ok(())
}

#[test]
fn gradients_by_the_chain_rule() -> Result {
    // x = -2; y = 5; z = -4; q = x + y; f = q * z  (G20)
    let mut g = Graph::new();
    let [x, y, z] = [g.leaf(-2.0), g.leaf(5.0), g.leaf(-4.0)];
    let q = g.apply(Op::Add, &[x, y])?;
    let f = g.apply(Op::Mul, &[q, z])?;
    let grads = g.backward(&g.topo_order(f));
    assert_eq!(
        (grads[x], grads[y], grads[z], grads[q]),
        (-4.0, -4.0, 3.0, -4.0)
    );

    // a = 2; b = 1; c = a + b; d = b + 1; e = c * d  (G21: sum over paths)
    let mut g = Graph::new();
    let [a, b] = [g.leaf(2.0), g.leaf(1.0)];
    let c = g.apply(Op::Add, &[a, b])?;
    let one = g.constant(1.0);
    let d = g.apply(Op::Add, &[b, one])?;
    let e = g.apply(Op::Mul, &[c, d])?;
    let grads = g.backward(&g.topo_order(e));
    assert_eq!(
        (g.value(e), grads[a], grads[b], grads[one]),
        (6.0, 2.0, 5.0, 3.0)
    );

    // x = 3; y = x * 2; z = y * y  (G22: gradient at an intermediate node)
    let mut g = Graph::new();
    let x = g.leaf(3.0);
    let two = g.constant(2.0);
    let y = g.apply(Op::Mul, &[x, two])?;
    let z = g.apply(Op::Mul, &[y, y])?;
    let grads = g.backward(&g.topo_order(z));
    assert_eq!((grads[y], grads[x]), (12.0, 24.0));

    // x = 3; y = 2; x / y  (G06) and x - y  (G05)
    let mut g = Graph::new();
    let [x, y] = [g.leaf(3.0), g.leaf(2.0)];
    let q = g.apply(Op::Div, &[x, y])?;
    let grads = g.backward(&g.topo_order(q));
    assert_eq!((g.value(q), grads[x], grads[y]), (1.5, 0.5, -0.75));
    let s = g.apply(Op::Sub, &[x, y])?;
    let grads = g.backward(&g.topo_order(s));
    assert_eq!((grads[x], grads[y]), (1.0, -1.0));
    Ok(())
}

#[test]
fn unreached_nodes_have_gradient_zero() -> Result {
    // x = 2; y = 3; x * x; :grad y  (G23), and a later x (G26)
    let mut g = Graph::new();
    let x = g.leaf(2.0);
    let y = g.leaf(3.0);
    let sq = g.apply(Op::Mul, &[x, x])?;
    let later_x = g.leaf(7.0);
    let grads = g.backward(&g.topo_order(sq));
    assert_eq!((grads[x], grads[y], grads[later_x]), (4.0, 0.0, 0.0));
    assert_eq!(g.backward(&[]).as_slice(), &[0.0; 4]);
    Ok(())
}

#[test]
fn ties_detach_and_flat_ops_in_a_graph() -> Result {
    // max(x, y) at a tie splits; max(x, x) gives x all of it (G12).
    let mut g = Graph::new();
    let x = g.leaf(1.0);
    let y = g.leaf(1.0);
    let m = g.apply(Op::Max, &[x, y])?;
    let grads = g.backward(&g.topo_order(m));
    assert_eq!((grads[x], grads[y]), (0.5, 0.5));
    let mm = g.apply(Op::Max, &[x, x])?;
    assert_eq!(g.backward(&g.topo_order(mm))[x], 1.0);

    // x * detach(x) at 3: only the first factor passes gradient.
    let x = g.leaf(3.0);
    let d = g.apply(Op::Detach, &[x])?;
    let p = g.apply(Op::Mul, &[x, d])?;
    assert_eq!(g.backward(&g.topo_order(p))[x], 3.0);

    let f = g.apply(Op::Floor, &[x])?;
    let s = g.apply(Op::Add, &[f, x])?;
    assert_eq!(g.backward(&g.topo_order(s))[x], 1.0);
    Ok(())
}

#[test]
fn zero_times_infinity_is_nan() -> Result {
    // sqrt(x)^2 at 0: upstream 0 (d/du u^2 at 0) times sqrt'(0) = inf.
    let mut g = Graph::new();
    let x = g.leaf(0.0);
    let r = g.apply(Op::Sqrt, &[x])?;
    let two = g.constant(2.0);
    let sq = g.apply(Op::Pow, &[r, two])?;
    let grads = g.backward(&g.topo_order(sq));
    assert_eq!(grads[r], 0.0);
    assert!(grads[x].is_nan());
    // x^2, x^1, x^1.5, x^0.5, sqrt(x) at 0 (G10).
    for (y, slope) in [(2.0, 0.0), (1.0, 1.0), (1.5, 0.0), (0.5, INF)] {
        let e = g.constant(y);
        let p = g.apply(Op::Pow, &[x, e])?;
        assert_eq!(g.backward(&g.topo_order(p))[x], slope, "x^{y}");
    }
    assert_eq!(g.backward(&g.topo_order(r))[x], INF);
    Ok(())
}

#[test]
fn trace_records_each_step_and_fan_out() -> Result {
    let (g, [x, y, mul, add]) = fan_out()?;
    let order = g.topo_order(add);
    let (grads, steps) = g.backward_traced(&order);
    assert_eq!(grads.as_slice(), g.backward(&order).as_slice());
    let contribution =
        |input, position, local, before, after, use_number, use_count| Contribution {
            input,
            position,
            local,
            product: after - before,
            passes_nothing: false,
            before,
            after,
            use_number,
            use_count,
        };
    let expected = vec![
        Step {
            node: add,
            upstream: 1.0,
            contributions: vec![
                contribution(mul, 0, 1.0, 0.0, 1.0, 1, 1),
                contribution(x, 1, 1.0, 0.0, 1.0, 1, 2),
            ],
        },
        Step {
            node: mul,
            upstream: 1.0,
            contributions: vec![
                // x's second use: 1 → 4 ("2nd of 2").
                contribution(x, 0, 3.0, 1.0, 4.0, 2, 2),
                contribution(y, 1, 2.0, 0.0, 2.0, 1, 1),
            ],
        },
        Step {
            node: y,
            upstream: 2.0,
            contributions: vec![],
        },
        Step {
            node: x,
            upstream: 4.0,
            contributions: vec![],
        },
    ];
    assert_eq!(steps, expected);
    Ok(())
}

#[test]
fn trace_counts_both_uses_of_a_square() -> Result {
    let mut g = Graph::new();
    let x = g.leaf(3.0);
    let sq = g.apply(Op::Mul, &[x, x])?;
    let (grads, steps) = g.backward_traced(&g.topo_order(sq));
    assert_eq!(grads[x], 6.0);
    let uses: Vec<_> = steps[0]
        .contributions
        .iter()
        .map(|c| {
            (
                c.position,
                c.product,
                c.before,
                c.after,
                c.use_number,
                c.use_count,
            )
        })
        .collect();
    assert_eq!(uses, [(0, 3.0, 0.0, 3.0, 1, 2), (1, 3.0, 3.0, 6.0, 2, 2)]);
    Ok(())
}

#[test]
fn truncate_removes_the_tail_and_its_variadic_inputs() -> Result {
    let mut g = Graph::new();
    let x = g.leaf(1.0);
    let y = g.leaf(5.0);
    let mark = g.len();
    let two = g.constant(2.0);
    g.apply(Op::Max, &[x, two, y])?;
    g.truncate(mark);
    assert_eq!(g.len(), 2);
    let z = g.apply(Op::Min, &[y, x])?;
    assert_eq!(g.operands(z), &[y, x]);
    assert_eq!(g.value(z), 1.0);
    Ok(())
}

#[test]
fn a_filtered_trace_keeps_exactly_the_chosen_steps() -> Result {
    let (g, [_, _, _, z]) = fan_out()?;
    let order = g.topo_order(z);
    let (all_grads, all) = g.backward_traced(&order);
    let (grads, kept) = g.backward_traced_where(&order, |i| i == 1 || i == 3);
    assert_eq!(kept, [all[1].clone(), all[3].clone()]);
    for &id in &order {
        assert_eq!(grads[id], all_grads[id]);
    }
    Ok(())
}

#[test]
fn the_untraced_shortcuts_agree_with_the_op_table() -> Result {
    // `backward` takes shortcuts for + − ·; `backward_traced` calls the op table.
    let mut g = Graph::new();
    let x = g.leaf(3.0);
    let y = g.leaf(-0.5);
    let z = g.leaf(f64::INFINITY);
    let a = g.apply(Op::Mul, &[x, y])?;
    let b = g.apply(Op::Sub, &[a, x])?;
    let c = g.apply(Op::Add, &[b, b])?;
    let d = g.apply(Op::Mul, &[c, z])?;
    let e = g.apply(Op::Sub, &[d, c])?;
    let out = g.apply(Op::Add, &[e, a])?;
    let order = g.topo_order(out);
    let fast = g.backward(&order);
    let (traced, _) = g.backward_traced(&order);
    for id in [x, y, z, a, b, c, d, e, out] {
        assert_same(fast[id], traced[id]);
    }
    assert_same(fast[z], 2.0 * (3.0 * -0.5 - 3.0));
    Ok(())
}

/// Where an op passes nothing (PyTorch selects a zero), an infinite upstream
/// gradient leaves the input's gradient untouched, in all three walks; `abs`
/// at 0 multiplies (PyTorch's `grad * sgn(u)`), so `inf × 0 = nan` stays.
#[test]
fn ops_that_pass_nothing_leave_the_gradient_untouched() -> Result {
    // y = sqrt(f(x)) + x with f(x) = 0 at the chosen x: the upstream into f is inf.
    let cases: [(Op, f64, f64); 5] = [
        (Op::Relu, 0.0, 1.0),
        (Op::Relu, -2.0, 1.0),
        (Op::Floor, 0.5, 1.0),
        (Op::Sign, 0.0, 1.0),
        (Op::Abs, 0.0, f64::NAN),
    ];
    for (op, at, expected) in cases {
        let mut g = Graph::new();
        let x = g.leaf(at);
        let f = g.apply(op, &[x])?;
        let r = g.apply(Op::Sqrt, &[f])?;
        let y = g.apply(Op::Add, &[r, x])?;
        let order = g.topo_order(y);
        assert_same(g.backward(&order)[x], expected);
        let (traced, steps) = g.backward_traced(&order);
        assert_same(traced[x], expected);
        assert_same(
            g.backward_at(&order, &g.reevaluate(&order, &[]))[x],
            expected,
        );
        let step = steps.iter().find(|s| s.node == f).expect("f's step");
        let c = &step.contributions[0];
        assert_eq!(step.upstream, INF);
        assert_eq!(c.passes_nothing, op != Op::Abs, "{op:?}");
        if c.passes_nothing {
            assert_eq!((c.local, c.product), (0.0, 0.0));
            assert_eq!(c.before, c.after);
        }
    }
    // The losing side of max, the base of a^0 and the exponent of 0^b (b ≥ 0).
    let info = Op::Max.info();
    assert!(!info.passes(&[1.0, 2.0], 2.0, 0) && info.passes(&[1.0, 2.0], 2.0, 1));
    assert!(info.passes(&[2.0, 2.0], 2.0, 0));
    assert!(info.passes(&[f64::NAN, 2.0], f64::NAN, 1));
    let pow = Op::Pow.info();
    assert!(!pow.passes(&[0.0, 0.0], 1.0, 0) && !pow.passes(&[0.0, 0.0], 1.0, 1));
    assert!(pow.passes(&[0.0, -1.0], INF, 1) && pow.passes(&[2.0, 3.0], 8.0, 0));
    assert!(!Op::Detach.info().passes(&[1.0], 1.0, 0));
    assert!(Op::Relu.info().passes(&[f64::NAN], f64::NAN, 0));
    Ok(())
}

// ---------------------------------------------------------------------------
// One walk: plain, traced and at moved values

/// A random graph for [`the_plain_traced_and_moved_walks_agree_bit_for_bit`]:
/// leaf values, then instructions that each apply an op of the table (the op
/// number modulo the table) to earlier nodes, picked counting back from the
/// newest (small picks build chains, repeated picks share nodes).
#[derive(Debug, Clone)]
pub(super) struct Program {
    pub(super) leaves: Vec<f64>,
    pub(super) instructions: Vec<(usize, Vec<usize>)>,
}

/// Appends one instruction of a [`Program`] to `g`: the op numbered `op`
/// (modulo the table) over operands picked by `picks`, counted back from the
/// newest node. `None`, and nothing appended, where the op is a leaf: each
/// caller decides what a leaf instruction makes.
pub(super) fn apply_instruction(g: &mut Graph, op: usize, picks: &[usize]) -> Option<NodeId> {
    let info = &Op::table()[op % Op::table().len()];
    let count = match info.arity {
        Arity::Leaf => return None,
        Arity::Unary => 1,
        Arity::Binary => 2,
        Arity::Variadic => picks.len(),
    };
    let newest = g.len() - 1;
    let operands: Vec<NodeId> = (0..count)
        .map(|k| NodeId(newest.saturating_sub(picks[k % picks.len()]) as u32))
        .collect();
    Some(
        g.apply(info.op, &operands)
            .expect("arity chosen from the table"),
    )
}

/// Values that reach the places where an op passes nothing or the arithmetic
/// is special: 0 (relu, `0^b`, `a^0`), integers and ties (floor, max), signed
/// zeros, infinities and nan, besides ordinary numbers.
fn special_value() -> impl proptest::strategy::Strategy<Value = f64> {
    use proptest::prelude::*;
    prop_oneof![
        4 => -3.0f64..3.0,
        1 => prop::sample::select(vec![0.0, -0.0, 1.0, -1.0, 2.0, 0.5, INF, -INF, f64::NAN]),
    ]
}

fn walk_program() -> impl proptest::strategy::Strategy<Value = Program> {
    use proptest::prelude::*;
    (
        prop::collection::vec(special_value(), 1..=4),
        prop::collection::vec(
            (0..1000usize, prop::collection::vec(0..4usize, 1..=5)),
            1..24,
        ),
    )
        .prop_map(|(leaves, instructions)| Program {
            leaves,
            instructions,
        })
}

/// Builds `program` with leaf `moved` given the value `to` (if any); returns
/// the graph, its leaves and its output (the newest node).
fn build_program(program: &Program, moved: Option<(usize, f64)>) -> (Graph, Vec<NodeId>, NodeId) {
    let mut g = Graph::new();
    let leaves: Vec<NodeId> = (program.leaves.iter().enumerate())
        .map(|(i, &v)| match moved {
            Some((leaf, to)) if leaf == i => g.leaf(to),
            _ => g.leaf(v),
        })
        .collect();
    for (op, picks) in &program.instructions {
        apply_instruction(&mut g, *op, picks);
    }
    let output = NodeId(g.len() as u32 - 1);
    (g, leaves, output)
}

/// The same float, bit for bit; any nan equals any nan (IEEE 754 leaves the
/// sign and payload of a computed nan open).
fn same_bits(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn the_plain_traced_and_moved_walks_agree_bit_for_bit() {
    use proptest::prelude::{prop_assert, prop_assert_eq};
    use proptest::test_runner::{Config, TestCaseError, TestRunner};
    use std::cell::Cell;
    let passed_nothing = Cell::new(0usize);
    let spilled = Cell::new(0usize);
    let mut runner = TestRunner::new(Config {
        cases: 512,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (walk_program(), 0..4usize, special_value());
    let result = runner.run(&strategy, |(program, leaf, to)| {
        let (g, leaves, output) = build_program(&program, None);
        let order = g.topo_order(output);
        let plain = g.backward(&order);
        let (traced, steps) = g.backward_traced(&order);
        let at_stored = g.backward_at(&order, &g.reevaluate(&order, &[]));
        for i in 0..g.len() {
            let id = NodeId(i as u32);
            let (p, t, a) = (plain[id], traced[id], at_stored[id]);
            if !same_bits(p, t) || !same_bits(p, a) {
                return Err(TestCaseError::fail(format!(
                    "node {i}: plain {p:?}, traced {t:?}, at stored values {a:?}"
                )));
            }
        }
        // Every edge the trace says passed nothing left the gradient as it was;
        // every other edge added its product; and the op table agrees.
        for step in &steps {
            let operands = g.operands(step.node);
            spilled.set(spilled.get() + usize::from(operands.len() > 2));
            let x: Vec<f64> = operands.iter().map(|&o| g.value(o)).collect();
            let info = g.op(step.node).info();
            for c in &step.contributions {
                let passes = info.passes(&x, g.value(step.node), c.position);
                prop_assert_eq!(c.passes_nothing, !passes);
                if c.passes_nothing {
                    passed_nothing.set(passed_nothing.get() + 1);
                    prop_assert!(same_bits(c.before, c.after));
                    prop_assert_eq!((c.local, c.product), (0.0, 0.0));
                } else {
                    prop_assert!(same_bits(c.after, c.before + c.product));
                }
            }
        }
        // Backward at moved values is backward of the graph built at them.
        let leaf = leaf % leaves.len();
        let (moved, _, moved_output) = build_program(&program, Some((leaf, to)));
        let expected = moved.backward(&moved.topo_order(moved_output));
        let values = g.reevaluate(&order, &[(leaves[leaf], to)]);
        let at_moved = g.backward_at(&order, &values);
        for i in 0..g.len() {
            let id = NodeId(i as u32);
            if !same_bits(at_moved[id], expected[id]) {
                return Err(TestCaseError::fail(format!(
                    "node {i} with leaf {leaf} at {to:?}: {:?}, built there {:?}",
                    at_moved[id], expected[id]
                )));
            }
        }
        Ok(())
    });
    if let Err(error) = result {
        panic!("{error}");
    }
    // The cases reached the edges that pass nothing, and min/max of more than two.
    assert!(passed_nothing.get() > 50, "{}", passed_nothing.get());
    assert!(spilled.get() > 20, "{}", spilled.get());
}

#[test]
fn compaction_in_place_moves_kept_nodes_down_with_their_operands() -> Result {
    // Dropped nodes between kept ones, and `max` of three and four operands
    // (kept in the side vector), one dropped before a kept one: its operands'
    // slots are reused.
    let mut g = Graph::new();
    let a = g.leaf(1.0); // 0, kept → 0
    let junk = g.leaf(5.0); // 1
    let b = g.leaf(2.0); // 2, kept → 1
    g.apply(Op::Max, &[junk, a, b])?; // 3, spilled, dropped
    let c = g.apply(Op::Max, &[a, b, a])?; // 4, spilled, kept → 2 (value 2)
    g.apply(Op::Add, &[junk, junk])?; // 5
    let d = g.apply(Op::Mul, &[c, b])?; // 6, kept → 3 (value 4)
    let e = g.apply(Op::Max, &[d, c, a, b])?; // 7, spilled, kept → 4 (value 4)
    let f = g.apply(Op::Sub, &[e, a])?; // 8, kept → 5 (value 3)
    let remap = g.retain_reachable(&[f]);
    let new = |old: NodeId| remap.get(old).expect("kept");
    assert_eq!((remap.before(), remap.kept(), g.len()), (9, 6, 6));
    let ids: Vec<u32> = [a, b, c, d, e, f].iter().map(|&id| new(id).0).collect();
    assert_eq!(ids, [0, 1, 2, 3, 4, 5]);
    assert_eq!(remap.get(junk), None);
    let n = |i: u32| NodeId(i);
    assert_eq!(g.operands(n(2)), [n(0), n(1), n(0)]);
    assert_eq!(g.operands(n(3)), [n(2), n(1)]);
    assert_eq!(g.operands(n(4)), [n(3), n(2), n(0), n(1)]);
    assert_eq!(g.operands(n(5)), [n(4), n(0)]);
    let values: Vec<f64> = (0..6).map(|i| g.value(n(i))).collect();
    assert_eq!(values, [1.0, 2.0, 2.0, 4.0, 4.0, 3.0]);
    let ops: Vec<Op> = (0..6).map(|i| g.op(n(i))).collect();
    assert_eq!(
        ops,
        [
            Op::Variable,
            Op::Variable,
            Op::Max,
            Op::Mul,
            Op::Max,
            Op::Sub
        ]
    );
    // ∂f/∂a = 1·(∂e/∂a) − 1 with e = max(d, c, a, b) = d = c·b = max(a, b, a)·b:
    // c passes nothing to a (a = 1 is not the largest), so ∂f/∂a = −1;
    // ∂f/∂b = ∂d/∂b = c + b·∂c/∂b = 2 + 2 = 4.
    let grads = g.backward(&g.topo_order(n(5)));
    assert_eq!((grads[n(0)], grads[n(1)]), (-1.0, 4.0));
    // The side vector holds exactly the kept operands: a node appended and
    // truncated away leaves the others as they were.
    let extra = g.apply(Op::Min, &[n(0), n(1), n(2)])?;
    assert_eq!(g.operands(extra), [n(0), n(1), n(2)]);
    g.truncate(6);
    g.apply(Op::Min, &[n(3), n(4), n(5)])?;
    assert_eq!(g.operands(n(4)), [n(3), n(2), n(0), n(1)]);
    assert_eq!(g.operands(n(6)), [n(3), n(4), n(5)]);
    assert_eq!(g.value(n(6)), 3.0);
    Ok(())
}
#[test]
fn the_traced_walk_gives_the_plain_walks_gradients_when_the_range_is_lost() {
    // normcdf(238.56…)'s local derivative φ(238.56…) ≈ e^-28455 underflows
    // while the upstream is 1, so the plain walk is redone on the scaled path,
    // where x's gradient is a number of that size (negative: the chain ends in
    // cos(2.189…) < 0), rounded to −0. The traced walk (`:trace`) gave the f64
    // walk's +0 (0 × cos(x) added to +0); found by the proptest above.
    let program = Program {
        leaves: vec![2.1893004758193917],
        instructions: vec![
            (97, vec![0]),
            (2, vec![0]),
            (2, vec![0]),
            (2, vec![0]),
            (350, vec![3]),
            (2, vec![0]),
            (533, vec![0]),
            (868, vec![0, 0]),
            (2, vec![0]),
            (2, vec![0, 0]),
            (480, vec![1]),
            (64, vec![0]),
            (603, vec![1]),
            (2, vec![0]),
            (48, vec![0]),
            (542, vec![0]),
            (688, vec![0]),
        ],
    };
    let (g, leaves, output) = build_program(&program, None);
    assert_eq!(g.op(output), Op::Normcdf);
    let order = g.topo_order(output);
    let plain = g.backward(&order)[leaves[0]];
    let (traced, _) = g.backward_traced(&order);
    assert!(plain == 0.0 && plain.is_sign_negative(), "{plain:?}");
    assert!(same_bits(plain, traced[leaves[0]]));
}
