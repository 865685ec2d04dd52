//! Tensor slides that fill a 16:9 slide: each lesson of the vectorised
//! backprop class drawn by `:svg`, shown whole on a 1920×1080 screen in
//! headless Chromium (the harness of `browser.rs`), its smallest text
//! measured as rendered: the font size of every `<text>` times the scale
//! the browser draws it at (`getScreenCTM`). The goals are the issue's: 16 px
//! or more for the layer, softmax, bias and fan-out lessons, 12 px or more
//! for the 2-16-16-1 moons MLP (scalar slides are 18 px). Before the
//! layout wrapped long chains and drew the MLP one box per variable, the
//! step-1 slides were (18 px × the canvas's scale on 1920×1080) 18.5 px
//! (layer), 12.8 (softmax), 12.3 (bias), 18.5 (fan-out), 14.2 (the batch
//! classifier) and 4.6 (the MLP, 2589×4212 px top to bottom).

use std::path::Path;

use crate::browser::Browser;
use crate::util::{in_crate, output_in, stderr_of, stdout_of};

/// A 2×3 layer (the issue's), its bias added to `W @ x`.
const LAYER: &str =
    "W = [[1, 2, 3], [4, 5, 6]]; x = [1, 0, -1]; b = [0.5, -0.5]; L = sum(tanh(W @ x + b))";
/// A batch of four points through one layer: the bias a column sum.
const BIAS: &str = "X = [[1, 2], [3, 4], [5, 6], [7, 8]]; W = [[0.5, -1], [1, 0.5]]; b = [0.1, -0.2]; L = sum(tanh(X @ W + b))";
/// W read twice (a fan-out): its gradient is the sum of two uses.
const FAN_OUT: &str = "W = [[1, 2], [3, 4]]; x = [1, -1]; h = tanh(W @ x); L = sum(W @ h)";

/// The statements of an example file (its text, comments and commands
/// included: gradcalc reads the file).
fn example(name: &str) -> String {
    in_crate(&format!("examples/{name}")).display().to_string()
}

/// Writes `:svg NAME.svg` (with `flags`) for a session given as gradcalc
/// arguments, in `dir`; the SVG text.
fn slide(dir: &Path, args: &[&str], name: &str, flags: &str) -> String {
    let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    all.push("-e".to_string());
    all.push(format!(":svg {name}.svg {flags}"));
    let output = output_in(dir, &all);
    assert!(output.status.success(), "{}", stderr_of(&output));
    std::fs::read_to_string(dir.join(format!("{name}.svg"))).unwrap()
}

/// The canvas size of an SVG (its `width` and `height`).
fn canvas(svg: &str) -> (f64, f64) {
    let doc = roxmltree::Document::parse(svg).unwrap();
    let root = doc.root_element();
    let number = |key: &str| root.attribute(key).unwrap().parse::<f64>().unwrap();
    (number("width"), number("height"))
}

/// The smallest text of `svg` as Chromium renders it shown whole on a
/// `screen` (width, height): the SVG inline in a page of that size,
/// scaled to fit as a slide shows a picture (`preserveAspectRatio`'s
/// default, centred); each `<text>`'s computed font size times its scale
/// on the screen, in pixels.
fn smallest_text(browser: &mut Browser, dir: &Path, name: &str, svg: &str) -> f64 {
    let page = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><style>html, body {{ margin: 0; }} svg {{ display: block; width: 100vw; height: 100vh; }}</style></head><body>{}</body></html>",
        &svg[svg.find("<svg").unwrap()..]
    );
    let path = dir.join(format!("{name}.html"));
    std::fs::write(&path, page).unwrap();
    browser.open(
        &format!("file://{}", path.display()),
        (1920, 1080),
        "document.querySelector('svg text')",
    );
    let smallest = browser.eval(
        "Math.min(...Array.from(document.querySelectorAll('svg text'))
            .filter(t => t.textContent.trim() !== '')
            .map(t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a))",
    );
    smallest.as_f64().unwrap()
}

#[test]
fn tensor_lessons_fill_a_16_by_9_slide_with_readable_text() {
    let Some(mut browser) = Browser::start("tensor slides in Chromium") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let softmax = example("softmax.calc");
    let mlp = example("moons_mlp.calc");
    let classifier = example("classifier.calc");
    // (lesson, gradcalc arguments, the least text in pixels)
    let lessons: [(&str, Vec<&str>, f64); 6] = [
        ("layer", vec!["-e", LAYER], 16.0),
        ("softmax", vec![&softmax], 16.0),
        ("bias", vec!["-e", BIAS], 16.0),
        ("fan-out", vec!["-e", FAN_OUT], 16.0),
        ("classifier", vec![&classifier], 16.0),
        // The moons example ends with the accuracy: back to the loss.
        ("mlp", vec![&mlp, "-e", "L"], 12.0),
    ];
    for (name, args, goal) in lessons {
        for (moment, flags) in [("finished", ""), ("step 1", "--step 1")] {
            let file = format!("{name}-{}", moment.replace(' ', ""));
            let svg = slide(dir.path(), &args, &file, flags);
            let text = smallest_text(&mut browser, dir.path(), &file, &svg);
            let (w, h) = canvas(&svg);
            eprintln!("{name} ({moment}): {w}×{h} px, smallest text {text:.1} px at 1920×1080");
            assert!(
                text >= goal,
                "{name} ({moment}): {text:.1} px < {goal} px ({w}×{h})"
            );
        }
    }
}

