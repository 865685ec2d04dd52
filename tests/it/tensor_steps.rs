//! The one step model for tensor outputs: `:trace`'s step K, the slide
//! `:svg DIR --steps` writes for step K and the page's step K (the model
//! `:html` writes) agree on the node, the line and every box's gradient (blank, partial with its sum so
//! far, final), the slides share one canvas, and the numbers are numpy's.
//!
//! The expected numbers were computed with numpy 2 (float64):
//!
//! ```python
//! W = np.array([[1., 2], [3, 4]]); x = np.array([1., -1]); b = np.array([.5, .5])
//! u = W @ x + b                 # [-0.5, -0.5]
//! du = 1 - np.tanh(u)**2        # [0.78644773, 0.78644773]
//! np.outer(du, x)               # [[0.78644773, -0.78644773], [0.78644773, -0.78644773]]
//! W.T @ du                      # [3.14579093, 4.7186864]
//! np.tanh(u).sum()              # -0.9242343145200195
//! x = np.array([1., 2]); 2*x + 1  # ∂sum(x*x + x)/∂x = [3, 5]
//! ```

use std::collections::BTreeMap;

use serde_json::Value;

use crate::util::run_script_in as run;

/// The small layer of the issue.
const LAYER: &str = "W = [[1, 2], [3, 4]]; x = [1, -1]; b = [0.5, 0.5]; L = sum(tanh(W @ x + b))";
/// A fan-out: x is read three times.
const FAN_OUT: &str = "x = [1, 2]; y = x * x + x; L = sum(y)";

/// ∂L/∂u = 1 − tanh(u)² at u = −0.5 (numpy).
const DU: f64 = 0.786_447_732_965_927_4;

/// Every number in `text` (`[0.7864, -1]` → 0.7864, −1).
fn numbers(text: &str) -> Vec<f64> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e'))
        .filter_map(|word| word.parse::<f64>().ok())
        .collect()
}

/// One slide: its title, the box lit, and each box's name with its
/// gradient text (`None` while blank) and whether it is partial.
struct Slide {
    size: (String, String),
    title: String,
    current: Option<String>,
    boxes: BTreeMap<String, (Option<String>, bool)>,
}

/// Reads a slide's SVG.
fn slide(svg: &str) -> Slide {
    let doc = roxmltree::Document::parse(svg).unwrap();
    let root = doc.root_element();
    let text_of = |node: roxmltree::Node| {
        node.descendants()
            .filter(|n| n.is_text())
            .filter_map(|n| n.text())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let title = root
        .descendants()
        .find(|n| n.attribute("class") == Some("title"))
        .map(text_of)
        .unwrap_or_default();
    let mut boxes = BTreeMap::new();
    let mut current = None;
    for g in root.descendants().filter(|n| {
        n.tag_name().name() == "g"
            && n.attribute("class")
                .is_some_and(|c| c.split(' ').any(|w| w == "value"))
    }) {
        let class = |name: &str| {
            g.descendants().find(|n| {
                n.attribute("class")
                    .is_some_and(|c| c.split(' ').next() == Some(name))
            })
        };
        let name = class("name").map(text_of).unwrap_or_default();
        let grad = class("grad").unwrap();
        let grad_class = grad.attribute("class").unwrap_or_default();
        let shown = (!grad_class.contains("pending")).then(|| text_of(grad));
        if g.attribute("class").unwrap_or_default().contains("current") {
            current = Some(name.clone());
        }
        boxes.insert(name, (shown, grad_class.contains("partial")));
    }
    Slide {
        size: (
            root.attribute("width").unwrap().to_string(),
            root.attribute("height").unwrap().to_string(),
        ),
        title,
        current,
        boxes,
    }
}

/// `:trace`'s steps: step K at index K − 1, its lines.
pub(crate) fn trace_steps(text: &str) -> Vec<String> {
    let mut steps: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with('[') && line.contains("] ") {
            steps.push(String::new());
        } else if !line.starts_with(' ') && !steps.is_empty() {
            // The trace is over (`wrote …`).
            break;
        }
        if let Some(step) = steps.last_mut() {
            step.push_str(line);
            step.push('\n');
        }
    }
    steps
}

