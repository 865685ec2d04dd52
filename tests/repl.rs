//! The interactive REPL in a pseudo-terminal, driven as a user types.

use std::process::Command;
use std::time::Duration;

use expectrl::process::unix::WaitStatus;
use expectrl::{ControlCode, Expect, Session};

/// Starts gradcalc on a pseudo-terminal with its history under `state`.
fn start(state: &std::path::Path) -> expectrl::session::OsSession {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gradcalc"));
    command
        .env("XDG_STATE_HOME", state)
        .env_remove("GRADCALC_HISTORY")
        .env("NO_COLOR", "1")
        .env("TERM", "xterm");
    let mut session = Session::spawn(command).expect("spawn gradcalc on a pty");
    session.set_expect_timeout(Some(Duration::from_secs(20)));
    session
}

/// Types one line and waits until `reply` has been printed.
fn line(session: &mut expectrl::session::OsSession, text: &str, reply: &str) {
    session.send_line(text).expect("send a line");
    session
        .expect(reply)
        .unwrap_or_else(|e| panic!("after {text:?}, expected {reply:?}: {e}"));
}

#[test]
fn the_fan_out_example_interactively() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = start(state.path());
    repl.expect("`:help`").expect("banner names :help");
    repl.expect("> ").expect("prompt");
    line(&mut repl, "x = 2", "x = 2");
    line(&mut repl, "y = 3", "y = 3");
    line(&mut repl, "z = x*y + x", "z = 8");
    line(&mut repl, ":grad", "∂z/∂x = 4");
    repl.expect("∂z/∂y = 2").expect("both gradients");
    line(
        &mut repl,
        ":trace",
        "grad 1 → 4   (2nd of 2 uses: accumulated)",
    );

    // An error does not end the session; a bracket left open continues the line.
    line(&mut repl, "tanhh(x)", "did you mean `tanh`?");
    line(&mut repl, "q = (x +", "… ");
    line(&mut repl, "y)", "q = 5");

    // Ctrl-C discards a half-typed line and keeps the variables.
    repl.send("w = 1000").unwrap();
    repl.send(ControlCode::EndOfText).unwrap();
    repl.expect("> ").unwrap();
    // rustyline drops what is typed before its next prompt after Ctrl-C.
    std::thread::sleep(Duration::from_millis(200));
    line(&mut repl, ":vars", "z = 8");
    repl.expect("> ").unwrap();

    // Ctrl-D on an empty line leaves with status 0.
    repl.send(ControlCode::EndOfTransmission).unwrap();
    let status = repl.get_process().wait().unwrap();
    assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");

    let history = std::fs::read_to_string(state.path().join("gradcalc/history")).unwrap();
    assert!(history.contains("z = x*y + x"), "{history}");
    assert!(
        !history.contains("w = 1000"),
        "a discarded line is not history: {history}"
    );
}

#[test]
fn quit_leaves_with_status_0() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = start(state.path());
    repl.expect("> ").unwrap();
    line(&mut repl, "1/0", "warning: division by zero gives inf");
    repl.send_line(":quit").unwrap();
    let status = repl.get_process().wait().unwrap();
    assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
}
