//! A call of a user function on tensors is one step in every view, not only
//! in `:trace`: `:step` pages it, `:svg DIR --steps` draws it as one box
//! (the function's name in bold, its body left out, as a call of numbers is
//! drawn), the page has the call as a box and every node, `:quiz` asks it
//! as one step; `--expand=CALL` opens it in each. Call labels are one
//! numbering per function across numbers and tensors, and `--expand=` of a
//! name that is no step lists the names it takes.
//!
//! The layer: W = [[1, 2], [3, 4]], x = [1, 1], b = [0, 0]; W @ x + b =
//! [3, 7], L = tanh(3) + tanh(7) = 1.995053091 (Python's `math.tanh`), and
//! with d = 1 − tanh²([3, 7]) = [0.009866037165, 0.000003326109345]:
//! ∂L/∂W = outer(d, x) = [[d0, d0], [d1, d1]], ∂L/∂x = Wᵀ d =
//! [d0 + 3·d1, 2·d0 + 4·d1] = [0.009876015493, 0.01974537877], ∂L/∂b = d.

use serde_json::Value;

use crate::pty::{Repl, strip_ansi};
use crate::util::{
    assert_close, assert_contains, gradcalc, json_events, json_lines, json_number,
    output_with_stdin, run_script_in, slides_of, stderr_of, stdout_of,
};

/// The layer of the brief, as a script.
const LAYER: &str = "layer(W, x, b) = tanh(W @ x + b)\nW = [[1, 2], [3, 4]]\nx = [1, 1]\nb = [0, 0]\nL = sum(layer(W, x, b))\n";

/// d = 1 − tanh²([3, 7]), by Python's `math.tanh`.
const D: [f64; 2] = [0.009866037165440211, 3.3261093448366807e-06];

/// ∂L/∂x = Wᵀ d = [d0 + 3·d1, 2·d0 + 4·d1].
const DX: [f64; 2] = [0.009876015493474721, 0.01974537876825977];

/// `text` without colour, its words joined by one space.
fn words(text: &str) -> String {
    strip_ansi(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The numbers of a value as JSON writes it, row-major.
fn numbers(value: &Value) -> Vec<f64> {
    match value {
        Value::Array(items) => items.iter().flat_map(numbers).collect(),
        number => vec![json_number(number).expect("a number")],
    }
}

/// Asserts that `got` holds `expected`, each within 1e-9 relative (the
/// tensor tanh is within 2 ulps of Python's, which 1 − tanh(7)²'s
/// cancellation magnifies to ~1e-11).
fn assert_numbers(got: &[f64], expected: &[f64], what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}: {got:?}");
    for (g, e) in got.iter().zip(expected) {
        assert_close(*g, *e, 1e-9);
    }
}

#[test]
fn step_pages_a_tensor_call_as_the_one_step_trace_shows() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = Repl::start(state.path());
    for line in LAYER.lines() {
        repl.send_line(line);
        repl.prompt();
    }
    repl.send_line(":trace");
    let trace = words(&repl.prompt());
    // The trace's text, the prompt after it left out.
    let trace = trace.trim_end_matches('>').trim_end();
    // The trace: [1] L (sum), [2] the call, and no third step.
    assert_contains(
        trace,
        "[2] tanh(W @ x + b) (layer1 = layer(W, x, b): one call, 3 steps:",
    );
    assert!(!trace.contains("[3]"), "{trace}");
    repl.send_line(":step");
    let first = words(&repl.expect("step 1/2"));
    assert_contains(&first, "[1] L (sum)");
    repl.send("\u{1b}[C");
    let second = words(&repl.expect("step 2/2"));
    // Step 2 is the trace's step 2, word for word.
    let step = &second[second.find("[2]").unwrap()..second.find("step 2/2").unwrap()];
    assert_eq!(step.trim(), trace[trace.find("[2]").unwrap()..].trim());
    // Its numbers, by hand: ∂L/∂b = d, ∂L/∂x = Wᵀ d.
    assert_contains(
        step,
        "∂L/∂b += upstream ⊙ (1 - tanh(W @ x + b)^2) through layer1, (2) → 2 = [0.009866037165, 0.000003326109345] (2)",
    );
    assert_contains(step, "= [0.009876015493, 0.01974537877] (2)");
    repl.send("q");
    repl.expect("(stopped at step 2/2");
    repl.prompt();
    // `--expand=layer1` opens the call: L's sum, tanh, +, @.
    repl.send_line(":step --expand=layer1");
    let first = words(&repl.expect("step 1/4"));
    assert_contains(&first, "[1] L (sum)");
    repl.send("g 4\r");
    let last = words(&repl.expect("step 4/4"));
    assert_contains(&last, "[4] W @ x (@)");
    assert_contains(&last, "= [0.009876015493, 0.01974537877] (2)");
    repl.send("q");
    repl.expect("(stopped at step 4/4");
    repl.prompt();
    repl.leave();
}

