//! A line that ends in `;` runs silently (MATLAB's and Octave's
//! convention, docs/language.md §1): its statements print nothing but their
//! warnings, notices and errors; `;` between statements on a line that does
//! not end in one still only separates them. Through the binary (`-e`, a
//! script, a pipe, `--json`), the REPL on a pseudo-terminal, and `:load`.
//! The expected lines are worked out by hand from the statements (`6*7 =
//! 42`, `∂(x*y)/∂x = y = 3`).

use crate::pty::Repl;
use crate::util::{
    assert_contains, folder_with, json_lines, output_in, output_of, output_with_stdin, stderr_of,
    stdout_of,
};

#[test]
fn a_trailing_semicolon_silences_its_whole_line_and_nothing_else() {
    // Without a trailing `;` every statement prints, as before.
    let out = output_of(&["-e", "a = 1; b = 2"]);
    assert_eq!(stdout_of(&out), "a = 1\nb = 2\n");
    // With it, none of the line's statements does.
    let out = output_of(&["-e", "a = 1; b = 2;"]);
    assert_eq!(stdout_of(&out), "");
    assert!(out.status.success());
    // The next line prints again; the silenced values are kept (and `ans`,
    // the output, `:grad` see them).
    let out = output_of(&["-e", "x = 2; y = 3; z = x*y;\nz + 36\n:grad x;\n:grad x"]);
    // The output is the last expression, `z + 36`: its gradient is y = 3.
    assert_eq!(stdout_of(&out), "42\n∂(z + 36)/∂x = 3\n");
}

#[test]
fn warnings_and_errors_of_a_silenced_line_still_show() {
    let out = output_of(&["-e", "w = 1/0;"]);
    assert_eq!(stdout_of(&out), "");
    assert_contains(&stderr_of(&out), "warning: division by zero gives inf");
    let out = output_of(&["-e", "q = nope + 1;"]);
    assert_eq!(stdout_of(&out), "");
    assert_contains(&stderr_of(&out), "unknown name `nope`");
    assert!(!out.status.success());
}

#[test]
fn scripts_and_pipes_silence_the_lines_ending_in_a_semicolon() {
    let script = "\
# a comment after the `;` does not count
h = 6*7;   # quiet
k = h + 1
m = [1, 2, 3];
sum(m)
";
    let (dir, path) = folder_with("quiet.calc", script);
    let out = output_in(dir.path(), &[&path]);
    assert_eq!(stdout_of(&out), "k = 43\n6\n");
    let out = output_with_stdin::<&str>(&[], script);
    assert_eq!(stdout_of(&out), "k = 43\n6\n");
}

#[test]
fn a_silenced_command_still_writes_its_file_and_a_loaded_file_prints_its_own_lines() {
    let (dir, path) = folder_with("inner.calc", "p = 5\nq = p*2;\n");
    let out = output_in(
        dir.path(),
        &[
            "-e",
            &format!(
                ":load {};\nr = q + 1;\n:save saved.calc;\nr",
                path.display()
            ),
        ],
    );
    // `:load …;` silences the `:load` line only: the file's lines print as
    // they end.
    assert_eq!(stdout_of(&out), "p = 5\n11\n");
    let saved = std::fs::read_to_string(dir.path().join("saved.calc")).unwrap();
    assert_contains(&saved, "r = q + 1");
}

#[test]
fn json_writes_every_event_and_marks_the_silenced_ones() {
    let out = output_of(&["--json", "-e", "x = 2; y = 3;\nx*y"]);
    let events = json_lines(&stdout_of(&out));
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(events[0]["value"], 2.0);
    assert_eq!(events[0]["from"]["silenced"], true);
    assert_eq!(events[1]["value"], 3.0);
    assert_eq!(events[1]["from"]["silenced"], true);
    // Not silenced: no `silenced` member at all (the events stay as they were).
    assert_eq!(events[2]["value"], 6.0);
    assert!(events[2]["from"].get("silenced").is_none(), "{}", events[2]);
}

#[test]
fn the_repl_runs_a_line_ending_in_a_semicolon_silently() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    repl.send_line("u = 6*7;");
    repl.prompt();
    // What was printed between that line and the answer to the next:
    // the echo of what was typed, never the silenced `u = 42`.
    let seen = repl.line("v = u + 1", "v = 43");
    assert!(!seen.contains("u = 42"), "{seen:?}");
    repl.send_line("w = 1/0;");
    repl.expect("warning: division by zero gives inf");
    repl.leave();
}

#[test]
fn the_playground_runs_a_line_ending_in_a_semicolon_silently() {
    use crate::playground::{READY, SCREEN, enter, playground, wait_screen};
    let Some((mut browser, url)) = playground("the playground's trailing `;`") else {
        return;
    };
    browser.open(&url, (1366, 768), READY);
    enter(&mut browser, "u = 6*7; W = ones(16, 16);");
    enter(&mut browser, "v = u + sum(W)");
    // 42 + 256 = 298: the silenced line ran.
    wait_screen(&mut browser, "v = 298");
    let screen = browser.eval(SCREEN);
    let screen = screen.as_str().unwrap();
    assert!(!screen.contains("u = 42"), "{screen}");
    assert!(!screen.contains("16×16"), "{screen}");
    // A warning of a silenced line still shows.
    enter(&mut browser, "w = 1/0;");
    wait_screen(&mut browser, "division by zero gives inf");
}
