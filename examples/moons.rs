//! micrograd's demo, reproduced with the library API: an MLP(2, [16, 16, 1])
//! with ReLU hidden layers learns to separate two moons.
//!
//! ```sh
//! cargo run --release --example moons                   # train, draw the boundary
//! cargo run --release --example moons -- --svg moons.svg
//! cargo run --release --example moons -- --steps 20 --quiet
//! ```
//!
//! The 100 points and the 337 initial parameters come from the fixed-seed
//! recipe of docs/benchmarks.md (W4). The loss is micrograd's: mean hinge loss
//! `relu(1 − y·score)` plus 1e-4 times the sum of squared parameters; 100 steps
//! of plain SGD with learning rate `1.0 − 0.9·k/100`.
//!
//! The parameters are the first 337 nodes of the tape and outlive every step:
//! each step builds its graph after them, backpropagates, truncates the tape
//! back to the parameters (the memory is reused) and updates their values.

#[path = "common/workloads.rs"]
mod workloads;

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use gradcalc::engine::{Tape, Var};

const POINTS: usize = 100;

struct Options {
    steps: usize,
    svg: Option<std::path::PathBuf>,
    quiet: bool,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        steps: 100,
        svg: None,
        quiet: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--svg" => options.svg = Some(args.next().ok_or("--svg needs a file name")?.into()),
            "--steps" => {
                options.steps = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .ok_or("--steps needs a number")?;
            }
            "--quiet" => options.quiet = true,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("moons: {message}\nusage: moons [--steps N] [--svg FILE] [--quiet]");
            return ExitCode::from(2);
        }
    };
    let (points, labels) = workloads::moons(POINTS);
    let tape = Tape::new();
    let params: Vec<Var> = workloads::initial_parameters()
        .into_iter()
        .map(|p| tape.var(p))
        .collect();
    let mark = tape.len();

    let start = Instant::now();
    let mut accuracy = 0.0;
    let mut peak_nodes = 0;
    for k in 0..options.steps {
        // Forward: this step's graph, after the parameters.
        let (loss, scores) = workloads::mlp_loss(&tape, &params, &points, &labels);
        let correct = scores
            .iter()
            .zip(&labels)
            .filter(|(s, y)| (s.value() > 0.0) == (**y > 0.0))
            .count();
        accuracy = correct as f64 / POINTS as f64;
        let loss_value = loss.value();
        // Backward, then free the step's graph and update the parameters.
        let grads = tape.backward(loss);
        peak_nodes = peak_nodes.max(tape.len());
        tape.truncate(mark);
        let learning_rate = 1.0 - 0.9 * k as f64 / 100.0;
        for &p in &params {
            tape.set_value(p, p.value() - learning_rate * grads[p]);
        }
        if !options.quiet {
            println!(
                "step {k:3} {} loss {loss_value:.6} accuracy {:5.1}%",
                progress_bar(k + 1, options.steps, 30),
                accuracy * 100.0
            );
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "trained {} steps in {:.3} s ({:.2} ms/step, {} nodes per step, tape {} nodes after), final accuracy {:.0}%",
        options.steps,
        seconds,
        seconds * 1e3 / options.steps.max(1) as f64,
        peak_nodes - mark,
        tape.len(),
        accuracy * 100.0
    );

    let score_at = |x: f64, y: f64| -> f64 {
        let s = workloads::score(&params, [tape.constant(x), tape.constant(y)]).value();
        tape.truncate(mark);
        s
    };
    if !options.quiet {
        print!("{}", terminal_plot(&points, &labels, &score_at));
    }
    if let Some(path) = &options.svg {
        let svg = svg_plot(&points, &labels, &score_at);
        if let Err(error) = std::fs::write(path, svg) {
            eprintln!("moons: cannot write {}: {error}", path.display());
            return ExitCode::FAILURE;
        }
        println!("decision boundary written to {}", path.display());
    }
    if accuracy == 1.0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `[#########.........]` for `done` of `total`.
fn progress_bar(done: usize, total: usize, width: usize) -> String {
    let filled = (done * width).div_ceil(total.max(1)).min(width);
    format!("[{}{}]", "#".repeat(filled), ".".repeat(width - filled))
}

/// The plotted region: x from -1.5 to 2.5, y from -1.0 to 1.5.
const X_RANGE: (f64, f64) = (-1.5, 2.5);
const Y_RANGE: (f64, f64) = (-1.0, 1.5);

/// The decision regions as characters (`-` where the model says +1, blank for
/// −1) with the points on top (`o` for +1, `x` for −1).
fn terminal_plot(
    points: &[[f64; 2]],
    labels: &[f64],
    score_at: &dyn Fn(f64, f64) -> f64,
) -> String {
    const COLS: usize = 72;
    const ROWS: usize = 24;
    let cell = |px: f64, py: f64| -> (usize, usize) {
        let c = ((px - X_RANGE.0) / (X_RANGE.1 - X_RANGE.0) * COLS as f64) as usize;
        let r = ((Y_RANGE.1 - py) / (Y_RANGE.1 - Y_RANGE.0) * ROWS as f64) as usize;
        (r.min(ROWS - 1), c.min(COLS - 1))
    };
    let mut grid = vec![[' '; COLS]; ROWS];
    for (r, row) in grid.iter_mut().enumerate() {
        for (c, ch) in row.iter_mut().enumerate() {
            let x = X_RANGE.0 + (c as f64 + 0.5) / COLS as f64 * (X_RANGE.1 - X_RANGE.0);
            let y = Y_RANGE.1 - (r as f64 + 0.5) / ROWS as f64 * (Y_RANGE.1 - Y_RANGE.0);
            if score_at(x, y) > 0.0 {
                *ch = '-';
            }
        }
    }
    for (&[x, y], &label) in points.iter().zip(labels) {
        let (r, c) = cell(x, y);
        grid[r][c] = if label > 0.0 { 'o' } else { 'x' };
    }
    let mut out = String::new();
    let _ = writeln!(out, "+{}+", "-".repeat(COLS));
    for row in &grid {
        let _ = writeln!(out, "|{}|", row.iter().collect::<String>());
    }
    let _ = writeln!(out, "+{}+", "-".repeat(COLS));
    let _ = writeln!(
        out,
        "o: label +1, x: label -1, '-': the model says +1 (x from {} to {}, y from {} to {})",
        X_RANGE.0, X_RANGE.1, Y_RANGE.0, Y_RANGE.1
    );
    out
}

/// The same picture as SVG: a grid of coloured cells and the points.
fn svg_plot(points: &[[f64; 2]], labels: &[f64], score_at: &dyn Fn(f64, f64) -> f64) -> String {
    const SIZE: f64 = 480.0;
    const CELLS: usize = 96;
    let width = SIZE;
    let height = SIZE * (Y_RANGE.1 - Y_RANGE.0) / (X_RANGE.1 - X_RANGE.0);
    let to_px = |x: f64, y: f64| {
        (
            (x - X_RANGE.0) / (X_RANGE.1 - X_RANGE.0) * width,
            (Y_RANGE.1 - y) / (Y_RANGE.1 - Y_RANGE.0) * height,
        )
    };
    let rows = (CELLS as f64 * height / width).round() as usize;
    let (cw, ch) = (width / CELLS as f64, height / rows as f64);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height:.0}" viewBox="0 0 {width} {height:.0}">"#
    );
    for r in 0..rows {
        for c in 0..CELLS {
            let x = X_RANGE.0 + (c as f64 + 0.5) / CELLS as f64 * (X_RANGE.1 - X_RANGE.0);
            let y = Y_RANGE.1 - (r as f64 + 0.5) / rows as f64 * (Y_RANGE.1 - Y_RANGE.0);
            let fill = if score_at(x, y) > 0.0 {
                "#cfe3f7"
            } else {
                "#f7d9cf"
            };
            let _ = writeln!(
                svg,
                r#"<rect x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{fill}"/>"#,
                c as f64 * cw,
                r as f64 * ch,
                cw + 0.3,
                ch + 0.3
            );
        }
    }
    for (&[x, y], &label) in points.iter().zip(labels) {
        let (px, py) = to_px(x, y);
        let fill = if label > 0.0 { "#1f5fa8" } else { "#b8412c" };
        let _ = writeln!(
            svg,
            r#"<circle cx="{px:.2}" cy="{py:.2}" r="4" fill="{fill}" stroke="black" stroke-width="0.5"/>"#
        );
    }
    svg.push_str("</svg>\n");
    svg
}
