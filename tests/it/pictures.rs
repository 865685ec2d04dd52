//! Pictures for slides through the binary: `:svg` is well-formed XML on a white
//! background, sized for a 1920-pixel slide, with no two boxes overlapping and
//! every value and gradient (computed here independently) in its text;
//! constants are folded into their op's label; graphs of the shapes that used to
//! take exponential time (fan-out 100, a Fibonacci ladder, a residual chain) are
//! laid out quickly; `--before`, `--step K` and `--steps DIR` draw the backward
//! pass as slides numbered like `:trace`, written whole and never replaced
//! without `-f`.

use std::path::Path;

use crate::util::{self, assert_contains, gradcalc_within_cpu, output_in, stderr_of, stdout_of};

/// Runs `script` in `dir`; returns stdout, stderr and the exit status.
fn run(dir: &Path, script: &str) -> (String, String, Option<i32>) {
    let output = output_in(dir, &["-e", script]);
    (stdout_of(&output), stderr_of(&output), output.status.code())
}

/// `script` followed by `:svg pic.svg ARGS`; the SVG text.
fn svg_of(dir: &Path, script: &str, args: &str) -> String {
    let (stdout, stderr, status) = run(dir, &format!("{script}\n:svg -f pic.svg {args}"));
    assert_eq!(status, Some(0), "{stdout}{stderr}");
    std::fs::read_to_string(dir.join("pic.svg")).unwrap()
}

/// `script` then `:dot`, run in `dir`; the DOT it prints, which Graphviz
/// accepts ([`util::graphviz_accepts`]).
fn dot_of(dir: &Path, script: &str) -> String {
    let (stdout, stderr, status) = run(dir, &format!("{script}\n:dot"));
    assert_eq!(status, Some(0), "{stdout}{stderr}");
    let dot = &stdout[stdout.find("digraph").expect("DOT printed")..];
    util::graphviz_accepts(dot, "derivative picture");
    dot.to_string()
}

/// What a picture shows, read back from its SVG.
#[derive(Debug, Default)]
struct Seen {
    width: f64,
    height: f64,
    font: f64,
    white_background: bool,
    /// Every drawn node's box: x, y, width, height.
    boxes: Vec<(f64, f64, f64, f64)>,
    /// Value boxes: name, value, gradient (None when blank), current.
    values: Vec<(String, f64, Option<f64>, bool)>,
    /// Op labels.
    ops: Vec<String>,
    /// Pending gradients with a sum so far: name, text (`grad 2 → 5`).
    partials: Vec<(String, String)>,
}

fn number(attribute: Option<&str>) -> f64 {
    attribute.expect("attribute").parse().expect("a number")
}

fn whole(attribute: Option<&str>) -> f64 {
    let text = attribute.expect("attribute");
    assert!(
        text.chars().all(|c| c.is_ascii_digit()),
        "{text} is not a whole number"
    );
    text.parse().unwrap()
}

fn read(svg: &str) -> Seen {
    let document = roxmltree::Document::parse(svg).expect("well-formed XML");
    let root = document.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    let mut seen = Seen {
        width: whole(root.attribute("width")),
        height: whole(root.attribute("height")),
        font: number(root.attribute("font-size")),
        ..Seen::default()
    };
    assert_eq!(
        root.attribute("viewBox"),
        Some(format!("0 0 {} {}", seen.width, seen.height).as_str())
    );
    for node in root.descendants().filter(|n| n.is_element()) {
        let class = node.attribute("class").unwrap_or("");
        match (node.tag_name().name(), class) {
            ("rect", "background") => {
                seen.white_background = node.attribute("fill") == Some("white")
                    && number(node.attribute("x")) == 0.0
                    && number(node.attribute("y")) == 0.0
                    && number(node.attribute("width")) == seen.width
                    && number(node.attribute("height")) == seen.height;
            }
            ("g", "op") => {
                let ellipse = node.children().find(|c| c.has_tag_name("ellipse")).unwrap();
                let (cx, cy) = (
                    number(ellipse.attribute("cx")),
                    number(ellipse.attribute("cy")),
                );
                let (rx, ry) = (
                    number(ellipse.attribute("rx")),
                    number(ellipse.attribute("ry")),
                );
                seen.boxes.push((cx - rx, cy - ry, 2.0 * rx, 2.0 * ry));
                let text = node.children().find(|c| c.has_tag_name("text")).unwrap();
                seen.ops.push(text.text().unwrap_or("").to_string());
            }
            ("g", class) if class == "ghost" || class.starts_with("value") => {
                let rect = node.children().find(|c| c.has_tag_name("rect")).unwrap();
                seen.boxes.push((
                    whole(rect.attribute("x")),
                    whole(rect.attribute("y")),
                    whole(rect.attribute("width")),
                    whole(rect.attribute("height")),
                ));
                if class == "ghost" {
                    continue;
                }
                let text = |wanted: &str| {
                    node.children()
                        .find(|c| c.attribute("class").is_some_and(|k| k.starts_with(wanted)))
                        .map(|c| (c.attribute("class").unwrap(), c.text().unwrap_or("")))
                        .expect("a text of the box")
                };
                let name = text("name").1.to_string();
                let value = text("data")
                    .1
                    .strip_prefix("value ")
                    .unwrap()
                    .parse()
                    .unwrap();
                let (grad_class, grad_text) = text("grad");
                let grad = match grad_class {
                    "grad pending" => {
                        assert_eq!(grad_text, "grad");
                        None
                    }
                    // A fan-out's sum so far: not its gradient yet.
                    "grad partial" => {
                        seen.partials.push((name.clone(), grad_text.to_string()));
                        None
                    }
                    // Final; `grad 0 → 2` at the step that made it so.
                    _ => {
                        let shown = grad_text.strip_prefix("grad ").unwrap();
                        let after = shown.rsplit(" → ").next().unwrap();
                        Some(after.parse().unwrap())
                    }
                };
                seen.values
                    .push((name, value, grad, class.contains("current")));
            }
            _ => {}
        }
    }
    seen
}

/// No two drawn nodes overlap.
fn assert_no_overlap(seen: &Seen) {
    let b = &seen.boxes;
    for i in 0..b.len() {
        for j in i + 1..b.len() {
            let apart = b[i].0 + b[i].2 <= b[j].0
                || b[j].0 + b[j].2 <= b[i].0
                || b[i].1 + b[i].3 <= b[j].1
                || b[j].1 + b[j].3 <= b[i].1;
            assert!(apart, "boxes {:?} and {:?} overlap", b[i], b[j]);
        }
    }
}

/// Close at the 4 significant digits a picture shows (and within 5e-7 of a
/// value near 0).
fn close(shown: f64, exact: f64) -> bool {
    util::close(shown, exact, 5e-4) || (shown - exact).abs() <= 5e-7
}

