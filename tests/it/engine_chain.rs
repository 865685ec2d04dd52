//! Deep-graph safety: the W1 chain `y = y*1.0001 + 0.0001` from x = 0.5,
//! 4 nodes per step (two constants, `*`, `+`), sorted and differentiated on the
//! default test thread's stack. Expected values from docs/benchmarks.md (W1),
//! where micrograd, torch and autograd agree.

use gradcalc::engine::{ArityError, Graph, NodeId, Op};

use crate::util::assert_close;

/// Builds the chain of `steps` steps; returns the graph, x and y.
fn chain(steps: usize) -> Result<(Graph, NodeId, NodeId), ArityError> {
    let mut g = Graph::with_capacity(4 * steps + 1);
    let x = g.leaf(0.5);
    let mut y = x;
    for _ in 0..steps {
        let scale = g.constant(1.0001);
        let scaled = g.apply(Op::Mul, &[y, scale])?;
        let shift = g.constant(0.0001);
        y = g.apply(Op::Add, &[scaled, shift])?;
    }
    Ok((g, x, y))
}

fn check(steps: usize, y_expected: f64, dydx_expected: f64) -> Result<(), ArityError> {
    let (g, x, y) = chain(steps)?;
    assert_eq!(g.len(), 4 * steps + 1);
    assert_close(g.value(y), y_expected, 1e-12);
    let order = g.topo_order(y);
    assert_eq!(order.len(), 4 * steps + 1, "every node is reachable, once");
    assert_eq!((order[0], order[order.len() - 1]), (y, x));
    let grads = g.backward(&order);
    assert_close(grads[x], dydx_expected, 1e-12);
    assert_eq!(grads[y], 1.0);
    Ok(())
}

#[test]
fn chain_of_1000_steps() -> Result<(), ArityError> {
    check(1_000, 0.6577480889048293, 1.1051653926032188)
}

#[test]
fn chain_of_100_000_steps_does_not_overflow_the_stack() -> Result<(), ArityError> {
    check(100_000, 33022.184072811644, 22015.45604852786)
}

#[test]
fn traced_chain_of_100_000_steps() -> Result<(), ArityError> {
    let (g, x, y) = chain(100_000)?;
    let (grads, steps) = g.backward_traced(&g.topo_order(y));
    assert_eq!(steps.len(), g.len());
    assert_close(grads[x], 22015.45604852786, 1e-12);
    // The order ends with the first step: [.., add, shift, mul, scale, x]; x's
    // only use is as the first operand of that mul.
    let mul = &steps[steps.len() - 3];
    assert_eq!(g.op(mul.node), Op::Mul);
    let last_use = &mul.contributions[0];
    assert_eq!(
        (last_use.input, last_use.use_number, last_use.use_count),
        (x, 1, 1)
    );
    Ok(())
}
