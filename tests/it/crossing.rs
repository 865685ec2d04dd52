//! An op's operands decide its graph (issue 35): ops of numbers go to the
//! scalar graph wherever they stand, an op with a tensor operand to the
//! tensor graph, its numbers bridged. A tensor op that takes a number built
//! by ops copies those ops into the tensor graph, so that every view of a
//! tensor output — `:trace`, `:step`, `:topo`, `--json`, `:trace md`, the
//! slides and the page, `:quiz` — goes on through the number's own ops
//! down to the scalar leaves, as a number's trace does. Every number below
//! is worked out by hand in the comment beside it.

use serde_json::Value;

use crate::util::{
    assert_close, assert_contains, json_events, json_lines, json_number, member, output_with_stdin,
    run_script_in, session_events, stdout_of,
};

/// The brief's example: c = w·3 = 6 is a number built by an op, and M =
/// sum(c·[1, 2]) = 6 + 12 = 18 a tensor output that reads it.
const EXAMPLE: &str = "w = 2\nc = w*3\nM = sum(c*[1,2])\n";

/// A fan-out: w is used by c = w·w and directly by the tensor op. At w = 2,
/// c = 4 and M = 4·1 + 4·2 + 2 + 2 = 16; ∂M/∂w = 3·2w + 2 = 14.
const FAN_OUT: &str = "w = 2\nc = w*w\nM = sum(c*[1,2] + w*[1,1])\n";

/// The events of `gradcalc --json -e SOURCE`, which must succeed.
fn events(source: &str) -> Vec<Value> {
    let (events, code) = json_events(&["-e", source]);
    assert_eq!(code, Some(0), "{source}: {events:?}");
    events
}

/// The last event of `kind` among `events`.
fn last<'a>(events: &'a [Value], kind: &str) -> &'a Value {
    events
        .iter()
        .rev()
        .find(|e| e["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} event in {events:?}"))
}

/// A line of a step: the input, its rule and what it receives (a number).
type Line = (String, String, f64);

/// Each step of a `trace` event as (node, op, its lines), the numbers of
/// shape `()` (other values as nan).
fn steps_of(trace: &Value) -> Vec<(String, String, Vec<Line>)> {
    trace["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|step| {
            let lines = step["contributions"]
                .as_array()
                .expect("contributions")
                .iter()
                .map(|c| {
                    (
                        c["input"].as_str().unwrap().to_string(),
                        c["rule"].as_str().unwrap().to_string(),
                        json_number(&c["value"]["value"]).unwrap_or(f64::NAN),
                    )
                })
                .collect();
            (
                step["node"].as_str().unwrap().to_string(),
                step["op"].as_str().unwrap().to_string(),
                lines,
            )
        })
        .collect()
}

/// What the walk passed to `input` in every step, in walk order.
fn received(trace: &Value, input: &str) -> Vec<f64> {
    steps_of(trace)
        .into_iter()
        .flat_map(|(_, _, lines)| lines)
        .filter(|(i, _, _)| i == input)
        .map(|(_, _, x)| x)
        .collect()
}

/// The number of the last `grad` event for `name` (`:grad NAME`).
fn grad_of(events: &[Value], name: &str) -> f64 {
    let grad = events
        .iter()
        .rev()
        .find(|e| e["kind"] == "grad" && e["wrt"] == name)
        .unwrap_or_else(|| panic!("no grad of {name} in {events:?}"));
    json_number(&grad["value"]).unwrap_or_else(|| panic!("{grad}"))
}

