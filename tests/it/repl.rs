//! The interactive REPL in a pseudo-terminal, driven as a user types (the
//! `Repl` helper of `pty`: every wait is for text on the screen, with a
//! generous ceiling).

use std::process::Command;
use std::time::Duration;

use crate::pty::{self, Repl, has_colour, strip_ansi};
use crate::util::{assert_contains, assert_ends_with, folder_with};

#[test]
fn the_fan_out_example_interactively() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::spawn(pty::command(state.path()));
    repl.expect("`:help`");
    repl.prompt();
    repl.line("x = 2", "x = 2");
    repl.line("y = 3", "y = 3");
    repl.line("z = x*y + x", "z = 8");
    repl.line(":grad", "∂z/∂x = 4");
    repl.expect("∂z/∂y = 2");
    repl.line(":trace", "grad 1 → 4   (2nd of 2 uses: accumulated)");

    // An error does not end the session; a bracket left open continues the line.
    repl.line("tanhh(x)", "did you mean `tanh`?");
    repl.line("q = (x +", "… ");
    repl.line("y)", "q = 5");
    repl.prompt();

    // Ctrl-C discards a half-typed line and keeps the variables.
    repl.send("w = 1000");
    repl.expect("w = 1000");
    repl.ctrl_c();
    repl.prompt();
    repl.line(":vars", "z = 8");
    repl.prompt();

    // Ctrl-D on an empty line leaves with status 0.
    repl.ctrl_d();
    repl.exits_with_0();

    let history = std::fs::read_to_string(state.path().join("gradcalc/history")).unwrap();
    assert_contains(&history, "z = x*y + x");
    assert!(
        !history.contains("w = 1000"),
        "a discarded line is not history: {history}"
    );
}

#[test]
fn quit_leaves_with_status_0() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.line("1/0", "warning: division by zero gives inf");
    repl.leave();
}

/// [`pty::command`] with `args`, `NO_COLOR` removed and `env` added.
fn command_with(state: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = pty::command(state);
    command.args(args).env_remove("NO_COLOR");
    for (key, value) in env {
        command.env(key, value);
    }
    command
}

#[test]
fn tab_completes_commands_and_variables() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.line("weight = 3", "weight = 3");
    repl.line("y = weight*weight", "y = 9");
    // `:gr⇥` completes the common prefix `:gra`; a second ⇥ lists `grad` and `graph`.
    repl.complete(":gr\t", ":gra");
    repl.complete("\t", "graph");
    repl.line("d", "∂y/∂weight = 6");
    // `:tr⇥` has one completion: `:trace`.
    repl.complete(":tr\t", ":trace");
    repl.line("", "upstream 1");
    // `wei⇥` completes the variable name.
    repl.complete("q = wei\t", "weight");
    repl.line(" * 7", "q = 21");
}

/// The command table says what each argument is: Tab completes a variable name
/// after `:paths` and a file name after `:load`.
#[test]
fn tab_completes_arguments_as_the_command_table_says() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("lesson_one.calc"), "x = 5\n").unwrap();
    let mut command = pty::command(state.path());
    command.current_dir(work.path());
    let mut repl = Repl::spawn(command);
    repl.prompt();
    repl.line("weight = 3", "weight = 3");
    repl.line("y = weight*weight", "y = 9");
    repl.complete(":paths wei\t", "weight");
    // ∂y/∂weight along each of the two uses of weight: 3 + 3 = 6.
    repl.line("", "sum = 6");
    repl.complete(":load less\t", "lesson_one.calc");
    repl.line("", "x = 5");
    repl.leave();
}

#[test]
fn history_survives_a_restart() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.line("answer = 41 + 1", "answer = 42");
    // Ctrl-D only once the editor reads again: typed before the prompt, the
    // terminal's cooked mode would take it as its own end-of-file.
    repl.expect("> ");
    repl.ctrl_d();
    repl.exits_with_0();

    let mut repl = Repl::start(state.path());
    // Up arrow recalls the line typed in the earlier session.
    repl.send("\u{1b}[A");
    repl.expect("answer = 41 + 1");
    repl.line("", "answer = 42");
}

#[test]
fn no_color_means_no_colour_codes() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::spawn(command_with(state.path(), &[], &[("NO_COLOR", "1")]));
    let mut seen = repl.expect("> ");
    repl.send_line("x = 2; z = x*x + tanhh(x)");
    seen += &repl.expect("did you mean");
    repl.send_line("z = x*x; :grad; :trace");
    seen += &repl.expect("∂z/∂x = 4");
    seen += &repl.expect("> ");
    assert!(!has_colour(&seen), "{seen:?}");

    // With colour forced, values and the prompt are coloured.
    let mut repl = Repl::spawn(command_with(state.path(), &["--color", "always"], &[]));
    let mut seen = repl.expect("`:help`");
    repl.send_line("x = 2");
    seen += &repl.expect("x");
    seen += &repl.expect("> ");
    assert!(has_colour(&seen), "{seen:?}");
}