#[test]
fn svg_steps_draw_a_tensor_call_as_one_box_and_expand_opens_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("boxed")).unwrap();
    std::fs::create_dir(dir.path().join("open")).unwrap();
    run_script_in(
        dir.path(),
        &format!("{LAYER}:svg boxed --steps\n:svg open --steps --expand=layer1\n"),
    );
    // Two steps: step-000 before the pass, then one slide a step.
    let boxed = slides_of(&dir.path().join("boxed"), 2, str::to_string);
    let last = &boxed[2];
    assert_contains(last, "step 2 of 2, layer(W, x, b)");
    // The call's op is the function's name in bold, as a call of numbers.
    assert_contains(last, "font-weight=\"bold\" fill=\"#1a1a1a\">layer</text>");
    // Its edges carry the composed rules; the body's ops are left out.
    assert_contains(last, ">outer(upstream ⊙ (1 - tanh(W @ x + b)^2), x)</text>");
    assert_contains(last, ">Wᵀ @ (upstream ⊙ (1 - tanh(W @ x + b)^2))</text>");
    for op in [">@</text>", ">+</text>", ">tanh</text>"] {
        assert!(!last.contains(op), "{op} drawn in the call's box");
    }
    // Expanded: four steps, each op drawn.
    let open = slides_of(&dir.path().join("open"), 4, str::to_string);
    assert_contains(&open[4], "step 4 of 4, W @ x");
    for op in [">@</text>", ">+</text>", ">tanh</text>"] {
        assert_contains(&open[4], op);
    }
}

