//! Tensor engine tests: forward values and gradients against numpy's,
//! computed independently and copied in; shape errors; the budget; rerun.

use super::*;
use crate::engine::{Graph, Op};

/// Asserts two slices agree to a relative 1e-12 (absolute near 0).
#[track_caller]
fn close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-12 * w.abs().max(1.0),
            "{got:?} vs {want:?}"
        );
    }
}

/// `W = [[1, 2, 0], [3, 4, 1]]`, `x = [1, -1, 0.5]`, `b = [0.1, -0.2]`
/// as leaves, and `L = sum(tanh(W @ x + b))`.
fn layer(g: &mut TensorGraph) -> [TensorId; 4] {
    let w = Tensor::from_rows(&[vec![1.0, 2.0, 0.0], vec![3.0, 4.0, 1.0]]).unwrap();
    let w = g.leaf(w).unwrap();
    let x = g.leaf(Tensor::vector(vec![1.0, -1.0, 0.5])).unwrap();
    let b = g.leaf(Tensor::vector(vec![0.1, -0.2])).unwrap();
    let wx = g.apply(TensorOp::MatMul, &[w, x]).unwrap();
    let u = g.apply(TensorOp::Elementwise(Op::Add), &[wx, b]).unwrap();
    let h = g.apply(TensorOp::Elementwise(Op::Tanh), &[u]).unwrap();
    let l = g.apply(TensorOp::Sum, &[h]).unwrap();
    [w, x, b, l]
}

#[test]
fn a_tanh_layer_matches_numpy() {
    // numpy: u = W@x + b; L = tanh(u).sum(); up = 1 - tanh(u)**2;
    // dW = outer(up, x), dx = W.T @ up, db = up.
    let mut g = TensorGraph::new();
    let [w, x, b, l] = layer(&mut g);
    assert_eq!(g.shape(l), Shape::scalar());
    close(g.value(l).data(), &[-1.3206656473161877]);
    let grads = g.backward(l);
    close(
        grads.get(w).unwrap().data(),
        &[
            0.4869173611483415,
            -0.4869173611483415,
            0.24345868057417075,
            0.6347395899824587,
            -0.6347395899824587,
            0.31736979499122936,
        ],
    );
    close(
        grads.get(x).unwrap().data(),
        &[2.3911361310957178, 3.512793082226518, 0.6347395899824587],
    );
    close(
        grads.get(b).unwrap().data(),
        &[0.4869173611483415, 0.6347395899824587],
    );
}

#[test]
fn shape_errors_name_both_shapes_and_the_rule() {
    let mut g = TensorGraph::new();
    let a = g.constant(Tensor::vector(vec![1.0, 2.0])).unwrap();
    let b = g.constant(Tensor::vector(vec![1.0, 2.0, 3.0])).unwrap();
    let err = g.apply(TensorOp::MatMul, &[a, b]).unwrap_err();
    assert_eq!(err.to_string(), "(2) @ (3): the inner sizes must agree");
    let err = g
        .apply(TensorOp::Elementwise(Op::Add), &[a, b])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "(2) + (3): the shapes do not broadcast (aligned from the right, each size must be equal or 1)"
    );
    let err = g.apply(TensorOp::Index(2), &[a]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "index 2 is out of range for axis 0 of shape (2): indices run from 0 to 1"
    );
}

#[test]
fn the_budget_refuses_before_allocating() {
    let g = TensorGraph::new();
    let err = g.check_budget(Shape::matrix(100_000, 100_000)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "a tensor of shape (100000×100000) needs 10000000000 numbers, but the memory budget has 134217728 left (of 134217728); use smaller shapes or free variables"
    );
}

#[test]
fn rerun_recomputes_after_a_leaf_moves() {
    let mut g = TensorGraph::new();
    let [_, x, _, l] = layer(&mut g);
    g.set_leaf_value(x, Tensor::vector(vec![0.0, 0.0, 0.0]))
        .unwrap();
    assert!(g.rerun(&Graph::new()));
    // tanh(0.1) + tanh(-0.2) (numpy).
    close(g.value(l).data(), &[-0.09770732559994819]);
}