#[test]
fn step_advances_one_node_per_enter() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.line("x = 2; y = 3; z = x*y + 1", "z = 7");
    // z, x*y, y and x: the constant 1 is neither shown nor counted.
    repl.line(":step", "4 nodes in reverse topological order");
    repl.expect("shown); upstream");
    repl.expect("[1] z = ");
    repl.expect("step 1/4");
    repl.line("", "[2] ");
    repl.expect("step 2/4");
    repl.line("q", "(stopped at step");
    // The session goes on.
    repl.line("z + 1", "8");
}

/// Enter at the last step ends `:step` and says so; a lone `b` typed right
/// after (meant as "back") is not run as the variable b, and says why.
#[test]
fn step_says_when_the_walk_has_ended_and_catches_a_late_b() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.line("x = 2; b = 3; y = x*b", "y = 6");
    repl.line(":step", "step 1/3");
    repl.line("", "step 2/3");
    repl.line("", "step 3/3, the last: → ends");
    repl.line(
        "",
        "(the backward pass is done: all 3 steps shown; `:step` starts it again)",
    );
    repl.line("b", "(`b` was not run: `:step` had ended");
    // Typed again, it runs: b = 3.
    repl.line("b", "3");
    repl.line(":help step", "← or Backspace back");
    repl.leave();
}

#[test]
fn step_goes_back_and_jumps_to_a_step() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    // colah's e = (a + b)(b + 1) at a = 2, b = 1: five steps (e, d, c, b, a);
    // b's gradient is 3 after step 2 (from d) and 3 + 2 = 5 after step 3.
    repl.line("a = 2; b = 1; c = a + b; d = b + 1; e = c*d", "e = 6");
    repl.line(":step", "step 1/5: → next, ← back, Home, End, q quits");
    repl.line("", "step 2/5");
    repl.line("", "grad 3 → 5   (2nd of 2 uses: accumulated)");
    repl.expect("step 3/5");
    // Back: step 2 is drawn again, b's first use (grad 0 → 3).
    repl.line("b", "[2] d = b + 1 = 2   upstream 3");
    repl.expect("grad 0 → 3   (1st of 2 uses)");
    repl.expect("step 2/5");
    repl.line("g 5", "[5] a leaf = 2   ∂e/∂a = 2");
    repl.expect("step 5/5, the last: → ends, ← back");
    repl.line("g 9", "(no step 9 to show: the steps shown are 1 to 5)");
    repl.expect("step 5/5");
    repl.line("3", "[3] c = a + b = 3   upstream 2");
    repl.expect("step 3/5");
    repl.line("q", "(stopped at step");
    repl.line("e + 1", "7");
    repl.leave();
}

#[test]
fn step_shows_a_call_as_one_step_unless_expanded() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    // Karpathy's neuron: o = tanh(x·w + b) = 1/√2, ∂o/∂(x·w + b) = 1 - o² =
    // 0.5, so ∂o/∂x = 0.5·w = -1.5, ∂o/∂w = 0.5·x = 1, ∂o/∂b = 0.5.
    repl.line("n(x, w, b) = tanh(x*w + b)", "defined n(x, w, b)");
    repl.line(
        "x = 2; w = -3; b = 6.8813735870195432; o = n(x, w, b)",
        "o = 0.7071067812",
    );
    // The call and the three leaves.
    repl.line(":step", "from o: 4 nodes");
    repl.expect("[1] o = n(x, w, b) = 0.7071067812   upstream 1");
    repl.expect("→ x: local ∂n(x, w, b)/∂x = -1.5;");
    repl.expect("step 1/4");
    repl.line("g 4", "[4] x leaf = 2   ∂o/∂x = -1.5");
    repl.expect("step 4/4");
    repl.line("b", "[3] w leaf = -3   ∂o/∂w = 1");
    repl.expect("step 3/4");
    repl.line("q", "(stopped at step");
    // Expanded: tanh, the sum and the product too, the same gradients.
    repl.line(":step --expand", "from o: 6 nodes");
    repl.expect("[1] o = tanh(n1.add) = 0.7071067812   upstream 1");
    repl.expect("step 1/6");
    repl.line("g 6", "[6] x leaf = 2   ∂o/∂x = -1.5");
    repl.expect("step 6/6");
    repl.line("q", "(stopped at step");
    repl.leave();
}

#[test]
fn step_wraps_like_trace_and_leaves_no_prompts_in_the_scrollback() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    // Long names make every trace line wider than the pseudo-terminal's 80 columns.
    repl.line(
        "first_long_input_name = 2; second_long_input_name = 3",
        "second_long_input_name = 3",
    );
    repl.line(
        "product_of_the_two_inputs = first_long_input_name * second_long_input_name",
        "= 6",
    );
    repl.send_line(":step");
    let first = repl.expect("step 1/3");
    repl.send_line("");
    let second = repl.expect("step 2/3");
    // Enter took the answered prompt off the screen: back to the start of
    // its line, clear it.
    assert!(second.contains("\r\u{1b}[2K"), "{second:?}");
    for text in [&first, &second] {
        // A row ends at a newline, or where the prompt was cleared.
        for row in text.split(['\r', '\n']) {
            let plain: String = strip_ansi(row);
            assert!(
                plain.chars().count() <= 80,
                "{} columns: {plain:?}",
                plain.chars().count()
            );
        }
    }
    repl.line("q", "(stopped at step");
}

