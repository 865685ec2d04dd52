//! Benchmarks of the tensor engine (docs/benchmarks.md, "Vectors and
//! matrices"): forward and backward of the workloads that
//! scripts/bench_tensor.py times in numpy (float64), on the same inputs.
//!
//! ```sh
//! cargo run --release --example tensor_bench            # every workload, one JSON line each
//! cargo run --release --example tensor_bench -- matmul  # one
//! cargo run --release --example tensor_bench -- --size 1024 matmul  # at 1024×1024
//! python3 scripts/bench_tensor.py --rust target/release/examples/tensor_bench
//! python3 scripts/bench_tensor.py --rust target/release/examples/tensor_bench \
//!     --size 256,512,1024,2048 --rounds 3 --memory   # the figures of docs/benchmarks.md
//! ```
//!
//! `--size N` sets the side of the square inputs of every workload but the
//! MLP step (256 unless given).
//!
//! Each line: `workload`, `size`, `forward_ms` and `backward_ms` (medians of
//! the repetitions, in CPU time of the thread; forward builds the nodes on leaves made once, as a session
//! does after `:=`, and backward is [`TensorGraph::backward_keeping`]
//! from the loss, keeping the leaves' gradients as a training step does), `total_ms` (the median of their sums), `loss` (the forward value)
//! and `gsum` (the sum of every element of every parameter's gradient), for
//! the Python script to compare with numpy's.
//!
//! Element `e` (row-major) of input `k` is `0.5·sin(1 + k + 0.37·e)`, in
//! both programs.

use std::hint::black_box;
use std::process::ExitCode;

use gradcalc::engine::Op;
use gradcalc::engine::tensor::{Shape, Tensor, TensorError, TensorGraph, TensorId, TensorOp};
use serde_json::json;

/// Large buffers (tensors of 4 MiB and more) on huge pages: fewer page
/// faults, the same bytes (`gradcalc::hugepages`).
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: gradcalc::hugepages::HugePages = gradcalc::hugepages::HugePages;

/// The workloads, by name, with their sizes in words.
const WORKLOADS: [(&str, &str); 6] = [
    ("matmul", "L = sum(A @ B), A, B N×N"),
    ("elementwise", "L = sum(x ⊙ y + x), x, y N×N"),
    ("tanh", "L = sum(tanh(x)), x N×N"),
    ("reductions", "L = max(sum(X, 1)) + mean(X), X N×N"),
    (
        "softmax",
        "L = sum(softmax(X) ⊙ R), X N×N (rows), R constant",
    ),
    (
        "mlp",
        "2-layer MLP step: Z = tanh(X @ W1 + b1) @ W2 + b2, softmax cross-entropy mean, X 256×64, W1 64×128, W2 128×10",
    ),
];

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut size = 256;
    if let Some(at) = args.iter().position(|a| a == "--size") {
        match args.get(at + 1).and_then(|n| n.parse().ok()) {
            Some(n) => size = n,
            None => {
                eprintln!("usage: tensor_bench [--size N] [workload]");
                return ExitCode::from(2);
            }
        }
        args.drain(at..at + 2);
    }
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
        println!("{}", bench(name, size));
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
fn leaves(name: &str, size: usize) -> Vec<(Tensor, bool)> {
    let square = Shape::matrix(size, size);
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

/// This thread's CPU time in ms: on a loaded machine a round's wall time
/// also holds the time other processes ran, its CPU time does not.
fn cpu_ms() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn bench(name: &str, size: usize) -> serde_json::Value {
    let mut g = TensorGraph::new();
    // The inputs move into the graph: no second copy beside it (the peak
    // memory is compared with numpy's).
    let inputs = leaves(name, size);
    let parameters: Vec<bool> = inputs.iter().map(|(_, parameter)| *parameter).collect();
    let ids: Vec<TensorId> = inputs
        .into_iter()
        .map(|(t, parameter)| {
            if parameter { g.leaf(t) } else { g.constant(t) }.expect("within the budget")
        })
        .collect();
    let base = g.len();
    let (mut forwards, mut backwards, mut totals) = (vec![], vec![], vec![]);
    let (mut loss, mut gsum) = (0.0, 0.0);
    // One untimed warm-up round, then timed ones for about a second of CPU.
    let budget = cpu_ms();
    let mut round = 0;
    while round < 5 || (cpu_ms() - budget < 1000.0 && round < 1001) {
        g.truncate(base);
        let start = cpu_ms();
        let l = forward(&mut g, name, &ids).expect("the workload's shapes agree");
        let t_forward = cpu_ms() - start;
        let start = cpu_ms();
        // The parameters' gradients, as a training step keeps them.
        let grads = black_box(g.backward_keeping(l, &[]));
        let t_backward = cpu_ms() - start;
        loss = g.value(l).data()[0];
        gsum = ids
            .iter()
            .zip(&parameters)
            .filter(|(_, parameter)| **parameter)
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
        "size": size,
        "what": what,
        "reps": totals.len(),
        "forward_ms": median(forwards),
        "backward_ms": median(backwards),
        "total_ms": median(totals),
        "loss": loss,
        "gsum": gsum,
    })
}
