//! The REPL's live preview of a derivative in a large session: the time of one
//! `Session::preview("f'(2)")` (what every keystroke of that line costs) for
//! sessions of growing size. It should not grow with the graph: the preview
//! differentiates with respect to a node appended for the call, so only the
//! nodes after it can depend on it.
//!
//! ```sh
//! cargo run --release --example preview_bench               # 10^5 and 10^6 nodes
//! cargo run --release --example preview_bench -- 100000 2000000 --reps 200
//! ```
//!
//! The session: a leaf `x = 0.5`, then `y = y*1.0001 + x` repeated until the
//! graph holds N nodes (each statement appends 3: a constant, a product and a
//! sum, and every sum uses x), then a leaf `w = 1.5`, `f(t) = t^2 + x` and
//! `g(t) = t^2 + y`. `f` uses a leaf that 1/3 of the graph reads; `g` uses a
//! value built from the whole graph; `grad(w*w + y, w)` differentiates with
//! respect to a leaf appended after it. (`grad(y, x)` is linear in the graph
//! whatever is done: every node depends on x.) One line per size and line previewed: `nodes`, `line`, the
//! preview's value, and the median, minimum and maximum ms of one call.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use gradcalc::session::Session;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut reps = 100usize;
    let mut sizes = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "--reps" {
            match iter.next().and_then(|r| r.parse().ok()) {
                Some(r) if r > 0 => reps = r,
                _ => return usage(),
            }
        } else {
            match arg.replace('_', "").parse::<usize>() {
                Ok(n) if n >= 10 => sizes.push(n),
                _ => return usage(),
            }
        }
    }
    if sizes.is_empty() {
        sizes = vec![100_000, 1_000_000];
    }
    for n in sizes {
        let mut session = build(n);
        let nodes = session.graph().len();
        for line in ["f'(2)", "g'(2)", "f''(2)", "g''(2)", "grad(w*w + y, w)"] {
            let value = session.preview(line);
            let mut times: Vec<f64> = (0..reps)
                .map(|_| {
                    let start = Instant::now();
                    black_box(session.preview(black_box(line)));
                    start.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            times.sort_by(f64::total_cmp);
            assert_eq!(session.graph().len(), nodes, "a preview left nodes behind");
            println!(
                "nodes {nodes:>8}  {line:<16} = {:<12} median {:8.4} ms  min {:8.4}  max {:8.4}",
                value.map_or("none".to_string(), |v| format!("{v}")),
                times[times.len() / 2],
                times[0],
                times[times.len() - 1],
            );
        }
    }
    ExitCode::SUCCESS
}

/// A session whose graph holds about `nodes` nodes (see the module doc).
fn build(nodes: usize) -> Session {
    let steps = nodes.saturating_sub(2) / 3;
    let mut source = String::with_capacity(steps * 22 + 64);
    source.push_str("x = 0.5\ny = x\n");
    for _ in 0..steps {
        source.push_str("y = y*1.0001 + x\n");
    }
    source.push_str("w = 1.5\nf(t) = t^2 + x\ng(t) = t^2 + y\n");
    let mut session = Session::new();
    let _ = session.run_source(&source, |result| match result {
        Ok(_) => std::ops::ControlFlow::Continue(()),
        Err(error) => panic!("building the session: {error}"),
    });
    session
}

fn usage() -> ExitCode {
    eprintln!("usage: preview_bench [NODES...] [--reps N]");
    ExitCode::FAILURE
}