const NEURON: &str = "x1 = 2; x2 = 0; w1 = -3; w2 = 1; b = 6.8813735870195432
n = x1*w1 + x2*w2 + b; o = tanh(n)";

/// The neuron's 10 nodes as (value, gradient), computed here: o = tanh(n),
/// ∂o/∂n = 1 − o², and the products' inputs swap their values.
fn neuron_expected() -> Vec<(&'static str, f64, f64)> {
    let (x1, x2, w1, w2, b) = (2.0, 0.0, -3.0, 1.0, 6.881_373_587_019_543_f64);
    let n = x1 * w1 + x2 * w2 + b;
    let o = n.tanh();
    let dn = 1.0 - o * o;
    vec![
        ("o", o, 1.0),
        ("n", n, dn),
        ("b", b, dn),
        ("_7", x1 * w1 + x2 * w2, dn),
        ("_6", x2 * w2, dn),
        ("_5", x1 * w1, dn),
        ("x1", x1, w1 * dn),
        ("w1", w1, x1 * dn),
        ("x2", x2, w2 * dn),
        ("w2", w2, x2 * dn),
    ]
}

#[test]
fn the_neuron_on_a_slide_shows_every_value_and_gradient() {
    let dir = tempfile::tempdir().unwrap();
    let seen = read(&svg_of(dir.path(), NEURON, ""));
    assert!(seen.white_background, "a white background rectangle");
    assert!(seen.font >= 18.0 && seen.width <= 1920.0, "{seen:?}");
    assert_no_overlap(&seen);
    // A tight canvas: the drawing reaches within 40 px of every side.
    let left = seen.boxes.iter().map(|b| b.0).fold(f64::MAX, f64::min);
    let top = seen.boxes.iter().map(|b| b.1).fold(f64::MAX, f64::min);
    let right = seen.boxes.iter().map(|b| b.0 + b.2).fold(0.0, f64::max);
    let bottom = seen.boxes.iter().map(|b| b.1 + b.3).fold(0.0, f64::max);
    assert!(left <= 40.0 && top <= 40.0, "{left} {top}");
    assert!(right >= seen.width - 40.0 && bottom >= seen.height - 40.0);
    let expected = neuron_expected();
    assert_eq!(seen.values.len(), expected.len());
    for (name, value, grad) in expected {
        let (_, v, g, current) = seen
            .values
            .iter()
            .find(|v| v.0 == name)
            .unwrap_or_else(|| panic!("{name} drawn"));
        assert!(close(*v, value), "{name}: value {v} vs {value}");
        assert!(close(g.unwrap(), grad), "{name}: grad {g:?} vs {grad}");
        assert!(!current);
    }
    assert_eq!(seen.ops.iter().filter(|o| *o == "×").count(), 2);
    assert_eq!(seen.ops.iter().filter(|o| *o == "+").count(), 2);
    assert_eq!(seen.ops.iter().filter(|o| *o == "tanh").count(), 1);
}

#[test]
fn a_two_unit_mlp_fits_a_slide() {
    let dir = tempfile::tempdir().unwrap();
    let script = "x1 = 2; x2 = -1; w11 = 0.5; w12 = -0.3; w21 = 0.8; w22 = 0.1; b1 = 0.1; b2 = -0.2
v1 = 1.2; v2 = -0.7; c = 0.05
h1 = tanh(w11*x1 + w12*x2 + b1); h2 = tanh(w21*x1 + w22*x2 + b2)
y = tanh(v1*h1 + v2*h2 + c); loss = (y - 1)^2";
    let seen = read(&svg_of(dir.path(), script, ""));
    assert!(seen.white_background && seen.font >= 18.0 && seen.width <= 1920.0);
    assert_no_overlap(&seen);
    // Independent forward and backward pass.
    let (x1, x2) = (2.0f64, -1.0f64);
    let h1 = (0.5 * x1 - 0.3 * x2 + 0.1f64).tanh();
    let h2 = (0.8 * x1 + 0.1 * x2 - 0.2f64).tanh();
    let y = (1.2 * h1 - 0.7 * h2 + 0.05f64).tanh();
    let loss = (y - 1.0).powi(2);
    let dy = 2.0 * (y - 1.0);
    let dz = dy * (1.0 - y * y);
    let dh1 = dz * 1.2;
    let dh2 = dz * -0.7;
    let dx1 = dh1 * (1.0 - h1 * h1) * 0.5 + dh2 * (1.0 - h2 * h2) * 0.8;
    for (name, value, grad) in [
        ("loss", loss, 1.0),
        ("y", y, dy),
        ("h1", h1, dh1),
        ("h2", h2, dh2),
        ("x1", x1, dx1),
        ("c", 0.05, dz),
    ] {
        let (_, v, g, _) = seen.values.iter().find(|v| v.0 == name).unwrap();
        assert!(close(*v, value) && close(g.unwrap(), grad), "{name}");
    }
    // The constants 1 and 2 of (y - 1)^2 are folded into their ops.
    assert!(seen.ops.contains(&"- 1".to_string()), "{:?}", seen.ops);
    assert!(seen.ops.contains(&"^ 2".to_string()), "{:?}", seen.ops);
    assert!(
        seen.values
            .iter()
            .all(|v| !v.0.starts_with(|c: char| c.is_ascii_digit()))
    );
}

#[test]
fn constants_are_folded_into_their_ops_in_svg_and_dot() {
    let dir = tempfile::tempdir().unwrap();
    let seen = read(&svg_of(dir.path(), "x = 3; y = 2*x + 1", ""));
    let names: Vec<&str> = seen.values.iter().map(|v| v.0.as_str()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names.contains(&"x") && names.contains(&"y"));
    let mut ops = seen.ops.clone();
    ops.sort();
    assert_eq!(ops, vec!["+ 1", "2 ×"]);
    let (stdout, _, status) = run(dir.path(), "x = 3; y = 2*x + 1; :dot");
    assert_eq!(status, Some(0));
    assert!(stdout.contains("label=\"2 ×\"") && stdout.contains("label=\"+ 1\""));
    assert!(!stdout.contains("value 2 |") && !stdout.contains("value 1 |"));
}

/// Laid out within 20 s of CPU time, far under what the old layout needed
/// (it doubled per layer of the residual chain and never finished fan-out 100).
fn assert_quick(dir: &Path, script: &str) -> Seen {
    let output = gradcalc_within_cpu(20)
        .current_dir(dir)
        .args(["-e", &format!("{script}\n:svg -f pic.svg")])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let svg = std::fs::read_to_string(dir.join("pic.svg")).unwrap();
    let seen = read(&svg);
    assert!(seen.white_background);
    assert_no_overlap(&seen);
    seen
}

