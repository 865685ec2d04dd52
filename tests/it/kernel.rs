//! JSON for programs (docs/json.md): the `from` every event carries, the
//! `code` of every error, and line mode (`--lines`), in which another program
//! writes a line and reads its events before it writes the next.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};

use expect_test::expect;

use crate::util::{
    TIMEOUT, assert_contains, folder_with, gradcalc, output_in, output_with_stdin, plain_gradcalc,
    stdout_of,
};

/// The JSON lines of `gradcalc --json ARGS` with `stdin`, as text.
fn json_output(args: &[&str], stdin: &str) -> String {
    let output = gradcalc()
        .arg("--json")
        .args(args)
        .write_stdin(stdin)
        .output()
        .unwrap();
    stdout_of(&output)
}

#[test]
fn every_event_names_the_statement_it_came_from() {
    // With --keep-going, a bare `:grad` writes one event per variable and a
    // failed statement does not stop the run: each event says which
    // statement (counted across the -e's, with its line and column) it is of.
    let out = json_output(
        &[
            "--keep-going",
            "-e",
            "x = 2; y = 3\nz = x*y; :grad",
            "-e",
            "w + 1; x",
        ],
        "",
    );
    expect![[r#"
        {"kind":"value","name":"x","value":2,"from":{"statement":1,"source":"-e #1","line":1,"column":1}}
        {"kind":"value","name":"y","value":3,"from":{"statement":2,"source":"-e #1","line":1,"column":8}}
        {"kind":"value","name":"z","value":6,"from":{"statement":3,"source":"-e #1","line":2,"column":1}}
        {"kind":"grad","of":"z","wrt":"x","value":3,"from":{"statement":4,"source":"-e #1","line":2,"column":10}}
        {"kind":"grad","of":"z","wrt":"y","value":2,"from":{"statement":4,"source":"-e #1","line":2,"column":10}}
        {"kind":"error","code":"unknown-name","message":"unknown name `w`","line":1,"column":1,"source":"-e #2","help":"assign it first, e.g. `w = 1`","from":{"statement":5,"source":"-e #2","line":1,"column":1}}
        {"kind":"value","value":2,"from":{"statement":6,"source":"-e #2","line":1,"column":8}}
    "#]]
    .assert_eq(&out);
}

#[test]
fn a_loaded_file_counts_on_and_names_itself() {
    let (dir, _) = folder_with("inner.calc", "a = 1\n\n  b = a/0\n");
    let output = output_in(dir.path(), &["--json", "-e", "x = 1; :load inner.calc; x"]);
    // The warning's own line and column point at `a/0`; its statement at `b`.
    expect![[r#"
        {"kind":"value","name":"x","value":1,"from":{"statement":1,"source":"-e","line":1,"column":1}}
        {"kind":"value","name":"a","value":1,"from":{"statement":3,"source":"inner.calc","line":1,"column":1}}
        {"kind":"warning","message":"division by zero gives inf","line":3,"column":7,"source":"inner.calc","from":{"statement":4,"source":"inner.calc","line":3,"column":3}}
        {"kind":"value","name":"b","value":"inf","from":{"statement":4,"source":"inner.calc","line":3,"column":3}}
        {"kind":"value","value":1,"from":{"statement":5,"source":"-e","line":1,"column":26}}
    "#]]
    .assert_eq(&stdout_of(&output));
}

/// The `code` of the error of each statement, one per line.
fn codes(statements: &[&str]) -> String {
    let mut out = String::new();
    for statement in statements {
        let text = json_output(&["-e", "x = 1; f(t) = t", "-e", statement], "");
        let error = text
            .lines()
            .find(|l| l.contains(r#""kind":"error""#))
            .unwrap_or_else(|| panic!("{statement}: no error in {text}"));
        let value: serde_json::Value = serde_json::from_str(error).unwrap();
        out.push_str(&format!(
            "{statement:<16} {}\n",
            value["code"].as_str().unwrap()
        ));
    }
    out
}

#[test]
fn every_error_has_a_stable_code() {
    expect![[r#"
        1 +* 2           parse
        nope + 1         unknown-name
        nope(1)          unknown-function
        :frob            unknown-command
        x(2)             not-a-function
        tanh + 1         not-a-value
        sin x            missing-parentheses
        f(1, 2)          arity
        ans = 2          reserved
        :grad            no-output
        :topo kahn kahn  bad-arguments
        :load nowhere    load
        :save /no/s.calc write
    "#]]
    .assert_eq(&codes(&[
        "1 +* 2",
        "nope + 1",
        "nope(1)",
        ":frob",
        "x(2)",
        "tanh + 1",
        "sin x",
        "f(1, 2)",
        "ans = 2",
        ":grad",
        ":topo kahn kahn",
        ":load nowhere",
        ":save /no/s.calc",
    ]));
    let deep = format!("{}1{}", "(".repeat(1001), ")".repeat(1001));
    assert_eq!(codes(&[&deep]).split_whitespace().last(), Some("limit"));
    // Before any statement: no line, column or statement.
    expect![[r#"
        {"kind":"error","code":"read","message":"cannot read missing.calc: No such file or directory (os error 2)","source":"missing.calc"}
    "#]]
    .assert_eq(&json_output(&["missing.calc"], ""));
}

/// gradcalc in line mode, its stdin to write lines to and its stdout's lines
/// arriving on a channel (read on a thread, so that a wait has a ceiling).
pub(crate) struct Kernel {
    pub(crate) child: Child,
    pub(crate) stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Kernel {
    pub(crate) fn start() -> Kernel {
        let mut child = plain_gradcalc()
            .args(["--json", "--lines"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                if send.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        Kernel {
            child,
            stdin,
            lines,
        }
    }

    /// Writes `line` and returns the events up to and including its `ready`
    /// (the process stays running: the next line is not written yet).
    pub(crate) fn run(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        self.until_ready(line)
    }

    /// The events up to and including the next `ready`, after `line` was
    /// written.
    pub(crate) fn until_ready(&mut self, line: &str) -> String {
        until_ready(&self.lines, line)
    }

    /// Writes `bytes` (on a thread: they may be more than a pipe holds) and
    /// returns the events up to and including the next `ready`; `shown`
    /// names them in a failure.
    fn run_long(&mut self, bytes: &[u8], shown: &str) -> String {
        std::thread::scope(|scope| {
            let stdin = &mut self.stdin;
            let writer = scope.spawn(move || stdin.write_all(bytes).and_then(|()| stdin.flush()));
            let out = until_ready(&self.lines, shown);
            writer.join().unwrap().unwrap();
            out
        })
    }

    /// Sends SIGINT (Ctrl-C) to the process.
    pub(crate) fn interrupt(&self) {
        let killed = std::process::Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success(), "the process has ended");
    }

    /// Writes `line` while it runs long, waits until the process has spent
    /// `evidence` of CPU time on it, then sends SIGINT until an event comes
    /// (each try waits for one at most [`PATIENCE`]), and returns the events
    /// up to and including its `ready`.
    fn interrupt_line(&mut self, line: &str, evidence: std::time::Duration) -> String {
        let pid = self.child.id();
        let start = crate::util::cpu_time(pid).unwrap();
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        // Evidence that the line runs: reading it takes no CPU time to speak
        // of, so a Ctrl-C sent before the line starts stops the reading
        // instead ("nothing of it ran"), as it does on a busy machine.
        crate::util::wait_for_cpu(pid, start + evidence);
        let first = loop {
            self.interrupt();
            match self.lines.recv_timeout(PATIENCE) {
                Ok(event) => break event,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(e) => panic!("after {line:?}, the output ended ({e})"),
            }
        };
        let done = first.starts_with(r#"{"kind":"ready""#);
        let rest = if done {
            String::new()
        } else {
            self.until_ready(line)
        };
        format!("{first}\n{rest}")
    }

    /// Writes `line` until it is answered without an `interrupted` error (a
    /// SIGINT sent before may reach the process after its line has ended:
    /// it then stops the next line), at most 5 times; its events.
    fn run_uninterrupted(&mut self, line: &str) -> String {
        for _ in 0..5 {
            let out = self.run(line);
            if !out.contains(r#""code":"interrupted""#) {
                return out;
            }
        }
        panic!("{line:?} was interrupted 5 times");
    }
}

/// The events from `lines` up to and including the next `ready`, after
/// `line` was written.
fn until_ready(lines: &Receiver<String>, line: &str) -> String {
    let mut out = String::new();
    loop {
        let event = lines
            .recv_timeout(TIMEOUT)
            .unwrap_or_else(|e| panic!("after {line:?}, no `ready` ({e}); so far:\n{out}"));
        out.push_str(&event);
        out.push('\n');
        if event.starts_with(r#"{"kind":"ready""#) {
            return out;
        }
    }
}

/// How long [`Kernel::interrupt_line`] waits for an event before it sends
/// SIGINT again: the line is still running then, or just starting.
const PATIENCE: std::time::Duration = std::time::Duration::from_millis(200);

/// The JSON events of `text`, one per line: every line must be whole JSON.
pub(crate) fn events(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not whole JSON ({e}): {line}"))
        })
        .collect()
}

#[test]
fn ctrl_c_stops_the_running_line_and_keeps_the_session() {
    let mut kernel = Kernel::start();
    kernel.run("x = 5; k = 7");
    // A million steps take minutes: Ctrl-C stops them, keeps the steps done,
    // ends the line with an `interrupted` error and its `ready`.
    let out = kernel.interrupt_line(
        ":repeat 1000000 x := x + 1",
        std::time::Duration::from_millis(300),
    );
    let all = events(&out);
    let kinds: Vec<&str> = all.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    let repeat = &all[kinds.iter().position(|&k| k == "repeat").expect(&out)];
    assert_eq!(repeat["interrupted"], true, "{out}");
    let steps = repeat["steps"].as_u64().unwrap();
    assert!(steps < 1_000_000, "{out}");
    assert_eq!(kinds[kinds.len() - 2..], ["error", "ready"], "{out}");
    assert_eq!(all[kinds.len() - 2]["code"], "interrupted", "{out}");
    assert_eq!(all[kinds.len() - 1]["line"], 2, "{out}");
    // Every variable is kept: x counted the steps done, k is untouched.
    let out = kernel.run_uninterrupted("x; k");
    let values: Vec<_> = events(&out).iter().map(|e| e["value"].clone()).collect();
    assert_eq!(
        values[..2],
        [serde_json::json!(5 + steps), serde_json::json!(7)],
        "{out}"
    );
    drop(kernel.stdin);
    assert_eq!(
        kernel.child.wait().unwrap().code(),
        Some(1),
        "a line was interrupted"
    );
}

/// Writes `line`, which binds `s` to the result of one op of seconds of
/// work, waits for `evidence` seconds of CPU time after it (the op runs),
/// presses Ctrl-C, and checks that the line answers `interrupted` within
/// `bound` seconds of CPU time (not wall-clock time: a loaded machine makes the wait
/// longer, not the work), and that the session goes on, `s` never bound.
fn ctrl_c_inside_one_op_answers_within(line: &str, evidence: f64, bound: f64) {
    let (evidence, bound) = (
        std::time::Duration::from_secs_f64(evidence),
        std::time::Duration::from_secs_f64(bound),
    );
    let mut kernel = Kernel::start();
    let pid = kernel.child.id();
    writeln!(kernel.stdin, "{line}").unwrap();
    kernel.stdin.flush().unwrap();
    let start = crate::util::cpu_time(pid).unwrap();
    crate::util::wait_for_cpu(pid, start + evidence);
    kernel.interrupt();
    let at_ctrl_c = crate::util::cpu_time(pid).unwrap();
    let out = kernel.until_ready(line);
    let answered = crate::util::cpu_time(pid).unwrap();
    let all = events(&out);
    let kinds: Vec<&str> = all.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["error", "ready"], "{out}");
    assert_eq!(all[0]["code"], "interrupted", "{out}");
    assert!(
        answered - at_ctrl_c <= bound,
        "{:?} of CPU time from Ctrl-C to the answer",
        answered - at_ctrl_c
    );
    let out = kernel.run_uninterrupted("q = 1; s");
    let all = events(&out);
    assert_eq!(all[0]["value"], 1, "{out}");
    assert_eq!(all[1]["code"], "unknown-name", "{out}");
}

#[test]
fn ctrl_c_inside_a_large_matrix_product_answers_within_a_second_of_work() {
    // A product of two 4000×4000 matrices is 6.4·10¹⁰ multiply-adds (tens
    // of seconds even in a release build): it runs as blocks that look at
    // Ctrl-C between two, so the line answers after at most one block.
    // Evidence that the product runs: 1 s of CPU after the line was
    // written (the two `ones` take a small part of it); at most 1 s from
    // Ctrl-C to the answer.
    let line = "s = sum(ones(4000, 4000) @ ones(4000, 4000))";
    ctrl_c_inside_one_op_answers_within(line, 1.0, 1.0);
}

#[test]
fn ctrl_c_while_waiting_for_a_line_is_forgotten() {
    // The driver's Ctrl-C may come just after the line it meant has ended:
    // it must not end the process (it used to, with status 130) nor stop the
    // next line.
    let mut kernel = Kernel::start();
    kernel.run("x = 4");
    for _ in 0..3 {
        kernel.interrupt();
    }
    // The handler runs on a thread of its own (the `ctrlc` crate), which a
    // busy machine may schedule only after the next line was read: such a
    // late Ctrl-C stops that line, as one typed during it would. The line
    // is then asked for again; the run ends with status 1 (a statement
    // failed), never 130.
    let mut stopped = 0;
    let out = loop {
        let out = kernel.run("x^2");
        if !out.contains(r#""code":"interrupted""#) {
            break out;
        }
        stopped += 1;
        assert!(stopped < 5, "x^2 was interrupted 5 times");
    };
    assert_eq!(events(&out)[0]["value"], 16, "{out}");
    drop(kernel.stdin);
    let status = kernel.child.wait().unwrap().code();
    assert_eq!(
        status,
        Some(if stopped == 0 { 0 } else { 1 }),
        "{stopped} lines stopped"
    );
}

#[test]
fn ctrl_c_while_a_long_listing_is_written_leaves_every_line_whole() {
    // 20 001 nodes: `:topo all` is one line of some 2 MB, written a row at a
    // time; Ctrl-C while it is written closes it early as valid JSON.
    let mut kernel = Kernel::start();
    kernel.run(&format!("x = 1; y = x{}", " + x".repeat(20_000)));
    // A Ctrl-C that lands before the listing starts (while the order is
    // found) stops the line with no listing at all: every line still whole,
    // and the listing is asked for again, up to 5 times.
    let (out, all) = (0..5)
        .map(|_| {
            let out = kernel.interrupt_line(":topo all", std::time::Duration::ZERO);
            let all = events(&out);
            (out, all)
        })
        .find(|(out, all)| {
            let listed = all.iter().any(|e| e["kind"] == "topo");
            assert!(
                listed || all.iter().any(|e| e["code"] == "interrupted"),
                "{out}"
            );
            listed
        })
        .expect("the listing was interrupted before it started 5 times");
    let topo = all.iter().find(|e| e["kind"] == "topo").expect(&out);
    assert_eq!(topo["total"], 20_001, "20 000 sums and x");
    let rows = topo["nodes"].as_array().unwrap().len();
    let interrupted = all.iter().any(|e| e["code"] == "interrupted");
    // Cut short only when interrupted (the Ctrl-C may come after it ended).
    assert!(
        rows == 20_001 || interrupted,
        "{rows} rows, not interrupted"
    );
    assert_eq!(all.last().unwrap()["kind"], "ready");
    let out = kernel.run_uninterrupted("y");
    assert_eq!(events(&out)[0]["value"], 20_001, "x + 20 000 more");
}

#[test]
fn a_line_over_the_script_limit_is_refused_and_the_next_line_answered() {
    // 65 MiB without a newline past the 64 MiB of a script: read to its end
    // without being kept, refused with a `limit` error, then the next line.
    let mut kernel = Kernel::start();
    kernel.run("x = 1");
    let mut long = "1".repeat(65 << 20);
    long.push('\n');
    let out = kernel.run_long(long.as_bytes(), "65 MiB of 1");
    expect![[r#"
        {"kind":"error","code":"limit","message":"line 2 of <stdin> is longer than 64 MiB (68157440 bytes), the limit for a script; it did not run","line":2,"column":1,"source":"<stdin>","help":"cut it into statements of their own (a long sum into partial sums)"}
        {"kind":"ready","line":2,"pending":false}
    "#]]
    .assert_eq(&out);
    // A statement of several lines is bounded as a whole: an open bracket,
    // then 64 MiB.
    kernel.run("y = (x +");
    let mut long = "1".repeat(64 << 20);
    long.push_str(")\n");
    let out = kernel.run_long(long.as_bytes(), "64 MiB of 1");
    expect![[r#"
        {"kind":"error","code":"limit","message":"the statement ending at line 4 of <stdin> is longer than 64 MiB, the limit for a script; it did not run","line":4,"column":1,"source":"<stdin>","help":"cut it into statements of their own (a long sum into partial sums); the line before it, which it goes on, did not run either"}
        {"kind":"ready","line":4,"pending":false}
    "#]]
    .assert_eq(&out);
    expect![[r#"
        {"kind":"value","value":2,"from":{"statement":2,"source":"<stdin>","line":5,"column":1}}
        {"kind":"ready","line":5,"pending":false}
    "#]]
    .assert_eq(&kernel.run("x + 1"));
}

#[test]
fn quit_gets_its_ready_and_ends_the_run() {
    let mut kernel = Kernel::start();
    expect![[r#"
        {"kind":"quit","from":{"statement":1,"source":"<stdin>","line":1,"column":1}}
        {"kind":"ready","line":1,"pending":false}
    "#]]
    .assert_eq(&kernel.run(":quit"));
    assert_eq!(kernel.child.wait().unwrap().code(), Some(0));
}

#[test]
fn continuation_lines_are_read_in_linear_time() {
    // 3000 lines of 300 bytes, each ending in `+`: re-scanning the lines
    // before each new one (as line mode did) takes minutes in a debug
    // build; scanning each once, a moment. The sum of 3000·75 ones and 1.
    let line = format!("{}1 +\n", "1 + ".repeat(74));
    let input = format!("s = {}1\n", line.repeat(3000));
    let text = stdout_of(&output_with_stdin(&["--json", "--lines"], input));
    let all = events(&text);
    let pending = all.iter().filter(|e| e["pending"] == true).count();
    assert_eq!(pending, 3000);
    assert_eq!(all[all.len() - 2]["value"], 225_001);
}

#[test]
fn line_mode_answers_each_line_before_the_next_is_written() {
    let mut kernel = Kernel::start();
    for (line, answer) in [
        (
            "x = 3",
            expect![[r#"
            {"kind":"value","name":"x","value":3,"from":{"statement":1,"source":"<stdin>","line":1,"column":1}}
            {"kind":"ready","line":1,"pending":false}
            "#]],
        ),
        // A comment makes no event but its `ready`; an open bracket waits.
        (
            "# the cube",
            expect![[r#"
            {"kind":"ready","line":2,"pending":false}
            "#]],
        ),
        (
            "y = (x^2",
            expect![[r#"
            {"kind":"ready","line":3,"pending":true}
            "#]],
        ),
        // d/dx x^3 = 3x^2 = 27 at x = 3; x^3 = 27 too, and 3^2 = 9.
        (
            "  *x)",
            expect![[r#"
            {"kind":"value","name":"y","value":27,"from":{"statement":2,"source":"<stdin>","line":3,"column":1}}
            {"kind":"ready","line":4,"pending":false}
            "#]],
        ),
        (
            ":grad",
            expect![[r#"
            {"kind":"grad","of":"y","wrt":"x","value":27,"from":{"statement":3,"source":"<stdin>","line":5,"column":1}}
            {"kind":"ready","line":5,"pending":false}
            "#]],
        ),
        // An error does not end the run; its line is the line of the input.
        (
            "x + z",
            expect![[r#"
            {"kind":"error","code":"unknown-name","message":"unknown name `z`","line":6,"column":5,"source":"<stdin>","help":"assign it first, e.g. `z = 1`","from":{"statement":4,"source":"<stdin>","line":6,"column":1}}
            {"kind":"ready","line":6,"pending":false}
            "#]],
        ),
        (
            "x^2",
            expect![[r#"
            {"kind":"value","value":9,"from":{"statement":5,"source":"<stdin>","line":7,"column":1}}
            {"kind":"ready","line":7,"pending":false}
            "#]],
        ),
    ] {
        answer.assert_eq(&kernel.run(line));
    }
    drop(kernel.stdin);
    let status = kernel.child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "a statement failed");
}

#[test]
fn line_mode_needs_json() {
    let output = output_with_stdin(&["--lines"], "1\n");
    assert_eq!(output.status.code(), Some(2));
    assert!(crate::util::stderr_of(&output).contains("--json"));
}

#[test]
fn a_listing_built_as_a_value_is_the_line_written_while_its_rows_are_made() {
    // `:serve` and the page take events as JSON values; `--json` writes
    // listings a row at a time. Both must give the same object.
    use gradcalc::render::json::{self, Place};
    use gradcalc::session::Session;
    let mut session = Session::new();
    let source = "a = 2; b = 1; e = (a + b)*(b + 1); :topo; :forward; :topo kahn; :trace";
    let events = crate::util::session_events(&mut session, source).unwrap();
    let place = Place {
        source,
        origin: "-e",
        lines_before: 0,
        statement: None,
    };
    let mut listings = 0;
    for event in &events {
        let mut line = Vec::new();
        json::write_event(&mut line, event, &session, &place).unwrap();
        let written: serde_json::Value = match line.is_empty() {
            true => continue,
            false => serde_json::from_slice(&line).unwrap(),
        };
        assert_eq!(json::event(event, &session, &place), Some(written.clone()));
        if written["nodes"].is_array() || written["steps"].is_array() {
            listings += 1;
        }
    }
    assert_eq!(listings, 4, "topo, forward, kahn and trace: {events:?}");
}

#[test]
fn a_repeat_whose_steps_make_the_output_leaves_step_0_blank() {
    // y does not exist before the first step: its column is blank at step 0
    // (x's 1 must not slide under y), and no note calls it non-finite. Each
    // step adds 1 to x, then y = x: x = 1, 2, 3 and y = -, 2, 3.
    let text = crate::util::transcript(&["-e", "x = 1; :repeat 2 x := x + 1; y = x"]);
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("  step"))
        .take(4)
        .collect();
    assert_eq!(
        table,
        [
            "  step  y  x",
            "     0     1",
            "     1  2  2",
            "     2  3  3"
        ],
        "{text}"
    );
    assert!(!text.contains("not finite"), "{text}");
    assert_contains(&text, "note: `y = …` rebinds y at every step");
}

#[test]
fn ctrl_c_inside_a_large_elementwise_op_answers_within_a_second_of_work() {
    // `x ^ y` of a 6000×1 column and a 1×6000 row is one elementwise node
    // of 3.6·10⁷ calls of `pow` (seconds of a test build): it runs in
    // blocks of 2²⁰ elements that look at Ctrl-C between two, so the line
    // answers after at most one block. Evidence that the op runs: 0.3 s of
    // CPU after the line was written (the operands are 6000 numbers each,
    // made in microseconds); from Ctrl-C to the answer one block (a few
    // tens of ms) and the answer, well under the second asked.
    let line = "s = sum((1.5 * ones(6000, 1)) ^ (0.5 * ones(1, 6000)))";
    ctrl_c_inside_one_op_answers_within(line, 0.3, 0.5);
}
