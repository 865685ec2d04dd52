//! The web page of `:html` (and, with Chromium, in a real browser: `browser.rs`):
//! the model it carries against gradients worked out by hand, and the write
//! rules every export follows.

use serde_json::Value;

use crate::util::{assert_contains, members, output_in, output_of, stderr_of, stdout_of};

/// colah's fan-out example ("Calculus on Computational Graphs"): e = (a + b)(b + 1)
/// at a = 2, b = 1. By hand: ∂e/∂c = d = 2, ∂e/∂d = c = 3, ∂e/∂a = 2,
/// ∂e/∂b = d + c = 5 (b is used twice: 3 through d, then 2 through c).
pub const COLAH: &str = "a = 2; b = 1; c = a + b; d = b + 1; e = c*d";

/// The model a page holds (the JSON in its `gradcalc-model` script).
pub fn page_model(page: &str) -> Value {
    let start = page
        .find("<script id=\"gradcalc-model\" type=\"application/json\">")
        .expect("the page holds its model");
    let rest = &page[start..];
    let json = &rest[rest.find('>').unwrap() + 1..rest.find("</script>").unwrap()];
    let mut model: Value = serde_json::from_str(json).expect("the model is JSON");
    // The picture is in the page once, in its <noscript> part; the page's
    // script puts it back in the model as this does.
    if model["svg_in_noscript"] == true {
        assert!(model["views"][0]["svg"].is_null(), "the picture twice");
        let kept = &page[page.find("<noscript>").expect("a <noscript> part")..];
        let kept = &kept[..kept.find("</noscript>").expect("its end")];
        let from = kept.find("<svg").expect("the picture in <noscript>");
        let to = kept.rfind("</svg>").expect("the picture's end") + "</svg>".len();
        model["views"][0]["svg"] = Value::String(kept[from..to].to_string());
    }
    model
}

/// A box's mark as the page's script shows it at step `k` (`marks`, the box's
/// array in a view's `boxes`): the last one whose step is at or before `k`;
/// `None` (a blank box) before the first.
pub fn mark_at(marks: &Value, k: usize) -> Option<&Value> {
    marks
        .as_array()
        .unwrap()
        .iter()
        .take_while(|m| m["step"].as_u64().unwrap() as usize <= k)
        .last()
}

fn page_of(statements: &str) -> String {
    let output = output_of(&["-e", statements, "-e", ":html -"]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let out = stdout_of(&output);
    out[out.find("<!DOCTYPE html>").expect("a page")..].to_string()
}

#[test]
fn the_page_steps_through_colahs_fan_out() {
    let page = page_of(COLAH);
    let model = page_model(&page);
    assert_eq!(model["of"], "e");
    // The boxes as drawn, inputs first: a, b, c, d, e; each box's gradient
    // from the step that changes it. Step 1 (e) adds 1·d = 2 to c and 1·c = 3
    // to d; step 2 (d) adds 3 to b, its first of two uses (a sum so far);
    // step 3 (c) adds 2 to a and 2 to b, which is then final: 5.
    assert_eq!(model["views"].as_array().unwrap().len(), 1);
    let mark = |step: u32, text: &str, kind: &str| serde_json::json!({"step": step, "text": text, "kind": kind});
    assert_eq!(
        model["views"][0]["boxes"],
        serde_json::json!([
            [mark(3, "0 → 2", "done"), mark(4, "2", "done")],
            [
                mark(2, "0 → 3", "partial"),
                mark(3, "3 → 5", "done"),
                mark(4, "5", "done")
            ],
            [mark(1, "0 → 2", "done"), mark(2, "2", "done")],
            [mark(1, "0 → 3", "done"), mark(2, "3", "done")],
            [mark(1, "1", "done")],
        ])
    );
    let steps: Vec<&str> = members(&model["steps"])
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    assert_eq!(steps.len(), 5);
    assert!(steps[0].starts_with("[1] e = c * d = 6   upstream 1"));
    // Step 3 (c) adds b's second contribution: 3 + 2 = 5.
    assert!(steps[2].contains("grad 3 → 5   (2nd of 2 uses: accumulated)"));
    assert!(steps[3].contains("∂e/∂b = 5"));
    assert!(steps[4].contains("∂e/∂a = 2"));
    // Each step lights the box of the node it processes: e is box 4, a box 0.
    assert_eq!(model["views"][0]["lit"], serde_json::json!([4, 3, 2, 1, 0]));
}

#[test]
fn the_page_shows_each_step_as_trace_prints_it() {
    let page = page_of(COLAH);
    let model = page_model(&page);
    let trace = output_of(&["-e", COLAH, "-e", ":trace all"]);
    let trace = stdout_of(&trace);
    let listing = &trace[trace.find("backward pass from").unwrap()..];
    let mut expected = vec![model["header"].as_str().unwrap().to_string()];
    expected.extend(members(&model["steps"]).map(|s| s["text"].as_str().unwrap().to_string()));
    assert_eq!(listing.trim_end(), expected.join("\n"));
}

#[test]
fn the_page_asks_the_network_for_nothing() {
    let page = page_of(COLAH);
    for request in ["src=", "href=", "@import", "fetch(", "XMLHttpRequest"] {
        assert!(!page.contains(request), "the page holds `{request}`");
    }
    // `url(…)` only for the picture's own arrowhead.
    assert_eq!(
        page.matches("url(").count(),
        page.matches("url(#arrow)").count()
    );
    // The one address is SVG's namespace, a name and not a request.
    let addresses: Vec<&str> = page.matches("http").collect();
    assert_eq!(
        addresses.len(),
        page.matches("http://www.w3.org/2000/svg").count()
    );
}

#[test]
fn the_page_script_defines_each_method_once() {
    // A second `View.prototype.follow` (the `:serve` event stream) once
    // replaced the one that pans to the current step: every step then opened
    // an event stream at `/0`, `/1`…, whose 404 said "gradcalc is not answering".
    let page = page_of(COLAH);
    let mut names: Vec<&str> = page
        .split("View.prototype.")
        .skip(1)
        .filter_map(|rest| rest.split_once(" = function").map(|(name, _)| name))
        .collect();
    assert!(
        names.contains(&"follow") && names.contains(&"setStep"),
        "{names:?}"
    );
    let all = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all, "a method defined twice in {names:?}");
    // A file page listens to nothing.
    assert!(page.matches("EventSource(").count() == 1 && !page.contains("data-live="));
}