/// The slides of `script`'s output, step 0 first, and its `:trace` steps,
/// after checking every slide has one canvas and step K's slide lights the
/// node of `:trace`'s step K.
fn slides_and_trace(script: &str) -> (Vec<Slide>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("slides")).unwrap();
    let out = run(
        dir.path(),
        &format!("{script}\n:trace\n:svg slides --steps\n:html page.html"),
    );
    let steps = trace_steps(&out);
    let slides = crate::util::slides_of(&dir.path().join("slides"), steps.len(), slide);
    for s in &slides {
        assert_eq!(s.size, slides[0].size, "one canvas for every step");
    }
    for (k, step) in steps.iter().enumerate() {
        // `[2] tanh(W @ x + b) (tanh)`: the node is between `] ` and ` (`.
        let head = step.lines().next().unwrap();
        let node = &head[head.find("] ").unwrap() + 2..head.rfind(" (").unwrap()];
        let s = &slides[k + 1];
        assert!(
            s.title
                .ends_with(&format!("step {} of {}, {node}", k + 1, steps.len())),
            "{}",
            s.title
        );
        let lit = s.current.as_deref().unwrap();
        assert!(
            lit == node || lit.starts_with(&format!("{node} ")),
            "{lit} at step {}",
            k + 1
        );
    }
    let html = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
    page_agrees(&html, &slides, &steps);
    (slides, steps)
}

/// `:trace`'s steps of `script`'s output, after checking that the slides
/// of `:svg DIR --steps` and the page's steps show the same steps
/// ([`slides_and_trace`]).
pub(crate) fn steps_shown_alike(script: &str) -> Vec<String> {
    slides_and_trace(script).1
}

/// The model inside a page `:html` wrote, its picture put back in as the
/// page's script does.
fn page_model(html: &str) -> Value {
    crate::web::page_model(html)
}

/// Checks that the page's step K, as its script shows it (each box's last
/// mark at or before K, blank before the first; the lit box; the line),
/// is slide K and `:trace`'s step K.
fn page_agrees(html: &str, slides: &[Slide], steps: &[String]) {
    let model = page_model(html);
    let view = &model["views"][0];
    // The boxes in the page's SVG order, as its script finds them.
    let doc = roxmltree::Document::parse(view["svg"].as_str().unwrap()).unwrap();
    let names: Vec<String> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("name"))
        .map(|n| n.text().unwrap_or_default().to_string())
        .collect();
    let boxes = view["boxes"].as_array().unwrap();
    assert_eq!(boxes.len(), names.len());
    for (k, slide) in slides.iter().enumerate() {
        for (marks, name) in boxes.iter().zip(&names) {
            let mark = crate::web::mark_at(marks, k);
            let shown = mark.map(|m| format!("grad {}", m["text"].as_str().unwrap()));
            let partial = mark.is_some_and(|m| m["kind"] == "partial");
            assert_eq!(
                (shown, partial),
                slide.boxes[name].clone(),
                "box {name} at step {k}"
            );
        }
        if k > 0 {
            let lit = view["lit"][k - 1].as_u64().unwrap() as usize;
            assert_eq!(Some(&names[lit]), slide.current.as_ref(), "step {k}");
            let line = model["steps"][k - 1]["text"].as_str().unwrap();
            assert_eq!(line.trim_end(), steps[k - 1].trim_end(), "step {k}");
        }
    }
    assert_eq!(model["steps"].as_array().unwrap().len(), steps.len());
}

