//! The time of `:diff y x` as the derivative grows: three shapes at 10³, 10⁴
//! and 10⁵ terms, each line with the time of the `:diff` alone (the session
//! is built first, untimed), what it answered, and the ratio to the size
//! before it. `:diff` writes its text in time linear in the derivative graph
//! (each shared part named once, the text refused past 200 000 characters),
//! so each ratio is about 10 for 10× the size. Times are this thread's CPU
//! time (the machine may be shared; wall time is longer under load).
//!
//! ```sh
//! cargo run --release --example diff_bench                  # 10^3, 10^4, 10^5
//! cargo run --release --example diff_bench -- 1000 10000 --reps 5
//! ```
//!
//! The shapes: `chain`, W3 of docs/benchmarks.md (`y = y*x + x` n times from
//! x = 0.5: every upstream gradient is used by two products, so the text
//! names parts); `powers`, one line `y = x^1 + x^2 + … + x^n`; `tanh`, one
//! line `y = tanh(1*x) + tanh(2*x) + … + tanh(n*x)` (each term's rule
//! `1 - tanh(k*x)^2` uses the node's own value).

#[path = "common/timing.rs"]
mod timing;

use std::process::ExitCode;

use gradcalc::session::{CalculusEvent, Event, Session};

fn main() -> ExitCode {
    let Some((mut sizes, reps)) = timing::sizes_and_reps(1, 3) else {
        return usage();
    };
    if sizes.is_empty() {
        sizes = vec![1_000, 10_000, 100_000];
    }
    for shape in ["chain", "powers", "tanh"] {
        let mut before: Option<f64> = None;
        for &n in &sizes {
            let mut session = build(shape, n);
            let nodes = session.graph().len();
            let mut times = Vec::with_capacity(reps);
            let mut answer = String::new();
            for _ in 0..reps {
                let start = timing::thread_cpu_ms();
                answer = diff(&mut session);
                times.push(timing::thread_cpu_ms() - start);
            }
            times.sort_by(f64::total_cmp);
            let median = times[times.len() / 2];
            let ratio = before.map_or(String::new(), |b| format!("  ×{:.1}", median / b));
            println!(
                "{shape:<6} n {n:>7}  nodes {nodes:>7}  :diff CPU median {median:>9.2} ms{ratio}  ({answer})"
            );
            before = Some(median);
        }
    }
    ExitCode::SUCCESS
}

/// `:diff y x` in `session`: what it answered, in a few words.
fn diff(session: &mut Session) -> String {
    let mut answer = String::new();
    let _ = session.run_source(":diff y x", |result| {
        answer = match result {
            Ok(events) => events
                .iter()
                .find_map(|event| match event {
                    Event::Calculus(CalculusEvent::Diff {
                        expression, parts, ..
                    }) => Some(format!(
                        "{} characters, {} parts",
                        expression.len() + parts.iter().map(|p| p.expression.len()).sum::<usize>(),
                        parts.len()
                    )),
                    _ => None,
                })
                .unwrap_or_else(|| "no diff event".to_string()),
            Err(error) => format!("refused: {}", cut(&error.to_string())),
        };
        std::ops::ControlFlow::Continue(())
    });
    answer
}

/// The first 60 characters of `text`.
fn cut(text: &str) -> String {
    text.chars().take(60).collect()
}

/// A session holding `y` of `shape` at size `n` (see the module doc).
fn build(shape: &str, n: usize) -> Session {
    let mut source = String::from("x = 0.5\n");
    match shape {
        "chain" => {
            source.push_str("y = x\n");
            source.push_str(&"y = y*x + x\n".repeat(n));
        }
        "powers" => {
            let terms: Vec<String> = (1..=n).map(|k| format!("x^{k}")).collect();
            source.push_str(&format!("y = {}\n", terms.join(" + ")));
        }
        _ => {
            let terms: Vec<String> = (1..=n).map(|k| format!("tanh({k}*x)")).collect();
            source.push_str(&format!("y = {}\n", terms.join(" + ")));
        }
    }
    timing::session_of(&source)
}

fn usage() -> ExitCode {
    eprintln!("usage: diff_bench [SIZES...] [--reps N]");
    ExitCode::FAILURE
}
