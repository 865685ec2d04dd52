//! What a new user met in a first session of the vectorised lecture, each
//! through the binary: a lecturer's `grad(L, W)` differentiated again, a
//! student's typos (a stray `]`, PyTorch's `keepdim`), and the words of the
//! errors of `:check` and `:descend` given a name that is no parameter.

use crate::util::{assert_contains, output_of, stderr_of, stdout_of};

/// `gradcalc --keep-going -e SCRIPT`: its standard output and error.
fn run(script: &str) -> (String, String) {
    let output = output_of(&["--keep-going", "-e", script]);
    let stderr = stderr_of(&output);
    assert!(!stderr.contains("panicked"), "{stderr}");
    (stdout_of(&output), stderr)
}

/// A tensor `grad(L, W)` is a value held fixed, so a backward pass through
/// it would give 0 where the second derivative is not: with
/// `G = grad(sum(W*W), W) = 2W`, ∂sum(G)/∂W is 2 per element (by hand), and
/// with `L = mean((w*xs - ys)^2)`, ∂²L/∂w² = 2·mean(xs²) = 28/3 for
/// xs = [1, 2, 3]. `grad(grad(…))` was refused, but `:grad`, `:check` and
/// `:descend` of such an output printed 0 (`:check` even said "pass");
/// they are refused as `grad` is, and say so.
#[test]
fn a_gradient_of_a_tensor_gradient_is_refused_by_every_command() {
    let (stdout, stderr) = run("W = [1, 2]; G = grad(sum(W*W), W)\n:grad W\n\
         xs = [1, 2, 3]; ys = [2, 4, 6]; w = 0.5; L = mean((w*xs - ys)^2)\n\
         g = grad(L, w)\n:grad w\n:check w\n:descend g lr=0.1 steps=2 w\nh = g*w\n:grad");
    // The values themselves are right: 2W, and 2·mean((w·xs − ys)·xs) =
    // 2·(−1.5·1 − 3·2 − 4.5·3)/3 = −14.
    assert_contains(&stdout, "G = [2, 4]  (2)");
    assert_contains(&stdout, "g = -14");
    assert!(!stdout.contains("∂G/∂W"), "{stdout}");
    assert!(!stdout.contains("∂g/∂w"), "{stdout}");
    assert!(!stdout.contains("∂h/∂w"), "{stdout}");
    assert!(!stdout.contains("pass"), "{stdout}");
    assert_eq!(
        stderr
            .matches("error: a gradient of a gradient of tensors is not supported")
            .count(),
        5,
        "{stderr}"
    );
    assert_contains(
        &stderr,
        "2 │ :grad W\n  │  ^^^^ what is differentiated here is built from a tensor `grad(L, W)`, a value that does not follow W; higher-order derivatives work for scalars",
    );
    assert_contains(&stderr, "6 │ :check w\n  │  ^^^^^");
}

/// A stray `]` after a vector was "unmatched `)`: remove this `)`", naming
/// a bracket that is not there; it names the `]` (a `)` keeps its words).
#[test]
fn a_stray_closing_square_bracket_is_named_as_typed() {
    let (_, stderr) = run("x = [1, 2]]\n(1 + 2))");
    expect_test::expect![[r#"
        error: unmatched `]`
          ┌─ -e:1:11
          │
        1 │ x = [1, 2]]
          │           ^ remove this `]` or add a `[` before it

        error: unmatched `)`
          ┌─ -e:2:8
          │
        2 │ (1 + 2))
          │        ^ remove this `)` or add a `(` before it

    "#]]
    .assert_eq(&stderr);
}

