//! Every gradient of every tensor op against a central difference, at
//! random shapes (1×1, 1×n, n×1, n×m, vectors, scalars), with broadcasting
//! and fan-out: property tests. The central difference uses only forward
//! values (moving one element of a leaf by ±h, [`TensorGraph::rerun`]), so
//! it is independent of the backward rules it checks.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::{Rng, Select, Shape, Tensor, TensorError, TensorGraph, TensorId, TensorOp};
use crate::engine::{Arity, Domain, Graph, Kinks, Op, Passing};

/// The step of the central difference.
const H: f64 = 1e-5;

/// Builds the expression under test from the leaves.
type Build = dyn Fn(&mut TensorGraph, &[TensorId]) -> Result<TensorId, TensorError>;

/// `L = sum(f(leaves) ⊙ R)`, R fixed normal samples (so the upstream is not
/// all ones): checks `∂L/∂leaf` of every element of every leaf against
/// `(L(x + h) − L(x − h))/2h`, to a relative 1e-6.
fn check(leaves: &[Tensor], build: &Build) -> Result<(), TestCaseError> {
    check_scaled(leaves, build, 1.0)
}

/// [`check`], with the backward pass's gradients multiplied by `scale`
/// before the comparison (1 to check; anything else must fail).
fn check_scaled(leaves: &[Tensor], build: &Build, scale: f64) -> Result<(), TestCaseError> {
    let mut g = TensorGraph::new();
    let ids: Vec<TensorId> = leaves.iter().map(|t| g.leaf(t.clone()).unwrap()).collect();
    let out = build(&mut g, &ids).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let r = Tensor::randn(g.shape(out), &mut Rng::new(7));
    let r = g.constant(r).unwrap();
    let weighted = g.apply(TensorOp::Elementwise(Op::Mul), &[out, r]).unwrap();
    let l = g.apply(TensorOp::Sum, &[weighted]).unwrap();
    let grads = g.backward(l);
    let none = Graph::new();
    for (&id, leaf) in ids.iter().zip(leaves) {
        let analytic = grads
            .get(id)
            .cloned()
            .unwrap_or_else(|| Tensor::zeros(leaf.shape()));
        prop_assert_eq!(analytic.shape(), leaf.shape());
        for e in 0..leaf.len() {
            let mut at = |delta: f64| {
                let mut moved = leaf.clone();
                moved.data_mut()[e] += delta;
                g.set_leaf_value(id, moved).unwrap();
                assert!(g.rerun(&none));
                g.value(l).data()[0]
            };
            let numeric = (at(H) - at(-H)) / (2.0 * H);
            at(0.0);
            let got = analytic.data()[e] * scale;
            prop_assert!(
                (got - numeric).abs() <= 1e-6 * numeric.abs().max(1.0),
                "element {} of leaf {:?}: backward {} vs central difference {}",
                e,
                id,
                got,
                numeric
            );
        }
    }
    Ok(())
}

/// A matrix shape of each kind: 1×1, 1×n, n×1, n×m (sizes up to 4).
fn matrix_shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::matrix(1, 1)),
        (2..5usize).prop_map(|n| Shape::matrix(1, n)),
        (2..5usize).prop_map(|n| Shape::matrix(n, 1)),
        (2..5usize, 2..5usize).prop_map(|(m, n)| Shape::matrix(m, n)),
    ]
}

/// Any shape: a scalar, a vector or a matrix of each kind.
fn any_shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::scalar()),
        (1..5usize).prop_map(Shape::vector),
        matrix_shape(),
    ]
}

/// A tensor of `shape` with elements in `lo..hi`.
fn tensor(shape: Shape, lo: f64, hi: f64) -> impl Strategy<Value = Tensor> {
    prop::collection::vec(lo..hi, shape.len()).prop_map(move |d| Tensor::new(shape, d))
}

