//! The REPL's live preview in a large session: the time of one
//! `Session::preview(line)` (what every keystroke of that line costs) for
//! sessions of growing size. A preview answers within one frame (16 ms) or
//! shows nothing (`none`): derivatives with respect to a node appended for the
//! call (`f'(2)`) cost the same at any size; lines whose work grows with the
//! graph (`grad(y, x)` where every node depends on x) or explodes (nested
//! `grad`, a 12th derivative) stop at the preview's time budget.
//!
//! ```sh
//! cargo run --release --example preview_bench               # 10^5 and 10^6 nodes
//! cargo run --release --example preview_bench -- 100000 2000000 --reps 200
//! ```
//!
//! The session: a leaf `x = 0.5`, then `y = y*1.0001 + x` repeated until the
//! graph holds N nodes (each statement appends 3: a constant, a product and a
//! sum, and every sum uses x), then a leaf `w = 1.5`, `f(t) = t^2 + x` and
//! `g(t) = t^2 + y`, `h(t) = tanh(t)*sin(t)`, and a leaf `u = 0.5` with
//! `v = tanh(u)*sin(u)`. `f` uses a leaf that 1/3 of the graph reads; `g` uses a
//! value built from the whole graph; `grad(w*w + y, w)` differentiates with
//! respect to a leaf appended after it. `grad(y, x)` and `q = grad(grad(y, x),
//! x)` are linear in the graph whatever is done (every node depends on x);
//! `h''''''''''''(0.5)` and `grad(grad(…grad(v, u)…, u), u)` nested 18 deep
//! grow exponentially with the order (issue 21's lines). One line per size
//! and line previewed: `nodes`, `line`, the preview's value, the median,
//! minimum and maximum wall-clock ms of one call, and the median and maximum
//! ms of CPU time (what the budget counts).

use std::hint::black_box;
#[path = "common/timing.rs"]
mod timing;

use std::process::ExitCode;
use std::time::Instant;

use gradcalc::session::Session;

fn main() -> ExitCode {
    let Some((mut sizes, reps)) = timing::sizes_and_reps(10, 100) else {
        return usage();
    };
    if sizes.is_empty() {
        sizes = vec![100_000, 1_000_000];
    }
    for n in sizes {
        let mut session = build(n);
        let nodes = session.graph().len();
        for line in lines() {
            let line = line.as_str();
            let value = session.preview(line);
            let (mut times, mut cpu): (Vec<f64>, Vec<f64>) = (0..reps)
                .map(|_| {
                    let (start, start_cpu) = (Instant::now(), timing::thread_cpu_ms());
                    black_box(session.preview(black_box(line)));
                    (
                        start.elapsed().as_secs_f64() * 1e3,
                        timing::thread_cpu_ms() - start_cpu,
                    )
                })
                .unzip();
            times.sort_by(f64::total_cmp);
            cpu.sort_by(f64::total_cmp);
            assert_eq!(session.graph().len(), nodes, "a preview left nodes behind");
            println!(
                "nodes {nodes:>8}  {:<24} = {:<12} median {:8.4} ms  min {:8.4}  max {:8.4}  cpu median {:8.4} max {:8.4}",
                shown(line),
                value.map_or("none".to_string(), |v| format!("{v:.6}")),
                times[times.len() / 2],
                times[0],
                times[times.len() - 1],
                cpu[cpu.len() / 2],
                cpu[cpu.len() - 1],
            );
        }
    }
    ExitCode::SUCCESS
}

/// The lines previewed (see the module doc).
fn lines() -> Vec<String> {
    let mut nested = "v".to_string();
    for _ in 0..18 {
        nested = format!("grad({nested}, u)");
    }
    [
        "f'(2)",
        "g'(2)",
        "f''(2)",
        "g''(2)",
        "grad(w*w + y, w)",
        "grad(y, x)",
        "q = grad(grad(y, x), x)",
        "h''''''''''''(0.5)",
    ]
    .iter()
    .map(|line| line.to_string())
    .chain([nested])
    .collect()
}

/// A line as the table shows it: a long one cut, with its length.
fn shown(line: &str) -> String {
    if line.len() <= 24 {
        return line.to_string();
    }
    format!("{}… ({} chars)", &line[..10], line.len())
}

/// A session whose graph holds about `nodes` nodes (see the module doc).
fn build(nodes: usize) -> Session {
    let steps = nodes.saturating_sub(2) / 3;
    let mut source = String::with_capacity(steps * 22 + 64);
    source.push_str("x = 0.5\ny = x\n");
    for _ in 0..steps {
        source.push_str("y = y*1.0001 + x\n");
    }
    source.push_str("w = 1.5\nf(t) = t^2 + x\ng(t) = t^2 + y\nh(t) = tanh(t)*sin(t)\n");
    source.push_str("u = 0.5\nv = tanh(u)*sin(u)\n");
    timing::session_of(&source)
}

fn usage() -> ExitCode {
    eprintln!("usage: preview_bench [NODES...] [--reps N]");
    ExitCode::FAILURE
}
