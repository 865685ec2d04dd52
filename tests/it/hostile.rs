//! The hostile-input catalogue, each case through the binary: it ends with a clear
//! error or a correct result, exit status 0 or 1, never a panic, a stack overflow,
//! a signal or a hang. Sizes are the catalogue's unless a comment says otherwise;
//! each case takes a few seconds at most in a debug build.

use std::process::Output;
use std::time::Duration;

use expect_test::expect;

use crate::util::{
    assert_contains, assert_ends_with, check, gradcalc, gradcalc_within_cpu, output_with_stdin,
    stderr_of, stdout_of,
};

/// For the two catalogue cases of a million terms or statements.
const LONG_TIMEOUT: Duration = Duration::from_secs(1800);

/// Runs gradcalc with `stdin` piped in and extra `args`, and checks that it
/// ended by itself with status `status`, without a panic or an overflow.
fn run(args: &[&str], stdin: impl Into<Vec<u8>>, status: i32) -> (String, String) {
    let output = output_with_stdin(args, stdin);
    check_status(&output, status)
}

/// [`run`] with `stdin` and no arguments, which must fail (status 1) with
/// `part` in its error report.
fn assert_refused(stdin: impl Into<Vec<u8>>, part: &str) {
    let (_, stderr) = run(&[], stdin, 1);
    assert_contains(&stderr, part);
}

/// [`run`] with `stdin` and no arguments, which must succeed, its output
/// ending with `end`.
fn assert_ends(stdin: impl Into<Vec<u8>>, end: &str) {
    let (stdout, _) = run(&[], stdin, 0);
    assert_ends_with(&stdout, end);
}

fn check_status(output: &Output, status: i32) -> (String, String) {
    let (stdout, stderr) = (stdout_of(output), stderr_of(output));
    let head = |s: &str| s.chars().take(2000).collect::<String>();
    assert_eq!(
        output.status.code(),
        Some(status),
        "status {:?} (a signal or a timeout if None)\nstdout: {}\nstderr: {}",
        output.status,
        head(&stdout),
        head(&stderr)
    );
    for bad in ["panicked", "stack overflow", "RUST_BACKTRACE"] {
        assert!(!stderr.contains(bad), "{bad}: {}", head(&stderr));
    }
    (stdout, stderr)
}

#[test]
fn a_hundred_thousand_nested_parentheses_are_refused_naming_the_limit() {
    let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
    let (stdout, stderr) = run(&[], deep, 1);
    assert!(stdout.is_empty(), "{stdout}");
    assert_contains(&stderr, "1000");
    assert_contains(&stderr, "nest");
    // Unclosed, and a long run of signs and a `^` chain: the same clear error.
    for deep in [
        "(".repeat(100_000),
        format!("{}1", "-".repeat(100_000)),
        format!("2{}", "^2".repeat(100_000)),
    ] {
        assert_refused(deep, "1000");
    }
}

#[test]
fn nesting_at_the_limit_parses_and_one_more_is_refused() {
    let at = |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n));
    let (stdout, _) = run(&[], at(999), 0);
    assert_eq!(stdout, "1\n");
    assert_refused(at(1001), "1000");
}

/// 100 000 terms here (a few seconds in a debug build); the catalogue's
/// 1 000 000 is measured by hand with the release binary (CHANGELOG, PR notes).
#[test]
fn a_long_sum_on_one_line() {
    // The catalogue's size: a million terms (about 10 s in a debug build).
    let mut source = String::from("x = 1\n");
    source.push_str(&vec!["x"; 1_000_000].join("+"));
    source.push_str("\n:grad x\n");
    let output = gradcalc()
        .timeout(LONG_TIMEOUT)
        .write_stdin(source)
        .output()
        .unwrap();
    let (stdout, _) = check_status(&output, 0);
    assert_eq!(stdout, "x = 1\n1000000\n∂ans/∂x = 1000000\n");
}

