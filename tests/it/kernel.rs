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
struct Kernel {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Kernel {
    fn start() -> Kernel {
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
    fn run(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        let mut out = String::new();
        loop {
            let event = self
                .lines
                .recv_timeout(TIMEOUT)
                .unwrap_or_else(|e| panic!("after {line:?}, no `ready` ({e}); so far:\n{out}"));
            out.push_str(&event);
            out.push('\n');
            if event.starts_with(r#"{"kind":"ready""#) {
                return out;
            }
        }
    }
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
