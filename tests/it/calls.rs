//! Names inside functions: the nodes a call of a user function builds are
//! labelled `CALL.OP` (`n1.add2`), shown by `:topo` and `:trace`, and typed
//! back in expressions, `:grad` and `:paths`. Values are Karpathy's neuron
//! (micrograd lecture): n = 0.8813735870, o = tanh(n) = 0.7071067812 = 1/√2,
//! ∂o/∂n = 1 − o² = 0.5.

use expect_test::expect;

use crate::util::{gradcalc, stderr_of, stdout_of};

/// Runs `script`; stdout and stderr.
fn run(script: &str) -> (String, String) {
    let output = gradcalc().args(["-e", script]).output().unwrap();
    (stdout_of(&output), stderr_of(&output))
}

const NEURON: &str = "n(x1, x2, w1, w2, b) = tanh(x1*w1 + x2*w2 + b)
x1 = 2; x2 = 0; w1 = -3; w2 = 1; b = 6.8813735870195432
o = n(x1, x2, w1, w2, b)";

#[test]
fn a_calls_nodes_are_labelled_with_the_call_and_op() {
    // By hand: x1*w1 = -6, x2*w2 = 0, their sum -6, plus b 0.8813735870.
    let (stdout, stderr) = run(&format!("{NEURON}\n:topo"));
    assert_eq!(stderr, "");
    expect![[r#"
        defined n(x1, x2, w1, w2, b)
        x1 = 2
        x2 = 0
        w1 = -3
        w2 = 1
        b = 6.881373587
        o = 0.7071067812
        reverse topological order from o: 10 nodes, output first
           #  node  name     computes           value
           1  _9    o        tanh(n1.add2)      0.7071067812
           2  _8    n1.add2  n1.add1 + b        0.881373587
           3  _4    b        leaf               6.881373587
           4  _7    n1.add1  n1.mul1 + n1.mul2  -6
           5  _6    n1.mul2  x2 * w2            0
           6  _3    w2       leaf               1
           7  _1    x2       leaf               0
           8  _5    n1.mul1  x1 * w1            -6
           9  _2    w1       leaf               -3
          10  _0    x1       leaf               2
    "#]]
    .assert_eq(&stdout);
}

#[test]
fn labels_are_typed_back_in_grad_paths_and_expressions() {
    let script = format!("{NEURON}\n:grad n1.add2 n1.mul1\n:paths n1.mul1\n2*n1.add2");
    let (stdout, stderr) = run(&script);
    assert_eq!(stderr, "");
    // ∂o/∂n = 0.5, and n1.mul1 feeds n with local derivative 1: 0.5 too;
    // 2·0.8813735870 = 1.762747174.
    let tail: Vec<&str> = stdout.lines().skip(7).collect();
    expect![[r#"
        [
            "∂o/∂n1.add2 = 0.5",
            "∂o/∂n1.mul1 = 0.5",
            "paths from o to n1.mul1: 1 (chain rule: ∂o/∂n1.mul1 is the sum over paths of the product of local derivatives)",
            "   1. o → n1.add2 → n1.add1 → n1.mul1   0.5 × 1 × 1 = 0.5",
            "  sum = 0.5 = ∂o/∂n1.mul1   (reverse mode visited each of 10 nodes once)",
            "1.762747174",
        ]
    "#]]
    .assert_debug_eq(&tail);
}

#[test]
fn calls_are_numbered_per_function_and_nested_calls_by_their_own() {
    // f1 calls n2: n(2, 2, 1, 1, 0) = tanh(4) = 0.9993292997, squared
    // 0.9986590494 (Python's math.tanh).
    let script = format!("{NEURON}\nf(x) = n(x, x, 1, 1, 0)^2\ny = f(x1) + 1\n:topo");
    let (stdout, _) = run(&script);
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(".pow") || l.contains(".tanh"))
        .map(str::trim)
        .collect();
    expect![[r#"
        [
            "1  _21   y        f1.pow + 1         1.998659049",
            "3  _19   f1.pow   n2.tanh ^ 2        0.9986590493",
            "5  _17   n2.tanh  tanh(n2.add2)      0.9993292997",
        ]
    "#]]
    .assert_debug_eq(&rows);
}

#[test]
fn a_label_is_read_only_and_an_unknown_one_says_where_labels_are_listed() {
    let (_, stderr) = run(&format!("{NEURON}\nn1.add2 = 3"));
    expect![[r#"
        error: cannot assign to `n1.add2`: names with a `.` are labels of nodes built inside function calls
          ┌─ -e:4:1
          │
        4 │ n1.add2 = 3
          │ ^^^^^^^ choose another name, e.g. `n1_add2`

    "#]]
    .assert_eq(&stderr);
    let (_, stderr) = run(&format!("{NEURON}\nn7.tanh + 1"));
    expect![[r#"
        error: no node `n7.tanh`: no call of a function built a node of that label
          ┌─ -e:4:1
          │
        4 │ n7.tanh + 1
          │ ^^^^^^^ `:topo` lists the nodes of the output with their labels (a call's nodes are `CALL.OP`, e.g. `h1.relu`)

    "#]]
    .assert_eq(&stderr);
}

#[test]
fn a_failed_or_previewed_call_gives_its_number_back() {
    // `n(x1)` fails (wrong arity) before any call is numbered; `z = n(1, 1, 1,
    // 1, 0)` makes a new leaf (no variable used), so its call is undone: the
    // next call is n2 either way.
    let script = format!("{NEURON}\nz = n(1, 1, 1, 1, 0)\nq = n(x1, x2, w1, w2, b) + 1\n:topo");
    let (stdout, _) = run(&script);
    assert!(stdout.contains("tanh(n2.add2)"), "{stdout}");
    assert!(!stdout.contains("n3."), "{stdout}");
}