#[test]
fn fan_out_ladder_and_residual_chain_are_laid_out_quickly() {
    let dir = tempfile::tempdir().unwrap();
    // One variable read by 100 products.
    let mut fan = String::from("x = 0.3; s = x");
    for k in 1..=100 {
        fan.push_str(&format!("\ns = s + x*{}", k % 7 + 1));
    }
    let seen = assert_quick(dir.path(), &fan);
    // x's gradient: 1 for `s = x` plus the sum of the factors.
    let factors: f64 = (1..=100).map(|k| (k % 7 + 1) as f64).sum();
    let x = seen.values.iter().find(|v| v.0 == "x").unwrap();
    assert!(close(x.2.unwrap(), 1.0 + factors), "{x:?}");
    // A Fibonacci ladder of 60 rungs: a gradient is a Fibonacci number.
    let mut ladder = String::from("a0 = 1; a1 = 1");
    for i in 2..=60 {
        ladder.push_str(&format!("\na{i} = a{} + a{}", i - 1, i - 2));
    }
    let seen = assert_quick(dir.path(), &ladder);
    let fib = |n: usize| (0..n).fold((0.0f64, 1.0f64), |(a, b), _| (b, a + b)).0;
    let a0 = seen.values.iter().find(|v| v.0 == "a0").unwrap();
    // ∂a60/∂a0 = F(59), ∂a60/∂a1 = F(60); a60 itself is F(61).
    assert!(close(a0.2.unwrap(), fib(59)), "{a0:?}");
    let a60 = seen.values.iter().find(|v| v.0 == "a60").unwrap();
    assert!(close(a60.1, fib(61)));
    // A residual chain of depth 30.
    let mut chain = String::from("w = 0.5; h0 = 1");
    for i in 1..=30 {
        chain.push_str(&format!("\nh{i} = h{} + tanh(w*h{})", i - 1, i - 1));
    }
    let seen = assert_quick(dir.path(), &chain);
    let mut h = 1.0f64;
    for _ in 0..30 {
        h += (0.5 * h).tanh();
    }
    let h30 = seen.values.iter().find(|v| v.0 == "h30").unwrap();
    assert!(close(h30.1, h));
}

/// For each step of `:trace`, the names whose gradient is shown after it:
/// the nodes processed so far and the inputs they added to (no fan-out here).
fn trace_filled(dir: &Path, script: &str) -> Vec<Vec<String>> {
    let (stdout, _, _) = run(dir, &format!("{script}\n:trace all"));
    let mut filled: Vec<Vec<String>> = Vec::new();
    for line in stdout.lines() {
        let named = if let Some(rest) = line.strip_prefix('[') {
            let mut so_far = filled.last().cloned().unwrap_or_default();
            let name = rest.split_once("] ").unwrap().1.split_whitespace().next();
            so_far.push(name.unwrap().to_string());
            filled.push(so_far);
            continue;
        } else {
            line.trim_start()
                .strip_prefix("→ ")
                .and_then(|r| r.split_once(':'))
        };
        if let (Some((name, _)), Some(last)) = (named, filled.last_mut()) {
            last.push(name.to_string());
        }
    }
    for names in &mut filled {
        names.sort();
        names.dedup();
    }
    filled
}

/// The `:trace` step numbers and the node each one processes, from the trace text.
fn trace_steps(dir: &Path, script: &str) -> Vec<(usize, String)> {
    let (stdout, _, _) = run(dir, &format!("{script}\n:trace all"));
    stdout
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix('[')?;
            let (number, rest) = rest.split_once("] ")?;
            let name = rest.split_whitespace().next()?;
            Some((number.parse().ok()?, name.to_string()))
        })
        .collect()
}

#[test]
fn steps_fill_gradients_one_node_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let before = read(&svg_of(dir.path(), NEURON, "--before"));
    assert_eq!(before.values.len(), 10);
    assert!(before.values.iter().all(|v| v.2.is_none() && !v.3));
    let steps = trace_steps(dir.path(), NEURON);
    assert_eq!(steps.len(), 10);
    let expected = neuron_expected();
    let shown = trace_filled(dir.path(), NEURON);
    for (k, name) in &steps {
        let seen = read(&svg_of(dir.path(), NEURON, &format!("--step {k}")));
        let filled: Vec<_> = seen.values.iter().filter(|v| v.2.is_some()).collect();
        // The nodes processed so far and the inputs they added to, as `:trace`
        // shows them.
        let mut names: Vec<String> = filled.iter().map(|v| v.0.clone()).collect();
        names.sort();
        assert_eq!(names, shown[k - 1], "step {k}");
        let current: Vec<_> = seen.values.iter().filter(|v| v.3).collect();
        assert_eq!(current.len(), 1);
        assert_eq!(&current[0].0, name, "step {k} processes {name}");
        assert!(current[0].2.is_some());
        for v in filled {
            let (_, _, grad) = expected.iter().find(|e| e.0 == v.0).unwrap();
            assert!(close(v.2.unwrap(), *grad));
        }
        // The same layout on every slide: the boxes do not move.
        assert_eq!(seen.boxes, before.boxes);
    }
}

