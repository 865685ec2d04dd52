//! Ctrl-C within a second in the phases that used to run on to their end
//! (issue 39): a large `randn`, the backward pass's elementwise rule over a
//! large matrix, and the `--json-full` line of a large value. Each runs in
//! line mode (`--json --lines`: SIGINT stops the running line, the process
//! stays), gets SIGINT once there is evidence that the phase runs, and must
//! answer the line with `interrupted` having used less than a second of CPU
//! time after the signal. CPU time, not wall time: a loaded machine makes
//! the waits longer, never the verdict different. Without the polling each
//! phase ran on for seconds of CPU time (measured in a debug build: a
//! 10000×10000 `randn` 2.5 s, `:grad X` of `sum(gelu(X))` at 4000×4000 2.2 s).

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::util::{TIMEOUT, cpu_time, json_lines, plain_gradcalc};

/// The most CPU time a stopped line may use after the signal.
const WITHIN: Duration = Duration::from_secs(1);

/// gradcalc in line mode with everything it has written so far (read on a
/// thread as it comes, not line by line: a line of a value being written is
/// seen before its end).
struct LineRun {
    child: Child,
    stdin: ChildStdin,
    out: Arc<Mutex<Vec<u8>>>,
    readies: usize,
}

impl LineRun {
    /// Starts `gradcalc --json --lines` with `extra` arguments.
    fn start(extra: &[&str]) -> LineRun {
        let mut child = plain_gradcalc()
            .args(["--json", "--lines"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let out = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&out);
        std::thread::spawn(move || {
            let mut buffer = vec![0; 1 << 16];
            while let Ok(n @ 1..) = stdout.read(&mut buffer) {
                sink.lock().unwrap().extend_from_slice(&buffer[..n]);
            }
        });
        LineRun {
            child,
            stdin,
            out,
            readies: 0,
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What has been written from byte `from` on.
    fn text_from(&self, from: usize) -> String {
        String::from_utf8_lossy(&self.out.lock().unwrap()[from..]).into_owned()
    }

    fn len(&self) -> usize {
        self.out.lock().unwrap().len()
    }

    /// Waits until `done` says yes of what has been written from `from` on.
    fn wait_until(&self, from: usize, what: &str, done: impl Fn(&str) -> bool) {
        let started = std::time::Instant::now();
        while !done(&self.text_from(from)) {
            assert!(started.elapsed() < TIMEOUT, "never: {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Writes `line`.
    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Waits for the `ready` of the next line, then returns the events
    /// written from byte `from` on.
    fn until_ready(&mut self, from: usize) -> Vec<Value> {
        self.readies += 1;
        let readies = self.readies;
        self.wait_until(0, "the line's ready", |text| {
            text.matches(r#"{"kind":"ready""#).count() >= readies
        });
        json_lines(&self.text_from(from))
    }

    /// Runs `line` to its `ready` and returns its events.
    fn run(&mut self, line: &str) -> Vec<Value> {
        let from = self.len();
        self.send(line);
        self.until_ready(from)
    }

    /// Writes `line`, waits for `running` (evidence that the phase runs:
    /// CPU time used by the line, or what it has written), sends SIGINT,
    /// and checks that the line ends with `interrupted` within [`WITHIN`]
    /// of CPU time; returns its events before the error.
    fn interrupted(&mut self, line: &str, running: Evidence) -> Vec<Value> {
        let from = self.len();
        let idle = cpu_time(self.pid()).unwrap();
        self.send(line);
        match running {
            Evidence::Cpu(work) => crate::util::wait_for_cpu(self.pid(), idle + work),
            Evidence::Written(part) => {
                self.wait_until(from, part, |text| text.contains(part));
            }
        }
        let signalled = cpu_time(self.pid()).unwrap();
        let killed = std::process::Command::new("kill")
            .args(["-INT", &self.pid().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let events = self.until_ready(from);
        let used = cpu_time(self.pid()).unwrap() - signalled;
        assert!(used < WITHIN, "{line}: {used:?} of CPU time after Ctrl-C");
        let n = events.len();
        assert!(n >= 2, "{events:?}");
        assert_eq!(events[n - 2]["kind"], "error", "{:?}", events[n - 2]);
        assert_eq!(events[n - 2]["code"], "interrupted");
        assert_eq!(events[n - 1]["kind"], "ready");
        events[..n - 2].to_vec()
    }
}

impl Drop for LineRun {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What shows that the phase to stop runs.
enum Evidence {
    /// The line has used this much CPU time.
    Cpu(Duration),
    /// The line's output holds this text.
    Written(&'static str),
}

/// The first value event's numbers, as written (`value`, nested).
fn numbers(events: &[Value]) -> Vec<f64> {
    let value = &events.iter().find(|e| e["kind"] == "value").unwrap()["value"];
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn ctrl_c_stops_a_large_randn_and_leaves_the_generator_as_it_was() {
    let mut run = LineRun::start(&[]);
    let drawn = run.interrupted(
        "W = randn(10000, 10000)",
        Evidence::Cpu(Duration::from_millis(200)),
    );
    assert!(drawn.is_empty(), "{drawn:?}");
    // Undone: no `W`; the session goes on.
    let unknown = run.run("W");
    assert_eq!(unknown[0]["kind"], "error", "{unknown:?}");
    // The generator is where it was: the next draw is a fresh session's first.
    let next = numbers(&run.run("v = randn(3)"));
    let mut fresh = LineRun::start(&[]);
    assert_eq!(next, numbers(&fresh.run("v = randn(3)")));
}

#[test]
fn ctrl_c_stops_the_backward_elementwise_rule_of_a_large_matrix() {
    // gelu's local derivative Φ(u) + u·φ(u) at 16·10⁶ elements: one
    // elementwise rule of the backward pass, 2.2 s of CPU time whole in a
    // debug build.
    let mut run = LineRun::start(&[]);
    run.run("X = randn(4000, 4000)");
    run.run("L = sum(gelu(X))");
    let kept = run.interrupted(":grad X", Evidence::Cpu(Duration::from_millis(200)));
    assert!(kept.is_empty(), "{kept:?}");
    // The session goes on: ∂(sum(gelu(x)))/∂x at x = 0 is Φ(0) = 1/2.
    run.run("x = [0]");
    run.run("M = sum(gelu(x))");
    let grad = run.run(":grad x");
    assert_eq!(grad[0]["kind"], "grad", "{grad:?}");
    assert_eq!(grad[0]["value"], serde_json::json!([0.5]));
}

#[test]
fn ctrl_c_ends_a_json_full_line_early_and_leaves_it_valid_json() {
    let mut run = LineRun::start(&["--json-full"]);
    let events = run.interrupted(
        "W = randn(3000, 3000)",
        Evidence::Written(r#"{"kind":"value","name":"W""#),
    );
    // The line cut short is whole JSON: its shape, and fewer rows than it
    // says, each row whole.
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["shape"], serde_json::json!([3000, 3000]));
    let rows = events[0]["value"].as_array().unwrap();
    assert!(rows.len() < 3000, "{} rows: not cut short", rows.len());
    assert!(rows.iter().all(|r| r.as_array().unwrap().len() == 3000));
    // The session goes on.
    assert_eq!(run.run("1 + 1")[0]["value"], 2);
}

/// A session in line mode that has run each line of `setup`.
fn session_with(setup: &[&str]) -> LineRun {
    let mut run = LineRun::start(&[]);
    for line in setup {
        let events = run.run(line);
        assert!(
            events.iter().all(|e| e["kind"] != "error"),
            "{line}: {events:?}"
        );
    }
    run
}

/// The value of `line`'s first value (or grad) event, flat (numbers, or
/// the rows of a matrix joined).
fn flat_value(run: &mut LineRun, line: &str) -> Vec<f64> {
    let events = run.run(line);
    let value = &events
        .iter()
        .find(|e| e["kind"] == "value" || e["kind"] == "grad")
        .unwrap_or_else(|| panic!("{line}: {events:?}"))["value"];
    let mut numbers = Vec::new();
    for item in value.as_array().unwrap() {
        match item.as_array() {
            Some(row) => numbers.extend(row.iter().map(|x| x.as_f64().unwrap())),
            None => numbers.push(item.as_f64().unwrap()),
        }
    }
    numbers
}

#[test]
fn ctrl_c_stops_reductions_along_the_columns_and_the_transpose_of_a_large_matrix() {
    // Each of these reductions of 8000×8000 is one kernel: each read a
    // column's numbers from a list of its indices, 3.6 s of CPU time for
    // max(X, axis=0) at 11584×11584 in a release build; now row by row,
    // looking at Ctrl-C every 2²⁰ numbers. Four of them, so that the line
    // runs on past the evidence now that each is fast.
    let mut run = session_with(&["X = randn(8000, 8000)"]);
    let line = "M = max(X, axis=0) + min(X, axis=0) + argmax(X, 0) + mean(X, 0)";
    let kept = run.interrupted(line, Evidence::Cpu(Duration::from_millis(200)));
    assert!(kept.is_empty(), "{kept:?}");
    // Undone, and the session goes on: of [[1, 5], [3, 2]], the column
    // maxima [3, 5], minima [1, 2], first maxima's rows [1, 0], means [2, 3.5].
    assert_eq!(run.run("M")[0]["kind"], "error");
    let small = "m = max(Y, axis=0) + min(Y, axis=0) + argmax(Y, 0) + mean(Y, 0)";
    run.run("Y = [[1, 5], [3, 2]]");
    assert_eq!(
        flat_value(&mut run, small),
        [3.0 + 1.0 + 1.0 + 2.0, 5.0 + 2.0 + 3.5]
    );
    // Xᵀ read down the columns of X: 2.2 s of CPU time in a debug build;
    // now in tiles of 32×32, looking between bands of 32 rows.
    let kept = run.interrupted("T = Xᵀ", Evidence::Cpu(Duration::from_millis(200)));
    assert!(kept.is_empty(), "{kept:?}");
    assert_eq!(
        flat_value(&mut run, "t = [[1, 2, 3], [4, 5, 6]]ᵀ"),
        [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
    );
}

#[test]
fn ctrl_c_stops_the_backward_rules_of_reductions_along_the_columns() {
    // The gradient of mean(X, 0) is 1/8000 at every element, of max(X,
    // axis=0) 1 at each column's first maximum: one backward rule each over
    // 64·10⁶ numbers, 1.4 s and 1.6 s of CPU time at 8191×8191 in a
    // release build; now row by row, looking every 2²⁰ numbers.
    let mut run = session_with(&[
        "X = randn(8000, 8000)",
        "L = sum(mean(X, 0)) + sum(max(X, axis=0)) + sum(mean(X, 0))",
    ]);
    let kept = run.interrupted(":grad X", Evidence::Cpu(Duration::from_millis(200)));
    assert!(kept.is_empty(), "{kept:?}");
    // The session goes on: of [[1, 5], [3, 2]], each element gets 1/2 + 1/2
    // from the means and 1 more at each column's maximum (3 and 5).
    run.run("Y = [[1, 5], [3, 2]]");
    run.run("K = sum(mean(Y, 0)) + sum(max(Y, axis=0)) + sum(mean(Y, 0))");
    assert_eq!(flat_value(&mut run, ":grad Y"), [1.0, 2.0, 2.0, 1.0]);
}
