//! The library API (`Tape`, `Var`) on the standard workloads of
//! docs/benchmarks.md: exact outputs and gradient sums, node counts, memory per
//! node, and W1 at N = 1 000 000 (4 000 001 nodes, depth 2 000 001) built,
//! sorted, backpropagated, traced in summary and dropped on a test thread's stack.

#[path = "../../examples/common/workloads.rs"]
pub(crate) mod workloads;

use gradcalc::engine::{Graph, Op, Tape};
use workloads::W4Data;

use crate::util::assert_close;

#[track_caller]
fn check(name: &str, n: usize) {
    let (nodes, out, gsum) = workloads::expected(name, n).expect("a tabulated size");
    let tape = Tape::new();
    let data = W4Data::new(if name == "W4" { n } else { 1 });
    let built = workloads::build(&tape, name, n, &data);
    assert_eq!(tape.len(), nodes, "{name} {n}: nodes");
    assert_eq!(built.output.value(), out, "{name} {n}: output");
    let grads = tape.backward(built.output);
    let sum: f64 = built.leaves.iter().map(|&leaf| grads[leaf]).sum();
    assert!(
        workloads::close(sum, gsum),
        "{name} {n}: got {sum:?}, expected {gsum:?}"
    );
    assert!(tape.memory_bytes() as f64 / tape.len() as f64 <= 40.0);
}

#[test]
fn w1_chain() {
    check("W1", 1_000);
    check("W1", 10_000);
}

#[test]
fn w2_wide_sum() {
    check("W2", 1_000);
    check("W2", 10_000);
}

#[test]
fn w3_fan_out() {
    check("W3", 1_000);
    check("W3", 10_000);
}

#[test]
fn w4_mlp_batch() {
    check("W4", 14);
}

#[test]
fn moons_data_and_parameters_follow_the_recipe() {
    let (points, labels) = workloads::moons(2);
    assert_eq!(points[0], [-0.7561405045385357, 0.6813146793158157]);
    assert_eq!(labels, [1.0, -1.0]);
    let params = workloads::initial_parameters();
    assert_eq!(params.len(), workloads::PARAMETERS);
    assert_eq!(params[0], 0.42702218288430505);
    assert_eq!(params[2], 0.0, "the first bias");
}

#[test]
fn operators_with_numbers_on_either_side() {
    let tape = Tape::new();
    let x = tape.var(2.0);
    let y = 1.0 - x / 4.0 + 3.0 * x - (2.0 / x) * (x - 1.0) + -x;
    // 1 - x/4 + 3x - 2(x-1)/x - x at x = 2
    assert_eq!(y.value(), 1.0 - 0.5 + 6.0 - 1.0 - 2.0);
    // d/dx = -1/4 + 3 - 2/x^2 - 1
    assert_eq!(tape.backward(y)[x], -0.25 + 3.0 - 0.5 - 1.0);
    let mut acc = x;
    acc += 1.0;
    acc *= x;
    acc -= 2.0;
    acc /= 2.0;
    assert_eq!(acc.value(), (3.0 * 2.0 - 2.0) / 2.0);
    assert_eq!(x.powv(tape.var(3.0)).value(), 8.0);
    assert_eq!(x.max(tape.var(5.0)).op(), Op::Max);
}

#[test]
fn every_unary_op_of_the_table_has_a_method_that_builds_it() {
    let tape = Tape::new();
    let x = tape.var(0.5);
    let built = [
        x.exp(),
        x.ln(),
        x.log2(),
        x.log10(),
        x.sqrt(),
        x.cbrt(),
        x.abs(),
        x.sin(),
        x.cos(),
        x.tan(),
        x.asin(),
        x.acos(),
        x.atan(),
        x.sinh(),
        x.cosh(),
        x.tanh(),
        x.sech(),
        x.asinh(),
        x.acosh(),
        x.atanh(),
        x.sigmoid(),
        x.relu(),
        x.softplus(),
        x.gelu(),
        x.normcdf(),
        x.normpdf(),
        x.floor(),
        x.ceil(),
        x.round(),
        x.sign(),
        x.detach(),
        -x,
    ];
    let mut ops: Vec<Op> = built.iter().map(|v| v.op()).collect();
    ops.extend([x.powf(2.0).op(), x.min(x).op(), x.max(x).op(), (x + x).op()]);
    ops.extend([(x - x).op(), (x * x).op(), (x / x).op()]);
    for info in Op::table().iter().filter(|info| !info.op.is_leaf()) {
        assert!(ops.contains(&info.op), "no method builds {:?}", info.op);
    }
}

#[test]
fn parameters_outlive_truncated_steps() {
    let tape = Tape::new();
    let w = tape.var(0.0);
    let mark = tape.len();
    for _ in 0..200 {
        let loss = (w - 3.0).powf(2.0);
        let g = tape.backward(loss)[w];
        tape.truncate(mark);
        tape.set_value(w, w.value() - 0.1 * g);
    }
    assert!((w.value() - 3.0).abs() < 1e-9);
    assert_eq!(tape.len(), 1);
}

#[test]
fn w1_at_a_million_steps_builds_sorts_backpropagates_and_drops() {
    let n = 1_000_000;
    let tape = Tape::with_capacity(4 * n + 1);
    let built = workloads::w1(&tape, n);
    assert_eq!(tape.len(), 4 * n + 1);
    let order = tape.topo_order(built.output);
    assert_eq!(order.len(), 4 * n + 1);
    let grads = tape.backward(built.output);
    let x = built.leaves[0];
    // dy/dx = 1.0001^n, as the product of the chain computes it.
    let expected = 1.0001f64.powi(n as i32);
    assert_close(grads[x], expected, 1e-9);
    drop(grads);
    // A summary trace of the first few steps costs no more than the gradients.
    let graph: Graph = tape.into_graph();
    let (_, steps) = graph.backward_traced_where(&order, |i| i < 5);
    assert_eq!(steps.len(), 5);
    drop(graph);
}

/// The engine alone, without a session: `grad` three times over
/// `y = tanh(x)·sin(x)` at x = 0.5. d³y/dx³ = −3.7212953093834695080 (mpmath
/// 40 digits: `mpmath.diff(lambda x: tanh(x)*sin(x), 0.5, 3)`); a fourth
/// order past a budget of 50 nodes is refused and leaves the graph as it was;
/// an interrupt that asks to stop stops the build.
#[test]
fn a_library_user_takes_a_third_derivative_with_the_engine_alone() {
    use gradcalc::engine::GradError;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let mut g = Graph::new();
    let x = g.leaf(0.5);
    let t = g.apply(Op::Tanh, &[x]).unwrap();
    let s = g.apply(Op::Sin, &[x]).unwrap();
    let y = g.apply(Op::Mul, &[t, s]).unwrap();
    let mut d = y;
    for _ in 0..3 {
        d = g.grad(d, &[x], 10_000).unwrap().results[0];
    }
    assert_close(g.value(d), -3.721_295_309_383_469_5, 1e-14);

    let before = g.len();
    assert_eq!(g.grad(d, &[x], 50), Err(GradError::TooLarge { limit: 50 }));
    assert_eq!(g.len(), before);

    let stop = Arc::new(AtomicBool::new(true));
    let flag = Arc::clone(&stop);
    g.set_interrupt(Arc::new(move || flag.load(Ordering::Relaxed)));
    assert_eq!(g.grad(d, &[x], 10_000), Err(GradError::Interrupted));
    assert_eq!(g.len(), before);
    stop.store(false, Ordering::Relaxed);
    assert!(g.grad(d, &[x], 10_000).is_ok());
}
