//! Long listings (`:topo all`, `:trace all`, …) as the printer streams them,
//! row by row from the session: their rows checked against values computed
//! here independently (the W1 chain's recurrence, powers of 2).

use std::ops::ControlFlow;

use gradcalc::render::{Format, Printer, Style};
use gradcalc::session::{Event, Session};
use serde_json::Value;

use crate::util::{json_lines, json_number, members};

/// Runs `source` through a fresh session and a printer in `format`, as the
/// binary does (each statement's events written before the next runs), and
/// returns standard output.
fn printed(source: &str, format: Format) -> String {
    let mut session = Session::new();
    let mut printer = Printer::new(format, Vec::new(), Vec::new());
    let _ = session.run_source_with(source, |session, result| {
        printer
            .report(&result, session, source, "<test>")
            .expect("writes to memory");
        ControlFlow::Continue(())
    });
    let (out, err) = printer.into_streams();
    assert!(err.is_empty(), "{}", String::from_utf8_lossy(&err));
    String::from_utf8(out).expect("UTF-8")
}

/// W1 (docs/benchmarks.md) with `n` statements: `x = 0.5`, `y = x`, then
/// `y = y*1.0001 + 0.0001` n times, then `y`: 4 n + 1 nodes.
fn w1(n: usize) -> String {
    format!("x = 0.5\ny = x\n{}y\n", "y = y*1.0001 + 0.0001\n".repeat(n))
}

fn plain() -> Format {
    Format::Human(Style::default())
}

/// The one event of `kind` among JSON lines.
fn only<'a>(lines: &'a [Value], kind: &str) -> &'a Value {
    let mut found = lines.iter().filter(|l| l["kind"] == kind);
    let event = found.next().unwrap_or_else(|| panic!("no {kind} event"));
    assert!(found.next().is_none(), "two {kind} events");
    event
}