/// PyTorch's `keepdim` and numpy's `keepdims=True` were "unknown name …:
/// assign it first, e.g. `keepdim = 1`", a fix that does not keep the axis;
/// the help names gradcalc's spelling, `sum(X, 1, keepdims)`, which gives
/// the row sums of [[1, 2, 3], [4, 5, 6]] as a column, 6 and 15.
#[test]
fn python_spellings_of_keepdims_name_gradcalcs() {
    let (stdout, stderr) = run(
        "Z = [[1, 2, 3], [4, 5, 6]]\nsum(Z, 1, keepdim)\nsum(Z, 1, keepdims=True)\nsum(Z, 1, keepdims)",
    );
    assert_contains(
        &stderr,
        "2 │ sum(Z, 1, keepdim)\n  │           ^^^^^^^ the word is `keepdims`, numpy's: `sum(X, 1, keepdims)`",
    );
    assert_contains(
        &stderr,
        "^^^^ gradcalc has no booleans: write 1 (a comparison in brackets gives 1 or 0, `(x > 0)`); numpy's `keepdims=True` is the word alone: `sum(X, 1, keepdims)`",
    );
    assert!(!stderr.contains("assign it first"), "{stderr}");
    assert_contains(&stdout, "2×1\n  [[ 6],\n   [15]]");
}

