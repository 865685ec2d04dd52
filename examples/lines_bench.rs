//! Line mode (`--json --lines`) reading one statement continued over many
//! lines: N lines of 1 KiB, each ending in `+` (so each leaves the statement
//! unfinished and gets a `ready` with `pending: true`), then `1`. Line mode
//! tells whether the statement goes on by scanning only the new line
//! (`syntax::Continuation`), so the time grows linearly with N; the same text
//! on one line is the reference. The `rescan` column times what line mode did
//! before: asking `syntax::needs_more_input` of all the lines read so far
//! after each line, which grows as N².
//!
//! ```sh
//! cargo run --release --example lines_bench                  # N = 1000, 2000, 4000
//! cargo run --release --example lines_bench -- 8000 16000
//! ```
//!
//! One line per N: `lines`, the bytes, the ms of line mode on the N lines,
//! of line mode on the same text as one line, and of the rescans alone.

use std::io;
use std::process::ExitCode;
use std::time::Instant;

use gradcalc::driver::{self, Options, Outcome};
use gradcalc::render::{Format, Printer};
use gradcalc::session::Session;
use gradcalc::syntax;

fn main() -> ExitCode {
    let mut sizes = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.parse::<usize>() {
            Ok(n) if n > 0 => sizes.push(n),
            _ => {
                eprintln!("usage: lines_bench [N…] (counts of lines, default 1000 2000 4000)");
                return ExitCode::from(2);
            }
        }
    }
    if sizes.is_empty() {
        sizes = vec![1000, 2000, 4000];
    }
    println!("lines\tbytes\tlines_ms\tone_line_ms\trescan_ms");
    for n in sizes {
        // 255 terms `1 + ` and a last `1 +`: 1023 bytes and a newline.
        let line = format!("{}1 +\n", "1 + ".repeat(255));
        let lines = format!("s = {}1\n", line.repeat(n));
        let one_line = format!("{}\n", lines.replace('\n', " ").trim_end());
        let lines_ms = run(&lines, 255 * n + n + 1);
        let one_line_ms = run(&one_line, 255 * n + n + 1);
        let rescan_ms = rescan(&lines);
        println!(
            "{n}\t{}\t{lines_ms:.1}\t{one_line_ms:.1}\t{rescan_ms:.1}",
            lines.len()
        );
    }
    ExitCode::SUCCESS
}

/// Runs `input` in line mode into a fresh session, checks that the sum is
/// `expected`, and returns the milliseconds it took.
fn run(input: &str, expected: usize) -> f64 {
    let mut session = Session::new();
    let mut printer = Printer::new(Format::Json, io::sink(), io::sink());
    let options = Options {
        keep_going: true,
        loads_stop_at_error: false,
        script: true,
        lines: true,
    };
    let start = Instant::now();
    let outcome = driver::run_lines(
        &mut session,
        &mut printer,
        &mut input.as_bytes(),
        "<stdin>",
        options,
    );
    let ms = start.elapsed().as_secs_f64() * 1e3;
    assert!(
        matches!(outcome, Outcome::Done { failed: false }),
        "{outcome:?}"
    );
    let value = session.variable("s").map(|s| session.graph().value(s));
    assert_eq!(value, Some(expected as f64), "the sum");
    ms
}

/// The milliseconds of asking whether `input` read so far is unfinished
/// after each of its lines, scanning all of it each time (line mode before).
fn rescan(input: &str) -> f64 {
    let start = Instant::now();
    let mut read = 0;
    let mut unfinished = 0;
    for line in input.split_inclusive('\n') {
        read += line.len();
        unfinished += usize::from(syntax::needs_more_input(&input[..read]));
    }
    assert_eq!(unfinished, input.lines().count() - 1);
    start.elapsed().as_secs_f64() * 1e3
}