/// Shorthands for building.
fn matrix(rows: &[&[f64]]) -> Tensor {
    Tensor::from_rows(&rows.iter().map(|r| r.to_vec()).collect::<Vec<_>>()).unwrap()
}

fn ew(op: Op) -> TensorOp {
    TensorOp::Elementwise(op)
}

/// `A = [[1, -2, 0.5], [3, 0.25, -1]]` (2×3).
fn a23() -> Tensor {
    matrix(&[&[1.0, -2.0, 0.5], &[3.0, 0.25, -1.0]])
}

/// `B = [[0.5, 1], [-1, 2], [1.5, -0.5]]` (3×2).
fn b32() -> Tensor {
    matrix(&[&[0.5, 1.0], &[-1.0, 2.0], &[1.5, -0.5]])
}

/// `L = sum(op(a, b) ⊙ r)`: appends the product with the constant `r` and
/// the sum; returns (op node, L).
fn weighted(g: &mut TensorGraph, node: TensorId, r: Tensor) -> TensorId {
    let r = g.constant(r).unwrap();
    let p = g.apply(ew(Op::Mul), &[node, r]).unwrap();
    g.apply(TensorOp::Sum, &[p]).unwrap()
}

/// The value of a node and the gradients of `L` for two leaves `a`, `b`,
/// `L = sum(op(a, b) ⊙ r)`.
fn binary(op: TensorOp, a: Tensor, b: Tensor, r: Tensor) -> (Tensor, Tensor, Tensor) {
    let mut g = TensorGraph::new();
    let (a, b) = (g.leaf(a).unwrap(), g.leaf(b).unwrap());
    let node = g.apply(op, &[a, b]).unwrap();
    let l = weighted(&mut g, node, r);
    let grads = g.backward(l);
    (
        g.value(node).clone(),
        grads.get(a).unwrap().clone(),
        grads.get(b).unwrap().clone(),
    )
}

/// The value of `op(a)` and the gradient of `sum(op(a) ⊙ r)`.
fn unary(op: TensorOp, a: Tensor, r: Tensor) -> (Tensor, Tensor) {
    let mut g = TensorGraph::new();
    let a = g.leaf(a).unwrap();
    let node = g.apply(op, &[a]).unwrap();
    let l = weighted(&mut g, node, r);
    let grads = g.backward(l);
    (g.value(node).clone(), grads.get(a).unwrap().clone())
}

// Expected values below: numpy 2.x float64, computed independently
// (np.outer, A.T @ R, the softmax and logsumexp by their definitions).

#[test]
fn matrix_times_matrix_matches_numpy() {
    let r = matrix(&[&[1.0, -1.0], &[0.5, 2.0]]);
    let (c, da, db) = binary(TensorOp::MatMul, a23(), b32(), r);
    assert_eq!(c.shape(), Shape::matrix(2, 2));
    close(c.data(), &[3.25, -3.25, -0.25, 4.0]);
    // dA = R·Bᵀ, dB = Aᵀ·R.
    close(da.data(), &[-0.5, -3.0, 2.0, 2.25, 3.5, -0.25]);
    close(db.data(), &[2.5, 5.0, -1.875, 2.5, 0.0, -2.5]);
}

#[test]
fn matrix_times_vector_matches_numpy() {
    let x = Tensor::vector(vec![1.0, -1.0, 0.5]);
    let y = Tensor::vector(vec![2.0, 0.5]);
    let (v, da, dx) = binary(TensorOp::MatMul, a23(), x, y);
    assert_eq!(v.shape(), Shape::vector(2));
    close(v.data(), &[3.25, 2.25]);
    close(da.data(), &[2.0, -2.0, 1.0, 0.5, -0.5, 0.25]); // outer(y, x)
    close(dx.data(), &[3.5, -3.875, 0.5]); // Aᵀ·y
}