/// `:check NAME` and `:descend … NAME` of a name that is no leaf said what
/// `:=` does ("`:=` moves a leaf", "write `foo = …` to bind it"); they say
/// what the command takes and name the session's leaves, for a tensor loss
/// and for a number alike.
#[test]
fn check_and_descend_say_what_they_take() {
    let (_, stderr) = run(
        "W = [1, 2]; L = sum(W*W)\n:check foo\n:check L\n:descend L lr=0.1 steps=2 foo\n\
         a = 1; y = a^2\n:descend y lr=0.1 steps=1 y",
    );
    expect_test::expect![[r#"
        error: `foo` is not a variable: `:check` takes the leaves a loss is built from
          ┌─ -e:2:8
          │
        2 │ :check foo
          │        ^^^ name a leaf (`:grad` lists those of the output): `W`

        error: `L` is derived, not a leaf: `:check` takes the leaves a loss is built from
          ┌─ -e:3:8
          │
        3 │ :check L
          │        ^ name a leaf instead (`:grad` lists those of the output): `W`

        error: `foo` is not a variable: `:descend` takes the leaves a loss is built from
          ┌─ -e:4:27
          │
        4 │ :descend L lr=0.1 steps=2 foo
          │                           ^^^ name a leaf (`:grad` lists those of the output): `W`

        error: `y` is derived, not a leaf: `:descend` takes the leaves a loss is built from
          ┌─ -e:6:27
          │
        6 │ :descend y lr=0.1 steps=1 y
          │                           ^ name a leaf instead (`:grad` lists those of the output): `W`, `a`

    "#]]
    .assert_eq(&stderr);
    assert!(!stderr.contains(":="), "{stderr}");
}

/// The help of `grad(v, v)` for a vector v bound to a second name
/// (`x = v`) said `grad(sum(x), v)`, the other name; it writes the name
/// typed.
#[test]
fn the_reduce_hint_of_grad_names_the_argument_typed() {
    let (_, stderr) = run("v = [1, 2]; x = v\ngrad(v, v)");
    assert_contains(&stderr, "reduce it first, e.g. `grad(sum(v), v)`");
}

/// A TA's key that does not seal (a check whose value is not the key's own:
/// `sum(z)` of [0.3, 3.3, 0.8] is 4.4, not 4.3) was one line
/// `gradcalc: key.calc:4:1: …`; it is reported as every error is, with the
/// line and a caret under the check.
#[test]
fn a_key_that_does_not_seal_shows_its_line_and_a_caret() {
    let (_dir, key) = crate::util::folder_with(
        "key.calc",
        "# HW\n## Problem 1\nz = [0.3, 3.3, 0.8]\n:expect sum(z) = 4.3\n",
    );
    let output = output_of(&["--seal", key.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = stderr_of(&output);
    assert_contains(
        &stderr,
        "error: the key does not seal: the key's own `sum(z)` is not within tol=0.000001 of the value after `=`\n",
    );
    assert_contains(&stderr, "key.calc:4:1\n");
    assert_contains(
        &stderr,
        "4 │ :expect sum(z) = 4.3\n  │ ^^^^^^^^^^^^^^^^^^^^ correct the value after `=` or the solution before it",
    );
}

/// Square brackets written to group, as by hand (`3*[x + 1]`), were told
/// to "build it with operations instead, e.g. `x*[1, 0] + y*[0, 1]`"; a
/// one-element literal of an expression says to write round brackets, and
/// `3*(x + 1)` is 9 at x = 2.
#[test]
fn square_brackets_written_to_group_name_the_round_ones() {
    let (stdout, stderr) = run("x = 2\n3*[x + 1]\n3*(x + 1)\n[x, 1]");
    assert_contains(
        &stderr,
        "2 │ 3*[x + 1]\n  │    ^^^^^ `[…]` makes a vector; to group, write round brackets: `(…)`",
    );
    assert_contains(&stdout, "x = 2\n9\n");
    // Two elements keep the help that builds a vector of variables.
    assert_contains(
        &stderr,
        "e.g. `x*[1, 0] + y*[0, 1]` for the vector of x and y",
    );
}

/// `:=` typed apart (`w : = 2`) or backwards (`w =: 2`) was a bare "expected
/// an operator …, found `:`"; the help writes the update as it is spelt.
#[test]
fn the_update_typed_apart_or_backwards_is_spelt_out() {
    let (stdout, stderr) = run("w = 1\nw : = 2\nw =: 2\nw := 2\nw");
    assert_eq!(
        stderr
            .matches("the update in place is `:=`, colon first and no space: `w := 2`")
            .count(),
        2,
        "{stderr}"
    );
    assert_contains(&stdout, "w := 2\n2\n");
}

/// Ctrl-D at a quiz's prompt left gradcalc, losing the session and the
/// score (as it leaves at `> `); it stops the quiz with its score, as `q`
/// and as Ctrl-D stops `:step`, and the session goes on: y = 2·2 + 2 = 6.
#[test]
fn ctrl_d_in_a_quiz_stops_the_quiz_not_the_session() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = crate::pty::Repl::start(state.path());
    repl.line("a = 2; y = a*a + a", "y = 6");
    repl.prompt();
    repl.converse(&[
        (":quiz", &["quiz 1/12> "]),
        ("1", &["✓ right", "quiz 2/12> "]),
    ]);
    repl.ctrl_d();
    repl.expect("quiz stopped after 1 of 12 questions: score 1 of 1 right");
    repl.prompt();
    repl.line("y + 0", "6");
    repl.prompt();
    // At `> `, Ctrl-D still leaves.
    repl.ctrl_d();
    repl.exits_with_0();
}

/// `s += 1` on a tensor is `s = s + 1`, as on a number (it was refused):
/// s = sum([1, 2]) = 3 gives 4; with x = [1, 2], L = sum(x·x) = 5, and
/// `L -= 2*L` gives −5, so ∂L/∂x = −2x = [−2, −4]; `s *= [1, 2]`
/// broadcasts 4 to [4, 8]; shapes that do not broadcast are refused as in
/// `v + [1, 2, 3]`, and v is kept.
#[test]
fn compound_assignment_works_on_tensors_as_on_numbers() {
    let (stdout, stderr) = run("s = sum([1, 2])\ns += 1\nx = [1, 2]; L = sum(x*x)\n\
         L -= 2*L\n:grad x\ns *= [1, 2]\nv = [1, 2]\nv += [1, 2, 3]\nv");
    assert_contains(&stdout, "s = 3\ns = 4\n");
    assert_contains(&stdout, "L = 5\nL = -5\n∂L/∂x = [-2, -4]  (2)\n");
    assert_contains(&stdout, "s = [4, 8]  (2)\n");
    assert_contains(&stdout, "v = [1, 2]  (2)\n[1, 2]  (2)\n");
    assert!(!stderr.contains("not supported"), "{stderr}");
    assert_contains(&stderr, "error: (2) + (3): the shapes do not broadcast");
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
}

/// `W := …` lists the named values that moved, as `x := 5` does: with
/// W = [[1, 2], [3, 4]] and v = [1, 1], h = W @ v = [3, 7], L = sum(h·h) =
/// 9 + 49 = 58 and M = 2W; c = 7 reads no W. W := [[0, 1], [1, 0]] (the
/// swap) makes h = [1, 1], L = 1 + 1 = 2 and M = [[0, 2], [2, 0]]; W and c
/// are not listed. A number's `:=` lists a vector built on it too: u =
/// [1, 2]·w at w = 3 is [3, 6].
#[test]
fn a_tensor_update_lists_what_moved() {
    let (stdout, stderr) = run("W = [[1, 2], [3, 4]]; v = [1, 1]; h = W @ v\n\
         L = sum(h*h); M = W*2; c = 7\nW := [[0, 1], [1, 0]]\n\
         w = 2; u = [1, 2]*w\nw := 3");
    assert_eq!(stderr, "");
    let update = &stdout[stdout.find("W = 2×2\n   [[0, 1]").unwrap()..];
    let (update, scalar) = update.split_at(update.find("w = 2\n").unwrap());
    assert_eq!(
        update,
        "W = 2×2\n   [[0, 1],\n    [1, 0]]\n  h = [1, 1]  (2)\n  L = 2  (was 58)\n  M = 2×2\n     [[0, 2],\n      [2, 0]]\n"
    );
    assert_contains(scalar, "w := 3\n  u = [3, 6]  (2)\n");
    // In JSON: one `moved` event after W's `value`, `before` for L only.
    let (events, _) = crate::util::json_events(&[
        "-e",
        "W = [[1, 2], [3, 4]]; v = [1, 1]; h = W @ v; L = sum(h*h)\nW := [[0, 1], [1, 0]]",
    ]);
    let moved = events.iter().find(|e| e["kind"] == "moved").unwrap();
    assert_eq!(
        moved["changed"],
        serde_json::json!([
            {"name": "h", "shape": [2], "value": [1, 1]},
            {"name": "L", "shape": [], "value": 2, "before": 58},
        ])
    );
}

/// `:vars` writes a tensor of shape `()` on one line of the numbers' table,
/// as a number's (it took two lines, its gradient on the second): x = [1,
/// 2], s = sum(x·x) = 5, t = 3, m = s·t = 15, so ∂m/∂t = s = 5, ∂m/∂s =
/// t = 3 and ∂m/∂x = t·2x = [6, 12].
#[test]
fn vars_writes_a_shape_scalar_tensor_on_one_line() {
    let (stdout, stderr) = run("x = [1, 2]; s = sum(x*x); t = 3; m = s*t\n:vars");
    assert_eq!(stderr, "");
    assert_contains(
        &stdout,
        "  t = 3   leaf     ∂m/∂t = 5\n  s = 5   derived  ∂m/∂s = 3\n  m = 15  derived  ∂m/∂m = 1\n  x (leaf) = [1, 2]  (2)\n    ∂m/∂x = [6, 12]  (2)\n",
    );
}

/// A negative size is a size, not a numpy index: `randn(-1, 2)` says what a
/// size is, with a caret on the −1 and the call to write (it got the hint
/// about numpy's `x[-1]`); `zeros(2, -3)` likewise. An index keeps its hint.
#[test]
fn a_negative_size_is_named_a_size() {
    let (_, stderr) = run("randn(-1, 2)\nzeros(2, -3)\nx = [1, 2]; x[-1]");
    assert_contains(
        &stderr,
        "error: a size counts elements: a whole number from 0 up, not -1\n  ┌─ -e:1:7\n  │\n1 │ randn(-1, 2)\n  │       ^^ write the size without its sign: `randn(1, 2)`\n",
    );
    assert_contains(
        &stderr,
        "2 │ zeros(2, -3)\n  │          ^^ write the size without its sign: `zeros(2, 3)`\n",
    );
    assert_eq!(stderr.matches("numpy").count(), 1, "{stderr}");
    assert_contains(&stderr, "3 │ x = [1, 2]; x[-1]");
}