#[test]
fn save_and_load_reproduce_a_session() {
    let state = tempfile::tempdir().unwrap();
    let file = state.path().join("lesson.calc");
    let file = file.to_str().unwrap();
    let mut repl = Repl::start(state.path());
    repl.line("x = 2; f(t) = t^2 + x", "x = 2");
    repl.line("z = f(x)", "z = 6");
    repl.line(&format!(":save {file}"), "saved 3 statements");
    repl.line(":reset", "session cleared");
    repl.line(&format!(":load {file}"), "z = 6");
    repl.line(":grad", "∂z/∂x = 5");

    std::fs::write(file, "a = 1\nb = a +* 2\n").unwrap();
    repl.line(&format!(":load {file}"), "a = 1");
    repl.expect(&format!("{file}:2:"));
    repl.line("a + 1", "2");
}

#[test]
fn the_value_is_previewed_while_typing_and_nothing_runs() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.line("x = 2", "x = 2");
    repl.send("y = x * 21");
    repl.expect("= 42");
    // Ctrl-C drops the line: the preview bound nothing.
    repl.ctrl_c();
    repl.prompt();
    repl.line("y", "unknown name `y`");
}

#[test]
fn a_continuation_line_previews_the_whole_statement() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.line("100 * (", "… ");
    // The statement is still open: `2 + 4` alone (= 6) must not be previewed.
    repl.send("2 + 4");
    repl.expect("2 + 4");
    repl.send(")");
    let seen = repl.expect("= 600");
    let before = seen.strip_suffix("= 600").unwrap();
    assert!(!before.contains("= 6"), "{before:?}");
    repl.line("", "600");
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
    assert_contains(&text, "dz/dx = 4");
    assert!(text.is_ascii() && !text.contains('\u{1b}'), "{text:?}");
}

#[test]
fn a_history_file_that_is_a_directory_warns_once_and_the_session_goes_on() {
    let state = tempfile::tempdir().unwrap();
    let history = state.path().join("history-dir");
    std::fs::create_dir(&history).unwrap();
    let history = history.to_str().unwrap();
    let mut repl = start_with_history(state.path(), history);
    let mut printed = repl.expect("> ");
    repl.send_line("x = 2");
    printed += &repl.expect("x = 2\r\n");
    repl.send_line("x^2");
    printed += &repl.expect("4\r\n");
    let warnings = printed.matches("warning: history").count();
    repl.send_line(":quit");
    repl.exits_with_0();
    assert_eq!(warnings, 1, "{printed}");
    assert!(
        std::path::Path::new(history).is_dir(),
        "the directory is left alone"
    );
}

#[test]
fn save_to_a_missing_directory_is_an_error_and_the_session_goes_on() {
    let state = tempfile::tempdir().unwrap();
    let missing = state.path().join("no/such/dir/session.calc");
    let mut repl = Repl::start(state.path());
    repl.line("x = 2", "x = 2");
    repl.line(&format!(":save {}", missing.display()), "cannot write");
    repl.line("x + 1", "3");
    assert!(!missing.exists());
}

/// Starts gradcalc on a pseudo-terminal with `GRADCALC_HISTORY` set to
/// `history` and `dir` as its current directory and its `XDG_STATE_HOME`.
fn start_with_history(dir: &std::path::Path, history: &str) -> Repl {
    let mut command = pty::command(dir);
    command.current_dir(dir).env("GRADCALC_HISTORY", history);
    Repl::spawn(command)
}

#[test]
fn two_repls_sharing_a_history_file_keep_each_others_lines() {
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history");
    let path = history.to_str().unwrap();
    let mut a = start_with_history(dir.path(), path);
    let mut b = start_with_history(dir.path(), path);
    a.expect("> ");
    b.expect("> ");
    a.line("first = 1", "first = 1");
    b.line("second = 2", "second = 2");
    a.line("third = 3", "third = 3");
    b.line("fourth = (4 +\n0)", "fourth = 4");
    a.leave();
    b.leave();
    let text = std::fs::read_to_string(&history).unwrap();
    for entry in ["first = 1", "second = 2", "third = 3", "fourth = (4 +\\n0)"] {
        assert!(text.lines().any(|l| l == entry), "{entry}: {text}");
    }
    assert!(text.starts_with("#V2\n"), "{text}");
    // A new REPL reads them back: Up recalls the newest entry.
    let mut c = start_with_history(dir.path(), path);
    c.prompt();
    c.send("\x1b[A");
    c.expect(":quit");
    c.send("\r");
    c.exits_with_0();
}

