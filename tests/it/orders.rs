//! The orders a backward pass can take: `:topo kahn` against the order
//! PyTorch's engine runs (observed in PyTorch itself by
//! `scripts/pytorch_kahn.py`, recorded in `tests/data/pytorch_kahn.tsv`), and
//! `:topo naive`, the wrong order, on colah's example worked by hand.

use expect_test::expect;

use crate::util::{assert_ends_with, in_crate, json_events, member, members, output_of, stdout_of};

/// `:topo kahn all` of `source`: the labels in order, constants left out
/// (they have no node in PyTorch).
fn kahn_labels(source: &str) -> Vec<String> {
    let (events, status) = json_events(&["-e", source, "-e", ":topo kahn all"]);
    assert_eq!(status, Some(0), "{source}");
    let kahn = events.iter().find(|e| e["kind"] == "kahn").unwrap();
    members(&kahn["nodes"])
        .filter(|n| n["op"] != "const")
        .map(|n| n["label"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn kahn_order_is_the_order_pytorch_runs_on_five_graphs() {
    let data = std::fs::read_to_string(in_crate("tests/data/pytorch_kahn.tsv")).unwrap();
    let mut graphs = 0;
    for line in data.lines() {
        let [name, source, pytorch, fifo] = line.split('\t').collect::<Vec<_>>()[..] else {
            panic!("bad line {line:?}");
        };
        let got = kahn_labels(source);
        assert_eq!(got.join(","), pytorch, "{name}: {source}");
        // The graph tells the rules apart: first-in first-out is another order.
        assert_ne!(pytorch, fifo, "{name}");
        graphs += 1;
    }
    assert_eq!(graphs, 5);
}

#[test]
fn naive_order_on_colahs_example_gets_b_wrong() {
    // By hand: the naive recursion visits e, c, a, b, then d (inputs in
    // order, each node when first reached). e passes 1·d = 2 to c and
    // 1·c = 3 to d; c passes 2 to a and 2 to b; b is visited (its gradient
    // read: 2) before d passes it 3·1 = 3. The right ∂e/∂b is 2 + 3 = 5.
    let output = output_of(&[
        "-e",
        "a = 2; b = 1; c = a + b; d = b + 1; e = c*d",
        "-e",
        ":topo naive",
    ]);
    let text = stdout_of(&output);
    expect![[r#"
        backprop from e in a naive recursion's order: visit a node, pass its gradient on, then visit its inputs, each node once, when first reached; 5 nodes
              #  naive  right   node
              1      1      1   e = c * d
              2      2      2   c = a + b
              3      2      2   a = leaf
              4      2      5 ✗ b = leaf
              5      3      3   d = b + 1
        b was visited at 4, before its consumer d (at 5) passed it its gradient: the walk read ∂e/∂b = 2 where all its uses give 5
        1 of 5 gradients wrong (✗); backprop sorts the nodes in reverse topological order (`:topo`) so that it visits every node after all its consumers
    "#]]
    .assert_eq(&text[text.find("backprop from").unwrap()..]);
}

#[test]
fn naive_order_passes_on_an_incomplete_gradient_at_an_inner_fan_out() {
    // y = h + h*h with h = x*x at x = 2: the naive walk reaches h from the
    // `+` (gradient 1) and passes 1·2x = 4 on to x before h*h adds 2h = 8 to
    // h. Right: ∂y/∂h = 1 + 2h = 9, ∂y/∂x = 9·2x = 36.
    let (events, _) = json_events(&["-e", "x = 2; h = x*x; y = h + h*h", "-e", ":topo naive"]);
    let naive = events.iter().find(|e| e["kind"] == "naive").unwrap();
    let early = &naive["early"];
    assert_eq!(early["node"], "h");
    assert_eq!(
        (early["naive"].as_f64(), early["right"].as_f64()),
        (Some(1.0), Some(9.0))
    );
    let x = member(&naive["rows"], "label", "x");
    assert_eq!(
        (x["naive"].as_f64(), x["right"].as_f64()),
        (Some(4.0), Some(36.0))
    );
    assert_eq!(naive["wrong"], 2);
}

#[test]
fn naive_order_without_fan_out_is_right_and_says_so() {
    let output = output_of(&["-e", "x = 0.5; y = tanh(2*x)", "-e", ":topo naive"]);
    let text = stdout_of(&output);
    assert_ends_with(&text, "so the naive order gives the right gradients\n");
    assert!(!text.contains('✗'), "{text}");
}