#[test]
fn steps_write_one_file_per_step_numbered_like_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("slides")).unwrap();
    // With constants: the trace gives them no step (y, 2*x, x are steps 1 to
    // 3; the constants 2 and 1 are counted apart), and the files number the
    // same steps with no gaps.
    let script = "x = 3; y = 2*x + 1";
    let steps = trace_steps(dir.path(), script);
    let numbers: Vec<usize> = steps.iter().map(|s| s.0).collect();
    assert_eq!(numbers, vec![1, 2, 3]);
    let (stdout, _, _) = run(dir.path(), &format!("{script}\n:trace"));
    assert_contains(&stdout, "3 nodes");
    assert_contains(&stdout, "2 constants");
    let (stdout, stderr, status) = run(dir.path(), &format!("{script}\n:svg slides --steps"));
    assert_eq!(status, Some(0), "{stdout}{stderr}");
    assert_eq!(
        crate::util::file_names(&dir.path().join("slides")),
        [
            "step-000.svg",
            "step-001.svg",
            "step-002.svg",
            "step-003.svg"
        ]
    );
    assert_eq!(stdout.matches("wrote the graph as SVG").count(), 4);
    // Step 1 processes y and adds to 2*x (its one use: final), step 2 adds to x.
    for (done, filled, file) in [
        (0, 0, "step-000"),
        (1, 2, "step-001"),
        (2, 3, "step-002"),
        (3, 3, "step-003"),
    ] {
        let svg = std::fs::read_to_string(dir.path().join(format!("slides/{file}.svg"))).unwrap();
        let seen = read(&svg);
        assert_eq!(seen.values.iter().filter(|v| v.2.is_some()).count(), filled);
        assert_eq!(seen.values.iter().filter(|v| v.3).count(), done.min(1));
        // File K shows the node of the trace's step K, and the gradients done
        // so far: ∂y/∂y = 1, ∂y/∂(2*x) = 1, ∂y/∂x = 2.
        if done > 0 {
            let current = seen.values.iter().find(|v| v.3).unwrap();
            assert_eq!(current.0, steps[done - 1].1, "{file}");
        }
        for (name, grad) in [("y", 1.0), ("_2", 1.0), ("x", 2.0)] {
            let value = seen.values.iter().find(|v| v.0 == name).unwrap();
            if let Some(shown) = value.2 {
                assert!(close(shown, grad), "{file}: {name} {shown}");
            }
        }
    }
    // Again without -f: the first file is refused, the others are not tried,
    // and all are left as they were.
    let old = std::fs::read_to_string(dir.path().join("slides/step-001.svg")).unwrap();
    let (_, stderr, status) = run(dir.path(), "x = 5; y = 2*x + 1\n:svg slides --steps");
    assert_eq!(status, Some(1));
    assert_contains(&stderr, "step-000.svg: it already exists");
    assert_contains(&stderr, "3 more pictures of the steps not written");
    assert_eq!(stderr.matches("error:").count(), 2, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("slides/step-001.svg")).unwrap(),
        old
    );
    // With -f they are replaced; DOT takes the same flags.
    let (stdout, stderr, status) = run(
        dir.path(),
        "x = 5; y = 2*x + 1\n:svg -f slides --steps\n:dot slides --steps",
    );
    assert_eq!(status, Some(0), "{stdout}{stderr}");
    assert_ne!(
        std::fs::read_to_string(dir.path().join("slides/step-001.svg")).unwrap(),
        old
    );
    assert!(dir.path().join("slides/step-003.dot").exists());
    assert_eq!(
        std::fs::read_dir(dir.path().join("slides"))
            .unwrap()
            .count(),
        8
    );
}

#[test]
fn dot_steps_blank_pending_gradients_and_mark_the_current_node() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, _, status) = run(dir.path(), &format!("{NEURON}\n:dot --step 2"));
    assert_eq!(status, Some(0));
    // Step 2 processes n: o, n and n's two inputs have gradients, six are blank.
    assert_eq!(stdout.matches("| grad }").count(), 6, "{stdout}");
    assert_eq!(stdout.matches("penwidth=3").count(), 1);
    assert!(stdout.contains("n8 [label=\"{ n | value 0.8814 | grad 0.5 }\", style=filled"));
    assert!(stdout.contains("step 2 of 10"));
}

#[test]
fn bad_picture_flags_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    for (command, message) in [
        (":svg a.svg --step 11", "has steps 1 to 10"),
        (":svg a.svg --step", "`--step` takes a number"),
        (":svg a.svg --step x", "`--step` takes a step number"),
        (
            ":svg a.svg --steps --before",
            "`--steps` and `--before` cannot go together: give one of them",
        ),
        (
            ":svg a.svg --lr --tb",
            "`--lr` and `--tb` cannot go together: give one of them",
        ),
        (":svg a.svg --step 2 --before", "at most one of"),
        (":dot --steps", "takes a directory"),
        (":svg a.svg --sideways", "not `--sideways`"),
        (":svg --before", "`:svg` takes one file name"),
        (":svg - --steps", "give a directory, not `-`"),
    ] {
        let (_, stderr, status) = run(dir.path(), &format!("{NEURON}\n{command}"));
        assert_eq!(status, Some(1), "{command}");
        assert!(stderr.contains(message), "{command}: {stderr}");
        assert!(!stderr.contains("panicked"));
    }
    // Constants have no step: y = 2*x + 1 has steps 1 to 3, as `:trace` shows.
    let (_, stderr, status) = run(dir.path(), "x = 3; y = 2*x + 1\n:svg a.svg --step 4");
    assert_eq!(status, Some(1));
    assert_contains(&stderr, "has steps 1 to 3");
    assert!(!dir.path().join("a.svg").exists());
    // --steps into a missing directory: one error for the first file, one for the rest.
    let (_, stderr, status) = run(dir.path(), &format!("{NEURON}\n:svg nowhere --steps"));
    assert_eq!(status, Some(1));
    assert_contains(&stderr, "directory `nowhere` does not exist");
    assert_contains(&stderr, "10 more pictures of the steps not written");
    assert!(!dir.path().join("nowhere").exists());
}

/// The clusters of a DOT text: each one's label and the value records
/// (`nK [label="{ name | value V | … }"]`) declared inside it, as (name,
/// value), plus the op nodes (`nKop`) inside it; and the records outside any
/// cluster.
type Records = Vec<(String, String)>;
fn clusters_of(dot: &str) -> (Vec<(String, Records, usize)>, Records) {
    let mut clusters = Vec::new();
    let mut outside = Vec::new();
    let mut current: Option<(String, Records, usize)> = None;
    for line in dot.lines().map(str::trim) {
        if line.starts_with("subgraph cluster_") {
            current = Some((String::new(), Vec::new(), 0));
        } else if line == "}" && current.is_some() {
            clusters.push(current.take().unwrap());
        } else if let Some(rest) = line.strip_prefix("label=\"") {
            if let Some(c) = current.as_mut() {
                c.0 = rest[..rest.find('"').unwrap()].to_string();
            }
        } else if line.starts_with('n') && line.contains(" [label=\"{ ") {
            let fields: Vec<&str> = line[line.find("{ ").unwrap() + 2..].split(" | ").collect();
            let record = (
                fields[0].to_string(),
                fields[1].trim_start_matches("value ").to_string(),
            );
            match current.as_mut() {
                Some(c) => c.1.push(record),
                None => outside.push(record),
            }
        } else if line.starts_with('n')
            && line.contains("op [label=")
            && let Some(c) = current.as_mut()
        {
            c.2 += 1;
        }
    }
    (clusters, outside)
}

