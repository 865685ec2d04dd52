//! The binary as users run it: modes, exit status, piped input, output formats.

use std::io::Write;

use assert_cmd::Command;
use expect_test::expect;
use serde_json::Value;

use crate::util::{
    assert_close, assert_contains, assert_ends_with, check, doubling_functions, folder_with,
    gradcalc, interrupted_after, json_events, json_lines, members, output_in, output_of,
    output_with_stdin, plain_gradcalc, stderr_of, stdout_of, transcript,
};

/// stdout of the fan-out example `x = 2; y = 3; z = x*y + x` then `command`,
/// each given with `-e`; the run must succeed.
fn fan_out_then(command: &str) -> String {
    let output = output_of(&["-e", "x = 2; y = 3; z = x*y + x", "-e", command]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    stdout_of(&output)
}

#[test]
fn fan_out_gradients_through_e() {
    // z = 2·3 + 2 = 8; ∂z/∂x = y + 1 = 4, ∂z/∂y = x = 2.
    expect![[r#"
        x = 2
        y = 3
        z = 8
        ∂z/∂x = 4
        ∂z/∂y = 2
    "#]]
    .assert_eq(&fan_out_then(":grad"));
}

/// The trace of the fan-out example, checked by hand: the sum passes 1 to both
/// operands, the product passes y = 3 to x and x = 2 to y, and x's two uses
/// accumulate 1 + 3 = 4.
#[test]
fn the_trace_of_the_fan_out_example() {
    expect![[r#"
        x = 2
        y = 3
        z = 8
        backward pass from z: 4 nodes in reverse topological order; upstream = ∂z/∂node, seeded with 1
        [1] z = _2 + x = 8   upstream 1
              → _2: local ∂(x*y + x)/∂(x*y) = 1;  1 × 1 = 1;  grad 0 → 1
              → x: local ∂(x*y + x)/∂x = 1;  1 × 1 = 1;  grad 0 → 1   (1st of 2 uses)
        [2] _2 = x * y = 6   upstream 1
              → x: local ∂(x*y)/∂x = y = 3;  1 × 3 = 3;  grad 1 → 4   (2nd of 2 uses: accumulated)
              → y: local ∂(x*y)/∂y = x = 2;  1 × 2 = 2;  grad 0 → 2
        [3] y leaf = 3   ∂z/∂y = 2
        [4] x leaf = 2   ∂z/∂x = 4
    "#]].assert_eq(&fan_out_then(":trace"));
}

#[test]
fn piped_stdin_has_no_prompt_or_escapes_and_reads_the_last_line() {
    let output = gradcalc()
        .write_stdin("x = 3\r\ny = x^2\r\n:grad x")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = stdout_of(&output);
    assert_eq!(stdout, "x = 3\ny = 9\n∂y/∂x = 6\n");
    assert!(!stdout.contains('\x1b'));
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let plain = output_of(&["-e", "1 + 1"]);
    assert!(!stdout_of(&plain).contains('\x1b'));
    let forced = output_of(&["--color", "always", "-e", "1 + 1"]);
    assert_contains(&stdout_of(&forced), "\x1b[");
    let no_color = gradcalc()
        .env("NO_COLOR", "1")
        .args(["-e", "1 + 1"])
        .output()
        .unwrap();
    assert_eq!(stdout_of(&no_color), "2\n");
}

#[test]
fn first_error_stops_batch_mode_with_status_1() {
    let output = gradcalc()
        .write_stdin("x = 1\nx + w\nx = 5\n")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout_of(&output), "x = 1\n");
    let stderr = stderr_of(&output);
    assert_contains(&stderr, "unknown name `w`");
    assert_contains(&stderr, "<stdin>:2:5");
    assert!(stderr.contains('^'), "caret under the column: {stderr}");
}

#[test]
fn keep_going_runs_on_and_still_exits_1() {
    let output = output_with_stdin(&["--keep-going"], "x = 1\nx + w\nx = 5\n");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout_of(&output), "x = 1\nx = 5\n");
}

#[test]
fn json_lines_with_errors_as_events() {
    let output = output_of(&["--json", "-e", "x = 2; 1/0; x y"]);
    assert_eq!(output.status.code(), Some(1));
    let events = json_lines(&stdout_of(&output));
    // Each event names its statement: `1/0` starts at column 8 of `-e`.
    let statement = |number: usize, column: usize| serde_json::json!({"statement": number, "source": "-e", "line": 1, "column": column});
    assert_eq!(
        events[0],
        serde_json::json!({"kind": "value", "name": "x", "value": 2, "from": statement(1, 1)})
    );
    assert_eq!(events[1]["kind"], "warning");
    assert_eq!(events[1]["from"], statement(2, 8));
    assert_eq!(
        events[2],
        serde_json::json!({"kind": "value", "value": "inf", "from": statement(2, 8)})
    );
    assert_eq!(events[3]["kind"], "error");
    assert_eq!(events[3]["code"], "parse");
    assert_eq!(events[3]["column"], 13);
    assert_eq!(events[3]["from"], statement(3, 13));
    assert!(
        events[3]["help"].as_str().unwrap().contains("x*y"),
        "{}",
        events[3]
    );
    assert_eq!(events.len(), 4);
    assert!(output.stderr.is_empty());
}

/// A `notice` carries a stable `code` beside its `message` (docs/json.md's
/// notice codes), the same words as the human `note:` line.
#[test]
fn json_notices_carry_their_code() {
    let (events, status) = json_events(&[
        "-e",
        "x = 1; y = x^2; x = 3; pi = 3; :check; :hessian; q = 2*3 + 1; q; :check",
    ]);
    assert_eq!(status, Some(0));
    let notices: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e["kind"] == "notice")
        .map(|e| (e["code"].as_str().unwrap(), e["message"].as_str().unwrap()))
        .collect();
    assert_eq!(
        notices,
        [
            (
                "constant-rebound",
                "`pi` was the constant 3.141592653589793; from now on it names your variable (`:reset` restores it)"
            ),
            (
                "not-checked",
                "not checked: ∂y/∂x = 0 (y was built from an earlier x)"
            ),
            (
                "built-from-earlier",
                "y was built from an earlier x: no variable as it is now feeds it"
            ),
            ("no-variable", "q depends on no variable: nothing to check"),
        ]
    );
    let notice = events.iter().find(|e| e["kind"] == "notice").unwrap();
    let keys: Vec<&String> = notice.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["kind", "code", "message", "from"]);
}

#[test]
fn usage_errors_exit_2() {
    expect![[r#"
        --- stderr
        error: unexpected argument '--frobnicate' found

          tip: to pass '--frobnicate' as a value, use '-- --frobnicate'

        Usage: gradcalc [OPTIONS] [FILE]...
               gradcalc completions SHELL
               gradcalc man

        For more information, try '--help'.
        --- exit status 2
    "#]]
    .assert_eq(&transcript(&["--frobnicate"]));
    // The missing file is named.
    expect![[r#"
        --- stderr
        gradcalc: cannot read no/such/file.calc: No such file or directory (os error 2)
        --- exit status 2
    "#]]
    .assert_eq(&transcript(&["no/such/file.calc"]));
    expect![[r#"
        --- stderr
        error: invalid value 'zero' for '--precision <N|full>': expected a number of digits from 1 to 17, or `full`

        For more information, try '--help'.
        --- exit status 2
    "#]].assert_eq(&transcript(&["--precision", "zero", "-e", "1"]));
}

#[test]
fn help_and_version() {
    let help = gradcalc().arg("--help").output().unwrap();
    assert_eq!(help.status.code(), Some(0));
    assert!(stdout_of(&help).contains("Examples:"));
    assert!(stdout_of(&help).contains("--json"));
    let version = gradcalc().arg("--version").output().unwrap();
    assert_eq!(
        stdout_of(&version).trim(),
        format!("gradcalc {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn precision_controls_human_digits_only() {
    let output = output_of(&["--precision", "3", "-e", "2/3"]);
    assert_eq!(stdout_of(&output), "0.667\n");
    let full = output_of(&["--precision", "full", "-e", "2/3"]);
    assert_eq!(stdout_of(&full), "0.6666666666666666\n");
    let json = output_of(&["--json", "--precision", "3", "-e", "2/3"]);
    assert_eq!(
        stdout_of(&json),
        "{\"kind\":\"value\",\"value\":0.6666666666666666,\"from\":{\"statement\":1,\"source\":\"-e\",\"line\":1,\"column\":1}}\n"
    );
}

#[test]
fn scripts_run_in_order_then_e() {
    let (_dir, script) = folder_with("lib.calc", "sq(t) = t*t\nx = 3\n");
    let output = gradcalc()
        .arg(&script)
        .args(["-e", "sq(x); :grad x"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        stdout_of(&output),
        "defined sq(t)\nx = 3\n9\n∂(sq(x))/∂x = 6\n"
    );
}

#[test]
fn quit_stops_the_run_with_status_0() {
    let output = gradcalc().write_stdin("1\n:quit\n2\n").output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout_of(&output), "1\n");
}

#[test]
fn invalid_utf8_runs_the_valid_lines_then_fails() {
    let output = gradcalc()
        .write_stdin(&b"x = 1\ny = \xff\n"[..])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout_of(&output), "x = 1\n");
    assert_contains(&stderr_of(&output), "not valid UTF-8");
}

#[test]
fn unclosed_parenthesis_points_at_it() {
    let output = output_of(&["-e", "2*(1+3"]);
    assert_eq!(output.status.code(), Some(1));
    // The `(` is the third character of line 1.
    expect![[r#"
        error: unclosed `(`
          ┌─ -e:1:3
          │
        1 │ 2*(1+3
          │   ^ add `)`

    "#]]
    .assert_eq(&stderr_of(&output));
}

#[test]
fn two_names_side_by_side_are_underlined_with_the_product_meant() {
    let output = output_of(&["-e", "x = 2; y = 3; z = x*y + x; x y"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout_of(&output), "x = 2\ny = 3\nz = 8\n");
    // `x y` starts after the 27 characters of `x = 2; y = 3; z = x*y + x; `.
    expect![[r#"
        error: two names side by side: `x` and `y`
          ┌─ -e:1:28
          │
        1 │ x = 2; y = 3; z = x*y + x; x y
          │                            ^^^ use `*` to multiply: `x*y`

    "#]]
    .assert_eq(&stderr_of(&output));
}

#[test]
fn a_100000_step_chain_backpropagates_through_the_binary() {
    let steps = "y = y*1.0001 + 0.0001\n".repeat(100_000);
    let script = format!("x = 0.5\ny = x\n{steps}:grad x\n");
    let output = output_with_stdin(&["--json"], script);
    assert_eq!(output.status.code(), Some(0));
    let stdout = stdout_of(&output);
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    let before_last: Value = serde_json::from_str(stdout.lines().rev().nth(1).unwrap()).unwrap();
    let y = before_last["value"].as_f64().unwrap();
    let grad = last["value"].as_f64().unwrap();
    assert_close(y, 33022.184072811644, 1e-12);
    assert_close(grad, 22015.45604852786, 1e-12);
    assert_eq!(last["wrt"], "x");
}

#[test]
fn deep_input_is_refused_not_overflowed() {
    let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
    let output = output_with_stdin(&["--json"], deep);
    assert_eq!(output.status.code(), Some(1));
    let event: Value = serde_json::from_str(stdout_of(&output).lines().next().unwrap()).unwrap();
    assert_eq!(event["kind"], "error");
    assert!(
        event["message"].as_str().unwrap().contains("nest"),
        "{event}"
    );
    let minus = format!("{}1", "-".repeat(100_000));
    let output = output_with_stdin(&["--json"], minus);
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn commands_have_json_events() {
    let output = output_of(&[
        "--json",
        "-e",
        "x = 2; y = 3; z = x*y + x; :topo; :trace; :vars; :help tanh; :reset",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let events = json_lines(&stdout_of(&output));
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "value", "value", "value", "topo", "trace", "vars", "help", "reset"
        ]
    );

    let topo = &events[3];
    let names: Vec<&Value> = members(&topo["nodes"]).map(|n| &n["name"]).collect();
    assert_eq!(
        names,
        [
            &Value::from("z"),
            &Value::Null,
            &Value::from("y"),
            &Value::from("x")
        ]
    );
    assert_eq!(topo["nodes"][1]["op"], "*");

    // x is used twice: 0 → 1 from the `+`, then 1 → 4 from the `*` (the 2nd of 2 uses).
    let steps = events[4]["steps"].as_array().unwrap();
    let into_x: Vec<(f64, f64, u64, u64)> = steps
        .iter()
        .flat_map(|s| s["contributions"].as_array().unwrap())
        .filter(|c| c["input_name"] == "x")
        .map(|c| {
            (
                c["before"].as_f64().unwrap(),
                c["after"].as_f64().unwrap(),
                c["use"].as_u64().unwrap(),
                c["uses"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(into_x, [(0.0, 1.0, 1, 2), (1.0, 4.0, 2, 2)]);
    assert_eq!(steps[1]["contributions"][0]["partial"], "∂(x*y)/∂x");
    assert_eq!(steps[1]["contributions"][0]["formula"], "y");

    let vars = events[5]["vars"].as_array().unwrap();
    assert_eq!(
        vars[0],
        serde_json::json!({"name": "x", "id": 0, "value": 2, "leaf": true, "grad": 4})
    );
    assert!(
        events[6]["text"]
            .as_str()
            .unwrap()
            .contains("∂tanh(u)/∂u = 1 - tanh(u)^2")
    );
}

#[test]
fn long_orders_are_summarised_unless_all() {
    let mut script = String::from("x = 0.5\ny = x\n");
    for _ in 0..1000 {
        script.push_str("y = y*1.0001 + 0.0001\n");
    }
    let summary = gradcalc()
        .write_stdin(format!("{script}:topo\n"))
        .output()
        .unwrap();
    let text = stdout_of(&summary);
    assert_contains(&text, "4001 nodes, output first");
    assert_contains(&text, "… 3976 more nodes");
    assert_eq!(text.lines().filter(|l| l.contains(" leaf ")).count(), 1);
    let all = gradcalc()
        .write_stdin(format!("{script}:topo all\n"))
        .output()
        .unwrap();
    assert_eq!(stdout_of(&all).lines().count(), 1002 + 2 + 4001);
}

#[test]
fn ascii_output_has_no_unicode_symbols() {
    let output = output_of(&[
        "--ascii",
        "-e",
        "x = 0.5; y = tanh(x)*x^2; :grad; :trace; :help grad; :help tanh",
    ]);
    let stdout = stdout_of(&output);
    assert_contains(&stdout, "dy/dx = 0.6587290905");
    assert_contains(
        &stdout,
        "-> x: local d(tanh(x))/dx = 1 - tanh(x)^2 = 0.786447733",
    );
    assert!(stdout.is_ascii(), "{stdout}");
}

#[test]
fn a_byte_order_mark_is_ignored() {
    let output = gradcalc()
        .write_stdin(&b"\xEF\xBB\xBFx = 1\n"[..])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout_of(&output), "x = 1\n");
}

#[test]
fn interactive_flag_with_piped_stdin_reads_it_after_e() {
    let output = output_with_stdin(&["-e", "x = 1", "-i"], "x + 1\n");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout_of(&output), "x = 1\n2\n");
}

#[test]
fn a_missing_script_is_a_json_error_in_json_mode() {
    let output = output_of(&["--json", "missing.calc"]);
    assert_eq!(output.status.code(), Some(2));
    let event: Value = serde_json::from_str(stdout_of(&output).trim()).unwrap();
    assert_eq!(event["kind"], "error");
    assert_eq!(event["source"], "missing.calc");
}

#[test]
fn a_function_without_parentheses_suggests_them() {
    let output = output_of(&["--json", "-e", "x = 1; sin x"]);
    // `sin` starts after the 7 characters of `x = 1; `.
    expect![[r#"
        {"kind":"value","name":"x","value":1,"from":{"statement":1,"source":"-e","line":1,"column":1}}
        {"kind":"error","code":"missing-parentheses","message":"`sin` is a function: call it with parentheses","line":1,"column":8,"source":"-e","help":"write `sin(x)`","from":{"statement":2,"source":"-e","line":1,"column":8}}
    "#]].assert_eq(&stdout_of(&output));
}

#[test]
fn an_unclosed_parenthesis_does_not_swallow_the_script() {
    let output = output_with_stdin(&["--keep-going"], "x = (1\nz = 2\nz * 3\n");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout_of(&output), "z = 2\n6\n");
    assert_contains(&stderr_of(&output), "<stdin>:1:5");
}

#[test]
fn stats_and_gc_through_the_binary() {
    // Nodes: x = 2, x*x, x = 5, the constant 1, x + 1. Rebinding x and y leaves the
    // first two unreachable.
    let output = output_of(&[
        "--json",
        "-e",
        "x = 2; y = x*x; x = 5; y = x + 1; :stats; :gc; :stats; :grad x",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let events = json_lines(&stdout_of(&output));
    let stats = events.iter().find(|e| e["kind"] == "stats").unwrap();
    assert_eq!(stats["nodes"], 5);
    assert_eq!(stats["reachable"], 3);
    let gc = events.iter().find(|e| e["kind"] == "gc").unwrap();
    assert_eq!(
        (gc["nodes_before"].as_u64(), gc["nodes_after"].as_u64()),
        (Some(5), Some(3))
    );
    assert_eq!(
        events.last().unwrap()["value"],
        1,
        "gradients survive the collection"
    );
}

// ---- files, writes and the output stream

/// [`gradcalc_in`]`(dir)` with `args`, run to its end.
fn run_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    gradcalc_in(dir).args(args).output().unwrap()
}

/// gradcalc run in `dir` as its current directory.
fn gradcalc_in(dir: &std::path::Path) -> Command {
    let mut command = gradcalc();
    command.current_dir(dir).env("NO_COLOR", "1");
    command
}

#[test]
fn a_full_disk_is_reported_and_a_closed_pipe_is_quiet() {
    let full = std::fs::File::create("/dev/full").unwrap();
    let output = plain_gradcalc()
        .arg("examples/neuron.calc")
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_contains(
        &stderr_of(&output),
        "cannot write the output: No space left on device",
    );
    // A failing statement's error is still shown when stdout is full.
    let full = std::fs::File::create("/dev/full").unwrap();
    let output = plain_gradcalc()
        .args(["-e", "1 +"])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr_of(&output).contains("expected an operand"),
        "{output:?}"
    );

    // The reader has gone before anything is written: a pipe with no reader.
    for args in [
        &["--json", "missing.calc"][..],
        &["examples/neuron.calc"],
        &["-e", "x = 1; 1/0"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let output = plain_gradcalc().args(args).stdout(writer).output().unwrap();
        let stderr = stderr_of(&output);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(output.status.code(), Some(141), "{args:?}: {stderr}");
        assert!(!stderr.contains("cannot write"), "{args:?}: {stderr}");
    }
}

#[test]
fn no_panicking_print_macros_in_the_sources() {
    let mut stack = vec![std::path::PathBuf::from("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for bad in ["println!", "print!(", "eprintln!", "eprint!("] {
                    assert!(!code.contains(bad), "{}:{}: {line}", path.display(), n + 1);
                }
            }
        }
    }
}

#[test]
fn existing_files_are_kept_unless_the_command_says_f() {
    let (dir, lesson) = folder_with("lesson.calc", "x = 1\n");
    // `:load`, a change, `:save` to the same name: refused, the lesson intact.
    let output = run_in(
        dir.path(),
        &["-e", ":load lesson.calc; x = 5; :save lesson.calc"],
    );
    assert_eq!(output.status.code(), Some(1));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("already exists") && stderr.contains(":save -f lesson.calc"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&lesson).unwrap(), "x = 1\n");
    for command in [":dot", ":svg", ":trace md"] {
        let output = run_in(
            dir.path(),
            &["-e", &format!("x = 2; x*x; {command} lesson.calc")],
        );
        assert_eq!(output.status.code(), Some(1), "{command}");
        assert_eq!(std::fs::read_to_string(&lesson).unwrap(), "x = 1\n");
    }
    // With -f it is replaced by the two statements that rebuild the session.
    let output = run_in(
        dir.path(),
        &["-e", ":load lesson.calc; x = 5; :save -f lesson.calc"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let saved = std::fs::read_to_string(&lesson).unwrap();
    assert_eq!(
        saved.lines().skip(1).collect::<Vec<_>>(),
        ["x = 1", "x = 5"],
        "{saved}"
    );
    // A symbolic link at the target is replaced, never written through.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("link.dot")).unwrap();
    let output = run_in(dir.path(), &["-e", "x = 2; x*x; :dot link.dot"]);
    assert_eq!(output.status.code(), Some(1));
    let output = run_in(dir.path(), &["-e", "x = 2; x*x; :dot --force link.dot"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    let link = dir.path().join("link.dot");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
    assert!(
        std::fs::read_to_string(&link)
            .unwrap()
            .starts_with("digraph")
    );
    // No temporary file is left behind.
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["lesson.calc", "link.dot", "victim"]);
}

#[test]
fn scripts_write_only_where_the_command_line_allows() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("graph.dot");
    let script = dir.path().join("s.calc");
    std::fs::write(
        &script,
        format!("x = 2\nx*x\n:dot {}\n:dot here.dot\n", target.display()),
    )
    .unwrap();
    let output = run_in(dir.path(), &["--keep-going", "s.calc"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("only in the current directory") && stderr.contains("--allow-writes"),
        "{stderr}"
    );
    assert!(!target.exists());
    assert!(
        dir.path().join("here.dot").exists(),
        "the current directory is allowed"
    );
    // The same from piped stdin, and `..` does not get out.
    let output = gradcalc_in(dir.path())
        .write_stdin("x = 2\nx*x\n:dot ../out.dot\n")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(!dir.path().join("../out.dot").exists());
    // Allowed by a flag.
    let dir_arg = elsewhere.path().display().to_string();
    let output = run_in(dir.path(), &["--allow-writes", &dir_arg, "s.calc"]);
    assert_eq!(output.status.code(), Some(1), "here.dot exists now");
    assert!(
        std::fs::read_to_string(&target)
            .unwrap()
            .starts_with("digraph")
    );
    // Outside both, the refusal names the allowed directory as given.
    let output = gradcalc_in(dir.path())
        .args(["--allow-writes", &dir_arg])
        .write_stdin("x = 2\nx*x\n:dot ../outside.dot\n")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = stderr_of(&output);
    assert!(
        stderr.starts_with(&format!(
            "error: cannot write ../outside.dot: a script writes files only in the current directory and {dir_arg}\n"
        )),
        "{stderr}"
    );
}

#[test]
fn save_and_load_read_their_arguments_like_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let output = gradcalc_in(dir.path())
        .env("HOME", dir.path())
        .args([
            "-e",
            "x = 3\n:save a.calc # a note\ny = x*x; :save b.calc; :grad\n:save \"my file.calc\"\n:save ~/c.calc",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    // `:grad` ran after `:save b.calc;` (∂y/∂x = 2·3 = 6).
    assert_contains(&stdout_of(&output), "∂y/∂x = 6");
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["a.calc", "b.calc", "c.calc", "my file.calc"]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.calc"))
            .unwrap()
            .lines()
            .skip(1)
            .collect::<Vec<_>>(),
        ["x = 3", "y = x*x"]
    );
    // `:load` inside a loaded file, from a script, with `~/`.
    std::fs::write(dir.path().join("inner.calc"), "z = y + 1\n").unwrap();
    std::fs::write(
        dir.path().join("outer.calc"),
        ":load b.calc\n:load ~/inner.calc\nz\n",
    )
    .unwrap();
    let output = gradcalc_in(dir.path())
        .env("HOME", dir.path())
        .arg("outer.calc")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_eq!(stdout_of(&output), "x = 3\ny = 9\nz = 10\n10\n");
    // A cycle is an error naming it, not a hang.
    std::fs::write(dir.path().join("p.calc"), "p = 1\n:load q.calc\n").unwrap();
    std::fs::write(dir.path().join("q.calc"), ":load p.calc\n").unwrap();
    let output = run_in(dir.path(), &["p.calc"]);
    assert_eq!(output.status.code(), Some(1));
    assert_contains(&stderr_of(&output), "a cycle: p.calc → q.calc → p.calc");
}

#[test]
fn a_load_cycle_through_a_link_names_both_paths_as_written() {
    let dir = tempfile::tempdir().unwrap();
    // h2.calc is a hard link of h1.calc, which loads h2.calc: the cycle is
    // h1.calc → h2.calc (it said `h2.calc → h2.calc`, one level late).
    std::fs::write(dir.path().join("h1.calc"), "h = 1\n:load h2.calc\n").unwrap();
    std::fs::hard_link(dir.path().join("h1.calc"), dir.path().join("h2.calc")).unwrap();
    let output = run_in(dir.path(), &["h1.calc"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout_of(&output), "h = 1\n");
    assert!(
        stderr_of(&output).starts_with(
            "error: cannot load h2.calc: it is already being loaded (a cycle: h1.calc → h2.calc)\n  ┌─ h1.calc:2:7\n"
        ),
        "{}",
        stderr_of(&output)
    );
    // The same through a symbolic link: s.calc → a.calc, which loads s.calc.
    std::fs::write(dir.path().join("a.calc"), ":load s.calc\n").unwrap();
    std::os::unix::fs::symlink("a.calc", dir.path().join("s.calc")).unwrap();
    let output = run_in(dir.path(), &["a.calc"]);
    assert_eq!(output.status.code(), Some(1));
    assert_contains(&stderr_of(&output), "(a cycle: a.calc → s.calc)");
}

#[test]
fn a_failed_write_names_the_file_asked_for_not_the_temporary_one() {
    // A file-size limit of 512 bytes (`ulimit -f 1`, its signal ignored so
    // that write(2) fails with EFBIG) makes writing the SVG fail as a full
    // disk does; the temporary `.gradcalc-….tmp` was named instead of out.svg.
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new("sh")
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .args([
            "-c",
            "trap '' XFSZ; ulimit -f 1; exec \"$0\" -e 'x = 2; y = x*x' -e ':svg out.svg'",
            env!("CARGO_BIN_EXE_gradcalc"),
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout_of(&output), "x = 2\ny = 4\n");
    let stderr = stderr_of(&output);
    assert!(
        stderr.starts_with("error: cannot write out.svg: File too large (os error 27)\n"),
        "{stderr}"
    );
    assert!(!stderr.contains(".tmp"), "{stderr}");
    // Nothing is left behind: no out.svg, no temporary file.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn special_and_huge_files_are_refused_without_reading() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let big = dir.path().join("big.calc");
    // Sparse: 1 GiB long, no blocks written.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    for (name, says) in [
        ("fifo", "not a regular file"),
        ("sub", "it is a directory"),
        ("big.calc", "larger than 64 MiB"),
        ("/dev/zero", "not a regular file"),
    ] {
        let output = run_in(dir.path(), &[name]);
        assert_eq!(output.status.code(), Some(2), "{name}");
        assert!(
            stderr_of(&output).contains(says),
            "{name}: {}",
            stderr_of(&output)
        );
        let output = run_in(dir.path(), &["-e", &format!(":load {name}")]);
        assert_eq!(output.status.code(), Some(1), "{name}");
        assert!(
            stderr_of(&output).contains(says),
            "{name}: {}",
            stderr_of(&output)
        );
    }
}

#[test]
fn keep_going_still_stops_at_quit() {
    let output = output_of(&["--keep-going", "-e", "1 +", "-e", ":quit", "-e", "5"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout_of(&output), "");
}

#[test]
fn json_mode_writes_only_json_and_dash_is_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let output = run_in(
        dir.path(),
        &["--json", "-e", "x = 2; :save s.calc; x*x; :dot -"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let events = json_lines(&stdout_of(&output));
    assert_eq!(events[1]["kind"], "wrote");
    assert_eq!(events[1]["path"], "s.calc");
    assert_eq!(events[3]["kind"], "output");
    assert!(
        events[3]["content"]
            .as_str()
            .unwrap()
            .starts_with("digraph")
    );
    // Human: the DOT text in order between the lines around it.
    let output = run_in(dir.path(), &["-e", "x = 2; x*x; :dot -; 7"]);
    let stdout = stdout_of(&output);
    assert!(stdout.starts_with("x = 2\n4\ndigraph"), "{stdout}");
    assert_ends_with(&stdout, "}\n7\n");
}

#[test]
fn trace_formulas_are_the_rules_with_the_operands_labels() {
    let cases: [(&str, &[&str]); 5] = [
        // b is a variable of the session, not a placeholder: d(1/a)/da = -1/a² = -0.25.
        (
            "a = 2; b = 5; y = 1/a; :trace",
            &["→ a: local ∂(1/a)/∂a = -1/a^2 = -0.25;"],
        ),
        // atan'(0.7) = 1/1.49; atan'(3) = 1/10, as the textbook writes it (the
        // number comes from a form that cannot overflow; the text does not show it).
        (
            "x = 0.7; y = atan(x); :trace; x = 3; y = atan(x); :trace",
            &[
                "local ∂atan(x)/∂x = 1/(1 + x^2) = 0.6711409396;",
                "local ∂atan(x)/∂x = 1/(1 + x^2) = 0.1;",
            ],
        ),
        // Constant arithmetic folded: d(x²)/dx = 2x = 4, d(x³)/dx = 3x² = 12 at x = 2.
        (
            "x = 2; y = x^2; :trace; x^3; :trace",
            &[
                "local ∂(x^2)/∂x = 2*x = 4;",
                "local ∂(x^3)/∂x = 3*x^2 = 12;",
            ],
        ),
        // An unnamed operand is written by its definition: d(sin(x)*w)/d(sin(x)) = w.
        (
            "x = 1; w = 3; y = sin(x)*w; :trace",
            &["→ _2: local ∂(sin(x)*w)/∂sin(x) = w = 3;"],
        ),
        // A flat op passes nothing, and says so.
        (
            "x = 1.5; y = floor(x)*x; :trace",
            &[
                "→ _1: local ∂(floor(x)*x)/∂floor(x) = x = 1.5;",
                "→ x: ∂floor(x)/∂x passes nothing here (not differentiable);  grad 1 stays   (2nd of 2 uses)\n",
            ],
        ),
    ];
    for (script, lines) in cases {
        let output = output_of(&["-e", script]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
        let text = stdout_of(&output);
        for line in lines {
            assert!(text.contains(line), "{script}: no `{line}` in\n{text}");
        }
    }
}

#[test]
fn trace_steps_are_numbered_as_shown_and_counted_alike_everywhere() {
    let script = "x = 2; y = x^2 + 1";
    // y, x^2 and x, numbered [1] to [3]; the constants 2 and 1 are left out
    // and not numbered. ∂(x^2)/∂x = 2x = 4 at x = 2.
    expect![[r#"
        x = 2
        y = 5
        backward pass from y: 3 nodes in reverse topological order (2 constants not shown); upstream = ∂y/∂node, seeded with 1
        [1] y = _2 + 1 = 5   upstream 1
              → _2: local ∂(x^2 + 1)/∂(x^2) = 1;  1 × 1 = 1;  grad 0 → 1
        [2] _2 = x ^ 2 = 4   upstream 1
              → x: local ∂(x^2)/∂x = 2*x = 4;  1 × 4 = 4;  grad 0 → 4
        [3] x leaf = 2   ∂y/∂x = 4
    "#]].assert_eq(&transcript(&["-e", script, "-e", ":trace"]));
    // No constant: none said to be left out.
    check(
        "x = 2; y = x*x; :trace",
        expect![[r#"
        x = 2
        y = 4
        backward pass from y: 2 nodes in reverse topological order; upstream = ∂y/∂node, seeded with 1
        [1] y = x * x = 4   upstream 1
              → x: local ∂(x*x)/∂x = x = 2;  1 × 2 = 2;  grad 0 → 2   (1st of 2 uses)
              → x: local ∂(x*x)/∂x = x = 2;  1 × 2 = 2;  grad 2 → 4   (2nd of 2 uses: accumulated)
        [2] x leaf = 2   ∂y/∂x = 4
    "#]],
    );

    let json = output_of(&["--json", "-e", script, "-e", ":trace"]);
    let events = json_lines(&stdout_of(&json));
    let trace = events.iter().find(|e| e["kind"] == "trace").unwrap();
    assert_eq!(trace["total"], 3);
    assert_eq!(trace["constants"], 2);
    let steps = trace["steps"].as_array().unwrap();
    let positions: Vec<u64> = steps
        .iter()
        .map(|s| s["position"].as_u64().unwrap())
        .collect();
    assert_eq!(positions, [1, 2, 3]);
    let square = &steps[1]["contributions"][0];
    assert_eq!(square["partial"], "∂(x^2)/∂x");
    assert_eq!(square["formula"], "2*x");
    assert_eq!(square["local"], 4);

    // The node's cell shows x ^ 2; the local derivative is written by its
    // operands, as `:trace` writes it (∂_2/∂x would read as a whole gradient).
    expect![[r#"
        x = 2
        y = 5
        | Step | Node | Upstream | Local derivative | Contribution | Gradient |
        |---|---|---|---|---|---|
        | 1 | y = \_2 + 1 = 5 | 1 | ∂(x^2 + 1)/∂(x^2) = 1 | 1 | \_2: 0 → 1 |
        | 2 | \_2 = x ^ 2 = 4 | 1 | ∂(x^2)/∂x = 2\*x = 4 | 4 | x: 0 → 4 |
        | 3 | x = 2 (leaf) |  |  |  | ∂y/∂x = 4 |
    "#]]
    .assert_eq(&transcript(&["-e", script, "-e", ":trace md"]));
    expect![[r#"
        x = 2
        y = 5
        % backward pass of y, written by gradcalc
        % needs \usepackage{booktabs,xltabular} in the preamble
        % a table over several pages needs a second LaTeX run (column widths)
        {\footnotesize\setlength{\tabcolsep}{4pt}
        \begin{xltabular}{\linewidth}{@{}r >{\raggedright\arraybackslash}X r >{\raggedright\arraybackslash}X r >{\raggedright\arraybackslash}X@{}}
        \toprule
        Step & Node & Upstream & Local derivative & Contribution & Gradient \\
        \midrule
        \endhead
        1 & $y=\_2+1=5$ & $1$ & $\partial (x^{2}+1)/\allowbreak \partial (x^{2})=1$ & $1$ & $\_2$: $0\to 1$ \\
        2 & $\_2=x^{2}=4$ & $1$ & $\partial (x^{2})/\allowbreak \partial x=2\cdot x=4$ & $4$ & $x$: $0\to 4$ \\
        3 & $x=2$ (leaf) &  &  &  & $\partial y/\allowbreak \partial x=4$ \\
        \bottomrule
        \end{xltabular}}
    "#]].assert_eq(&transcript(&["-e", script, "-e", ":trace tex"]));
}

#[test]
fn dash_is_standard_input_and_piped_input_beside_e_is_named_not_dropped() {
    // `-` runs standard input where it stands: before the -e statements.
    let output = output_with_stdin(&["-", "-e", "x^2"], "x = 3\n");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout_of(&output), "x = 3\n9\n");
    // Without `-`, input waiting on stdin beside -e is not run, and a note says
    // so. (A file as stdin: its bytes are there before gradcalc starts, where a
    // pipe's writer could still be on its way.)
    let (_dir, input) = folder_with("input.calc", "x = 3\n");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_gradcalc"))
        .args(["-e", "2 + 2"])
        .env("NO_COLOR", "1")
        .stdin(std::fs::File::open(&input).unwrap())
        .output()
        .unwrap();
    assert_eq!(stdout_of(&output), "4\n");
    assert_contains(
        &stderr_of(&output),
        "standard input is not read when -e or a FILE is given",
    );
}

#[test]
fn batch_results_alone_on_stdout_warnings_and_notices_on_stderr() {
    // The results before `--- stderr`, the warning and the notice about `e` after it.
    check(
        "e = 2; y = 1/0",
        expect![[r#"
        e = 2
        y = inf
        --- stderr
        note: `e` was the constant 2.718281828459045; from now on it names your variable (`:reset` restores it)
        warning: division by zero gives inf (in `1/0` at -e:1:12)
    "#]],
    );
}

#[test]
fn integers_that_f64_holds_exactly_print_whole() {
    // 2^40 = 1099511627776 and 2^53 = 9007199254740992 exactly; 2^60 is past
    // where every integer is exact, so it keeps the exponent form.
    let output = output_of(&["-e", "2^40; 123456789012; 2^53; 2^60"]);
    assert_eq!(
        stdout_of(&output),
        "1099511627776\n123456789012\n9007199254740992\n1.152921505e18\n"
    );
}

#[test]
fn ctrl_c_in_a_batch_run_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("long.calc");
    // d18(x) builds 2^19 − 1 nodes through calls: seconds in a debug build.
    let mut text = doubling_functions("t + 1", 18, "\n");
    text.push_str("\nx = 1\ny = d18(x) + d17(x)\nnever = 1\n");
    std::fs::write(&script, text).unwrap();
    // Once it has worked a while (CPU time, whatever the load): it is running
    // the statements.
    let output = interrupted_after(&[&script], std::time::Duration::from_millis(300));
    let stdout = stdout_of(&output);
    assert_contains(&stdout, "x = 1");
    assert!(!stdout.contains("never"), "{stdout}");
    assert!(stderr_of(&output).contains("interrupted"), "{output:?}");
}

#[test]
fn bare_help_quit_and_exit_work_as_in_other_calculators() {
    let help = output_of(&["-e", "help"]);
    assert_eq!(help.status.code(), Some(0));
    let text = stdout_of(&help);
    assert!(
        text.contains("Commands:") && text.contains(":grad"),
        "{text}"
    );

    for word in ["quit", "exit"] {
        let output = gradcalc()
            .write_stdin(format!("x = 1\n{word}\nx + 1\n"))
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        assert_eq!(stdout_of(&output), "x = 1\n", "{word}");
    }

    // A variable of that name wins; inside an expression the word is a name.
    let output = output_of(&["-e", "exit = 5; exit; exit + 1; help"]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout_of(&output);
    assert!(text.starts_with("exit = 5\n5\n6\n"), "{text}");
    assert_contains(&text, "Commands:");
    check(
        "quit + 1",
        expect![[r#"
        --- stderr
        error: unknown name `quit`
          ┌─ -e:1:1
          │
        1 │ quit + 1
          │ ^^^^ assign it first, e.g. `quit = 1`

        --- exit status 1
    "#]],
    );
}

#[test]
fn errors_after_mathematical_symbols_point_at_the_original_text() {
    // Multi-byte operators, subscripts and a decomposed `é` before the error:
    // line and column count characters of the text as typed.
    let source = "x₁ = 2\nx₁×√(2 + )";
    let output = output_of(&["--json", "-e", source]);
    assert_eq!(output.status.code(), Some(1));
    let events = json_lines(&stdout_of(&output));
    let error = events.last().unwrap();
    assert_eq!(error["kind"], "error");
    assert_eq!(
        (error["line"].as_u64(), error["column"].as_u64()),
        (Some(2), Some(10))
    );

    let source = "cafe\u{301} = 1; cafe\u{301} + )";
    let output = output_of(&["--json", "-e", source]);
    let events = json_lines(&stdout_of(&output));
    assert_eq!(events[0]["name"], "caf\u{e9}");
    let error = events.last().unwrap();
    assert_eq!(
        (error["line"].as_u64(), error["column"].as_u64()),
        (Some(1), Some(20))
    );

    // `2e` is pointed at (column 5), with both readings: `2*e` and `2e0`.
    check(
        "y = 2e + 1",
        expect![[r#"
        --- stderr
        error: malformed number `2e`: a number followed directly by `e` is ambiguous
          ┌─ -e:1:5
          │
        1 │ y = 2e + 1
          │     ^^ write `2*e` for 2·e, or `2e0` (`2e3`, …) for a power of ten

        --- exit status 1
    "#]],
    );
}

#[test]
fn lines_a_newcomer_found_false_are_true() {
    // ln'(1e-4) = 1e4: the check's step stays small beside x, so it passes.
    check(
        "x = 1e-4; y = ln(x); :check",
        expect![[r#"
        x = 0.0001
        y = -9.210340372
        ∂y/∂x at x = 0.0001: reverse mode 10000, central difference 10000.00333 (h = 1e-7), |difference| 0.003333327824 ≤ 1e-8 + 0.00001·|central difference|  pass
    "#]],
    );
    // sqrt'(2e-5) = 1/(2·sqrt(2e-5)) = 111.8033989.
    check(
        "x = 2e-5; y = sqrt(x); :check",
        expect![[r#"
        x = 0.00002
        y = 0.004472135955
        ∂y/∂x at x = 0.00002: reverse mode 111.8033989, central difference 111.8034129 (h = 2e-8), |difference| 0.00001397544312 ≤ 1e-8 + 0.00001·|central difference|  pass
    "#]],
    );
    // x^-1: the exponent is the constant -1, left out of the trace like 3 in
    // x^3 (no ∂(-1)); ∂(x^-1)/∂x = -x^-2 = -1/9.
    check(
        "x = 3; y = x^-1; :trace",
        expect![[r#"
        x = 3
        y = 0.3333333333
        backward pass from y: 2 nodes in reverse topological order (1 constant not shown); upstream = ∂y/∂node, seeded with 1
        [1] y = x ^ -1 = 0.3333333333   upstream 1
              → x: local ∂(x^(-1))/∂x = -1*x^(-2) = -0.1111111111;  1 × (-0.1111111111) = -0.1111111111;  grad 0 → -0.1111111111
        [2] x leaf = 3   ∂y/∂x = -0.1111111111
    "#]],
    );
    // A constant is written in full at any precision: x * 1.0001, never x * 1.
    check(
        ":precision 3; x = 1234567; y = x*1.0001; :trace",
        expect![[r#"
        numbers show 3 significant digits
        x = 1234567
        y = 1.23e6
        backward pass from y: 2 nodes in reverse topological order (1 constant not shown); upstream = ∂y/∂node, seeded with 1
        [1] y = x * 1.0001 = 1.23e6   upstream 1
              → x: local ∂(x*1.0001)/∂x = 1.0001;  1 × 1 = 1;  grad 0 → 1
        [2] x leaf = 1234567   ∂y/∂x = 1
    "#]],
    );
    // An expression output is bracketed in the chain-rule sentence of :paths.
    check(
        "x = 2; x^2 + sin(x); :paths x",
        expect![[r#"
        x = 2
        4.909297427
        paths from x^2 + sin(x) to x: 2 (chain rule: ∂(x^2 + sin(x))/∂x is the sum over paths of the product of local derivatives)
           1. _4 → _2 → x   1 × 4 = 4
           2. _4 → _3 → x   1 × (-0.4161468365) = -0.4161468365
          sum = 3.583853163 = ∂(x^2 + sin(x))/∂x   (reverse mode visited each of 5 nodes once)
    "#]],
    );
}

#[test]
fn an_output_built_from_an_earlier_binding_only_says_so() {
    // x += 1 makes a new x from the earlier one; no variable as it is now feeds it.
    // Not "depends on no variable": it was built from an earlier x.
    check(
        "x = 2; y = x^2; x += 1; :grad",
        expect![[r#"
        x = 2
        y = 4
        x = 3
        --- stderr
        note: x was built from an earlier x: no variable as it is now feeds it
    "#]],
    );
}

/// `:check` and `:hessian` give the same reason as `:grad` for an output
/// built from an earlier binding only: `:check` names the variable it leaves
/// out (and does not add "depends on no variable"), `:hessian` says what
/// `:grad` says.
#[test]
fn check_and_hessian_say_an_output_was_built_from_an_earlier_binding() {
    check(
        "x = 1; y = x*x; x = 5; :check; :hessian",
        expect![[r#"
        x = 1
        y = 1
        x = 5
        --- stderr
        note: not checked: ∂y/∂x = 0 (y was built from an earlier x)
        note: y was built from an earlier x: no variable as it is now feeds it
    "#]],
    );
}

/// The hint for a statement that builds too many nodes through calls names the
/// function that calls another twice, and suggests `2*g(t)` only where that is
/// the same value (both calls take the same arguments).
#[test]
fn too_many_call_nodes_name_the_call_made_twice() {
    let hint_of = |definitions: String, call: &str| {
        let (events, code) =
            crate::util::json_events(&["-e", &definitions, "-e", "x = 1", "-e", call]);
        assert_eq!(code, Some(1));
        let error = events.last().unwrap();
        assert_eq!(error["kind"], "error");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("more than 1000000 nodes"),
            "{error}"
        );
        error["help"].as_str().unwrap().to_string()
    };
    // d_k(t) = d_{k-1}(t) + d_{k-1}(t): d20(x) is 2^21 − 1 nodes.
    let doubling = doubling_functions("t + 1", 21, "; ");
    // c_k(t) = c_{k-1}(c_{k-1}(t)): composition, 2^21 calls of c0 by c21.
    let mut composing = String::from("c0(t) = t + 1");
    for k in 1..=21 {
        composing.push_str(&format!("; c{k}(t) = c{0}(c{0}(t))", k - 1));
    }
    assert_eq!(
        hint_of(doubling, "d20(x)"),
        "`d20` calls `d19(t)` twice, so the size doubles at every level: call it once, e.g. `2*d19(t)` for `d19(t) + d19(t)`"
    );
    assert_eq!(
        hint_of(composing, "c21(x)"),
        "`c21` calls `c20` more than once, so the size doubles at every level"
    );
    // A big body (s0: 4 000 nodes a call) called 300 times from the statement
    // itself: no body repeats a call, so no doubling is named.
    let sum: Vec<String> = (0..2000).map(|i| format!("t*{i}")).collect();
    let wide = format!("s0(t) = {}; s1(t) = s0(t) + 1", sum.join(" + "));
    let calls: Vec<String> = (0..300).map(|i| format!("s1({i})")).collect();
    assert_eq!(
        hint_of(wide, &calls.join(" + ")),
        "split the computation into statements, or keep a result in a variable and use it again"
    );
}

#[test]
fn paths_in_json_give_each_edge_its_rule_with_the_real_operands() {
    let (events, status) =
        crate::util::json_events(&["-e", "a = 2; b = 3; z = b*a", "-e", ":paths a"]);
    assert_eq!(status, Some(0));
    let paths = events.iter().find(|e| e["kind"] == "paths").unwrap();
    let edge = &paths["paths"][0]["edges"][0];
    // z = b*a: ∂z/∂a = b = 3 (by hand).
    assert_eq!(edge["formula"], "∂(b*a)/∂a = b", "{paths}");
    assert_eq!(edge["local"], 3.0, "{paths}");

    // Every edge's right side, typed back into the same session, gives its
    // local derivative.
    let setup = "x = 2; w = -3; y = tanh(x*w)*x + exp(x)/w";
    let (events, status) = crate::util::json_events(&["-e", setup, "-e", ":paths x"]);
    assert_eq!(status, Some(0));
    let paths = events.iter().find(|e| e["kind"] == "paths").unwrap();
    let edges: Vec<&Value> = members(&paths["paths"])
        .flat_map(|p| p["edges"].as_array().unwrap())
        .collect();
    assert!(edges.len() >= 5, "{paths}");
    for edge in edges {
        let formula = edge["formula"].as_str().unwrap();
        let (_, rhs) = formula
            .split_once(" = ")
            .unwrap_or_else(|| panic!("no rule in {formula}"));
        let (typed, _) = crate::util::json_events(&["-e", setup, "-e", rhs]);
        let value = crate::util::json_number(&typed.last().unwrap()["value"]).unwrap();
        let local = crate::util::json_number(&edge["local"]).unwrap();
        // `1 - tanh(x*w)^2` at x*w = -6 cancels: 1 - tanh² = 2.5e-5 loses
        // about 4.6 digits (condition 4e4), the printed local (sech², no
        // cancellation) does not.
        let tolerance = if rhs.contains("tanh(") { 1e-10 } else { 1e-15 };
        assert_close(value, local, tolerance);
    }
}

#[test]
fn the_file_exists_hint_names_the_command_that_was_run_and_following_it_works() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("slides")).unwrap();
    let setup = "x = 1; y = x^2";
    // (command, file it writes, the hint, how the replaced file starts)
    let cases = [
        (":dot g.dot", "g.dot", ":dot -f g.dot", "digraph"),
        (
            ":svg g.svg --before",
            "g.svg",
            ":svg -f g.svg --before",
            "<svg",
        ),
        (
            ":trace md t.md",
            "t.md",
            ":trace md -f t.md",
            "| Step | Node |",
        ),
        (
            ":trace tex t.tex",
            "t.tex",
            ":trace tex -f t.tex",
            "% backward pass",
        ),
        (
            ":plot x -1 1 p.svg",
            "p.svg",
            ":plot x -1 1 -f p.svg",
            "<svg",
        ),
        (
            ":repeat 2 r.svg x := x",
            "r.svg",
            ":repeat 2 -f r.svg x := x",
            "<svg",
        ),
        (":save s.calc", "s.calc", ":save -f s.calc", "# gradcalc"),
        (
            ":svg slides --steps",
            "slides/step-000.svg",
            ":svg -f slides --steps",
            "<svg",
        ),
    ];
    for (command, file, hint, start) in cases {
        let path = dir.path().join(file);
        std::fs::write(&path, "old\n").unwrap();
        let output = run_in(dir.path(), &["-e", setup, "-e", command]);
        let stderr = stderr_of(&output);
        assert!(stderr.contains("already exists"), "{command}: {stderr}");
        assert!(
            stderr.contains(&format!("`{hint}`")),
            "{command}: the hint is not `{hint}`: {stderr}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
        // Typing the hint replaces the file with what the command makes.
        let output = run_in(dir.path(), &["-e", setup, "-e", hint]);
        assert_eq!(output.status.code(), Some(0), "{hint}: {output:?}");
        let written = std::fs::read_to_string(&path).unwrap();
        let written = written.trim_start_matches("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        assert!(written.starts_with(start), "{hint} wrote {written:.80}");
    }
}

#[test]
fn ctrl_c_during_repeat_in_a_batch_run_reports_the_steps_done() {
    // w_k = 3·(1 − (1 − 2e-7)^k) after k steps of w := w − 1e-7·2(w − 3);
    // a million steps take far longer than the wait in a debug build.
    let setup = "w = 0; L = (w - 3)^2";
    let repeat = ":repeat 1000000 w := w - 0.0000001*grad(L, w)";
    // CPU time before Ctrl-C: tens of thousands of steps, whose JSON event
    // (every step's output) is still a line of a few hundred kilobytes.
    let wait = std::time::Duration::from_millis(200);
    let expected = |k: f64| 3.0 * (1.0 - (1.0 - 2e-7_f64).powf(k));

    let output = interrupted_after(&["-e", setup, "-e", repeat, "-e", "never = 1"], wait);
    let stdout = stdout_of(&output);
    let at = stdout
        .find("interrupted after ")
        .unwrap_or_else(|| panic!("no \"interrupted after\" in {stdout:?}"));
    let steps: u64 = stdout[at + 18..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_contains(
        &stdout,
        &format!("interrupted after {steps} of 1000000 steps"),
    );
    assert!(!stdout.contains("never"), "{stdout}");
    // The last row is the last step done, with its w.
    let last = stdout
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{steps} ")))
        .unwrap_or_else(|| panic!("no row {steps} in {stdout}"));
    let w: f64 = last.split_whitespace().last().unwrap().parse().unwrap();
    assert_close(w, expected(steps as f64), 1e-8);

    let output = interrupted_after(&["--json", "-e", setup, "-e", repeat], wait);
    let events = json_lines(&stdout_of(&output));
    let repeat = events
        .iter()
        .find(|e| e["kind"] == "repeat")
        .unwrap_or_else(|| panic!("no repeat event in {events:?}"));
    assert_eq!(repeat["interrupted"], true, "{repeat}");
    assert_eq!(repeat["requested"], 1_000_000, "{repeat}");
    assert_eq!(repeat["partial"], 0, "{repeat}");
    let steps = repeat["steps"].as_u64().unwrap();
    assert!(steps < 1_000_000, "{repeat}");
    // The output before the first step (step 0), then after each step done.
    assert_eq!(
        repeat["outputs"].as_array().unwrap().len() as u64,
        steps + 1
    );
    let rows = repeat["rows"].as_array().unwrap();
    if let Some(row) = rows.last() {
        assert_eq!(row["step"].as_u64(), Some(steps), "{repeat}");
        let w = row["values"][0].as_f64().unwrap();
        assert_close(w, expected(steps as f64), 1e-8);
    }
}

#[test]
fn ctrl_c_inside_a_repeat_step_leaves_the_last_row_at_the_finished_step() {
    // d15(t) = 2^15·(t + 1) built as a tree of 2^16 nodes, so `z = d15(w)`
    // takes most of each step and Ctrl-C lands inside it, after the kept
    // `w := …` of the step cut short. w_k = 0.1·0.8^k after k steps (∂L/∂w =
    // 2w). Of 1000 steps the table keeps 1, 2, 3 and every 100th, so the
    // last row is the step the interruption cut after.
    //
    // No wait is a time: in line mode (each line answered before the next
    // is written), a first `:repeat 4` of the same step measures the CPU
    // time of 4 steps in this very process, and Ctrl-C goes once the
    // `:repeat 1000` has used the CPU time of 8; should fewer than 4 have
    // finished (a step slowed by a collection), the session goes on and
    // the next try waits for twice as many.
    use crate::kernel::{Kernel, events};
    let step = "w := w - 0.1*grad(L, w); z = d15(w); w";
    let mut kernel = Kernel::start();
    let pid = kernel.child.id();
    kernel.run(&doubling_functions("t + 1", 15, "; "));
    kernel.run("w = 0.1; L = w^2");
    let cpu = || crate::util::cpu_time(pid).expect("the session runs");
    let before = cpu();
    let out = kernel.run(&format!(":repeat 4 {step}"));
    let four_steps = cpu() - before;
    assert!(out.contains(r#""steps":4"#), "{out}");
    let mut done = 4;
    let mut steps_of_work = 8;
    for _ in 0..4 {
        let line = format!(":repeat 1000 {step}");
        writeln!(kernel.stdin, "{line}").unwrap();
        kernel.stdin.flush().unwrap();
        crate::util::wait_for_cpu(pid, cpu() + four_steps * steps_of_work / 4);
        kernel.interrupt();
        let out = kernel.until_ready(&line);
        let all = events(&out);
        let repeat = all
            .iter()
            .find(|e| e["kind"] == "repeat")
            .unwrap_or_else(|| panic!("no repeat event in {out}"));
        assert_eq!(repeat["interrupted"], true, "{repeat}");
        let steps = repeat["steps"].as_u64().unwrap();
        // The steps before the interrupted one are kept, and the
        // statements of that one which ran (`partial`): w moved on.
        let k = done + steps as i32;
        done = k + i32::from(repeat["partial"].as_u64() > Some(0));
        if steps < 4 {
            steps_of_work *= 2;
            continue;
        }
        let row = repeat["rows"].as_array().unwrap().last().unwrap();
        assert_eq!(row["step"].as_u64(), Some(steps), "{repeat}");
        let w = row["values"][0].as_f64().unwrap();
        assert_close(w, 0.1 * 0.8_f64.powi(k), 1e-12);
        // z = 2^15·(w + 1) at the same step.
        let z = row["output"].as_f64().unwrap();
        assert_close(z, 32768.0 * (1.0 + 0.1 * 0.8_f64.powi(k)), 1e-9);
        return;
    }
    panic!("fewer than 4 steps ran before each Ctrl-C");
}

#[test]
fn repeat_onto_an_existing_file_gives_a_hint_that_can_be_typed() {
    let (dir, _) = folder_with("r.svg", "old");
    let setup = "x = 2; y = 3; z = x*y + x";
    let output = run_in(
        dir.path(),
        &["-e", setup, "-e", ":repeat 3 r.svg x := x - 0.1*grad(z, x)"],
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = stderr_of(&output);
    assert_contains(&stderr, "it already exists (not replaced); nothing ran");
    let hint = "`:repeat 3 -f r.svg x := x - 0.1*grad(z, x)`";
    assert_contains(&stderr, hint);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("r.svg")).unwrap(),
        "old"
    );
    // The hint, typed: x goes 2 → 1.6 → 1.2 → 0.8 (∂z/∂x = y + 1 = 4).
    let typed = run_in(
        dir.path(),
        &["-e", setup, "-e", hint.trim_matches('`'), "-e", "x"],
    );
    assert!(typed.status.success(), "{typed:?}");
    assert!(stdout_of(&typed).ends_with("0.8\n"), "{typed:?}");
    let svg = std::fs::read_to_string(dir.path().join("r.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");

    // A command too long to quote whole is described, not cut.
    let long = format!(
        ":repeat 3 r.svg x := x - 0.1*grad(z, x){}",
        " + 0*y".repeat(40)
    );
    let output = run_in(dir.path(), &["-e", setup, "-e", &long]);
    let stderr = stderr_of(&output);
    assert_contains(&stderr, "add `-f` after the step count");
    assert!(!stderr.contains("`:repeat 3 -f"), "{stderr}");
}

#[test]
fn an_update_that_makes_inf_or_nan_warns_as_evaluation_does() {
    // ln(0) = -inf: typed directly and reached by `:=`, the same warning.
    check(
        "L = ln(0)",
        expect![[r#"
        L = -inf
        --- stderr
        warning: logarithm of 0 gives -inf (in `ln(0)` at -e:1:5)
    "#]],
    );
    check(
        "w = 1; L = ln(w); w := 0",
        expect![[r#"
        w = 1
        L = 0
        w := 0  (1 node evaluated again)
          L = -inf  (was 0)
        --- stderr
        warning: logarithm of 0 gives -inf: now L = -inf (in `w := 0` at -e:1:19)
    "#]],
    );
    // Finite to finite: no warning.
    check(
        "w = 1; L = ln(w); w := 2",
        expect![[r#"
        w = 1
        L = 0
        w := 2  (1 node evaluated again)
          L = 0.6931471806  (was 0)
    "#]],
    );
}

#[test]
fn a_repeat_says_after_which_steps_its_output_was_not_finite() {
    // L = ln(w) after w := w - 1 from 2: ln(1) = 0, ln(0) = -inf, then ln of
    // -1, -2, -3 = nan: steps 2 to 5 are not finite.
    let output = output_of(&["-e", "w = 2; L = ln(w)", "-e", ":repeat 5 w := w - 1"]);
    let stdout = stdout_of(&output);
    assert_contains(
        &stdout,
        "note: L is not finite after steps 2 to 5: the plot leaves them out",
    );
    let output = output_of(&["-e", "w = 2; L = w^2", "-e", ":repeat 5 w := w - 1"]);
    assert!(!stdout_of(&output).contains("not finite"));
}

#[test]
fn ascii_output_brackets_calls_after_d_and_writes_subscripts_with_underscores() {
    let text = transcript(&["--ascii", "-e", "x = 1; y = x^2*sin(x)", "-e", ":trace"]);
    assert!(text.is_ascii(), "{text}");
    // ∂(x²·sin x)/∂(sin x) = x² = 1 and ∂sin(x)/∂x = cos(x) = 0.5403023059
    // at x = 1; never `dsin`.
    expect![[r#"
        x = 1
        y = 0.8414709848
        backward pass from y: 4 nodes in reverse topological order (1 constant not shown); upstream = dy/dnode, seeded with 1
        [1] y = _2 * _3 = 0.8414709848   upstream 1
              -> _2: local d(x^2*sin(x))/d(x^2) = sin(x) = 0.8414709848;  1 * 0.8414709848 = 0.8414709848;  grad 0 -> 0.8414709848
              -> _3: local d(x^2*sin(x))/d(sin(x)) = x^2 = 1;  1 * 1 = 1;  grad 0 -> 1
        [2] _3 = sin(x) = 0.8414709848   upstream 1
              -> x: local d(sin(x))/dx = cos(x) = 0.5403023059;  1 * 0.5403023059 = 0.5403023059;  grad 0 -> 0.5403023059   (1st of 2 uses)
        [3] _2 = x ^ 2 = 1   upstream 0.8414709848
              -> x: local d(x^2)/dx = 2*x = 2;  0.8414709848 * 2 = 1.68294197;  grad 0.5403023059 -> 2.223244275   (2nd of 2 uses: accumulated)
        [4] x leaf = 1   dy/dx = 2.223244275
    "#]].assert_eq(&text);
    let output = output_of(&[
        "--ascii",
        "-e",
        "x₁ = 3; w₂₁ = 2; y = x₁*w₂₁",
        "-e",
        ":grad",
    ]);
    assert_eq!(
        stdout_of(&output),
        "x_1 = 3\nw_21 = 2\ny = 6\ndy/dx_1 = 2\ndy/dw_21 = 3\n"
    );
}

/// −0 (IEEE negative zero: 1/−0 = −inf) is written `-0` where numbers are
/// documented to read back exactly (`--precision full`, `:precision full`) and
/// `-0.0` in JSON (a JSON reader takes `-0` for the integer 0); the default
/// display keeps `0`.
#[test]
fn negative_zero_reads_back_in_full_precision_and_json() {
    let full = output_of(&["--precision", "full", "-e", "x = -0; 1/x"]);
    assert_eq!(stdout_of(&full), "x = -0\n-inf\n");
    let shown = output_of(&["-e", ":precision full", "-e", "x = -0; x"]);
    assert_ends_with(&stdout_of(&shown), "x = -0\n-0\n");
    let default = output_of(&["-e", "x = -0; 1/x"]);
    assert_eq!(stdout_of(&default), "x = 0\n-inf\n");
    let json = output_of(&["--json", "-e", "x = -0; y = 0*x"]);
    let lines: Vec<serde_json::Value> = stdout_of(&json)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for line in &lines[..2] {
        let value = line["value"].as_f64().unwrap();
        assert!(value == 0.0 && value.is_sign_negative(), "{line}");
    }
    assert!(stdout_of(&json).contains("\"value\":-0.0"));
}

/// `:check` beside `detach`: reverse mode leaves out the detached path (its
/// gradient is 0 by definition), the central difference moves through it, so
/// the verdict is FAIL, and the note says why. y = detach(x)·x at 0.5: reverse
/// ∂y/∂x = detach(x) = 0.5, central difference d(x²)/dx = 1.
#[test]
fn check_explains_a_failure_caused_by_detach() {
    let (events, status) =
        crate::util::json_events(&["-e", "x = 0.5; y = detach(x)*x", "-e", ":check"]);
    assert_eq!(status, Some(0));
    let check = events.iter().find(|e| e["kind"] == "check").unwrap();
    assert_eq!(check["verdict"], "fail", "{check}");
    assert_eq!(check["analytic"], 0.5);
    assert!((check["numeric"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    assert!(
        check["note"]
            .as_str()
            .unwrap()
            .contains("through detach(…)"),
        "{check}"
    );
    // A detached path whose contributions cancel (detach(x) − detach(x)):
    // both agree, 2x = 1, and no note is given.
    let (events, _) = crate::util::json_events(&[
        "-e",
        "x = 0.5; y = x^2 + detach(x) - detach(x)",
        "-e",
        ":check",
    ]);
    let check = events.iter().find(|e| e["kind"] == "check").unwrap();
    assert_eq!(check["verdict"], "pass", "{check}");
    assert!(check.get("note").is_none(), "{check}");
}

/// JSON's trace, like the text, md and tex ones, leaves out the contributions
/// into constants: y = x^2 + 3*x at x = 2 passes 3 and 2·2 = 4 to x, and
/// nothing else into a node that is not a step.
#[test]
fn json_trace_leaves_out_contributions_into_constants() {
    let (events, status) = json_events(&["-e", "x = 2; y = x^2 + 3*x; :trace"]);
    assert_eq!(status, Some(0));
    let trace = &events[2];
    assert_eq!(trace["kind"], "trace");
    let steps = trace["steps"].as_array().unwrap();
    let ids: Vec<&Value> = steps.iter().map(|s| &s["id"]).collect();
    let into: Vec<(&Value, &Value)> = steps
        .iter()
        .flat_map(|s| s["contributions"].as_array().unwrap())
        .map(|c| (&c["input"], &c["local"]))
        .collect();
    for (input, _) in &into {
        assert!(ids.contains(input), "a contribution into {input}: {trace}");
    }
    let into_x: Vec<f64> = steps
        .iter()
        .flat_map(|s| s["contributions"].as_array().unwrap())
        .filter(|c| c["input_name"] == "x")
        .map(|c| c["local"].as_f64().unwrap())
        .collect();
    assert_eq!(into_x, [3.0, 4.0]);
    assert_eq!(into.len(), 4, "two into the sum's operands, two into x");
}

/// A command used wrongly suggests itself: `:load` once suggested `:save
/// lesson.calc` (which writes a file), `:step foo` the `:trace` examples.
#[test]
fn a_wrong_use_suggests_the_same_command() {
    // `:load` suggests `:load lesson.calc`, `:step foo` the `:step` examples,
    // `:save` `:save lesson.calc`.
    check(
        ":load",
        expect![[r#"
        --- stderr
        error: `:load` takes one file name
          ┌─ -e:1:2
          │
        1 │ :load
          │  ^^^^ e.g. `:load lesson.calc`, or `:load "my lesson.calc"` for a name with spaces

        --- exit status 1
    "#]],
    );
    check(
        ":step foo",
        expect![[r#"
        --- stderr
        error: `:step` takes `all`, then `md` or `tex` and a file name
          ┌─ -e:1:2
          │
        1 │ :step foo
          │  ^^^^^^^^ e.g. `:step`, `:step all`

        --- exit status 1
    "#]],
    );
    check(
        ":save",
        expect![[r#"
        --- stderr
        error: `:save` takes one file name
          ┌─ -e:1:2
          │
        1 │ :save
          │  ^^^^ e.g. `:save lesson.calc`, or `:save "my lesson.calc"` for a name with spaces

        --- exit status 1
    "#]],
    );
}

/// A word that cannot be a name where a command takes names is said to be
/// one, not "unknown" with the impossible fix "assign it first, e.g. `3 = 1`".
#[test]
fn a_command_given_a_non_name_says_so() {
    // Each says the word is not a variable name, with an example of the
    // command; none says "assign it first".
    let run = |command: &str| transcript(&["-e", "x = 1; z = 2*x", "-e", command]);
    expect![[r#"
        x = 1
        z = 2
        --- stderr
        error: `3` is not a variable name: `:grad` takes names
          ┌─ -e #2:1:7
          │
        1 │ :grad 3
          │       ^ e.g. `:grad x y`

        --- exit status 1
    "#]]
    .assert_eq(&run(":grad 3"));
    expect![[r#"
        x = 1
        z = 2
        --- stderr
        error: `x+y` is not a variable name: `:backward` takes a name
          ┌─ -e #2:1:11
          │
        1 │ :backward x+y
          │           ^^^ e.g. `:backward z`

        --- exit status 1
    "#]]
    .assert_eq(&run(":backward x+y"));
    expect![[r#"
        x = 1
        z = 2
        --- stderr
        error: `3` is not a variable name: `:diff` takes names
          ┌─ -e #2:1:9
          │
        1 │ :diff z 3
          │         ^ e.g. `:diff y x`

        --- exit status 1
    "#]]
    .assert_eq(&run(":diff z 3"));
    // A label is name-shaped: `_0` is x's node, and ∂z/∂x = 2.
    let (events, status) = json_events(&["-e", "x = 1; z = 2*x", "-e", ":grad _0"]);
    assert_eq!(status, Some(0), "{events:?}");
    assert_eq!(events.last().unwrap()["value"], 2);
}

/// `x == 3` and the other comparisons outside brackets are refused as
/// comparisons, at the operator, not as "an operand after `=`" with a help
/// about names left of `=`; in brackets they are read (`tensor_rules.rs`).
#[test]
fn comparisons_are_refused_as_comparisons() {
    for (statement, op, column) in [
        ("x == 3", "==", 3),
        ("x != 3", "!=", 3),
        ("x <= 3", "<=", 3),
        ("x >= 3", ">=", 3),
        ("y = x < 3", "<", 7),
        ("y = x > 3", ">", 7),
        ("x ≤ 3", "≤", 3),
    ] {
        let (events, status) = json_events(&["-e", "x = 3", "-e", statement]);
        assert_eq!(status, Some(1), "{statement}");
        let error = events.last().unwrap();
        assert_eq!(
            error["message"],
            format!(
                "`{op}` compares only inside round brackets: `(a {op} b)` is 1 where it holds, else 0"
            ),
            "{statement}"
        );
        assert_eq!(error["column"], column, "{statement}");
        assert!(error["help"].as_str().unwrap().contains("`=` assigns"));
    }
}

/// In JSON mode every error is a JSON event on stdout, stderr stays empty:
/// arguments clap refuses too (exit 2). An error that is not in the text of a
/// source (the arguments, a file that cannot be read) has no line and column.
#[test]
fn json_errors_before_any_statement_are_json_events() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nofile.calc");
    let missing = missing.to_str().unwrap();
    let directory = dir.path().to_str().unwrap();
    for (args, message, source) in [
        (
            vec!["--precision", "0"],
            "invalid value '0' for '--precision <N|full>': expected a number of digits from 1 to 17, or `full`",
            "<arguments>",
        ),
        (
            vec!["--bogus"],
            "unexpected argument '--bogus' found",
            "<arguments>",
        ),
        (vec![missing], "cannot read ", missing),
        (vec![directory], "cannot read ", directory),
    ] {
        let output = gradcalc().arg("--json").args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr_of(&output), "", "{args:?}");
        let events = json_lines(&stdout_of(&output));
        assert_eq!(events.len(), 1, "{args:?}");
        let error = &events[0];
        assert_eq!(error["kind"], "error");
        assert!(
            error["message"].as_str().unwrap().starts_with(message),
            "{error}"
        );
        assert!(!error["message"].as_str().unwrap().contains('\u{1b}'));
        assert_eq!(error["source"], source);
        assert!(error.get("line").is_none() && error.get("column").is_none());
    }
    // Without --json clap's own report goes to stderr (its whole text is in
    // `usage_errors_exit_2`).
    let plain = gradcalc().arg("--bogus").output().unwrap();
    assert_eq!(plain.status.code(), Some(2));
    assert!(stderr_of(&plain).contains("unexpected argument '--bogus'"));
    assert_eq!(stdout_of(&plain), "");
}

/// A warning names the source its statement is in: a `:load`ed file's
/// warning is at that file's line, not the caller's (text and JSON).
#[test]
fn warnings_name_their_source() {
    let (dir, _) = folder_with("w2.calc", "a = 2\n\nb = 1/0\n");
    let text = output_in(dir.path(), &["-e", "x = 1/0", "-e", ":load w2.calc"]);
    assert_eq!(text.status.code(), Some(0));
    assert_eq!(
        stderr_of(&text),
        "warning: division by zero gives inf (in `1/0` at -e #1:1:5)\n\
         warning: division by zero gives inf (in `1/0` at w2.calc:3:5)\n"
    );
    let json = output_in(
        dir.path(),
        &["--json", "-e", "x = 1/0", "-e", ":load w2.calc"],
    );
    let warnings: Vec<(Value, Value, Value)> = json_lines(&stdout_of(&json))
        .into_iter()
        .filter(|e| e["kind"] == "warning")
        .map(|e| (e["source"].clone(), e["line"].clone(), e["column"].clone()))
        .collect();
    assert_eq!(
        warnings,
        [
            ("-e #1".into(), 1.into(), 5.into()),
            ("w2.calc".into(), 3.into(), 5.into())
        ]
    );
}

/// A long `:topo` is summarised: `omitted` is `{after, count}`, and the rows
/// shown plus the rows left out are all of them. y = x*1 + … + x*39 has
/// 1 leaf, 39 constants, 39 products and 38 sums: 117 nodes.
#[test]
fn json_topo_summary_has_after_and_count() {
    let terms: Vec<String> = (1..40).map(|i| format!("x*{i}")).collect();
    let statement = format!("x = 1; y = {}; :topo", terms.join(" + "));
    let (events, status) = json_events(&["-e", &statement]);
    assert_eq!(status, Some(0));
    let topo = events.last().unwrap();
    assert_eq!(topo["total"], 117);
    let omitted = &topo["omitted"];
    let after = omitted["after"].as_u64().unwrap();
    let count = omitted["count"].as_u64().unwrap();
    let shown = topo["nodes"].as_array().unwrap();
    assert_eq!(shown.len() as u64 + count, 117);
    assert_eq!(shown[after as usize]["position"], after + count + 1);
}

/// `]` typed for `)`: the error points at the `]` (the mistake), its help is
/// the right bracket, and the next line still runs (the `(` does not swallow
/// it).
#[test]
fn a_square_bracket_for_a_parenthesis_is_pointed_at() {
    let output = output_with_stdin(&["--keep-going"], "z = (1 + ]\nw = 2\n");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout_of(&output), "w = 2\n");
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("`]` does not close the `(` before it")
            && stderr.contains("<stdin>:1:10")
            && stderr.contains("write `)` here"),
        "{stderr}"
    );
}

/// `--ascii` output is ASCII through and through, terminal charts too: the
/// braille cells of `:plot` and `:repeat` become ` . * #`, and the curve of
/// y = x² still rises to the right of its minimum (more marks in the upper
/// right than the upper left of the chart).
#[test]
fn ascii_output_draws_charts_without_braille() {
    let output = output_of(&[
        "--ascii",
        "-e",
        "x₁ = 1; y = x₁^2",
        "-e",
        ":plot x₁",
        "-e",
        ":repeat 3 x₁ := x₁ - 0.1*grad(y, x₁)",
    ]);
    assert!(output.status.success());
    let text = stdout_of(&output);
    assert!(text.is_ascii(), "{text}");
    // The first chart's rows: x from -2 to 4, so the right end (x = 4, y = 16)
    // is higher than the left (x = -2, y = 4).
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("y for x_1 from -2 to 4"))
        .skip(1)
        .take(4)
        .collect();
    let marks = |row: &str, right: bool| {
        let half = row.len() / 2;
        let part = if right { &row[half..] } else { &row[..half] };
        part.chars()
            .filter(|c| matches!(c, '.' | '*' | '#'))
            .count()
    };
    let (left, right): (usize, usize) = rows
        .iter()
        .map(|r| (marks(r, false), marks(r, true)))
        .fold((0, 0), |(a, b), (l, r)| (a + l, b + r));
    assert!(right > left && right > 0, "{rows:?}");
}

/// `_N` names a node, not a variable: `:=` on one says so (it suggested
/// `_1 = …`, which is refused), and assigning to one suggests a name made
/// from the label typed (`n2` for `_2`).
#[test]
fn node_labels_cannot_be_updated_or_assigned_and_the_help_fits() {
    let (events, status) = crate::util::json_events(&["-e", "a = 1; b = a + 1; _1 := 5"]);
    assert_eq!(status, Some(1));
    let error = events.last().unwrap();
    assert_eq!(
        error["message"],
        "`_1` is a node label, not a variable: `:=` changes a variable by its name"
    );
    assert_eq!(error["column"], 19);
    let (events, _) = crate::util::json_events(&["-e", "_2 = 5"]);
    let error = events.last().unwrap();
    assert_eq!(
        error["help"], "choose another name, e.g. `n2` for `_2`",
        "{error}"
    );
}

/// `:repeat`'s terminal chart is labelled as `:plot`'s: round ticks on the
/// rows they fall on, enclosing the values. L = w from 0.00018 (step 1) down
/// to 0.0001 (step 5): textplots' own labels, one decimal, read 0.0 and 0.0.
#[test]
fn a_repeat_chart_is_labelled_at_round_ticks_around_its_values() {
    let output = output_of(&[
        "--ascii",
        "-e",
        "w = 0.0002; L = w",
        "-e",
        ":repeat 5 w := w - 0.00002",
    ]);
    assert!(output.status.success());
    let text = stdout_of(&output);
    let chart: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("L from step 0 to step 5"))
        .skip(1)
        .take_while(|l| !l.starts_with("0.0"))
        .collect();
    let labels: Vec<f64> = chart
        .iter()
        .filter_map(|l| l.split_whitespace().last()?.parse().ok())
        .collect();
    assert!(labels.len() >= 3, "{chart:?}");
    assert!(labels.windows(2).all(|w| w[0] > w[1]), "{labels:?}");
    assert!(
        labels[0] >= 0.00018 && *labels.last().unwrap() <= 0.0001,
        "{labels:?}"
    );
}

/// Issue 21: `:save "my lesson.calc"` suggested `:load my lesson.calc`,
/// which fails when typed back; the name is quoted now, and typing the
/// suggestion back loads the file.
#[test]
fn save_suggests_a_load_that_can_be_typed_back() {
    let dir = tempfile::tempdir().unwrap();
    let output = run_in(
        dir.path(),
        &["-e", "x = 1", "-e", ":save \"my lesson.calc\""],
    );
    assert_eq!(
        stdout_of(&output),
        "x = 1\nsaved 1 statement to my lesson.calc; `:load \"my lesson.calc\"` or `gradcalc 'my lesson.calc'` replays them\n"
    );
    let typed = run_in(dir.path(), &["-e", ":load \"my lesson.calc\"", "-e", "x"]);
    assert!(typed.status.success(), "{typed:?}");
    assert_eq!(stdout_of(&typed), "x = 1\n1\n");
}

/// Issue 21: `:save "-f"` suggested `gradcalc -f`, which reads `-f` as an
/// option; both suggestions keep the name a file name, and both, typed back,
/// run the saved statements (x + 1 = 42).
#[test]
fn save_to_a_name_like_an_option_suggests_what_runs_it() {
    let dir = tempfile::tempdir().unwrap();
    let output = run_in(
        dir.path(),
        &["-e", "x = 41; y = x + 1", "-e", ":save \"-f\""],
    );
    assert_eq!(
        stdout_of(&output),
        "x = 41\ny = 42\nsaved 2 statements to -f; `:load \"-f\"` or `gradcalc ./-f` replays them\n"
    );
    let by_shell = run_in(dir.path(), &["./-f"]);
    assert_eq!(stdout_of(&by_shell), "x = 41\ny = 42\n");
    let by_load = run_in(dir.path(), &["-e", ":load \"-f\""]);
    assert_eq!(stdout_of(&by_load), "x = 41\ny = 42\n");
}

/// Issue 21: `:save "abc` (no closing quote) wrote a file named `"abc`; now
/// it is an error with a caret at the quote, and nothing is written.
#[test]
fn an_unclosed_quote_in_a_command_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let output = run_in(dir.path(), &["-e", "x = 1", "-e", ":save \"abc"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr_of(&output),
        "error: expected a word after `save`, found `\"`\n  \
         ┌─ -e #2:1:7\n  │\n\
         1 │ :save \"abc\n  \
         │       ^ close the quote: `\"my file.calc\"`\n\n"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn each_domain_warning_says_what_left_the_domain() {
    // asin(2), acosh(0.5), atanh(-3) are nan and atanh(1) = inf in IEEE
    // arithmetic (C's asin, acosh, atanh); exp(1000) overflows past 1.8e308.
    check(
        "asin(2); acosh(0.5); atanh(1); atanh(-3); exp(1000); ln(0); ln(-1); 1/0; (-8)^(1/3); sqrt(-1)",
        expect![[r#"
            nan
            nan
            inf
            nan
            inf
            -inf
            nan
            inf
            nan
            nan
            --- stderr
            warning: `asin` of a number outside [-1, 1] gives nan (in `asin(2)` at -e:1:1)
            warning: `acosh` of a number outside [1, inf) gives nan (in `acosh(0.5)` at -e:1:10)
            warning: `atanh` of a number outside (-1, 1) gives inf (in `atanh(1)` at -e:1:22)
            warning: `atanh` of a number outside (-1, 1) gives nan (in `atanh(-3)` at -e:1:32)
            warning: `exp` gives inf here (in `exp(1000)` at -e:1:43)
            warning: logarithm of 0 gives -inf (in `ln(0)` at -e:1:54)
            warning: logarithm of a negative number gives nan (in `ln(-1)` at -e:1:61)
            warning: division by zero gives inf (in `1/0` at -e:1:69)
            warning: a negative number to a fractional power gives nan (in `(-8)^(1/3)` at -e:1:74)
            warning: square root of a negative number gives nan (in `sqrt(-1)` at -e:1:86)
        "#]],
    );
}

#[test]
fn coloured_matrix_rows_are_indented_by_the_head_s_columns() {
    // "W" is one column: the rows start 3 columns in, with colour as without
    // (the escape codes around the name take no columns).
    let output = gradcalc()
        .args(["--color", "always", "-e", "W = [[1, 2], [3, 4]]"])
        .output()
        .unwrap();
    let stdout = crate::pty::strip_ansi(&String::from_utf8(output.stdout).unwrap());
    assert_eq!(stdout, "W = 2×2\n   [[1, 2],\n    [3, 4]]\n");
}