#[test]
fn html_keeps_an_existing_file_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let run = |command: &str| output_in(dir.path(), &["-e", COLAH, "-e", command]);
    let first = run(":html colah.html");
    assert!(first.status.success(), "{}", stderr_of(&first));
    let path = dir.path().join("colah.html");
    std::fs::write(&path, "mine").unwrap();
    let again = run(":html colah.html");
    assert_eq!(again.status.code(), Some(1));
    assert_contains(
        &stderr_of(&again),
        "add `-f` to replace it: `:html -f colah.html`",
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine");
    let forced = run(":html -f colah.html");
    assert!(forced.status.success());
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );
}

#[test]
fn html_without_an_output_says_what_to_do() {
    let output = output_of(&["-e", ":html page.html"]);
    assert_eq!(output.status.code(), Some(1));
    assert_contains(&stderr_of(&output), "error:");
}

#[test]
fn a_call_is_one_step_on_the_page_as_in_the_trace() {
    // y = tanh(x·w) + x at x = 2, w = 0.5, through h: `:trace`'s steps are y,
    // the call h(x, w), w, x; the page has the same four. Boxed, the call's box
    // lights at step 2; every node drawn, its output (h1.tanh) does, and the
    // node inside it (h1.mul = x·w) gets its gradient at that step too.
    let model = page_model(&page_of(
        "x = 2; w = 0.5; h(a, b) = tanh(a*b); y = h(x, w) + x",
    ));
    let views = model["views"].as_array().unwrap();
    assert_eq!(views[0]["name"], "calls as boxes");
    assert_eq!(views[0]["lit"], serde_json::json!([3, 2, 1, 0]));
    assert_eq!(views[1]["name"], "every node");
    assert_eq!(views[1]["lit"], serde_json::json!([4, 3, 1, 0]));
    // h1.mul's gradient, 1 − tanh²(1) = 0.4199743416…, from step 2 on.
    assert_eq!(views[1]["boxes"][2][0]["step"], 2);
    assert_eq!(views[1]["boxes"][2][0]["text"], "0.42");
    // ∂y/∂x = 1 + w·(1 − tanh²(1)) = 1.2099871708…, ∂y/∂w = x·(1 − tanh²(1)).
    let steps = model["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4);
    assert!(
        steps[3]["text"]
            .as_str()
            .unwrap()
            .ends_with("∂y/∂x = 1.209987171")
    );
    assert!(
        steps[2]["text"]
            .as_str()
            .unwrap()
            .ends_with("∂y/∂w = 0.8399486832")
    );
}

#[test]
fn the_page_holds_its_picture_once() {
    // It held it twice (inline for readers without scripts, and escaped in
    // the model): 1.11 MB at 497 nodes instead of about half.
    let page = page_of(COLAH);
    let model = page_model(&page);
    let svg = model["views"][0]["svg"].as_str().expect("the picture");
    assert!(svg.starts_with("<svg") && svg.len() > 1000, "{svg}");
    assert_eq!(page.matches(svg).count(), 1);
    // Not escaped in the model either: the model's picture is null, and the
    // only picture the model holds is the other direction's (`turned`).
    let escaped = page.matches("\\u003csvg").count();
    let turned = usize::from(model["views"][0]["turned"].is_string());
    assert_eq!(escaped, turned, "the picture escaped in the model");
}