#[test]
fn topo_all_in_json_lists_every_node_of_a_4001_node_chain_with_its_value() {
    let n = 1000;
    let lines = json_lines(&printed(&format!("{}:topo all\n", w1(n)), Format::Json));
    let topo = only(&lines, "topo");
    assert_eq!(topo["total"], 4001);
    assert_eq!(topo["omitted"], Value::Null);
    let nodes = topo["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 4001);

    // Independently: statement k (1-based) appends the constant 1.0001 (id
    // 4k−3), y*1.0001 (4k−2), the constant 0.0001 (4k−1) and the sum (4k),
    // the new y; x is node 0. y_0 = 0.5, y_k = y_{k−1}·1.0001 + 0.0001.
    let mut y = vec![0.5f64];
    for k in 1..=n {
        y.push(y[k - 1] * 1.0001 + 0.0001);
    }
    let y_node = |k: usize| if k == 0 { 0 } else { 4 * k as u64 };
    let mut position_of = vec![0usize; 4001];
    for (i, node) in nodes.iter().enumerate() {
        assert_eq!(node["position"], i + 1, "{node}");
        let id = node["id"].as_u64().expect("id");
        assert_eq!(position_of[id as usize], 0, "node {id} listed twice");
        position_of[id as usize] = i + 1;
    }
    assert_eq!(nodes[0]["id"], 4000, "the output comes first");
    for node in nodes {
        let id = node["id"].as_u64().unwrap();
        let value = json_number(&node["value"]).expect("a number");
        let inputs: Vec<u64> = members(&node["inputs"])
            .map(|i| i.as_u64().unwrap())
            .collect();
        let k = id.div_ceil(4) as usize; // the statement that made it
        let (op, expected_value, expected_inputs) = match id % 4 {
            _ if id == 0 => ("leaf", 0.5, vec![]),
            1 => ("const", 1.0001, vec![]),
            2 => ("*", y[k - 1] * 1.0001, vec![y_node(k - 1), id - 1]),
            3 => ("const", 0.0001, vec![]),
            _ => ("+", y[k], vec![id - 2, id - 1]),
        };
        assert_eq!(node["op"], op, "{node}");
        assert_eq!(value, expected_value, "{node}");
        assert_eq!(inputs, expected_inputs, "{node}");
        // Reverse topological: every node before its inputs.
        for input in inputs {
            assert!(
                position_of[id as usize] < position_of[input as usize],
                "{node}"
            );
        }
        let name = match id {
            0 => Value::from("x"),
            4000 => Value::from("y"),
            _ => Value::Null,
        };
        assert_eq!(node["name"], name, "{node}");
    }
}

#[test]
fn trace_all_prints_a_line_per_step_and_per_input_that_is_no_constant() {
    // 4001 nodes, 2000 of them constants (not shown): 2001 steps. Each `+` and
    // `*` passes to one input that is no constant (one line each), the leaf
    // to none; with the header, 1 + 2001 + 2000 lines.
    let text = printed(&format!("{}:trace all\n", w1(1000)), plain());
    let trace = text
        .split_once("backward pass from")
        .map(|(_, rest)| rest)
        .expect("a trace");
    assert_eq!(trace.lines().count(), 4002);
    assert!(
        trace.starts_with(" y: 2001 nodes in reverse topological order (2000 constants not shown)")
    );
    let steps = trace.lines().filter(|l| l.starts_with('[')).count();
    assert_eq!(steps, 2001);
    let last = trace.lines().last().unwrap();
    assert!(last.starts_with("[2001] x leaf = 0.5"), "{last}");
}

#[test]
fn trace_all_upstream_gradients_of_a_doubling_chain_are_powers_of_two() {
    // y = x·2·2·…·2 (60 times): the k-th product from the top has upstream
    // ∂y/∂node = 2^(k−1), and x at the end 2^60; every local is 2.
    let doublings = 60;
    let source = format!(
        "x = 1\ny = x\n{}y\n:trace all\n",
        "y = y*2\n".repeat(doublings)
    );
    let lines = json_lines(&printed(&source, Format::Json));
    let trace = only(&lines, "trace");
    assert_eq!(trace["total"], doublings + 1);
    assert_eq!(trace["constants"], doublings);
    let steps = trace["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), doublings + 1);
    for (k, step) in steps.iter().enumerate() {
        let upstream = json_number(&step["upstream"]).unwrap();
        assert_eq!(upstream, 2f64.powi(k as i32), "step {}: {step}", k + 1);
        assert_eq!(step["position"], k + 1);
        if k < doublings {
            assert_eq!(step["op"], "*");
            let into_chain = &step["contributions"][0];
            assert_eq!(json_number(&into_chain["local"]), Some(2.0));
            assert_eq!(
                json_number(&into_chain["product"]),
                Some(2f64.powi(k as i32 + 1))
            );
        } else {
            assert_eq!(step["op"], "leaf");
            assert_eq!(step["name"], "x");
        }
    }
}

#[test]
fn a_listing_gives_no_rows_once_the_session_has_run_another_statement() {
    let mut session = Session::new();
    let mut listing = None;
    let _ = session.run_source_with("x = 2; y = x*x + x; :topo", |session, result| {
        if let Some(rows) = result.unwrap().iter().find_map(Event::listing) {
            assert_eq!(session.node_rows(rows).count(), 3);
            listing = Some(rows.clone());
        }
        ControlFlow::Continue(())
    });
    let listing = listing.expect(":topo makes a listing");
    let _ = session.run_source(":gc", |_| ControlFlow::Continue(()));
    assert_eq!(session.node_rows(&listing).count(), 0);
    assert_eq!(session.trace_steps(&listing).count(), 0);
}

/// Where relu passes nothing, the trace names its operand as the trace
/// writes it (relu of x·y = −2 ≤ 0), not the `u` of the rule's help.
#[test]
fn passes_nothing_names_the_operand_as_the_trace_shows_it() {
    crate::util::check(
        "x = -1; y = 2; z = relu(x*y); :trace",
        expect_test::expect![[r#"
            x = -1
            y = 2
            z = 0
            backward pass from z: 4 nodes in reverse topological order; upstream = ∂z/∂node, seeded with 1
            [1] z = relu(_2) = 0   upstream 1
                  → _2: ∂relu(x*y)/∂(x*y) passes nothing here (x*y ≤ 0);  grad 0 stays
            [2] _2 = x * y = -2   upstream 0
                  → x: local ∂(x*y)/∂x = y = 2;  0 × 2 = 0;  grad 0 → 0
                  → y: local ∂(x*y)/∂y = x = -1;  0 × (-1) = 0;  grad 0 → 0
            [3] y leaf = 2   ∂z/∂y = 0
            [4] x leaf = -1   ∂z/∂x = 0
        "#]],
    );
}