/// Asserts box `name` of `slide` shows `expected` (`None`: blank) to the
/// 4 significant digits a box shows, partial or not.
fn assert_grad(slide: &Slide, name: &str, expected: Option<&[f64]>, partial: bool) {
    let (shown, is_partial) = slide
        .boxes
        .get(name)
        .unwrap_or_else(|| panic!("no box {name} in {:?}", slide.boxes.keys()));
    match (shown, expected) {
        (None, None) => {}
        (Some(text), Some(expected)) => {
            let got = numbers(text);
            assert_eq!(got.len(), expected.len(), "{name}: {text}");
            for (g, e) in got.iter().zip(expected) {
                assert!(
                    (g - e).abs() <= 5e-4 * e.abs().max(1.0),
                    "{name}: {text} vs {expected:?}"
                );
            }
            assert_eq!(*is_partial, partial, "{name}: {text}");
            assert_eq!(text.ends_with("so far"), partial, "{name}: {text}");
        }
        _ => panic!("{name}: shown {shown:?}, expected {expected:?}"),
    }
}

#[test]
fn a_tensor_layer_agrees_on_text_and_slides() {
    let (slides, steps) = slides_and_trace(LAYER);
    assert_eq!(steps.len(), 4, "{steps:?}");
    // The matrix rule of the product's step, with shapes, and its numbers.
    assert!(steps[3].starts_with("[4] W @ x (@)"), "{}", steps[3]);
    assert!(steps[3].contains("∂L/∂W += outer(upstream, x)   outer((2), (2)) → 2×2"));
    assert!(steps[3].contains("∂L/∂x += Wᵀ @ upstream"));
    let text_numbers = numbers(&steps[3]);
    for expected in [DU, -DU, 3.145_790_932_049_131, 4.718_686_397_973_3] {
        assert!(
            text_numbers.iter().any(|n| (n - expected).abs() < 1e-9),
            "{expected} in {}",
            steps[3]
        );
    }
    let (w, x, b, wx, u, h, l) = (
        "W 2×2",
        "x (2)",
        "b (2)",
        "W @ x (2)",
        "W @ x + b (2)",
        "tanh(W @ x + b) (2)",
        "L",
    );
    let du = [DU, DU];
    let dw = [DU, -DU, DU, -DU];
    let dx = [3.145_790_932_049_131, 4.718_686_397_973_3];
    // After step K, which boxes hold their (final) gradient.
    let expected: [&[(&str, &[f64])]; 5] = [
        &[],
        &[(l, &[1.0]), (h, &[1.0, 1.0])],
        &[(l, &[1.0]), (h, &[1.0, 1.0]), (u, &du)],
        &[(l, &[1.0]), (h, &[1.0, 1.0]), (u, &du), (wx, &du), (b, &du)],
        &[
            (l, &[1.0]),
            (h, &[1.0, 1.0]),
            (u, &du),
            (wx, &du),
            (b, &du),
            (w, &dw),
            (x, &dx),
        ],
    ];
    for (k, filled) in expected.iter().enumerate() {
        for name in [w, x, b, wx, u, h, l] {
            let grad = filled.iter().find(|(n, _)| *n == name).map(|(_, g)| *g);
            assert_grad(&slides[k], name, grad, false);
        }
    }
    // The values: W in full, in rows.
    let dir = tempfile::tempdir().unwrap();
    let svg = run(dir.path(), &format!("{LAYER}\n:svg - --step 4"));
    assert!(svg.contains(">value [[1, 2],</tspan>"), "{svg}");
    assert!(svg.contains(">outer(upstream, x)</text>"), "{svg}");
}