#[test]
fn a_tensor_trace_goes_through_a_derived_number_to_its_leaf() {
    let events = events(&format!("{EXAMPLE}:trace\n:grad w"));
    let steps = steps_of(last(&events, "trace"));
    // [1] M = sum: ones(2) to c·[1, 2]; [2] c·[1, 2]: ∂M/∂c = 1·1 + 1·2 = 3;
    // [3] c = w·3: ∂M/∂w += upstream ⊙ 3 = 9. Before, the trace stopped at c.
    let nodes: Vec<(&str, &str)> = steps
        .iter()
        .map(|(n, op, _)| (n.as_str(), op.as_str()))
        .collect();
    assert_eq!(nodes, [("M", "sum"), ("c * [1, 2]", "*"), ("c", "*")]);
    assert_eq!(
        steps[1].2,
        [("c".to_string(), "sum(upstream ⊙ ([1, 2]))".to_string(), 3.0)]
    );
    assert_eq!(
        steps[2].2,
        [("w".to_string(), "upstream ⊙ 3".to_string(), 9.0)]
    );
    assert_eq!(grad_of(&events, "w"), 9.0);
}

#[test]
fn step_topo_handouts_slides_page_and_quiz_show_the_same_steps() {
    let trace_and_step = events(&format!("{EXAMPLE}:trace\n:step"));
    let traces: Vec<&Value> = trace_and_step
        .iter()
        .filter(|e| e["kind"] == "trace")
        .collect();
    assert_eq!(traces.len(), 2);
    assert_eq!(
        traces[0]["steps"], traces[1]["steps"],
        "`:step` pages the trace's steps"
    );

    // `:topo`: c is an op (w * 3) with its step, w a leaf.
    let topo = events(&format!("{EXAMPLE}:topo"));
    let nodes = &last(&topo, "topo")["nodes"];
    let c = member(nodes, "node", "c");
    assert_eq!(
        (&c["computes"], &c["step"]),
        (&Value::from("w * 3"), &Value::from(3))
    );
    assert_eq!(member(nodes, "node", "w")["computes"], "leaf");

    // The terminal's text: the same three steps in `:trace`, `:step` and
    // the handout.
    let dir = tempfile::tempdir().unwrap();
    let text = run_script_in(dir.path(), &format!("{EXAMPLE}:trace\n:step\n:trace md"));
    let heads: Vec<&str> = text.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(
        heads,
        [
            "[1] M (sum)",
            "[2] c * [1, 2] (*)",
            "[3] c (*)",
            "[1] M (sum)",
            "[2] c * [1, 2] (*)",
            "[3] c (*)"
        ]
    );
    assert_contains(
        &text,
        "    ∂M/∂w += upstream ⊙ 3   ⊙ elementwise, ()\n      = 9\n",
    );
    assert_contains(
        &text,
        "| 3 | c (\\*), () | ∂M/∂c = 3 | ∂M/∂w += upstream ⊙ 3, ⊙ elementwise, () | 9 |",
    );

    // The slides of `:svg DIR --steps` and the page light the trace's nodes.
    let steps = crate::tensor_steps::steps_shown_alike(EXAMPLE);
    assert_eq!(steps.len(), 3);

    // `:quiz` asks for step 3 too: which node (c), the shape of ∂M/∂w (()),
    // its numbers (3·3 = 9).
    let output = output_with_stdin(&["--json"], format!("{EXAMPLE}:quiz steps=3\nc\n()\n9\n"));
    let quiz = json_lines(&stdout_of(&output));
    let questions: Vec<&Value> = quiz
        .iter()
        .filter(|e| e["kind"] == "quiz_question")
        .collect();
    assert_eq!(questions[1]["node"], "c");
    assert_eq!(questions[1]["rule"], "upstream ⊙ 3");
    let right: Vec<bool> = quiz
        .iter()
        .filter(|e| e["kind"] == "quiz_verdict")
        .map(|v| v["correct"] == true)
        .collect();
    assert_eq!(right, [true, true, true]);
}

