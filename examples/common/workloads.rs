//! The standard workloads W1–W4 of docs/benchmarks.md, built through the
//! library API (`Tape`, `Var`), and the deterministic moons data and MLP
//! parameters (SplitMix64). Shared by `examples/bench.rs`, `examples/moons.rs`,
//! `benches/workloads.rs` and `tests/it/library.rs` through `#[path]`.

#![allow(dead_code)]

use gradcalc::engine::{Tape, Var};

/// SplitMix64, the generator of the data recipe in workloads.md.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1): the top 53 bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// `n` moons-like points with labels ±1 (even indices +1), seed 42.
pub fn moons(n: usize) -> (Vec<[f64; 2]>, Vec<f64>) {
    let mut rng = SplitMix64::new(42);
    let mut points = Vec::with_capacity(n);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let y = if i % 2 == 0 { 1.0 } else { -1.0 };
        let t = std::f64::consts::PI * rng.uniform();
        let n0 = (2.0 * rng.uniform() - 1.0) * 0.1;
        let n1 = (2.0 * rng.uniform() - 1.0) * 0.1;
        let point = if y > 0.0 {
            [t.cos() + n0, t.sin() + n1]
        } else {
            [1.0 - t.cos() + n0, 0.5 - t.sin() + n1]
        };
        points.push(point);
        labels.push(y);
    }
    (points, labels)
}

/// micrograd's `MLP(2, [16, 16, 1])`: (inputs, outputs) per layer.
pub const LAYERS: [(usize, usize); 3] = [(2, 16), (16, 16), (16, 1)];

/// The number of parameters of [`LAYERS`]: 337.
pub const PARAMETERS: usize = 16 * 3 + 16 * 17 + 17;

/// The initial parameters, seed 1337, in micrograd's order (layer by layer,
/// neuron by neuron, weights then bias): weights 2u − 1, biases 0.
pub fn initial_parameters() -> Vec<f64> {
    let mut rng = SplitMix64::new(1337);
    let mut params = Vec::with_capacity(PARAMETERS);
    for (nin, nout) in LAYERS {
        for _ in 0..nout {
            for _ in 0..nin {
                params.push(2.0 * rng.uniform() - 1.0);
            }
            params.push(0.0);
        }
    }
    params
}

/// The MLP's score for one point: ReLU on the hidden layers, linear output.
/// Each neuron is `b + w0·h0 + w1·h1 + …`, summed left to right as micrograd's
/// `sum(wi*xi for …, self.b)` does.
pub fn score<'t>(params: &[Var<'t>], inputs: [Var<'t>; 2]) -> Var<'t> {
    let mut h: Vec<Var<'t>> = inputs.to_vec();
    let mut idx = 0;
    for (layer, (nin, nout)) in LAYERS.into_iter().enumerate() {
        let mut out = Vec::with_capacity(nout);
        for _ in 0..nout {
            let mut act = params[idx + nin];
            for (j, &x) in h.iter().enumerate() {
                act += params[idx + j] * x;
            }
            idx += nin + 1;
            if layer < LAYERS.len() - 1 {
                act = act.relu();
            }
            out.push(act);
        }
        h = out;
    }
    h[0]
}

/// W4's loss on a batch: mean hinge loss plus 1e-4 times the sum of squared
/// parameters. Returns the loss and each point's score.
pub fn mlp_loss<'t>(
    tape: &'t Tape,
    params: &[Var<'t>],
    points: &[[f64; 2]],
    labels: &[f64],
) -> (Var<'t>, Vec<Var<'t>>) {
    let mut losses: Option<Var<'t>> = None;
    let mut scores = Vec::with_capacity(points.len());
    for (&[x0, x1], &y) in points.iter().zip(labels) {
        let s = score(params, [tape.var(x0), tape.var(x1)]);
        scores.push(s);
        let hinge = (s * -y + 1.0).relu();
        losses = Some(match losses {
            None => hinge,
            Some(sum) => sum + hinge,
        });
    }
    let data_loss = losses.expect("at least one point") * (1.0 / points.len() as f64);
    let mut reg = params[0] * params[0];
    for &p in &params[1..] {
        reg += p * p;
    }
    (data_loss + reg * 1e-4, scores)
}

/// One built workload: the output and the leaves whose gradients are summed.
pub struct Built<'t> {
    pub output: Var<'t>,
    pub leaves: Vec<Var<'t>>,
}