/// `x = 3; y = x^3; g = grad(y, x)`: by hand, the backward pass of y = x^3
/// builds 3·x^2 as two ops, x^2 (value 9) and 3·(x^2) (value 27), the
/// constants 3 and 2 folded into their op labels; so the derivative cluster
/// holds exactly those two records and their two op nodes.
#[test]
fn dot_draws_a_derivative_graph_as_a_labelled_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let dot = &dot_of(dir.path(), "x = 3; y = x^3; g = grad(y, x); h = y + g");
    let (clusters, mut outside) = clusters_of(dot);
    assert_eq!(clusters.len(), 1, "{dot}");
    let (label, mut records, ops) = clusters[0].clone();
    assert_eq!(label, "grad(y, x)");
    records.sort();
    assert_eq!(
        records,
        [
            ("_6".to_string(), "9".to_string()),
            ("g".into(), "27".into())
        ]
    );
    assert_eq!(ops, 2);
    // h = y + g = 27 + 27, y and the leaf x outside the cluster.
    outside.sort();
    assert_eq!(
        outside,
        [
            ("h".to_string(), "54".to_string()),
            ("x".into(), "3".into()),
            ("y".into(), "27".into())
        ]
    );
}

/// `:dot` of a derivative itself: g = 3·x^2 does not read y's node, so y's
/// forward pass (y = x^3 = 27, one record and its op) is drawn beside it in
/// its own cluster, with its gradient blank (it is not part of g's graph).
#[test]
fn dot_of_a_derivative_draws_the_forward_pass_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let dot = &dot_of(dir.path(), "x = 3; y = x^3; g = grad(y, x)\n:backward g");
    let (clusters, outside) = clusters_of(dot);
    let labels: Vec<&str> = clusters.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(labels, ["grad(y, x)", "forward pass of y"], "{dot}");
    assert_eq!((clusters[0].1.len(), clusters[0].2), (2, 2));
    assert_eq!(clusters[1].1, [("y".to_string(), "27".to_string())]);
    assert_eq!(clusters[1].2, 1);
    assert_contains(dot, "{ y | value 27 | grad }");
    // x: ∂g/∂x = 6x = 18.
    assert_eq!(outside, [("x".to_string(), "3".to_string())]);
    assert_contains(dot, "{ x | value 3 | grad 18 }");
}

/// `:svg` fills the derivative graph's nodes (the two of the test above)
/// and adds a legend line naming it; a graph without derivatives has none.
#[test]
fn svg_fills_derivative_nodes_and_names_them_in_a_legend() {
    let dir = tempfile::tempdir().unwrap();
    let svg = svg_of(dir.path(), "x = 3; y = x^3; g = grad(y, x); h = y + g", "");
    assert_eq!(svg.matches("class=\"value grouped\"").count(), 2, "{svg}");
    assert_eq!(svg.matches("class=\"legend\"").count(), 1);
    assert!(svg.contains("grad(y, x): the backward pass recorded as nodes"));
    let plain = svg_of(dir.path(), "x = 3; y = x^3", "");
    assert!(!plain.contains("grouped") && !plain.contains("legend"));
}

/// A text's estimated box, with the width estimate the layout uses scaled to
/// its font size: ascent 0.75 em above the baseline, descent 0.25 em below.
fn text_box(node: roxmltree::Node, root_font: f64) -> (f64, f64, f64, f64) {
    let size = node
        .attribute("font-size")
        .map_or(root_font, |s| s.parse().unwrap());
    let bold = node.attribute("font-weight") == Some("bold");
    let text: String = node
        .descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect();
    let width = gradcalc::render::svg::text_width(&text, bold) * size / 18.0;
    let (x, y) = (number(node.attribute("x")), number(node.attribute("y")));
    let left = match node.attribute("text-anchor") {
        Some("middle") => x - width / 2.0,
        Some("end") => x - width,
        _ => x,
    };
    (left, y - 0.75 * size, width, size)
}

/// What a box is (its texts) and the box: x, y, width, height.
type Labelled = (String, (f64, f64, f64, f64));

/// The smallest box holding both.
fn union(a: (f64, f64, f64, f64), b: (f64, f64, f64, f64)) -> (f64, f64, f64, f64) {
    let (x0, y0) = (a.0.min(b.0), a.1.min(b.1));
    let (x1, y1) = ((a.0 + a.2).max(b.0 + b.2), (a.1 + a.3).max(b.1 + b.3));
    (x0, y0, x1 - x0, y1 - y0)
}

/// An SVG root's font size and its canvas (width, height).
fn font_and_canvas(root: roxmltree::Node) -> (f64, (f64, f64)) {
    let canvas = (
        number(root.attribute("width")),
        number(root.attribute("height")),
    );
    (number(root.attribute("font-size")), canvas)
}

/// Every piece of text of a graph picture with what it is drawn on: a node
/// (its shape and its texts), an edge label (its white backing and its text),
/// the title, a legend line. Each is (what, box).
fn text_items(svg: &str) -> (Vec<Labelled>, (f64, f64)) {
    let document = roxmltree::Document::parse(svg).expect("well-formed XML");
    let root = document.root_element();
    let (font, canvas) = font_and_canvas(root);
    let mut items = Vec::new();
    let mut backing: Option<(f64, f64, f64, f64)> = None;
    let rect_box = |n: roxmltree::Node| {
        (
            number(n.attribute("x")),
            number(n.attribute("y")),
            number(n.attribute("width")),
            number(n.attribute("height")),
        )
    };
    for node in root.children().filter(|n| n.is_element()) {
        let class = node.attribute("class").unwrap_or("");
        match node.tag_name().name() {
            "g" => {
                let mut shape: Option<(f64, f64, f64, f64)> = None;
                let mut label = String::new();
                for part in node.children().filter(|n| n.is_element()) {
                    let b = match part.tag_name().name() {
                        "rect" => rect_box(part),
                        "ellipse" => {
                            let (cx, cy) =
                                (number(part.attribute("cx")), number(part.attribute("cy")));
                            let (rx, ry) =
                                (number(part.attribute("rx")), number(part.attribute("ry")));
                            (cx - rx, cy - ry, 2.0 * rx, 2.0 * ry)
                        }
                        "text" => {
                            label.push_str(part.text().unwrap_or(""));
                            label.push(' ');
                            text_box(part, font)
                        }
                        _ => continue,
                    };
                    shape = Some(shape.map_or(b, |s| union(s, b)));
                }
                items.push((format!("{class} {label}"), shape.expect("a drawn group")));
            }
            "rect" if class != "background" => backing = Some(rect_box(node)),
            "text" => {
                let b = text_box(node, font);
                let what = format!("{class} {}", node.text().unwrap_or(""));
                match backing.take() {
                    Some(r) if class == "local" => items.push((what, union(r, b))),
                    _ => items.push((what, b)),
                }
            }
            _ => {}
        }
    }
    (items, canvas)
}

/// No two pieces of text of a graph picture overlap or touch (2 px apart at
/// least), and each lies inside the canvas.
fn assert_texts_apart(svg: &str, what: &str) {
    let (items, canvas) = text_items(svg);
    assert!(!items.is_empty(), "{what}: nothing drawn");
    assert_apart_inside(&items, canvas, 2.0, what);
}

