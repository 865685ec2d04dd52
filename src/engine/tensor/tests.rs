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