/// W1, the chain `y = y*1.0001 + 0.0001` n times from x = 0.5: 4n + 1 nodes.
pub fn w1(tape: &Tape, n: usize) -> Built<'_> {
    let x = tape.var(0.5);
    let mut y = x;
    for _ in 0..n {
        y = y * 1.0001 + 0.0001;
    }
    Built {
        output: y,
        leaves: vec![x],
    }
}

/// W2, the wide sum `x0*x0 + x1*x1 + …` of n leaves: 3n − 1 nodes.
pub fn w2(tape: &Tape, n: usize) -> Built<'_> {
    let xs: Vec<Var> = (0..n)
        .map(|i| tape.var(0.5 + (i % 100) as f64 / 100.0))
        .collect();
    let mut y = xs[0] * xs[0];
    for &x in &xs[1..] {
        y += x * x;
    }
    Built {
        output: y,
        leaves: xs,
    }
}

/// W3, the fan-out `y = y*x + x` n times from x = 0.5: 2n + 1 nodes.
pub fn w3(tape: &Tape, n: usize) -> Built<'_> {
    let x = tape.var(0.5);
    let mut y = x;
    for _ in 0..n {
        y = y * x + x;
    }
    Built {
        output: y,
        leaves: vec![x],
    }
}

/// Builds workload `name` ("W1".."W4") of size `n`; for W4, n is the batch
/// size B (648B + 1014 nodes) and `w4_data` holds its points and parameters.
pub fn build<'t>(tape: &'t Tape, name: &str, n: usize, w4_data: &W4Data) -> Built<'t> {
    match name {
        "W1" => w1(tape, n),
        "W2" => w2(tape, n),
        "W3" => w3(tape, n),
        "W4" => {
            let params: Vec<Var<'t>> = w4_data.params.iter().map(|&p| tape.var(p)).collect();
            let (loss, _) = mlp_loss(tape, &params, &w4_data.points, &w4_data.labels);
            Built {
                output: loss,
                leaves: params,
            }
        }
        other => panic!("unknown workload {other}: expected W1, W2, W3 or W4"),
    }
}

/// The data W4 needs, made once outside the timed part.
pub struct W4Data {
    pub points: Vec<[f64; 2]>,
    pub labels: Vec<f64>,
    pub params: Vec<f64>,
}

impl W4Data {
    pub fn new(b: usize) -> W4Data {
        let (points, labels) = moons(b);
        W4Data {
            points,
            labels,
            params: initial_parameters(),
        }
    }
}

/// The expected (nodes, out, gsum) of workloads.md for the tabulated sizes.
pub fn expected(name: &str, n: usize) -> Option<(usize, f64, f64)> {
    Some(match (name, n) {
        ("W1", 1_000) => (4_001, 0.6577480889048293, 1.1051653926032188),
        ("W1", 10_000) => (40_001, 3.0772188902382016, 2.7181459268248984),
        ("W1", 100_000) => (400_001, 33022.184072811644, 22015.45604852786),
        ("W2", 1_000) => (2_999, 1073.3499999999992, 1990.0),
        ("W2", 10_000) => (29_999, 10733.499999999962, 19900.0),
        ("W2", 100_000) => (299_999, 107334.9999999991, 199000.0),
        ("W3", 1_000) => (2_001, 1.0, 3.999999999999999),
        ("W3", 10_000) => (20_001, 1.0, 3.999999999999999),
        ("W3", 100_000) => (200_001, 1.0, 3.999999999999999),
        ("W4", 14) => (10_086, 0.9434066641806786, 3.870717478460541),
        ("W4", 153) => (100_158, 0.9230992616696657, 2.3166041613148938),
        _ => return None,
    })
}

/// The expected node count for any size.
pub fn expected_nodes(name: &str, n: usize) -> usize {
    match name {
        "W1" => 4 * n + 1,
        "W2" => 3 * n - 1,
        "W3" => 2 * n + 1,
        _ => 648 * n + 1014,
    }
}

/// True if `a` and `b` agree to a relative 1e-12 (workloads.md's tolerance).
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1e-300)
}