/// Each of `items` lies inside the `canvas` (width, height), and no two come
/// closer than `gap` (0: they may touch, not overlap).
fn assert_apart_inside(items: &[Labelled], (width, height): (f64, f64), gap: f64, what: &str) {
    for (name, b) in items {
        assert!(
            b.0 >= 0.0 && b.1 >= 0.0 && b.0 + b.2 <= width && b.1 + b.3 <= height,
            "{what}: {name:?} at {b:?} leaves the {width}×{height} canvas"
        );
    }
    for i in 0..items.len() {
        for j in i + 1..items.len() {
            let (a, b) = (items[i].1, items[j].1);
            let apart = a.0 + a.2 + gap <= b.0
                || b.0 + b.2 + gap <= a.0
                || a.1 + a.3 + gap <= b.1
                || b.1 + b.3 + gap <= a.1;
            assert!(
                apart,
                "{what}: {:?} at {a:?} and {:?} at {b:?} overlap",
                items[i].0, items[j].0
            );
        }
    }
}

/// The 2-3-1 tanh network with a squared loss of the bug report.
const MLP_231: &str = "x1 = 0.5; x2 = -1.2
w11 = 0.3; w12 = -0.7; b1 = 0.1
w21 = 0.9; w22 = -0.2; b2 = -0.3
w31 = 0.5; w32 = 0.6; b3 = 0.2
h1 = tanh(x1*w11 + x2*w12 + b1)
h2 = tanh(x1*w21 + x2*w22 + b2)
h3 = tanh(x1*w31 + x2*w32 + b3)
v1 = 0.8; v2 = -1.1; v3 = 0.4; c = 0.05
o = tanh(h1*v1 + h2*v2 + h3*v3 + c)
t = 1
L = (o - t)^2";

#[test]
fn no_two_texts_of_a_picture_overlap() {
    let dir = tempfile::tempdir().unwrap();
    let svg = svg_of(dir.path(), MLP_231, "");
    assert_texts_apart(&svg, "the 2-3-1 MLP");
    // The local derivatives of the first layer are all drawn: ∂(x·w)/∂x = w.
    for w in ["0.3", "-0.7", "0.9", "-0.2", "0.5", "0.6", "-1.2"] {
        assert!(svg.contains(&format!("fill=\"#5c5c5c\">{w}</text>")), "{w}");
    }
    for step in ["--before", "--step 1", "--step 9", "--step 20"] {
        let svg = svg_of(dir.path(), MLP_231, step);
        assert_texts_apart(&svg, &format!("the MLP, {step}"));
    }
    for example in ["neuron", "circuit", "paths"] {
        let script =
            std::fs::read_to_string(util::in_crate(&format!("examples/{example}.calc"))).unwrap();
        let svg = svg_of(dir.path(), &script, "");
        assert_texts_apart(&svg, example);
    }
    assert_texts_apart(
        &svg_of(dir.path(), "x = 3; y = x^3; g = grad(y, x); h = y + g", ""),
        "a derivative graph with a legend",
    );
}

/// Small random graphs with fan-out (each value read by up to four later
/// ones), from a fixed seed: no two texts overlap in any of them.
#[test]
fn no_two_texts_overlap_in_random_graphs() {
    let dir = tempfile::tempdir().unwrap();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    for graph in 0..16 {
        let leaves = 2 + next(4) as usize;
        let mut script = String::new();
        let mut names: Vec<String> = Vec::new();
        for i in 0..leaves {
            let value = next(41) as f64 / 10.0 - 2.0;
            script.push_str(&format!("a{i} = {value:.1}\n"));
            names.push(format!("a{i}"));
        }
        for k in 0..4 + next(8) as usize {
            let p = &names[next(names.len() as u64) as usize];
            let q = &names[next(names.len() as u64) as usize];
            let c = next(9) as f64 / 4.0 + 0.5;
            let body = match next(7) {
                0 => format!("{p} + {q}"),
                1 => format!("{p} * {q}"),
                2 => format!("tanh({p}) - {q}"),
                3 => format!("{c}*{p} + {q}*{q}"),
                4 => format!("sin({p}*{q})"),
                5 => format!("({p} - {c})^2"),
                _ => format!("{p}*{c} + {q}*{p}"),
            };
            script.push_str(&format!("v{k} = {body}\n"));
            names.push(format!("v{k}"));
        }
        // The output reads every value, so the whole graph is drawn.
        script.push_str(&format!("out = {}", names.join(" + ")));
        let svg = svg_of(dir.path(), &script, "");
        assert_texts_apart(&svg, &format!("random graph {graph}:\n{script}\n"));
    }
}

/// Every text of a chart (`:plot`, `:repeat … FILE.svg`) with its estimated box.
fn chart_texts(svg: &str) -> (Vec<Labelled>, (f64, f64)) {
    let document = roxmltree::Document::parse(svg).expect("well-formed XML");
    let root = document.root_element();
    let (font, canvas) = font_and_canvas(root);
    let texts = root
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| (n.text().unwrap_or("").to_string(), text_box(n, font)))
        .collect();
    (texts, canvas)
}

/// `script` then `command` (which writes `name`); the file's text.
fn chart_of(dir: &Path, script: &str, command: &str, name: &str) -> String {
    let (stdout, stderr, status) = run(dir, &format!("{script}\n{command}"));
    assert_eq!(status, Some(0), "{stdout}{stderr}");
    std::fs::read_to_string(dir.join(name)).unwrap()
}

#[test]
fn chart_texts_stay_inside_the_canvas_and_apart() {
    let dir = tempfile::tempdir().unwrap();
    let charts = [
        // The marker at the right end: step = 20 at x = 700 of 720.
        (
            "w = 0; L = (w-3)^2",
            ":repeat 20 -f rep.svg w := w - 0.1*grad(L, w)",
            "rep.svg",
        ),
        (
            "w = 0; L = (w-3)^2",
            ":repeat 2 -f rep.svg w := w + 1",
            "rep.svg",
        ),
        // The marker at either end of a plot, and in the middle.
        ("x = 1; y = x^2", ":plot x 1 2 -f p.svg", "p.svg"),
        ("x = 2; y = x^2", ":plot x 1 2 -f p.svg", "p.svg"),
        (
            "x = -123.456; y = x^3",
            ":plot x -123.456 100000.5 -f p.svg",
            "p.svg",
        ),
        ("x = 0.5; y = tanh(x)", ":plot x -3 3 -f p.svg", "p.svg"),
    ];
    for (script, command, name) in charts {
        let svg = chart_of(dir.path(), script, command, name);
        let (texts, canvas) = chart_texts(&svg);
        assert!(texts.len() >= 5, "{command}: {texts:?}");
        assert_apart_inside(&texts, canvas, 0.0, command);
    }
}