#[test]
fn a_history_path_that_is_not_a_regular_file_is_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let file = dir.path().join("real");
    std::fs::write(&file, "#V2\nkept = 1\n").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    for path in [&fifo, &link] {
        let mut repl = start_with_history(dir.path(), path.to_str().unwrap());
        let seen = repl.expect("> ");
        assert_contains(&seen, "not a regular file; history is off");
        repl.line("y = 7", "y = 7");
        repl.leave();
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "#V2\nkept = 1\n");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // Empty or `off`: no history file at all, not even the default one.
    for off in ["", "off"] {
        let mut repl = start_with_history(dir.path(), off);
        repl.prompt();
        repl.line("z = 8", "z = 8");
        repl.leave();
        assert!(!dir.path().join(off).join("history").exists());
        assert!(!dir.path().join("off").exists());
        assert!(!dir.path().join("gradcalc").exists(), "no default history");
    }
}

#[test]
fn a_damaged_history_file_warns_once_and_keeps_saving() {
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history");
    std::fs::write(&history, b"#V2\nold = 1\n\xff\xfe bad\nolder = 2\n").unwrap();
    let mut repl = start_with_history(dir.path(), history.to_str().unwrap());
    let seen = repl.expect("> ");
    assert_eq!(seen.matches("warning").count(), 1, "{seen}");
    assert_contains(&seen, "1 damaged line skipped");
    repl.line("fresh = 3", "fresh = 3");
    repl.leave();
    let bytes = std::fs::read(&history).unwrap();
    // Appended, not rewritten: the damaged line is still there, untouched.
    assert!(bytes.starts_with(b"#V2\nold = 1\n\xff\xfe bad\nolder = 2\n"));
    let text = String::from_utf8_lossy(&bytes);
    assert_ends_with(&text, "fresh = 3\n:quit\n");
}

#[test]
fn replacing_a_file_asks_first() {
    let (dir, lesson) = folder_with("lesson.calc", "x = 1\n");
    let mut repl = start_with_history(dir.path(), "off");
    repl.prompt();
    repl.line("x = 5", "x = 5");
    repl.line(":save lesson.calc", "replace it? [y/N]");
    repl.line("n", "already exists");
    assert_eq!(std::fs::read_to_string(&lesson).unwrap(), "x = 1\n");
    repl.line(":save lesson.calc", "replace it? [y/N]");
    repl.line("y", "saved 1 statement to lesson.calc");
    repl.leave();
    let saved = std::fs::read_to_string(&lesson).unwrap();
    assert_eq!(
        saved.lines().skip(1).collect::<Vec<_>>(),
        ["x = 5"],
        "{saved}"
    );
}

#[test]
fn repeat_asks_about_an_existing_file_before_its_first_step() {
    let (dir, plot) = folder_with("r.svg", "old\n");
    let mut repl = start_with_history(dir.path(), "off");
    repl.prompt();
    repl.line("x = 1", "x = 1");
    // `n`: the file is kept and no step ran (x is still 1, so x + 41 is 42).
    repl.line(
        ":repeat 2 r.svg x := x + 1",
        "r.svg exists; replace it? [y/N]",
    );
    repl.line("n", "nothing ran");
    repl.line("x + 41", "42");
    assert_eq!(std::fs::read_to_string(&plot).unwrap(), "old\n");
    // `y`: both steps run (x = 3) and the file is replaced, asked once.
    repl.line(":repeat 2 r.svg x := x + 1", "replace it? [y/N]");
    repl.send_line("y");
    let seen = repl.expect("> ");
    assert!(!seen.contains("replace it?"), "{seen}");
    repl.line("x + 41", "44");
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    // A `:load`ed script is not asked about its files: refused, nothing ran.
    std::fs::write(dir.path().join("s.calc"), ":repeat 2 r.svg x := x + 1\n").unwrap();
    let seen = repl.line(":load s.calc", "nothing ran");
    assert!(!seen.contains("replace it?"), "{seen}");
    repl.line("x + 41", "44");
    repl.leave();
    assert_eq!(std::fs::read_to_string(&plot).unwrap(), svg);
}

#[test]
fn lines_typed_ahead_of_a_plain_start_get_no_note_about_stdin() {
    // A shell reads `go` and starts plain `gradcalc` with the next line
    // already typed: neither -e nor a FILE was given, so there is no note
    // that "standard input is not read", and the line runs in the REPL.
    let state = tempfile::tempdir().unwrap();
    let command = pty::command_in_shell(state.path(), "read -r go && exec \"$0\"");
    let mut repl = Repl::spawn(command);
    repl.send("go\nx = 41 + 1\n");
    let seen = repl.expect("x = 42");
    assert!(!seen.contains("standard input"), "{seen}");
    assert!(seen.contains("gradcalc 0."), "the banner: {seen}");
    repl.leave();
}

