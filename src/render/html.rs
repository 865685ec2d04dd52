//! The graph as a web page: one self-contained HTML file (`:html FILE`), the
//! live view `:serve` keeps up to date, and the view of the playground
//! (`web/`). All three show the same *model*, a JSON object made here:
//!
//! - `of`: the output's label;
//! - `views`: one or two drawings, each `{name, svg, boxes, lit}`: the
//!   finished picture as [`super::svg`] draws it (gradcalc's own layout, every
//!   gradient filled in) with calls of user functions as boxes, then, if any
//!   call was boxed, every node drawn (the page switches: calls collapsed or
//!   expanded); `boxes` has one entry per value box, in the order the SVG
//!   lists them (`<g class="value …">`): the backward step that processes the
//!   node, numbered as `:trace` numbers its steps, or 0 for none (the forward
//!   pass drawn beside a derivative graph); `lit` has one entry per step: the
//!   box to highlight (the node's, or its call's box), or null;
//! - `header` and `steps`: the `:trace` header line and, per step, its text
//!   exactly as `:trace` prints it (upstream gradient × local derivative =
//!   contribution, accumulation at fan-out);
//! - `note`: why there are no steps (a derivative graph), else absent;
//! - `message`: instead of everything above, why there is no picture (no
//!   output yet, a graph too large), for the live view.
//!
//! The page's script (`web/page.js`) blanks the gradients of the boxes whose
//! step is still to come, highlights the box of the current step and shows its
//! line; its style sheet (`web/page.css`) holds the two themes. Nothing in the
//! page asks the network for anything: it works from `file://`.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::plot::escape;
use super::{Style, dot, text};
use crate::engine::{NodeId, Op};
use crate::session::{Page, Picture, Session};

/// The page's style sheet: the themes (plain and projector) and the
/// colour-blind-safe palette (Okabe and Ito 2002).
pub const PAGE_CSS: &str = include_str!("../../web/page.css");
/// The page's script: stepping, zoom and pan, themes, the live connection.
pub const PAGE_JS: &str = include_str!("../../web/page.js");

/// The model of `page` (see the module comment), with the step lines in
/// `style` (its precision; never colour). `session` is the session the page's
/// trace came from, which makes the steps: call before its next statement.
pub fn model(page: &Page, session: &Session, style: &Style) -> Value {
    let style = Style {
        color: false,
        ..*style
    };
    let (header, steps, note) = match &page.trace {
        Ok(trace) => {
            let header = text::trace_pieces(trace, session, &style)
                .next()
                .map(|(_, line)| line.trim_end().to_string())
                .unwrap_or_default();
            let steps: Vec<(NodeId, String)> =
                text::trace_step_texts(trace, session, &style).collect();
            (header, steps, None)
        }
        Err(why) => (String::new(), Vec::new(), Some(why.clone())),
    };
    let order: Vec<NodeId> = steps.iter().map(|(id, _)| *id).collect();
    let mut views = vec![view(&page.picture, &order, session, "calls as boxes")];
    if let Some(expanded) = &page.expanded {
        views.push(view(expanded, &order, session, "every node"));
    } else {
        views[0]["name"] = json!("every node");
    }
    let steps: Vec<Value> = steps
        .iter()
        .map(|(_, text)| json!({"text": text}))
        .collect();
    let mut model = json!({
        "of": page.picture.of,
        "views": views,
        "header": header,
        "steps": steps,
    });
    if let Some(note) = note {
        model["note"] = Value::String(note);
    }
    model
}

/// One way of drawing the page's graph: its SVG, and for each value box the
/// step that processes its node (0 for none), and for each step, `order[K-1]`
/// the node it processes, the box it lights up: the node's own, or the box
/// of the outermost boxed call whose body built it.
fn view(picture: &Picture, order: &[NodeId], session: &Session, name: &str) -> Value {
    let step_of: HashMap<NodeId, usize> = order
        .iter()
        .enumerate()
        .map(|(k, &id)| (id, k + 1))
        .collect();
    // The value boxes in the order `dot::drawing` makes them (the SVG lists
    // them in that order): the picture's nodes inputs first, constants left out.
    let drawn: Vec<NodeId> = picture
        .nodes
        .iter()
        .rev()
        .filter(|node| node.op != Op::Const)
        .map(|node| node.node.id)
        .collect();
    let box_of: HashMap<NodeId, usize> = drawn.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    let boxes: Vec<usize> = drawn
        .iter()
        .map(|id| step_of.get(id).copied().unwrap_or(0))
        .collect();
    let lit: Vec<Option<usize>> = order
        .iter()
        .map(|&id| {
            box_of
                .get(&id)
                .copied()
                .or_else(|| call_box(session, id, &box_of))
        })
        .collect();
    json!({"name": name, "svg": dot::svg(picture), "boxes": boxes, "lit": lit})
}