/// A sum of vectors past 64 KiB (where a statement is parsed in pieces):
/// `v = [1, 2]; L = v + v + …` of 66 017 bytes, 16 501 terms, is one tensor
/// statement, L = 16 501·v = [16501, 33002] (by hand), ∂sum(L)/∂v = 16 501
/// for each element. It once took the scalar path a piece at a time and
/// said "unknown name `v`".
#[test]
fn a_tensor_sum_longer_than_64_kib() {
    let mut source = String::from("v = [1, 2]; L = v");
    source.push_str(&" + v".repeat(16_500));
    assert_eq!(source.len(), 66_017);
    source.push_str("\n:grad v\n");
    let (stdout, stderr) = run(&[], source, 0);
    assert_eq!(
        stdout,
        "v = [1, 2]  (2)\nL = [16501, 33002]  (2)\n∂L/∂v = [16501, 16501]  (2)\n"
    );
    // L is not of shape (): the gradients are those of sum(L), and a note says so.
    assert_contains(&stderr, "gradients of sum(L)");
}

#[test]
fn a_ten_megabyte_line() {
    // One comment line of 10 MB, then a statement.
    let mut source = format!("# {}\n", "a".repeat(10_000_000));
    source.push_str("1 + 1\n");
    let (stdout, _) = run(&[], source, 0);
    assert_eq!(stdout, "2\n");
    // One name of 10 MB: an unknown name, reported in a window of the line.
    let (stdout, stderr) = run(&[], "b".repeat(10_000_000), 1);
    assert!(stdout.is_empty());
    assert_contains(&stderr, "unknown name");
    assert!(
        stderr.len() < 10_000,
        "the report shows a window: {} bytes",
        stderr.len()
    );
    // One number of 10 MB digits: out of range, reported.
    let (_, stderr) = run(&[], "9".repeat(10_000_000), 1);
    assert!(stderr.len() < 10_000, "{} bytes", stderr.len());
}

#[test]
fn invalid_utf8_on_stdin_runs_the_valid_lines_then_reports_the_byte() {
    let (stdout, stderr) = run(&[], b"x = 1\nx + 1\n\xff\xfe oops\n".to_vec(), 1);
    assert_eq!(stdout, "x = 1\n2\n");
    assert_contains(&stderr, "not valid UTF-8 (byte 12)");
    // In a file too, and in JSON.
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), b"1 +\xc3").unwrap();
    let output = gradcalc()
        .args(["--json"])
        .arg(file.path())
        .output()
        .unwrap();
    let (stdout, _) = check_status(&output, 1);
    assert_contains(&stdout, "not valid UTF-8");
}

#[test]
fn nul_bytes_are_an_error_that_shows_them() {
    let (stdout, stderr) = run(&[], "x = 1\0 + 2\n", 1);
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        !stderr.contains('\0'),
        "the NUL is made visible: {stderr:?}"
    );
    assert_contains(&stderr, "error");
    let (_, stderr) = run(&[], "\0\0\0", 1);
    assert!(!stderr.contains('\0'), "{stderr:?}");
    // A NUL in a comment is only a comment.
    let (stdout, _) = run(&[], "1 # \0\n", 0);
    assert_eq!(stdout, "1\n");
}

/// The catalogue's size through the binary: a million statements, each
/// printed (the heaviest test: about a minute in a debug build on a quiet
/// machine, many under load, hence [`LONG_TIMEOUT`]).
#[test]
fn a_long_script_of_statements() {
    let source = "x = 1\ny = x*2 + 1\n".repeat(500_000);
    let output = gradcalc()
        .timeout(LONG_TIMEOUT)
        .write_stdin(source + ":grad x\n")
        .output()
        .unwrap();
    let (stdout, _) = check_status(&output, 0);
    assert_ends_with(&stdout, "y = 3\n∂y/∂x = 2\n");
    assert_eq!(stdout.lines().count(), 1_000_001);
}

#[test]
fn a_hundred_thousand_statements_through_the_library() {
    let source = "x = x + 1;".repeat(100_000);
    let mut session = gradcalc::session::Session::new();
    let mut count = 0usize;
    let mut last = None;
    let _ = session.run_source(&format!("x = 0\n{source}"), |result| {
        count += 1;
        last = Some(result.expect("no error"));
        std::ops::ControlFlow::Continue(())
    });
    assert_eq!(count, 100_001);
    assert_eq!(
        last,
        Some(vec![gradcalc::session::Event::Value {
            name: Some("x".into()),
            value: gradcalc::session::Number(100_000.0).into()
        }])
    );
}

