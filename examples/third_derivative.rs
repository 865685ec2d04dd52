//! A third derivative through the engine's API alone, without a session:
//! build `y = tanh(x)` at x = 0.5, take `grad` three times (each derivative is
//! a graph of nodes, differentiated again), and check the value against the
//! closed form `tanh'''(x) = (1 − tanh²x)(6·tanh²x − 2)`.
//!
//! Run with `cargo run --example third_derivative`.

use gradcalc::engine::{Graph, Op};

/// The most nodes one derivative may append (the engine refuses past it).
const BUDGET: usize = 10_000;

fn main() {
    let mut graph = Graph::new();
    let x = graph.leaf(0.5);
    let y = graph.apply(Op::Tanh, &[x]).expect("tanh takes one input");

    let mut derivative = y;
    for order in 1..=3 {
        let built = graph
            .grad(derivative, &[x], BUDGET)
            .expect("a few nodes, no interrupt set");
        derivative = built.results[0];
        println!(
            "order {order}: {} ({} nodes in the graph)",
            graph.value(derivative),
            graph.len()
        );
    }

    // The closed form (mpmath, 40 digits: -0.56520928825977036086567…).
    let t = 0.5f64.tanh();
    let expected = (1.0 - t * t) * (6.0 * t * t - 2.0);
    let got = graph.value(derivative);
    assert!(
        (got - expected).abs() <= 1e-14 * expected.abs(),
        "tanh'''(0.5) = {got}, expected {expected}"
    );
    assert!((got - -0.565_209_288_259_770_4).abs() < 1e-15);
    println!("tanh'''(0.5) = {got} (closed form {expected})");
}