#[test]
fn a_fan_out_through_a_derived_number_adds_up_at_the_leaf() {
    let all = events(&format!("{FAN_OUT}:trace\n:grad w\n:vars"));
    let trace = last(&all, "trace");
    // w·[1, 1] passes 1 + 1 = 2; c = w·w passes upstream ∂M/∂c = 1 + 2 = 3
    // times w = 2 to each of its two uses of w: 6 and 6. 2 + 6 + 6 = 14.
    assert_eq!(received(trace, "w"), [2.0, 6.0, 6.0]);
    assert_eq!(received(trace, "c"), [3.0]);
    let c_step = steps_of(trace)
        .into_iter()
        .find(|(n, _, _)| n == "c")
        .unwrap();
    assert_eq!(c_step.2.len(), 2, "w is both operands of c = w*w");
    assert_eq!(grad_of(&all, "w"), 14.0);
    // `:vars`: ∂M/∂c = 3 (the copy of c's gradient), ∂M/∂w = 14.
    let vars = &last(&all, "vars")["vars"];
    assert_eq!(member(vars, "name", "c")["grad"], 3.0);
    assert_eq!(member(vars, "name", "w")["grad"], 14.0);
    // Central differences agree: (M(2 + h) − M(2 − h))/2h = 14.
    let checked = events(&format!("{FAN_OUT}:check"));
    let check = last(&checked, "check");
    assert_eq!(
        (&check["wrt"], &check["verdict"]),
        (&Value::from("w"), &Value::from("pass"))
    );
    assert_eq!(check["analytic"], 14.0);
}

#[test]
fn moving_the_leaf_recomputes_the_copies_and_the_trace_follows() {
    let events = events(&format!("{FAN_OUT}w := 3\nM\n:trace\n:grad w"));
    // At w = 3: c = 9, M = 9·1 + 9·2 + 3 + 3 = 33; ∂M/∂w = 3·2·3 + 2 = 20.
    let value = events.iter().rev().find(|e| e["kind"] == "value").unwrap();
    assert_eq!(json_number(&value["value"]), Some(33.0));
    let trace = last(&events, "trace");
    // 2, then upstream 3 times w = 3 for each use: 9 and 9.
    assert_eq!(received(trace, "w"), [2.0, 9.0, 9.0]);
    assert_eq!(grad_of(&events, "w"), 20.0);
}

#[test]
fn a_statement_of_numbers_is_as_before_beside_tensors() {
    // A tensor statement whose numbers are folded into its ops leaves no
    // node in the scalar graph: the labels of a later scalar statement are
    // those it has without the tensors.
    let scalar = "w = 2\ny = w*3 + 1\n:topo";
    let beside = format!("x = [1, 2]\ns = sum(x*2 - 1)\n{scalar}");
    let topo = |source: &str| last(&events(source), "topo")["nodes"].clone();
    assert_eq!(topo(scalar), topo(&beside));
    // A number's trace through c is unchanged: Q = c·2 = 12, ∂Q/∂c = 2,
    // ∂Q/∂w = 2·3 = 6.
    let dir = tempfile::tempdir().unwrap();
    let text = run_script_in(dir.path(), "x = [1, 2]\nw = 2\nc = w*3\nQ = c*2\n:trace");
    assert_contains(&text, "[2] c = w * 3 = 6   upstream 2\n");
    assert_contains(&text, "→ w: local ∂(w*3)/∂w = 3;  2 × 3 = 6;  grad 0 → 6\n");
    assert_contains(&text, "[3] w leaf = 2   ∂Q/∂w = 6\n");
}

