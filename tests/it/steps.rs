//! One step model on every surface: for every example graph, `:trace`'s step
//! K, the slide `:svg DIR --steps` writes for step K and the page's step K
//! (the model `:html` writes) agree on the node, the line and every box's
//! gradient; and every slide of a graph has one canvas size.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::util::{self, run_script_in as run};

/// The neuron of micrograd's lecture.
const NEURON: &str = "x1 = 2; x2 = 0; w1 = -3; w2 = 1; b = 6.8813735870195432
n = x1*w1 + x2*w2 + b; o = tanh(n)";
/// colah's fan-out: b is read twice.
const COLAH: &str = "a = 2; b = 1; c = a + b; d = b + 1; e = c*d";
/// Karpathy's fan-out: a and b are read twice.
const KARPATHY: &str = "a = -2; b = 3; d = a*b; e = a + b; f = d*e";
/// A 2-3-1 MLP over four points, one `net(x1, x2)` call per point, the
/// thirteen parameters read by the body as globals.
pub const MLP4: &str = "w11 = 0.3; w12 = -0.7; b1 = 0.1; w21 = 0.9; w22 = -0.2; b2 = -0.3
w31 = 0.5; w32 = 0.6; b3 = 0.2; v1 = 0.8; v2 = -1.1; v3 = 0.4; c = 0.05
net(x1, x2) = tanh(v1*tanh(w11*x1 + w12*x2 + b1) + v2*tanh(w21*x1 + w22*x2 + b2) + v3*tanh(w31*x1 + w32*x2 + b3) + c)
L = (net(2, 3) - 1)^2 + (net(-1, 0.5) + 1)^2 + (net(0.5, -1) - 1)^2 + (net(1, 1) + 1)^2";

/// `:trace all`'s steps: step K at index K − 1, its lines.
fn trace_blocks(dir: &Path, script: &str, flags: &str) -> Vec<String> {
    let stdout = run(dir, &format!("{script}\n:trace all {flags}"));
    let mut blocks: Vec<String> = Vec::new();
    let mut in_trace = false;
    for line in stdout.lines() {
        if line.starts_with("backward pass from") {
            in_trace = true;
        } else if in_trace && line.starts_with('[') {
            blocks.push(line.to_string());
        } else if in_trace && line.starts_with(' ') {
            let last = blocks.last_mut().expect("a step before its lines");
            last.push('\n');
            last.push_str(line);
        }
    }
    blocks
}

/// A slide or a page's SVG: each value box's name and gradient text (`None`
/// while blank), in the SVG's order; the highlighted box's name; the title;
/// the canvas size.
struct Slide {
    boxes: Vec<(String, Option<String>)>,
    current: Option<String>,
    title: String,
    size: (String, String),
}

fn slide(svg: &str) -> Slide {
    let doc = roxmltree::Document::parse(svg).unwrap();
    let root = doc.root_element();
    let mut slide = Slide {
        boxes: Vec::new(),
        current: None,
        title: String::new(),
        size: (
            root.attribute("width").unwrap().to_string(),
            root.attribute("height").unwrap().to_string(),
        ),
    };
    for node in root.descendants() {
        let class = node.attribute("class").unwrap_or("");
        if node.has_tag_name("text") && class == "title" {
            slide.title = node.text().unwrap_or("").to_string();
        }
        if !(node.has_tag_name("g") && class.starts_with("value")) {
            continue;
        }
        let text = |wanted: &str| {
            node.children()
                .find(|c| c.attribute("class").is_some_and(|k| k.starts_with(wanted)))
                .map(|c| (c.attribute("class").unwrap(), c.text().unwrap_or("")))
                .unwrap()
        };
        let name = text("name").1.to_string();
        let grad = match text("grad") {
            ("grad pending", _) => None,
            (_, shown) => Some(shown.to_string()),
        };
        if class.contains("current") {
            slide.current = Some(name.clone());
        }
        slide.boxes.push((name, grad));
    }
    slide
}

/// The model inside a page `:html` wrote, its picture put back in as the
/// page's script does.
fn page_model(html: &str) -> Value {
    crate::web::page_model(html)
}

/// The page's first view at step `k`, as its script shows it: each box's
/// last mark at or before `k` (blank before the first), and the lit box.
fn page_step(view: &Value, names: &[(String, Option<String>)], k: usize) -> Slide {
    let boxes = view["boxes"].as_array().unwrap();
    let shown = boxes
        .iter()
        .zip(names)
        .map(|(marks, (name, _))| {
            let mark = crate::web::mark_at(marks, k);
            let text = mark.map(|m| format!("grad {}", m["text"].as_str().unwrap()));
            (name.clone(), text)
        })
        .collect();
    let lit = match k {
        0 => None,
        _ => view["lit"][k - 1]
            .as_u64()
            .map(|i| names[i as usize].0.clone()),
    };
    Slide {
        boxes: shown,
        current: lit,
        title: String::new(),
        size: (String::new(), String::new()),
    }
}