#[test]
fn fit_picks_the_layout_for_the_screen_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let softmax = example("softmax.calc");
    // A portrait screen gets a picture taller than wide, a wide one a
    // picture wider than tall, and the 16:9 fit is the default of a tensor.
    let tall = canvas(&slide(dir.path(), &[&softmax], "tall", "--fit 1080x1920"));
    let wide = canvas(&slide(dir.path(), &[&softmax], "wide", "--fit 1920x1080"));
    let default = canvas(&slide(dir.path(), &[&softmax], "default", ""));
    assert!(tall.1 > tall.0, "{tall:?}");
    assert!(wide.0 > wide.1, "{wide:?}");
    assert_eq!(wide, default);
    // A scalar picture fits too: the neuron on a portrait screen.
    let neuron = example("neuron.calc");
    let portrait = canvas(&slide(dir.path(), &[&neuron], "neuron", "--fit 1080x1920"));
    assert!(portrait.1 > portrait.0, "{portrait:?}");
}

#[test]
fn fit_refuses_a_size_it_cannot_read_and_a_direction_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let output = output_in(dir.path(), &["-e", LAYER, "-e", ":svg pic.svg --fit 1920"]);
    assert!(!output.status.success());
    let error = stderr_of(&output);
    assert!(
        error.contains("`--fit` takes a screen size in pixels, width x height"),
        "{error}"
    );
    assert!(error.contains("1920x1080"), "{error}");
    let output = output_in(
        dir.path(),
        &["-e", LAYER, "-e", ":svg pic.svg --lr --fit 1920x1080"],
    );
    assert!(!output.status.success(), "{}", stdout_of(&output));
    assert!(!dir.path().join("pic.svg").exists());
}

/// The text size the page shows its picture at, in screen pixels (a box
/// name's 18 px times the picture's scale), and the graph pane's height.
fn page_text(browser: &mut Browser) -> (f64, f64) {
    // Two frames: the pane's resize (a longer step line) is laid out and
    // its observer has run.
    let seen = browser.eval(
        "new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => {
            const t = document.querySelector('g.value text.name');
            done([t.getScreenCTM().a * 18, document.querySelector('.gc-graph').clientHeight]);
        })))",
    );
    (seen[0].as_f64().unwrap(), seen[1].as_f64().unwrap())
}

#[test]
fn the_page_keeps_the_zoom_while_stepping_and_gives_the_graph_priority() {
    let Some(mut browser) = Browser::start("the tensor page's zoom in Chromium") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mlp = example("moons_mlp.calc");
    let output = output_in(dir.path(), &[&mlp, "-e", "L", "-e", ":html mlp.html"]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let url = format!("file://{}/mlp.html", dir.path().display());
    browser.open(&url, (1920, 1080), "window.gradcalcView");
    let (fitted, _) = page_text(&mut browser);
    for _ in 0..4 {
        browser.press("+");
    }
    let (zoomed, _) = page_text(&mut browser);
    // Four presses of + zoom 1.25⁴ = 2.44 times.
    assert!(
        (zoomed / fitted - 1.25f64.powi(4)).abs() < 0.01,
        "{fitted} px → {zoomed} px"
    );
    let steps = browser
        .eval("window.gradcalcView.lastStep()")
        .as_u64()
        .unwrap();
    assert!(steps >= 10, "{steps} steps");
    for k in 1..=10 {
        browser.press("ArrowRight");
        browser.wait_for(&format!(
            "document.querySelector('.gc-status').textContent === 'step {k} of {steps}'"
        ));
        let (text, pane) = page_text(&mut browser);
        assert!(
            (text - zoomed).abs() < 0.01 * zoomed,
            "step {k}: {text} px, zoomed to {zoomed} px"
        );
        // The step's line (rows of a 100×16 gradient) leaves the graph
        // most of the 1080 px: at most a fifth for the line, and the bar.
        assert!(
            pane >= 0.7 * 1080.0,
            "step {k}: the graph is {pane} px high"
        );
    }
    // F fits again, at the size it had before the zoom (the line's room
    // may have grown since: at most as large).
    browser.press("f");
    let (refit, _) = page_text(&mut browser);
    assert!(
        refit <= fitted * 1.01,
        "{refit} px after F, {fitted} px at first"
    );
}
