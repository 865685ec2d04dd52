//! `:step` on a terminal takes the page's keys, read one at a time: → and
//! Space the next step, ← and Backspace back, Home the first, End the last,
//! q, Esc and Ctrl-C end the walk; each step drawn is `:trace`'s step of
//! that number, and the terminal is in line mode again after.

use std::time::Duration;

use crate::pty::{Repl, strip_ansi};

/// The keys as xterm sends them (`Esc O C` in its application cursor mode,
/// `Esc [ 1 ~` and `Esc [ 4 ~` for Home and End as the Linux console does).
const RIGHT: &str = "\u{1b}[C";
const RIGHT_APP: &str = "\u{1b}OC";
const LEFT: &str = "\u{1b}[D";
const HOME: &str = "\u{1b}[H";
const END: &str = "\u{1b}[F";
const HOME_CONSOLE: &str = "\u{1b}[1~";
const END_CONSOLE: &str = "\u{1b}[4~";
const BACKSPACE: &str = "\u{7f}";
const ESC: &str = "\u{1b}";

/// The steps printed in `text`, `[K] …` with their indented lines, each as
/// (K, its words joined by one space: wrapping aside, the same text).
fn printed_steps(text: &str) -> Vec<(usize, String)> {
    let mut steps: Vec<(usize, String)> = Vec::new();
    let mut open = false;
    for line in strip_ansi(text).split(['\r', '\n']) {
        let number = line
            .strip_prefix('[')
            .and_then(|rest| rest.split_once(']'))
            .and_then(|(k, _)| k.parse::<usize>().ok());
        if let Some(k) = number {
            steps.push((k, line.to_string()));
            open = true;
        } else if open && line.starts_with(' ') {
            let (_, text) = steps.last_mut().unwrap();
            text.push(' ');
            text.push_str(line);
        } else if !line.is_empty() {
            open = false;
        }
    }
    for (_, text) in &mut steps {
        *text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    steps
}

/// Karpathy's neuron (examples/neuron.calc) loaded, and its `:trace`'s
/// steps: ten, from o down to x1.
fn neuron() -> (Repl, tempfile::TempDir, Vec<String>) {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/neuron.calc");
    repl.line(&format!(":load {file}"), "∂o/∂b = 0.5");
    repl.prompt();
    repl.send_line(":trace");
    let trace = repl.expect("[10] x1 leaf = 2   ∂o/∂x1 = -1.5");
    repl.prompt();
    let steps = printed_steps(&trace);
    let numbers: Vec<usize> = steps.iter().map(|(k, _)| *k).collect();
    assert_eq!(numbers, (1..=10).collect::<Vec<_>>());
    (
        repl,
        state,
        steps.into_iter().map(|(_, text)| text).collect(),
    )
}

/// Presses `keys` and checks that step `k` of 10 is drawn, as `:trace`
/// printed it (`trace`).
fn press(repl: &mut Repl, keys: &str, k: usize, trace: &[String]) {
    repl.send(keys);
    let seen = repl.expect(&format!("step {k}/10"));
    let steps = printed_steps(&seen);
    assert_eq!(steps.len(), 1, "{keys:?} drew {steps:?}");
    assert_eq!(steps[0], (k, trace[k - 1].clone()), "after {keys:?}");
}

#[test]
fn the_page_keys_walk_the_trace_step_by_step() {
    let (mut repl, _state, trace) = neuron();
    // [2] is the sum n, [3] the bias b with ∂o/∂b = 0.5, [9] w1 with 1.
    assert!(trace[2].starts_with("[3] b leaf = 6.881373587 ∂o/∂b = 0.5"));
    assert!(trace[8].starts_with("[9] w1 leaf = -3 ∂o/∂w1 = 1"));
    press(&mut repl, ":step\r", 1, &trace);
    press(&mut repl, RIGHT, 2, &trace);
    press(&mut repl, " ", 3, &trace);
    press(&mut repl, RIGHT_APP, 4, &trace);
    press(&mut repl, LEFT, 3, &trace);
    press(&mut repl, BACKSPACE, 2, &trace);
    press(&mut repl, END, 10, &trace);
    press(&mut repl, HOME, 1, &trace);
    press(&mut repl, END_CONSOLE, 10, &trace);
    press(&mut repl, HOME_CONSOLE, 1, &trace);
    // The typed answers of the line prompt still work: `g N`, `N`, `b`, Enter.
    press(&mut repl, "g 5\r", 5, &trace);
    press(&mut repl, "9\r", 9, &trace);
    press(&mut repl, "b\r", 8, &trace);
    press(&mut repl, "\r", 9, &trace);
    press(&mut repl, RIGHT, 10, &trace);
    // → at the last step ends the walk, and says so.
    repl.send(RIGHT);
    repl.expect("(the backward pass is done: all 10 steps shown; `:step` starts it again)");
    repl.prompt();
    repl.line("o + 1", "1.707106781");
    repl.prompt();
    repl.leave();
}

#[test]
fn q_esc_and_ctrl_c_end_the_walk_and_give_the_terminal_back() {
    let (mut repl, _state, trace) = neuron();
    for (key, at) in [("q", 1), (ESC, 2), ("\u{3}", 3)] {
        press(&mut repl, ":step\r", 1, &trace);
        for k in 2..=at {
            press(&mut repl, RIGHT, k, &trace);
        }
        repl.send(key);
        repl.expect(&format!(
            "(stopped at step {at}/10: the walk has ended; `:step` starts it again)"
        ));
        repl.prompt();
    }
    // The terminal is back in line mode while a statement runs: Ctrl-C is a
    // signal again, and stops a long evaluation (`Repl::interrupt` waits for
    // line mode with signals on).
    repl.send_line(&crate::repl::doubling_functions());
    repl.prompt();
    repl.interrupt("y = d18(o) + d17(o)", Duration::from_millis(100));
    repl.line("o", "0.7071067812");
    repl.leave();
}

/// With the input not a terminal (`… | gradcalc`, a script), `:step` reads
/// no keys: it prints what `:trace` prints, and the statements after it run.
#[test]
fn with_input_from_a_pipe_step_prints_the_trace() {
    let statements = "x = 2; b = 3; y = x*b\n";
    let run = |command: &str| {
        let out = crate::util::output_with_stdin(
            &[] as &[&str],
            format!("{statements}{command}\ny + 1\n"),
        );
        assert!(out.status.success());
        crate::util::stdout_of(&out)
    };
    let (step, trace) = (run(":step"), run(":trace"));
    assert!(step.contains("[2] b leaf = 3   ∂y/∂b = 2"), "{step}");
    assert!(step.ends_with("\n7\n"), "{step}");
    assert_eq!(step, trace);
}