#[test]
fn a_tensor_fan_out_is_partial_until_its_last_use() {
    let (slides, steps) = slides_and_trace(FAN_OUT);
    assert_eq!(steps.len(), 3, "{steps:?}");
    assert!(
        steps[1].contains("(use 1 of 3: contributions add)"),
        "{}",
        steps[1]
    );
    let x = "x (2)";
    assert_grad(&slides[1], x, None, false);
    // Step 2 (`y = x*x + x`): one use of three has added.
    assert_grad(&slides[2], x, Some(&[1.0, 1.0]), true);
    // Step 3 (`x*x`): the other two: 2x + 1.
    assert_grad(&slides[3], x, Some(&[3.0, 5.0]), false);
    assert_grad(&slides[3], "y (2)", Some(&[1.0, 1.0]), false);
    // x read twice by `x * x`: one edge with both rules.
    let dir = tempfile::tempdir().unwrap();
    let svg = run(dir.path(), &format!("{FAN_OUT}\n:svg -"));
    assert_eq!(
        svg.matches(">upstream ⊙ x, upstream ⊙ x</text>").count(),
        1,
        "{svg}"
    );
}

#[test]
fn topo_of_a_tensor_graph_lists_its_nodes_with_shapes_and_steps() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &format!("{LAYER}\n:topo"));
    let listing: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("reverse topological order"))
        .collect();
    assert_eq!(
        listing[0],
        "reverse topological order from L: 7 tensor nodes, output first"
    );
    let rows: Vec<Vec<&str>> = listing[2..]
        .iter()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|w| !w.is_empty())
                .collect()
        })
        .collect();
    assert_eq!(rows[0], ["1", "L", "sum(tanh(W @ x + b))", "()", "1"]);
    assert_eq!(rows[3], ["4", "W @ x", "W @ x", "2", "4"]);
    assert_eq!(rows[6], ["7", "W", "leaf", "2×2", "—"]);
}

