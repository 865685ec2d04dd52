//! Benchmarks of the tensor engine (docs/benchmarks.md, "Vectors and
//! matrices"): forward and backward of the workloads that
//! scripts/bench_tensor.py times in numpy (float64), on the same inputs.
//!
//! ```sh
//! cargo run --release --example tensor_bench            # every workload, one JSON line each
//! cargo run --release --example tensor_bench -- matmul  # one
//! python3 scripts/bench_tensor.py --rust target/release/examples/tensor_bench
//! ```
//!
//! Each line: `workload`, `forward_ms` and `backward_ms` (medians of the
//! repetitions; forward builds the nodes on leaves made once, as a session
//! does after `:=`, and backward is [`TensorGraph::backward`] from the
//! loss), `total_ms` (the median of their sums), `loss` (the forward value)
//! and `gsum` (the sum of every element of every parameter's gradient), for
//! the Python script to compare with numpy's.
//!
//! Element `e` (row-major) of input `k` is `0.5·sin(1 + k + 0.37·e)`, in
//! both programs.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use gradcalc::engine::Op;
use gradcalc::engine::tensor::{Shape, Tensor, TensorError, TensorGraph, TensorId, TensorOp};
use serde_json::json;

/// The workloads, by name, with their sizes in words.
const WORKLOADS: [(&str, &str); 6] = [
    ("matmul", "L = sum(A @ B), A, B 256×256"),
    ("elementwise", "L = sum(x ⊙ y + x), x, y 256×256"),
    ("tanh", "L = sum(tanh(x)), x 256×256"),
    ("reductions", "L = max(sum(X, 1)) + mean(X), X 256×256"),
    (
        "softmax",
        "L = sum(softmax(X) ⊙ R), X 256×256 (rows), R constant",
    ),
    (
        "mlp",
        "2-layer MLP step: Z = tanh(X @ W1 + b1) @ W2 + b2, softmax cross-entropy mean, X 256×64, W1 64×128, W2 128×10",
    ),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let names: Vec<&str> = match args.as_slice() {
        [] => WORKLOADS.iter().map(|(name, _)| *name).collect(),
        [name] if WORKLOADS.iter().any(|(n, _)| n == name) => vec![name.as_str()],
        _ => {
            let names: Vec<&str> = WORKLOADS.iter().map(|(n, _)| *n).collect();
            eprintln!("usage: tensor_bench [{}]", names.join("|"));
            return ExitCode::from(2);
        }
    };
    for name in names {
        println!("{}", bench(name));
    }
    ExitCode::SUCCESS
}

/// Input `k` of `shape`: element `e` is `0.5·sin(1 + k + 0.37·e)`.
fn input(k: usize, shape: Shape) -> Tensor {
    let data = (0..shape.len())
        .map(|e| 0.5 * (1.0 + k as f64 + 0.37 * e as f64).sin())
        .collect();
    Tensor::new(shape, data)
}

/// The workload's leaves: (value, whether it is a parameter).
fn leaves(name: &str) -> Vec<(Tensor, bool)> {
    let square = Shape::matrix(256, 256);
    match name {
        "matmul" | "elementwise" => vec![(input(0, square), true), (input(1, square), true)],
        "tanh" | "reductions" => vec![(input(0, square), true)],
        "softmax" => vec![(input(0, square), true), (input(1, square), false)],
        "mlp" => {
            // Y: one-hot rows, class i mod 10.
            let mut y = Tensor::zeros(Shape::matrix(256, 10));
            for i in 0..256 {
                y.data_mut()[i * 10 + i % 10] = 1.0;
            }
            vec![
                (input(0, Shape::matrix(256, 64)), false),
                (input(1, Shape::matrix(64, 128)), true),
                (input(2, Shape::vector(128)), true),
                (input(3, Shape::matrix(128, 10)), true),
                (input(4, Shape::vector(10)), true),
                (y, false),
            ]
        }
        _ => unreachable!("a workload of WORKLOADS"),
    }
}