/// A shape that broadcasts to the matrix `out`, by `kind`: `()`, the row
/// vector `n`, `1×n`, `m×1`, or `out` itself.
fn broadcasting_to(out: Shape, kind: usize) -> Shape {
    let (m, n) = out.as_matrix();
    match kind {
        0 => Shape::scalar(),
        1 => Shape::vector(n),
        2 => Shape::matrix(1, n),
        3 => Shape::matrix(m, 1),
        _ => out,
    }
}

/// Where a unary op's central difference is a derivative: inside its domain
/// and away from its kinks (a range, and whether the sign is random).
fn unary_range(op: Op) -> (f64, f64, bool) {
    let info = op.info();
    // Away from 0 on the reals too: cbrt′ is infinite there.
    let (lo, hi, signed) = match info.domain {
        Domain::Reals | Domain::NonzeroDivisor | Domain::RealPowers => (0.2, 1.5, true),
        Domain::Positive | Domain::NonNegative => (0.2, 3.0, false),
        Domain::MinusOneToOne | Domain::BetweenMinusOneAndOne => (-0.9, 0.9, false),
        Domain::OneAndAbove => (1.2, 3.0, false),
    };
    match info.kinks {
        Kinks::Smooth => (lo, hi, signed),
        Kinks::AtZero => (0.05, 1.5, true),
        Kinks::AtIntegers => (0.05, 0.95, true),
        Kinks::AtHalfIntegers => (0.55, 1.45, true),
        Kinks::AtTies => unreachable!("{}: a unary op has no ties", info.name),
    }
}

/// Every unary op of the scalar op table but `detach`, whose gradient is 0
/// on purpose where its value moves (tested on its own).
fn unary_ops() -> Vec<Op> {
    Op::table()
        .iter()
        .filter(|info| info.arity == Arity::Unary)
        .filter(|info| info.derivatives[0].passing != Passing::Detached)
        .map(|info| info.op)
        .collect()
}

/// A unary op with a tensor of values where it is differentiable.
fn unary_case() -> impl Strategy<Value = (Op, Tensor)> {
    (prop::sample::select(unary_ops()), any_shape()).prop_flat_map(|(op, shape)| {
        let (lo, hi, signed) = unary_range(op);
        let signs = prop::collection::vec(any::<bool>(), shape.len());
        (Just(op), tensor(shape, lo, hi), signs).prop_map(move |(op, mut t, signs)| {
            if signed {
                for (x, negative) in t.data_mut().iter_mut().zip(signs) {
                    if negative {
                        *x = -*x;
                    }
                }
            }
            (op, t)
        })
    })
}

/// A binary elementwise op, and two operands whose shapes broadcast to a
/// matrix (each a scalar, a row vector, 1×n, m×1 or the matrix).
fn binary_case() -> impl Strategy<Value = (Op, Tensor, Tensor)> {
    let ops = prop::sample::select(vec![Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Pow]);
    (ops, matrix_shape(), 0..5usize, 0..5usize).prop_flat_map(|(op, out, i, j)| {
        let (a, b) = (broadcasting_to(out, i), broadcasting_to(out, j));
        // Bases of ^ and divisors of / positive, away from 0.
        let (lo_a, lo_b) = match op {
            Op::Pow => (0.5, -2.0),
            Op::Div => (-2.0, 0.5),
            _ => (-2.0, -2.0),
        };
        (Just(op), tensor(a, lo_a, 2.0), tensor(b, lo_b, 2.0))
    })
}

/// Two factors of each kind of matrix product: matrix·matrix,
/// matrix·vector, vector·matrix, vector·vector.
fn matmul_case() -> impl Strategy<Value = (Tensor, Tensor)> {
    (1..5usize, 1..5usize, 1..5usize, 0..4usize).prop_flat_map(|(m, k, n, kind)| {
        let (a, b) = match kind {
            0 => (Shape::matrix(m, k), Shape::matrix(k, n)),
            1 => (Shape::matrix(m, k), Shape::vector(k)),
            2 => (Shape::vector(k), Shape::matrix(k, n)),
            _ => (Shape::vector(k), Shape::vector(k)),
        };
        (tensor(a, -2.0, 2.0), tensor(b, -2.0, 2.0))
    })
}