/// Each value box's gradient rows in an SVG, in document order (`grad`
/// alone while blank; rows joined by `\n`).
fn grad_rows(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| {
            n.has_tag_name("text") && n.attribute("class").is_some_and(|c| c.starts_with("grad"))
        })
        .map(|n| {
            n.children()
                .filter_map(|t| t.text())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

#[test]
fn the_tensor_page_steps_in_chromium_as_the_slides_do() {
    let Some(mut browser) = crate::browser::Browser::start("the tensor :html page in Chromium")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("slides")).unwrap();
    let out = run(dir.path(), &format!("{LAYER}\n:trace\n:svg slides --steps"));
    let steps = trace_steps(&out);
    let url = crate::browser::html_page(dir.path(), "layer", LAYER);
    browser.open(&url, (1920, 1080), "window.gradcalcView");
    let rows_js = "Array.from(document.querySelectorAll('g.value text.grad')).map(t => \
                   t.querySelectorAll('tspan').length ? Array.from(t.querySelectorAll('tspan')).map(s => s.textContent).join('\\n') : t.textContent)";
    for k in 1..=steps.len() {
        browser.press("ArrowRight");
        let (step, current, line) = crate::browser::shown(&mut browser);
        assert_eq!(step, serde_json::json!(k));
        assert_eq!(line.as_str().unwrap().trim_end(), steps[k - 1].trim_end());
        let slide_svg =
            std::fs::read_to_string(dir.path().join(format!("slides/step-{k:03}.svg"))).unwrap();
        assert_eq!(
            current,
            serde_json::json!([slide(&slide_svg).current.unwrap()])
        );
        assert_eq!(
            browser.eval(rows_js),
            serde_json::json!(grad_rows(&slide_svg)),
            "step {k}"
        );
    }
    // After the last step, W's box holds ∂L/∂W = outer(upstream, x) in two rows.
    let w = browser.eval(
        "Array.from(document.querySelectorAll('g.value')).filter(g => g.querySelector('text.name').textContent === 'W 2×2').map(g => g.querySelectorAll('text.grad tspan').length)",
    );
    assert_eq!(w, serde_json::json!([2]));
    let shot = browser.screenshot("tensor-layer-1920x1080");
    crate::browser::assert_drawn(&shot, (1920, 1080));
}

/// `:step` in the terminal walks a tensor output's steps, one tensor op per
/// Enter, each as `:trace` prints it; `g N` jumps, `b` goes back.
#[test]
fn step_walks_the_tensor_steps_in_the_terminal() {
    let state = tempfile::tempdir().unwrap();
    let mut repl = crate::pty::Repl::start(state.path());
    repl.line(LAYER, "L = -0.9242343145");
    repl.line(":step", "each tensor op one step");
    repl.expect("[1] L (sum)");
    repl.expect("step 1/4");
    // → (as xterm sends it) the next step, as on the page.
    repl.send("\u{1b}[C");
    repl.expect("[2] tanh(W @ x + b) (tanh)");
    repl.expect("step 2/4");
    // Step 4: the matrix rule, with shapes, and numpy's numbers.
    repl.line("g 4", "[4] W @ x (@)");
    repl.expect("∂L/∂W += outer(upstream, x)   outer((2), (2)) → 2×2");
    repl.expect("[3.145790932, 4.718686398]");
    repl.expect("step 4/4, the last");
    // ← back.
    repl.send("\u{1b}[D");
    repl.expect("[3] W @ x + b (+)");
    repl.expect("step 3/4");
    repl.send("q");
    repl.expect("(stopped at step 3/4: the walk has ended");
    repl.line("x", "[1, -1]");
    repl.leave();
}

/// A box summarises a tensor past 4 elements an axis, as numpy does: the
/// first and last 2 with `…` between.
#[test]
fn a_large_tensor_box_is_summarised() {
    let dir = tempfile::tempdir().unwrap();
    let svg = run(
        dir.path(),
        "A = ones(6, 7); v = [1, 2, 3, 4, 5, 6, 7]; L = sum(A @ v)\n:svg - --step 1",
    );
    let rows: Vec<&str> = svg
        .split("<tspan")
        .skip(1)
        .map(|t| &t[t.find('>').unwrap() + 1..t.find("</tspan>").unwrap()])
        .collect();
    assert_eq!(
        rows[..5],
        [
            "value [[1, 1, …, 1, 1],",
            "       [1, 1, …, 1, 1],",
            "        …,",
            "       [1, 1, …, 1, 1],",
            "       [1, 1, …, 1, 1]]",
        ]
    );
    // A @ v = 28 in each of 6 rows (1 + 2 + … + 7).
    assert!(rows.contains(&"value [28, 28, …, 28, 28]"), "{rows:?}");
    assert!(svg.contains(">A 6×7</text>"), "{svg}");
}

/// A leaf as the output (`L = W` names W itself) has no backward step: the
/// trace and the picture say so rather than "steps 1 to 0".
#[test]
fn a_leaf_output_has_no_steps_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        "W = [[1, 2], [3, 4]]; L = W\n:trace\n:svg - --step 0",
    );
    assert!(
        out.contains("(no steps: L is a leaf, no op is between it and itself; its gradient is the seed, ones of its shape)"),
        "{out}"
    );
    assert!(
        out.contains("L: the forward pass; no backward step (the output is a leaf)"),
        "{out}"
    );
    assert!(!out.contains("steps 1 to 0"), "{out}");
}

/// The numbers a `:step` page shows as values: each `= …` of a step (an
/// upstream gradient, what an operand receives) and the rows of a matrix
/// written under it, in order; rules (`+= upstream ⊙ ones(2)`), shapes
/// (`(2)`, `2×3`) and the step's header are not values.
fn shown_values(text: &str) -> Vec<f64> {
    let mut values = Vec::new();
    for line in crate::pty::strip_ansi(text).split(['\r', '\n']) {
        let value = if line.starts_with(' ') && line.trim_start().starts_with('[') {
            line.trim()
        } else if let Some((_, after)) = line.rsplit_once("= ") {
            after.trim()
        } else {
            continue;
        };
        match (value.find('['), value.rfind(']')) {
            (Some(open), Some(close)) => values.extend(
                value[open..=close]
                    .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e'))
                    .filter_map(|word| word.parse::<f64>().ok()),
            ),
            // A number alone (`= 1`); a shape (`= 2×3`) or a rule is not one.
            _ => values.extend(value.parse::<f64>().ok()),
        }
    }
    values
}

