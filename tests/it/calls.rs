//! Names inside functions: the nodes a call of a user function builds are
//! labelled `CALL.OP` (`n1.add2`), shown by `:topo` and `:trace`, and typed
//! back in expressions, `:grad` and `:paths`. Values are Karpathy's neuron
//! (micrograd lecture): n = 0.8813735870, o = tanh(n) = 0.7071067812 = 1/√2,
//! ∂o/∂n = 1 − o² = 0.5.

use expect_test::expect;

use crate::util::{assert_contains, gradcalc, output_of, stderr_of, stdout_of};

/// Runs [`NEURON`] and then `lines`; stdout and stderr.
fn after_neuron(lines: &str) -> (String, String) {
    let output = output_of(&["-e", &format!("{NEURON}\n{lines}")]);
    (stdout_of(&output), stderr_of(&output))
}

const NEURON: &str = "n(x1, x2, w1, w2, b) = tanh(x1*w1 + x2*w2 + b)
x1 = 2; x2 = 0; w1 = -3; w2 = 1; b = 6.8813735870195432
o = n(x1, x2, w1, w2, b)";

#[test]
fn a_calls_nodes_are_labelled_with_the_call_and_op() {
    // By hand: x1*w1 = -6, x2*w2 = 0, their sum -6, plus b 0.8813735870.
    let (stdout, stderr) = after_neuron(":topo");
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
    let (stdout, stderr) = after_neuron(":grad n1.add2 n1.mul1\n:paths n1.mul1\n2*n1.add2");
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
    let (stdout, _) = after_neuron("f(x) = n(x, x, 1, 1, 0)^2\ny = f(x1) + 1\n:topo");
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
    let (_, stderr) = after_neuron("n1.add2 = 3");
    expect![[r#"
        error: cannot assign to `n1.add2`: names with a `.` are labels of nodes built inside function calls
          ┌─ -e:4:1
          │
        4 │ n1.add2 = 3
          │ ^^^^^^^ choose another name, e.g. `n1_add2`

    "#]]
    .assert_eq(&stderr);
    let (_, stderr) = after_neuron("n7.tanh + 1");
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
    // next call is n2 either way. The rows of the leaves are o's (above).
    let (stdout, stderr) =
        after_neuron("z = n(1, 1, 1, 1, 0)\nq = n(x1, x2, w1, w2, b) + 1\n:topo");
    assert_eq!(stderr, "");
    let rows: Vec<&str> = stdout
        .lines()
        .skip(7)
        .filter(|row| !row.contains(" leaf "))
        .collect();
    expect![[r#"
        [
            "z = 0.9640275801",
            "q = 1.707106781",
            "reverse topological order from q: 12 nodes, output first",
            "   #  node  name     computes           value",
            "   1  _17   q        n2.tanh + 1        1.707106781",
            "   2  _16            constant           1",
            "   3  _15   n2.tanh  tanh(n2.add2)      0.7071067812",
            "   4  _14   n2.add2  n2.add1 + b        0.881373587",
            "   6  _13   n2.add1  n2.mul1 + n2.mul2  -6",
            "   7  _12   n2.mul2  x2 * w2            0",
            "  10  _11   n2.mul1  x1 * w1            -6",
        ]
    "#]]
    .assert_debug_eq(&rows);
}

/// examples/mlp.calc with `extra` after it; stdout.
fn mlp(extra: &str) -> String {
    let output = gradcalc()
        .arg(crate::util::in_crate("examples/mlp.calc"))
        .args(["--precision", "full", "-e", extra])
        .output()
        .unwrap();
    assert_eq!(stderr_of(&output), "");
    stdout_of(&output)
}

/// The leaves' gradients a `:trace` shows (`[k] x1 leaf = 0.5   ∂L/∂x1 = g`),
/// sorted by name, and its header's step count.
fn trace_leaves(stdout: &str) -> (usize, Vec<(String, f64)>) {
    let header = stdout
        .lines()
        .find(|l| l.starts_with("backward pass from L: "))
        .unwrap();
    let total = header["backward pass from L: ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let mut leaves: Vec<(String, f64)> = stdout
        .lines()
        .filter(|l| l.starts_with('[') && l.contains(" leaf = "))
        .map(|l| {
            let name = l.split(' ').nth(1).unwrap().to_string();
            let grad = l.rsplit(" = ").next().unwrap().parse().unwrap();
            (name, grad)
        })
        .collect();
    leaves.sort_by(|a, b| a.0.cmp(&b.0));
    (total, leaves)
}

/// Two floats equal but for rounding: the collapsed trace multiplies the
/// upstream gradient by ∂output/∂input through the body, the expanded one
/// walks the body; the same chain rule, summed in another order.
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-14 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn a_trace_shows_each_call_as_one_step_with_the_gradients_of_every_step() {
    let collapsed = mlp(":trace all");
    let expanded = mlp(":trace all --expand");
    let (steps, leaves) = trace_leaves(&collapsed);
    let (all_steps, all_leaves) = trace_leaves(&expanded);
    // 39 steps node by node: the three neuron calls (5 nodes each: 2 mul,
    // 2 add, tanh) and the out call (3 mul, 3 add, tanh) are 22 steps; as
    // four steps the trace has 39 - 22 + 4 = 21.
    assert_eq!((steps, all_steps), (21, 39));
    assert_eq!(leaves.len(), 15);
    for ((name, g), (all_name, all_g)) in leaves.iter().zip(&all_leaves) {
        assert_eq!(name, all_name);
        assert!(same(*g, *all_g), "{name}: {g} and {all_g}");
    }
    // The same gradients as `:grad`, and as by hand (Python's math.tanh
    // gives ∂L/∂v1 = -1.2809214099...): dz = 2(o - 1)(1 - o²), ∂L/∂v1 = dz·h1.
    let names: Vec<&str> = leaves.iter().map(|l| l.0.as_str()).collect();
    let grads = mlp(&format!(":grad {}", names.join(" ")));
    for (name, g) in &leaves {
        let line = format!("∂L/∂{name} = ");
        let shown = grads.lines().rev().find(|l| l.starts_with(&line)).unwrap();
        let value: f64 = shown[line.len()..].parse().unwrap();
        assert!(same(*g, value), "{name}: {g} and :grad's {value}");
    }
    let by_hand = crate::util::mlp_by_hand();
    let v1 = leaves.iter().find(|l| l.0 == "v1").unwrap().1;
    assert!((v1 - by_hand.dz * by_hand.h1).abs() < 1e-12, "{v1}");
    assert!((v1 + 1.2809214099).abs() < 1e-9, "{v1}");
    // One line a call: its inputs, value and upstream gradient, and how to
    // see its steps.
    let call = collapsed
        .lines()
        .find(|l| l.contains("= neuron(x1, x2, w11, w12, b1)"))
        .unwrap();
    assert!(call.starts_with("[16] h1 = neuron(x1, x2, w11, w12, b1) = 0.79687814"));
    assert!(call.ends_with("(one call of neuron, 5 steps: `--expand=neuron1` shows them)"));
    assert!(!collapsed.contains("neuron1.add2"));
    assert!(expanded.contains("neuron1.add2"));
}

#[test]
fn a_trace_expands_the_calls_named() {
    let one = mlp(":trace --expand=neuron2");
    let (steps, _) = trace_leaves(&one);
    // neuron2's 5 steps instead of its one: 21 - 1 + 5.
    assert_eq!(steps, 25);
    // neuron2.add2 = 0.5·0.9 + (-1.2)(-0.2) - 0.3 = 0.39, in f64 0.38999999999999996.
    assert!(one.contains("[12] neuron2.add2 = neuron2.add1 + b2 = 0.3899999999999"));
    assert!(!one.contains("neuron1.add2") && !one.contains("out1.add3"));
    let two = mlp(":trace --expand=neuron2 --expand=out1");
    // out1's 7 steps too: 25 - 1 + 7.
    assert_eq!(trace_leaves(&two).0, 31);
    let output = gradcalc()
        .arg(crate::util::in_crate("examples/mlp.calc"))
        .args(["-e", ":trace --expand=h1"])
        .output()
        .unwrap();
    let stderr = stderr_of(&output);
    assert_contains(&stderr, "no call labelled `h1` in the output's graph");
    assert_contains(&stderr, "its calls: neuron1, neuron2, neuron3, out1");
}