/// A reduction or a structural op that applies to `t`'s shape.
fn structural_case() -> impl Strategy<Value = (TensorOp, Tensor)> {
    any_shape().prop_flat_map(|shape| {
        let dims = shape.dims().to_vec();
        let mut ops = vec![
            Just(TensorOp::Transpose).boxed(),
            Just(TensorOp::Sum).boxed(),
            Just(TensorOp::Mean).boxed(),
            Just(TensorOp::Softmax).boxed(),
            Just(TensorOp::LogSumExp).boxed(),
            Just(TensorOp::Max).boxed(),
        ];
        if !dims.is_empty() {
            ops.push(Just(TensorOp::Min).boxed());
            ops.push(Just(TensorOp::LogSoftmax).boxed());
        }
        if let Some(&first) = dims.first() {
            ops.push((0..first).prop_map(TensorOp::Index).boxed());
            ops.push((0..dims.len()).prop_map(TensorOp::SumAxis).boxed());
            ops.push((0..dims.len()).prop_map(TensorOp::MeanAxis).boxed());
            ops.push((0..dims.len()).prop_map(TensorOp::MaxAxis).boxed());
            ops.push((0..dims.len()).prop_map(TensorOp::MinAxis).boxed());
            let second = if let [_, n] = dims[..] {
                (0..=n, 0..=n, 0..n.max(1), 0..3usize)
                    .prop_map(move |(a, b, j, kind)| match kind {
                        0 => None,
                        1 => Some(Select::Range(a.min(b), a.max(b))),
                        _ => Some(Select::At(j.min(n.saturating_sub(1)))),
                    })
                    .boxed()
            } else {
                Just(None).boxed()
            };
            ops.push(
                (0..=first, 0..=first, 0..first, any::<bool>(), second)
                    .prop_map(|(a, b, i, range, second)| {
                        let rows = if range {
                            Select::Range(a.min(b), a.max(b))
                        } else {
                            Select::At(i)
                        };
                        TensorOp::Slice(rows, second)
                    })
                    .boxed(),
            );
            ops.push((0..dims.len()).prop_map(TensorOp::SumKeepDims).boxed());
        }
        if let [m, n] = dims[..] {
            ops.push(
                (0..m, 0..n)
                    .prop_map(|(i, j)| TensorOp::Index2(i, j))
                    .boxed(),
            );
        }
        (prop::strategy::Union::new(ops), tensor(shape, -2.0, 2.0))
    })
}

