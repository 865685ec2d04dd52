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
        .env("LC_ALL", "C.UTF-8")
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

/// Starts gradcalc on a pseudo-terminal with extra arguments and environment.
fn start_with(
    state: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> expectrl::session::OsSession {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gradcalc"));
    command
        .args(args)
        .env("XDG_STATE_HOME", state)
        .env_remove("GRADCALC_HISTORY")
        .env_remove("NO_COLOR")
        .env("LC_ALL", "C.UTF-8")
        .env("TERM", "xterm");
    for (key, value) in env {
        command.env(key, value);
    }
    let mut session = Session::spawn(command).expect("spawn gradcalc on a pty");
    session.set_expect_timeout(Some(Duration::from_secs(20)));
    session
}

/// Waits for `text` and returns everything printed up to and including it.
fn until(session: &mut expectrl::session::OsSession, text: &str) -> String {
    let found = session
        .expect(text)
        .unwrap_or_else(|e| panic!("expected {text:?}: {e}"));
    let mut seen = String::from_utf8_lossy(found.before()).into_owned();
    seen.push_str(text);
    seen
}

/// True when `text` holds an ANSI colour (SGR) sequence `ESC [ … m`.
fn has_colour(text: &str) -> bool {
    text.split('\u{1b}').skip(1).any(|rest| {
        rest.strip_prefix('[').is_some_and(|csi| {
            let end = csi.find(|c: char| !(c.is_ascii_digit() || c == ';'));
            end.is_some_and(|i| csi[i..].starts_with('m'))
        })
    })
}

#[test]
fn tab_completes_commands_and_variables() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = start(state.path());
    repl.expect("> ").unwrap();
    line(&mut repl, "weight = 3", "weight = 3");
    line(&mut repl, "y = weight*weight", "y = 9");
    // `:gr⇥` completes the common prefix `:gra`; a second ⇥ lists `grad` and `graph`.
    repl.send(":gr\t").unwrap();
    repl.expect(":gra").unwrap();
    repl.send("\t").unwrap();
    repl.expect("graph").unwrap();
    line(&mut repl, "d", "∂y/∂weight = 6");
    // `:tr⇥` has one completion: `:trace`.
    repl.send(":tr\t").unwrap();
    repl.expect(":trace").unwrap();
    line(&mut repl, "", "upstream 1");
    // `wei⇥` completes the variable name.
    repl.send("q = wei\t").unwrap();
    repl.expect("weight").unwrap();
    line(&mut repl, " * 7", "q = 21");
}

#[test]
fn history_survives_a_restart() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = start(state.path());
    repl.expect("> ").unwrap();
    line(&mut repl, "answer = 41 + 1", "answer = 42");
    repl.send(ControlCode::EndOfTransmission).unwrap();
    repl.get_process().wait().unwrap();

    let mut repl = start(state.path());
    repl.expect("> ").unwrap();
    // Up arrow recalls the line typed in the earlier session.
    repl.send("\u{1b}[A").unwrap();
    repl.expect("answer = 41 + 1").unwrap();
    line(&mut repl, "", "answer = 42");
}

#[test]
fn no_color_means_no_colour_codes() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = start_with(state.path(), &[], &[("NO_COLOR", "1")]);
    let mut seen = until(&mut repl, "> ");
    repl.send_line("x = 2; z = x*x + tanhh(x)").unwrap();
    seen += &until(&mut repl, "did you mean");
    repl.send_line("z = x*x; :grad; :trace").unwrap();
    seen += &until(&mut repl, "∂z/∂x = 4");
    seen += &until(&mut repl, "> ");
    assert!(!has_colour(&seen), "{seen:?}");

    // With colour forced, values and the prompt are coloured.
    let mut repl = start_with(state.path(), &["--color", "always"], &[]);
    let mut seen = until(&mut repl, "`:help`");
    repl.send_line("x = 2").unwrap();
    seen += &until(&mut repl, "x");
    seen += &until(&mut repl, "> ");
    assert!(has_colour(&seen), "{seen:?}");
}