#[test]
fn the_trace_json_and_the_page_show_the_call_as_one_step() {
    let (events, code) = json_events(&["-e", &format!("{LAYER}:trace")]);
    assert_eq!(code, Some(0));
    let trace = events.iter().find(|e| e["kind"] == "trace").unwrap();
    let steps = trace["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert!(steps[0].get("call").is_none(), "{}", steps[0]);
    assert_eq!(
        steps[1]["call"],
        serde_json::json!({"label": "layer1", "function": "layer", "args": ["W", "x", "b"], "steps": 3})
    );
    // The page: the call as a box, and every node; the same two steps.
    let dir = tempfile::tempdir().unwrap();
    run_script_in(dir.path(), &format!("{LAYER}:html page.html\n"));
    let html = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
    let model = crate::web::page_model(&html);
    let steps = model["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert!(
        steps[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("[2] tanh(W @ x + b) (layer1 = layer(W, x, b): one call")
    );
    let views = model["views"].as_array().unwrap();
    let names: Vec<&str> = views.iter().map(|v| v["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["calls as boxes", "every node"]);
    // Boxes in the picture's order, inputs first: W, x, b, the call, L;
    // every node adds W @ x and W @ x + b before tanh.
    let boxes = |view: &Value| view["boxes"].as_array().unwrap().len();
    assert_eq!((boxes(&views[0]), boxes(&views[1])), (5, 7));
    // Step 1 lights L, step 2 the call's output (tanh) in both views.
    assert_eq!(views[0]["lit"], serde_json::json!([4, 3]));
    assert_eq!(views[1]["lit"], serde_json::json!([6, 5]));
    // In every node's view, W @ x + b (box 4) is final at the call's
    // step: ∂L/∂(W @ x + b) = d.
    let mark = &views[1]["boxes"][4][0];
    assert_eq!(
        (mark["step"].as_u64(), mark["kind"].as_str()),
        (Some(2), Some("done"))
    );
    assert_eq!(mark["text"], "[0.009866, 0.000003326]");
    assert_contains(
        views[0]["svg"].as_str().unwrap(),
        ">layer(W, x, b) (2)</text>",
    );
}

#[test]
fn quiz_asks_a_tensor_call_as_one_step() {
    // Step 2 alone: which node, then W, x, b (shape, numbers) by hand.
    let answers = [
        "layer(W, x, b)",
        "2×2",
        "[[0.009866037165, 0.009866037165], [0.000003326109345, 0.000003326109345]]",
        "(2)",
        "[0.009876015493, 0.01974537877]",
        "(2)",
        "[0.009866037165, 0.000003326109345]",
    ];
    let script = format!("{LAYER}:quiz steps=2\n{}\n", answers.join("\n"));
    let output = output_with_stdin(&["--json"], script.as_str());
    let events = json_lines(&stdout_of(&output));
    let questions: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "quiz_question")
        .collect();
    assert_eq!(questions[0]["questions"], 7);
    assert_eq!(questions[0]["steps"], 2);
    assert_eq!(questions[0]["node"], Value::Null);
    let inputs: Vec<&str> = questions[1..]
        .iter()
        .map(|q| q["input"].as_str().unwrap())
        .collect();
    assert_eq!(inputs, ["W", "W", "x", "x", "b", "b"]);
    let verdicts: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "quiz_verdict")
        .collect();
    let correct: Vec<bool> = verdicts.iter().map(|v| v["correct"] == true).collect();
    assert_eq!(correct, [true; 7], "{verdicts:?}");
    // The node as the trace names it, the call as written, its label.
    assert_eq!(
        verdicts[0]["node"],
        "tanh(W @ x + b) = layer(W, x, b) = layer1"
    );
    assert_numbers(&numbers(&verdicts[4]["expected"]["value"]), &DX, "x");
    assert_numbers(&numbers(&verdicts[6]["expected"]["value"]), &D, "b");
    // The whole pass: 2 steps, L's sum (shape and numbers of what the
    // call's output receives) and the call (which node, then 6).
    let events = json_lines(&stdout_of(&output_with_stdin(
        &["--json"],
        format!("{LAYER}:quiz\nq\n").as_str(),
    )));
    let first = events
        .iter()
        .find(|e| e["kind"] == "quiz_question")
        .unwrap();
    assert_eq!(
        (&first["questions"], &first["steps"]),
        (&Value::from(9), &Value::from(2))
    );
}

#[test]
fn call_labels_are_one_numbering_per_function_across_numbers_and_tensors() {
    // f on a vector, on numbers, on a vector again: f1, f2, f3.
    // y = f(p, q) at p = 2, q = 3 is tanh(2·3 + 1) = tanh(7) =
    // 0.9999983369439447 (Python's math.tanh).
    let source = "f(a, c) = tanh(a * c + 1)\nv = [1, 2]\nL = sum(f(v, v))\np = 2\nq = 3\ny = f(p, q)\n:trace\nM = sum(f(v, [1, 1]))\n:trace";
    let (events, code) = json_events(&["-e", source]);
    assert_eq!(code, Some(0), "{events:?}");
    let traces: Vec<&Value> = events.iter().filter(|e| e["kind"] == "trace").collect();
    let call = |trace: &Value| -> String {
        let step = trace["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s.get("call").is_some_and(|c| !c.is_null()))
            .expect("a call step");
        step["call"]["label"].as_str().unwrap().to_string()
    };
    assert_eq!(traces[0]["of"], "y");
    assert_close(
        json_number(&events.iter().find(|e| e["name"] == "y").unwrap()["value"]).unwrap(),
        0.9999983369439447,
        1e-12,
    );
    assert_eq!(call(traces[0]), "f2");
    assert_eq!(call(traces[1]), "f3");
    // f1 is a call of L's graph, not of M's: no name of M's trace.
    let output = gradcalc()
        .args(["-e", &format!("{source}\n:trace --expand=f1")])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert_contains(&stderr_of(&output), "`f1` is not a step of the trace of M");
}

#[test]
fn expand_of_no_step_lists_the_names_it_takes() {
    let output = gradcalc()
        .args(["-e", &format!("{LAYER}:trace --expand=zz")])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = stderr_of(&output);
    assert_contains(&stderr, "`zz` is not a step of the trace of L");
    // The call shown as one step, then the steps whose nodes have names.
    assert_contains(
        &stderr,
        "it can expand: `--expand=layer1` (a call of layer), `--expand=L`",
    );
    // `:svg` names them alike.
    let dir = tempfile::tempdir().unwrap();
    let output = crate::util::output_in(
        dir.path(),
        &["-e", &format!("{LAYER}:svg g.svg --expand=zz")],
    );
    assert_contains(&stderr_of(&output), "`zz` is not a step of the trace of L");
}

#[test]
fn a_call_is_one_user_of_each_operand_in_the_pictures_states() {
    // sq(v) = v·v·w, w = 2, x = [1, 2]: L = Σ (2x² + x) = 13. Step 2 (the
    // `+`) is x's first use of two: [1, 1] so far; step 3 (the call, one
    // use though the body reads x twice) adds 2·w·x = [4, 8]: [5, 9],
    // final; w receives Σ x² = 5 there and is blank before.
    let source =
        "w = 2\nsq(v) = v * v * w\nx = [1, 2]\nL = sum(sq(x) + x)\n:dot --step 2\n:dot --step 3";
    let output = gradcalc().args(["-e", source]).output().unwrap();
    let out = stdout_of(&output);
    let pictures: Vec<&str> = out.split("digraph").skip(1).collect();
    assert_eq!(pictures.len(), 2, "{out}");
    assert_contains(
        pictures[0],
        "{ x (2) | value\\l[1, 2]\\l | grad\\l[1, 1] so far\\l }",
    );
    assert_contains(pictures[0], "{ w | value\\l2\\l | grad\\l }");
    assert_contains(
        pictures[1],
        "{ x (2) | value\\l[1, 2]\\l | grad\\l[5, 9]\\l }",
    );
    assert_contains(pictures[1], "{ w | value\\l2\\l | grad\\l5\\l }");
    // The call is one box: its op is `sq`, step 3 lights it.
    assert_contains(
        pictures[1],
        "n2 [label=\"{ sq(x) (2) | value\\l[2, 8]\\l | grad\\l[1, 1]\\l }\", style=filled",
    );
    assert_contains(pictures[1], "n2op [label=\"sq\"");
}

/// The page in Chromium: the call one box lit at step 2; C draws every
/// node, W @ x and W @ x + b among them, the same step lighting the call's
/// output, W @ x + b's gradient d = [0.009866, 0.000003326] there.
#[test]
fn the_tensor_page_steps_the_call_as_a_box_and_every_node() {
    use crate::browser::{Browser, html_page, shown};
    use serde_json::json;
    let Some(mut browser) = Browser::start("a tensor call's page in Chromium") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = html_page(dir.path(), "layer", LAYER);
    browser.open(&url, (1920, 1080), "window.gradcalcView");
    let boxes = "document.querySelectorAll('g.value').length";
    assert_eq!(browser.eval(boxes), json!(5));
    browser.press("ArrowRight");
    browser.press("ArrowRight");
    let (step, current, line) = shown(&mut browser);
    assert_eq!((step, current), (json!(2), json!(["layer(W, x, b) (2)"])));
    assert!(
        line.as_str()
            .unwrap()
            .starts_with("[2] tanh(W @ x + b) (layer1 = layer(W, x, b): one call"),
        "{line}"
    );
    browser.press("c");
    assert_eq!(browser.eval(boxes), json!(7));
    let (step, current, _) = shown(&mut browser);
    assert_eq!((step, current), (json!(2), json!(["tanh(W @ x + b) (2)"])));
    let sum = browser.eval(
        "Array.from(document.querySelectorAll('g.value')).find(g => g.querySelector('text.name').textContent == 'W @ x + b (2)').textContent",
    );
    assert_contains(sum.as_str().unwrap(), "[0.009866, 0.000003326]");
}
