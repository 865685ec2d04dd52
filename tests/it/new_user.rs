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

/// A tensor `grad(L, W)` is a node of the graph, so every command
/// differentiates through it: with `G = grad(sum(W*W), W) = 2W`, ∂sum(G)/∂W
/// is 2 per element (by hand), and with `L = mean((w*xs - ys)^2)`,
/// g = ∂L/∂w = 2·mean((w·xs − ys)·xs) = −14 and ∂g/∂w = 2·mean(xs²) = 28/3
/// for xs = [1, 2, 3], w = 0.5 (by hand). These were refused (and before
/// that printed 0, `:check` even saying "pass").
#[test]
fn a_gradient_of_a_tensor_gradient_is_differentiated_by_every_command() {
    let (stdout, stderr) = run("W = [1, 2]; G = grad(sum(W*W), W)\n:grad W\n\
         xs = [1, 2, 3]; ys = [2, 4, 6]; w = 0.5; L = mean((w*xs - ys)^2)\n\
         g = grad(L, w)\n:grad w\n:check w");
    assert!(!stderr.contains("error"), "{stderr}");
    assert_contains(&stdout, "G = [2, 4]  (2)");
    assert_contains(&stdout, "∂G/∂W = [2, 2]  (2)");
    assert_contains(&stdout, "g = -14");
    assert_contains(&stdout, "∂g/∂w = 9.333333333");
    assert_contains(
        &stdout,
        "reverse mode 9.333333333, central difference 9.333333333",
    );
    assert_contains(&stdout, "pass");
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

/// A user function whose body uses a tensor op or reads a tensor variable
/// was refused when called with numbers, though the same body typed out
/// works: `h(a) = sum(a)` gave "unknown function `sum`", `f(a) = sum(W*a)`
/// "unknown name `W` … assign it first" with W assigned, `g(a) = a @ a`
/// "unknown function `@`". They are evaluated as their bodies are: h(2) =
/// sum(2) = 2, softmax of one number is 1, f(2) = 2·(1 + 2) = 6 and
/// ∂f(w)/∂w = 1 + 2 = 3 (by hand); `2 @ 2` keeps its own error. A
/// parameter that shadows a tensor variable (`p(W) = W*W`) stays a number.
#[test]
fn a_function_of_tensor_ops_called_with_numbers_works_as_its_body() {
    let (stdout, stderr) = run(
        "h(a) = sum(a)\nh(2)\nk(a) = softmax(a)\nk(2)\nW = [1, 2]; f(a) = sum(W*a)\nf(2)\n\
         w = 2; L = f(w)\n:grad w\ng(a) = a @ a\ng(2)\np(W) = W*W\nx = 3; y = p(x)\n:trace",
    );
    assert_contains(&stdout, "defined h(a)\n2\n");
    assert_contains(&stdout, "defined k(a)\n1\n");
    assert_contains(&stdout, "defined f(a)\n6\n");
    assert_contains(&stdout, "L = 6\n∂L/∂w = 3\n");
    assert_contains(&stdout, "y = 9\nbackward pass from y:");
    assert!(!stdout.contains("tensor"), "{stdout}");
    assert!(!stderr.contains("unknown"), "{stderr}");
    assert_contains(
        &stderr,
        "error: in `g`: () @ (): the matrix product takes a vector or a matrix on each side; use * to scale",
    );
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
}

/// `:grad NAME` of a tensor output said "`c` is not a variable of the
/// output `M`" for a number c it was built from (`c = w*3; M =
/// sum(c*[1, 2])`), named as "built from" every vector of the session (M
/// itself among them) for a typo, and printed a bare 0 for a number it does
/// not reach or was built from an earlier binding of (`w = 5`; bare
/// `:grad` even said "M depends on no variable"). It answers as for a
/// number output: ∂M/∂c = 1 + 2 = 3 (by hand), the unknown name and the
/// function refused in their words, and the notes beside the zeros.
#[test]
fn grad_of_a_tensor_output_names_numbers_as_a_number_output_does() {
    let (stdout, stderr) = run(
        "w = 2; c = w*3; M = sum(c*[1, 2])\n:grad c\n:grad q\n:grad sin\ny = 3\n:grad y\nw = 5\n\
         :grad w\n:grad",
    );
    assert_contains(&stdout, "M = 18\n∂M/∂c = 3\n");
    assert_contains(&stdout, "y = 3\n∂M/∂y = 0  (M does not depend on y)\n");
    assert_contains(
        &stdout,
        "w = 5\n∂M/∂w = 0  (M was built from an earlier w)\n∂M/∂w = 0  (M was built from an earlier w)\n",
    );
    assert!(!stdout.contains("depends on no variable"), "{stdout}");
    assert_contains(
        &stderr,
        "error: unknown name `q`\n  ┌─ -e:3:7\n  │\n3 │ :grad q\n  │       ^ assign it first, e.g. `q = 1`",
    );
    assert_contains(&stderr, "error: `sin` is a function, not a variable");
    assert!(!stderr.contains("built from"), "{stderr}");
    assert_eq!(stderr.matches("error:").count(), 2, "{stderr}");
}

/// `:check v` of a tensor output built from an earlier v (`L = sum(v*v);
/// v = [3, 4]`) passed with 0 against 0 and no word, and bare `:check`
/// said "nothing to check"; as for a number output, each line says "(L was
/// built from an earlier v)" and bare `:check` says what it left out, for a
/// rebound vector and a rebound number alike.
#[test]
fn check_of_a_tensor_output_says_it_was_built_from_an_earlier_binding() {
    let (stdout, stderr) = run("v = [1, 2]; L = sum(v*v); v = [3, 4]\n:check v\n:check\n\
         w = 2; M = sum(w*[1, 2]); w = 3\n:check w\n:check");
    assert_eq!(
        stdout
            .matches("pass  (L was built from an earlier v)\n")
            .count(),
        2,
        "{stdout}"
    );
    assert_contains(&stdout, "∂M/∂w at w = 3: reverse mode 0");
    assert_contains(&stdout, "pass  (M was built from an earlier w)\n");
    assert_contains(
        &stderr,
        "note: not checked: ∂L/∂v = 0 (L was built from an earlier v)\n",
    );
    assert_contains(
        &stderr,
        "note: not checked: ∂M/∂w = 0 (M was built from an earlier w)\n",
    );
    assert!(!stderr.contains("nothing to check"), "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
}

/// `grad(L, c)` and `:expect ∂L/∂c` of a tensor loss refused a number c
/// that is derived ("`c` is derived, not a leaf"), where `grad(y, c)` of
/// numbers takes it: with xs = [1, 2], c = 2w and L = sum(c*xs), ∂L/∂c =
/// 1 + 2 = 3 and ∂L/∂w = 2·3 = 6 (by hand), as `c2 = 2*w; y = 3*c2`
/// gives grad(y, c2) = 3.
#[test]
fn grad_of_a_tensor_loss_takes_a_derived_number_as_numbers_do() {
    let (stdout, stderr) = run(
        "xs = [1, 2]\nw = 0.5\nc = 2*w\nL = sum(c*xs)\ngrad(L, c)\ngrad(L, w)\n\
         :expect ∂L/∂c = 3\nc2 = 2*w; y = 3*c2; grad(y, c2)",
    );
    assert_contains(&stdout, "L = 3\n3\n6\n✓ ∂L/∂c: correct");
    assert_contains(&stdout, "y = 3\n3\n");
    assert_eq!(stderr, "");
}

/// A matrix product whose inner sizes differ with no transpose that fits,
/// and `:=` given a value of another shape, said only what was wrong
/// (`(2×2) @ (3): the inner sizes must agree`, `a leaf of shape (3) cannot
/// take a value of shape ()`); the help says which sizes must agree, with
/// their values, and how to give the leaf a value or bind the name again.
#[test]
fn shape_errors_of_products_and_updates_say_what_fits() {
    let (_, stderr) =
        run("W = [[1, 2], [3, 4]]; x = [1, 2, 3]\nW @ x\nx @ [1, 2]\nx := 5\nw = 1; w := [1, 2]");
    expect_test::expect![[r#"
        error: (2×2) @ (3): the inner sizes must agree
          ┌─ -e:2:1
          │
        2 │ W @ x
          │ ^^^^^ in `A @ B` the matrix's columns and the vector's length must be equal; here they are 2 and 3

        error: (3) @ (2): the inner sizes must agree
          ┌─ -e:3:1
          │
        3 │ x @ [1, 2]
          │ ^^^^^^^^^^ in `A @ B` the two vectors' lengths must be equal; here they are 3 and 2

        error: a leaf of shape (3) cannot take a value of shape ()
          ┌─ -e:4:6
          │
        4 │ x := 5
          │      ^ give it a value of shape (3), or bind the name again with `=` (`NAME = …` takes any shape)

        error: a number takes a value of shape (), not (2)
          ┌─ -e:5:13
          │
        5 │ w = 1; w := [1, 2]
          │             ^^^^^^ reduce it first, e.g. `sum(…)`, or bind the name again with `=` (`NAME = …` takes any shape)

    "#]]
    .assert_eq(&stderr);
}

/// `:vars` of a tensor output built from an earlier binding of a number
/// (`M = sum(w*[1, 2]); w = 3`) showed w with no gradient and no word; as
/// for a number output, the row says ∂M/∂w = 0 and why.
#[test]
fn vars_of_a_tensor_output_notes_a_number_rebound_after_it() {
    let (stdout, stderr) = run("w = 2; M = sum(w*[1, 2]); w = 3\n:vars");
    assert_contains(
        &stdout,
        "  w = 3  leaf     ∂M/∂w = 0  (M was built from an earlier w)\n",
    );
    assert_eq!(stderr, "");
}

/// A call of one op traced as one step said "one call of f, 1 steps" (for
/// numbers) and "one call, 1 steps" (for tensors): "1 step". f(a) = 2a at
/// a = 3 gives ∂y/∂a = 2, scale(w, v) = w·v gives ∂L/∂w = 1 + 2 = 3.
#[test]
fn a_call_of_one_step_says_step() {
    let (stdout, _) = run(
        "f(x) = x*2; a = 3; y = f(a)\n:trace\nscale(s, t) = s*t; w = 2; v = [1, 2]\n\
         L = sum(scale(w, v))\n:trace",
    );
    assert_contains(&stdout, "(one call of f, 1 step: `--expand=f1` shows them)");
    assert_contains(
        &stdout,
        "(scale1 = scale(w, v): one call, 1 step: `--expand=scale1` shows them)",
    );
    assert_contains(&stdout, "∂y/∂a = 2");
    assert_contains(&stdout, "      = 3\n");
    assert!(!stdout.contains("1 steps"), "{stdout}");
}

/// numpy's spellings a student types first: `np.sum(x)` was "unknown
/// function `np.sum`" with no help, `len(x)` "did you mean `ln`?" (a
/// logarithm); the help names gradcalc's `sum(…)`, and where a value's
/// shape is shown. `sum(x)` of [1, 2, 3] is 6.
#[test]
fn numpy_spellings_of_functions_name_gradcalcs() {
    let (stdout, stderr) = run("x = [1, 2, 3]\nnp.sum(x)\ntorch.tanh(x)\nlen(x)\nsum(x)");
    assert_contains(
        &stderr,
        "2 │ np.sum(x)\n  │ ^^^^^^ gradcalc's functions have no library prefix: write `sum(…)`",
    );
    assert_contains(&stderr, "write `tanh(…)`");
    assert_contains(
        &stderr,
        "4 │ len(x)\n  │ ^^^ gradcalc has no `len`: a value's shape is printed beside it",
    );
    assert!(!stderr.contains("did you mean `ln`"), "{stderr}");
    assert_contains(&stdout, "(3)\n6\n");
}

/// Two operators typed in a row (`x +* 2`, `W @* x`) were "expected an
/// operand after `+`, found `*`" with no fix; the help says to delete one
/// of them (`x + 2` is 3 at x = 1). After `=` it says nothing of the kind.
#[test]
fn two_operators_in_a_row_say_to_delete_one() {
    let (stdout, stderr) = run("x = 1\ny = x +* 2\nW = [[1]]; v = [1]; W @* v\nz = * 2\nx + 2");
    assert_contains(
        &stderr,
        "2 │ y = x +* 2\n  │        ^ two operators in a row: delete `+` or `*`",
    );
    assert_contains(&stderr, "^ two operators in a row: delete `@` or `*`");
    assert_eq!(
        stderr.matches("two operators in a row").count(),
        2,
        "{stderr}"
    );
    assert!(stdout.ends_with("3\n"), "{stdout}");
}

/// Counts of one are singular: a session of one node says "1 node" in
/// `:stats` (x = 1 is one leaf), and an axis past a vector's one axis says
/// that a vector has one axis, 0 (it said "a tensor of 1 axes has axes 0
/// to 0").
#[test]
fn a_count_of_one_is_singular() {
    let (stdout, _) = run("x = 1\n:stats");
    assert_contains(&stdout, "graph: 1 node (1 reachable)");
    let (_, stderr) = run("sum([1, 2, 3], 1)");
    assert_contains(
        &stderr,
        "sum over axis 1: a vector has one axis, 0 (or -1, counted from the last)",
    );
}