#[test]
fn step_advances_one_node_per_enter() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = start(state.path());
    repl.expect("> ").unwrap();
    line(&mut repl, "x = 2; y = 3; z = x*y + 1", "z = 7");
    // z, x*y, y and x: the constant 1 is neither shown nor counted.
    line(
        &mut repl,
        ":step",
        "4 nodes in reverse topological order (1 constant not shown)",
    );
    repl.expect("[1] z = ").unwrap();
    repl.expect("step 1/4").unwrap();
    line(&mut repl, "", "[2] ");
    repl.expect("step 2/4").unwrap();
    line(&mut repl, "q", "(stopped)");
    // The session goes on.
    line(&mut repl, "z + 1", "8");
}

#[test]
fn save_and_load_reproduce_a_session() {
    let state = tempfile::tempdir().unwrap();
    let file = state.path().join("lesson.calc");
    let file = file.to_str().unwrap();
    let mut repl = start(state.path());
    repl.expect("> ").unwrap();
    line(&mut repl, "x = 2; f(t) = t^2 + x", "x = 2");
    line(&mut repl, "z = f(x)", "z = 6");
    line(&mut repl, &format!(":save {file}"), "saved 3 statements");
    line(&mut repl, ":reset", "session cleared");
    line(&mut repl, &format!(":load {file}"), "z = 6");
    line(&mut repl, ":grad", "∂z/∂x = 5");

    std::fs::write(file, "a = 1\nb = a +* 2\n").unwrap();
    line(&mut repl, &format!(":load {file}"), "a = 1");
    repl.expect(format!("{file}:2:")).unwrap();
    line(&mut repl, "a + 1", "2");
}

#[test]
fn the_value_is_previewed_while_typing_and_nothing_runs() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = start(state.path());
    repl.expect("> ").unwrap();
    line(&mut repl, "x = 2", "x = 2");
    repl.send("y = x * 21").unwrap();
    repl.expect("= 42").expect("a preview of the value");
    // Ctrl-C drops the line: the preview bound nothing.
    repl.send(ControlCode::EndOfText).unwrap();
    repl.expect("> ").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    line(&mut repl, "y", "unknown name `y`");
}

#[test]
fn a_non_utf8_locale_writes_ascii() {
    let output = Command::new(env!("CARGO_BIN_EXE_gradcalc"))
        .args(["-e", "x = 2; z = x*x; :grad"])
        .env("LC_ALL", "C")
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("dz/dx = 4"), "{text}");
    assert!(text.is_ascii() && !text.contains('\u{1b}'), "{text:?}");
}

#[test]
fn a_history_file_that_is_a_directory_warns_once_and_the_session_goes_on() {
    let state = tempfile::tempdir().unwrap();
    let history = state.path().join("history-dir");
    std::fs::create_dir(&history).unwrap();
    let history = history.to_str().unwrap().to_string();
    let mut repl = start_with(
        state.path(),
        &[],
        &[("GRADCALC_HISTORY", &history), ("NO_COLOR", "1")],
    );
    let mut printed = until(&mut repl, "> ");
    repl.send_line("x = 2").unwrap();
    printed += &until(&mut repl, "x = 2\r\n");
    repl.send_line("x^2").unwrap();
    printed += &until(&mut repl, "4\r\n");
    let warnings = printed.matches("warning: history").count();
    repl.send_line(":quit").unwrap();
    let status = repl.get_process().wait().unwrap();
    assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
    assert_eq!(warnings, 1, "{printed}");
    assert!(
        std::path::Path::new(&history).is_dir(),
        "the directory is left alone"
    );
}

#[test]
fn save_to_a_missing_directory_is_an_error_and_the_session_goes_on() {
    let state = tempfile::tempdir().unwrap();
    let missing = state.path().join("no/such/dir/session.calc");
    let mut repl = start(state.path());
    repl.expect("> ").unwrap();
    line(&mut repl, "x = 2", "x = 2");
    line(
        &mut repl,
        &format!(":save {}", missing.display()),
        "cannot write",
    );
    line(&mut repl, "x + 1", "3");
    assert!(!missing.exists());
}