/// `:step` pages a tensor layer in the terminal as it pages a number: one
/// step a key, each with the numbers worked out by hand.
///
/// W = [[1, 2, 3], [4, 5, 6]], x = [1, 0, −1], b = [0.5, −0.5]:
/// W @ x = [1 − 3, 4 − 6] = [−2, −2], u = W @ x + b = [−1.5, −2.5];
/// tanh(−1.5) = −0.905148253644866, tanh(−2.5) = −0.986614298151430, so
/// 1 − tanh(u)² = [0.180706638923649, 0.026592226683161] (= du);
/// ∂L/∂W = outer(du, x) = [[du₁, 0, −du₁], [du₂, 0, −du₂]];
/// ∂L/∂x = Wᵀ @ du = [du₁ + 4du₂, 2du₁ + 5du₂, 3du₁ + 6du₂]
///       = [0.287075545656291, 0.494374411263100, 0.701673276869909].
#[test]
fn step_pages_a_tensor_layer_one_step_a_key_with_numbers_by_hand() {
    const D1: f64 = 0.180_706_638_923_649;
    const D2: f64 = 0.026_592_226_683_161;
    let expected: [(&str, Vec<f64>); 4] = [
        ("[1] L (sum)", vec![1.0, 1.0, 1.0]),
        ("[2] tanh(W @ x + b) (tanh)", vec![1.0, 1.0, D1, D2]),
        ("[3] W @ x + b (+)", vec![D1, D2, D1, D2, D1, D2]),
        (
            "[4] W @ x (@)",
            vec![
                D1,
                D2,
                D1,
                0.0,
                -D1,
                D2,
                0.0,
                -D2,
                D1 + 4.0 * D2,
                2.0 * D1 + 5.0 * D2,
                3.0 * D1 + 6.0 * D2,
            ],
        ),
    ];
    let state = tempfile::tempdir().unwrap();
    let mut repl = crate::pty::Repl::start(state.path());
    repl.line(
        "W = [[1, 2, 3], [4, 5, 6]]; x = [1, 0, -1]; b = [0.5, -0.5]; L = sum(tanh(W @ x + b))",
        // L = tanh(−1.5) + tanh(−2.5)
        "L = -1.891762552",
    );
    repl.prompt();
    let mut keys = ":step\r";
    for (k, (header, values)) in expected.iter().enumerate() {
        repl.send(keys);
        let page = repl.expect(&format!("step {}/4", k + 1));
        // This step alone: its header, no other step's.
        assert!(page.contains(header), "step {}: {page}", k + 1);
        for (other, _) in &expected {
            assert!(
                other == header || !page.contains(other),
                "step {}: {page}",
                k + 1
            );
        }
        let shown = shown_values(&page[page.find(header).unwrap()..]);
        assert_eq!(
            shown.len(),
            values.len(),
            "step {}: {shown:?}\n{page}",
            k + 1
        );
        for (got, want) in shown.iter().zip(values) {
            // Printed to 10 significant digits.
            assert!(
                (got - want).abs() <= 1e-9 * want.abs().max(1e-3),
                "step {}: {got} vs {want}",
                k + 1
            );
        }
        keys = "\u{1b}[C";
    }
    // ← goes back a step; → past the last ends the walk.
    repl.send("\u{1b}[D");
    let back = repl.expect("step 3/4");
    assert!(back.contains("[3] W @ x + b (+)"), "{back}");
    repl.send("\u{1b}[C");
    repl.expect("step 4/4");
    repl.send("\u{1b}[C");
    repl.expect("(the backward pass is done: all 4 steps shown; `:step` starts it again)");
    repl.prompt();
    repl.line("x", "[1, 0, -1]");
    repl.leave();
}