/// examples/mlp.calc, a 2-3-1 tanh MLP written with `neuron(…)` calls: each
/// call drawn as one box, the picture fits a 1920×1080 slide at 18 px text,
/// and each box's value and gradient are those computed here independently.
#[test]
fn the_mlp_of_examples_fits_a_slide_with_a_box_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let script = std::fs::read_to_string(util::in_crate("examples/mlp.calc")).unwrap();
    let seen = read(&svg_of(dir.path(), &script, ""));
    assert!(seen.width <= 1920.0 && seen.height <= 1080.0, "{seen:?}");
    assert!(seen.font >= 18.0 && seen.white_background);
    // 1475×1032 px at 18 px: shown whole on the slide, 18·1080/1032 = 18.8 px.
    assert!(font_on_slide(&seen) >= 18.0, "{seen:?}");
    assert_no_overlap(&seen);
    let mut ops = seen.ops.clone();
    ops.sort();
    assert_eq!(ops, ["- 1", "^ 2", "neuron", "neuron", "neuron", "out"]);
    let crate::util::MlpByHand { h1, h2, h3, o, dz } = crate::util::mlp_by_hand();
    for (name, value, grad) in [
        ("h1", h1, dz * 0.8),
        ("h2", h2, dz * -1.1),
        ("h3", h3, dz * 0.4),
        ("o", o, 2.0 * (o - 1.0)),
        ("v1", 0.8, dz * h1),
    ] {
        let (_, v, g, _) = seen.values.iter().find(|v| v.0 == name).unwrap();
        assert!(close(*v, value) && close(g.unwrap(), grad), "{name}");
    }
    // --expand draws every node: the calls' own nodes by their labels.
    let expanded = read(&svg_of(dir.path(), &script, "--expand"));
    assert!(expanded.values.iter().any(|v| v.0 == "neuron1.add2"));
    assert!(expanded.height > 1080.0);
}

/// colah's e = (a + b)(b + 1): b feeds c and d, and the slides show its sum
/// so far as `:trace` does: 0 → 3 at d's step, 3 → 5 at c's, 5 at its own.
#[test]
fn step_slides_show_the_sum_so_far_at_a_fan_out() {
    let dir = tempfile::tempdir().unwrap();
    let script = "a = 2; b = 1; c = a + b; d = b + 1; e = c*d";
    let partial = |step: &str| read(&svg_of(dir.path(), script, step)).partials;
    assert_eq!(partial("--step 1"), []);
    assert_eq!(
        partial("--step 2"),
        [("b".to_string(), "grad 0 → 3".to_string())]
    );
    // Step 3 adds b's second use: final, written `grad 3 → 5` as `:trace`
    // writes it; and a's one use: `grad 0 → 2`.
    let svg = svg_of(dir.path(), script, "--step 3");
    assert!(read(&svg).partials.is_empty());
    assert_contains(&svg, ">grad 3 → 5</text>");
    assert_contains(&svg, ">grad 0 → 2</text>");
    let done = read(&svg_of(dir.path(), script, "--step 4"));
    assert!(done.partials.is_empty());
    let (_, _, grad, _) = done.values.iter().find(|v| v.0 == "b").unwrap();
    assert_eq!(*grad, Some(5.0));
}

/// `--expand=CALL` draws that call node by node and the others as boxes.
#[test]
fn one_named_call_is_drawn_node_by_node() {
    let dir = tempfile::tempdir().unwrap();
    let script = std::fs::read_to_string(util::in_crate("examples/mlp.calc")).unwrap();
    let seen = read(&svg_of(dir.path(), &script, "--expand=neuron2"));
    let mut ops = seen.ops.clone();
    ops.sort();
    // neuron2's own ops (its constants none) instead of its box.
    assert_eq!(
        ops,
        [
            "+", "+", "- 1", "^ 2", "neuron", "neuron", "out", "tanh", "×", "×"
        ]
    );
    assert!(seen.values.iter().any(|v| v.0 == "neuron2.add2"));
    assert!(!seen.values.iter().any(|v| v.0 == "neuron1.add2"));
    // neuron2.add2 = 0.5·0.9 + (-1.2)(-0.2) - 0.3 = 0.39.
    let (_, v, _, _) = seen.values.iter().find(|v| v.0 == "neuron2.add2").unwrap();
    assert!(close(*v, 0.39));
    assert_no_overlap(&seen);
}

/// The four-point MLP of tests/it/steps.rs (one `net(x1, x2)` call per data
/// point, thirteen parameters read by every call): its thirteen parameters
/// are drawn once, under the graph, and beside each call as one dashed box
/// `w11 … c`, so `:svg -` fits a 1920×1080 slide with text of 16 px or more
/// (it was 2255×2932 px, 6.6 px, with a column of parameters at each call).
#[test]
fn four_data_points_fit_a_slide_with_the_parameters_drawn_once() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, stderr, status) = run(dir.path(), &format!("{}\n:svg -", crate::steps::MLP4));
    assert_eq!(status, Some(0), "{stderr}");
    let svg = &stdout[stdout.find("<svg").unwrap()..stdout.find("</svg>").unwrap() + 6];
    let seen = read(svg);
    assert!(font_on_slide(&seen) >= 16.0, "{seen:?}");
    assert_no_overlap(&seen);
    assert_texts_apart(svg, "the four-point MLP");
    // Step 16 (as `:trace` numbers it) processes c, in the rows under the
    // graph, on a slide as wide as the picture.
    let slide = svg_of(dir.path(), crate::steps::MLP4, "--step 16");
    let at_step = read(&slide);
    assert_texts_apart(&slide, "the four-point MLP, step 16");
    let current: Vec<&str> = at_step
        .values
        .iter()
        .filter(|v| v.3)
        .map(|v| v.0.as_str())
        .collect();
    assert!(slide.contains("step 16 of 28, c</text>"), "{slide}");
    assert_eq!(current, ["c"]);
    assert_eq!(at_step.width, seen.width);
    let parameters = [
        "w11", "w12", "b1", "w21", "w22", "b2", "w31", "w32", "b3", "v1", "v2", "v3", "c",
    ];
    for name in parameters {
        let boxes = seen.values.iter().filter(|v| v.0 == name).count();
        assert_eq!(boxes, 1, "{name}");
    }
    assert_eq!(svg.matches(">w11 … c</text></g>").count(), 4);
    let mut calls: Vec<&String> = seen.ops.iter().filter(|o| o.starts_with("net(")).collect();
    calls.sort();
    assert_eq!(
        calls,
        ["net(-1, 0.5)", "net(0.5, -1)", "net(1, 1)", "net(2, 3)"]
    );
    // By hand: L = Σ (net(x) - y)², net = tanh(Σ v_j h_j + c), h_j =
    // tanh(w_j1 x1 + w_j2 x2 + b_j); ∂L/∂c = Σ 2(net - y)(1 - net²) and
    // ∂L/∂v1 = Σ 2(net - y)(1 - net²) h_1, summed over the four calls.
    let (mut dc, mut dv1) = (0.0, 0.0);
    for (x1, x2, y) in [
        (2.0, 3.0, 1.0),
        (-1.0, 0.5, -1.0),
        (0.5, -1.0, 1.0),
        (1.0, 1.0, -1.0),
    ] {
        let h1 = (0.3 * x1 - 0.7 * x2 + 0.1f64).tanh();
        let h2 = (0.9 * x1 - 0.2 * x2 - 0.3f64).tanh();
        let h3 = (0.5 * x1 + 0.6 * x2 + 0.2f64).tanh();
        let net = (0.8 * h1 - 1.1 * h2 + 0.4 * h3 + 0.05f64).tanh();
        let dz = 2.0 * (net - y) * (1.0 - net * net);
        dc += dz;
        dv1 += dz * h1;
    }
    for (name, value, grad) in [("c", 0.05, dc), ("v1", 0.8, dv1)] {
        let (_, v, g, _) = seen.values.iter().find(|v| v.0 == name).unwrap();
        assert!(close(*v, value) && close(g.unwrap(), grad), "{name}: {g:?}");
    }
}