/// The box of the outermost call around `id` whose output is drawn (a call
/// drawn as one box).
fn call_box(session: &Session, id: NodeId, box_of: &HashMap<NodeId, usize>) -> Option<usize> {
    let mut call = session.call_of(id);
    let mut found = None;
    while let Some(c) = call {
        let made = session.calls().get(c)?;
        found = made.output.and_then(|o| box_of.get(&o).copied()).or(found);
        call = made.parent;
    }
    found
}

/// The model of a view with nothing to draw: `message` says why.
pub fn message_model(message: &str) -> Value {
    json!({ "message": message })
}

/// The self-contained page of `page` (`:html FILE`): the model, the style
/// sheet and the script inline, no request to the network.
pub fn page(page: &Page, session: &Session, style: &Style) -> String {
    let model = model(page, session, style);
    document(&format!("gradcalc: {}", page.picture.of), &model)
}

/// The page of `:serve` without its model: the text before and after the
/// model's JSON (as [`script_json`] writes it), which the server holds once
/// and sends around every model. `events` is the path of the server-sent
/// events that bring every later model.
pub fn live_page_around(events: &str) -> (String, String) {
    let noscript = "<noscript><div class=\"gc-noscript\"><p>The live page needs JavaScript, which is off here.</p></div></noscript>\n";
    document_around("gradcalc: live", Some(events), noscript)
}

/// An HTML page holding `model` and the view's script and style.
fn document(title: &str, model: &Value) -> String {
    let (before, after) = document_around(title, None, &without_script(model));
    format!("{before}{}{after}", script_json(model))
}

/// An HTML page of the view's script and style, before and after its model;
/// `noscript` is what it shows where scripts do not run.
fn document_around(title: &str, events: Option<&str>, noscript: &str) -> (String, String) {
    let live = events.map_or(String::new(), |path| {
        format!(" data-live=\"{}\"", escape(path))
    });
    let before = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>\n{PAGE_CSS}</style>\n</head>\n<body{live}>\n<div id=\"view\" class=\"gc-view\"></div>\n{noscript}<script id=\"gradcalc-model\" type=\"application/json\">",
        escape(title)
    );
    let after = format!(
        "</script>\n<script>\n{PAGE_JS}</script>\n<script>GradcalcView.start(document.getElementById(\"view\"));</script>\n</body>\n</html>\n"
    );
    (before, after)
}

/// What the page shows where scripts do not run (a learning platform or a
/// mail preview that strips them): a line saying that stepping needs
/// JavaScript, and the picture with its final gradients (or why there is
/// none).
fn without_script(model: &Value) -> String {
    let shown = match (model["views"][0]["svg"].as_str(), model["message"].as_str()) {
        (Some(svg), _) => format!("the graph with its final gradients:</p>\n{svg}"),
        (None, Some(message)) => format!("{}</p>", escape(message)),
        (None, None) => "</p>".to_string(),
    };
    format!(
        "<noscript><div class=\"gc-noscript\"><p>Stepping through the backward pass needs JavaScript, which is off here; {shown}</div></noscript>\n"
    )
}

/// JSON that is safe inside a `<script>` element: `<`, `>` and `&` written
/// as `\u003c` etc., so no `</script>` or `<!--` can end it early.
pub fn script_json(value: &Value) -> String {
    script_json_within(value, usize::MAX).unwrap_or_default()
}

/// [`script_json`] of `value` if it is at most `limit` bytes long, else
/// `None`, found without writing more than `limit` bytes.
pub fn script_json_within(value: &Value, limit: usize) -> Option<String> {
    let mut out = ScriptJson {
        text: Vec::new(),
        limit,
    };
    serde_json::to_writer(&mut out, value).ok()?;
    // Only ASCII was replaced in what serde_json wrote, which is UTF-8.
    String::from_utf8(out.text).ok()
}

/// Collects JSON text, escaping `<`, `>` and `&` as it comes (they occur
/// only inside strings), and fails past `limit` bytes.
struct ScriptJson {
    text: Vec<u8>,
    limit: usize,
}

impl std::io::Write for ScriptJson {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        for &byte in bytes {
            match byte {
                b'<' => self.text.extend_from_slice(b"\\u003c"),
                b'>' => self.text.extend_from_slice(b"\\u003e"),
                b'&' => self.text.extend_from_slice(b"\\u0026"),
                _ => self.text.push(byte),
            }
        }
        if self.text.len() > self.limit {
            return Err(std::io::Error::other("longer than the limit"));
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_cannot_close_the_script() {
        let value = json!({"svg": "</script><!-- & -->"});
        let text = script_json(&value);
        assert!(!text.contains('<') && !text.contains('>'));
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn script_json_within_stops_at_its_limit() {
        // `{"svg":"\u003cb\u003e"}` is 23 bytes.
        let value = json!({"svg": "<b>"});
        let text = r#"{"svg":"\u003cb\u003e"}"#;
        assert_eq!(script_json(&value), text);
        assert_eq!(script_json_within(&value, 23).as_deref(), Some(text));
        assert_eq!(script_json_within(&value, 22), None);
    }
}