/// Appends the workload's nodes on the leaves `p`; returns the loss.
fn forward(g: &mut TensorGraph, name: &str, p: &[TensorId]) -> Result<TensorId, TensorError> {
    let ew = TensorOp::Elementwise;
    match name {
        "matmul" => {
            let c = g.apply(TensorOp::MatMul, &[p[0], p[1]])?;
            g.apply(TensorOp::Sum, &[c])
        }
        "elementwise" => {
            let xy = g.apply(ew(Op::Mul), &[p[0], p[1]])?;
            let u = g.apply(ew(Op::Add), &[xy, p[0]])?;
            g.apply(TensorOp::Sum, &[u])
        }
        "tanh" => {
            let t = g.apply(ew(Op::Tanh), &[p[0]])?;
            g.apply(TensorOp::Sum, &[t])
        }
        "reductions" => {
            let rows = g.apply(TensorOp::SumAxis(1), &[p[0]])?;
            let max = g.apply(TensorOp::Max, &[rows])?;
            let mean = g.apply(TensorOp::Mean, &[p[0]])?;
            g.apply(ew(Op::Add), &[max, mean])
        }
        "softmax" => {
            let s = g.apply(TensorOp::Softmax, &[p[0]])?;
            let w = g.apply(ew(Op::Mul), &[s, p[1]])?;
            g.apply(TensorOp::Sum, &[w])
        }
        "mlp" => {
            let (x, w1, b1, w2, b2, y) = (p[0], p[1], p[2], p[3], p[4], p[5]);
            let a = g.apply(TensorOp::MatMul, &[x, w1])?;
            let a = g.apply(ew(Op::Add), &[a, b1])?;
            let h = g.apply(ew(Op::Tanh), &[a])?;
            let z = g.apply(TensorOp::MatMul, &[h, w2])?;
            let z = g.apply(ew(Op::Add), &[z, b2])?;
            // Cross-entropy: mean over rows of logsumexp(z) − z·y.
            let lse = g.apply(TensorOp::LogSumExp, &[z])?;
            let lse = g.apply(TensorOp::Sum, &[lse])?;
            let zy = g.apply(ew(Op::Mul), &[z, y])?;
            let zy = g.apply(TensorOp::Sum, &[zy])?;
            let total = g.apply(ew(Op::Sub), &[lse, zy])?;
            let batch = g.constant(Tensor::scalar(256.0))?;
            g.apply(ew(Op::Div), &[total, batch])
        }
        _ => unreachable!("a workload of WORKLOADS"),
    }
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn bench(name: &str) -> serde_json::Value {
    let mut g = TensorGraph::new();
    let inputs = leaves(name);
    let ids: Vec<TensorId> = inputs
        .iter()
        .map(|(t, parameter)| {
            let t = t.clone();
            if *parameter { g.leaf(t) } else { g.constant(t) }.expect("within the budget")
        })
        .collect();
    let base = g.len();
    let (mut forwards, mut backwards, mut totals) = (vec![], vec![], vec![]);
    let (mut loss, mut gsum) = (0.0, 0.0);
    // One untimed warm-up round, then timed ones for about a second.
    let budget = Instant::now();
    let mut round = 0;
    while round < 5 || (budget.elapsed().as_secs_f64() < 1.0 && round < 1001) {
        g.truncate(base);
        let start = Instant::now();
        let l = forward(&mut g, name, &ids).expect("the workload's shapes agree");
        let t_forward = ms(start);
        let start = Instant::now();
        let grads = black_box(g.backward(l));
        let t_backward = ms(start);
        loss = g.value(l).data()[0];
        gsum = ids
            .iter()
            .zip(&inputs)
            .filter(|(_, (_, parameter))| *parameter)
            .filter_map(|(&id, _)| grads.get(id))
            .map(|t| t.data().iter().sum::<f64>())
            .sum();
        if round > 0 {
            forwards.push(t_forward);
            backwards.push(t_backward);
            totals.push(t_forward + t_backward);
        }
        round += 1;
    }
    let what = WORKLOADS.iter().find(|(n, _)| *n == name).map(|(_, w)| *w);
    json!({
        "workload": name,
        "what": what,
        "reps": totals.len(),
        "forward_ms": median(forwards),
        "backward_ms": median(backwards),
        "total_ms": median(totals),
        "loss": loss,
        "gsum": gsum,
    })
}