#[test]
fn a_dumb_terminal_gets_no_colour() {
    let state = tempfile::tempdir().unwrap();
    let mut repl =
        Repl::spawn(command_with(state.path(), &[], &[("TERM", "dumb")])).without_editor_marks();
    repl.line("x = 2", "x = 2");
    repl.line("tanh(x) + x", "2.96");
    let seen = repl.expect("> ");
    assert!(!has_colour(&seen), "{seen:?}");
    repl.leave();
}

#[test]
fn output_to_a_file_from_a_terminal_has_no_editor_decorations() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("log");
    let mut command = Command::new("sh");
    command
        .args(["-c", "exec \"$0\" > \"$1\""])
        .arg(env!("CARGO_BIN_EXE_gradcalc"))
        .arg(&out)
        .env("GRADCALC_HISTORY", "off")
        .env_remove("NO_COLOR")
        .env("LC_ALL", "C.UTF-8")
        .env("TERM", "xterm");
    let mut repl = Repl::spawn(command).without_editor_marks();
    repl.prompt();
    repl.send_line("x = 2");
    repl.expect("> ");
    repl.send_line("y = (x +");
    repl.expect(".. ");
    repl.send_line("1)");
    repl.expect("> ");
    repl.send_line(":grad x");
    repl.expect("> ");
    repl.send_line(":quit");
    repl.exits_with_0();
    // Exactly the results: no banner, prompt, preview or escape code.
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "x = 2\ny = 3\n∂y/∂x = 1\n"
    );
}

#[test]
fn precision_changes_the_digits_for_the_rest_of_the_session() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    // 2/3 = 0.666…: 10 digits by default, 3 after `:precision 3`, and the
    // shortest round-trip text (17 significant digits, 0.6666666666666666) after
    // `:precision full`.
    repl.line("x = 2/3", "x = 0.6666666667");
    repl.line(":precision 3", "3 significant digits");
    repl.line("y = x*x", "y = 0.444\r\n");
    repl.line(":step", "[1] y = x * x = 0.444");
    repl.line("q", "(stopped at step");
    repl.line(":precision full", "full precision");
    repl.line("x", "0.6666666666666666\r\n");
    repl.line(":precision 18", "from 1 to 17, or `full`");
}

#[test]
fn a_markdown_table_is_never_wrapped_at_the_terminal_width() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::spawn(command_with(
        state.path(),
        &[],
        &[("NO_COLOR", "1"), ("COLUMNS", "40")],
    ));
    repl.expect("> ");
    repl.line("x_long_name = 2", "x_long_name = 2");
    repl.line("y_long_name = x_long_name*x_long_name + 1", "= 5");
    repl.send_line(":trace md");
    let seen = strip_ansi(&repl.expect("| ∂y\\_long\\_name/∂x\\_long\\_name = 4 |"));
    // Every row of the table is one line: it starts and ends with `|`.
    let rows: Vec<&str> = seen.lines().filter(|l| l.contains(" | ")).collect();
    assert!(rows.len() >= 3, "{seen}");
    for row in &rows {
        let row = row.trim_end_matches('\r');
        assert!(row.ends_with('|'), "a wrapped row: {row:?} in {seen}");
    }
}

/// `d0(t) = t + 1` and `dk(t) = d(k-1)(t) + d(k-1)(t)` up to `d19`: `dk(x)`
/// builds 2^(k+1) − 1 nodes and equals 2^k·(x + 1).
pub fn doubling_functions() -> String {
    let mut text = String::from("d0(t) = t + 1");
    for k in 1..20 {
        text.push_str(&format!("; d{k}(t) = d{}(t) + d{}(t)", k - 1, k - 1));
    }
    text
}

#[test]
fn ctrl_c_stops_a_long_evaluation_and_keeps_the_variables() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.send_line(&doubling_functions());
    repl.line("x = 1", "x = 1");
    repl.line("y = 5", "y = 5");
    repl.line("x*y", "5");
    // About 7.9·10⁵ nodes through calls: about a second in a debug build
    // (then it stops at the call-node limit), so Ctrl-C comes well before that.
    repl.interrupt("y = d18(x) + d17(x)", Duration::from_millis(100));
    // y is still the leaf 5, the output still x*y, the graph as it was.
    repl.line(":vars", "y = 5");
    repl.line(":grad", "∂(x*y)/∂x = 5");
    repl.line(":stats", "graph: 3 nodes");
    // The next statement runs: d3(2) = 2^3·3.
    repl.line("d3(2)", "24");
    repl.leave();
}

#[test]
fn ctrl_c_stops_check_of_many_variables() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("many.calc");
    // 200 variables summed into t, then w = d16(t): every variable feeds
    // 2^17 nodes, so `:check` moves each through them all (minutes).
    let mut text = doubling_functions();
    text.push('\n');
    let values: Vec<u32> = (0..200).map(|i| i % 7 + 1).collect();
    for (i, v) in values.iter().enumerate() {
        text.push_str(&format!("v{i} = {v}\n"));
    }
    let sum: Vec<String> = (0..200).map(|i| format!("v{i}")).collect();
    text.push_str(&format!("t = {}\nw = d16(t)\n", sum.join(" + ")));
    std::fs::write(&script, text).unwrap();
    let t: u32 = values.iter().sum();
    let w = 65536 * (t + 1); // d16(t) = 2^16·(t + 1)

    let mut repl = Repl::start(dir.path());
    repl.line(&format!(":load {}", script.display()), &format!("w = {w}"));
    repl.interrupt(":check", Duration::from_millis(200));
    repl.line("t", &format!("{t}"));
    repl.line("w", &format!("{w}"));
    repl.leave();
}