/// The node a `:trace` step processes as pictures name it: the name after
/// `[K] `, or for a call shown as one step whose output no variable names
/// (`[3] h2.add = h(2, 3) = 7 … (one call of h …)`), the call as written.
fn step_node(block: &str) -> String {
    let rest = block.split_once("] ").unwrap().1;
    let name = rest.split_whitespace().next().unwrap();
    let first = block.lines().next().unwrap();
    match first.contains("(one call of") && name.contains('.') {
        true => rest.split(" = ").nth(1).unwrap().to_string(),
        false => name.to_string(),
    }
}

/// The label `:trace` gives each node that pictures name otherwise.
fn aliases(blocks: &[String]) -> BTreeMap<String, String> {
    blocks
        .iter()
        .map(|b| {
            let rest = b.split_once("] ").unwrap().1;
            (
                rest.split_whitespace().next().unwrap().to_string(),
                step_node(b),
            )
        })
        .collect()
}

/// Every box's gradient on a slide, by name.
fn by_name(slide: &Slide) -> BTreeMap<String, Option<String>> {
    slide.boxes.iter().cloned().collect()
}

/// Checks that text, slides and page agree on every step of `script`'s
/// output; `flags` go to `:trace` and `:svg` (`--expand`). Returns the
/// number of steps.
fn agree(script: &str, flags: &str, with_page: bool) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let blocks = trace_blocks(dir.path(), script, flags);
    let aliases = aliases(&blocks);
    std::fs::create_dir(dir.path().join("slides")).unwrap();
    run(
        dir.path(),
        &format!("{script}\n:svg slides --steps {flags}"),
    );
    let slides = util::slides_of(&dir.path().join("slides"), blocks.len(), slide);
    // One canvas for every slide.
    for s in &slides {
        assert_eq!(s.size, slides[0].size, "{}", s.title);
    }
    for (k, block) in blocks.iter().enumerate() {
        let k = k + 1;
        let node = step_node(block);
        assert_eq!(
            slides[k].current.as_deref(),
            Some(node.as_str()),
            "step {k}"
        );
        assert!(
            slides[k]
                .title
                .ends_with(&format!("step {k} of {}, {node}", blocks.len()))
        );
        // Every gradient the line sets is on the slide as the line writes it.
        for line in block.lines().skip(1) {
            let Some((input, rest)) = line
                .trim_start()
                .strip_prefix("→ ")
                .and_then(|r| r.split_once(':'))
            else {
                continue;
            };
            let input = aliases.get(input).map_or(input, String::as_str);
            let change = rest
                .split(";  ")
                .find_map(|p| p.strip_prefix("grad "))
                .unwrap();
            let change = change.split("   (").next().unwrap().trim();
            let shown = by_name(&slides[k]);
            let Some(Some(text)) = shown.get(input) else {
                // Every input the line sets is drawn, its gradient shown.
                panic!("step {k}: {input} not shown: {shown:?}");
            };
            let (before, after) = change.split_once(" → ").unwrap();
            let number = |t: &str| t.parse::<f64>().unwrap();
            let (sb, sa) = text
                .strip_prefix("grad ")
                .unwrap()
                .split_once(" → ")
                .unwrap();
            assert!(
                util::close(number(sb), number(before), 1e-3),
                "step {k} {input}: {text} vs {change}"
            );
            assert!(
                util::close(number(sa), number(after), 1e-3),
                "step {k} {input}: {text} vs {change}"
            );
        }
    }
    if with_page {
        let html = run(dir.path(), &format!("{script}\n:html -"));
        let model = page_model(&html);
        let steps = model["steps"].as_array().unwrap();
        assert_eq!(steps.len(), blocks.len());
        for (step, block) in steps.iter().zip(&blocks) {
            assert_eq!(step["text"].as_str().unwrap(), block);
        }
        let view = &model["views"][0];
        let names = slide(view["svg"].as_str().unwrap()).boxes;
        for (k, on_slide) in slides.iter().enumerate() {
            let on_page = page_step(view, &names, k);
            assert_eq!(on_page.current, on_slide.current, "step {k}");
            assert_eq!(by_name(&on_page), by_name(on_slide), "step {k}");
        }
    }
    blocks.len()
}

#[test]
fn the_neuron_agrees_on_every_surface() {
    assert_eq!(agree(NEURON, "", true), 10);
}

#[test]
fn colah_s_fan_out_agrees_on_every_surface() {
    assert_eq!(agree(COLAH, "", true), 5);
}

#[test]
fn karpathy_s_fan_out_agrees_on_every_surface() {
    assert_eq!(agree(KARPATHY, "", true), 5);
}

#[test]
fn the_mlp_example_agrees_on_every_surface() {
    let script = std::fs::read_to_string(util::in_crate("examples/mlp.calc")).unwrap();
    assert_eq!(agree(&script, "", true), 21);
}

#[test]
fn the_four_point_mlp_agrees_on_every_surface() {
    assert_eq!(agree(MLP4, "", true), 28);
}

#[test]
fn an_expanded_graph_agrees_on_every_surface() {
    let script = std::fs::read_to_string(util::in_crate("examples/mlp.calc")).unwrap();
    assert_eq!(agree(&script, "--expand=neuron2", false), 25);
}
