//! Times the layered layout behind `:svg` on 500-node graphs of several shapes
//! and prints one line per shape: nodes, edges, dummy-free crossings left, the
//! drawing's extent, and the time (best of 5).
//!
//! Run with `cargo run --release --example layout_bench`.
//!
//! The shapes are the ones that took exponential time with the layout crate used
//! before: a residual chain `h = h + tanh(w·h)`, a Fibonacci ladder
//! `a = a₋₁ + a₋₂`, one node feeding 100 others, a wide sum of many products,
//! and a plain chain.

use std::time::{Duration, Instant};

use gradcalc::render::layout::{Edge, Size, Spacing, layout};

/// Value boxes and op ellipses, as `:svg` sizes them.
const VALUE: Size = Size {
    along: 140.0,
    across: 86.0,
};
const OP: Size = Size {
    along: 50.0,
    across: 40.0,
};
const SPACING: Spacing = Spacing {
    rank: 34.0,
    node: 18.0,
    edge: 12.0,
};

/// A graph under construction: values and ops alternate as in a picture.
#[derive(Default)]
struct Builder {
    sizes: Vec<Size>,
    edges: Vec<Edge>,
}

impl Builder {
    fn leaf(&mut self) -> usize {
        self.sizes.push(VALUE);
        self.sizes.len() - 1
    }

    /// An op reading `inputs` and the value box it computes.
    fn op(&mut self, inputs: &[usize]) -> usize {
        self.sizes.push(OP);
        let op = self.sizes.len() - 1;
        for &input in inputs {
            self.edges.push(Edge {
                from: input,
                to: op,
                label: Size {
                    along: 40.0,
                    across: 22.0,
                },
            });
        }
        let value = self.leaf();
        self.edges.push(Edge {
            from: op,
            to: value,
            label: Size::NONE,
        });
        value
    }
}

fn residual(nodes: usize) -> Builder {
    let mut g = Builder::default();
    let w = g.leaf();
    let mut h = g.leaf();
    while g.sizes.len() + 6 <= nodes {
        let product = g.op(&[w, h]);
        let tanh = g.op(&[product]);
        h = g.op(&[h, tanh]);
    }
    g
}

fn fibonacci(nodes: usize) -> Builder {
    let mut g = Builder::default();
    let (mut a, mut b) = (g.leaf(), g.leaf());
    while g.sizes.len() + 2 <= nodes {
        let c = g.op(&[a, b]);
        (a, b) = (b, c);
    }
    g
}

fn fan_out(nodes: usize) -> Builder {
    let mut g = Builder::default();
    let x = g.leaf();
    let mut s = g.leaf();
    let mut readers = 0;
    while g.sizes.len() + 4 <= nodes {
        if readers < 100 {
            let product = g.op(&[x]);
            s = g.op(&[s, product]);
            readers += 1;
        } else {
            s = g.op(&[s]);
        }
    }
    g
}

fn wide(nodes: usize) -> Builder {
    let mut g = Builder::default();
    let mut terms = Vec::new();
    // Each product takes 4 nodes and its share of the sum 2 more.
    for _ in 0..nodes / 6 {
        let (a, b) = (g.leaf(), g.leaf());
        terms.push(g.op(&[a, b]));
    }
    // A balanced sum of the products, level by level.
    while terms.len() > 1 {
        let mut next = Vec::new();
        for pair in terms.chunks(2) {
            next.push(if pair.len() == 2 { g.op(pair) } else { pair[0] });
        }
        terms = next;
    }
    g
}

fn chain(nodes: usize) -> Builder {
    let mut g = Builder::default();
    let mut h = g.leaf();
    while g.sizes.len() + 2 <= nodes {
        h = g.op(&[h]);
    }
    g
}

/// A shape: builds a graph of about the given number of nodes.
type Shape = fn(usize) -> Builder;

fn main() {
    let shapes: [(&str, Shape); 5] = [
        ("residual chain", residual),
        ("Fibonacci ladder", fibonacci),
        ("fan-out 100", fan_out),
        ("wide sum", wide),
        ("chain", chain),
    ];
    for (name, build) in shapes {
        let g = build(500);
        let mut best = Duration::MAX;
        let mut result = None;
        for _ in 0..5 {
            let start = Instant::now();
            let out = layout(&g.sizes, &g.edges, SPACING);
            best = best.min(start.elapsed());
            result = Some(out);
        }
        let out = result.expect("five runs");
        println!(
            "{name:<17} {:>4} nodes {:>4} edges  {:>4} crossings  {:>6.0} × {:<6.0}  {:>8.2} ms",
            g.sizes.len(),
            g.edges.len(),
            out.crossings,
            out.extent.0,
            out.extent.1,
            best.as_secs_f64() * 1e3
        );
    }
}