/// The text size, in px, of a picture scaled to fit a 1920×1080 slide whole
/// (up or down: the smaller of the two ratios).
fn font_on_slide(seen: &Seen) -> f64 {
    seen.font * (1920.0 / seen.width).min(1080.0 / seen.height)
}

/// The moons MLP of examples/moons_descent.calc (thirteen parameters read by
/// every `score(…)` call): one point's hinge loss with its `score` call as one
/// box is too tall left to right (13 leaves in a column, 1303×1216 px), so the
/// picture runs top to bottom and fits a slide at 18 px text or more.
#[test]
fn one_point_of_the_moons_mlp_fits_a_slide() {
    let dir = tempfile::tempdir().unwrap();
    let example = std::fs::read_to_string(util::in_crate("examples/moons_descent.calc")).unwrap();
    let model: String = example
        .lines()
        .take_while(|line| !line.starts_with("data = "))
        .map(|line| format!("{line}\n"))
        .collect();
    let script = format!("{model}p = relu(1 - score(0, 1))");
    let seen = read(&svg_of(dir.path(), &script, ""));
    assert!(seen.width <= 1920.0 && seen.height <= 1080.0, "{seen:?}");
    assert!(
        seen.width > seen.height,
        "top to bottom: the leaves in a row"
    );
    assert!(font_on_slide(&seen) >= 18.0, "{seen:?}");
    assert_no_overlap(&seen);
    assert!(seen.ops.iter().any(|op| op.starts_with("score(0, 1")));
    // By hand: score(0, 1) = v1·relu(a2 + c1) + v2·relu(b2 + c2) +
    // v3·relu(d2 + c3) + c0 = -0.5·0 + 0.6·1 + 0.2·0.5 + 0 = 0.7, p = 0.3;
    // ∂p/∂v2 = -relu(1) = -1, ∂p/∂b2 = -v2 = -0.6, ∂p/∂v3 = -0.5,
    // ∂p/∂a1 = 0 (relu(-0.3) passes nothing), ∂p/∂c0 = -1.
    for (name, value, grad) in [
        ("p", 0.3, 1.0),
        ("v2", 0.6, -1.0),
        ("b2", 0.8, -0.6),
        ("v3", 0.2, -0.5),
        ("a1", 0.5, 0.0),
        ("c0", 0.0, -1.0),
    ] {
        let (_, v, g, _) = seen.values.iter().find(|v| v.0 == name).unwrap();
        assert!(
            close(*v, value) && close(g.unwrap(), grad),
            "{name}: {v} {g:?}"
        );
    }
    // Left to right, as `--lr` forces, it would not fit.
    let wide = read(&svg_of(dir.path(), &script, "--lr"));
    assert!(wide.height > 1080.0, "{wide:?}");
}

/// A call drawn as one box is drawn as written: its arguments in the
/// ellipse (the globals its body reads are edges, no slots), and an output
/// no variable names is named by the call, not by an inner node's label.
#[test]
fn call_boxes_are_drawn_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let seen = read(&svg_of(dir.path(), crate::steps::MLP4, ""));
    let mut ops: Vec<&str> = seen
        .ops
        .iter()
        .map(String::as_str)
        .filter(|o| o.starts_with("net"))
        .collect();
    ops.sort_unstable();
    assert_eq!(
        ops,
        ["net(-1, 0.5)", "net(0.5, -1)", "net(1, 1)", "net(2, 3)"]
    );
    let script = "h(x, y) = x*y + 1\na = 2; o = h(a, 3)*a + h(2, 3)*a";
    let seen = read(&svg_of(dir.path(), script, ""));
    let names: Vec<&str> = seen.values.iter().map(|v| v.0.as_str()).collect();
    assert_eq!(names, ["a", "h(a, 3)", "_5", "h(2, 3)", "_11", "o"]);
    assert!(seen.ops.contains(&"h(·, 3)".to_string()), "{:?}", seen.ops);
    // h(2, 3) = 7, its box's value.
    let (_, value, _, _) = seen.values.iter().find(|v| v.0 == "h(2, 3)").unwrap();
    assert!(close(*value, 7.0));
}

/// A constant read from a predefined name keeps it in `:trace`, the handout
/// and the slides; a constant typed as digits, or `e` once rebound, does not.
#[test]
fn named_constants_keep_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, _, _) = run(dir.path(), "x = 2; y = e^x + pi*x\n:trace\n:trace md");
    assert_contains(&stdout, "[3] _2 = e ^ x = 7.389056099");
    assert_contains(&stdout, "local ∂(e^x)/∂x = e^x = 7.389056099");
    assert_contains(&stdout, "local ∂(pi*x)/∂x = pi = 3.141592654");
    assert_contains(&stdout, "| ∂(e^x)/∂x = e^x = 7.389056099 |");
    assert!(!stdout.contains("2.718281828"), "{stdout}");
    let seen = read(&svg_of(dir.path(), "x = 2; y = e^x", ""));
    assert_eq!(seen.ops, ["e ^"]);
    let (stdout, _, _) = run(dir.path(), "e = 3; x = 2; y = 2.718281828459045^x\n:trace");
    assert_contains(&stdout, "[1] y = 2.718281828459045 ^ x");
}