/// True when the elements are at least 1e-3 apart (max has a kink at ties).
fn distinct(t: &Tensor) -> bool {
    let mut d = t.data().to_vec();
    d.sort_by(f64::total_cmp);
    d.windows(2).all(|w| w[1] - w[0] > 1e-3)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_unary_op_elementwise_matches_central_differences((op, t) in unary_case()) {
        check(&[t], &move |g, x| g.apply(TensorOp::Elementwise(op), &[x[0]]))?;
    }

    #[test]
    fn elementwise_binary_ops_with_broadcasting_match_central_differences(
        (op, a, b) in binary_case()
    ) {
        check(&[a, b], &move |g, x| g.apply(TensorOp::Elementwise(op), &[x[0], x[1]]))?;
    }

    #[test]
    fn matrix_products_match_central_differences((a, b) in matmul_case()) {
        check(&[a, b], &|g, x| g.apply(TensorOp::MatMul, &[x[0], x[1]]))?;
    }

    #[test]
    fn reductions_indexing_and_transpose_match_central_differences(
        (op, t) in structural_case()
    ) {
        let extremum = matches!(
            op,
            TensorOp::Max | TensorOp::Min | TensorOp::MaxAxis(_) | TensorOp::MinAxis(_)
        );
        prop_assume!(!extremum || distinct(&t));
        check(&[t], &move |g, x| g.apply(op, &[x[0]]))?;
    }

    #[test]
    fn outer_products_match_central_differences(
        (a, b) in (1..5usize, 1..5usize).prop_flat_map(|(m, n)| {
            (tensor(Shape::vector(m), -2.0, 2.0), tensor(Shape::vector(n), -2.0, 2.0))
        })
    ) {
        check(&[a, b], &|g, x| g.apply(TensorOp::Outer, &[x[0], x[1]]))?;
    }

    #[test]
    fn fan_out_matches_central_differences(t in any_shape().prop_flat_map(|s| tensor(s, -2.0, 2.0))) {
        // x used four times: tanh(x) ⊙ x + x, then @ xᵀ where it applies.
        check(&[t], &|g, x| {
            let th = g.apply(TensorOp::Elementwise(Op::Tanh), &[x[0]])?;
            let p = g.apply(TensorOp::Elementwise(Op::Mul), &[th, x[0]])?;
            let s = g.apply(TensorOp::Elementwise(Op::Add), &[p, x[0]])?;
            if g.shape(s).rank() == 0 {
                return Ok(s);
            }
            let t = g.apply(TensorOp::Transpose, &[x[0]])?;
            g.apply(TensorOp::MatMul, &[s, t])
        })?;
    }

    #[test]
    fn a_layer_and_a_softmax_cross_entropy_match_central_differences(
        (m, n) in (1..5usize, 1..5usize),
        seed in any::<u64>(),
    ) {
        // -ln(softmax(W2 @ tanh(W @ x + b))[0]), every parameter a leaf.
        let mut rng = Rng::new(seed);
        let leaves = [
            Tensor::randn(Shape::matrix(m, n), &mut rng),
            Tensor::randn(Shape::vector(n), &mut rng),
            Tensor::randn(Shape::vector(m), &mut rng),
            Tensor::randn(Shape::matrix(3, m), &mut rng),
        ];
        check(&leaves, &|g, p| {
            let wx = g.apply(TensorOp::MatMul, &[p[0], p[1]])?;
            let u = g.apply(TensorOp::Elementwise(Op::Add), &[wx, p[2]])?;
            let h = g.apply(TensorOp::Elementwise(Op::Tanh), &[u])?;
            let z = g.apply(TensorOp::MatMul, &[p[3], h])?;
            let s = g.apply(TensorOp::Softmax, &[z])?;
            let s0 = g.apply(TensorOp::Index(0), &[s])?;
            let ln = g.apply(TensorOp::Elementwise(Op::Ln), &[s0])?;
            g.apply(TensorOp::Elementwise(Op::Neg), &[ln])
        })?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn cross_entropy_matches_central_differences(
        (n, k) in (1..5usize, 1..5usize),
        matrix in any::<bool>(),
        seed in any::<u64>(),
    ) {
        // cross_entropy(Z, y) with constant labels, Z a leaf: n×k and n
        // labels, or k scores and one label.
        let mut rng = Rng::new(seed);
        let (shape, labels) = if matrix {
            let y = (0..n).map(|_| (rng.next_u64() % k as u64) as f64).collect();
            (Shape::matrix(n, k), Tensor::vector(y))
        } else {
            (Shape::vector(k), Tensor::scalar((rng.next_u64() % k as u64) as f64))
        };
        let z = Tensor::randn(shape, &mut rng);
        check(&[z], &move |g, x| {
            let y = g.constant(labels.clone())?;
            g.apply(TensorOp::CrossEntropy, &[x[0], y])
        })?;
    }
}

/// Ties split the gradient of a full `max`/`min` evenly (PyTorch's
/// `evenly_distribute_backward`), and along an axis the first extremum
/// of each lane takes it: checked against the definition (one-sided
/// differences are what the tie makes: the average of the two sides is
/// no derivative, so the rule is a convention, stated here).
#[test]
fn ties_split_evenly_for_whole_tensors_and_go_to_the_first_along_an_axis() {
    let mut g = TensorGraph::new();
    let x = g
        .leaf(Tensor::new(
            Shape::matrix(2, 3),
            vec![1.0, 7.0, 7.0, 7.0, 0.0, 2.0],
        ))
        .unwrap();
    let m = g.apply(TensorOp::Max, &[x]).unwrap();
    assert_eq!(
        g.backward(m).get(x).unwrap().data(),
        &[0.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 0.0, 0.0]
    );
    let rows = g.apply(TensorOp::MaxAxis(1), &[x]).unwrap();
    let s = g.apply(TensorOp::Sum, &[rows]).unwrap();
    assert_eq!(g.value(rows).data(), &[7.0, 7.0]);
    assert_eq!(
        g.backward(s).get(x).unwrap().data(),
        &[0.0, 1.0, 0.0, 1.0, 0.0, 0.0]
    );
    let lo = g.apply(TensorOp::Min, &[x]).unwrap();
    assert_eq!(g.value(lo).data(), &[0.0]);
    assert_eq!(
        g.backward(lo).get(x).unwrap().data(),
        &[0.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    );
}

#[test]
fn the_check_fails_for_a_wrong_gradient() {
    // The oracle can fail: the right gradients of x ⊙ x pass, the same
    // gradients 1% off do not.
    let t = Tensor::vector(vec![0.5, -1.0]);
    let square: &Build = &|g, x| g.apply(TensorOp::Elementwise(Op::Mul), &[x[0], x[0]]);
    assert!(check_scaled(std::slice::from_ref(&t), square, 1.0).is_ok());
    assert!(check_scaled(std::slice::from_ref(&t), square, 1.01).is_err());
}

#[test]
fn detach_passes_nothing() {
    let mut g = TensorGraph::new();
    let x = g.leaf(Tensor::vector(vec![1.0, 2.0])).unwrap();
    let d = g.apply(TensorOp::Elementwise(Op::Detach), &[x]).unwrap();
    let p = g.apply(TensorOp::Elementwise(Op::Mul), &[d, x]).unwrap();
    let l = g.apply(TensorOp::Sum, &[p]).unwrap();
    // L = Σ detach(x)·x: ∂L/∂x = detach(x) = x, not 2x.
    assert_eq!(g.backward(l).get(x).unwrap().data(), &[1.0, 2.0]);
}

/// Any tensor node with an operand, built on random leaves: the cases of
/// the properties above.
fn any_step() -> impl Strategy<Value = (TensorOp, Vec<Tensor>)> {
    prop_oneof![
        unary_case().prop_map(|(op, t)| (TensorOp::Elementwise(op), vec![t])),
        binary_case().prop_map(|(op, a, b)| (TensorOp::Elementwise(op), vec![a, b])),
        matmul_case().prop_map(|(a, b)| (TensorOp::MatMul, vec![a, b])),
        structural_case().prop_map(|(op, t)| (op, vec![t])),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn the_scalar_view_adds_up_to_the_contribution((op, leaves) in any_step(), seed in any::<u64>()) {
        // Σ upstream × local over an element's terms (the Jacobian's column)
        // is that element of the vector–Jacobian product's contribution.
        let mut g = TensorGraph::new();
        let ids: Vec<TensorId> = leaves.iter().map(|t| g.leaf(t.clone()).unwrap()).collect();
        let node = g.apply(op, &ids).unwrap();
        let upstream = Tensor::randn(g.shape(node), &mut Rng::new(seed));
        let r = g.constant(upstream.clone()).unwrap();
        let p = g.apply(TensorOp::Elementwise(Op::Mul), &[node, r]).unwrap();
        let l = g.apply(TensorOp::Sum, &[p]).unwrap();
        let (_, steps) = g.backward_traced(l);
        let step = steps.iter().find(|s| s.node == node).unwrap();
        for c in &step.contributions {
            for e in 0..c.contribution.len() {
                let terms = g.expand(node, c.position, e, upstream.data());
                let sum: f64 = terms.iter().map(|t| t.upstream * t.local).sum();
                let want = c.contribution.data()[e];
                prop_assert!(
                    (sum - want).abs() <= 1e-12 * want.abs().max(1.0),
                    "{:?} operand {} element {}: terms {} vs contribution {}",
                    op, c.position, e, sum, want
                );
            }
        }
    }
}
