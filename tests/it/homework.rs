//! Homework through the binary: `:expect` against a value (correct, off by
//! N %, wrong shape, not answered yet), a TA's key sealed with `--seal`
//! (the value and the solution gone, a student's right and wrong work
//! checked), and `--assignment` listing the problems without running them.
//! Every expected number is worked out by hand in the comments.

use crate::util::{
    assert_contains, folder_with, in_crate, json_lines, output_of, stderr_of, stdout_of,
};

/// The solution blocks of examples/hw1_key.calc, as a student who got them
/// right writes them in place of `# (your work here)`.
const RIGHT_WORK: [&str; 3] = [
    "o = tanh(x1*w1 + x2*w2 + b)",
    "y = (a + b)*(b + 1)",
    "L = sum(tanh(W @ x))",
];

/// The sealed file of examples/hw1_key.calc.
pub(crate) fn sealed_hw1() -> String {
    let output = output_of(&[
        "--seal",
        in_crate("examples/hw1_key.calc").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    stdout_of(&output)
}

/// `sealed` with each `# (your work here)` replaced by the line of `work`.
fn answered(sealed: &str, work: [&str; 3]) -> String {
    let mut parts = sealed.split("# (your work here)\n");
    let mut out = parts.next().unwrap().to_string();
    for (part, line) in parts.zip(work) {
        out.push_str(line);
        out.push('\n');
        out.push_str(part);
    }
    out
}

/// The check lines (`✓ …`, `✗ …`, `? …`) of a run of `script`.
fn checks_of(script: &str) -> Vec<String> {
    let (_dir, path) = folder_with("hw.calc", script);
    let output = output_of(&[path.to_str().unwrap()]);
    stdout_of(&output)
        .lines()
        .filter(|l| l.starts_with(['✓', '✗', '?']))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_key_checks_answers_against_its_values() {
    // The neuron of micrograd's lecture: o = tanh(0.8813735870) = 1/√2,
    // ∂o/∂w1 = x1·(1 − o²) = 2·0.5 = 1, ∂o/∂b = 1 − o² = 0.5; the fan-out
    // y = (a + b)(b + 1) at a = 2, b = 1: ∂y/∂a = b + 1 = 2, ∂y/∂b =
    // (b + 1) + (a + b) = 5. The key's own values are those numbers.
    let output = output_of(&[in_crate("examples/hw1_key.calc").to_str().unwrap()]);
    let text = stdout_of(&output);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    for quantity in ["o", "∂o/∂w1", "∂o/∂b", "∂y/∂a", "∂y/∂b"] {
        assert_contains(&text, &format!("✓ {quantity}: correct"));
    }
    // The matrix layer's line has no value: the key's own is recorded.
    assert_contains(&text, "• ∂L/∂W: the key's own value here, 2×2");
}

#[test]
fn a_wrong_answer_is_off_by_a_percentage_or_of_the_wrong_shape() {
    // y = 1.03·x² at x = 3: dy/dx = 6.18, 3 % above the 6 expected.
    let checks = checks_of(
        "x = 3\ny = 1.03*x^2\n:expect dy/dx = 6\n\
         W = [[1, 2, 3], [4, 5, 6]]\n:expect W = [[1, 2], [3, 4], [5, 6]]\n\
         :expect Wᵀ = [[1, 4], [2, 5], [3, 6]]\n\
         :expect ∂q/∂x = 1\n",
    );
    assert_eq!(checks.len(), 4, "{checks:?}");
    assert!(
        checks[0].starts_with("✗ dy/dx: off by 3 % "),
        "{}",
        checks[0]
    );
    assert_eq!(checks[1], "✗ W: wrong shape (2×3, expected 3×2)");
    assert!(checks[2].starts_with("✓ Wᵀ: correct"), "{}", checks[2]);
    assert_eq!(checks[3], "? ∂q/∂x: not answered yet (unknown name `q`)");
}

#[test]
fn a_check_changes_nothing_in_the_session() {
    // `ans` is still 7 and no variable was added by the check's grad(y, x).
    let output = output_of(&["-e", "x = 3; y = x^2; 7; :expect dy/dx = 6; ans; :vars"]);
    let text = stdout_of(&output);
    assert_contains(&text, "✓ dy/dx: correct");
    let after: Vec<&str> = text.lines().skip_while(|l| !l.starts_with('✓')).collect();
    assert_eq!(after[1], "7", "{text}");
    assert!(!text.contains("grad("), "{text}");
}

#[test]
fn the_sealed_file_hides_the_values_and_the_solutions() {
    let sealed = sealed_hw1();
    for line in RIGHT_WORK {
        assert!(!sealed.lines().any(|l| l == line), "{line} in:\n{sealed}");
    }
    // No expected value is left in the clear.
    for value in ["0.7071067812", "= 1 ", "= 0.5", "= 2", "= 5"] {
        assert!(
            !sealed.contains(&format!(":expect ∂o/∂w1 {value}")),
            "{sealed}"
        );
    }
    assert_eq!(sealed.matches(" sealed=1:").count(), 6, "{sealed}");
    assert_eq!(
        sealed.matches("# (your work here)\n").count(),
        3,
        "{sealed}"
    );
    // The problem text is kept.
    assert_contains(&sealed, "## Problem 2: a fan-out\n# y = (a + b)(b + 1)");
    // Each line has its own salt: sealing twice gives other hashes.
    assert_ne!(sealed, sealed_hw1());
}

#[test]
fn a_student_s_right_and_wrong_work_is_checked_against_the_sealed_file() {
    let sealed = sealed_hw1();
    let right = checks_of(&answered(&sealed, RIGHT_WORK));
    assert_eq!(right.len(), 6, "{right:?}");
    assert!(right.iter().all(|c| c.starts_with('✓')), "{right:?}");
    // y = (a + b)·b: ∂y/∂a = b = 1 (not 2), ∂y/∂b = a + 2b = 4 (not 5);
    // L = sum(W @ x): ∂L/∂W = [[1, −1], [1, −1]], not sech²(1)·that.
    let wrong = checks_of(&answered(
        &sealed,
        [RIGHT_WORK[0], "y = (a + b)*b", "L = sum(W @ x)"],
    ));
    assert_eq!(wrong.len(), 6, "{wrong:?}");
    assert!(wrong[..3].iter().all(|c| c.starts_with('✓')), "{wrong:?}");
    for (check, quantity) in wrong[3..].iter().zip(["∂y/∂a", "∂y/∂b", "∂L/∂W"]) {
        assert!(
            check.starts_with(&format!("✗ {quantity}: wrong (not within tol=")),
            "{check}"
        );
    }
    // Nothing done yet: each check is not answered, naming the missing name.
    let blank = checks_of(&sealed);
    assert_eq!(blank[0], "? o: not answered yet (unknown name `o`)");
}

#[test]
fn a_sealed_answer_is_correct_exactly_within_its_tolerance() {
    // x = 0.7 sealed at tol 0.01: 0.6905 and 0.7095 are within, 0.6895 and
    // 0.7105 are not.
    let (_dir, key) = folder_with("key.calc", "x = 0.7\n:expect x tol=0.01\n");
    let output = output_of(&["--seal", key.to_str().unwrap()]);
    let sealed = stdout_of(&output);
    for (x, mark) in [
        ("0.6905", '✓'),
        ("0.7095", '✓'),
        ("0.6895", '✗'),
        ("0.7105", '✗'),
    ] {
        let checks = checks_of(&sealed.replace("x = 0.7", &format!("x = {x}")));
        assert!(checks[0].starts_with(mark), "{x}: {checks:?}");
    }
    // Editing the tolerance does not widen it: the hash holds it.
    let widened = sealed
        .replace("x = 0.7", "x = 0.7105")
        .replace("tol=0.01", "tol=0.1");
    assert!(checks_of(&widened)[0].starts_with('✗'));
}

#[test]
fn a_sealed_check_says_the_wrong_shape_and_json_has_the_verdict() {
    let (_dir, key) = folder_with("key.calc", "A = [[1, 2, 3], [4, 5, 6]]\n:expect A\n");
    let sealed = stdout_of(&output_of(&["--seal", key.to_str().unwrap()]));
    let student = sealed.replace("A = [[1, 2, 3], [4, 5, 6]]", "A = [[1, 4], [2, 5], [3, 6]]");
    assert_eq!(
        checks_of(&student),
        ["✗ A: wrong shape (3×2, expected 2×3)"]
    );
    let (_dir, path) = folder_with("hw.calc", &sealed);
    let events = json_lines(&stdout_of(&output_of(&["--json", path.to_str().unwrap()])));
    let check = events.iter().find(|e| e["kind"] == "expect").unwrap();
    assert_eq!(check["verdict"], "correct");
    assert_eq!(check["sealed"], true);
    assert_eq!(check["shape"], "2×3");
    assert!(check["off_by"].is_null());
}

#[test]
fn a_key_that_fails_is_not_sealed() {
    let (_dir, key) = folder_with("key.calc", "x = 1\n\n:expect z = 3\n");
    let output = output_of(&["--seal", key.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout_of(&output).is_empty());
    let stderr = stderr_of(&output);
    assert_contains(
        &stderr,
        "error: the key does not seal: `z` does not evaluate in the key: unknown name `z`",
    );
    assert_contains(&stderr, "key.calc:3:1\n");
    assert_contains(&stderr, "3 │ :expect z = 3\n  │ ^^^^^^^^^^^^^");
    let (_dir, key) = folder_with("key.calc", "x = 1\ny = x +* 2\n");
    let output = output_of(&["--seal", key.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert_contains(&stderr_of(&output), "key.calc:2:");
}

#[test]
fn an_assignment_lists_its_problems_without_running_them() {
    let output = output_of(&[
        "--assignment",
        in_crate("examples/hw1_key.calc").to_str().unwrap(),
    ]);
    let text = stdout_of(&output);
    assert_eq!(output.status.code(), Some(0));
    assert!(
        text.starts_with("# Homework 1: backprop by hand\n"),
        "{text}"
    );
    assert_contains(
        &text,
        "## Problem 2: a fan-out\n\ny = (a + b)(b + 1) at a = 2, b = 1: b reaches y along two paths.\nWrite y, then find dy/db (the two paths' gradients added).\n\n```\na = 2; b = 1\n# (your work here)\n```\n\n- checked: `∂y/∂a` (value in the key)\n",
    );
    // Nothing ran (no value printed) and no solution is shown.
    assert!(!text.contains("0.7071"), "{text}");
    for line in RIGHT_WORK {
        assert!(!text.lines().any(|l| l == line), "{line} in:\n{text}");
    }
    let sealed = sealed_hw1();
    let (_dir, path) = folder_with("hw1.calc", &sealed);
    let listed = stdout_of(&output_of(&["--assignment", path.to_str().unwrap()]));
    assert_contains(&listed, "- checked: `∂L/∂W` (sealed)\n");
}

#[test]
fn a_transcript_records_the_checks_and_reruns_to_the_same_numbers() {
    let student = answered(&sealed_hw1(), RIGHT_WORK);
    let (dir, path) = folder_with("student.calc", &student);
    let output = output_of(&["--transcript", "jsonl", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let text = stdout_of(&output);
    let lines = json_lines(&text);
    assert_eq!(lines[0]["kind"], "transcript");
    // RFC 3339 in UTC: 2026-12-05T04:53:53Z.
    let recorded = lines[0]["recorded"].as_str().unwrap();
    assert_eq!(
        (recorded.len(), &recorded[10..11], &recorded[19..]),
        (20, "T", "Z")
    );
    // o = tanh(0.8813735870195432) = 1/√2, recorded after its input.
    let at = lines
        .iter()
        .position(|l| l["kind"] == "input" && l["text"] == RIGHT_WORK[0])
        .unwrap();
    assert_eq!(lines[at + 1]["name"], "o");
    assert!((lines[at + 1]["value"].as_f64().unwrap() - 0.5f64.sqrt()).abs() < 1e-15);
    let checks = lines.last().unwrap();
    assert_eq!(
        (checks["kind"].as_str(), checks["correct"].as_u64()),
        (Some("checks"), Some(6))
    );
    let saved = dir.path().join("student.jsonl");
    std::fs::write(&saved, &text).unwrap();
    let output = output_of(&["--check-transcript", saved.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout_of(&output));
    assert_contains(&stdout_of(&output), "reproduces: ");
    assert_contains(&stdout_of(&output), "checks: 6 correct, 0 wrong");
    // A number changed by hand (o = 0.7) does not reproduce, named at its statement.
    let edited = text
        .lines()
        .map(|l| {
            if l.starts_with(r#"{"kind":"value","name":"o","#) {
                r#"{"kind":"value","name":"o","value":0.7}"#.to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&saved, edited).unwrap();
    let output = output_of(&["--check-transcript", saved.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    assert_contains(
        &stdout_of(&output),
        &format!(
            "statement {} `{}`: recorded",
            lines[at]["statement"], RIGHT_WORK[0]
        ),
    );
    // For people: the checks counted, each input after `> `.
    let md = stdout_of(&output_of(&["--transcript", "md", path.to_str().unwrap()]));
    assert_contains(
        &md,
        "Checks: 6 correct, 0 wrong, 0 of the wrong shape, 0 not answered.",
    );
    assert_contains(&md, "> o = tanh(x1*w1 + x2*w2 + b)\no = 0.7071067812\n");
}

#[test]
fn the_terminal_checks_an_answer_and_keeps_the_session() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = crate::pty::Repl::start(state.path());
    repl.line("x = 3; y = 1.03*x^2", "y = 9.27");
    repl.prompt();
    // dy/dx = 2.06·x = 6.18, 3 % above 6; y = 9.27 exactly as computed.
    repl.line(":expect dy/dx = 6", "off by 3 %");
    repl.prompt();
    repl.line(":expect y = 9.27", "y: correct");
    repl.prompt();
    repl.line("ans", "9.27");
    repl.leave();
}

#[test]
fn an_example_assignment_runs_end_to_end_in_the_terminal() {
    // Opened: the sealed file lists its problems, nothing run, no answer.
    let sealed = sealed_hw1();
    let (dir, hw1) = folder_with("hw1.calc", &sealed);
    let listed = stdout_of(&output_of(&["--assignment", hw1.to_str().unwrap()]));
    assert_eq!(listed.matches("\n## Problem ").count(), 3, "{listed}");
    assert_contains(
        &listed,
        "x1 = 2; x2 = 0; w1 = -3; w2 = 1; b = 6.8813735870195432\n# (your work here)\n",
    );
    assert!(!listed.contains("0.7071"), "{listed}");
    // Answered: the neuron right (o = 1/√2, ∂o/∂w1 = 1, ∂o/∂b = 0.5); the
    // fan-out wrong (y = (a + b)·b: ∂y/∂a = b = 1, not 2; ∂y/∂b = a + 2b =
    // 4, not 5); the matrix layer with a 2×3 W where 2×2 is expected.
    let work = [
        RIGHT_WORK[0],
        "y = (a + b)*b",
        "W = [[1, 2, 0], [3, 4, 0]]; x = [1, -1, 0]; L = sum(tanh(W @ x))",
    ];
    let student = answered(&sealed, work);
    // Each check's verdict, without its tolerance's note.
    let checks = checks_of(&student);
    let verdicts: Vec<&str> = checks
        .iter()
        .map(|line| line.split(" (").next().unwrap())
        .collect();
    assert_eq!(
        verdicts,
        [
            "✓ o: correct",
            "✓ ∂o/∂w1: correct",
            "✓ ∂o/∂b: correct",
            "✗ ∂y/∂a: wrong",
            "✗ ∂y/∂b: wrong",
            "✗ ∂L/∂W: wrong shape",
        ]
    );
    assert_contains(&checks[5], "wrong shape (2×3, expected 2×2)");
    // Exported, and checked again from the transcript alone.
    let path = dir.path().join("student.calc");
    std::fs::write(&path, &student).unwrap();
    let jsonl = stdout_of(&output_of(&[
        "--transcript",
        "jsonl",
        path.to_str().unwrap(),
    ]));
    let saved = dir.path().join("student.jsonl");
    std::fs::write(&saved, &jsonl).unwrap();
    let output = output_of(&["--check-transcript", saved.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout_of(&output));
    assert_contains(
        &stdout_of(&output),
        "checks: 3 correct, 2 wrong, 1 of the wrong shape, 0 not answered",
    );
}