#[test]
fn vector_times_matrix_and_the_dot_product_match_numpy() {
    let y = Tensor::vector(vec![2.0, 0.5]);
    let z = Tensor::vector(vec![0.3, -1.2, 2.0]);
    let (v, dy, da) = binary(TensorOp::MatMul, y, a23(), z.clone());
    assert_eq!(v.shape(), Shape::vector(3));
    close(v.data(), &[3.5, -3.875, 0.5]);
    close(dy.data(), &[3.6999999999999997, -1.4]); // A·z
    close(da.data(), &[0.6, -2.4, 4.0, 0.15, -0.6, 1.0]); // outer(y, z)
    let x = Tensor::vector(vec![1.0, -1.0, 0.5]);
    let (d, dx, dz) = binary(TensorOp::MatMul, x.clone(), z.clone(), Tensor::scalar(1.0));
    assert_eq!(d.shape(), Shape::scalar());
    close(d.data(), &[2.5]);
    close(dx.data(), z.data());
    close(dz.data(), x.data());
}

#[test]
fn broadcasting_sums_the_upstream_over_the_broadcast_axes() {
    // L = sum((A ⊙ x) ⊙ R) with R = A a constant: dA = x ⊙ A (x across
    // the rows), dx = column sums of A ⊙ A.
    let x = Tensor::vector(vec![1.0, -1.0, 0.5]);
    let (_, da, dx) = binary(ew(Op::Mul), a23(), x, a23());
    close(da.data(), &[1.0, 2.0, 0.25, 3.0, -0.25, -0.5]);
    close(dx.data(), &[10.0, 4.0625, 1.25]);
    // (2×1) ⊙ (1×3) → 2×3.
    let c = matrix(&[&[2.0], &[-1.0]]);
    let r = matrix(&[&[0.5, 1.0, -3.0]]);
    let (p, dc, dr) = binary(ew(Op::Mul), c, r, a23());
    assert_eq!(p.shape(), Shape::matrix(2, 3));
    close(p.data(), &[1.0, 2.0, -6.0, -0.5, -1.0, 3.0]);
    assert_eq!(dc.shape(), Shape::matrix(2, 1));
    close(dc.data(), &[-3.0, 4.75]);
    close(dr.data(), &[-1.0, -4.25, 2.0]);
}

#[test]
fn softmax_and_logsumexp_match_numpy() {
    let z = Tensor::vector(vec![0.3, -1.2, 2.0]);
    let x = Tensor::vector(vec![1.0, -1.0, 0.5]);
    let (p, dz) = unary(TensorOp::Softmax, z.clone(), x);
    close(
        p.data(),
        &[0.14931886218339122, 0.03331754163216139, 0.8173635961844474],
    );
    // p ⊙ (x − p·x).
    close(
        dz.data(),
        &[
            0.07097377590071748,
            -0.050798693281256926,
            -0.020175082619460546,
        ],
    );
    let r = matrix(&[&[1.0, 0.0, -1.0], &[2.0, -0.5, 0.25]]);
    let (p, da) = unary(TensorOp::Softmax, a23(), r);
    close(
        p.data(),
        &[
            0.6037488961486258,
            0.030058887569574023,
            0.3661922162818002,
            0.9240064735078669,
            0.05906975759251023,
            0.016923768899622816,
        ],
    );
    close(
        da.data(),
        &[
            0.4603243129062974,
            -0.0071406895315182,
            -0.4531836233747792,
            0.16381802204400445,
            -0.13720185820488912,
            -0.026616163839115248,
        ],
    );
    let (lse, _) = unary(TensorOp::LogSumExp, z, Tensor::scalar(1.0));
    close(lse.data(), &[2.2016712449527907]);
    let y = Tensor::vector(vec![2.0, 0.5]);
    let (lse, da) = unary(TensorOp::LogSumExp, a23(), y);
    assert_eq!(lse.shape(), Shape::vector(2));
    close(lse.data(), &[1.5045969023422836, 3.0790362014040995]);
    close(
        da.data(),
        &[
            1.2074977922972516,
            0.060117775139148046,
            0.7323844325636004,
            0.46200323675393346,
            0.029534878796255114,
            0.008461884449811408,
        ],
    );
    // Stable: no exp overflows at 1000 (ln 2 + 1000).
    let (big, _) = unary(
        TensorOp::LogSumExp,
        Tensor::vector(vec![1000.0, 1000.0]),
        Tensor::scalar(1.0),
    );
    close(big.data(), &[1000.6931471805599]);
}

