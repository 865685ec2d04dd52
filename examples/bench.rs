//! Benchmarks of the standard workloads (docs/benchmarks.md) through the library
//! API, side by side with a reference: a flat struct-of-arrays tape written
//! here (append in evaluation order, iterative DFS sort from the output with a
//! visited bitset, one reverse sweep), in the same run.
//!
//! ```sh
//! cargo run --release --example bench -- W1 100000     # one JSON line
//! cargo run --release --example bench -- W4 153
//! cargo run --release --example bench -- all          # W1-W3 at 1e5, W4 at B = 153
//! cargo run --release --example bench -- W1 100000 --reps 21
//! ```
//!
//! Each line: `workload, n, nodes, build_ms, topo_ms, backward_ms` (median of
//! the repetitions; `backward_ms` includes the reverse topological sort),
//! `bytes_per_node` (the graph's heap bytes over its nodes), `out`, `gsum` (the
//! sum of the gradients of the workload's leaves), `ok` (both equal to
//! workloads.md where it tabulates the size), and under `reference` the same
//! figures for the flat tape with the ratios gradcalc / reference.

#[path = "common/workloads.rs"]
mod workloads;

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use gradcalc::engine::{Graph, Tape};
use serde_json::json;
use workloads::W4Data;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut reps: Option<usize> = None;
    let mut positional = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "--reps" {
            reps = iter.next().and_then(|r| r.parse().ok());
        } else {
            positional.push(arg.as_str());
        }
    }
    let runs: Vec<(String, usize)> = match positional.as_slice() {
        ["all"] => vec![
            ("W1".into(), 100_000),
            ("W2".into(), 100_000),
            ("W3".into(), 100_000),
            ("W4".into(), 153),
        ],
        [name, n] => match n.replace('_', "").parse() {
            Ok(n) if ["W1", "W2", "W3", "W4"].contains(name) && n > 0 => {
                vec![(name.to_string(), n)]
            }
            _ => return usage(),
        },
        _ => return usage(),
    };
    let mut ok = true;
    for (name, n) in runs {
        let line = bench(&name, n, reps);
        ok &= line["ok"].as_bool() != Some(false);
        println!("{line}");
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: bench (W1|W2|W3|W4) N [--reps R]   |   bench all [--reps R]");
    ExitCode::from(2)
}