#[test]
fn ctrl_c_stops_a_long_trace() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.send_line(&doubling_functions());
    repl.line("x = 1", "x = 1");
    // d17(x) = 2^17·2 = 262144, about 2.6·10⁵ nodes; its whole trace is
    // tens of megabytes of text.
    repl.line("y = d17(x)", "y = 262144");
    repl.interrupt(":trace all", Duration::from_millis(200));
    repl.line(":vars", "y = 262144");
    repl.line(":grad x", "∂y/∂x = 131072");
    repl.leave();
}

#[test]
fn load_of_a_fifo_is_refused_at_once_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.calc");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return; // no mkfifo here
    }
    let mut repl = Repl::start(dir.path());
    repl.line("x = 3", "x = 3");
    // Nothing is ever written to the FIFO: reading it would wait for ever.
    repl.line(&format!(":load {}", fifo.display()), "not a regular file");
    repl.line("x^2", "9");
    repl.leave();
}

#[test]
fn ctrl_c_or_ctrl_d_at_replace_it_keeps_every_file_and_runs_nothing_more() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("slides")).unwrap();
    // Every command that asks before replacing a file.
    let asks = [
        (":dot g.dot", "g.dot"),
        (":svg g.svg --before", "g.svg"),
        (":trace md t.md", "t.md"),
        (":trace tex t.tex", "t.tex"),
        (":plot x -1 1 p.svg", "p.svg"),
        (":repeat 2 r.svg x := x", "r.svg"),
        (":save s.calc", "s.calc"),
        (":svg slides --steps", "slides/step-000.svg"),
        (":dot slides --steps", "slides/step-000.dot"),
    ];
    for (_, file) in asks {
        std::fs::write(dir.path().join(file), "old\n").unwrap();
    }
    let mut repl = start_with_history(dir.path(), "off");
    repl.prompt();
    repl.line("x = 2; y = x^2", "y = 4");
    for (i, (command, file)) in asks.iter().enumerate() {
        // The rest of the line must not run after the question is cancelled
        // (`:repeat` takes the rest of its line as its statements).
        let rest = if command.starts_with(":repeat") {
            ""
        } else {
            "; after = 1"
        };
        repl.send_line(&format!("{command}{rest}"));
        repl.expect("replace it? [y/N]");
        // Ctrl-C for most, Ctrl-D for the last.
        if i + 1 == asks.len() {
            repl.ctrl_d();
        } else {
            repl.ctrl_c();
        }
        let seen = repl.expect("> ");
        assert!(seen.contains("not replaced"), "{command}: {seen}");
        assert!(!seen.contains("undone"), "{command}: {seen}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join(file)).unwrap(),
            "old\n",
            "{command} replaced {file}"
        );
        // The prompt is back: the next line runs as typed, not as an answer.
        repl.line(":grad", "∂y/∂x = 4");
        repl.line("after", "unknown name");
    }
    // Answering `y` still replaces, and says so truly.
    repl.send_line(":dot g.dot");
    repl.expect("replace it? [y/N]");
    repl.send_line("y");
    let seen = repl.expect("> ");
    assert_contains(&seen, "wrote the graph as DOT to g.dot");
    assert!(!seen.contains("interrupted"), "{seen}");
    assert!(
        std::fs::read_to_string(dir.path().join("g.dot"))
            .unwrap()
            .starts_with("digraph")
    );
    repl.leave();
}

/// The number after `prefix` in `text` (up to the next space or end of line).
fn number_after(text: &str, prefix: &str) -> f64 {
    let at = text
        .find(prefix)
        .unwrap_or_else(|| panic!("no {prefix:?} in {text}"));
    let rest = &text[at + prefix.len()..];
    let word: String = rest
        .trim_start()
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    word.parse()
        .unwrap_or_else(|e| panic!("{word:?} after {prefix:?}: {e}"))
}