#[test]
fn a_number_of_too_many_ops_is_an_input_and_the_trace_says_so() {
    // s = w + w + … (n terms) is n − 1 additions; M = sum(s·[1, 2]) = 3n
    // at w = 1, ∂M/∂w = 3n either way.
    let with_terms = |n: usize| {
        let sum = vec!["w"; n].join(" + ");
        events(&format!(
            "w = 1\ns = {sum}\nM = sum(s*[1,2])\n:topo\n:trace\n:grad w"
        ))
    };
    // 257 terms: 256 additions, copied: the topo lists them.
    let copied = with_terms(257);
    let nodes = &last(&copied, "topo")["nodes"];
    assert_eq!(
        members(nodes)
            .filter(|n| n["computes"] != "leaf" && n["computes"] != "constant")
            .count(),
        2 + 256
    );
    // Its legend names long labels (`t9 = …`), none read as an input.
    let legend = last(&copied, "trace")["legend"].to_string();
    assert!(!legend.contains("read as an input"), "{legend}");
    assert_eq!(grad_of(&copied, "w"), 3.0 * 257.0);
    // 258 terms: 257 additions, read as an input, said in the legend.
    let read = with_terms(258);
    let trace = last(&read, "trace");
    assert_eq!(steps_of(trace).len(), 2);
    assert_eq!(received(trace, "s"), [3.0]);
    let legend = &trace["legend"][0];
    assert_eq!(legend["name"], "s");
    assert_contains(
        legend["computes"].as_str().unwrap(),
        "a number built from more than 256 ops, read as an input: the trace stops at it, its gradient goes on (`:grad`); for its own steps type `s` then `:trace`",
    );
    assert_eq!(grad_of(&read, "w"), 3.0 * 258.0);
}

/// The members of a JSON array.
fn members(list: &Value) -> std::slice::Iter<'_, Value> {
    crate::util::members(list)
}

#[test]
fn calls_of_numbers_and_of_tensors_cross_too() {
    // f(w) = w·3 is a call of numbers inside a tensor statement: the scalar
    // graph's, labelled f1.mul; R = sum(6·[1, 2]) = 18, ∂R/∂w = 3·3 = 9.
    let events1 = events(&format!("{EXAMPLE}f(a) = a*3\nR = sum(f(w)*[1,2])\n:trace"));
    let trace = last(&events1, "trace");
    let last_step = steps_of(trace).pop().unwrap();
    assert_eq!(last_step.0, "f1.mul");
    assert_eq!(
        last_step.2,
        [("w".to_string(), "upstream ⊙ 3".to_string(), 9.0)]
    );

    // A call on tensors whose body names c: c is an input of the call's one
    // step, then c's own step. L = tanh(0.6) + tanh(1.2); ∂L/∂c =
    // 0.1·(1 − tanh²0.6) + 0.2·(1 − tanh²1.2), ∂L/∂w = 3·∂L/∂c.
    let events2 = events(&format!(
        "{EXAMPLE}layer(x) = tanh(x*c)\nL = sum(layer([0.1, 0.2]))\n:trace\n:grad w"
    ));
    let trace = last(&events2, "trace");
    let dc = 0.1 * (1.0 - 0.6f64.tanh().powi(2)) + 0.2 * (1.0 - 1.2f64.tanh().powi(2));
    let steps = steps_of(trace);
    assert_eq!(steps.len(), 3);
    assert!(steps[1].1.starts_with("layer1 = layer("), "{:?}", steps[1]);
    assert_close(received(trace, "c")[0], dc, 1e-12);
    assert_eq!(steps[2].0, "c");
    assert_close(received(trace, "w")[0], 3.0 * dc, 1e-12);
    assert_close(grad_of(&events2, "w"), 3.0 * dc, 1e-12);
}

#[test]
fn a_refused_statement_leaves_no_copy_behind() {
    // The second statement copies c, then fails on the shapes (2 @ 3): it
    // is undone, and M's graph and gradient are as before.
    let mut session = gradcalc::session::Session::new();
    session_events(&mut session, EXAMPLE).unwrap();
    let before = (session.graph().len(), session.tensor_graph_len());
    assert!(session_events(&mut session, "K = (c*[1, 2]) @ [1, 2, 3]").is_err());
    assert_eq!((session.graph().len(), session.tensor_graph_len()), before);
    // A number bridged twice in one statement is one node; a later
    // statement makes its own: c, its 3 and w again (3 nodes), [1, 2],
    // the product and the sum.
    session_events(&mut session, "N = sum(c*[1,2])").unwrap();
    assert_eq!(session.tensor_graph_len(), before.1 + 6);
}