/// Milliseconds since `start`.
fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn bench(name: &str, n: usize, reps: Option<usize>) -> serde_json::Value {
    let data = W4Data::new(if name == "W4" { n } else { 1 });
    let expected_nodes = workloads::expected_nodes(name, n);
    let reps = reps.unwrap_or((20_000_000 / expected_nodes).clamp(3, 31));

    // gradcalc: the tape is sized for the workload and reused across
    // repetitions (cleared, capacity kept), as the reference's is.
    let tape = Tape::with_capacity(expected_nodes);
    let mut reference = RefTape::default();
    let (mut build, mut topo, mut backward) = (vec![], vec![], vec![]);
    let (mut ref_build, mut ref_topo, mut ref_backward) = (vec![], vec![], vec![]);
    let (mut out, mut gsum, mut nodes, mut bytes) = (0.0, 0.0, 0, 0);
    let (mut ref_out, mut ref_gsum, mut ref_nodes) = (0.0, 0.0, 0);
    // One untimed warm-up round, then `reps` timed ones, alternating engines.
    for round in 0..=reps {
        tape.clear();
        let start = Instant::now();
        let built = workloads::build(&tape, name, n, &data);
        let t_build = ms(start);
        let start = Instant::now();
        black_box(tape.topo_order(built.output));
        let t_topo = ms(start);
        let start = Instant::now();
        let grads = tape.backward(built.output);
        let t_backward = ms(start);
        out = built.output.value();
        gsum = built.leaves.iter().map(|&leaf| grads[leaf]).sum();
        nodes = tape.len();
        bytes = tape.memory_bytes();
        drop(grads);

        reference.clear();
        let start = Instant::now();
        let (r_out, r_leaves) = reference.build(name, n, &data);
        let t_ref_build = ms(start);
        let start = Instant::now();
        black_box(reference.topo_order(r_out));
        let t_ref_topo = ms(start);
        let start = Instant::now();
        let order = reference.topo_order(r_out);
        let ref_grads = reference.backward(&order);
        let t_ref_backward = ms(start);
        ref_out = reference.value[r_out as usize];
        ref_gsum = r_leaves.iter().map(|&l| ref_grads[l as usize]).sum();
        ref_nodes = reference.len();

        if round > 0 {
            build.push(t_build);
            topo.push(t_topo);
            backward.push(t_backward);
            ref_build.push(t_ref_build);
            ref_topo.push(t_ref_topo);
            ref_backward.push(t_ref_backward);
        }
    }
    let (build, topo, backward) = (median(build), median(topo), median(backward));
    let (ref_build, ref_topo, ref_backward) =
        (median(ref_build), median(ref_topo), median(ref_backward));
    let ok = match workloads::expected(name, n) {
        Some((e_nodes, e_out, e_gsum)) => {
            nodes == e_nodes && workloads::close(out, e_out) && workloads::close(gsum, e_gsum)
        }
        None => nodes == expected_nodes,
    };
    let agree = ref_nodes == nodes && ref_out == out && workloads::close(ref_gsum, gsum);
    json!({
        "workload": name,
        "n": n,
        "nodes": nodes,
        "build_ms": round3(build),
        "topo_ms": round3(topo),
        "backward_ms": round3(backward),
        "bytes_per_node": round3(bytes as f64 / nodes as f64),
        "out": out,
        "gsum": gsum,
        "ok": ok && agree,
        "reps": reps,
        "node_bytes": Graph::node_bytes(),
        "reference": {
            "build_ms": round3(ref_build),
            "topo_ms": round3(ref_topo),
            "backward_ms": round3(ref_backward),
            "bytes_per_node": RefTape::BYTES_PER_NODE,
            "build_ratio": round3(build / ref_build),
            "backward_ratio": round3(backward / ref_backward),
        },
    })
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

// ---------------------------------------------------------------------------
// The reference: a flat struct-of-arrays tape with just the ops W1-W4 use.

const INPUT: u8 = 0;
const CONST: u8 = 1;
const ADD: u8 = 2;
const MUL: u8 = 3;
const RELU: u8 = 4;

#[derive(Default)]
struct RefTape {
    op: Vec<u8>,
    lhs: Vec<u32>,
    rhs: Vec<u32>,
    value: Vec<f64>,
}

impl RefTape {
    /// op (1) + two inputs (8) + value (8).
    const BYTES_PER_NODE: usize = 17;

    fn clear(&mut self) {
        self.op.clear();
        self.lhs.clear();
        self.rhs.clear();
        self.value.clear();
    }

    fn len(&self) -> usize {
        self.op.len()
    }

    fn push(&mut self, op: u8, lhs: u32, rhs: u32, value: f64) -> u32 {
        self.op.push(op);
        self.lhs.push(lhs);
        self.rhs.push(rhs);
        self.value.push(value);
        (self.op.len() - 1) as u32
    }

    fn input(&mut self, v: f64) -> u32 {
        self.push(INPUT, 0, 0, v)
    }

    fn constant(&mut self, v: f64) -> u32 {
        self.push(CONST, 0, 0, v)
    }

    fn add(&mut self, a: u32, b: u32) -> u32 {
        let v = self.value[a as usize] + self.value[b as usize];
        self.push(ADD, a, b, v)
    }

    fn mul(&mut self, a: u32, b: u32) -> u32 {
        let v = self.value[a as usize] * self.value[b as usize];
        self.push(MUL, a, b, v)
    }

    fn relu(&mut self, a: u32) -> u32 {
        let x = self.value[a as usize];
        self.push(RELU, a, 0, if x > 0.0 { x } else { 0.0 })
    }

    fn arity(op: u8) -> usize {
        match op {
            INPUT | CONST => 0,
            RELU => 1,
            _ => 2,
        }
    }

    /// Iterative DFS from `output` with a visited bitset; reverse postorder.
    fn topo_order(&self, output: u32) -> Vec<u32> {
        let mut visited = vec![0u64; self.len().div_ceil(64)];
        let mut order = Vec::new();
        let mut stack: Vec<(u32, u8)> = vec![(output, 0)];
        visited[output as usize / 64] |= 1 << (output % 64);
        while let Some(top) = stack.last_mut() {
            let (node, next) = *top;
            let i = node as usize;
            if (next as usize) < Self::arity(self.op[i]) {
                top.1 += 1;
                let input = if next == 0 { self.lhs[i] } else { self.rhs[i] };
                let (w, bit) = (input as usize / 64, 1u64 << (input % 64));
                if visited[w] & bit == 0 {
                    visited[w] |= bit;
                    stack.push((input, 0));
                }
            } else {
                stack.pop();
                order.push(node);
            }
        }
        order.reverse();
        order
    }

    /// One sweep over `order` (output first).
    fn backward(&self, order: &[u32]) -> Vec<f64> {
        let mut grad = vec![0.0; self.len()];
        grad[order[0] as usize] = 1.0;
        for &node in order {
            let i = node as usize;
            let g = grad[i];
            let (a, b) = (self.lhs[i] as usize, self.rhs[i] as usize);
            match self.op[i] {
                ADD => {
                    grad[a] += g;
                    grad[b] += g;
                }
                MUL => {
                    grad[a] += g * self.value[b];
                    grad[b] += g * self.value[a];
                }
                RELU => grad[a] += if self.value[a] > 0.0 { g } else { 0.0 },
                _ => {}
            }
        }
        grad
    }

    /// The same workloads as `workloads::build`, op for op; (output, leaves).
    fn build(&mut self, name: &str, n: usize, data: &W4Data) -> (u32, Vec<u32>) {
        match name {
            "W1" => {
                let x = self.input(0.5);
                let mut y = x;
                for _ in 0..n {
                    let c = self.constant(1.0001);
                    let m = self.mul(y, c);
                    let d = self.constant(0.0001);
                    y = self.add(m, d);
                }
                (y, vec![x])
            }
            "W2" => {
                let xs: Vec<u32> = (0..n)
                    .map(|i| self.input(0.5 + (i % 100) as f64 / 100.0))
                    .collect();
                let mut y = self.mul(xs[0], xs[0]);
                for &x in &xs[1..] {
                    let sq = self.mul(x, x);
                    y = self.add(y, sq);
                }
                (y, xs)
            }
            "W3" => {
                let x = self.input(0.5);
                let mut y = x;
                for _ in 0..n {
                    let m = self.mul(y, x);
                    y = self.add(m, x);
                }
                (y, vec![x])
            }
            _ => self.mlp(data),
        }
    }

    fn mlp(&mut self, data: &W4Data) -> (u32, Vec<u32>) {
        let params: Vec<u32> = data.params.iter().map(|&p| self.input(p)).collect();
        let mut losses: Option<u32> = None;
        for (&[x0, x1], &y) in data.points.iter().zip(&data.labels) {
            let mut h = vec![self.input(x0), self.input(x1)];
            let mut idx = 0;
            for (layer, (nin, nout)) in workloads::LAYERS.into_iter().enumerate() {
                let mut out = Vec::with_capacity(nout);
                for _ in 0..nout {
                    let mut act = params[idx + nin];
                    for (j, &x) in h.iter().enumerate() {
                        let m = self.mul(params[idx + j], x);
                        act = self.add(act, m);
                    }
                    idx += nin + 1;
                    if layer < workloads::LAYERS.len() - 1 {
                        act = self.relu(act);
                    }
                    out.push(act);
                }
                h = out;
            }
            let minus_y = self.constant(-y);
            let m = self.mul(h[0], minus_y);
            let one = self.constant(1.0);
            let a = self.add(m, one);
            let hinge = self.relu(a);
            losses = Some(match losses {
                None => hinge,
                Some(sum) => self.add(sum, hinge),
            });
        }
        let scale = self.constant(1.0 / data.points.len() as f64);
        let data_loss = self.mul(losses.expect("points"), scale);
        let mut reg = self.mul(params[0], params[0]);
        for &p in &params[1..] {
            let sq = self.mul(p, p);
            reg = self.add(reg, sq);
        }
        let alpha = self.constant(1e-4);
        let reg = self.mul(reg, alpha);
        (self.add(data_loss, reg), params)
    }
}