#[test]
fn the_cross_entropy_gradient_is_p_minus_onehot() {
    // -ln(softmax(z)[2]): value and gradient p − onehot(2) (numpy).
    let mut g = TensorGraph::new();
    let z = g.leaf(Tensor::vector(vec![0.3, -1.2, 2.0])).unwrap();
    let p = g.apply(TensorOp::Softmax, &[z]).unwrap();
    let pk = g.apply(TensorOp::Index(2), &[p]).unwrap();
    let ln = g.apply(ew(Op::Ln), &[pk]).unwrap();
    let l = g.apply(ew(Op::Neg), &[ln]).unwrap();
    close(g.value(l).data(), &[0.20167124495279054]);
    let grads = g.backward(l);
    close(
        grads.get(z).unwrap().data(),
        &[
            0.14931886218339122,
            0.03331754163216139,
            -0.18263640381555257,
        ],
    );
}

#[test]
fn reductions_match_numpy() {
    let ones = |s| Tensor::ones(s);
    let (s0, d0) = unary(
        TensorOp::SumAxis(0),
        a23(),
        Tensor::vector(vec![1.0, 2.0, 3.0]),
    );
    close(s0.data(), &[4.0, -1.75, -0.5]);
    close(d0.data(), &[1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    let (s1, d1) = unary(TensorOp::SumAxis(1), a23(), Tensor::vector(vec![1.0, 2.0]));
    close(s1.data(), &[-0.5, 2.25]);
    close(d1.data(), &[1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    let (m, dm) = unary(TensorOp::Mean, a23(), Tensor::scalar(1.0));
    close(m.data(), &[0.2916666666666667]);
    close(dm.data(), &[1.0 / 6.0; 6]);
    // max: the gradient is split evenly between the two tied maxima
    // (PyTorch's evenly_distribute_backward).
    let t = Tensor::vector(vec![1.0, 3.0, -2.0, 3.0]);
    let (mx, dmx) = unary(TensorOp::Max, t, Tensor::scalar(2.0));
    close(mx.data(), &[3.0]);
    close(dmx.data(), &[0.0, 1.0, 0.0, 1.0]);
    let (s, ds) = unary(TensorOp::Sum, a23(), Tensor::scalar(1.0));
    close(s.data(), &[1.75]);
    close(ds.data(), ones(Shape::matrix(2, 3)).data());
}

#[test]
fn transpose_and_indexing_pass_the_upstream_back() {
    let r = b32();
    let (t, dt) = unary(TensorOp::Transpose, a23(), r);
    assert_eq!(t.shape(), Shape::matrix(3, 2));
    close(t.data(), &[1.0, 3.0, -2.0, 0.25, 0.5, -1.0]);
    // dA = Rᵀ.
    close(dt.data(), &[0.5, -1.0, 1.5, 1.0, 2.0, -0.5]);
    let (row, drow) = unary(
        TensorOp::Index(1),
        a23(),
        Tensor::vector(vec![1.0, 2.0, 3.0]),
    );
    close(row.data(), &[3.0, 0.25, -1.0]);
    close(drow.data(), &[0.0, 0.0, 0.0, 1.0, 2.0, 3.0]);
    let (e, de) = unary(TensorOp::Index2(0, 2), a23(), Tensor::scalar(4.0));
    close(e.data(), &[0.5]);
    close(de.data(), &[0.0, 0.0, 4.0, 0.0, 0.0, 0.0]);
}

#[test]
fn fan_out_adds_the_contributions() {
    // M = B @ A (3×3), L = sum(M @ M): dM = 1·Mᵀ + Mᵀ·1 (numpy).
    let mut g = TensorGraph::new();
    let (b, a) = (g.leaf(b32()).unwrap(), g.leaf(a23()).unwrap());
    let m = g.apply(TensorOp::MatMul, &[b, a]).unwrap();
    let mm = g.apply(TensorOp::MatMul, &[m, m]).unwrap();
    let l = g.apply(TensorOp::Sum, &[mm]).unwrap();
    let (grads, steps) = g.backward_traced(l);
    close(
        grads.get(m).unwrap().data(),
        &[10.5, 13.5, 6.625, 0.625, 3.625, -3.25, 0.0, 3.0, -3.875],
    );
    let step = steps.iter().find(|s| s.node == mm).unwrap();
    let uses: Vec<(u32, u32)> = step
        .contributions
        .iter()
        .map(|c| (c.use_number, c.use_count))
        .collect();
    assert_eq!(uses, [(1, 2), (2, 2)]);
}

#[test]
fn the_trace_writes_the_matrix_rule_with_shapes() {
    // h = W @ x, W 2×3, x 3: ∂L/∂W = upstream · xᵀ (2×1)·(1×3) → 2×3,
    // ∂L/∂x = Wᵀ · upstream (3×2)·(2×1) → 3×1.
    let mut g = TensorGraph::new();
    let [w, x, _, l] = layer(&mut g);
    let (_, steps) = g.backward_traced(l);
    assert_eq!(steps[0].node, l);
    let matmul = steps
        .iter()
        .find(|s| g.op(s.node) == TensorOp::MatMul)
        .unwrap();
    let rules: Vec<(TensorId, &Rule)> = matmul
        .contributions
        .iter()
        .map(|c| (c.input, &c.rule))
        .collect();
    assert_eq!(
        rules,
        [
            (
                w,
                &Rule::MatMul {
                    side: Side::Left,
                    factors: [Shape::matrix(2, 1), Shape::matrix(1, 3)],
                    result: Shape::matrix(2, 3),
                }
            ),
            (
                x,
                &Rule::MatMul {
                    side: Side::Right,
                    factors: [Shape::matrix(3, 2), Shape::matrix(2, 1)],
                    result: Shape::matrix(3, 1),
                }
            ),
        ]
    );
    // The broadcast add: b (2) gets the upstream, nothing summed.
    let add = steps.iter().find(|s| g.op(s.node) == ew(Op::Add)).unwrap();
    assert_eq!(add.contributions[1].summed_from, None);
    assert_eq!(
        add.contributions[1].rule,
        Rule::Elementwise {
            op: Op::Add,
            position: 1
        }
    );
}

#[test]
fn a_scalar_node_hands_its_gradient_back() {
    // L = sum(s ⊙ A + s) with s = 2 a scalar node: L = 2·1.75 + 6·2 = 15.5,
    // ∂L/∂s = sum(A) + 6 = 7.75.
    let mut scalars = Graph::new();
    let s = scalars.leaf(2.0);
    let mut g = TensorGraph::new();
    let a = g.constant(a23()).unwrap();
    let ts = g.scalar(s, scalars.value(s));
    let sa = g.apply(ew(Op::Mul), &[ts, a]).unwrap();
    let ts2 = g.scalar(s, scalars.value(s));
    let y = g.apply(ew(Op::Add), &[sa, ts2]).unwrap();
    let l = g.apply(TensorOp::Sum, &[y]).unwrap();
    close(g.value(l).data(), &[15.5]);
    let grads = g.backward(l);
    assert_eq!(grads.scalars(), &[(s, 7.75)]);
    // The scalar moves: rerun reads it again.
    scalars.set_leaf_value(s, 1.0);
    assert!(g.rerun(&scalars));
    close(g.value(l).data(), &[7.75]);
}

#[test]
fn a_mirror_reads_its_value_and_passes_its_gradient_by_its_op() {
    // c = tanh(w) in the scalar graph, copied: L = sum(c ⊙ [1, 2]) = 3·tanh(w);
    // ∂L/∂c = 3 at the copy, ∂L/∂w = 3·(1 − tanh²w) at w's read.
    let mut scalars = Graph::new();
    let w = scalars.leaf(0.5);
    let c = scalars.apply(Op::Tanh, &[w]).unwrap();
    let mut g = TensorGraph::new();
    let tw = g.scalar(w, scalars.value(w));
    let tc = g.mirror(Op::Tanh, &[tw], c, scalars.value(c)).unwrap();
    assert_eq!((g.stands_for(tc), g.stands_for(tw)), (Some(c), Some(w)));
    assert_eq!(g.scalar_reads().collect::<Vec<_>>(), [w, c]);
    let v = g.constant(Tensor::vector(vec![1.0, 2.0])).unwrap();
    let cv = g.apply(ew(Op::Mul), &[tc, v]).unwrap();
    let l = g.apply(TensorOp::Sum, &[cv]).unwrap();
    close(g.value(l).data(), &[3.0 * 0.5f64.tanh()]);
    let grads = g.backward(l);
    close(grads.get(tc).unwrap().data(), &[3.0]);
    let sech2 = 1.0 - 0.5f64.tanh().powi(2);
    assert_eq!(grads.scalars().len(), 1);
    assert!((grads.scalars()[0].1 - 3.0 * sech2).abs() < 1e-15);
    // The leaf moves: the copy's value is the scalar graph's, to the bit.
    scalars.update_leaves(&[(w, 1.5)]);
    assert!(g.rerun(&scalars));
    assert_eq!(g.value(tc).data()[0].to_bits(), scalars.value(c).to_bits());
    close(g.value(l).data(), &[3.0 * 1.5f64.tanh()]);
    // Not elementwise of one operand: nothing appended.
    let len = g.len();
    assert_eq!(g.mirror(Op::Add, &[tw], c, 0.0), None);
    assert_eq!(g.len(), len);
    g.truncate(tc.index());
    assert_eq!(g.mirrored(tc), None);
}

#[test]
fn truncate_frees_the_values_of_the_nodes_removed() {
    let mut g = TensorGraph::with_budget(10);
    let a = g.leaf(Tensor::zeros(Shape::matrix(3, 3))).unwrap();
    assert_eq!(g.held(), 9);
    let err = g.apply(TensorOp::Transpose, &[a]).unwrap_err();
    assert!(matches!(err, TensorError::Budget(_)), "{err}");
    let s = g.apply(TensorOp::Sum, &[a]).unwrap();
    assert_eq!((g.len(), g.held()), (2, 10));
    g.truncate(1);
    assert_eq!((g.len(), g.held()), (1, 9));
    assert_eq!(g.apply(TensorOp::Mean, &[a]).unwrap(), s);
}

#[test]
fn the_gradients_of_a_backward_pass_are_checked_against_the_budget() {
    // A 2×2 leaf, its double and their sum hold 4 + 4 + 1 = 9 numbers; the
    // gradients of the pass from the sum take as many again.
    let mut g = TensorGraph::with_budget(12);
    let a = g.leaf(Tensor::zeros(Shape::matrix(2, 2))).unwrap();
    let two = g.constant(Tensor::scalar(2.0)).unwrap();
    let d = g.apply(TensorOp::Elementwise(Op::Mul), &[a, two]).unwrap();
    let s = g.apply(TensorOp::Sum, &[d]).unwrap();
    assert_eq!(g.held(), 10);
    assert_eq!(
        g.check_gradient_budget(s),
        Err(GradientBudgetError {
            need: 10,
            left: 2,
            budget: 12
        })
    );
    let mut roomy = TensorGraph::with_budget(20);
    let a = roomy.leaf(Tensor::zeros(Shape::matrix(2, 2))).unwrap();
    let s = roomy.apply(TensorOp::Sum, &[a]).unwrap();
    assert_eq!(roomy.check_gradient_budget(s), Ok(()));
}

#[test]
fn an_interrupt_stops_the_walk() {
    let mut g = TensorGraph::new();
    let [w, _, _, l] = layer(&mut g);
    g.set_interrupt(std::sync::Arc::new(|| true));
    let grads = g.backward(l);
    assert!(g.interrupted());
    assert!(grads.get(w).is_none());
}

#[test]
fn randn_is_the_documented_generator() {
    // xoshiro256** seeded by SplitMix64, and Box–Muller over it, as a
    // separate Python transcription of the reference C code
    // (prng.di.unimi.it) gives them.
    let mut rng = Rng::new(0);
    assert_eq!(rng.next_u64(), 0x99EC_5F36_CB75_F2B4);
    let t = Tensor::randn(Shape::vector(2), &mut Rng::new(42));
    close(t.data(), &[-0.303263064678738, 0.28846173882942383]);
}

/// A large draw asks `stop` between blocks of 2²⁰ elements (before each
/// but the first) and ends when told; drawn whole it is the numbers of one
/// draw per element, in order (a vector past one block: the blocks join
/// without a seam).
#[test]
fn a_large_draw_stops_between_blocks() {
    let n = 2 * (1 << 20) + 3;
    let asked = std::cell::Cell::new(0);
    let stop_at_second = || {
        asked.set(asked.get() + 1);
        asked.get() >= 2
    };
    let mut rng = Rng::new(5);
    assert!(Tensor::drawn(Shape::vector(n), &stop_at_second, || rng.normal()).is_none());
    assert_eq!(asked.get(), 2);
    let mut rng = Rng::new(5);
    let drawn = Tensor::drawn(Shape::vector(n), &|| false, || rng.normal()).unwrap();
    let mut rng = Rng::new(5);
    let one_by_one: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
    assert_eq!(drawn.data(), &one_by_one[..]);
}

/// A broadcast elementwise rule of the backward pass (`X * b`, the row
/// `b` broadcast down the 2100 rows of `X`: 2.1·10⁶ elements, 3 blocks of
/// 2²⁰) asks `stop` between blocks and ends when told; not told, `b`
/// receives each column's sum of `upstream ⊙ X`, here 2100 (ones).
#[test]
fn a_broadcast_elementwise_rule_stops_between_blocks() {
    let (m, n) = (2100, 1000);
    let mut g = TensorGraph::new();
    let x = g.leaf(Tensor::ones(Shape::matrix(m, n))).unwrap();
    let b = g.leaf(Tensor::ones(Shape::vector(n))).unwrap();
    let y = g.apply(TensorOp::Elementwise(Op::Mul), &[x, b]).unwrap();
    let up = Tensor::ones(Shape::matrix(m, n));
    let asked = std::cell::Cell::new(0);
    let stop_at_second = || {
        asked.set(asked.get() + 1);
        asked.get() >= 2
    };
    assert!(g.vjp_until(y, 1, &up, &stop_at_second).is_none());
    assert_eq!(asked.get(), 2);
    let (_, summed_from, c) = g.vjp_until(y, 1, &up, &|| false).unwrap();
    assert_eq!(summed_from, Some(Shape::matrix(m, n)));
    assert_eq!(c.shape(), Shape::vector(n));
    assert!(c.data().iter().all(|&v| v == m as f64));
}

#[test]
fn ragged_rows_are_an_error() {
    let err = Tensor::from_rows(&[vec![1.0, 2.0], vec![3.0]]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "row 1 has 1 element(s) but row 0 has 2: every row needs the same length"
    );
}

#[test]
fn constants_get_no_gradient() {
    // L = sum(c ⊙ x), c a literal: x gets c, c gets nothing (as PyTorch's
    // requires_grad = False).
    let mut g = TensorGraph::new();
    let c = g.constant(Tensor::vector(vec![2.0, 3.0])).unwrap();
    let x = g.leaf(Tensor::vector(vec![5.0, 7.0])).unwrap();
    let p = g.apply(ew(Op::Mul), &[c, x]).unwrap();
    let l = g.apply(TensorOp::Sum, &[p]).unwrap();
    let (grads, steps) = g.backward_traced(l);
    assert_eq!(grads.get(x).unwrap().data(), &[2.0, 3.0]);
    assert!(grads.get(c).is_none());
    let mul = steps.iter().find(|s| s.node == p).unwrap();
    assert_eq!(mul.contributions.len(), 1);
    assert_eq!(mul.contributions[0].input, x);
}

#[test]
fn the_scalar_view_of_a_matrix_product_names_each_term() {
    // h = W @ x, W 2×3, x = [1, -1, 0.5], upstream [u0, u1]:
    // ∂L/∂W[1, 2] = u1 · x[2] (one term); ∂L/∂x[0] = u0·W[0, 0] + u1·W[1, 0].
    let mut g = TensorGraph::new();
    let [w, x, _, _] = layer(&mut g);
    let h = g.apply(TensorOp::MatMul, &[w, x]).unwrap();
    let up = [0.25, -2.0];
    let term = |output, upstream, local| ElementTerm {
        output,
        upstream,
        local,
    };
    assert_eq!(g.expand(h, 0, 5, &up), [term(1, -2.0, 0.5)]);
    assert_eq!(
        g.expand(h, 1, 0, &up),
        [term(0, 0.25, 1.0), term(1, -2.0, 3.0)]
    );
}

#[test]
fn empty_tensors_give_values_or_errors_never_panics() {
    // Every op on 0×3, 3×0 and 0-vectors: a value of the rule's shape (sum
    // of nothing is 0, a mean nan) or a ShapeError; backward runs.
    let shapes = [Shape::matrix(0, 3), Shape::matrix(3, 0), Shape::vector(0)];
    let ops = [
        TensorOp::Transpose,
        TensorOp::Index(0),
        TensorOp::Index2(0, 0),
        TensorOp::Sum,
        TensorOp::SumAxis(0),
        TensorOp::SumAxis(1),
        TensorOp::Mean,
        TensorOp::Max,
        TensorOp::Softmax,
        TensorOp::LogSumExp,
        ew(Op::Tanh),
        TensorOp::Min,
        TensorOp::MeanAxis(0),
        TensorOp::MeanAxis(1),
        TensorOp::MaxAxis(0),
        TensorOp::MinAxis(1),
        TensorOp::ArgMax(None),
        TensorOp::ArgMax(Some(1)),
        TensorOp::LogSoftmax,
        TensorOp::Slice(super::Select::Range(0, 0), None),
        TensorOp::OneHot(2),
    ];
    for shape in shapes {
        for op in ops {
            let mut g = TensorGraph::new();
            let x = g.leaf(Tensor::zeros(shape)).unwrap();
            if let Ok(y) = g.apply(op, &[x]) {
                let s = g.apply(TensorOp::Sum, &[y]).unwrap();
                let grad = g.backward(s).get(x).cloned();
                if matches!(op, TensorOp::ArgMax(_) | TensorOp::OneHot(_)) {
                    // Piecewise constant: nothing passes.
                    assert!(grad.is_none(), "{op:?}");
                } else {
                    assert_eq!(grad.unwrap().shape(), shape);
                }
            }
        }
    }
    let mut g = TensorGraph::new();
    let x = g.leaf(Tensor::zeros(Shape::matrix(3, 0))).unwrap();
    let rows = g.apply(TensorOp::SumAxis(1), &[x]).unwrap();
    assert_eq!(g.value(rows).data(), &[0.0, 0.0, 0.0]);
    let max = g.apply(TensorOp::Max, &[x]).unwrap_err();
    assert_eq!(
        max.to_string(),
        "max of an empty tensor of shape (3×0) has no value"
    );
}