#[test]
fn names_of_ten_thousand_characters() {
    let long = "a".repeat(10_000);
    let source = format!("{long} = 2\n{long}^2\n:grad {long}\n");
    assert_ends(source, "= 4\n");
    // An unknown long name next to a long variable: no quadratic suggestion search.
    let other = format!("{}b", "a".repeat(9_999));
    let output = gradcalc_within_cpu(10)
        .write_stdin(format!("{long} = 2\n{other} + 1\n"))
        .output()
        .unwrap();
    let (_, stderr) = check_status(&output, 1);
    assert_contains(&stderr, "unknown name");
    // A long function name and a long command name.
    assert_refused(format!("{long}(1)\n"), "unknown function");
    assert_refused(format!(":{long}\n"), "unknown command");
}

#[test]
fn odd_numbers_are_clear_errors_or_values() {
    // Too large, too small, hexadecimal (16 in decimal), two points.
    check(
        "1e400",
        expect![[r#"
        --- stderr
        error: number `1e400` is too large: it overflows a 64-bit float
          ┌─ -e:1:1
          │
        1 │ 1e400
          │ ^^^^^ write `inf` for infinity

        --- exit status 1
    "#]],
    );
    check(
        "1e-400",
        expect![[r#"
        --- stderr
        error: number `1e-400` is too small: it rounds to 0 as a 64-bit float
          ┌─ -e:1:1
          │
        1 │ 1e-400
          │ ^^^^^^ write `0` if you mean zero

        --- exit status 1
    "#]],
    );
    check(
        "0x10",
        expect![[r#"
        --- stderr
        error: malformed number `0x10`: only decimal numbers are supported
          ┌─ -e:1:1
          │
        1 │ 0x10
          │ ^^^^ write it in decimal: `16`

        --- exit status 1
    "#]],
    );
    check(
        "1..2",
        expect![[r#"
        --- stderr
        error: malformed number `1..2`: a number has at most one `.`
          ┌─ -e:1:1
          │
        1 │ 1..2
          │ ^^^^

        --- exit status 1
    "#]],
    );
}

#[test]
fn ten_thousand_functions() {
    let mut source = String::from("f0(x) = x + 1\n");
    for i in 1..10_000 {
        source.push_str(&format!("f{i}(x) = f{}(x) + 1\n", i - 1));
    }
    // Sixty levels of calls are fine; ten thousand are refused with the limit.
    assert_ends(format!("{source}f60(0)\n"), "61\n");
    assert_refused(format!("{source}f9999(0)\n"), "64");
}

#[test]
fn functions_that_double_their_work_hit_the_node_limit() {
    // Each level calls the one below twice: 2^40 nodes if nothing stopped it.
    let source = crate::util::doubling_functions("t + 1", 40, "\n");
    assert_ends(format!("{source}\nd10(1)\n"), "2048\n");
    assert_refused(format!("{source}\nd40(1)\n"), "1000000 nodes");
}

#[test]
fn recursion_through_another_function_is_an_error() {
    check(
        "f(x) = g(x) + 1\ng(x) = f(x)*2\nf(1)",
        expect![[r#"
        defined f(x)
        defined g(x)
        --- stderr
        error: in `f`: in `g`: recursion is not supported: `f` calls itself
          ┌─ -e:3:1
          │
        3 │ f(1)
          │ ^^^^ write the repetition out, or use a variable that you update

        --- exit status 1
    "#]],
    );
    // And the session goes on with --keep-going.
    let (stdout, _) = run(&["--keep-going"], "f(x) = f(x)\nf(1)\n2 + 2\n", 1);
    assert_ends_with(&stdout, "4\n");
}

#[test]
fn a_script_file_that_is_a_directory_or_missing() {
    let dir = tempfile::tempdir().unwrap();
    let output = gradcalc().arg(dir.path()).output().unwrap();
    let (_, stderr) = check_status(&output, 2);
    assert_contains(&stderr, "cannot read");
    let output = gradcalc()
        .arg(dir.path().join("missing.calc"))
        .output()
        .unwrap();
    let (_, stderr) = check_status(&output, 2);
    assert_contains(&stderr, "cannot read");
}

/// `true` when a file can be created in `dir` (root can write to a mode-555 directory).
fn can_create_in(dir: &std::path::Path) -> bool {
    let probe = dir.join(".probe");
    let created = std::fs::write(&probe, b"").is_ok();
    let _ = std::fs::remove_file(&probe);
    created
}

#[test]
fn exports_to_a_missing_or_unwritable_place_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir/graph.dot");
    let a_file = dir.path().join("notes.txt");
    std::fs::write(&a_file, "not a directory").unwrap();
    let under_a_file = a_file.join("graph.svg");
    for (command, path, says) in [
        (":dot", missing.clone(), "does not exist"),
        (":svg", missing.with_extension("svg"), "does not exist"),
        (":svg", under_a_file.clone(), "cannot write"),
        (
            ":trace md",
            under_a_file.with_extension("md"),
            "cannot write",
        ),
    ] {
        let script = format!("x = 2\ny = x*x\n{command} {}\n", path.display());
        let (stdout, stderr) = run(&["--allow-writes-anywhere"], script, 1);
        assert_eq!(stdout, "x = 2\ny = 4\n");
        assert!(stderr.contains(says), "{command}: {stderr}");
        assert!(
            stderr.contains(":3:"),
            "the error points at the command: {stderr}"
        );
        assert!(!path.exists());
    }

    // A read-only directory: mode 555, or /sys when running as root (who may
    // write anywhere else).
    let read_only = dir.path().join("read-only");
    std::fs::create_dir(&read_only).unwrap();
    let mut permissions = std::fs::metadata(&read_only).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o555);
    std::fs::set_permissions(&read_only, permissions).unwrap();
    let target = if can_create_in(&read_only) {
        std::path::PathBuf::from("/sys")
    } else {
        read_only
    };
    assert!(
        !can_create_in(&target),
        "no unwritable directory to test with"
    );
    let script = format!(
        "x = 2\ny = x*x\n:dot {}\n",
        target.join("graph.dot").display()
    );
    let (_, stderr) = run(&["--allow-writes-anywhere"], script, 1);
    assert_contains(&stderr, "cannot write");
}

#[test]
fn piped_stdin_over_the_script_limit_is_refused_before_anything_runs() {
    // 65 MiB piped in, past the 64 MiB a script file may hold: refused
    // without reading more (it used to be read whole, however long), nothing
    // of it run. `--json --lines` bounds each line instead (`kernel`).
    let mut script = b"x = 1\n".to_vec();
    script.resize(65 << 20, b'1');
    let (stdout, _) = run(&["--json"], script, 2);
    expect![[r#"
        {"kind":"error","code":"read","message":"cannot read stdin: larger than 64 MiB, the limit for a script","source":"<stdin>","help":"`--json --lines` reads it a line at a time"}
    "#]]
    .assert_eq(&stdout);
}

/// Vectors and matrices: a literal of 200 000 numbers and a 300×300 one are
/// values (numpy: the sums below); 100 000 nested `[` are refused at the
/// nesting limit; ragged rows, shapes that do not fit, indices out of range
/// and a value past the memory budget are clear errors.
#[test]
fn hostile_vectors_and_matrices_end_in_a_value_or_a_clear_error() {
    let long: Vec<String> = (0..200_000).map(|i| (i % 7).to_string()).collect();
    // Σ (i mod 7) for i < 200 000 = 28 571 full cycles of 21, then 0+1+2.
    assert_ends(format!("x = [{}]\nsum(x)\n", long.join(", ")), "599994\n");
    let rows: Vec<String> = (0..300)
        .map(|i| {
            let row: Vec<String> = (0..300).map(|j| ((i * j) % 5).to_string()).collect();
            format!("[{}]", row.join(", "))
        })
        .collect();
    // numpy: W = (i·j mod 5), (W @ W).sum() = 86 400 000.
    assert_ends(
        format!("W = [{}]\nsum(W @ W)\n", rows.join(", ")),
        "86400000\n",
    );
    let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_refused(deep, "nested too deeply");
    assert_refused("[[1, 2], [3]]\n", "ragged rows");
    assert_refused("[[[1]]]\n", "at most 2 axes");
    assert_refused("x = [1, 2]\nx[2]\n", "out of range for axis 0 of shape (2)");
    assert_refused("x = [1, 2]\nx[-1]\n", "whole number from 0 up");
    assert_refused(
        "[1, 2] @ [[1, 2, 3]]\n",
        "(2) @ (1×3): the inner sizes must agree",
    );
    assert_refused("zeros(100000, 100000)\n", "memory budget");
    assert_refused("randn(100000, 100000)\n", "memory budget");
    assert_refused("x = [1, 2\n", "unclosed `[`");
}

/// The catalogue's sizes for literals: a vector of 10⁶ numbers and a 1000×1000
/// matrix (10⁶ numbers too) are values; their sums by hand: Σ (i mod 7) for
/// i < 10⁶ is 142 857 cycles of 21 plus 0 = 2 999 997, Σ ((i + j) mod 5) over a
/// 1000×1000 grid is 2 per element on average, 2 000 000.
#[test]
fn literals_of_a_million_numbers_are_values() {
    let long: Vec<String> = (0..1_000_000).map(|i| (i % 7).to_string()).collect();
    assert_ends(
        format!("x = [{}]\nsum(x)\n", long.join(", ")),
        "\n2999997\n",
    );
    let rows: Vec<String> = (0..1000)
        .map(|i| {
            let row: Vec<String> = (0..1000).map(|j| ((i + j) % 5).to_string()).collect();
            format!("[{}]", row.join(", "))
        })
        .collect();
    assert_ends(
        format!("W = [{}]\nsum(W)\n", rows.join(", ")),
        "\n2000000\n",
    );
}

/// Each refused tensor statement leaves the session as it was: the script with
/// the refused statements between `:vars` listings prints exactly what the
/// script without them prints (the same listing every time, the same `h` after),
/// and each refusal is reported with its message.
#[test]
fn refused_tensor_statements_leave_the_session_unchanged() {
    let setup = "x = [1, -1, 0.5]\nW = [[1, 2, 0], [3, 4, 1]]\nh = W @ x\nL = sum(tanh(h))\n";
    let deep = format!("x = {}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let refused: Vec<(&str, &str)> = vec![
        ("x = [[1, 2], [3]]", "give every row 2 elements"),
        (
            "[1, 2] @ [1, 2, 3]",
            "(2) @ (3): the inner sizes must agree",
        ),
        ("h = W @ W", "(2×3) @ (2×3): the inner sizes must agree"),
        ("x + [1, 2]", "(3) + (2): the shapes do not broadcast"),
        ("W = W + [1, 2]", "(2×3) + (2): the shapes do not broadcast"),
        ("W[2, 0]", "out of range for axis 0 of shape (2×3)"),
        ("x[3]", "out of range for axis 0 of shape (3)"),
        ("zeros(100000, 100000)", "memory budget"),
        ("W = zeros(100000, 100000)", "memory budget"),
        ("x = randn(-1, 2)", "whole number from 0 up, not -1"),
        ("zeros(1.5, 2)", "whole number from 0 up, not 1.5"),
        ("x[0.5]", "whole number from 0 up, not 0.5"),
        ("W = [[[1]]]", "at most 2 axes"),
        ("W = zeros(2, 3, 4)", "takes 1 or 2 arguments, got 3"),
        (&deep, "nested too deeply"),
    ];
    let mut kept = String::from(setup);
    let mut hostile = String::from(setup);
    for (statement, _) in &refused {
        kept.push_str(":vars\n");
        hostile.push_str(&format!(":vars\n{statement}\n"));
    }
    kept.push_str(":vars\nh\n:grad W\n");
    hostile.push_str(":vars\nh\n:grad W\n");
    let (expected, _) = run(&[], kept, 0);
    // h = W @ x = [1·1 + 2·(−1) + 0, 3·1 + 4·(−1) + 1·0.5] = [−1, −0.5].
    assert_contains(&expected, "[-1, -0.5]");
    let (stdout, stderr) = run(&["--keep-going"], hostile, 1);
    assert_eq!(stdout, expected);
    for (_, part) in &refused {
        assert_contains(&stderr, part);
    }
    assert_eq!(
        stderr.matches("error: ").count(),
        refused.len(),
        "one error each:\n{stderr}"
    );
}