#[test]
fn ctrl_c_during_repeat_reports_the_steps_and_save_records_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut repl = start_with_history(dir.path(), "off");
    repl.prompt();
    repl.line(":precision full", "full precision");
    repl.line("w = 0; L = (w - 3)^2", "L = 9");
    // A million steps take far longer than the wait (minutes in a debug build).
    let seen = strip_ansi(&repl.interrupt(
        ":repeat 1000000 w := w - 0.0000001*grad(L, w)",
        Duration::from_millis(300),
    ));
    // Long lines wrap at the terminal's width: read them unwrapped.
    let rows: Vec<&str> = seen.lines().map(str::trim).collect();
    let seen = rows.join(" ");
    let steps = number_after(&seen, "interrupted after ");
    assert_contains(
        &seen,
        &format!("interrupted after {steps} of 1000000 steps"),
    );
    assert!(steps < 1_000_000.0, "{seen}");
    // The table's last row is the last step done.
    assert!(
        rows.iter().any(|r| r.starts_with(&format!("{steps} "))),
        "{seen}"
    );
    repl.send_line("shown = w");
    // The result line (not the echo `> shown = w` or the preview).
    repl.expect("\nshown = ");
    let shown = strip_ansi(&repl.expect("\r\n"));
    let w: f64 = shown
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("no value of w in {shown:?}: {e}"));
    // w_k = 3·(1 − (1 − 2e-7)^k): the steps done, and no more.
    let expected = 3.0 * (1.0 - (1.0 - 2e-7_f64).powf(steps));
    assert!(
        (w - expected).abs() <= 1e-9 * expected.max(1e-3),
        "w = {w}, expected {expected} after {steps} steps"
    );
    repl.line(":save rep.calc", "saved");
    repl.leave();
    let script = std::fs::read_to_string(dir.path().join("rep.calc")).unwrap();
    assert_contains(
        &script,
        &format!(":repeat {steps} w := w - 0.0000001*grad(L, w)"),
    );
    // Replaying the script rebuilds the same w, to the last bit.
    let output = crate::util::plain_gradcalc()
        .current_dir(dir.path())
        .args(["--precision", "full", "rep.calc", "-e", "w"])
        .output()
        .unwrap();
    let replayed = String::from_utf8_lossy(&output.stdout);
    let last: f64 = replayed.lines().last().unwrap().trim().parse().unwrap();
    assert_eq!(last, w, "{replayed}");
}

#[test]
fn ctrl_c_during_a_load_names_what_was_running() {
    let dir = tempfile::tempdir().unwrap();
    // Line 3 is a sum of 10⁶ ones: reading, parsing and evaluating it takes
    // seconds in a debug build.
    let mut text = String::from("x = 7\nx7 = 1\n");
    text.push_str(&vec!["1"; 1_000_000].join("+"));
    text.push('\n');
    std::fs::write(dir.path().join("big3.calc"), text).unwrap();
    let mut repl = start_with_history(dir.path(), "off");
    repl.prompt();
    repl.line("x = 1", "x = 1");
    let seen = strip_ansi(&repl.interrupt(":load big3.calc", Duration::from_millis(300)));
    if seen.contains("nothing of it ran") {
        // Stopped before any statement of the file: x is still 1, x7 unknown.
        repl.line("x*100 + 3", "103");
        repl.line("x7", "unknown name `x7`");
    } else {
        // Stopped at line 3 (parsing or evaluating it): lines 1 and 2 ran.
        assert_contains(&seen, "big3.calc:3:1");
        repl.line("x*100 + x7", "701");
    }
    assert!(!seen.contains("big3.calc:1:1"), "{seen}");
    repl.leave();
}

#[test]
fn a_statement_typed_after_q_at_the_step_prompt_is_not_lost_unseen() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.line("a = 2; b = 5; z = a*b + 1", "z = 11");
    repl.line(":step", "step 1/");
    repl.line("q:grad b", "(stopped; `:grad b` was not run");
    repl.expect("> ");
    // It did not run: typed now, it gives ∂z/∂b = a = 2.
    repl.line(":grad b", "∂z/∂b = 2");
    repl.leave();
}

/// `grad(grad(…grad(y, x)…, x), x)` nested `depth` deep.
fn nested_grad(depth: usize) -> String {
    (0..depth).fold("y".to_string(), |inner, _| format!("grad({inner}, x)"))
}

#[test]
fn a_pasted_nested_grad_line_is_not_previewed_and_the_editor_answers() {
    // The preview runs on every key; this line would build billions of nodes
    // (it froze the screen and aborted at 3.3 GB). Pasted without Enter, the
    // line is shown, Ctrl-C (a key in the editor) drops it, and the session
    // goes on: x + 1 = 1.5.
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.line("x = 0.5; y = tanh(x)*sin(x)", "y = ");
    repl.prompt();
    // The line ends in a mark seen once the whole paste is on the screen.
    repl.send(&format!("{} + 12345", nested_grad(18)));
    repl.expect("+ 12345");
    repl.ctrl_c();
    repl.prompt();
    repl.line("x + 1", "1.5");
    repl.leave();
}

#[test]
fn nested_grad_and_a_repeat_of_grad_end_and_the_session_goes_on() {
    // Each statement would build millions of nodes (13.5 M for 14 levels, 24 s;
    // the repeat took 7.8 s to stop on Ctrl-C): the derivative node budget
    // refuses it, or Ctrl-C stops it first. Either way it ends with its
    // answer, and x, y and the next statements are as before.
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.line("x = 0.5; y = tanh(x)*sin(x)", "y = ");
    repl.line("g = y", "g = ");
    for statement in [
        format!("h = {}", nested_grad(14)),
        ":repeat 30 g = grad(g, x)".to_string(),
    ] {
        repl.prompt();
        repl.send_line(&statement);
        repl.ctrl_c();
        repl.expect_any(&["interrupted", "builds more than"]);
    }
    repl.prompt();
    // d/dx (tanh(x) sin(x)) at 0.5 = sech²(0.5)·sin(0.5) + tanh(0.5)·cos(0.5)
    // = 0.78644773…·0.47942554… + 0.46211716…·0.87758256… = 0.782589086722…
    repl.line("grad(y, x)", "0.7825890867");
    repl.line("x + 1", "1.5");
    repl.leave();
}

#[test]
fn serve_after_a_comment_serves_and_beside_other_statements_is_refused() {
    // `:serve` with a comment used to be taken for a script's `:serve`
    // ("works in the interactive REPL"), in the REPL itself.
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    let port = std::net::TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    repl.line(
        &format!(":serve {port} # the page for the class"),
        "serving the live page at http://127.0.0.1:",
    );
    repl.prompt();
    // Beside another statement: refused whole, so `y = 1` does not run.
    repl.line(
        &format!(":serve {port}; y = 1"),
        "goes on a line of its own",
    );
    repl.expect(&format!("type `:serve {port}` alone"));
    repl.prompt();
    repl.line("y", "unknown name `y`");
    repl.prompt();
    repl.line(":serve stop", "stopped serving");
    repl.prompt();
}

/// Typed line by line, a failed statement and a refused nested `grad` once
/// left a node and a stale id behind, and the next `:html -` ended the
/// process; the session now goes on, with `y = x·w = 9` and ∂y/∂x = w = 3.
#[test]
fn failed_statements_keep_the_session() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    for (line, reply) in [
        ("x = 3", "x = 3"),
        ("w = 3", "w = 3"),
        ("w*x + q", "unknown name `q`"),
        ("y = x*w", "y = 9"),
        (
            "g = grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(grad(tanh(x)*sin(x), x), x), x), x), x), x), x), x), x), x), x), x), x)",
            "builds more than",
        ),
        (":html -", "</html>"),
    ] {
        repl.line(line, reply);
        repl.prompt();
    }
    repl.line(":grad x", "∂y/∂x = 3");
    repl.prompt();
    repl.leave();
}

#[test]
fn ctrl_c_during_a_tensor_descent_keeps_the_steps_done_and_the_session() {
    // L = Σᵢ (Wᵢ·x − 3)² with x = [1, 2] and W 2×2 from 0: ∂L/∂Wᵢ = 2uᵢ·x with
    // uᵢ = Wᵢ·x − 3, so each step multiplies uᵢ by 1 − 2·lr·|x|² = 1 − 10·lr
    // and moves Wᵢ along x: after k steps Wᵢ = c·[1, 2] with
    // c = 3·(1 − (1 − 10·lr)^k)/5, and L = 18·(1 − 10·lr)^(2k).
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.line("W = [[0, 0], [0, 0]]", "W = 2×2");
    repl.line("x = [1, 2]", "x = [1, 2]");
    repl.line("L = sum((W @ x - 3)^2)", "L = 18");
    let seen = strip_ansi(&repl.interrupt(
        ":descend L lr=0.00000001 steps=1000000 W",
        Duration::from_millis(300),
    ));
    // As documented for :descend: the steps done are kept.
    let done = seen
        .split("interrupted after ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|k| k.parse::<i32>().ok())
        .unwrap_or_else(|| panic!("no step count in {seen}"));
    assert!((1..1_000_000).contains(&done), "{seen}");
    let c = 3.0 * (1.0 - (1.0 - 1e-7_f64).powi(done)) / 5.0;
    let value = |repl: &mut Repl, statement: &str| -> f64 {
        repl.send_line(":precision full");
        repl.prompt();
        repl.send_line(statement);
        let printed = strip_ansi(&repl.prompt());
        printed
            .lines()
            .filter_map(|line| line.rsplit('=').next()?.trim().parse::<f64>().ok())
            .next_back()
            .unwrap_or_else(|| panic!("no number for {statement}: {printed}"))
    };
    let w11 = value(&mut repl, "W[1, 1]");
    assert!((w11 - 2.0 * c).abs() <= 1e-9 * c, "{w11} vs {}", 2.0 * c);
    // The loss built again from W, and the loss node itself, run again to the
    // end at the kept W.
    let expected = 18.0 * (1.0 - 1e-7_f64).powi(2 * done);
    for statement in ["sum((W @ x - 3)^2)", "L"] {
        let loss = value(&mut repl, statement);
        assert!(
            (loss - expected).abs() <= 1e-9 * expected,
            "{statement}: {loss} vs {expected}"
        );
    }
    // The shapes are as before and the next statement answers.
    repl.line(":vars", "W (leaf) = 2×2");
    repl.line("W @ x * 0 + 1", "[1, 1]");
    repl.leave();
}
